//! The serializable results of a run: what `summary.json` and `summary.csv` hold.

use serde::{Deserialize, Deserializer, Serialize};

/// A figure over no sample (a latency of no answer, a ratio over no request) is `f64::NAN`,
/// which JSON writes as `null`: read `null` back as NaN, so a summary survives its round trip.
fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
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

/// Every policy set run on the same seeds (common random numbers), with 95 % Student-t
/// intervals of each catalogue metric and paired comparisons (`brownout run --replications`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Replications {
    /// Replications per policy set (at least 2).
    pub count: u32,
    /// Each replication's seed; replication 0 is the root seed, whose figures `runs` holds.
    pub seeds: Vec<u64>,
    /// Per policy set, in scenario order.
    pub runs: Vec<ReplicatedRun>,
    /// One per metric with a direction (per class for a class metric): which set is best and
    /// whether the replications support it.
    pub comparisons: Vec<Comparison>,
    /// The rule every comparison followed, in words (`stats::RULE`; each comparison has its
    /// margin).
    #[serde(default)]
    pub rule: String,
}

/// One policy set's metrics over the replications.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplicatedRun {
    /// Policy set label.
    pub policy: String,
    /// Every catalogue metric the runs have (per class metrics once per class).
    pub metrics: Vec<MetricInterval>,
}

/// A metric's mean over the replications and its 95 % Student-t interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetricInterval {
    /// Catalogue name (`metrics::catalog`).
    pub metric: String,
    /// The class of a per-class metric; absent for a per-run metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Mean over the replications.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// 95 % confidence interval of the mean, `[lo, hi]`.
    #[serde(deserialize_with = "nan_pair_if_null")]
    pub ci95: [f64; 2],
    /// Each replication's value, in the order of [`Replications::seeds`] (`null` where the
    /// figure has no value in that replication), so two folders run on the same seeds can be
    /// compared seed by seed (`brownout diff`). Empty in summaries written before it existed.
    #[serde(default, deserialize_with = "nan_vec_if_null")]
    pub values: Vec<f64>,
}

/// The best policy set on one metric and its paired differences to every other set.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    /// Catalogue name.
    pub metric: String,
    /// The class of a per-class metric; absent for a per-run metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The set with the best mean in the metric's direction (the first such in scenario order).
    pub best: String,
    /// Every paired difference to `best` has a 95 % interval wholly beyond the margin:
    /// `best` is better than every other set. Otherwise the sets whose interval reaches
    /// inside the margin tie with it.
    pub significant: bool,
    /// The practical-equivalence margin the differences were judged against, in the metric's
    /// unit (the catalogue's, or the scenario's `statistics.margins`).
    #[serde(default, deserialize_with = "nan_if_null")]
    pub margin: f64,
    /// Why the metric is not ranked at all (no best, no star, no tie), e.g. `"not comparable:
    /// answered 1,200 vs 35"` for a latency of answers between sets that answered different
    /// numbers of requests; absent when ranked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unranked: Option<String>,
    /// `best` minus each other set, paired by seed, in scenario order.
    pub versus: Vec<PairedDifference>,
}

/// The mean of `best - policy` over the replications, seed by seed, and its 95 % interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairedDifference {
    /// The other policy set.
    pub policy: String,
    /// Mean difference.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// 95 % confidence interval of the mean difference, `[lo, hi]`.
    #[serde(deserialize_with = "nan_pair_if_null")]
    pub ci95: [f64; 2],
    /// Degrees of freedom of the interval (pairs used minus one); absent under two pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df: Option<usize>,
    /// The interval lies wholly beyond the comparison's margin on one side: the two differ.
    /// (Called `excludes_zero` before margins; read under that name from older files.)
    #[serde(alias = "excludes_zero")]
    pub differs: bool,
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
}

/// Older summaries lack the class facts: show everything, as they did.
fn yes() -> bool {
    true
}

