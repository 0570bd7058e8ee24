//! Envoy adaptive concurrency, gradient controller: every `concurrency_update_interval` the
//! `sample_aggregate_percentile` of the window's RTTs sets `gradient = clamp((min_rtt + B) /
//! sample_rtt, 0.5, 2.0)` with `B = min_rtt * buffer%`, and `limit = gradient * limit +
//! sqrt(gradient * limit)` (truncated, clamped to [min_concurrency, max_concurrency_limit]).
//!
//! min_rtt is measured in windows that pin the limit to `min_concurrency` until
//! `request_count` samples arrive (samples of requests sent before the window are dropped),
//! then the limit returns to its previous value. Windows recur every `min_rtt_calc_interval`
//! plus a jitter of up to `jitter`% (Envoy: `interval + random() % ceil(interval * jitter)` ms),
//! and start at once when the limit sat at `min_concurrency` for 5 updates in a row. The
//! periodic update is skipped while a min_rtt window is open and resumes after it.
//!
//! Differences: the jitter is a counter-based draw from (the run's seed, layer, instance,
//! window number), so replications vary it; the
//! percentile comes from an HDR histogram (3 significant digits, the bucket's highest value)
//! rather than libcircllhist's interpolation; the controller's timers start at the first
//! attempt it sees (not at build), so windows count from the first traffic.

use serde::{Deserialize, Serialize};

use super::fixed::RefuseAs;
use crate::engine::{MILLISECOND, Time, counter_f64, label_hash};
use crate::policy::percentile::DurationHist;
use crate::policy::why::{Cause, Why};
use crate::policy::{Admission, Attempt, BuildCtx, Completed, Policy, Status};
use crate::policy::{ConfigError, Facts, PolicyConfig};
use crate::units::{Dur, Micros};

/// Envoy gradient controller configuration (proto field names; percents as 0..100).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvoyGradientConfig {
    /// Percentile of the window's RTTs used as the sample RTT, in (0, 100] (default 50).
    #[serde(default = "fifty")]
    pub sample_aggregate_percentile: f64,
    /// How often the limit is recalculated (required in Envoy; >= 1 ms).
    pub concurrency_update_interval: Dur,
    /// Upper bound of the limit.
    #[serde(default = "thousand")]
    pub max_concurrency_limit: u32,
    /// Time between min_rtt measurement windows (>= 1 ms).
    pub min_rtt_calc_interval: Dur,
    /// A fixed min_rtt instead of measuring it (disables the windows).
    #[serde(default)]
    pub fixed_value: Option<Dur>,
    /// Samples that end a min_rtt window (>= 1).
    #[serde(default = "fifty_u")]
    pub request_count: u32,
    /// Random delay added to `min_rtt_calc_interval`, in percent, in [0, 100].
    #[serde(default = "fifteen")]
    pub jitter: f64,
    /// Limit during min_rtt windows, and the lower bound of the limit (>= 1, <= `max_concurrency_limit`).
    #[serde(default = "three")]
    pub min_concurrency: u32,
    /// Tolerated RTT above min_rtt, in percent of min_rtt (>= 0).
    #[serde(default = "twenty_five")]
    pub buffer: f64,
    /// What a refused attempt gets (it is refused at once: the filter has no queue): 503
    /// (`Unavailable`, the default: an `error` whatever the class's `fallback`, as Envoy's
    /// filter answers, "reached concurrency limit"), 429 (`Rejected`, whatever the class's
    /// `fallback`) or the class's fallback at once (`Fallback`; a 429 for a class with
    /// `fallback: None`).
    #[serde(default = "unavailable")]
    pub refuse_as: RefuseAs,
}

// Envoy's `AdaptiveConcurrencyFilter::decodeHeaders`
// (source/extensions/filters/http/adaptive_concurrency/adaptive_concurrency_filter.cc) answers
// a blocked request `sendLocalReply(Http::Code::ServiceUnavailable, ..)`.
fn unavailable() -> RefuseAs {
    RefuseAs::Unavailable
}
fn fifty() -> f64 {
    50.0
}
fn fifty_u() -> u32 {
    50
}
fn thousand() -> u32 {
    1000
}
fn fifteen() -> f64 {
    15.0
}
fn three() -> u32 {
    3
}
fn twenty_five() -> f64 {
    25.0
}

