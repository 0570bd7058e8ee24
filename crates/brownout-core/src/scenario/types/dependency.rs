//! The dependency: latency, drift, modes, capacity and replicas.

use serde::{Deserialize, Serialize};

use super::*;

/// A latency distribution.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
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
/// same shapes as a latency, read by the same parser, so the shape's name decides:
/// `Constant("5ms")`, `Exponential(mean: "5ms")`, `LogNormal(median: "5ms", sigma: 0.5)`,
/// `Empirical(file: "x.csv")`; any other name or form is refused where it is written.
#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Delay {
    /// The same time for every use.
    Fixed(Dur),
    /// Drawn for each use (each request's or call's own draw).
    Random(Latency),
}

/// The name under which ron 0.10 hands a value's raw text to a newtype-struct visitor
/// (`ron::value::RawValue`; ron-0.10.1 src/value/raw.rs, `RAW_VALUE_TOKEN`, read in
/// src/de/mod.rs `deserialize_newtype_struct`). Other formats see an ordinary newtype.
const RAW_VALUE_TOKEN: &str = "$ron::private::RawValue";

/// The mark that starts a message whose error belongs earlier than where ron reports it:
/// `{MARK}{bytes back}{MARK}{message}`; [`relocate`] moves the position and drops the mark.
const MARK: char = '\u{1}';

// A `Delay` is a duration string or one of `Latency`'s shapes, read by `Latency`'s own
// derived parser, so the shape's name decides. ron 0.10 keeps a variant's name only for an
// externally tagged enum, and a value that may be a string or a variant can only be told
// apart by looking at it, which serde's `deserialize_any` cannot do without dropping that
// name (ron-0.10.1 src/de/mod.rs `handle_any_struct` keeps it only for serde's private
// content type, which moved to serde_core). So in RON the value's raw text is taken and
// parsed: a string as a duration, anything else as a `Latency`. Other formats (the JSON a
// sweep edits) hand over the value itself: a string, or a one-key map naming the shape.
impl<'de> Deserialize<'de> for Delay {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, value::MapAccessDeserializer};
        enum Got {
            Raw(String),
            Value(Delay),
        }
        struct Raw;
        impl<'de> de::Visitor<'de> for Raw {
            type Value = Got;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(EXPECTING)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Got, E> {
                Ok(Got::Raw(v.to_string()))
            }
            fn visit_newtype_struct<D2: serde::Deserializer<'de>>(self, d: D2) -> Result<Got, D2::Error> {
                d.deserialize_any(Plain).map(Got::Value)
            }
        }
        /// A value handed over as it is (not RON text).
        struct Plain;
        impl<'de> de::Visitor<'de> for Plain {
            type Value = Delay;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(EXPECTING)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Delay, E> {
                crate::units::parse_duration(v).map(|t| Delay::Fixed(Dur(t))).map_err(E::custom)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Delay, A::Error> {
                Latency::deserialize(MapAccessDeserializer::new(map)).map(Delay::Random)
            }
        }
        match d.deserialize_newtype_struct(RAW_VALUE_TOKEN, Raw)? {
            Got::Value(v) => Ok(v),
            Got::Raw(text) => from_ron(&text).map_err(de::Error::custom),
        }
    }
}

const EXPECTING: &str = "a duration such as \"5ms\" or a distribution: Constant(\"5ms\"), Exponential(mean: \"5ms\"), \
                         LogNormal(median: \"5ms\", sigma: 0.5) or Empirical(file: \"x.csv\")";

