//! The scenario file's serializable types (RON, `deny_unknown_fields`).
//!
//! These are the boundary: they say what the user wrote. `model::build` turns them into
//! runtime state after `validate` has checked them.

use serde::{Deserialize, Serialize};

use super::Dur;
use crate::policy::PolicySpec;

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
    /// Simulated time to run (> 0).
    pub horizon: Dur,
    /// Leading time excluded from summary metrics (shorter than `horizon`).
    #[serde(default)]
    pub warmup: Dur,
    /// Width of a time-series window (> 0; at most 1,000,000 windows per horizon).
    #[serde(default = "default_window")]
    pub window: Dur,
    /// The caller fleet: gateway instances with worker slots and a connection pool.
    pub fleet: Fleet,
    /// Request classes (at least one; names unique).
    pub classes: Vec<Class>,
    /// The dependency the classes call.
    pub dependency: Dependency,
    /// Items, their stock changes and the last-known-value cache.
    #[serde(default)]
    pub catalogue: Option<Catalogue>,
    /// What a wrong value or a failed order costs.
    #[serde(default)]
    pub business: Option<Business>,
    /// The policies to compare (at least one set); each runs on the same traffic.
    pub policies: Vec<PolicySet>,
    /// Assertions checked after the run (`brownout run` exits 1 if one fails).
    #[serde(default)]
    pub expect: Vec<Expectation>,
    /// Guards against runaway scenarios.
    #[serde(default)]
    pub limits: Limits,
}

fn default_seed() -> u64 {
    1
}
fn default_window() -> Dur {
    Dur::secs(1)
}

/// The calling service's fleet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fleet {
    /// Number of gateway instances (>= 1). Arrivals are spread round robin.
    #[serde(default = "one")]
    pub instances: u32,
    /// Worker slots per instance.
    pub workers: Workers,
    /// Connection pool to the dependency, per instance.
    pub pool: Pool,
    /// Gateway processing time added to every response (R02 measured ~5 ms per hop).
    #[serde(default)]
    pub overhead: Dur,
    /// Network partitions cutting instances off from the dependency.
    #[serde(default)]
    pub partitions: Vec<Partition>,
    /// Instance restarts (crashes or a rolling deploy).
    #[serde(default)]
    pub restarts: Vec<Restart>,
}

/// A window during which some gateway instances cannot reach the dependency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    /// When the partition starts.
    pub start: Dur,
    /// When it ends (not before `start`).
    pub end: Dur,
    /// Instance indices cut off (each below `fleet.instances`).
    pub instances: Vec<u32>,
    /// What a call from a cut-off instance does.
    pub mode: PartitionMode,
}

/// How calls across a partition fail.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum PartitionMode {
    /// The call hangs until the connect timeout, then fails.
    Hang {
        /// Connect timeout.
        connect_timeout: Dur,
    },
    /// The call fails at once (connection refused).
    FailFast,
}

/// A restart of some instances at a time: in-flight requests on them fail, and state that
/// is not persistent is lost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Restart {
    /// When the first instance restarts.
    pub at: Dur,
    /// Instances restarted (in this order).
    pub instances: Vec<u32>,
    /// Gap between consecutive instances (0 = all at once; > 0 = a rolling deploy).
    #[serde(default)]
    pub interval: Dur,
    /// Policy state (breaker, limits) survives the restart.
    #[serde(default)]
    pub persistent_policies: bool,
    /// Cache contents survive the restart.
    #[serde(default)]
    pub persistent_cache: bool,
}

fn one() -> u32 {
    1
}

/// Worker slots: at most `slots` requests handled at once per instance.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workers {
    /// Concurrent requests per instance (>= 1).
    pub slots: u32,
    /// Requests that may wait for a slot (0 = reject at once).
    #[serde(default)]
    pub queue: u32,
    /// Longest wait for a slot before rejection (none = as long as it takes; 0 = never wait).
    #[serde(default)]
    pub max_wait: Option<Dur>,
}

/// A connection pool to the dependency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    /// Connections per instance (>= 1).
    pub max_connections: u32,
    /// Longest wait to acquire a connection; after it the attempt fails as an error.
    pub acquire_timeout: Dur,
}

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
    /// Whether a refused or failed call may be answered from the last-known-value cache.
    #[serde(default)]
    pub fallback: Fallback,
    /// Fraction of this class's answers that turn into an order (business model), in [0, 1].
    #[serde(default)]
    pub order_fraction: f64,
    /// Priority for priority-ordered queues (higher first; 0 = lowest).
    #[serde(default)]
    pub priority: u32,
    /// Users reloading slow or failed pages (feedback from latency to offered load).
    #[serde(default)]
    pub reload: Option<Reload>,
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
    /// When a policy refuses the call (limiter full, breaker open, degraded).
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
/// sends the same request again after `delay`, with probability `probability`.
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

