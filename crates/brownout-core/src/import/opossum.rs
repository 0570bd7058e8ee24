//! opossum `CircuitBreaker` options as JSON: one options object, or an object of named
//! options objects (one per breaker, chosen with `--instance`). Durations are milliseconds;
//! `timeout: false` switches the timeout off (`"0s"` in the preset). Keys are read as
//! opossum reads them (lib/circuit.js, the `CircuitBreaker` constructor): exactly as
//! spelt, an unknown one never read (a warning names it, and the option it resembles);
//! `capacity` and `volumeThreshold` only when `Number.isInteger` (else opossum's
//! unbounded `Number.MAX_SAFE_INTEGER` and 0: the preset's defaults), `allowWarmUp` only
//! when `=== true`.

use super::ImportError;
use super::emit::{Imported, OutLayer, dur, float};
use super::read::{Fields, Known, millis, num};
use super::tree::{Entry, Node, Val, at_pos, canon, json};

const NOT_JSON: &str = "a function: it cannot come from a JSON file and is not modelled";
const OBSERVABILITY: &str = "observability only: nothing to simulate";
const CACHE: &str = "opossum's result cache is not modelled (brownout's cache is the scenario's catalogue)";
const COALESCE: &str = "request coalescing is not modelled";

const OPTIONS: &[(&str, Known)] = &[
    ("timeout", Known::Read),
    ("errorThresholdPercentage", Known::Read),
    ("resetTimeout", Known::Read),
    ("rollingCountTimeout", Known::Read),
    ("rollingCountBuckets", Known::Read),
    ("volumeThreshold", Known::Read),
    ("capacity", Known::Read),
    ("allowWarmUp", Known::Read),
    ("maxFailures", Known::Warn("deprecated alias opossum ignores (errorThresholdPercentage decides)")),
    ("enabled", Known::Warn("a disabled breaker is not modelled: leave the layer out instead")),
    ("name", Known::Warn(OBSERVABILITY)),
    ("group", Known::Warn(OBSERVABILITY)),
    ("enableSnapshots", Known::Warn(OBSERVABILITY)),
    ("rollingPercentilesEnabled", Known::Warn(OBSERVABILITY)),
    ("errorFilter", Known::Warn(NOT_JSON)),
    ("abortController", Known::Warn(NOT_JSON)),
    ("autoRenewAbortController", Known::Warn("brownout does not cancel abandoned calls")),
    ("rotateBucketController", Known::Warn(NOT_JSON)),
    ("stateSnapshotsInterval", Known::Warn(OBSERVABILITY)),
    ("cache", Known::Warn(CACHE)),
    ("cacheTTL", Known::Warn(CACHE)),
    ("cacheSize", Known::Warn(CACHE)),
    ("cacheGetKey", Known::Warn(CACHE)),
    ("cacheTransport", Known::Warn(CACHE)),
    ("coalesce", Known::Warn(COALESCE)),
    ("coalesceTTL", Known::Warn(COALESCE)),
    ("coalesceSize", Known::Warn(COALESCE)),
    ("coalesceResetOn", Known::Warn(COALESCE)),
    ("state", Known::Warn("a breaker restored from a saved state is not modelled: it starts closed")),
];

/// Is this object an options object (rather than an object of named ones)? Named options
/// objects are objects, every one; an options object has a known key or a non-object value.
fn is_options(n: &Node) -> bool {
    n.entries().iter().any(|e| OPTIONS.iter().any(|(k, _)| *k == e.key) || !matches!(e.value.v, Val::Map(_)))
}

/// The option a misspelt key resembles: the same letters in another case or with `-`/`_`,
/// or at most two edits away.
fn resembles(key: &str) -> Option<&'static str> {
    fn edits(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.iter().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    OPTIONS.iter().map(|(k, _)| *k).find(|k| canon(k) == canon(key) || edits(&canon(k), &canon(key)) <= 2)
}

/// Is this value an integer as JavaScript's `Number.isInteger` sees it (so 2.0 is one)?
fn js_integer(e: &Entry) -> Option<f64> {
    match e.value.v {
        Val::Int(i) => Some(i as f64),
        Val::Float(f) if f.is_finite() && f.fract() == 0.0 => Some(f),
        _ => None,
    }
}

