//! One class's figures in one run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::nan_if_null;

/// Outcome counts.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
pub struct Outcomes {
    /// 200 from the dependency.
    pub ok: u64,
    /// 503: dependency or pool error, or a refusal as 503 (a limiter's `refuse_as: Unavailable`).
    pub error: u64,
    /// 504: per-attempt timeout.
    pub timeout: u64,
    /// 429: limiter or worker slots full.
    pub rejected: u64,
    /// Breaker open, no dependency call.
    pub short_circuited: u64,
    /// Answered by a fallback: the catalogue's cached value, a default answer (fail open or
    /// fail closed) or the class's last answer (`fallback_answers` tells the last three apart).
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
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, JsonSchema)]
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
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
    /// `causes` split by the dependency to blame, in the scenario's order (the causes of no
    /// call last, under `null`), entries with no cause left out: present only in a run with a
    /// service graph (`dependencies:` or call plans).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes_by_dependency: Vec<super::DependencyCauses>,
    /// Per call of the class's plan, in the order written (steps in order, a group's calls in
    /// order): present only for a class with a plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<super::CallFigures>,
    /// Latency of the in-time requests.
    #[serde(default)]
    pub latency_in_time_ms: LatencyMs,
    /// Latency of all answers (ok or fallback, not fail-closed refusals), in time or late.
    #[serde(default)]
    pub latency_answered_ms: LatencyMs,
    /// 99.9th percentile of the latency of all answers (`latency_answered_ms`), nearest rank
    /// as the HDR histogram gives it. No value without an answer, nor in summaries written
    /// before it.
    #[serde(default = "super::no_value", deserialize_with = "nan_if_null")]
    pub latency_answered_p999_ms: f64,
    /// Latency of the failures (errors, timeouts, refusals, fail-closed refusals): every
    /// request that is not an answer.
    #[serde(default)]
    pub latency_failed_ms: LatencyMs,
    /// Requests that arrived after warm-up and were still in flight at the horizon within
    /// their deadline: they could still be in time, so they are judged neither way and are
    /// not counted in `requests` (nor in any outcome, latency or cause).
    #[serde(default)]
    pub in_flight_within_deadline: u64,
    /// The class's SLO figures over this run or phase; absent for a class without an `slo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloFigures>,
    /// Share of the class's judged windows (those with arrivals, after the warm-up, known by
    /// the horizon; in a phase, those starting in it) whose in-time ratio was below the
    /// scenario's `recovery.degraded_below`; no value without a judged window, nor in
    /// summaries written before it.
    #[serde(default = "super::no_value", deserialize_with = "nan_if_null")]
    pub degraded_fraction: f64,
    /// Entries into the degraded state: judged windows below `recovery.degraded_below` whose
    /// judged window before was not (the run's first judged window counts when degraded); a
    /// class that flips between healthy and degraded has many.
    #[serde(default)]
    pub degraded_entries: u64,
    /// Recovery after the phase ends: only in a phase's figures (absent in the whole run's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoverySummary>,
}

/// How fast a class spent its SLO's error budget over a run or a phase (docs/slo.md). With
/// `n` requests, `in_time` of them in time, target `t`, the period's measured span `T` and the
/// SLO's window `W`: bad = n - in_time.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, JsonSchema)]
pub struct SloFigures {
    /// Burn rate: the bad ratio over the budgeted one, `(bad / n) / (1 - t)`; 1 spends the
    /// budget exactly over the window. No value (`null`) without requests.
    #[serde(deserialize_with = "nan_if_null")]
    pub burn_rate: f64,
    /// Share of the window's error budget the period consumed, the window's requests taken at
    /// the period's rate: `bad / ((1 - t) * n * W / T)` = `burn_rate * T / W` (1 = all of
    /// it; it can exceed 1). No value (`null`) without requests.
    #[serde(deserialize_with = "nan_if_null")]
    pub budget_used: f64,
}

/// Whether and how fast a class's per-window in-time ratio came back after a phase ended
/// (settings in the scenario's `recovery`; see docs/metastable.md).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, JsonSchema)]
pub struct RecoverySummary {
    /// In-time ratio over the requests that arrived in the `recovery.baseline` windows before
    /// the phase (after the warm-up); no value when no such window had arrivals.
    #[serde(deserialize_with = "nan_if_null")]
    pub before_in_time_ratio: f64,
    /// `true` once `recovery.hold` consecutive judged windows after the phase's end had an
    /// in-time ratio within `recovery.tolerance` below the level before (or above it);
    /// `false` when that had not happened by the last window known at the horizon; `null`
    /// without a level before the phase or a judged window after it.
    pub recovered: Option<bool>,
    /// Seconds from the phase's end to the start of the first of those windows; no value
    /// unless recovered.
    #[serde(deserialize_with = "nan_if_null")]
    pub recovery_s: f64,
    /// In-time ratio over the last `recovery.hold` judged windows of the run (the level at
    /// the horizon); no value without a judged window after the phase.
    #[serde(deserialize_with = "nan_if_null")]
    pub end_in_time_ratio: f64,
}

/// Why requests were not in time, per cause: each such request has exactly one.
///
/// A failed request counts under what ended its last attempt (a retry budget that stopped a
/// retry leaves the last attempt's cause). A fallback answer in time that was stale-wrong
/// counts as `wrong_answer`; any answer after the deadline as `late`; a fail-closed refusal
/// under the failure it answered.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
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
    /// No upstream server could take the attempt: a 502 (nginx's "no live upstreams" when
    /// every server is at `max_conns`; a layer with `refuse_as: BadGateway`). Left out of
    /// `summary.json` when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub no_live_upstream: u64,
    /// A new pool connection's set-up ran past its connect timeout (`Pool::connect`; HAProxy
    /// `timeout connect`, a 503, nginx `proxy_connect_timeout`, a 504). Left out of
    /// `summary.json` when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub connect_timeout: u64,
}

/// A count of 0, left out of `summary.json` (a field no shipped result had before).
fn is_zero(n: &u64) -> bool {
    *n == 0
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
            + self.no_live_upstream
            + self.connect_timeout
    }
}

/// A class's fallback answers without a catalogue (all are also counted in `outcomes.fallback`).
/// A class has one kind of fallback answer, so at most one count is non-zero.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default, JsonSchema)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_written_before_answered_p999_reads_it_as_no_value() {
        use crate::metrics::{Recorder, RecorderSetup};
        let second = crate::engine::SECOND;
        let class = Recorder::new(RecorderSetup::one_class(second, second)).summary(second, 0, 0).classes.remove(0);
        let mut json = serde_json::to_value(class).unwrap();
        json.as_object_mut().unwrap().remove("latency_answered_p999_ms").expect("written");
        let back: ClassSummary = serde_json::from_value(json).unwrap();
        assert!(back.latency_answered_p999_ms.is_nan(), "{}", back.latency_answered_p999_ms);
    }
}