const JITTER: u64 = label_hash("limiter/envoy_gradient/jitter");
/// Updates in a row at min_concurrency that trigger a new min_rtt window (Envoy constant).
const MIN_STREAK: u32 = 5;

/// The controller. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct EnvoyGradient {
    cfg: EnvoyGradientConfig,
    /// The run's seed and this layer-and-instance's key, for the jitter draws.
    seed: u64,
    key: u64,
    started: bool,
    limit: u32,
    in_flight: u32,
    min_rtt: Micros,
    /// Limit to restore after the min_rtt window; 0 = no window open.
    deferred: u32,
    epoch: Time,
    windows: u64,
    at_min_streak: u32,
    sample_timer: Option<Time>,
    min_rtt_timer: Option<Time>,
    /// Round-trip times of the current sample or min_rtt window (microseconds).
    hist: DurationHist,
    why: Why,
}

impl EnvoyGradient {
    /// Build from config for the instance in `ctx`.
    pub fn new(cfg: &EnvoyGradientConfig, ctx: &BuildCtx) -> Self {
        Self {
            cfg: cfg.clone(),
            seed: ctx.seed,
            key: ctx.draw_key(),
            started: false,
            limit: cfg.min_concurrency,
            in_flight: 0,
            min_rtt: cfg.fixed_value.map_or(Micros(0), |d| Micros::from_time(d.ns())),
            deferred: 0,
            epoch: 0,
            windows: 0,
            at_min_streak: 0,
            sample_timer: None,
            min_rtt_timer: None,
            hist: DurationHist::default(),
            why: Why::Fresh,
        }
    }

    /// True while a min_rtt window pins the limit.
    pub fn in_min_rtt_window(&self) -> bool {
        self.deferred > 0
    }

    fn start(&mut self, now: Time) {
        self.started = true;
        if self.cfg.fixed_value.is_none() {
            self.enter_min_rtt_window(now);
        }
        self.sample_timer = Some(now.saturating_add(self.cfg.concurrency_update_interval.ns()));
    }

    fn enter_min_rtt_window(&mut self, now: Time) {
        if self.in_min_rtt_window() {
            return;
        }
        self.deferred = self.limit.max(1);
        self.set_limit(self.cfg.min_concurrency, now, Cause::MinRttStart);
        self.hist.reset();
        self.epoch = now;
    }

    fn jittered_interval(&mut self) -> Time {
        let interval_ms = self.cfg.min_rtt_calc_interval.ns() / MILLISECOND;
        let range_ms = (interval_ms as f64 * self.cfg.jitter / 100.0).ceil() as u64;
        let u = counter_f64(self.seed, JITTER, self.key, self.windows);
        self.windows += 1;
        let extra_ms = if range_ms == 0 { 0 } else { ((u * range_ms as f64) as u64).min(range_ms - 1) };
        (interval_ms + extra_ms) * MILLISECOND
    }

    fn end_min_rtt_window(&mut self, now: Time) {
        self.min_rtt = self.aggregate_and_clear();
        let restore = self.deferred;
        let min_rtt = self.min_rtt.to_time();
        self.set_limit(restore, now, Cause::MinRttEnd { min_rtt });
        self.deferred = 0;
        self.min_rtt_timer = Some(now.saturating_add(self.jittered_interval()));
        self.sample_timer = Some(now.saturating_add(self.cfg.concurrency_update_interval.ns()));
    }

    fn aggregate_and_clear(&mut self) -> Micros {
        let v = self.hist.quantile(self.cfg.sample_aggregate_percentile / 100.0);
        self.hist.reset();
        v
    }

    fn update_from_samples(&mut self, now: Time) {
        if self.hist.is_empty() {
            return;
        }
        let sample = self.aggregate_and_clear().max(Micros(1));
        let min = self.min_rtt.0 as f64;
        let buffered = min + min * self.cfg.buffer / 100.0;
        let gradient = (buffered / sample.0 as f64).clamp(0.5, 2.0);
        let scaled = self.limit as f64 * gradient;
        let next = (scaled + scaled.sqrt()) as u32;
        let bounded = next.min(self.cfg.max_concurrency_limit).max(self.cfg.min_concurrency);
        let (reference, sample) = ((buffered * 1e3) as Time, sample.to_time());
        self.set_limit(bounded, now, Cause::Gradient { gradient, reference, sample });
    }

