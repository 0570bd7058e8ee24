//! AIMD limit (Netflix concurrency-limits `AIMDLimit`): add one when the limit is in use and
//! the sample is good, multiply by `backoff_ratio` on a drop or an RTT over `timeout`.
//!
//! `if didDrop || rtt > timeout: limit = floor(limit * backoff) else if inflight*2 >= limit:
//! limit += 1`, then clamp to [min_limit, max_limit]. The limit is an integer, as in Java.

use serde::{Deserialize, Serialize};

use super::fixed::RefuseAs;
use super::gate::{Adaptive, GateConfig, LimitAlgorithm, Sample, rejected};
use crate::engine::Time;
use crate::policy::why::{Cause, Why};
use crate::policy::{BuildCtx, ConfigError, Facts, Policy, PolicyConfig};
use crate::units::Dur;

/// AIMD limiter configuration (Netflix names and defaults).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AimdConfig {
    /// Starting limit.
    #[serde(default = "twenty")]
    pub initial_limit: u32,
    /// Lowest limit (>= 1, <= `max_limit`).
    #[serde(default = "twenty")]
    pub min_limit: u32,
    /// Highest limit.
    #[serde(default = "two_hundred")]
    pub max_limit: u32,
    /// Multiplier applied on a drop, in [0.5, 1).
    #[serde(default = "backoff")]
    pub backoff_ratio: f64,
    /// An RTT above this counts as a drop (> 0).
    #[serde(default = "five_s")]
    pub timeout: Dur,
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
fn backoff() -> f64 {
    0.9
}
fn five_s() -> Dur {
    Dur::secs(5)
}

/// The AIMD algorithm. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Aimd {
    limit: u32,
    min_limit: u32,
    max_limit: u32,
    backoff_ratio: f64,
    timeout: Time,
    why: Why,
}

impl Aimd {
    /// A gated AIMD limiter from config.
    pub fn limiter(cfg: &AimdConfig) -> Adaptive<Aimd> {
        let algo = Aimd {
            limit: cfg.initial_limit,
            min_limit: cfg.min_limit,
            max_limit: cfg.max_limit,
            backoff_ratio: cfg.backoff_ratio,
            timeout: cfg.timeout.ns(),
            why: Why::Fresh,
        };
        let gate = cfg.gate();
        Adaptive::new(algo, gate)
    }
}

impl LimitAlgorithm for Aimd {
    fn update(&mut self, s: &Sample) {
        let mut next = self.limit;
        let dropped = s.did_drop || s.rtt > self.timeout;
        if dropped {
            next = (self.limit as f64 * self.backoff_ratio) as u32;
        } else if s.inflight * 2 >= self.limit {
            next = self.limit + 1;
        }
        let next = next.max(self.min_limit).min(self.max_limit);
        if next != self.limit {
            let cause = if dropped { Cause::Drop } else { Cause::Success };
            self.why = Why::Limit { name: "AIMD", from: self.limit as f64, to: next as f64, cause };
        }
        self.limit = next;
    }

    fn why(&self) -> Why {
        self.why
    }

    fn limit(&self) -> f64 {
        self.limit as f64
    }
}

/// Validation messages for [`AimdConfig`].
fn check(c: &AimdConfig) -> Result<(), String> {
    if !(0.5..1.0).contains(&c.backoff_ratio) {
        return Err("Aimd.backoff_ratio must lie in [0.5, 1)".into());
    }
    if c.min_limit == 0 || c.min_limit > c.max_limit {
        return Err("Aimd.min_limit must be >= 1 and <= max_limit".into());
    }
    if c.timeout.ns() == 0 {
        return Err("Aimd.timeout must be > 0".into());
    }
    Ok(())
}

impl AimdConfig {
    /// Its queue settings, as every limiter has them.
    pub fn gate(&self) -> GateConfig {
        GateConfig { queue: self.queue, max_wait: self.max_wait, refuse_as: self.refuse_as }
    }
}

impl PolicyConfig for AimdConfig {
    const KIND: &'static str = "aimd";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Limiter).fallback(self.refuse_as.fallback_rule())
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        check(self)?;
        self.gate().validate("Aimd")
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Aimd::limiter(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND;

    fn s(rtt_ms: u64, inflight: u32, did_drop: bool) -> Sample {
        Sample { now: 0, start: 0, rtt: rtt_ms * MILLISECOND, inflight, did_drop }
    }

    fn cfg(initial: u32, min: u32) -> AimdConfig {
        AimdConfig {
            initial_limit: initial,
            min_limit: min,
            max_limit: 200,
            backoff_ratio: 0.9,
            timeout: Dur::secs(5),
            queue: 0,
            max_wait: Dur::ms(0),
            refuse_as: RefuseAs::Rejected,
        }
    }

    #[test]
    fn additive_increase_only_when_half_used() {
        let mut a = Aimd::limiter(&cfg(20, 1));
        let mut algo = a.algorithm().clone();
        algo.update(&s(100, 9, false)); // 9*2 = 18 < 20: hold
        assert_eq!(algo.limit(), 20.0);
        algo.update(&s(100, 10, false)); // 20 >= 20: +1
        assert_eq!(algo.limit(), 21.0);
        // The gate starts with the initial limit.
        assert_eq!(a.permits(), 20);
        let _ = &mut a;
    }

    #[test]
    fn multiplicative_decrease_on_drop_or_slow_rtt() {
        let mut algo = Aimd::limiter(&cfg(50, 1)).algorithm().clone();
        algo.update(&s(100, 50, true)); // floor(50*0.9) = 45
        assert_eq!(algo.limit(), 45.0);
        algo.update(&s(5001, 50, false)); // rtt > 5s: floor(45*0.9) = floor(40.5) = 40
        assert_eq!(algo.limit(), 40.0);
        algo.update(&s(5000, 40, false)); // rtt == timeout is not a drop: 80 >= 40, +1
        assert_eq!(algo.limit(), 41.0);
    }

    #[test]
    fn defaults_clamp_at_the_minimum_of_twenty() {
        let mut algo = Aimd::limiter(&cfg(20, 20)).algorithm().clone();
        algo.update(&s(100, 1, true)); // floor(18) clamped to 20
        assert_eq!(algo.limit(), 20.0);
    }
}
