//! Expectations in scenario files: assertions on a run's results, so a resilience config
//! can be tested in CI (`brownout run` exits 1 naming each failed expectation).

use crate::metrics::summary::{ClassSummary, RunSummary, ScenarioSummary};
use crate::scenario::{Cmp, Expectation};

const CLASS_METRICS: &[&str] = &[
    "requests",
    "ok",
    "error",
    "timeout",
    "rejected",
    "short_circuited",
    "fallback",
    "ok_ratio",
    "fallback_ratio",
    "goodput_ratio",
    "goodput_per_s",
    "fresh_goodput_per_s",
    "throughput_per_s",
    "deadline_missed",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
    "mean_ms",
    "staleness_p95_ms",
    "staleness_max_ms",
    "stale_wrong",
    "stale_wrong_fraction",
    "substitutions",
    "refunds",
    "lost_orders",
    "business_cost",
];

const RUN_METRICS: &[&str] = &[
    "transitions",
    "transitions_per_min",
    "open_fraction",
    "cycles",
    "amplification",
    "business_cost",
    "dependency_calls",
    "dependency_peak_in_flight",
    "dependency_throughput_cv",
    "workers_saturated_fraction",
    "workers_peak",
    "pool_saturated_fraction",
    "pool_peak",
    "limit_mean",
];

/// Is `name` a metric an expectation may name (per class or per run)?
pub fn known_metric(name: &str, per_class: bool) -> bool {
    if per_class { CLASS_METRICS.contains(&name) } else { RUN_METRICS.contains(&name) }
}

/// The metric names, for error messages.
pub fn metric_names(per_class: bool) -> String {
    (if per_class { CLASS_METRICS } else { RUN_METRICS }).join(", ")
}

fn class_metric(c: &ClassSummary, name: &str) -> Option<f64> {
    let o = &c.outcomes;
    Some(match name {
        "requests" => c.requests as f64,
        "ok" => o.ok as f64,
        "error" => o.error as f64,
        "timeout" => o.timeout as f64,
        "rejected" => o.rejected as f64,
        "short_circuited" => o.short_circuited as f64,
        "fallback" => o.fallback as f64,
        "ok_ratio" => c.ok_ratio,
        "fallback_ratio" => c.fallback_ratio,
        "goodput_ratio" => c.goodput_ratio,
        "goodput_per_s" => c.goodput_per_s,
        "fresh_goodput_per_s" => c.fresh_goodput_per_s,
        "throughput_per_s" => c.throughput_per_s,
        "deadline_missed" => c.deadline_missed as f64,
        "p50_ms" => c.latency_ms.p50,
        "p95_ms" => c.latency_ms.p95,
        "p99_ms" => c.latency_ms.p99,
        "max_ms" => c.latency_ms.max,
        "mean_ms" => c.latency_ms.mean,
        "staleness_p95_ms" => c.staleness_ms.p95,
        "staleness_max_ms" => c.staleness_ms.max,
        "stale_wrong" => c.stale_wrong as f64,
        "stale_wrong_fraction" => c.stale_wrong_fraction,
        "substitutions" => c.substitutions as f64,
        "refunds" => c.refunds as f64,
        "lost_orders" => c.lost_orders as f64,
        "business_cost" => c.business_cost,
        _ => return None,
    })
}

fn run_metric(r: &RunSummary, name: &str) -> Option<f64> {
    let b = r.breaker.as_ref();
    Some(match name {
        "transitions" => b.map_or(0.0, |b| b.transitions as f64),
        "transitions_per_min" => b.map_or(0.0, |b| b.transitions_per_min),
        "open_fraction" => b.map_or(0.0, |b| b.open_fraction),
        "cycles" => b.map_or(0.0, |b| b.cycles as f64),
        "amplification" => r.amplification,
        "business_cost" => r.business_cost,
        "dependency_calls" => r.dependency.calls as f64,
        "dependency_peak_in_flight" => r.dependency.peak_in_flight as f64,
        "dependency_throughput_cv" => r.dependency.throughput_cv,
        "workers_saturated_fraction" => r.resources.workers.saturated_fraction,
        "workers_peak" => r.resources.workers.peak as f64,
        "pool_saturated_fraction" => r.resources.pool.saturated_fraction,
        "pool_peak" => r.resources.pool.peak as f64,
        "limit_mean" => r.limit.as_ref().map_or(0.0, |l| l.mean),
        _ => return None,
    })
}

