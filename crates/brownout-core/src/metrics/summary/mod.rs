//! The serializable results of a run: what `summary.json` and `summary.csv` hold. The
//! scenario's whole summary and its phases here; one class's figures in `class.rs`, one
//! policy set's run in `run.rs`, the replication statistics in `replications.rs`.

use serde::{Deserialize, Deserializer, Serialize};

mod class;
mod deps;
mod replications;
mod run;

pub use class::{Causes, ClassSummary, FallbackAnswers, LatencyMs, Outcomes, RecoverySummary, SloFigures, StalenessMs};
pub use deps::{CallFigures, DependencyCauses, DependencyFigures};
pub use replications::{Comparison, MetricInterval, PairedDifference, ReplicatedRun, Replications};
pub use run::{
    Backlog, BreakerSummary, ConnectionSummary, DependencySummary, FOUND_BUCKETS, LimitSummary, Occupancy,
    QueueSummary, ResourceSummary, RunSummary,
};

/// A figure over no sample (a latency of no answer, a ratio over no request) is `f64::NAN`,
/// which JSON writes as `null`: read `null` back as NaN, so a summary survives its round trip.
fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A real figure missing from a summary written before it existed has no value (NaN), not
/// 0: `#[serde(default = "no_value")]`.
fn no_value() -> f64 {
    f64::NAN
}

/// [`nan_if_null`] for an interval's two ends.
fn nan_pair_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
    let [lo, hi] = <[Option<f64>; 2]>::deserialize(d)?;
    Ok([lo.unwrap_or(f64::NAN), hi.unwrap_or(f64::NAN)])
}

/// [`nan_if_null`] for a list of values.
fn nan_vec_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    Ok(Vec::<Option<f64>>::deserialize(d)?.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
}

/// Equality as written: two values are equal when their JSON is, so a figure of no value
/// (NaN, written `null`) equals itself, and a rerun of the same run compares equal.
macro_rules! eq_as_written {
    ($($t:ty),*) => {$(
        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                serde_json::to_value(self).ok() == serde_json::to_value(other).ok()
            }
        }
    )*};
}

eq_as_written!(
    MetricInterval,
    PairedDifference,
    RunSummary,
    LatencyMs,
    StalenessMs,
    ClassSummary,
    DependencySummary,
    BreakerSummary,
    LimitSummary,
    Occupancy,
    ResourceSummary,
    QueueSummary
);

/// All policy runs of a scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScenarioSummary {
    /// Scenario name.
    pub scenario: String,
    /// Root seed used.
    pub seed: u64,
    /// Measured span in seconds (horizon minus warm-up).
    #[serde(deserialize_with = "nan_if_null")]
    pub measured_s: f64,
    /// The setup the charts draw limits from.
    pub setup: Setup,
    /// One entry per policy set, in scenario order (replication 0's figures: the root seed's).
    pub runs: Vec<RunSummary>,
    /// The same figures per phase, in time order; absent when the run has no phases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseSummary>,
    /// Means and intervals over the replications; absent with one replication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replications: Option<Replications>,
    /// What the scenario's `decide` section recommends; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<super::decision::Recommendation>,
}

/// One phase's figures: every policy set's run over the requests that arrived in the phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PhaseSummary {
    /// Phase name.
    pub name: String,
    /// Start, seconds.
    #[serde(deserialize_with = "nan_if_null")]
    pub start_s: f64,
    /// End, seconds.
    #[serde(deserialize_with = "nan_if_null")]
    pub end_s: f64,
    /// `"scenario"` (written in the scenario) or `"derived"` (from the dependency's timeline).
    pub source: String,
    /// One entry per policy set, in scenario order, with the whole run's fields; `events` and
    /// `in_flight_at_end` are the whole run's. Replication 0's figures, as the whole run's.
    pub runs: Vec<RunSummary>,
    /// Means and intervals of the phase's figures over the replications; absent with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replications: Option<Replications>,
}