/// One policy set's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The queues of the stack's concurrency limiters (fixed or adaptive), where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limiter_queue: Option<QueueSummary>,
    /// The queues of the stack's tiered bulkheads, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulkhead_queue: Option<QueueSummary>,
    /// Caller resources.
    pub resources: ResourceSummary,
    /// Dependency calls per user request that called it (retry amplification); NaN (`null`)
    /// when no finished request called it.
    #[serde(deserialize_with = "nan_if_null")]
    pub amplification: f64,
    /// Total business cost (substitutions, refunds, lost orders).
    #[serde(deserialize_with = "nan_if_null")]
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

impl LatencyMs {
    /// The statistics of no sample: every figure NaN, written `null`, shown "–".
    pub const NONE: LatencyMs =
        LatencyMs { mean: f64::NAN, p50: f64::NAN, p95: f64::NAN, p99: f64::NAN, max: f64::NAN };
}

impl Outcomes {
    /// Sum of all outcomes.
    pub fn total(&self) -> u64 {
        self.ok + self.error + self.timeout + self.rejected + self.short_circuited + self.fallback
    }
}

/// Latency statistics in milliseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default)]
pub struct LatencyMs {
    /// Mean.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// Median.
    #[serde(deserialize_with = "nan_if_null")]
    pub p50: f64,
    /// 95th percentile.
    #[serde(deserialize_with = "nan_if_null")]
    pub p95: f64,
    /// 99th percentile.
    #[serde(deserialize_with = "nan_if_null")]
    pub p99: f64,
    /// Maximum.
    #[serde(deserialize_with = "nan_if_null")]
    pub max: f64,
}

/// Staleness of served fallbacks in milliseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default)]
pub struct StalenessMs {
    /// Median age.
    #[serde(deserialize_with = "nan_if_null")]
    pub p50: f64,
    /// 95th percentile age.
    #[serde(deserialize_with = "nan_if_null")]
    pub p95: f64,
    /// Oldest.
    #[serde(deserialize_with = "nan_if_null")]
    pub max: f64,
}

/// One class in one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassSummary {
    /// Class name.
    pub class: String,
    /// Requests that arrived after warm-up and were judged: those that finished, and those
    /// still in flight at the horizon whose deadline had passed (cause `unfinished`). Those
    /// still within their deadline at the horizon are `in_flight_within_deadline` instead.
    pub requests: u64,
    /// Outcome counts.
    pub outcomes: Outcomes,
    /// End-to-end latency at the gateway of every finished request: it mixes immediate
    /// refusals with answers (see `latency_answered_ms` and `latency_failed_ms`).
    pub latency_ms: LatencyMs,
    /// Finished requests per second.
    #[serde(deserialize_with = "nan_if_null")]
    pub throughput_per_s: f64,
    /// Requests answered (ok or fallback) within the deadline, per second.
    #[serde(deserialize_with = "nan_if_null")]
    pub goodput_per_s: f64,
    /// Fresh answers (ok) within the deadline, per second.
    #[serde(deserialize_with = "nan_if_null")]
    pub fresh_goodput_per_s: f64,
    /// Requests of any outcome (answers and failures) that finished after the deadline.
    pub deadline_missed: u64,
    /// ok / requests.
    #[serde(deserialize_with = "nan_if_null")]
    pub ok_ratio: f64,
    /// fallback / requests.
    #[serde(deserialize_with = "nan_if_null")]
    pub fallback_ratio: f64,
    /// Answered within the deadline / requests.
    #[serde(deserialize_with = "nan_if_null")]
    pub goodput_ratio: f64,
    /// Age of served fallback values.
    pub staleness_ms: StalenessMs,
    /// Fallbacks whose item had changed since it was cached.
    pub stale_wrong: u64,
    /// stale_wrong / fallback.
    #[serde(deserialize_with = "nan_if_null")]
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
    #[serde(deserialize_with = "nan_if_null")]
    pub business_cost: f64,
    /// Answers of a default-answer or last-answer fallback; absent for a catalogue fallback
    /// (and a class without a fallback), so older summaries keep their bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_answers: Option<FallbackAnswers>,
    /// Mean wait for a worker slot.
    #[serde(deserialize_with = "nan_if_null")]
    pub slot_wait_ms_mean: f64,
    /// Mean wait for a pool connection (per attempt that needed one).
    #[serde(deserialize_with = "nan_if_null")]
    pub conn_wait_ms_mean: f64,
    /// Requests answered correctly within the class deadline: an `ok`, or a fallback answer
    /// that is neither a fail-closed refusal nor stale-wrong, with a latency at most the
    /// deadline. The headline success measure.
    #[serde(default)]
    pub in_time: u64,
    /// in_time / requests; NaN (`null`, shown "–") over zero requests.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    pub in_time_ratio: f64,
    /// Answers (ok or fallback, not fail-closed refusals) after the deadline. Unlike
    /// `deadline_missed` it leaves out failures that came late.
    #[serde(default)]
    pub late: u64,
    /// Why each request that is not in time is not: exactly one cause each, so the causes sum
    /// to requests minus in_time.
    #[serde(default)]
    pub causes: Causes,
    /// Latency of the in-time requests.
    #[serde(default)]
    pub latency_in_time_ms: LatencyMs,
    /// Latency of all answers (ok or fallback, not fail-closed refusals), in time or late.
    #[serde(default)]
    pub latency_answered_ms: LatencyMs,
    /// Latency of the failures (errors, timeouts, refusals, fail-closed refusals): every
    /// request that is not an answer.
    #[serde(default)]
    pub latency_failed_ms: LatencyMs,
    /// Requests that arrived after warm-up and were still in flight at the horizon within
    /// their deadline: they could still be in time, so they are judged neither way and are
    /// not counted in `requests` (nor in any outcome, latency or cause).
    #[serde(default)]
    pub in_flight_within_deadline: u64,
}