/// Read a delay's RON text: a string is a duration, anything else one of `Latency`'s shapes.
/// An error carries the way back from the text's end to the offending place (see [`MARK`]).
fn from_ron(text: &str) -> Result<Delay, String> {
    let trimmed = text.trim_start();
    let parsed = if trimmed.starts_with('"') || trimmed.starts_with("r\"") || trimmed.starts_with("r#") {
        ron::from_str::<String>(text).map(|s| {
            crate::units::parse_duration(&s).map(|t| Delay::Fixed(Dur(t))).map_err(|m| (trimmed.len(), m.to_string()))
        })
    } else {
        ron::from_str::<Latency>(text).map(|l| Ok(Delay::Random(l)))
    };
    let (back, message) = match parsed {
        Ok(Ok(d)) => return Ok(d),
        Ok(Err((back, m))) => (back, m),
        Err(e) => {
            let at = offset(text, e.position.line, e.position.col);
            let message = match e.code {
                ron::Error::NoSuchEnumVariant { found, .. } => format!("unknown shape `{found}`: expected {EXPECTING}"),
                code => format!("{code} (expected {EXPECTING})"),
            };
            (text.len() - at, message)
        }
    };
    Err(format!("{MARK}{back}{MARK}{message}"))
}

/// Byte offset of 1-based (`line`, `col`) in `text` (columns count characters).
fn offset(text: &str, line: usize, col: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    let rest = &text[start.min(text.len())..];
    start + rest.char_indices().nth(col.saturating_sub(1)).map_or(rest.len(), |(i, _)| i)
}

/// An error ron reports at (`line`, `col`) of `text` whose message is marked (a `Delay`'s):
/// the position it belongs at and the message without the mark; others unchanged.
pub(crate) fn relocate(text: &str, line: usize, col: usize, message: &str) -> (usize, usize, String) {
    let mut parts = message.splitn(3, MARK);
    let (Some(""), Some(back), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return (line, col, message.to_string());
    };
    let Ok(back) = back.parse::<usize>() else { return (line, col, message.to_string()) };
    let end = offset(text, line, col);
    let mut at = end.saturating_sub(back);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col, rest.to_string())
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
    /// Finite capacity: servers and a queue, or service shared by the calls present
    /// (`sharing`); either way load raises latency. None = infinite. A call
    /// holds a server for its service time only (not its `hop`); the summary reports its
    /// queue wait (`dependency.queue_wait_ms`), service time (`dependency.latency_ms`) and
    /// their sum (`dependency.time_ms`) separately.
    #[serde(default)]
    pub capacity: Option<Capacity>,
    /// Network time of every call's round trip (the request's and the response's hops
    /// together, one draw per call): a duration, or a distribution drawn for each call. It
    /// delays the caller and never holds a dependency server.
    #[serde(default)]
    pub hop: Delay,
    /// Time from the answer's first byte to its last at the caller: the body's transfer
    /// (default 0: the answer arrives whole). It delays the caller and holds no server; an
    /// inactivity timeout (`Timeout`'s `starts: Inactivity`) times the first byte and the
    /// body apart.
    #[serde(default, skip_serializing_if = "no_transfer")]
    #[schemars(!skip_serializing_if)]
    pub transfer: Dur,
    /// Several replicas behind client-side load balancing (None = one replica).
    #[serde(default)]
    pub replicas: Option<Replicas>,
    /// What the dependency does with a call its caller abandoned (attempt timeout, hedge
    /// loser, instance restart): keep working on it, or stop once the cancel arrives.
    #[serde(default, skip_serializing_if = "Cancellation::is_keep_working")]
    #[schemars(!skip_serializing_if)]
    pub cancellation: Cancellation,
    /// This dependency is a service with workers, a policy stack and a call plan of its own
    /// (None: a leaf, served by its servers as `latency`, `capacity` and `replicas` say).
    /// Its `latency` is then its own work per call, before its plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<Service>,
}

