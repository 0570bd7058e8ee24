//! .NET `Microsoft.Extensions.Http.Resilience`: the standard handler's options
//! (`HttpStandardResilienceOptions`) as bound from a section of `appsettings.json`:
//! `RateLimiter`, `TotalRequestTimeout`, `Retry`, `CircuitBreaker`, `AttemptTimeout` and their
//! fields, with .NET's names. The section is the one holding those keys (the file's root, or
//! a nested section named with `--instance` as a .NET configuration path, `A:B`).

use super::ImportError;
use super::emit::{Imported, OutLayer, Warning, dur, float};
use super::read::{Fields, Known, Section, boolean, choice, int, num, timespan};
use super::tree::{Entry, Node, Val, at_pos, canon, json};

const STRATEGIES: [&str; 5] = ["RateLimiter", "TotalRequestTimeout", "Retry", "CircuitBreaker", "AttemptTimeout"];
const PREDICATE: &str = "a delegate: it cannot come from configuration; brownout handles every error and timeout";
const OBSERVABILITY: &str = "observability only: nothing to simulate";
const HEDGING: &str = "the standard hedging handler is not imported (brownout's Hedge layer has other options)";

const HANDLER: &[(&str, Known)] = &[
    ("RateLimiter", Known::Read),
    ("TotalRequestTimeout", Known::Read),
    ("Retry", Known::Read),
    ("CircuitBreaker", Known::Read),
    ("AttemptTimeout", Known::Read),
    ("Hedging", Known::Warn(HEDGING)),
    ("Endpoint", Known::Warn(HEDGING)),
];
const RATE_LIMITER: &[(&str, Known)] = &[
    ("DefaultRateLimiterOptions", Known::Read),
    ("Name", Known::Warn(OBSERVABILITY)),
    ("RateLimiter", Known::Warn(PREDICATE)),
    ("OnRejected", Known::Warn(PREDICATE)),
];
const LIMITER_OPTIONS: &[(&str, Known)] =
    &[("PermitLimit", Known::Read), ("QueueLimit", Known::Read), ("QueueProcessingOrder", Known::Read)];
const TIMEOUT: &[(&str, Known)] = &[
    ("Timeout", Known::Read),
    ("Name", Known::Warn(OBSERVABILITY)),
    ("TimeoutGenerator", Known::Warn(PREDICATE)),
    ("OnTimeout", Known::Warn(PREDICATE)),
];
const RETRY: &[(&str, Known)] = &[
    ("MaxRetryAttempts", Known::Read),
    ("BackoffType", Known::Read),
    ("UseJitter", Known::Read),
    ("Delay", Known::Read),
    ("MaxDelay", Known::Warn("brownout's .NET preset has no delay cap: delays are not capped")),
    ("ShouldRetryAfterHeader", Known::Warn("the dependency sends no Retry-After header in brownout")),
    ("Name", Known::Warn(OBSERVABILITY)),
    ("ShouldHandle", Known::Warn(PREDICATE)),
    ("DelayGenerator", Known::Warn(PREDICATE)),
    ("OnRetry", Known::Warn(PREDICATE)),
];
const BREAKER: &[(&str, Known)] = &[
    ("FailureRatio", Known::Read),
    ("MinimumThroughput", Known::Read),
    ("SamplingDuration", Known::Read),
    ("BreakDuration", Known::Read),
    ("BreakDurationGenerator", Known::Warn(PREDICATE)),
    ("ManualControl", Known::Warn("a manually isolated breaker is not modelled")),
    ("StateProvider", Known::Warn(OBSERVABILITY)),
    ("Name", Known::Warn(OBSERVABILITY)),
    ("ShouldHandle", Known::Warn(PREDICATE)),
    ("OnOpened", Known::Warn(PREDICATE)),
    ("OnClosed", Known::Warn(PREDICATE)),
    ("OnHalfOpened", Known::Warn(PREDICATE)),
];

/// Does this object hold standard-handler options?
fn is_handler(n: &Node) -> bool {
    n.entries().iter().any(|e| STRATEGIES.iter().any(|s| canon(s) == canon(&e.key)))
}

/// The configuration paths (`A:B`) of every section holding standard-handler options.
pub(crate) fn sections(root: &Node) -> Vec<(String, &Node)> {
    fn walk<'a>(n: &'a Node, path: String, out: &mut Vec<(String, &'a Node)>) {
        if is_handler(n) {
            out.push((path, n));
            return;
        }
        for e in n.entries() {
            let p = if path.is_empty() { e.key.clone() } else { format!("{path}:{}", e.key) };
            walk(&e.value, p, out);
        }
    }
    let mut out = Vec::new();
    walk(root, String::new(), &mut out);
    out
}