/// Why requests were not in time, per cause: each such request has exactly one.
///
/// A failed request counts under what ended its last attempt (a retry budget that stopped a
/// retry leaves the last attempt's cause). A fallback answer in time that was stale-wrong
/// counts as `wrong_answer`; any answer after the deadline as `late`; a fail-closed refusal
/// under the failure it answered.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct Causes {
    /// The dependency answered with an error (or a partition cut the call, or its queue was full).
    pub dependency_error: u64,
    /// The per-attempt timeout fired while the call was out.
    pub attempt_timeout: u64,
    /// No pool connection within the acquire timeout (or the attempt timeout, if sooner).
    pub pool_acquire_timeout: u64,
    /// No worker slot: the slot queue was full or the slot wait ran out.
    pub worker_slots_full: u64,
    /// A concurrency limiter (fixed or adaptive) refused the attempt or its queue wait ran out.
    pub limiter_refused: u64,
    /// A tiered bulkhead refused the attempt or its queue wait ran out.
    pub bulkhead_refused: u64,
    /// A breaker short-circuited the attempt.
    pub breaker_open: u64,
    /// Shed by deadline: too little of the deadline was left.
    pub shed_by_deadline: u64,
    /// Refused by another layer (a plugin policy).
    pub other_refused: u64,
    /// In flight on an instance that restarted.
    pub crash_restart: u64,
    /// A fallback answer in time whose cached value had changed (stale-wrong).
    pub wrong_answer: u64,
    /// An answer after the deadline (the same count as `late`).
    pub late: u64,
    /// Still in flight at the horizon, its deadline already passed: whatever happens next, it
    /// is not in time. (One still within its deadline is not judged: see
    /// `ClassSummary::in_flight_within_deadline`.)
    #[serde(default)]
    pub unfinished: u64,
}

impl Causes {
    /// Sum over all causes: requests minus in_time.
    pub fn total(&self) -> u64 {
        self.dependency_error
            + self.attempt_timeout
            + self.pool_acquire_timeout
            + self.worker_slots_full
            + self.limiter_refused
            + self.bulkhead_refused
            + self.breaker_open
            + self.shed_by_deadline
            + self.other_refused
            + self.crash_restart
            + self.wrong_answer
            + self.late
            + self.unfinished
    }
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
    #[serde(deserialize_with = "nan_if_null")]
    pub cost: f64,
}

