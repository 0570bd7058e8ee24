//! The traffic: request classes and their arrivals, the catalogue of items, business costs.

use serde::{Deserialize, Serialize};

use super::*;

/// A request class.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Class {
    /// Name, unique.
    pub name: String,
    /// How requests arrive (across the whole fleet).
    pub arrivals: Arrivals,
    /// The caller's budget (> 0): a response after it is worthless.
    pub deadline: Dur,
    /// Whether requests of this class call the dependency.
    #[serde(default = "yes")]
    pub calls_dependency: bool,
    /// Local work per request (for classes that do not call the dependency, or before calling).
    #[serde(default)]
    pub work: Option<Latency>,
    /// The call plan: steps run in order, each a call or a parallel group (default: one
    /// call to the one dependency). With `dependencies`, a class that calls must give it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<Step>,
    /// When a refused or failed call may be answered by the fallback instead.
    #[serde(default)]
    pub fallback: Fallback,
    /// What the fallback answers with (default: the catalogue's last-known value).
    #[serde(default, skip_serializing_if = "crate::scenario::FallbackAnswer::is_catalogue")]
    #[schemars(!skip_serializing_if)]
    pub fallback_answer: crate::scenario::FallbackAnswer,
    /// Fraction of this class's answers that turn into an order (business model), in [0, 1].
    #[serde(default)]
    pub order_fraction: f64,
    /// Priority for priority-ordered queues (higher first; 0 = lowest).
    #[serde(default)]
    pub priority: u32,
    /// Users reloading slow or failed pages (feedback from latency to offered load).
    #[serde(default)]
    pub reload: Option<Reload>,
    /// A service-level objective on in-time success (`slo: (target: 0.999, window: "30d")`):
    /// the summary gives its burn rate and error budget used (docs/slo.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
}

fn yes() -> bool {
    true
}

/// When the cache may answer instead of the dependency.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema)]
pub enum Fallback {
    /// Never: refusals and failures reach the user.
    #[default]
    None,
    /// When a policy refuses the call and its refusal allows a fallback: an open breaker,
    /// a limiter with `refuse_as: Fallback`, a bulkhead class with `FallbackNow`. A refusal
    /// as 429 (`refuse_as: Rejected`, `on_full: Reject`, an expired wait) stays a 429, so
    /// `check` refuses `OnRefusal` on a class that no layer can refuse into its fallback.
    OnRefusal,
    /// On refusal and on a failed call (error or timeout).
    OnRefusalOrFailure,
}

/// Arrival processes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum Arrivals {
    /// Poisson arrivals at a constant rate.
    Poisson {
        /// Requests per second across the fleet (>= 0).
        rate_per_s: f64,
    },
    /// Poisson arrivals with a piecewise-linear rate profile (held constant after the last point).
    PoissonProfile {
        /// (time, requests per second >= 0) points, times increasing.
        points: Vec<(Dur, f64)>,
    },
    /// Closed loop: `users` users, each sending one request and thinking after its response.
    ClosedLoop {
        /// Number of users (>= 1).
        users: u32,
        /// Mean think time (exponential).
        think: Dur,
    },
    /// Requests at scripted times (R02 sends single requests and bursts).
    Scripted {
        /// Request times; several equal times make a burst.
        times: Vec<Dur>,
    },
    /// Poisson arrivals with a daily cycle:
    /// `rate(t) = mean * (1 + amplitude * cos(2 pi (t - peak_at) / period))`.
    Diurnal {
        /// Mean rate, requests per second (>= 0).
        mean_rate_per_s: f64,
        /// Relative swing in [0, 1].
        amplitude: f64,
        /// Cycle length (> 0; a day by default).
        #[serde(default = "day")]
        period: Dur,
        /// Time of the peak within the cycle.
        #[serde(default)]
        peak_at: Dur,
    },
    /// Poisson arrivals with a flash-sale burst: `base` outside, `base * multiplier` inside.
    Burst {
        /// Rate outside the burst, requests per second (>= 0).
        base_rate_per_s: f64,
        /// Burst start.
        at: Dur,
        /// Burst length.
        duration: Dur,
        /// Rate multiplier during the burst (>= 0).
        multiplier: f64,
    },
    /// Deterministic arrivals, evenly spaced: the k-th (from 0) at `phase + k / rate_per_s`,
    /// rounded down to the nanosecond from the exact quotient (the rate read as the decimal it
    /// is written as), so the spacing never drifts: 3/s arrives at exactly 1 s, 2 s, ... and
    /// [phase, T] holds floor((T - phase) x rate_per_s) + 1 arrivals.
    Periodic {
        /// Requests per second across the fleet (> 0, at most 1e9: one per nanosecond).
        rate_per_s: f64,
        /// Time of the first arrival (default 0).
        #[serde(default)]
        phase: Dur,
    },
    /// Replay a request-rate time series from a CSV file (columns `t_s`, `rate_per_s`),
    /// piecewise linear, as Poisson arrivals.
    Csv {
        /// Path relative to the scenario file.
        file: String,
    },
}

fn day() -> Dur {
    Dur::secs(86_400)
}

/// Users who retry on their own: a user whose answer failed or took longer than `patience`
/// sends the same request again after `delay`, with probability `probability`. The budget
/// counts reloads at their most (every answer bad) against `limits.max_events` and, waiting
/// out their delay, against `limits.max_memory`; a waiting user counts against
/// `limits.max_in_flight` as a request does.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reload {
    /// Answers slower than this make users reload (> 0).
    pub patience: Dur,
    /// Probability that an impatient or failed user reloads, in [0, 1].
    pub probability: f64,
    /// Time before the reload.
    #[serde(default)]
    pub delay: Dur,
    /// Most reloads of one original request.
    #[serde(default = "three")]
    pub max_reloads: u32,
}

fn three() -> u32 {
    3
}

/// Items, their popularity and stock changes, and the last-known-value cache.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    /// Number of items (>= 1).
    pub items: u32,
    /// Zipf exponent of item popularity (>= 0; 0 = uniform).
    #[serde(default = "zipf_default")]
    pub zipf: f64,
    /// Each item's stock changes as a Poisson process at this rate per hour (>= 0).
    pub changes_per_hour: f64,
    /// Cache entries older than this are not served (None = no TTL).
    #[serde(default)]
    pub ttl: Option<Dur>,
    /// Cache scope: per gateway instance (default) or shared by the fleet.
    #[serde(default)]
    pub shared_cache: bool,
    /// Cache filled before the run (as of time zero) so fallbacks work from the start.
    #[serde(default = "yes")]
    pub prewarm: bool,
}

fn zipf_default() -> f64 {
    1.0
}

/// Costs of the business consequences.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Business {
    /// Probability in [0, 1] that an order built on a wrong stock value is substituted (else
    /// refunded).
    pub substitution_allowance: f64,
    /// The same while degraded (a policy reports degraded), in [0, 1]: the seed's point 4.
    pub degraded_substitution_allowance: f64,
    /// Cost of one substitution (>= 0, in your currency).
    pub substitution_cost: f64,
    /// Cost of one refund (>= 0).
    pub refund_cost: f64,
    /// Cost of an order lost because its request failed or missed its deadline (>= 0).
    pub lost_order_cost: f64,
}