    fn set_limit(&mut self, next: u32, now: Time, cause: Cause) {
        let (old, min) = (self.limit, self.cfg.min_concurrency);
        if next != old {
            self.why = Why::Limit { name: "Envoy gradient", from: old as f64, to: next as f64, cause };
        }
        self.limit = next;
        if !self.in_min_rtt_window() && old == min && next == min {
            self.at_min_streak += 1;
        } else {
            self.at_min_streak = 0;
        }
        // Stuck at the minimum: the min_rtt may be wrong, and the limit is already where a
        // measurement needs it, so measure again now.
        if self.at_min_streak >= MIN_STREAK && self.cfg.fixed_value.is_none() {
            self.min_rtt_timer = Some(now);
        }
    }
}

impl Policy for EnvoyGradient {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        if !self.started {
            self.start(a.now);
        }
        if self.in_flight < self.limit {
            self.in_flight += 1;
            Admission::Admit
        } else {
            Admission::Refuse(self.cfg.refuse_as.refusal())
        }
    }

    fn cancel(&mut self, _a: &Attempt) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    fn complete(&mut self, d: &Completed) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if d.admitted_at < self.epoch {
            return; // sent before the current min_rtt window
        }
        // Envoy records whole microseconds.
        self.hist.record(d.duration());
        if self.in_min_rtt_window() && self.hist.len() >= self.cfg.request_count as u64 {
            self.end_min_rtt_window(d.now);
        }
    }

    fn on_wakeup(&mut self, now: Time) {
        if self.min_rtt_timer.is_some_and(|t| t <= now) {
            self.min_rtt_timer = None;
            self.enter_min_rtt_window(now);
        }
        if self.sample_timer.is_some_and(|t| t <= now) {
            if self.in_min_rtt_window() {
                // Resumed when the window ends.
                self.sample_timer = None;
            } else {
                self.update_from_samples(now);
                self.sample_timer = Some(now.saturating_add(self.cfg.concurrency_update_interval.ns()));
            }
        }
    }

    fn status(&self) -> Status {
        let wake_at = match (self.sample_timer, self.min_rtt_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Status { limit: Some(self.limit as f64), wake_at, ..Status::default() }
    }

    fn reason(&self) -> String {
        self.why.text()
    }
}

/// Validation messages for [`EnvoyGradientConfig`].
fn check(c: &EnvoyGradientConfig) -> Result<(), String> {
    if c.concurrency_update_interval.ns() < MILLISECOND {
        return Err("EnvoyGradient.concurrency_update_interval must be >= 1ms".into());
    }
    if c.min_rtt_calc_interval.ns() < MILLISECOND {
        return Err("EnvoyGradient.min_rtt_calc_interval must be >= 1ms".into());
    }
    if !(0.0 < c.sample_aggregate_percentile && c.sample_aggregate_percentile <= 100.0) {
        return Err("EnvoyGradient.sample_aggregate_percentile must lie in (0, 100]".into());
    }
    if !(0.0..=100.0).contains(&c.jitter) {
        return Err("EnvoyGradient.jitter must lie in [0, 100]".into());
    }
    if c.buffer.is_nan() || c.buffer < 0.0 {
        return Err("EnvoyGradient.buffer must be >= 0".into());
    }
    if c.min_concurrency == 0 || c.min_concurrency > c.max_concurrency_limit {
        return Err("EnvoyGradient.min_concurrency must be >= 1 and <= max_concurrency_limit".into());
    }
    if c.request_count == 0 {
        return Err("EnvoyGradient.request_count must be >= 1".into());
    }
    Ok(())
}

