//! The serializable results of a run: what `summary.json` and `summary.csv` hold.

use serde::{Deserialize, Serialize};

/// All policy runs of a scenario.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScenarioSummary {
    /// Scenario name.
    pub scenario: String,
    /// Root seed used.
    pub seed: u64,
    /// Measured span in seconds (horizon minus warm-up).
    pub measured_s: f64,
    /// The setup the charts draw limits from.
    pub setup: Setup,
    /// One entry per policy set, in scenario order.
    pub runs: Vec<RunSummary>,
}

/// Static facts of the scenario, for charts and reports.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Setup {
    /// Gateway instances.
    pub instances: u32,
    /// Worker slots per instance.
    pub worker_slots: u32,
    /// Pool connections per instance.
    pub pool_connections: u32,
    /// Time-series window, seconds.
    pub window_s: f64,
    /// Warm-up, seconds.
    pub warmup_s: f64,
    /// Horizon, seconds.
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
    pub deadline_ms: f64,
    /// Calls the dependency.
    pub calls_dependency: bool,
}

/// One policy set's run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunSummary {
    /// Policy set label.
    pub policy: String,
    /// Per class.
    pub classes: Vec<ClassSummary>,
    /// The dependency's view.
    pub dependency: DependencySummary,
    /// Breaker statistics, where the stack has a breaker.
    pub breaker: Option<BreakerSummary>,
    /// Adaptive or fixed limit statistics, where the stack has a limiter.
    pub limit: Option<LimitSummary>,
    /// Caller resources.
    pub resources: ResourceSummary,
    /// Dependency calls per user request that called it (retry amplification).
    pub amplification: f64,
    /// Total business cost (substitutions, refunds, lost orders).
    pub business_cost: f64,
    /// Outcomes per gateway instance (requests after warm-up).
    pub per_instance: Vec<Outcomes>,
    /// Events the engine processed.
    pub events: u64,
    /// Requests still in flight at the horizon (not in any outcome).
    pub in_flight_at_end: u64,
}

/// Outcome counts.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct Outcomes {
    /// 200 from the dependency.
    pub ok: u64,
    /// 503: dependency or pool error.
    pub error: u64,
    /// 504: per-attempt timeout.
    pub timeout: u64,
    /// 429: limiter or worker slots full.
    pub rejected: u64,
    /// Breaker open, no dependency call.
    pub short_circuited: u64,
    /// Answered from the cache.
    pub fallback: u64,
}

impl Outcomes {
    /// Sum of all outcomes.
    pub fn total(&self) -> u64 {
        self.ok + self.error + self.timeout + self.rejected + self.short_circuited + self.fallback
    }
}

/// Latency statistics in milliseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct LatencyMs {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// Staleness of served fallbacks in milliseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct StalenessMs {
    /// Median age.
    pub p50: f64,
    /// 95th percentile age.
    pub p95: f64,
    /// Oldest.
    pub max: f64,
}

/// One class in one run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassSummary {
    /// Class name.
    pub class: String,
    /// Requests that arrived after warm-up and finished.
    pub requests: u64,
    /// Outcome counts.
    pub outcomes: Outcomes,
    /// End-to-end latency at the gateway.
    pub latency_ms: LatencyMs,
    /// Finished requests per second.
    pub throughput_per_s: f64,
    /// Requests answered (ok or fallback) within the deadline, per second.
    pub goodput_per_s: f64,
    /// Fresh answers (ok) within the deadline, per second.
    pub fresh_goodput_per_s: f64,
    /// Responses after the deadline.
    pub deadline_missed: u64,
    /// ok / requests.
    pub ok_ratio: f64,
    /// fallback / requests.
    pub fallback_ratio: f64,
    /// Answered within the deadline / requests.
    pub goodput_ratio: f64,
    /// Age of served fallback values.
    pub staleness_ms: StalenessMs,
    /// Fallbacks whose item had changed since it was cached.
    pub stale_wrong: u64,
    /// stale_wrong / fallback.
    pub stale_wrong_fraction: f64,
    /// Requests that became orders.
    pub orders: u64,
    /// Orders built on a wrong value and substituted.
    pub substitutions: u64,
    /// Orders built on a wrong value and refunded.
    pub refunds: u64,
    /// Orders lost to a failed or late answer.
    pub lost_orders: u64,
    /// This class's business cost (with its fallback answers' cost per use).
    pub business_cost: f64,
    /// Answers of a default-answer or last-answer fallback; absent for a catalogue fallback
    /// (and a class without a fallback), so older summaries keep their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_answers: Option<FallbackAnswers>,
    /// Mean wait for a worker slot.
    pub slot_wait_ms_mean: f64,
    /// Mean wait for a pool connection (per attempt that needed one).
    pub conn_wait_ms_mean: f64,
}