pub(crate) fn import(text: &str, instance: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let root = json(text)?;
    let found = sections(&root);
    let names: Vec<String> =
        found.iter().map(|(p, _)| if p.is_empty() { "(the root)".to_string() } else { p.clone() }).collect();
    let (path, node) = match instance {
        Some(w) => found.iter().find(|(p, _)| canon(p) == canon(w)).ok_or_else(|| {
            at_pos(root.at, format!("no standard-handler section \"{w}\" in the file (sections: {})", list(&names)))
        })?,
        None if found.len() == 1 => &found[0],
        None if found.is_empty() => {
            return Err(at_pos(root.at, format!("no section with any of {} in the file", STRATEGIES.join(", "))));
        }
        None => {
            return Err(at_pos(
                root.at,
                format!("the file has {} handler sections ({}): name one (--instance)", found.len(), list(&names)),
            ));
        }
    };
    out.instance = (!path.is_empty()).then(|| path.clone());
    let s = Section::merged(".NET standard handler", &[node]);
    s.check(HANDLER, &mut out.warnings)?;
    let mut f = Fields::new(out);
    let mut warns = Vec::new();
    if let Some(r) = s.get("RateLimiter") {
        let rs = sub(r, "RateLimiter", RATE_LIMITER, &mut warns)?;
        if let Some(o) = rs.get("DefaultRateLimiterOptions") {
            let os = sub(o, "RateLimiter.DefaultRateLimiterOptions", LIMITER_OPTIONS, &mut warns)?;
            if let Some(e) = os.get("PermitLimit") {
                f.from("rate_limiter_permits", int(e, 1, i64::from(i32::MAX))?.to_string(), e);
            }
            if let Some(e) = os.get("QueueLimit") {
                f.from("rate_limiter_queue", int(e, 0, i64::from(i32::MAX))?.to_string(), e);
            }
            if let Some(e) = os.get("QueueProcessingOrder")
                && choice(e, &["OldestFirst", "NewestFirst"])? == 1
            {
                let message = "the queue is served oldest first in brownout".to_string();
                warns.push(Warning { at: e.at, key: e.key.clone(), message });
            }
        }
    }
    if let Some(t) = s.get("TotalRequestTimeout") {
        let ts = sub(t, "TotalRequestTimeout", TIMEOUT, &mut warns)?;
        if let Some(e) = ts.get("Timeout") {
            f.from("total_timeout", dur(timespan(e)?), e);
        }
    }
    if let Some(r) = s.get("Retry") {
        let rs = sub(r, "Retry", RETRY, &mut warns)?;
        if let Some(e) = rs.get("MaxRetryAttempts") {
            f.from("max_retry_attempts", int(e, 1, i64::from(i32::MAX))?.to_string(), e);
        }
        if let Some(e) = rs.get("BackoffType") {
            let kinds = ["Constant", "Linear", "Exponential"];
            let k = choice(e, &kinds)?;
            if kinds[k] == "Linear" {
                // Refused here, where the file says it, rather than printed as a layer that
                // `check` then refuses (DotnetStandard has no linear backoff).
                return Err(at_pos(
                    e.value.at,
                    format!(
                        "{}: Linear (delay x attempt) has no brownout equivalent: brownout's retry \
                         delays are constant or exponential (Constant, Exponential)",
                        e.key
                    ),
                ));
            }
            f.from("retry_backoff", kinds[k].into(), e);
        }
        if let Some(e) = rs.get("UseJitter") {
            f.from("retry_use_jitter", boolean(e)?.to_string(), e);
        }
        if let Some(e) = rs.get("Delay") {
            f.from("retry_delay", dur(timespan(e)?), e);
        }
    }
    if let Some(c) = s.get("CircuitBreaker") {
        let cs = sub(c, "CircuitBreaker", BREAKER, &mut warns)?;
        if let Some(e) = cs.get("FailureRatio") {
            f.from("failure_ratio", float(num(e, |v| v > 0.0 && v <= 1.0, "(0, 1]")?), e);
        }
        if let Some(e) = cs.get("MinimumThroughput") {
            f.from("minimum_throughput", int(e, 2, i64::from(i32::MAX))?.to_string(), e);
        }
        for (key, field) in [("SamplingDuration", "sampling_duration"), ("BreakDuration", "break_duration")] {
            if let Some(e) = cs.get(key) {
                f.from(field, dur(timespan(e)?), e);
            }
        }
    }
    if let Some(t) = s.get("AttemptTimeout") {
        let ts = sub(t, "AttemptTimeout", TIMEOUT, &mut warns)?;
        if let Some(e) = ts.get("Timeout") {
            f.from("attempt_timeout", dur(timespan(e)?), e);
        }
    }
    let fields = f.fields;
    out.warnings.extend(warns);
    let what =
        format!("HttpStandardResilienceOptions{}", if path.is_empty() { String::new() } else { format!(" at {path}") });
    out.layers.push(OutLayer { policy: "DotnetStandard", what, fields, classes: Vec::new() });
    Ok(())
}

fn list(names: &[String]) -> String {
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

/// A strategy's options object, its keys checked (warnings collected in `warns`).
fn sub<'a>(
    e: &'a Entry,
    what: &str,
    known: &[(&str, Known)],
    warns: &mut Vec<Warning>,
) -> Result<Section<'a>, ImportError> {
    if !matches!(e.value.v, Val::Map(_)) {
        return Err(at_pos(e.value.at, format!("{}: expected an object, found {}", e.key, e.value.kind())));
    }
    let s = Section::merged(format!(".NET {what}"), &[&e.value]);
    s.check(known, warns)?;
    Ok(s)
}