impl PolicyConfig for EnvoyGradientConfig {
    const KIND: &'static str = "envoy-gradient";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Limiter).fallback(self.refuse_as.fallback_rule())
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(check(self)?)
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(EnvoyGradient::new(self, ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{CallOutcome, Refusal};

    fn att(now: Time, id: u64, class: crate::policy::ClassId) -> Attempt {
        Attempt::new(now, class, id)
    }

    fn done(now: Time, id: u64, class: crate::policy::ClassId, admitted_at: Time, outcome: CallOutcome) -> Completed {
        Completed::new(now, class, id, admitted_at, outcome)
    }

    fn ron<T: serde::de::DeserializeOwned>(s: &str) -> T {
        ron::from_str(s).expect("valid RON")
    }

    // Worked by hand from Envoy's `GradientController` (source/extensions/filters/http/
    // adaptive_concurrency/controller/gradient_controller.cc): gradient = (min_rtt + buffer)
    // / sample, clamped to [0.5, 2]; limit = limit * gradient + sqrt(limit * gradient).

    fn envoy() -> EnvoyGradient {
        let cfg: EnvoyGradientConfig = ron(r#"(concurrency_update_interval: "100ms", min_rtt_calc_interval: "60s",
                request_count: 5, jitter: 0.0)"#);
        EnvoyGradient::new(&cfg, &BuildCtx::default())
    }

    /// Admit one attempt at `at` and complete it `rtt_us` microseconds later.
    fn envoy_call(e: &mut EnvoyGradient, id: u64, at: Time, rtt_us: u64) {
        assert_eq!(e.admit(&att(at, id, 0)), Admission::Admit);
        e.complete(&done(at + rtt_us * 1000, id, 0, at, CallOutcome::Success));
    }

    #[test]
    fn envoy_min_rtt_window_then_gradient_updates() {
        let mut e = envoy();
        for id in 1..=3 {
            assert_eq!(e.admit(&att(0, id, 0)), Admission::Admit);
        }
        // The min_rtt window pins the limit to min_concurrency = 3; over it, Envoy's 503.
        assert_eq!(e.admit(&att(0, 4, 0)), Admission::Refuse(Refusal::Unavailable));
        assert!(e.in_min_rtt_window());
        for id in 1..=3 {
            e.complete(&done(MILLISECOND, id, 0, 0, CallOutcome::Success));
        }
        envoy_call(&mut e, 5, MILLISECOND, 1000);
        envoy_call(&mut e, 6, MILLISECOND, 1000); // 5th sample ends the window at 2 ms
        assert!(!e.in_min_rtt_window());
        assert_eq!(e.min_rtt, Micros(1000));
        assert_eq!(e.limit, 3);
        assert_eq!(e.status().wake_at, Some(102 * MILLISECOND));
        // Sample 1000 us: gradient = 1250/1000 = 1.25; 3*1.25 = 3.75; + sqrt(3.75) = 5.69 -> 5.
        envoy_call(&mut e, 7, 10 * MILLISECOND, 1000);
        e.on_wakeup(102 * MILLISECOND);
        assert_eq!(e.limit, 5);
        // Sample 2000 us: gradient 0.625; 3.125 + sqrt(3.125) = 4.89 -> 4.
        envoy_call(&mut e, 8, 110 * MILLISECOND, 2000);
        e.on_wakeup(202 * MILLISECOND);
        assert_eq!(e.limit, 4);
        // No samples: no change.
        e.on_wakeup(302 * MILLISECOND);
        assert_eq!(e.limit, 4);
    }

    #[test]
    fn envoy_remeasures_min_rtt_after_five_updates_at_the_minimum() {
        let mut e = envoy();
        for id in 1..=5 {
            envoy_call(&mut e, id, 0, 1000);
        }
        // The window ended at 1 ms, so the updates fall at 101 ms, 201 ms, ...
        assert_eq!(e.limit, 3);
        let mut t = 101 * MILLISECOND;
        // 10 ms samples: gradient clamps to 0.5; 3*0.5 + sqrt(1.5) = 2.72 -> clamped to 3.
        for (id, k) in (100..).zip(1..=5) {
            envoy_call(&mut e, id, t - 20 * MILLISECOND, 10_000);
            e.on_wakeup(t);
            assert_eq!(e.limit, 3);
            if k < 5 {
                assert_eq!(e.status().wake_at, Some(t + 100 * MILLISECOND));
            }
            t += 100 * MILLISECOND;
        }
        let fifth = t - 100 * MILLISECOND;
        // The fifth update at the minimum asks for a min_rtt window at once.
        assert_eq!(e.status().wake_at, Some(fifth));
        e.on_wakeup(fifth);
        assert!(e.in_min_rtt_window());
    }
}
