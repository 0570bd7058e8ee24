//! Polly v8 circuit breaker (`CircuitBreakerStrategyOptions`, CircuitStateController,
//! AdvancedCircuitBehavior, Rolling/SingleHealthMetrics), with Polly's parameter names and
//! defaults.
//!
//! Reproduced: health metrics over `SamplingDuration` in 10 rolling windows, each started by
//! the first outcome at least `SamplingDuration / 10` after the current one started, dropped
//! once `now - start >= SamplingDuration` (one window reset every `SamplingDuration` when it
//! is under 200 ms); the break check happens only when a handled failure is recorded in
//! CLOSED: `throughput >= MinimumThroughput && failureRate >= FailureRatio`; OPEN for
//! `BreakDuration`; the first call with `now >= blockedUntil` turns the circuit HALF_OPEN and
//! is its single trial, every other call is rejected while HALF_OPEN (even past another
//! `BreakDuration`: v8 has no second trial); any success arriving in HALF_OPEN closes the
//! circuit and resets the metrics, any failure arriving in HALF_OPEN re-opens it (stragglers
//! included); failures arriving while OPEN only update the metrics; successes always update
//! them.
//!
//! Deliberate differences: every failure and timeout is handled (default `ShouldHandle`);
//! an inner layer's refusal ([`Policy::cancel`]) is a handled failure too, as the inner
//! strategy's rejection exception would be; no `BreakDurationGenerator`, `ManualControl` or
//! `StateProvider`; `SamplingDuration` and `BreakDuration` are accepted below Polly's
//! 0.5 s validation floor (so the single-window path is reachable).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, Completed, Policy, Refusal, Status};
use super::window::Counts;
use crate::engine::{MILLISECOND, Time};
use crate::policy::why::Why;
use crate::policy::{BuildCtx, ConfigError, Facts, FallbackRule, PolicyConfig};
use crate::units::Dur;

/// Polly `CircuitBreakerStrategyOptions` (the fields brownout models).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "PascalCase")]
pub struct PollyConfig {
    /// Failure ratio in [0, 1] that breaks (default 0.1).
    #[serde(default = "tenth")]
    pub failure_ratio: f64,
    /// Outcomes needed in the sampling duration (default 100, at least 2).
    #[serde(default = "hundred")]
    pub minimum_throughput: u32,
    /// Health window (default 30 s).
    #[serde(default = "thirty_s")]
    pub sampling_duration: Dur,
    /// Open duration (default 5 s).
    #[serde(default = "five_s")]
    pub break_duration: Dur,
}

fn tenth() -> f64 {
    0.1
}
fn hundred() -> u32 {
    100
}
fn thirty_s() -> Dur {
    Dur::secs(30)
}
fn five_s() -> Dur {
    Dur::secs(5)
}

impl Default for PollyConfig {
    fn default() -> Self {
        ron::from_str("()").expect("every field has a default")
    }
}

