//! opossum `CircuitBreaker` options as JSON: one options object, or an object of named
//! options objects (one per breaker, chosen with `--instance`). Durations are milliseconds;
//! `timeout: false` switches the timeout off (`"0s"` in the preset); opossum's default
//! `capacity` (`Number.MAX_SAFE_INTEGER`) is unbounded (`0` in the preset).

use super::ImportError;
use super::emit::{Imported, OutLayer, dur, float};
use super::read::{Fields, Known, Section, boolean, int, millis, num};
use super::tree::{Node, Val, at_pos, canon, json};

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

/// Is this object an options object (rather than an object of named ones)?
fn is_options(n: &Node) -> bool {
    n.entries().iter().any(|e| OPTIONS.iter().any(|(k, _)| canon(k) == canon(&e.key)))
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
    let s = Section::merged("opossum", &[options]);
    s.check(OPTIONS, &mut out.warnings)?;
    let mut f = Fields::new(out);
    if let Some(e) = s.get("timeout") {
        let v = match e.value.v {
            Val::Bool(false) => 0,
            _ => millis(e)?,
        };
        f.from("timeout", dur(v), e);
    }
    if let Some(e) = s.get("errorThresholdPercentage") {
        f.from("error_threshold_percentage", float(num(e, |v| (0.0..=100.0).contains(&v), "[0, 100]")?), e);
    }
    for (key, field) in [("resetTimeout", "reset_timeout"), ("rollingCountTimeout", "rolling_count_timeout")] {
        if let Some(e) = s.get(key) {
            f.from(field, dur(millis(e)?), e);
        }
    }
    for (key, field) in [("rollingCountBuckets", "rolling_count_buckets"), ("volumeThreshold", "volume_threshold")] {
        if let Some(e) = s.get(key) {
            f.from(
                field,
                int(e, if field == "rolling_count_buckets" { 1 } else { 0 }, i64::from(u32::MAX))?.to_string(),
                e,
            );
        }
    }
    if let Some(e) = s.get("capacity") {
        // Number.MAX_SAFE_INTEGER and beyond is opossum's "no limit".
        let v = num(e, |v| v >= 0.0, ">= 0")?;
        let cap = if v >= u32::MAX as f64 { 0 } else { v as u32 };
        f.from("capacity", cap.to_string(), e);
    }
    if let Some(e) = s.get("allowWarmUp") {
        f.from("allow_warm_up", boolean(e)?.to_string(), e);
    }
    let what =
        name.map_or_else(|| "opossum CircuitBreaker options".to_string(), |n| format!("opossum breaker \"{n}\""));
    let fields = f.fields;
    out.layers.push(OutLayer { policy: "Opossum", what, fields });
    Ok(())
}
