//! Vegas limit (Netflix concurrency-limits `VegasLimit`): estimate the queue in front of the
//! dependency as `ceil(limit * (1 - rtt_noload / rtt))` and grow or shrink the limit by
//! log10-based steps, re-probing `rtt_noload` every `probe_multiplier * limit` samples
//! (scaled by a jitter in [0.5, 1)).
//!
//! Per sample: a probe resets `rtt_noload`; a new minimum replaces it; else a drop decreases,
//! an app-limited sample (inflight*2 < limit) holds, queue <= threshold adds beta, queue <
//! alpha increases, queue > beta decreases; then clamp to [1, max_concurrency] and smooth.
//! alpha = 3*L, beta = 6*L, threshold = L, increase/decrease = +-L with L = log10root(limit)
//! (`Log10RootFunction`: max(1, floor(log10 limit)), so 3 at the default `max_concurrency`
//! of 1000).
//!
//! Differences: the probe jitter is a counter-based draw from (the run's seed, layer,
//! instance, probe number) instead of `ThreadLocalRandom`; a zero-RTT sample (refused downstream at once) is not fed
//! to the RTT logic: a zero-RTT drop decreases the limit directly, other zero-RTT samples are
//! ignored (Java rejects rtt = 0 with an exception).

use serde::{Deserialize, Serialize};

use super::fixed::RefuseAs;
use super::gate::{Adaptive, GateConfig, LimitAlgorithm, Sample, rejected};
use crate::engine::{Time, counter_f64, label_hash};
use crate::policy::BuildCtx;
use crate::policy::why::{Cause, Why};
use crate::policy::{ConfigError, Facts, Policy, PolicyConfig};
use crate::units::Dur;

/// Vegas limiter configuration (Netflix names and defaults).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VegasConfig {
    /// Starting limit (>= 1, <= `max_concurrency`).
    #[serde(default = "twenty")]
    pub initial_limit: u32,
    /// Highest limit.
    #[serde(default = "thousand")]
    pub max_concurrency: u32,
    /// Weight of the new estimate, in (0, 1].
    #[serde(default = "one")]
    pub smoothing: f64,
    /// Re-probe `rtt_noload` every `probe_multiplier * limit` samples (times a jitter; >= 1).
    #[serde(default = "thirty")]
    pub probe_multiplier: u32,
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
fn thousand() -> u32 {
    1000
}
fn one() -> f64 {
    1.0
}
fn thirty() -> u32 {
    30
}

const JITTER: u64 = label_hash("limiter/vegas/probe");

/// Netflix `Log10RootFunction` (v0.1.10 on): max(1, floor(log10 n)), the integer part of
/// log10 counted exactly (`ilog10`) rather than through floating point.
pub(crate) fn log10_root(n: u32) -> u32 {
    n.max(1).ilog10().max(1)
}

/// The Vegas algorithm. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Vegas {
    estimated: f64,
    rtt_noload: Time,
    max_limit: f64,
    smoothing: f64,
    probe_multiplier: f64,
    probe_count: u64,
    probe_jitter: f64,
    probes: u64,
    seed: u64,
    key: u64,
    why: Why,
}

impl Vegas {
    /// A gated Vegas limiter from config, for the instance in `ctx`.
    pub fn limiter(cfg: &VegasConfig, ctx: &BuildCtx) -> Adaptive<Vegas> {
        Adaptive::new(Vegas::new(cfg, ctx), cfg.gate())
    }

    /// The algorithm alone, before any sample.
    fn new(cfg: &VegasConfig, ctx: &BuildCtx) -> Vegas {
        let mut algo = Vegas {
            estimated: cfg.initial_limit as f64,
            rtt_noload: 0,
            max_limit: cfg.max_concurrency as f64,
            smoothing: cfg.smoothing,
            probe_multiplier: cfg.probe_multiplier as f64,
            probe_count: 0,
            probe_jitter: 0.0,
            probes: 0,
            seed: ctx.seed,
            key: ctx.draw_key(),
            why: Why::Fresh,
        };
        algo.reset_probe_jitter();
        algo
    }

    fn reset_probe_jitter(&mut self) {
        let u = counter_f64(self.seed, JITTER, self.key, self.probes);
        self.probes += 1;
        self.probe_jitter = 0.5 + 0.5 * u;
    }

    fn apply(&mut self, target: f64, cause: Cause) {
        let bounded = target.min(self.max_limit).max(1.0);
        let from = self.estimated.floor();
        self.estimated = (1.0 - self.smoothing) * self.estimated + self.smoothing * bounded;
        if self.estimated.floor() != from {
            self.why = Why::Limit { name: "Vegas", from, to: self.estimated.floor(), cause };
        }
    }