/// A class's fallback answers without a catalogue (all are also counted in `outcomes.fallback`).
/// A class has one kind of fallback answer, so at most one count is non-zero.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct FallbackAnswers {
    /// Default successes (fail open).
    pub open: u64,
    /// Definite refusals (fail closed).
    pub closed: u64,
    /// The class's last answer served again (its age is in `staleness_ms`).
    pub cached: u64,
    /// Their cost: uses times the fallback's `cost_per_use` (part of `business_cost`).
    pub cost: f64,
}

/// The dependency's view of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DependencySummary {
    /// Calls started (including retries and abandoned calls).
    pub calls: u64,
    /// Calls per second.
    pub calls_per_s: f64,
    /// Most calls in flight at once (fleet-wide).
    pub peak_in_flight: u64,
    /// Latency the dependency produced (service start to answer), ms.
    pub latency_ms: LatencyMs,
    /// Coefficient of variation of the call counts of the full windows after warm-up (a short
    /// last window is left out): the oscillation of the load.
    pub throughput_cv: f64,
    /// Calls the caller had abandoned (timed out) before the answer came.
    pub abandoned: u64,
    /// Of the abandoned calls, those the dependency stopped because the cancel arrived before
    /// the answer (`cancellation: Propagate`); they produced no latency. Absent when zero.
    #[serde(default, skip_serializing_if = "no_calls")]
    pub cancelled: u64,
    /// Time-weighted mean of the calls in the dependency (waiting or in service), fleet-wide.
    /// With `calls_per_s` it gives the mean time a call spends there (Little's law).
    #[serde(default)]
    pub mean_in_flight: f64,
    /// `found_in_flight[k]`: calls started after warm-up that found `k` other calls already in
    /// the dependency; the last entry counts `FOUND_BUCKETS - 1` or more. With a finite
    /// capacity of `c` servers, the calls that had to wait are those that found `c` or more.
    #[serde(default)]
    pub found_in_flight: Vec<u64>,
}

/// A count of zero is left out of the JSON, so summaries without the feature keep their bytes.
fn no_calls(n: &u64) -> bool {
    *n == 0
}

/// Number of entries in [`DependencySummary::found_in_flight`] (the last is open-ended).
pub const FOUND_BUCKETS: usize = 64;

/// Breaker statistics across all instances.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct BreakerSummary {
    /// State changes (summed over instances).
    pub transitions: u64,
    /// Transitions per minute of measured time.
    pub transitions_per_min: f64,
    /// Fraction of instance-time spent open.
    pub open_fraction: f64,
    /// Fraction of instance-time spent half-open.
    pub half_open_fraction: f64,
    /// Open -> closed -> open cycles (re-trips after a recovery).
    pub cycles: u64,
}

/// Limit statistics (mean over instances and time).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LimitSummary {
    /// Time-weighted mean limit.
    pub mean: f64,
    /// Lowest limit seen.
    pub min: f64,
    /// Highest limit seen.
    pub max: f64,
}

/// Occupancy of one resource kind.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Occupancy {
    /// Capacity per instance.
    pub capacity: u64,
    /// Time-weighted mean in use per instance.
    pub mean: f64,
    /// Highest in use on any instance.
    pub peak: u64,
    /// Fraction of instance-time with every unit in use.
    pub saturated_fraction: f64,
}

/// Caller resources.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ResourceSummary {
    /// Worker slots.
    pub workers: Occupancy,
    /// Pool connections.
    pub pool: Occupancy,
}
