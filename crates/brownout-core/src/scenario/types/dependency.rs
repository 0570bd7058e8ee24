//! The dependency: latency, drift, modes, capacity and replicas.

use serde::{Deserialize, Serialize};

use super::*;

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

/// A time that is fixed (`"5ms"`) or drawn anew for each use from a distribution of the
/// same shapes as a latency: `Constant("5ms")`, `Exponential(mean: "5ms")`,
/// `LogNormal(median: "5ms", sigma: 0.5)`, `Empirical(file: "x.csv")`.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Delay {
    /// The same time for every use.
    Fixed(Dur),
    /// Drawn for each use (each request's or call's own draw).
    Random(Latency),
}

// RON hands a value that may be a string or a variant to `deserialize_any` without the
// variant's name (ron 0.10 keeps it only for serde's own untagged enums, and that check
// fails with the serde in use), so the shape is recognised by its fields.
impl<'de> Deserialize<'de> for Delay {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, value::MapAccessDeserializer};
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Delay;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a duration such as \"5ms\" or a distribution: Constant(\"5ms\"), Exponential(mean: \"5ms\"), \
                     LogNormal(median: \"5ms\", sigma: 0.5) or Empirical(file: \"x.csv\")",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Delay, E> {
                crate::units::parse_duration(v).map(|t| Delay::Fixed(Dur(t))).map_err(E::custom)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Delay, A::Error> {
                let d: Dur = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(2, &self));
                }
                Ok(Delay::Random(Latency::Constant(d)))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Delay, A::Error> {
                let s = Shape::deserialize(MapAccessDeserializer::new(map))?;
                Ok(Delay::Random(match s {
                    Shape { mean: Some(mean), median: None, sigma: None, file: None, column: None } => {
                        Latency::Exponential { mean }
                    }
                    Shape { mean: None, median: Some(median), sigma: Some(sigma), file: None, column: None } => {
                        Latency::LogNormal { median, sigma }
                    }
                    Shape { mean: None, median: None, sigma: None, file: Some(file), column } => {
                        Latency::Empirical { file, column: column.unwrap_or_else(latency_col) }
                    }
                    _ => return Err(de::Error::custom(format_args!("expected {}", Expecting(&self)))),
                }))
            }
        }
        /// The fields of every distribution shape.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Shape {
            mean: Option<Dur>,
            median: Option<Dur>,
            sigma: Option<f64>,
            file: Option<String>,
            column: Option<String>,
        }
        struct Expecting<'a>(&'a V);
        impl std::fmt::Display for Expecting<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                de::Visitor::expecting(self.0, f)
            }
        }
        d.deserialize_any(V)
    }
}

impl Default for Delay {
    fn default() -> Self {
        Delay::Fixed(Dur(0))
    }
}

impl Delay {
    /// Zero for every use.
    pub fn is_zero(&self) -> bool {
        matches!(self, Delay::Fixed(d) | Delay::Random(Latency::Constant(d)) if d.ns() == 0)
    }

    /// The mean in ns; None when a data file holds the samples.
    pub fn mean_ns(&self) -> Option<f64> {
        match self {
            Delay::Fixed(d) => Some(d.ns() as f64),
            Delay::Random(l) => l.mean_ns(),
        }
    }
}

impl Latency {
    /// The mean in ns; None when a data file holds the samples.
    pub fn mean_ns(&self) -> Option<f64> {
        match self {
            Latency::Constant(d) => Some(d.ns() as f64),
            Latency::Exponential { mean } => Some(mean.ns() as f64),
            Latency::LogNormal { median, sigma } => Some(median.ns() as f64 * (sigma * sigma / 2.0).exp()),
            Latency::Empirical { .. } => None,
        }
    }
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
    /// Network time added to every call (request and response hop): a duration, or a
    /// distribution drawn for each call.
    #[serde(default)]
    pub hop: Delay,
    /// Several replicas behind client-side load balancing (None = one replica).
    #[serde(default)]
    pub replicas: Option<Replicas>,
    /// What the dependency does with a call its caller abandoned (attempt timeout, hedge
    /// loser, instance restart): keep working on it, or stop once the cancel arrives.
    #[serde(default, skip_serializing_if = "Cancellation::is_keep_working")]
    pub cancellation: Cancellation,
}

/// What happens at the dependency to a call the caller abandoned.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema)]
pub enum Cancellation {
    /// The dependency finishes the call anyway (HTTP/1.1 without cancellation).
    #[default]
    KeepWorking,
    /// The cancel reaches the dependency `delay` after the caller gave up (an HTTP/2 reset,
    /// a gRPC deadline): a call still waiting for a server leaves the queue, one in service
    /// stops and frees its server. A call answered before the cancel arrives is unaffected.
    Propagate {
        /// Time for the cancel to reach the dependency.
        delay: Dur,
    },
}

impl Cancellation {
    /// The default: abandoned calls run to completion.
    pub fn is_keep_working(&self) -> bool {
        *self == Cancellation::KeepWorking
    }