/// A latency distribution.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum Latency {
    /// Always the same.
    Constant(Dur),
    /// Exponential with the given mean.
    Exponential {
        /// Mean (> 0).
        mean: Dur,
    },
    /// Log-normal given its median and the sigma of the underlying normal.
    LogNormal {
        /// Median (= exp(mu); > 0).
        median: Dur,
        /// Sigma of ln(latency), in [0, 5].
        sigma: f64,
    },
    /// Resampled from observed latencies in a CSV file (one column, milliseconds).
    Empirical {
        /// Path relative to the scenario file.
        file: String,
        /// Column name holding milliseconds.
        #[serde(default = "latency_col")]
        column: String,
    },
}

fn latency_col() -> String {
    "latency_ms".into()
}

/// The dependency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dependency {
    /// Name for reports.
    #[serde(default = "dep_name")]
    pub name: String,
    /// Base latency of one call (service time).
    pub latency: Latency,
    /// Multiplier on the base latency over time.
    #[serde(default)]
    pub drift: Drift,
    /// Probability that a call fails with an error, over time (values in [0, 1]).
    #[serde(default)]
    pub error_rate: Profile,
    /// Mode timeline (healthy / slow / unavailable).
    #[serde(default)]
    pub modes: Vec<ModeChange>,
    /// Finite capacity: servers and a queue (load raises latency). None = infinite.
    #[serde(default)]
    pub capacity: Option<Capacity>,
    /// Network time added to every call (request and response hop).
    #[serde(default)]
    pub hop: Dur,
    /// Several replicas behind client-side load balancing (None = one replica).
    #[serde(default)]
    pub replicas: Option<Replicas>,
}

/// Dependency replicas and how callers pick one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Replicas {
    /// Number of replicas, 1 to 10000; `capacity`, if set, applies to each.
    pub count: u32,
    /// Client-side load balancing.
    pub balancing: Balancing,
    /// Replicas slowed down during a window (latency multiplied by `factor`).
    #[serde(default)]
    pub slow: Vec<ReplicaSlowdown>,
}

/// Client-side load-balancing rules.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum Balancing {
    /// Each instance cycles through the replicas.
    RoundRobin,
    /// The replica with the fewest of this instance's calls outstanding (ties: lowest index).
    LeastOutstanding,
    /// Two random replicas, the one with fewer outstanding calls.
    PowerOfTwo,
    /// A uniformly random replica.
    Random,
}

/// One replica slowed during a window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplicaSlowdown {
    /// Replica index (below `count`).
    pub replica: u32,
    /// When the slowdown starts.
    pub start: Dur,
    /// When it ends (not before `start`).
    pub end: Dur,
    /// Latency multiplier (> 0).
    pub factor: f64,
}

fn dep_name() -> String {
    "dependency".into()
}

/// A drift profile: a multiplier on the base latency at each time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default, schemars::JsonSchema)]
pub enum Drift {
    /// No drift (factor 1).
    #[default]
    None,
    /// Factor `factor` from `at` on.
    Step {
        /// When the step happens.
        at: Dur,
        /// Multiplier after the step (> 0).
        factor: f64,
    },
    /// Linear from `from` at `start` to `to` at `end`, held after.
    Ramp {
        /// Ramp start.
        start: Dur,
        /// Ramp end (not before `start`).
        end: Dur,
        /// Factor at start (> 0).
        from: f64,
        /// Factor at end (> 0).
        to: f64,
    },
    /// Piecewise linear through (time, factor > 0) points in time order; constant before the first
    /// and after the last.
    Points(Vec<(Dur, f64)>),
    /// A brownout episode: factor 1 until `start`, linear up to `peak` over `ramp`, held for
    /// `hold`, linear back to 1 over `ramp`. One number to sweep: `peak`.
    Brownout {
        /// When the ramp up starts.
        start: Dur,
        /// Length of each ramp.
        ramp: Dur,
        /// Time at the peak.
        hold: Dur,
        /// Peak factor (> 0; 30 = 200 ms -> 6 s).
        peak: f64,
    },
    /// Factor `factor` during the first `duration` of every `period` (from time 0), 1 otherwise:
    /// a recurring brownout such as "50 ms instead of 10 ms for 2 s of every 10 s".
    Periodic {
        /// Length of one cycle (> 0).
        period: Dur,
        /// How long the factor applies at the start of each cycle (at most `period`).
        duration: Dur,
        /// Multiplier while it applies (> 0).
        factor: f64,
    },
    /// Observed latency over time from a CSV file (columns `t_s` and `latency_ms`); the factor
    /// is the observed latency divided by the base latency's median.
    Csv {
        /// Path relative to the scenario file.
        file: String,
    },
}

