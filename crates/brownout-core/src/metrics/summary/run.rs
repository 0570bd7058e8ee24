//! One policy set's run: its classes, the dependency's view, breaker, limit, queues and
//! resources.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ClassSummary, LatencyMs, Outcomes, nan_if_null};

/// One policy set's run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    /// Policy set label.
    pub policy: String,
    /// Per class.
    pub classes: Vec<ClassSummary>,
    /// The dependency's view.
    pub dependency: DependencySummary,
    /// Per dependency, in the scenario's order: present only in a run with a service graph
    /// (`dependencies:` or call plans); `dependency` sums them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<super::DependencyFigures>,
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
    /// Where the work left at the horizon waits, layer by layer (a phase's figures repeat the
    /// whole run's, as `in_flight_at_end`): "the queue never drained" as a figure.
    #[serde(default)]
    pub backlog_at_end: Backlog,
}

/// The work left at the horizon, read from the world's state after its last event (counts
/// over the fleet; zero in summaries written before it).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq, Eq, JsonSchema)]
pub struct Backlog {
    /// Waiting for a worker slot (holding none).
    pub worker_queue: u64,
    /// Holding a worker slot.
    pub workers_busy: u64,
    /// Parked in a policy layer's wait queue (concurrency limiters, bulkheads), all layers.
    pub layer_queue: u64,
    /// Of those, in the queues of concurrency limiters (fixed or adaptive).
    pub limiter_queue: u64,
    /// Waiting for a pool connection.
    pub pool_queue: u64,
    /// Pool connections in use.
    pub pool_busy: u64,
    /// Waiting out a retry backoff.
    pub backoff: u64,
    /// Calls waiting for a server in the dependency's queue (finite `capacity` only),
    /// abandoned calls the dependency still works through included.
    pub dependency_queue: u64,
    /// Calls at the dependency and not yet answered: queued, in service, or on the way back.
    pub dependency_out: u64,
    /// Requests waiting somewhere: `worker_queue + layer_queue + pool_queue` plus the calls
    /// in `dependency_queue`.
    pub queued: u64,
}

/// The dependency's view of a run.
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
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
    /// The life of the pools' connections, when a pool has a `connect` (left out of
    /// `summary.json` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<ConnectionSummary>,
}

/// Connections opened and their set-up (`Pool::connect`), after warm-up, summed over the
/// instances and pools.
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
pub struct ConnectionSummary {
    /// New connections opened (each paid a set-up; a set-up past the connect timeout
    /// counts, and its time is the timeout).
    pub opened: u64,
    /// Mean set-up time of a new connection, ms.
    #[serde(deserialize_with = "nan_if_null")]
    pub setup_ms_mean: f64,
    /// The share of the connection-time in use (`resources.pool`'s time integral) spent
    /// setting connections up: 0 when every call reuses an open connection.
    #[serde(deserialize_with = "nan_if_null")]
    pub setup_share: f64,
}

/// Waiting in the queues of one kind of admission layer (summed over its layers and
/// instances), attempts admitted after warm-up.
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
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