/// No body transfer time (the default, not written back).
fn no_transfer(d: &Dur) -> bool {
    d.ns() == 0
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
    /// HAProxy's active health checks in each gateway instance (`server ... check inter 2s
    /// fall 3 rise 2`; None = no checks): a replica found down takes no calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<super::HealthCheck>,
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
    /// Normal latency plus a fixed extra delay: a slow server, so the extra time is service
    /// time and holds the server under a finite `capacity` (a slow network is `hop`).
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
    /// Which waiting call a free server takes: `Fifo` (default, the oldest) or `Lifo` (the
    /// newest, so under overload fresh calls are served in time and old ones wait on).
    #[serde(default, skip_serializing_if = "Discipline::is_fifo")]
    #[schemars(!skip_serializing_if)]
    pub discipline: Discipline,
    /// A call that waited longer than this when a server reaches it is shed: answered 503 at
    /// once, using no service (its caller has likely given up). None = never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait: Option<Dur>,
    /// CoDel (RFC 8289) on the queue: when the calls taken have waited at least `target` for
    /// a whole `interval`, shed calls at the head, the next `interval / sqrt(drops)` later,
    /// until a call taken waited less than `target` (or at most one call is left waiting).
    /// Shed calls are answered 503 at once, using no service. None = never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel: Option<CoDel>,
    /// How the calls at a replica share it: `Queue` (default: each server serves one call
    /// at a time, the others wait), `ProcessorSharing` (every call present is in service,
    /// each at `min(1, servers / n)` of full speed with `n` calls present) or
    /// `Usl(sigma, kappa)` (Gunther's universal scalability law: each at `X(n) / n` with
    /// `X(n) = n / (1 + sigma (n - 1) + kappa n (n - 1))`). Under sharing no call waits, so
    /// `discipline`, `max_wait` and `codel` do not apply, and at most `servers + queue`
    /// calls are present: one more is answered 503 at once.
    #[serde(default, skip_serializing_if = "Sharing::is_queue")]
    #[schemars(!skip_serializing_if)]
    pub sharing: Sharing,
}

/// How the calls at one dependency replica share its servers. A call's service requirement
/// is its drawn latency (the time it takes at full speed); under sharing, the more calls
/// present, the slower each one progresses.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default, schemars::JsonSchema)]
pub enum Sharing {
    /// Each server serves one call at a time to its end; the others wait in the queue.
    #[default]
    Queue,
    /// Egalitarian processor sharing (Kleinrock): every call present is in service, and with
    /// `n` present each progresses at `min(1, servers / n)` of full speed, so up to
    /// `servers` calls run at full speed and beyond that they slow down together. One
    /// server gives M/G/1-PS, whose mean time in system is `E[S] / (1 - rho)` whatever the
    /// service distribution.
    ProcessorSharing,
    /// Gunther's universal scalability law (*Guerrilla Capacity Planning*, 2007): every call
    /// present is in service, and with `n` present the replica completes work at
    /// `X(n) = n / (1 + sigma (n - 1) + kappa n (n - 1))` times one call's full speed, shared
    /// equally, so each call progresses at `X(n) / n`. `sigma` is contention (the serial
    /// part), `kappa` coherency (crosstalk, which makes throughput fall past a peak at
    /// `n* = sqrt((1 - sigma) / kappa)`). `servers` does not enter the curve; it only counts
    /// towards the most calls present, `servers + queue`. With `sigma = kappa = 0` this is
    /// processor sharing with unlimited servers.
    Usl {
        /// Contention, in [0, 1].
        sigma: f64,
        /// Coherency delay, >= 0 (and finite).
        kappa: f64,
    },
}

impl Sharing {
    /// The default: servers and a queue.
    pub fn is_queue(&self) -> bool {
        *self == Sharing::Queue
    }
}

/// The order in which a dependency's free servers take waiting calls.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema)]
pub enum Discipline {
    /// First in, first out: the call that waited longest.
    #[default]
    Fifo,
    /// Last in, first out: the call that arrived last.
    Lifo,
}

impl Discipline {
    /// The default, FIFO.
    pub fn is_fifo(&self) -> bool {
        *self == Discipline::Fifo
    }
}

/// CoDel's two settings (Nichols and Jacobson; RFC 8289 section 4).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoDel {
    /// The sojourn (queue wait) CoDel tolerates standing (> 0; RFC 8289's default 5 ms is for
    /// packets: a service's is nearer its normal queue wait).
    pub target: Dur,
    /// How long the wait must stay above `target` before the first drop, and the base of the
    /// drop spacing `interval / sqrt(drops)` (> 0, at least `target`).
    pub interval: Dur,
}