/// The value of `metric` (of `class`, if given) under `policy`.
pub fn metric(s: &ScenarioSummary, policy: &str, class: Option<&str>, metric: &str) -> Option<f64> {
    let run = s.runs.iter().find(|r| r.policy == policy)?;
    match class {
        Some(c) => class_metric(run.classes.iter().find(|k| k.class == c)?, metric),
        None => run_metric(run, metric),
    }
}

/// Look up the value an expectation is about.
pub fn value_of(s: &ScenarioSummary, e: &Expectation) -> Option<f64> {
    metric(s, &e.policy, e.class.as_deref(), &e.metric)
}

/// The right-hand side of an expectation: its value, or the other policy's value x factor.
pub fn target_of(s: &ScenarioSummary, e: &Expectation) -> Option<f64> {
    match (&e.value, &e.than) {
        (Some(v), _) => Some(*v),
        (None, Some(other)) => metric(s, other, e.class.as_deref(), &e.metric).map(|v| v * e.factor),
        (None, None) => None,
    }
}

/// Does `actual op value` hold?
pub fn holds(actual: f64, op: Cmp, value: f64) -> bool {
    match op {
        Cmp::Lt => actual < value,
        Cmp::Le => actual <= value,
        Cmp::Gt => actual > value,
        Cmp::Ge => actual >= value,
        Cmp::Eq => (actual - value).abs() <= 1e-9 * value.abs().max(1.0),
    }
}

fn op_str(op: Cmp) -> &'static str {
    match op {
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
        Cmp::Eq => "==",
    }
}

/// One checked expectation.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// Human-readable statement, e.g. `tiered/checkout ok_ratio >= 0.99`.
    pub statement: String,
    /// The measured value.
    pub actual: f64,
    /// Whether it held.
    pub passed: bool,
}

/// Check every expectation.
pub fn check(s: &ScenarioSummary, expectations: &[Expectation]) -> Vec<Checked> {
    expectations
        .iter()
        .map(|e| {
            let actual = value_of(s, e).unwrap_or(f64::NAN);
            let rhs = target_of(s, e).unwrap_or(f64::NAN);
            let subject = match &e.class {
                Some(c) => format!("{}/{}", e.policy, c),
                None => e.policy.clone(),
            };
            let right = match (&e.value, &e.than) {
                (Some(v), _) => format!("{v}"),
                (None, Some(t)) if e.factor != 1.0 => format!("{} x {t} ({rhs:.4})", e.factor),
                (None, Some(t)) => format!("{t} ({rhs:.4})"),
                _ => "?".into(),
            };
            Checked {
                statement: format!("{subject} {} {} {right}", e.metric, op_str(e.op)),
                actual,
                passed: holds(actual, e.op, rhs),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons() {
        assert!(holds(1.0, Cmp::Ge, 1.0));
        assert!(!holds(1.0, Cmp::Gt, 1.0));
        assert!(holds(0.5, Cmp::Lt, 1.0));
        assert!(holds(3.0, Cmp::Eq, 3.0));
        assert!(!holds(f64::NAN, Cmp::Ge, 0.0), "a missing value never passes");
    }

    #[test]
    fn every_listed_metric_resolves() {
        let c: ClassSummary = serde_json::from_value(serde_json::json!({
            "class": "x", "requests": 0,
            "outcomes": {"ok":0,"error":0,"timeout":0,"rejected":0,"short_circuited":0,"fallback":0},
            "latency_ms": {"mean":0.0,"p50":0.0,"p95":0.0,"p99":0.0,"max":0.0},
            "throughput_per_s":0.0,"goodput_per_s":0.0,"fresh_goodput_per_s":0.0,"deadline_missed":0,
            "ok_ratio":0.0,"fallback_ratio":0.0,"goodput_ratio":0.0,
            "staleness_ms":{"p50":0.0,"p95":0.0,"max":0.0},"stale_wrong":0,"stale_wrong_fraction":0.0,
            "orders":0,"substitutions":0,"refunds":0,"lost_orders":0,"business_cost":0.0,
            "slot_wait_ms_mean":0.0,"conn_wait_ms_mean":0.0
        }))
        .unwrap();
        for m in CLASS_METRICS {
            assert!(class_metric(&c, m).is_some(), "{m}");
        }
    }
}
