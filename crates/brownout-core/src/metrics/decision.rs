//! The decision's data, as summaries and `recommendation.json` carry it: the objective's
//! sense, bounds over replications, verdicts and the recommendation. The logic that computes
//! them is in the `decide` module; the types live here so a summary can hold a decision without the
//! metrics depending on the deciding.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Which way the objective improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sense {
    /// Smaller is better.
    Minimize,
    /// Larger is better.
    Maximize,
}

/// The mean of replicated values and its one-sided 95 % bounds on each side. In JSON a figure
/// that is not a number is `null`, and so are the bounds of fewer than two replications (none
/// was estimated); read back, they are the mean again.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(into = "BoundsFile", from = "BoundsFile")]
pub struct Bounds {
    /// Replications behind the figures.
    pub n: usize,
    /// Sample mean.
    pub mean: f64,
    /// One-sided 95 % lower bound: mean - t(0.95, n-1) s / sqrt(n) (the mean itself for n < 2).
    pub lo: f64,
    /// One-sided 95 % upper bound.
    pub hi: f64,
}

/// A constraint's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The one-sided 95 % bound meets the constraint.
    Holds,
    /// The bound on the other side misses it: the constraint fails with 95 % confidence.
    Fails,
    /// The interval straddles the target: more replications would tell.
    Unsure,
}

/// Why the runner-up was not chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lost {
    /// Both feasible; the runner-up's objective is worse by `by` (in the objective's units).
    /// `significant`: the paired 95 % interval of the difference excludes zero; false means
    /// the two are tied within the replications' noise.
    Objective {
        /// Objective difference, runner-up minus recommended, in the better-is-positive sense.
        #[serde(with = "figure")]
        by: f64,
        /// The paired difference's two-sided 95 % interval excludes zero.
        significant: bool,
    },
    /// The runner-up fails constraint `constraint` (index into `subject_to`) by `by` (its
    /// conservative bound's shortfall, in the metric's units).
    Infeasible {
        /// Index into `subject_to`.
        constraint: usize,
        /// Shortfall in the metric's units.
        #[serde(with = "figure")]
        by: f64,
    },
    /// Neither is feasible; the runner-up's worst relative shortfall is larger.
    MoreViolation {
        /// Runner-up's violation minus the recommended one's.
        #[serde(with = "figure")]
        by: f64,
    },
}

/// The file's contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// `"run"`, `"sweep"` or `"tune"`.
    pub source: String,
    /// Minimise or maximise.
    pub sense: Sense,
    /// The objective as written.
    pub objective: String,
    /// The chosen candidate; `None` only when there was nothing to choose from.
    pub recommended: Option<Candidate>,
    /// Whether the recommended candidate meets every constraint (if not, it is the one with
    /// the least worst-case violation).
    pub feasible: bool,
    /// The recommended candidate's constraints, each with its interval and verdict (the same
    /// as `recommended.constraints`, at the top for readers).
    pub constraints: Vec<ConstraintOut>,
    /// The runner-up, if any.
    pub runner_up: Option<Candidate>,
    /// Why the runner-up lost.
    pub lost: Option<Lost>,
    /// Replications behind each candidate's figures.
    pub replications: usize,
    /// Candidates evaluated (policy sets, settings, or points `tune` tried).
    pub candidates: usize,
    /// What the scenario allows before any run: for each constraint a bound can be computed
    /// for, the best value any policy could reach (`decide::feasible`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<Ceiling>,
    /// Warnings about the question as asked: a recommended value at the edge of its range, a
    /// constraint that never bound, a knob that does not move a constraint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// The rule the choice followed, in words: paired by seed, Student-t 95 %, the
    /// objective's practical-equivalence margin, one-sided bounds for constraints. Empty in
    /// files written before it.
    #[serde(default)]
    pub rule: String,
}

/// The best value of a constraint's figure that any policy set could reach, computed from the
/// scenario alone (`decide::feasible`), and whether the target lies beyond it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// Index of the constraint in `subject_to`.
    pub constraint: usize,
    /// `[phase:][class/]metric`.
    pub metric: String,
    /// `>=` or `>`.
    pub op: String,
    /// The target.
    pub value: f64,
    /// The best value possible; `null` (NaN) when no bound could be computed (`why` says why).
    #[serde(with = "figure")]
    pub best: f64,
    /// The target lies beyond `best`: no policy set can meet the constraint.
    pub unreachable: bool,
    /// What the bound assumes, or why there is none.
    pub why: String,
}