pub(crate) fn import(text: &str, instance: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let root = json(text)?;
    if !matches!(root.v, Val::Map(_)) {
        return Err(at_pos(root.at, format!("expected an object of opossum options, found {}", root.kind())));
    }
    let (options, name) = if is_options(&root) || root.entries().is_empty() {
        (&root, None)
    } else {
        let names: Vec<&str> = root.entries().iter().map(|e| e.key.as_str()).collect();
        let e = match instance {
            Some(w) => root.get_exact(w).ok_or_else(|| {
                at_pos(root.at, format!("no breaker \"{w}\" in the file (breakers: {})", names.join(", ")))
            })?,
            None if names.len() == 1 => &root.entries()[0],
            None => {
                return Err(at_pos(
                    root.at,
                    format!("the file has {} breakers ({}): name one (--instance)", names.len(), names.join(", ")),
                ));
            }
        };
        (&e.value, Some(e.key.clone()))
    };
    out.instance = name.clone();
    // JSON.parse keeps the last of a repeated key.
    let get = |key: &str| options.entries().iter().rev().find(|e| e.key == key);
    for e in options.entries() {
        match OPTIONS.iter().find(|(k, _)| *k == e.key) {
            Some((_, Known::Read)) => {}
            Some((_, Known::Warn(why))) => out.warn(e.at, &e.key, *why),
            None => {
                let hint = resembles(&e.key).map(|k| format!(" (did you mean \"{k}\"?)")).unwrap_or_default();
                out.warn(
                    e.at,
                    &e.key,
                    format!("not an opossum option: opossum never reads it, nor does brownout{hint}"),
                );
            }
        }
    }
    // opossum reads these only when they are integers (`Number.isInteger`), `allowWarmUp`
    // only when it is `true`: any other value is ignored, as opossum ignores it.
    let mut ignored = Vec::new();
    let mut f = Fields::new(out);
    if let Some(e) = get("timeout") {
        let v = match e.value.v {
            Val::Bool(false) => 0,
            _ => millis(e)?,
        };
        f.from("timeout", dur(v), e);
    }
    if let Some(e) = get("errorThresholdPercentage") {
        f.from("error_threshold_percentage", float(num(e, |v| (0.0..=100.0).contains(&v), "[0, 100]")?), e);
    }
    for (key, field) in [("resetTimeout", "reset_timeout"), ("rollingCountTimeout", "rolling_count_timeout")] {
        if let Some(e) = get(key) {
            f.from(field, dur(millis(e)?), e);
        }
    }
    if let Some(e) = get("rollingCountBuckets") {
        let v = super::read::int(e, 1, i64::from(u32::MAX))?;
        f.from("rolling_count_buckets", v.to_string(), e);
    }
    if let Some(e) = get("volumeThreshold") {
        match js_integer(e) {
            // A negative threshold is never above the fires: the same as 0.
            Some(v) => f.from("volume_threshold", (v.clamp(0.0, f64::from(u32::MAX)) as u32).to_string(), e),
            None => ignored.push((e, "not an integer: opossum ignores it (Number.isInteger) and uses 0")),
        }
    }
    if let Some(e) = get("capacity") {
        match js_integer(e) {
            // Semaphore(n) with n < 1 refuses every call; from 2^32 - 1 on (opossum's
            // default MAX_SAFE_INTEGER among them) no run reaches the bound: unbounded.
            Some(v) if v < f64::from(u32::MAX) => f.from("capacity", (v.max(0.0) as u32).to_string(), e),
            Some(_) => {}
            None => {
                ignored.push((e, "not an integer: opossum ignores it (Number.isInteger) and leaves calls unbounded"))
            }
        }
    }
    if let Some(e) = get("allowWarmUp") {
        match e.value.v {
            Val::Bool(b) => f.from("allow_warm_up", b.to_string(), e),
            _ => ignored.push((e, "not a boolean: opossum warms up only for `true` (=== true): no warm-up")),
        }
    }
    let what =
        name.map_or_else(|| "opossum CircuitBreaker options".to_string(), |n| format!("opossum breaker \"{n}\""));
    let fields = f.fields;
    for (e, why) in ignored {
        out.warn(e.at, &e.key, why);
    }
    out.layers.push(OutLayer { policy: "Opossum", what, fields, classes: Vec::new() });
    Ok(())
}
