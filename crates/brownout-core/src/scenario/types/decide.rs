//! What the user wants decided: an objective and the constraints a recommended policy set (or
//! sweep setting) must meet. [`crate::decide`] evaluates it over replications.

use serde::{Deserialize, Serialize};

use super::Cmp;

/// An objective and constraints: `decide: (minimize: "business_cost", subject_to: [...])`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Decide {
    /// What to minimise: a metric written as sweep metrics are (`business_cost`,
    /// `checkout/p95_ms`, `brownout:authorize/in_time_ratio`), or in a sweep a decision axis's
    /// name. Give exactly one of `minimize` and `maximize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimize: Option<String>,
    /// What to maximise (as `minimize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximize: Option<String>,
    /// Constraints every recommended choice must meet, each judged by its one-sided 95 % bound
    /// over the replications.
    #[serde(default)]
    pub subject_to: Vec<Constraint>,
}

/// One constraint: `(class: "authorize", metric: "in_time_ratio", phase: "brownout", op: Ge,
/// value: 0.99)`, or per dependency `(dependency: "pricing", metric: "amplification", op: Le,
/// value: 1.5)`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Constraint {
    /// Class, for per-class metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Dependency, for per-dependency metrics of a service graph (`calls`, `amplification`,
    /// `total_p95_ms`, ...: one of `dependencies` by name; not with `class`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency: Option<String>,
    /// Catalogue metric name.
    pub metric: String,
    /// Phase the metric is measured over (default: the whole run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// `Ge`, `Gt`, `Le` or `Lt` (an equality cannot be shown by an interval).
    pub op: Cmp,
    /// The bound.
    pub value: f64,
}