    fn update_estimate(&mut self, rtt: Time, inflight: u32, did_drop: bool) {
        let l = self.estimated;
        if did_drop {
            return self.apply(l - log10_root(l as u32) as f64, Cause::Drop);
        }
        if (inflight as f64) * 2.0 < l {
            return; // app-limited: no evidence about the limit
        }
        let queue = (l * (1.0 - self.rtt_noload as f64 / rtt as f64)).ceil() as i64;
        let step = log10_root(l as u32) as i64;
        let (alpha, beta, threshold) = (3 * step, 6 * step, step);
        let cause = Cause::Queue { queue: queue as f64, alpha: alpha as f64, beta: beta as f64 };
        if queue <= threshold {
            self.apply(l + beta as f64, cause);
        } else if queue < alpha {
            self.apply(l + step as f64, cause);
        } else if queue > beta {
            self.apply(l - step as f64, cause);
        }
    }
}

impl LimitAlgorithm for Vegas {
    fn update(&mut self, s: &Sample) {
        if s.rtt == 0 {
            if s.did_drop {
                self.update_estimate(0, s.inflight, true);
            }
            return;
        }
        self.probe_count += 1;
        if self.probe_jitter * self.probe_multiplier * self.estimated <= self.probe_count as f64 {
            self.reset_probe_jitter();
            self.probe_count = 0;
            self.rtt_noload = s.rtt;
            return;
        }
        if self.rtt_noload == 0 || s.rtt < self.rtt_noload {
            self.rtt_noload = s.rtt;
            return;
        }
        self.update_estimate(s.rtt, s.inflight, s.did_drop);
    }

    fn limit(&self) -> f64 {
        // Java reports (int) estimatedLimit.
        self.estimated.floor()
    }

    fn why(&self) -> Why {
        self.why
    }
}

/// Validation messages for [`VegasConfig`].
fn check(c: &VegasConfig) -> Result<(), String> {
    if !(c.smoothing.is_finite() && 0.0 < c.smoothing && c.smoothing <= 1.0) {
        return Err("Vegas.smoothing must lie in (0, 1]".into());
    }
    if c.initial_limit == 0 || c.initial_limit > c.max_concurrency {
        return Err("Vegas.initial_limit must be >= 1 and <= max_concurrency".into());
    }
    if c.probe_multiplier == 0 {
        return Err("Vegas.probe_multiplier must be >= 1".into());
    }
    Ok(())
}

impl VegasConfig {
    /// Its queue settings, as every limiter has them.
    pub fn gate(&self) -> GateConfig {
        GateConfig { queue: self.queue, max_wait: self.max_wait, refuse_as: self.refuse_as }
    }
}

