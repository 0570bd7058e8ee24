//! Per-dependency figures of a run with a service graph (`dependencies:` or call plans):
//! each dependency's calls, attempts and latency, and each class's causes keyed by the
//! dependency that made its requests fail or miss their deadline. A run without a graph has
//! neither, and its summary keeps its bytes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Causes, LatencyMs, nan_if_null};

/// One dependency's view of a run with a service graph: the summed `dependency` block, split
/// by the dependency called.
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
pub struct DependencyFigures {
    /// The dependency's name, as in the scenario's `dependencies`.
    pub name: String,
    /// Calls of requests that arrived after warm-up that sent it at least one attempt: a call
    /// of a plan, or the one call of a class without a plan (cancelled calls included).
    pub calls: u64,
    /// Attempts sent to it (every retry and hedge, abandoned ones included), counted as
    /// `dependency.calls` counts them: over the dependencies they sum to it.
    pub attempts: u64,
    /// Attempts per call, over the `calls` (retry and hedge amplification at this edge); no
    /// value without calls.
    #[serde(deserialize_with = "nan_if_null")]
    pub amplification: f64,
    /// Time its served attempts waited for a server (zero without a finite `capacity`), ms.
    pub queue_wait_ms: LatencyMs,
    /// Service time of its served attempts (without the queue wait or the hop), ms.
    pub service_ms: LatencyMs,
    /// Queue wait plus service time per served attempt, ms.
    pub total_ms: LatencyMs,
    /// Most attempts in flight at it at once (fleet-wide), counting those out when the span
    /// starts.
    pub peak_in_flight: u64,
    /// Time-weighted mean of its attempts in flight (sent and not yet answered), fleet-wide.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean_in_flight: f64,
    /// Attempts the caller had abandoned before the answer came (cancelled ones included).
    pub abandoned: u64,
    /// Fraction of instance-time the connection pool its calls take from had every
    /// connection out: its own pool (`fleet.pools`), or the fleet's `pool`, shared with the
    /// other dependencies that have none of their own (then the same figure for each).
    #[serde(default = "super::no_value", deserialize_with = "nan_if_null")]
    pub pool_saturated_fraction: f64,
    /// Mean time its attempts waited for a pool connection, granted or given up at the
    /// acquire timeout (an attempt that found one free waited 0), ms; no value without an
    /// attempt.
    #[serde(default = "super::no_value", deserialize_with = "nan_if_null")]
    pub pool_wait_ms_mean: f64,
    /// Fraction of instance-time the breakers scoped to it (layers whose `dependencies` name
    /// it) were open, over those breakers; no value when no breaker is scoped to it.
    #[serde(default = "super::no_value", deserialize_with = "nan_if_null")]
    pub breaker_open_fraction: f64,
    /// The policy kinds of the policy set's layers scoped to it (whose `dependencies` name
    /// it), outermost first: the protection of its edges in the graph drawing. Left out when
    /// none is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<String>,
}

/// The causes of one class's requests that one dependency (or none) is to blame for.
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
pub struct DependencyCauses {
    /// The dependency whose call failed the request (its error, timeout, or a layer's refusal
    /// of the call) or, for a late answer, whose call ended the last step (the critical
    /// path); `null` for the causes of no call: no worker slot, a restart, a request still in
    /// flight at the horizon.
    pub dependency: Option<String>,
    /// The causes, as the class's `causes` counts them: over the list they sum to it.
    pub causes: Causes,
}

/// One call of a class's plan (issue 33): how its calls ended and how much of the class's
/// time it held the critical path.
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
pub struct CallFigures {
    /// Its step's number in the plan, from 0.
    pub step: u32,
    /// The dependency it calls.
    pub dependency: String,
    /// Its failure degrades the answer instead of failing it.
    pub optional: bool,
    /// How its calls (of requests measured) ended; the outcome a layer or the dependency gave
    /// the call, never a fallback (a failed optional call's fallback is the request's).
    pub outcomes: super::Outcomes,
    /// Its calls cancelled before their end: their step was decided without them (the losers
    /// of `First`, the others of a failed `All`) or their request ended.
    pub cancelled: u64,
    /// Time this call held the critical path, summed over the class's requests: each step's
    /// duration (its start to the call that decided it) counts for the call that decided
    /// it, ms.
    pub critical_ms: f64,
    /// `critical_ms` over the summed latency of the class's finished requests: the share of
    /// the request's time spent on this call on the critical path (the rest is the gateway's
    /// own: worker slot wait, local work, fallback costs, response overhead). No value without
    /// a finished request.
    #[serde(deserialize_with = "nan_if_null")]
    pub critical_share: f64,
}