impl PollyConfig {
    /// Check values serde cannot, naming the field.
    fn check(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.failure_ratio) {
            return Err("Polly.FailureRatio must lie in [0, 1]".into());
        }
        if self.minimum_throughput < 2 {
            return Err("Polly.MinimumThroughput must be >= 2".into());
        }
        if self.sampling_duration.ns() == 0 {
            return Err("Polly.SamplingDuration must be > 0".into());
        }
        if self.break_duration.ns() == 0 {
            return Err("Polly.BreakDuration must be > 0".into());
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
struct HealthWindow {
    started_at: Time,
    successes: u64,
    failures: u64,
}

/// Rolling health metrics (10 windows) or a single window for short sampling durations.
#[derive(Debug, Clone)]
struct Health {
    sampling: Time,
    window: Time,
    single: bool,
    windows: VecDeque<HealthWindow>,
}

impl Health {
    fn new(sampling: Time) -> Self {
        Self { sampling, window: sampling / 10, single: sampling < 200 * MILLISECOND, windows: VecDeque::new() }
    }

    /// `UpdateCurrentWindow` / `TryReset`: the window outcomes at `now` go to.
    fn current(&mut self, now: Time) -> &mut HealthWindow {
        let fresh = HealthWindow { started_at: now, successes: 0, failures: 0 };
        if self.single {
            // SingleHealthMetrics starts its window at construction/reset (time zero here).
            if self.windows.is_empty() {
                self.windows.push_back(HealthWindow { started_at: 0, ..fresh });
            }
            if now - self.windows[0].started_at >= self.sampling {
                self.windows[0] = fresh;
            }
            return &mut self.windows[0];
        }
        let stale = self.windows.back().is_none_or(|w| now - w.started_at >= self.window);
        if stale {
            self.windows.push_back(fresh);
        }
        while self.windows.front().is_some_and(|w| now - w.started_at >= self.sampling) {
            self.windows.pop_front();
        }
        self.windows.back_mut().expect("current window")
    }

    fn record(&mut self, now: Time, failed: bool) {
        let w = self.current(now);
        if failed {
            w.failures += 1;
        } else {
            w.successes += 1;
        }
    }

    /// (throughput, failure rate) at `now`.
    fn info(&mut self, now: Time) -> (u64, f64) {
        self.current(now);
        let (s, f) = self.windows.iter().fold((0, 0), |(s, f), w| (s + w.successes, f + w.failures));
        let total = s + f;
        let rate = if total == 0 { 0.0 } else { f as f64 / total as f64 };
        (total, rate)
    }

    fn reset(&mut self, now: Time) {
        self.windows.clear();
        if self.single {
            self.current(now).started_at = now;
        }
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Polly {
    cfg: PollyConfig,
    state: BreakerState,
    health: Health,
    blocked_until: Time,
    why: Why,
}

impl Polly {
    /// Build from config.
    pub fn new(cfg: &PollyConfig) -> Self {
        Self {
            cfg: cfg.clone(),
            state: BreakerState::Closed,
            health: Health::new(cfg.sampling_duration.ns()),
            blocked_until: 0,
            why: Why::Fresh,
        }
    }

    fn open(&mut self, now: Time) {
        self.state = BreakerState::Open;
        self.blocked_until = now.saturating_add(self.cfg.break_duration.ns());
    }

    fn on_failure(&mut self, now: Time) {
        match self.state {
            BreakerState::Closed => {
                self.health.record(now, true);
                let (throughput, rate) = self.health.info(now);
                if throughput >= u64::from(self.cfg.minimum_throughput) && rate >= self.cfg.failure_ratio {
                    let counts =
                        Counts { total: throughput, failed: (rate * throughput as f64).round() as u64, slow: 0 };
                    let failure_pct = self.cfg.failure_ratio * 100.0;
                    self.why = Why::Rates { trial: false, counts, failure_pct, slow_pct: None };
                    self.open(now);
                }
            }
            BreakerState::Open => self.health.record(now, true),
            BreakerState::HalfOpen => {
                self.why = Why::TrialFailed { slow: None };
                self.open(now);
            }
        }
    }

    fn on_success(&mut self, now: Time) {
        self.health.record(now, false);
        if self.state == BreakerState::HalfOpen {
            self.why = Why::TrialsPassed { ok: 1, needed: 1 };
            self.state = BreakerState::Closed;
            self.health.reset(now);
        }
    }
}

impl Policy for Polly {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        if self.state == BreakerState::Open && a.now >= self.blocked_until {
            self.state = BreakerState::HalfOpen;
            let opened = self.blocked_until.saturating_sub(self.cfg.break_duration.ns());
            self.why = Why::BreakOver { open_for: a.now - opened };
            self.blocked_until = a.now.saturating_add(self.cfg.break_duration.ns());
            return Admission::Admit; // the single trial
        }
        match self.state {
            BreakerState::Closed => Admission::Admit,
            _ => Admission::Refuse(Refusal::ShortCircuited),
        }
    }

    fn cancel(&mut self, a: &Attempt) {
        // The inner strategy's rejection is an exception the default ShouldHandle handles.
        self.on_failure(a.now);
    }

    fn complete(&mut self, d: &Completed) {
        if d.outcome.is_failure() {
            self.on_failure(d.now);
        } else {
            self.on_success(d.now);
        }
    }

    fn status(&self) -> Status {
        Status { breaker: Some(self.state), degraded: self.state != BreakerState::Closed, ..Status::default() }
    }

    fn reason(&self) -> String {
        self.why.text()
    }
}

impl PolicyConfig for PollyConfig {
    const KIND: &'static str = "polly-breaker";

    fn facts(&self) -> Facts {
        // A short circuit is a 503 the class's fallback decides.
        Facts::plain(crate::metrics::LayerKind::Breaker).fallback(FallbackRule::Always)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(self.check()?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Polly::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SECOND;
    use crate::policy::CallOutcome::{self, Error, Success};

    const MS: Time = MILLISECOND;

    fn att(now: Time, id: u64) -> Attempt {
        Attempt::new(now, 0, id)
    }
    fn done(b: &mut Polly, now: Time, id: u64, o: CallOutcome) {
        b.complete(&Completed::new(now, 0, id, 0, o));
    }
    fn state(b: &Polly) -> BreakerState {
        b.status().breaker.unwrap()
    }
    fn small() -> PollyConfig {
        PollyConfig {
            failure_ratio: 0.5,
            minimum_throughput: 4,
            sampling_duration: Dur::secs(10),
            break_duration: Dur::secs(5),
        }
    }

    #[test]
    fn defaults_are_the_librarys() {
        assert_eq!(
            PollyConfig::default(),
            PollyConfig {
                failure_ratio: 0.1,
                minimum_throughput: 100,
                sampling_duration: Dur::secs(30),
                break_duration: Dur::secs(5),
            }
        );
    }

    #[test]
    fn checks_only_when_a_failure_is_recorded() {
        let mut b = Polly::new(&small());
        // F, F, F: throughput 3 < 4. Then a success makes 4 outcomes at 75 % failures, but
        // a success never triggers the check.
        for i in 0..3 {
            done(&mut b, i * MS, i, Error);
        }
        done(&mut b, 3 * MS, 3, Success);
        assert_eq!(state(&b), BreakerState::Closed);
        // The next failure: 4 of 5 = 80 % >= 50 %, throughput 5 >= 4: break.
        done(&mut b, 4 * MS, 4, Error);
        assert_eq!(state(&b), BreakerState::Open);
    }

    #[test]
    fn rolling_windows_drop_after_the_sampling_duration() {
        let mut b = Polly::new(&small());
        // Three failures at 0 s open window [0, ...); at 10 s it is dropped
        // (now - start >= 10 s), so the failure at 10 s sees throughput 1.
        for i in 0..3 {
            done(&mut b, 0, i, Error);
        }
        done(&mut b, 10 * SECOND, 3, Error);
        assert_eq!(state(&b), BreakerState::Closed);
        // At 9.999 s the first window would still count: 4 failures -> break.
        let mut c = Polly::new(&small());
        for i in 0..3 {
            done(&mut c, 0, i, Error);
        }
        done(&mut c, 10 * SECOND - 1, 3, Error);
        assert_eq!(state(&c), BreakerState::Open);
    }

    #[test]
    fn single_trial_then_any_success_closes_and_any_failure_reopens() {
        let mut b = Polly::new(&small());
        for i in 0..4 {
            done(&mut b, 0, i, Error);
        }
        let refused = Admission::Refuse(Refusal::ShortCircuited);
        assert_eq!(b.admit(&att(5 * SECOND - 1, 10)), refused);
        assert_eq!(b.admit(&att(5 * SECOND, 11)), Admission::Admit, "now >= blockedUntil");
        assert_eq!(b.admit(&att(5 * SECOND, 12)), refused, "one trial only");
        assert_eq!(b.admit(&att(60 * SECOND, 13)), refused, "no second trial in v8");
        // A straggler's failure arriving while half-open re-opens for 5 s.
        done(&mut b, 61 * SECOND, 99, Error);
        assert_eq!(state(&b), BreakerState::Open);
        assert_eq!(b.admit(&att(66 * SECOND, 14)), Admission::Admit);
        // A straggler's success closes it (the trial is still out).
        done(&mut b, 66 * SECOND, 98, Success);
        assert_eq!(state(&b), BreakerState::Closed);
    }

    #[test]
    fn failures_while_open_only_update_metrics_and_close_resets_them() {
        let mut b = Polly::new(&small());
        for i in 0..4 {
            done(&mut b, 0, i, Error);
        }
        done(&mut b, MS, 5, Error); // open: recorded, no transition
        assert_eq!(b.health.info(MS).0, 5);
        b.admit(&att(5 * SECOND, 6));
        done(&mut b, 5 * SECOND, 6, Success);
        assert_eq!(b.health.info(5 * SECOND).0, 0, "reset on close");
    }

    #[test]
    fn a_short_sampling_duration_uses_one_window() {
        let mut b = Polly::new(&PollyConfig { sampling_duration: Dur::ms(100), minimum_throughput: 2, ..small() });
        // One window [0, 100 ms): a failure at 99 ms and one at 100 ms never meet.
        done(&mut b, 99 * MS, 1, Error);
        done(&mut b, 100 * MS, 2, Error);
        assert_eq!(state(&b), BreakerState::Closed);
        done(&mut b, 150 * MS, 3, Error);
        assert_eq!(state(&b), BreakerState::Open, "window [100, 200): 2 failures");
    }

    #[test]
    fn a_refused_trial_counts_as_a_failure() {
        let mut b = Polly::new(&small());
        for i in 0..4 {
            done(&mut b, 0, i, Error);
        }
        b.admit(&att(5 * SECOND, 7));
        b.cancel(&att(5 * SECOND, 7));
        assert_eq!(state(&b), BreakerState::Open);
    }
}
