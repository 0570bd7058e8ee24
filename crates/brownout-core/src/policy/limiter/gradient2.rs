//! Gradient2 limit (Netflix concurrency-limits `Gradient2Limit`): compare the latest RTT
//! (short) with an exponential average of RTTs (long) and scale the limit by their ratio.
//!
//! Per sample: `long = EMA(rtt)` (mean of the first 10 samples, then factor 2/(long_window+1));
//! if `long / short > 2` then `long *= 0.95`; hold if `inflight < limit / 2`;
//! `gradient = clamp(rtt_tolerance * long / short, 0.5, 1.0)`;
//! `new = limit * gradient + queue_size; new = limit * (1 - smoothing) + new * smoothing`,
//! clamped to [min_limit, max_concurrency]. `didDrop` is ignored, as in Java.
//!
//! Difference: zero-RTT samples (attempts refused downstream at once) carry no latency and are
//! skipped. Java takes them (`Gradient2Limit._update`, double arithmetic, nothing throws):
//! the 0 is averaged into the long RTT and `long / short` is infinite (the long RTT is cut
//! and the gradient is 1); a 0 as the very first sample makes `long / short` = 0 / 0, so
//! the first update that is not app-limited sets the estimate to NaN, for good.

use serde::{Deserialize, Serialize};

use super::fixed::RefuseAs;
use super::gate::{Adaptive, GateConfig, LimitAlgorithm, Sample, rejected};
use crate::engine::Time;
use crate::policy::why::{Cause, Why};
use crate::policy::{BuildCtx, ConfigError, Facts, Policy, PolicyConfig};
use crate::units::Dur;

/// Gradient2 limiter configuration (Netflix names and defaults).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gradient2Config {
    /// Starting limit.
    #[serde(default = "twenty")]
    pub initial_limit: u32,
    /// Lowest limit (>= 1, <= `max_concurrency`).
    #[serde(default = "twenty")]
    pub min_limit: u32,
    /// Highest limit.
    #[serde(default = "two_hundred")]
    pub max_concurrency: u32,
    /// Weight of the new estimate, in (0, 1].
    #[serde(default = "smoothing")]
    pub smoothing: f64,
    /// Headroom added to the scaled limit.
    #[serde(default = "four")]
    pub queue_size: u32,
    /// Length in samples of the long RTT average (>= 1).
    #[serde(default = "six_hundred")]
    pub long_window: u32,
    /// Ratio of short to long RTT tolerated before the limit shrinks (>= 1).
    #[serde(default = "tolerance")]
    pub rtt_tolerance: f64,
    /// Attempts that may wait when the limit is reached (0 = refuse at once; a queue needs a
    /// `max_wait` > 0). Shared by every limiter (`policy::limiter::gate::GateConfig`).
    #[serde(default)]
    pub queue: u32,
    /// Longest wait in the queue (> 0 when `queue` > 0).
    #[serde(default)]
    pub max_wait: Dur,
    /// What a refused attempt gets (refused at once, after its wait, or shed from the
    /// queue): 429 (`Rejected`, whatever the class's `fallback`) or the class's fallback at
    /// once (`Fallback`; a 429 for a class with `fallback: None`), or 503 (`Unavailable`: an
    /// `error` whatever the class's `fallback`, as nginx's `limit_req` and HAProxy's queue answer).
    #[serde(default = "rejected")]
    pub refuse_as: RefuseAs,
}

fn twenty() -> u32 {
    20
}
fn two_hundred() -> u32 {
    200
}
fn smoothing() -> f64 {
    0.2
}
fn four() -> u32 {
    4
}
fn six_hundred() -> u32 {
    600
}
fn tolerance() -> f64 {
    1.5
}

/// Samples averaged plainly before the EMA takes over (Java's `ExpAvgMeasurement` warm-up).
const WARMUP: u32 = 10;

/// Netflix `ExpAvgMeasurement(window, 10)`.
#[derive(Debug, Clone)]
struct ExpAvg {
    value: f64,
    sum: f64,
    count: u32,
    factor: f64,
}

impl ExpAvg {
    fn add(&mut self, x: f64) -> f64 {
        if self.count < WARMUP {
            self.count += 1;
            self.sum += x;
            self.value = self.sum / self.count as f64;
        } else {
            self.value = self.value * (1.0 - self.factor) + x * self.factor;
        }
        self.value
    }
}

/// The Gradient2 algorithm. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Gradient2 {
    estimated: f64,
    min_limit: f64,
    max_limit: f64,
    smoothing: f64,
    queue_size: f64,
    tolerance: f64,
    long: ExpAvg,
    why: Why,
}

impl Gradient2 {
    /// A gated Gradient2 limiter from config.
    pub fn limiter(cfg: &Gradient2Config) -> Adaptive<Gradient2> {
        Adaptive::new(Gradient2::new(cfg), cfg.gate())
    }

    /// The algorithm alone, before any sample.
    fn new(cfg: &Gradient2Config) -> Gradient2 {
        Gradient2 {
            estimated: cfg.initial_limit as f64,
            min_limit: cfg.min_limit as f64,
            max_limit: cfg.max_concurrency as f64,
            smoothing: cfg.smoothing,
            queue_size: cfg.queue_size as f64,
            tolerance: cfg.rtt_tolerance,
            long: ExpAvg { value: 0.0, sum: 0.0, count: 0, factor: 2.0 / (cfg.long_window as f64 + 1.0) },
            why: Why::Fresh,
        }
    }
}