/// A number over time: constant or piecewise linear.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum Profile {
    /// The same value throughout.
    Constant(f64),
    /// Piecewise linear through (time, value) points in time order.
    Points(Vec<(Dur, f64)>),
}

impl Default for Profile {
    fn default() -> Self {
        Profile::Constant(0.0)
    }
}

/// A change of the dependency's mode at a time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeChange {
    /// When the mode starts.
    pub at: Dur,
    /// The mode.
    pub mode: Mode,
}

/// The dependency's mode (R02's switch).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum Mode {
    /// Normal latency.
    Healthy,
    /// Normal latency plus a fixed extra delay.
    Slow(Dur),
    /// Every call fails at once with 503.
    Unavailable,
}

/// Finite dependency capacity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Capacity {
    /// Calls served at once (>= 1).
    pub servers: u32,
    /// Calls that may wait; beyond it a call fails at once with 503.
    pub queue: u32,
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

/// One policy configuration: a stack of layers, outermost first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicySet {
    /// Label in tables and charts.
    pub name: String,
    /// Layers, outermost first (like `Retry(Breaker(Limiter(Timeout(call))))`); at most 8.
    #[serde(default)]
    pub stack: Vec<Layer>,
}

/// A layer: a policy, optionally restricted to some classes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// The policy.
    pub policy: PolicySpec,
    /// Classes it applies to (empty = all).
    #[serde(default)]
    pub classes: Vec<String>,
    /// Where the policy's state lives: in each instance (the libraries' default) or shared
    /// by the fleet.
    #[serde(default)]
    pub scope: Scope,
    /// The state survives an instance restart (kept outside the process).
    #[serde(default)]
    pub persistent: bool,
}

/// Scope of a policy's state.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default, schemars::JsonSchema)]
pub enum Scope {
    /// Each gateway instance has its own state.
    #[default]
    Instance,
    /// One state for the fleet, in a store: decisions read it at once; outcomes and releases
    /// reach it after `propagation`.
    Fleet {
        /// Delay before an outcome or release updates the shared state.
        #[serde(default)]
        propagation: Dur,
    },
}

/// An assertion on a run's results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Policy label.
    pub policy: String,
    /// Class name, for per-class metrics.
    #[serde(default)]
    pub class: Option<String>,
    /// Metric name (see README: ok_ratio, goodput_per_s, p95_ms, transitions, ...).
    pub metric: String,
    /// Comparison.
    pub op: Cmp,
    /// Right-hand side: a number...
    #[serde(default)]
    pub value: Option<f64>,
    /// ...or the same metric (and class) under another policy, times `factor`.
    #[serde(default)]
    pub than: Option<String>,
    /// Multiplier on the other policy's value (default 1).
    #[serde(default = "one_f")]
    pub factor: f64,
}

fn one_f() -> f64 {
    1.0
}

/// Comparison operators for expectations.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==` within 1e-9
    Eq,
}

/// Guards against runaway scenarios. `scenario::validate` compares estimates with them before
/// any run (`scenario::budget`); the run itself stops at `max_in_flight` and `max_events`.
/// Every field may be left out.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Requests alive at once (in service or waiting) per run; default 2,000,000.
    pub max_in_flight: u64,
    /// Events per run (estimated before the run, counted during it); default 20,000,000,000.
    pub max_events: u64,
    /// Memory a run of every policy set, or a sweep on this scenario, is estimated to need,
    /// e.g. `"4GiB"` (the default) or `"512MiB"`.
    #[serde(skip_serializing_if = "is_default_memory")]
    #[schemars(with = "String")]
    pub max_memory: bytesize::ByteSize,
    /// Attempts one request may make: the product of its retry layers' `max_attempts` (default
    /// 1000).
    #[serde(skip_serializing_if = "is_default_attempts")]
    pub max_attempts: u64,
}

/// Most layers one policy stack may have: a request keeps its admission time per layer in a
/// fixed array of this size.
pub const MAX_LAYERS: usize = 8;

const DEFAULT_MAX_MEMORY: bytesize::ByteSize = bytesize::ByteSize::gib(4);
const DEFAULT_MAX_ATTEMPTS: u64 = 1000;

// Left out of the saved scenario when default, so files and sweep plans from before the
// field existed keep their bytes.
fn is_default_memory(m: &bytesize::ByteSize) -> bool {
    *m == DEFAULT_MAX_MEMORY
}
fn is_default_attempts(n: &u64) -> bool {
    *n == DEFAULT_MAX_ATTEMPTS
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_in_flight: 2_000_000,
            max_events: 20_000_000_000,
            max_memory: DEFAULT_MAX_MEMORY,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }
}
