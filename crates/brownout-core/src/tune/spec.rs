//! The tune spec file (RON, `deny_unknown_fields`): the base scenario, the policy set whose
//! knobs are searched, each knob's path and range, the decision (objective and constraints)
//! and the budget. Loading only parses; [`super::space`] resolves it against the scenario.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::scenario::Decide;
use crate::sweep::SpecError;
/// A range end as written: a number, or a duration text such as `"250ms"` (as a sweep axis's).
pub use crate::sweep::spec::AxisValue;

/// A whole tune spec.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TuneSpec {
    /// Name; the default output folder is `output/<name>/`.
    pub name: String,
    /// The scenario file, relative to the spec file.
    pub base: String,
    /// Root seed (default: the scenario's). Replication `r` runs with the seed a sweep's
    /// replication `r` has, the same for every candidate (common random numbers).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Replications per candidate (>= 2 so constraints get an interval).
    #[serde(default = "three")]
    pub replications: u32,
    /// The policy set whose knobs are searched.
    pub policy: String,
    /// The decision knobs: at least one.
    pub knobs: Vec<Knob>,
    /// Objective and constraints, as a scenario's `decide` section; the objective may also
    /// name a knob (`minimize: "permits"`).
    pub decide: Decide,
    /// When to stop.
    pub budget: Budget,
}

fn three() -> u32 {
    3
}

/// One decision knob.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Knob {
    /// Name in the trace and the recommendation.
    pub name: String,
    /// Where the value lives, as a sweep axis path:
    /// `policies[tiered].stack[0].policy.TieredBulkhead.permits`.
    pub path: String,
    /// The values searched, ends included.
    pub range: KnobRange,
    /// Round to whole numbers (permits, counts); the range must hold one. Not on a duration.
    #[serde(default)]
    pub integer: bool,
}

/// A knob's range. On a duration (`Timeout.timeout`, a backoff, a break duration) each end is
/// a duration text (`"100ms"`) or a number of seconds, and the knob's values are seconds;
/// elsewhere both ends are numbers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KnobRange {
    /// Smallest value.
    pub from: AxisValue,
    /// Largest value.
    pub to: AxisValue,
}

/// The search's budget.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Simulation runs at most (each candidate costs `replications` runs).
    pub runs: u64,
    /// Wall-clock time at most (`"10m"`). It only stops the search early: a search stopped
    /// by it depends on the machine's speed, one stopped by `runs` does not.
    #[serde(default)]
    pub wall: Option<String>,
}

/// Parse spec text; `path` is only used in messages.
pub fn parse(path: &Path, text: &str) -> Result<TuneSpec, SpecError> {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str::<TuneSpec>(text)
        .map_err(|e| SpecError {
            file: path.to_path_buf(),
            line: e.position.line,
            col: e.position.col,
            message: e.code.to_string(),
        })
}