    /// The propagation delay (ns) when abandoned calls are cancelled.
    pub fn delay(&self) -> Option<u64> {
        match self {
            Cancellation::KeepWorking => None,
            Cancellation::Propagate { delay } => Some(delay.ns()),
        }
    }
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
    /// Envoy outlier detection in each gateway instance's balancer (None = every replica
    /// always takes calls).
    #[serde(default)]
    pub outlier_detection: Option<OutlierDetection>,
}

/// Envoy's cluster `outlier_detection`, its field names and defaults (see `model::outlier`
/// for the semantics). Percentages are whole percent; times are durations.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutlierDetection {
    /// Consecutive 5xx (error answers and timeouts) that eject a replica (default 5; 0 =
    /// this detector off, as Envoy's `==` test never matches 0).
    #[serde(default = "five")]
    pub consecutive_5xx: u32,
    /// Consecutive gateway failures (timeouts) that eject a replica (default 5; 0 = this
    /// detector off).
    #[serde(default = "five")]
    pub consecutive_gateway_failure: u32,
    /// Time between ejection sweeps (default 10 s; > 0).
    #[serde(default = "ten_s")]
    pub interval: Dur,
    /// Ejection time per time ejected (default 30 s; > 0).
    #[serde(default = "thirty_s")]
    pub base_ejection_time: Dur,
    /// Longest ejection time (default: the larger of 300 s and `base_ejection_time`, as
    /// Envoy sets it; refused below `base_ejection_time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ejection_time: Option<Dur>,
    /// Most replicas ejected at once, percent of all (default 10; 0..=100).
    #[serde(default = "ten")]
    pub max_ejection_percent: u32,
    /// Chance, percent, that a consecutive-5xx detection ejects (default 100).
    #[serde(default = "hundred")]
    pub enforcing_consecutive_5xx: u32,
    /// Chance, percent, that a consecutive-gateway-failure detection ejects (default 0).
    #[serde(default)]
    pub enforcing_consecutive_gateway_failure: u32,
    /// Chance, percent, that a success-rate detection ejects (default 100).
    #[serde(default = "hundred")]
    pub enforcing_success_rate: u32,
    /// Replicas with enough volume needed for success-rate ejection (default 5).
    #[serde(default = "five")]
    pub success_rate_minimum_hosts: u32,
    /// Calls in one interval a replica needs to count for success rate (default 100).
    #[serde(default = "hundred")]
    pub success_rate_request_volume: u32,
    /// Ejection below mean - stdev x factor / 1000 (default 1900).
    #[serde(default = "d1900")]
    pub success_rate_stdev_factor: u32,
    /// Envoy's cluster `common_lb_config.healthy_panic_threshold`, whole percent (default
    /// 50; 0..=100): when fewer than this percentage of the replicas are left (not
    /// ejected), the balancer panics and sends calls to every replica, ejected or not.
    /// 0 turns panic off (Istio's default): ejected replicas stay skipped, and when every
    /// replica is ejected a call fails at once (Envoy's "no healthy upstream" 503).
    #[serde(default = "fifty")]
    pub healthy_panic_threshold: u32,
}

fn five() -> u32 {
    5
}
fn ten() -> u32 {
    10
}
fn hundred() -> u32 {
    100
}
fn d1900() -> u32 {
    1900
}
fn fifty() -> u32 {
    50
}
fn ten_s() -> Dur {
    Dur::secs(10)
}
fn thirty_s() -> Dur {
    Dur::secs(30)
}
impl OutlierDetection {
    /// The longest ejection time in force: `max_ejection_time`, or when unset the larger of
    /// 300 s and `base_ejection_time` (Envoy's `DetectorConfig` constructor).
    pub fn max_ejection(&self) -> Dur {
        self.max_ejection_time.unwrap_or_else(|| Dur::secs(300).max(self.base_ejection_time))
    }

    /// Check values serde cannot: the offending field and what is wrong.
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        let pct = [
            ("max_ejection_percent", self.max_ejection_percent),
            ("enforcing_consecutive_5xx", self.enforcing_consecutive_5xx),
            ("enforcing_consecutive_gateway_failure", self.enforcing_consecutive_gateway_failure),
            ("enforcing_success_rate", self.enforcing_success_rate),
            ("healthy_panic_threshold", self.healthy_panic_threshold),
        ];
        if let Some((f, _)) = pct.iter().find(|(_, v)| *v > 100) {
            return Err((f, format!("dependency.replicas.outlier_detection.{f} is a percentage: 0..=100")));
        }
        let times = [("interval", self.interval), ("base_ejection_time", self.base_ejection_time)];
        if let Some((f, _)) = times.iter().find(|(_, v)| v.ns() == 0) {
            return Err((f, format!("dependency.replicas.outlier_detection.{f} must be > 0")));
        }
        if self.max_ejection_time.is_some_and(|m| m < self.base_ejection_time) {
            return Err((
                "max_ejection_time",
                format!(
                    "dependency.replicas.outlier_detection.max_ejection_time ({}) cannot be smaller than \
                     base_ejection_time ({}), as Envoy refuses it",
                    self.max_ejection(),
                    self.base_ejection_time
                ),
            ));
        }
        Ok(())
    }
}

impl Default for OutlierDetection {
    fn default() -> Self {
        ron::from_str("()").expect("every field has a default")
    }
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