/// One candidate: a policy set, with the decision settings that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The policy set's name.
    pub policy: String,
    /// Decision axis values (name to value in the axis's unit); empty in a run.
    pub setting: BTreeMap<String, f64>,
    /// The policy stack with the setting applied, as RON ready to paste into a scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// The objective's mean and one-sided 95 % bounds.
    pub objective: Bounds,
    /// Each constraint judged.
    pub constraints: Vec<ConstraintOut>,
    /// Every constraint holds.
    pub feasible: bool,
    /// Worst relative shortfall (0 when feasible).
    #[serde(with = "figure")]
    pub violation: f64,
}

/// One constraint, as written and as judged. In JSON, as [`Bounds`]: `null` for a figure that
/// is not a number and for the bounds of an untested constraint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "ConstraintFile", from = "ConstraintFile")]
pub struct ConstraintOut {
    /// `[phase:][class/]metric`.
    pub metric: String,
    /// `>=`, `>`, `<=` or `<`.
    pub op: String,
    /// The target.
    pub value: f64,
    /// Replications.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// One-sided 95 % lower bound.
    pub lo: f64,
    /// One-sided 95 % upper bound.
    pub hi: f64,
    /// Verdict.
    pub verdict: Verdict,
    /// Slack of the conservative bound (negative: short by that much).
    pub margin: f64,
    /// One replication: no interval was estimated.
    pub untested: bool,
}

/// JSON has no NaN or infinity: a figure that is not finite is written `null`, read as NaN.
mod figure {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() { s.serialize_some(v) } else { s.serialize_none() }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// A bound as the file holds it: `None` when not estimated (fewer than two values) or not finite.
fn bound_out(n: usize, v: f64) -> Option<f64> {
    (n >= 2 && v.is_finite()).then_some(v)
}

/// A bound read back: an untested one is the mean, as [`Bounds`] holds it.
fn bound_in(n: usize, mean: f64, v: Option<f64>) -> f64 {
    v.unwrap_or(if n == 1 { mean } else { f64::NAN })
}

/// [`Bounds`] as written to JSON.
#[derive(Serialize, Deserialize)]
struct BoundsFile {
    n: usize,
    #[serde(with = "figure")]
    mean: f64,
    lo: Option<f64>,
    hi: Option<f64>,
}

impl From<Bounds> for BoundsFile {
    fn from(b: Bounds) -> Self {
        BoundsFile { n: b.n, mean: b.mean, lo: bound_out(b.n, b.lo), hi: bound_out(b.n, b.hi) }
    }
}

impl From<BoundsFile> for Bounds {
    fn from(b: BoundsFile) -> Self {
        Bounds { n: b.n, mean: b.mean, lo: bound_in(b.n, b.mean, b.lo), hi: bound_in(b.n, b.mean, b.hi) }
    }
}

/// [`ConstraintOut`] as written to JSON.
#[derive(Serialize, Deserialize)]
struct ConstraintFile {
    metric: String,
    op: String,
    value: f64,
    n: usize,
    #[serde(with = "figure")]
    mean: f64,
    lo: Option<f64>,
    hi: Option<f64>,
    verdict: Verdict,
    #[serde(with = "figure")]
    margin: f64,
    untested: bool,
}

impl From<ConstraintOut> for ConstraintFile {
    fn from(c: ConstraintOut) -> Self {
        ConstraintFile {
            lo: bound_out(c.n, c.lo),
            hi: bound_out(c.n, c.hi),
            metric: c.metric,
            op: c.op,
            value: c.value,
            n: c.n,
            mean: c.mean,
            verdict: c.verdict,
            margin: c.margin,
            untested: c.untested,
        }
    }
}

impl From<ConstraintFile> for ConstraintOut {
    fn from(c: ConstraintFile) -> Self {
        ConstraintOut {
            lo: bound_in(c.n, c.mean, c.lo),
            hi: bound_in(c.n, c.mean, c.hi),
            metric: c.metric,
            op: c.op,
            value: c.value,
            n: c.n,
            mean: c.mean,
            verdict: c.verdict,
            margin: c.margin,
            untested: c.untested,
        }
    }
}
