//! Expectations: assertions on a run's results.

use serde::{Deserialize, Serialize};

/// An assertion on a run's results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Policy label.
    pub policy: String,
    /// Class name, for per-class metrics.
    #[serde(default)]
    pub class: Option<String>,
    /// Phase name: the metric over that phase instead of the whole run (a scenario phase, or
    /// a derived one: before, ramp, degraded, recovery, after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Metric name (see README: ok_ratio, goodput_per_s, p95_ms, transitions, ...).
    pub metric: String,
    /// Comparison.
    pub op: Cmp,
    /// Right-hand side: a number...
    #[serde(default)]
    pub value: Option<f64>,
    /// ...or the same metric (and class) under another policy, times `factor`.
    #[serde(default)]
    pub than: Option<String>,
    /// Multiplier on the other policy's value (default 1).
    #[serde(default = "one_f")]
    pub factor: f64,
}

fn one_f() -> f64 {
    1.0
}

/// Comparison operators for expectations.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==` within 1e-9
    Eq,
}