/// Phase names that mark the incident, in order of preference (matched in lower case, as a
/// part of the name); the derived `degraded` phase is the last.
pub const INCIDENT_NAMES: [&str; 4] = ["brownout", "incident", "outage", "degraded"];

impl ScenarioSummary {
    /// The runs over `phase`, or the whole run's for `None`; `None` for an unknown phase.
    pub fn runs_of(&self, phase: Option<&str>) -> Option<&[RunSummary]> {
        match phase {
            None => Some(&self.runs),
            Some(name) => self.phases.iter().find(|p| p.name == name).map(|p| p.runs.as_slice()),
        }
    }

    /// The phase that matters most, which reports show beside the whole run: the first phase
    /// whose name contains one of [`INCIDENT_NAMES`], tried in that order (so a scenario's
    /// `brownout` or the derived `degraded`); none when no name matches.
    pub fn key_phase(&self) -> Option<&PhaseSummary> {
        INCIDENT_NAMES.iter().find_map(|want| self.phases.iter().find(|p| p.name.to_lowercase().contains(want)))
    }

    /// This summary with `phase`'s runs in place of the whole run's and no phases: what the
    /// report tables show for the phase.
    pub fn phase_view(&self, phase: &PhaseSummary) -> ScenarioSummary {
        ScenarioSummary {
            scenario: self.scenario.clone(),
            seed: self.seed,
            measured_s: phase.end_s - phase.start_s,
            setup: self.setup.clone(),
            runs: phase.runs.clone(),
            phases: Vec::new(),
            replications: phase.replications.clone(),
            decision: None,
        }
    }
}

impl PhaseSummary {
    /// `during brownout (20m-32m, from the scenario)`: the heading of its tables.
    pub fn title(&self) -> String {
        let t = |s: f64| crate::engine::fmt_time((s * 1e9).round() as crate::engine::Time);
        let how = if self.source == "derived" { "derived from the dependency's timeline" } else { "from the scenario" };
        format!("during {} ({}-{}, {how})", self.name, t(self.start_s), t(self.end_s))
    }
}

/// Static facts of the scenario, for charts and reports.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Setup {
    /// Gateway instances.
    pub instances: u32,
    /// Worker slots per instance.
    pub worker_slots: u32,
    /// Pool connections per instance (`fleet.pool`'s, plus those of `fleet.pools`).
    pub pool_connections: u32,
    /// Time-series window, seconds.
    #[serde(deserialize_with = "nan_if_null")]
    pub window_s: f64,
    /// Warm-up, seconds.
    #[serde(deserialize_with = "nan_if_null")]
    pub warmup_s: f64,
    /// Horizon, seconds.
    #[serde(deserialize_with = "nan_if_null")]
    pub horizon_s: f64,
    /// Classes and their deadlines.
    pub classes: Vec<ClassInfo>,
}

/// A class's static facts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassInfo {
    /// Name.
    pub name: String,
    /// Deadline in milliseconds.
    #[serde(deserialize_with = "nan_if_null")]
    pub deadline_ms: f64,
    /// Calls the dependency.
    pub calls_dependency: bool,
    /// Has a fallback (its `fallback` is not `None`): fallback figures say something.
    #[serde(default = "yes")]
    pub fallback: bool,
    /// Its fallback answers with a value that has an age (the catalogue's or the last answer).
    #[serde(default = "yes")]
    pub staleness: bool,
    /// Can cost something: orders under a business section, or a fallback with a cost per use.
    #[serde(default = "yes")]
    pub cost: bool,
    /// Its SLO, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloSetup>,
}

/// A class's SLO as the reports need it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SloSetup {
    /// The fraction of requests in time it asks for.
    pub target: f64,
    /// Its window, seconds.
    pub window_s: f64,
    /// Its multi-window burn-rate alerts.
    #[serde(default)]
    pub alerts: Vec<super::slo::AlertRule>,
}

/// Older summaries lack the class facts: show everything, as they did.
fn yes() -> bool {
    true
}