impl PolicyConfig for VegasConfig {
    const KIND: &'static str = "vegas";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Limiter).fallback(self.refuse_as.fallback_rule())
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        check(self)?;
        self.gate().validate("Vegas")
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Vegas::limiter(self, ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND;

    #[test]
    fn log10_root_matches_the_lookup_table() {
        // Netflix concurrency-limits, `limit/functions/Log10RootFunction.java` and
        // `Log10RootIntFunction.java`, `apply`: the table max(1, (int) Math.log10(i)) below
        // 1000, `(int) Math.log10(t)` from 1000 on (v0.1.10; earlier versions took the
        // square root there).
        assert_eq!(log10_root(0), 1);
        assert_eq!(log10_root(9), 1);
        assert_eq!(log10_root(99), 1);
        assert_eq!(log10_root(100), 2);
        assert_eq!(log10_root(999), 2);
        assert_eq!(log10_root(1000), 3);
        assert_eq!(log10_root(9_999), 3);
        assert_eq!(log10_root(10_000), 4);
        assert_eq!(log10_root(u32::MAX), 9);
    }

    #[test]
    fn a_drop_at_the_default_max_of_1000_steps_down_by_3() {
        // `VegasLimit.updateEstimatedLimit`: didDrop -> decreaseFunc(estimatedLimit) =
        // limit - LOG10.apply((int) limit); at 1000 that is 1000 - (int) log10(1000) = 997.
        // smoothing 1.0 keeps the new value as is. The first sample only sets rtt_noload.
        let cfg: VegasConfig = ron::from_str("(initial_limit: 1000)").unwrap();
        let mut v = Vegas::new(&cfg, &BuildCtx::default());
        let sample = |did_drop| Sample { now: 0, start: 0, rtt: 100 * MILLISECOND, inflight: 1000, did_drop };
        v.update(&sample(false));
        v.update(&sample(true));
        assert_eq!(v.limit(), 997.0);
    }

    #[test]
    fn the_probe_jitter_comes_from_the_runs_seed_and_the_layer() {
        let cfg: VegasConfig = ron::from_str("()").unwrap();
        let jitter = |ctx: BuildCtx| Vegas::new(&cfg, &ctx).probe_jitter;
        let at = |seed| BuildCtx::default().with_seed(seed);
        assert_eq!(jitter(at(1)), jitter(at(1)));
        assert_ne!(jitter(at(1)), jitter(at(2)), "two replications, two jitters");
        assert_ne!(jitter(at(1)), jitter(at(1).at_layer(1)), "two layers of a stack draw apart");
        assert_ne!(jitter(at(1)), jitter(at(1).on_instance(1, 2)), "and two instances");
    }

    #[test]
    fn a_probe_happens_between_half_and_all_of_multiplier_times_limit_samples() {
        let cfg = VegasConfig {
            initial_limit: 20,
            max_concurrency: 1000,
            smoothing: 1.0,
            probe_multiplier: 1,
            queue: 0,
            max_wait: Dur::ms(0),
            refuse_as: RefuseAs::Rejected,
        };
        let mut v = Vegas::new(&cfg, &BuildCtx::default().with_seed(3));
        let sample = |rtt_ms: u64| Sample { now: 0, start: 0, rtt: rtt_ms * MILLISECOND, inflight: 0, did_drop: false };
        v.update(&sample(100));
        assert_eq!(v.rtt_noload, 100 * MILLISECOND);
        // App-limited samples leave the limit at 20, so the probe fires at sample k with
        // jitter * 1 * 20 <= k, jitter in [0.5, 1): 10 <= k <= 20.
        let mut probed_at = None;
        for k in 2..=25u64 {
            v.update(&sample(300));
            if v.rtt_noload == 300 * MILLISECOND {
                probed_at = Some(k);
                break;
            }
        }
        let k = probed_at.expect("a probe within 25 samples");
        assert!((10..=20).contains(&k), "probe at sample {k}");
    }

    /// A sample of `rtt_ms` with `inflight` in flight at admission.
    fn sample(rtt_ms: u64, inflight: u32, did_drop: bool) -> Sample {
        Sample { now: 0, start: 0, rtt: rtt_ms * MILLISECOND, inflight, did_drop }
    }

    // The sequences below were worked by hand from Netflix concurrency-limits'
    // `VegasLimit.updateEstimatedLimit` (alpha 3, beta 6, threshold 1 times log10root(limit)).

    fn vegas(smoothing: f64) -> Vegas {
        let cfg = VegasConfig {
            initial_limit: 20,
            max_concurrency: 1000,
            smoothing,
            probe_multiplier: 1000, // no probe within these sequences (>= 0.5*1000*20 samples)
            queue: 0,
            max_wait: Dur::ms(0),
            refuse_as: RefuseAs::Rejected,
        };
        Vegas::new(&cfg, &BuildCtx::default())
    }

    #[test]
    fn vegas_sequence_matches_the_published_rules() {
        let mut v = vegas(1.0);
        v.update(&sample(100, 20, false)); // first sample: rtt_noload = 100 ms, limit held
        assert_eq!(v.limit(), 20.0);
        // queue = ceil(20 * (1 - 100/100)) = 0 <= threshold 1 -> + beta (6 * 1) = 26.
        v.update(&sample(100, 20, false));
        assert_eq!(v.limit(), 26.0);
        // queue = ceil(26 * (1 - 100/200)) = 13 > beta 6 -> - 1 = 25.
        v.update(&sample(200, 26, false));
        assert_eq!(v.limit(), 25.0);
        // queue = ceil(25 * (1 - 100/125)) = 5: 3 <= 5 <= 6 -> hold.
        v.update(&sample(125, 25, false));
        assert_eq!(v.limit(), 25.0);
        // queue = ceil(25 * (1 - 100/105)) = ceil(1.19) = 2: 1 < 2 < 3 -> + 1 = 26.
        v.update(&sample(105, 25, false));
        assert_eq!(v.limit(), 26.0);
        // A drop decreases by log10root(26) = 1.
        v.update(&sample(100, 26, true));
        assert_eq!(v.limit(), 25.0);
        // App-limited: 12 * 2 < 25 -> hold even with no queue.
        v.update(&sample(100, 12, false));
        assert_eq!(v.limit(), 25.0);
    }

    #[test]
    fn vegas_smoothing_blends_old_and_new() {
        let mut v = vegas(0.5);
        v.update(&sample(100, 20, false));
        // Target 26 -> 0.5 * 20 + 0.5 * 26 = 23.
        v.update(&sample(100, 20, false));
        assert_eq!(v.limit(), 23.0);
    }
}