impl LimitAlgorithm for Gradient2 {
    fn update(&mut self, s: &Sample) {
        if s.rtt == 0 {
            return;
        }
        let short = s.rtt as f64;
        let long = self.long.add(short);
        // Latency fell well below the baseline: let the baseline come down faster.
        if long / short > 2.0 {
            self.long.value *= 0.95;
        }
        if (s.inflight as f64) < self.estimated / 2.0 {
            return;
        }
        // `long` is the value before the decay, as in Java.
        let gradient = (self.tolerance * long / short).clamp(0.5, 1.0);
        let raw = self.estimated * gradient + self.queue_size;
        let smoothed = self.estimated * (1.0 - self.smoothing) + raw * self.smoothing;
        let from = self.estimated.floor();
        self.estimated = smoothed.min(self.max_limit).max(self.min_limit);
        if self.estimated.floor() != from {
            let cause = Cause::Gradient { gradient, reference: (self.tolerance * long) as Time, sample: s.rtt };
            self.why = Why::Limit { name: "Gradient2", from, to: self.estimated.floor(), cause };
        }
    }

    fn limit(&self) -> f64 {
        self.estimated.floor()
    }

    fn why(&self) -> Why {
        self.why
    }
}

/// Validation messages for [`Gradient2Config`].
fn check(c: &Gradient2Config) -> Result<(), String> {
    if !(c.smoothing.is_finite() && 0.0 < c.smoothing && c.smoothing <= 1.0) {
        return Err("Gradient2.smoothing must lie in (0, 1]".into());
    }
    if c.min_limit == 0 || c.min_limit > c.max_concurrency {
        return Err("Gradient2.min_limit must be >= 1 and <= max_concurrency".into());
    }
    if c.rtt_tolerance.is_nan() || c.rtt_tolerance < 1.0 {
        return Err("Gradient2.rtt_tolerance must be >= 1".into());
    }
    if c.long_window == 0 {
        return Err("Gradient2.long_window must be >= 1".into());
    }
    Ok(())
}

impl Gradient2Config {
    /// Its queue settings, as every limiter has them.
    pub fn gate(&self) -> GateConfig {
        GateConfig { queue: self.queue, max_wait: self.max_wait, refuse_as: self.refuse_as }
    }
}

impl PolicyConfig for Gradient2Config {
    const KIND: &'static str = "gradient2";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Limiter).fallback(self.refuse_as.fallback_rule())
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        check(self)?;
        self.gate().validate("Gradient2")
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Gradient2::limiter(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND;

    fn ron<T: serde::de::DeserializeOwned>(s: &str) -> T {
        ron::from_str(s).expect("valid RON")
    }

    /// A sample of `rtt_ms` with `inflight` in flight at admission.
    fn sample(rtt_ms: u64, inflight: u32, did_drop: bool) -> Sample {
        Sample { now: 0, start: 0, rtt: rtt_ms * MILLISECOND, inflight, did_drop }
    }

    // Worked by hand from Netflix concurrency-limits' `Gradient2Limit._update` (defaults:
    // smoothing 0.2, queue size 4, tolerance 1.5, long window 600, warm-up 10 samples).

    #[test]
    fn gradient2_sequence_matches_the_published_formula() {
        let cfg: Gradient2Config = ron("(min_limit: 1)");
        let mut g = Gradient2::new(&cfg);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        // long = 100; gradient = min(1, 1.5) = 1; 20*0.8 + (20+4)*0.2 = 20.8.
        g.update(&sample(100, 20, false));
        assert!(close(g.estimated, 20.8), "{}", g.estimated);
        // long = 200; gradient = min(1, 1.5*200/300) = 1; 20.8*0.8 + 24.8*0.2 = 21.6.
        g.update(&sample(300, 20, false));
        assert!(close(g.estimated, 21.6), "{}", g.estimated);
        // long = 1300/3; gradient = 1.5*(1300/3)/900 = 13/18; new = 21.6*13/18 + 4 = 19.6;
        // 21.6*0.8 + 19.6*0.2 = 21.2. didDrop is ignored.
        g.update(&sample(900, 21, true));
        assert!(close(g.estimated, 21.2), "{}", g.estimated);
        // long = 1310/4 = 327.5 > 2 * 10 -> decays to 311.125; app-limited (5 < 10.6): hold.
        g.update(&sample(10, 5, false));
        assert!(close(g.estimated, 21.2));
        assert!((g.long.value - 311.125 * MILLISECOND as f64).abs() < 1e-3);
        // Warm-up mean ignores the decay: long = 2110/5 = 422; gradient = 1.5*422/800 = 0.79125;
        // new = 21.2*0.79125 + 4 = 20.7745; 21.2*0.8 + 20.7745*0.2 = 21.1149.
        g.update(&sample(800, 21, false));
        assert!(close(g.estimated, 21.1149), "{}", g.estimated);
        assert_eq!(g.limit(), 21.0);
    }
}
