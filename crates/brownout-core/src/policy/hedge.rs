//! Hedged requests: when a call has been out longer than a delay, send a second one and
//! take whichever answers first.
//!
//! Two ways to pick the delay: fixed (Polly v8's `HedgingStrategyOptions.Delay`, with one
//! hedged attempt) or a latency percentile of recent calls (tower's `Hedge`: a histogram
//! rotated every `period`, used once it holds `min_data_points`). Deliberate difference from
//! tower: the percentile is computed once per rotation from the previous period's samples
//! (exact order statistic) instead of from a continuously rotating HDR histogram.

use serde::{Deserialize, Serialize};

use super::percentile::nearest_rank;
use super::{Admission, Attempt, ClassId, Completed, Policy};
use crate::engine::Time;
use crate::policy::{BuildCtx, ConfigError, Facts, PolicyConfig};
use crate::units::Dur;

/// Hedging configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HedgeConfig {
    /// A fixed delay (Polly). Leave out to use the percentile.
    #[serde(default)]
    pub delay: Option<Dur>,
    /// Latency percentile in (0, 1) that triggers the hedge (tower's `latency_percentile`).
    #[serde(default = "p95")]
    pub latency_percentile: f64,
    /// Latency samples (count) needed in the previous period before hedging (tower's `min_data_points`).
    #[serde(default = "twenty")]
    pub min_data_points: u32,
    /// Rotation period of the latency record (tower's `period`; > 0).
    #[serde(default = "ten_s")]
    pub period: Dur,
}

fn p95() -> f64 {
    0.95
}
fn twenty() -> u32 {
    20
}
fn ten_s() -> Dur {
    Dur::secs(10)
}

// `!(x > 0.0 && ..)` is deliberate: it also rejects NaN.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
impl PolicyConfig for HedgeConfig {
    const KIND: &'static str = "hedge";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Other).may_call_again(true)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        if !(self.latency_percentile > 0.0 && self.latency_percentile < 1.0) {
            return Err("Hedge.latency_percentile must lie in (0, 1)".into());
        }
        if self.period.ns() == 0 {
            return Err("Hedge.period must be > 0".into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Hedge::new(self))
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Hedge {
    fixed: Option<Time>,
    percentile: f64,
    min_points: usize,
    period: Time,
    period_start: Time,
    current: Vec<Time>,
    threshold: Option<Time>,
}

impl Hedge {
    /// Build from config.
    pub fn new(cfg: &HedgeConfig) -> Self {
        Self {
            fixed: cfg.delay.map(|d| d.ns()),
            percentile: cfg.latency_percentile,
            min_points: cfg.min_data_points as usize,
            period: cfg.period.ns().max(1),
            period_start: 0,
            current: Vec::new(),
            threshold: None,
        }
    }

    fn rotate(&mut self, now: Time) {
        if now < self.period_start.saturating_add(self.period) {
            return;
        }
        // The last full period's samples set the threshold; an idle gap leaves none.
        let fresh = now < self.period_start.saturating_add(self.period.saturating_mul(2));
        self.threshold = if fresh && self.current.len() >= self.min_points && !self.current.is_empty() {
            nearest_rank(&mut self.current, self.percentile)
        } else {
            None
        };
        self.current.clear();
        self.period_start = now - (now - self.period_start) % self.period;
    }
}

impl Policy for Hedge {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::HEDGE_DELAY).with(crate::policy::Hooks::ADMIT)
    }

    fn reports_status(&self) -> bool {
        false // `status` is the default, always
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        self.rotate(a.now);
        Admission::Admit
    }

    fn complete(&mut self, d: &Completed) {
        self.rotate(d.now);
        if self.fixed.is_none() && !d.outcome.is_failure() {
            self.current.push(d.duration());
        }
    }

    fn hedge_delay(&self, _class: ClassId) -> Option<Time> {
        self.fixed.or(self.threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MILLISECOND, SECOND};
    use crate::policy::CallOutcome;

    #[test]
    fn percentile_of_the_last_period_after_enough_points() {
        let mut h = Hedge::new(&HedgeConfig {
            delay: None,
            latency_percentile: 0.9,
            min_data_points: 10,
            period: Dur::secs(10),
        });
        // Durations 1..=10 ms completing at 0.9, 1.8, ..., 9 s (all inside the first period):
        // the 90th percentile is the order statistic of rank ceil(0.9 * 10) = 9, i.e. 9 ms.
        for k in 1..=10u64 {
            h.complete(&Completed::new(
                k * 900 * MILLISECOND,
                0,
                k,
                k * 900 * MILLISECOND - k * MILLISECOND,
                CallOutcome::Success,
            ));
        }
        assert_eq!(h.hedge_delay(0), None, "not rotated yet");
        h.admit(&Attempt::new(10 * SECOND, 0, 99));
        assert_eq!(h.hedge_delay(0), Some(9 * MILLISECOND));
        // A whole idle period later the record is stale: no hedging.
        h.admit(&Attempt::new(35 * SECOND, 0, 100));
        assert_eq!(h.hedge_delay(0), None);
    }

    #[test]
    fn fixed_delay_is_polly_style() {
        let h = Hedge::new(&HedgeConfig {
            delay: Some(Dur::ms(200)),
            latency_percentile: 0.95,
            min_data_points: 20,
            period: Dur::secs(10),
        });
        assert_eq!(h.hedge_delay(0), Some(200 * MILLISECOND));
    }
}