/// The dependency's view of a run.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct DependencySummary {
    /// Calls started (including retries and abandoned calls).
    pub calls: u64,
    /// Calls per second.
    #[serde(deserialize_with = "nan_if_null")]
    pub calls_per_s: f64,
    /// Most calls in flight at once (fleet-wide).
    pub peak_in_flight: u64,
    /// Service time of the calls the dependency served (service start to answer, without
    /// the queue wait or the network hop), ms.
    pub latency_ms: LatencyMs,
    /// Time those calls waited in the dependency's queue for a server (zero without a
    /// finite `capacity`), ms.
    #[serde(default)]
    pub queue_wait_ms: LatencyMs,
    /// Time those calls spent at the dependency: queue wait plus service time, per call, ms.
    #[serde(default)]
    pub time_ms: LatencyMs,
    /// Coefficient of variation of the call counts of the full windows after warm-up (a short
    /// last window is left out): the oscillation of the load; no value with fewer than two
    /// such windows or no calls.
    #[serde(deserialize_with = "nan_if_null")]
    pub throughput_cv: f64,
    /// Calls the caller had abandoned (timed out) before the answer came.
    pub abandoned: u64,
    /// Of the abandoned calls, those the dependency stopped because the cancel arrived before
    /// the answer (`cancellation: Propagate`); they produced no latency. Absent when zero.
    #[serde(default, skip_serializing_if = "no_calls")]
    pub cancelled: u64,
    /// Time-weighted mean of the calls out (sent and not yet answered: waiting, in service or
    /// on the network), fleet-wide. With `calls_per_s` it gives the mean time from sending a
    /// call to its answer, `time_ms` plus the hop (Little's law).
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
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
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct BreakerSummary {
    /// State changes (summed over instances).
    pub transitions: u64,
    /// Transitions per minute of measured time.
    #[serde(deserialize_with = "nan_if_null")]
    pub transitions_per_min: f64,
    /// Fraction of instance-time spent open.
    #[serde(deserialize_with = "nan_if_null")]
    pub open_fraction: f64,
    /// Fraction of instance-time spent half-open.
    #[serde(deserialize_with = "nan_if_null")]
    pub half_open_fraction: f64,
    /// Open -> closed -> open cycles (re-trips after a recovery).
    pub cycles: u64,
}

/// Limit statistics (mean over instances and time).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct LimitSummary {
    /// Time-weighted mean limit.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// Lowest limit held over the span, counting the limit already set when it starts.
    #[serde(deserialize_with = "nan_if_null")]
    pub min: f64,
    /// Highest limit held over the span, counting the limit already set when it starts.
    #[serde(deserialize_with = "nan_if_null")]
    pub max: f64,
}

/// Occupancy of one resource kind.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Occupancy {
    /// Capacity per instance.
    pub capacity: u64,
    /// Time-weighted mean in use per instance.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// Highest in use on any instance over the span, counting the level already held when the
    /// span (after warm-up, or the phase) starts.
    pub peak: u64,
    /// Fraction of instance-time with every unit in use.
    #[serde(deserialize_with = "nan_if_null")]
    pub saturated_fraction: f64,
}

/// Caller resources.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct ResourceSummary {
    /// Worker slots.
    pub workers: Occupancy,
    /// Pool connections.
    pub pool: Occupancy,
    /// Time-weighted mean of the attempts waiting for a pool connection, per instance.
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    pub pool_waiting_mean: f64,
    /// Mean time a connection is held per use, ms: connection-time in use after warm-up over
    /// the connections taken after warm-up (Little's law).
    #[serde(default)]
    #[serde(deserialize_with = "nan_if_null")]
    pub pool_hold_ms_mean: f64,
}

/// Waiting in the queues of one kind of admission layer (summed over its layers and
/// instances), attempts admitted after warm-up.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct QueueSummary {
    /// Attempts that reached a layer of this kind.
    pub offered: u64,
    /// Attempts that waited in its queue.
    pub queued: u64,
    /// queued / offered: the probability of waiting.
    #[serde(deserialize_with = "nan_if_null")]
    pub wait_probability: f64,
    /// Mean wait of the attempts that queued and whose wait ended (admitted, refused, timed
    /// out or evicted), ms.
    #[serde(deserialize_with = "nan_if_null")]
    pub wait_ms_mean: f64,
    /// 95th percentile of the same waits, ms.
    #[serde(deserialize_with = "nan_if_null")]
    pub wait_ms_p95: f64,
}
