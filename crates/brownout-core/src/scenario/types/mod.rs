//! The scenario file's serializable types (RON, `deny_unknown_fields`), one file per part of
//! the file: the fleet, the traffic (classes, arrivals, catalogue, business costs), the
//! dependency, the policy sets, phases, expectations and limits.
//!
//! These are the boundary: they say what the user wrote. `model::build` turns them into
//! runtime state after `validate` has checked them.

mod decide;
mod dep_scope;
mod dependency;
mod expect;
mod fleet;
mod graph;
mod health;
mod limits;
mod phases;
mod policies;
mod recovery;
mod service;
mod slo;
mod statistics;
mod traffic;

use serde::{Deserialize, Serialize};

use super::Dur;
use crate::policy::PolicySpec;
pub use decide::*;
pub use dependency::*;
pub use expect::*;
pub use fleet::*;
pub use graph::*;
pub use health::*;
pub use limits::*;
pub use phases::*;
pub use policies::*;
pub use recovery::*;
pub use service::*;
pub use slo::*;
pub use statistics::*;
pub use traffic::*;

/// A whole scenario file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name; also the default output folder `output/<name>/`.
    pub name: String,
    /// One-paragraph description, shown in reports.
    #[serde(default)]
    pub description: String,
    /// Root seed (overridden by `--seed`).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Replications: every policy set runs on this many seeds (the root seed first, then
    /// seeds derived from it; `--replications` overrides), and the report gives means with
    /// 95 % intervals and stars only where the differences are significant (1..=1000).
    #[serde(default = "default_replications", skip_serializing_if = "is_one")]
    #[schemars(!skip_serializing_if)]
    pub replications: u32,
    /// Simulated time to run (> 0).
    pub horizon: Dur,
    /// Leading time excluded from summary metrics (shorter than `horizon`).
    #[serde(default)]
    pub warmup: Dur,
    /// Width of a time-series window (> 0; at most 1,000,000 windows per horizon).
    #[serde(default = "default_window")]
    pub window: Dur,
    /// How recovery after each phase and time degraded are judged from the per-window
    /// in-time ratio; every field may be left out (defaults `(tolerance: 0.02, hold: 3,
    /// baseline: 10, degraded_below: 0.9)`).
    #[serde(default, skip_serializing_if = "Recovery::is_default")]
    #[schemars(!skip_serializing_if)]
    pub recovery: Recovery,
    /// The caller fleet: gateway instances with worker slots and a connection pool.
    pub fleet: Fleet,
    /// Request classes (at least one; names unique).
    pub classes: Vec<Class>,
    /// The dependency the classes call (the one-dependency form; give either this or
    /// `dependencies`).
    #[serde(default = "Dependency::absent", skip_serializing_if = "Dependency::is_absent")]
    pub dependency: Dependency,
    /// Several named dependencies (the service-graph form, instead of `dependency`): each
    /// class says which it calls, in what order, in its `calls` plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<Dependency>,
    /// Items, their stock changes and the last-known-value cache.
    #[serde(default)]
    pub catalogue: Option<Catalogue>,
    /// What a wrong value or a failed order costs.
    #[serde(default)]
    pub business: Option<Business>,
    /// The policies to compare (at least one set); each runs on the same traffic.
    pub policies: Vec<PolicySet>,
    /// Named time windows reported beside the whole run (e.g. the incident); when empty,
    /// phases are derived from the drift, modes and replica slowdowns of every dependency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
    /// Assertions checked after the run (`brownout run` exits 1 if one fails).
    #[serde(default)]
    pub expect: Vec<Expectation>,
    /// The objective and constraints a recommendation must meet (see [`crate::decide`]);
    /// without it, the report names the winner on in-time success per class in the incident.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide: Option<Decide>,
    /// How figures are compared: the practical-equivalence margin per metric that run stars,
    /// a sweep's best settings, `decide` and `tune` tie within.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics: Option<Statistics>,
    /// Guards against runaway scenarios.
    #[serde(default)]
    pub limits: Limits,
}

fn default_seed() -> u64 {
    1
}
fn default_replications() -> u32 {
    1
}
fn is_one(r: &u32) -> bool {
    *r == 1
}
fn default_window() -> Dur {
    Dur::secs(1)
}
