//! Hystrix circuit breaker (HystrixCircuitBreakerImpl 1.5 fed by HealthCountsStream), with the
//! `HystrixCommandProperties.Setter` names (without `with`) and defaults.
//!
//! Reproduced: outcomes land in health buckets of `metricsHealthSnapshotIntervalInMilliseconds`
//! (500 ms), `metricsRollingStatisticalWindowInMilliseconds / interval` of them (20), whatever
//! the breaker's state; every interval a snapshot sums the completed buckets and, only if
//! CLOSED, trips when `total >= circuitBreakerRequestVolumeThreshold` and the integer
//! `errorPercentage = (int)(errors * 100 / total) >= circuitBreakerErrorThresholdPercentage`.
//! Errors are failures, timeouts and rejections: an inner layer's refusal
//! ([`Policy::cancel`]) counts as a rejection. OPEN lasts until strictly after
//! `circuitBreakerSleepWindowInMilliseconds`; the next call then turns it HALF_OPEN and is the
//! single probe, every other call is short-circuited; any success arriving while HALF_OPEN
//! closes it and resets the health stream, any failure, timeout or rejection re-opens it with
//! a new sleep window (stragglers included; a probe that never returns leaves it HALF_OPEN).
//! `executionTimeoutInMilliseconds` (1000, with `executionTimeoutEnabled`) is offered to the
//! world as the attempt timeout.
//!
//! Deliberate differences: buckets and snapshots sit on a grid from virtual time zero (the
//! stream's subscription time in Hystrix), also after a reset; `metricsRollingStatisticalWindowBuckets`
//! (10) is accepted and validated but, as in Hystrix, the health stream buckets by the snapshot
//! interval; no forceOpen/forceClosed; a refused probe re-opens the breaker (Hystrix's
//! thread-pool rejection path calls markNonSuccess; its semaphore path does not).

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, ClassId, Completed, Policy, Refusal, Status};
use super::window::{Sample, Window};
use crate::engine::{MILLISECOND, Time};
use crate::policy::why::Why;
use crate::policy::{BuildCtx, ConfigError, Facts, FallbackRule, PolicyConfig};

/// Hystrix command properties (the circuit-breaker and timeout ones).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HystrixConfig {
    /// Requests in the rolling window before the error percentage counts (default 20).
    #[serde(default = "twenty")]
    pub circuit_breaker_request_volume_threshold: u32,
    /// Error percentage that trips, 0 to 100 (default 50).
    #[serde(default = "fifty")]
    pub circuit_breaker_error_threshold_percentage: u32,
    /// Open time before a probe (default 5000 ms).
    #[serde(default = "five_thousand")]
    pub circuit_breaker_sleep_window_in_milliseconds: u64,
    /// Rolling window (default 10000 ms).
    #[serde(default = "ten_thousand")]
    pub metrics_rolling_statistical_window_in_milliseconds: u64,
    /// Buckets of the rolling counters (default 10; must divide the window).
    #[serde(default = "ten")]
    pub metrics_rolling_statistical_window_buckets: u32,
    /// Health snapshot period and health bucket width (default 500 ms).
    #[serde(default = "five_hundred")]
    pub metrics_health_snapshot_interval_in_milliseconds: u64,
    /// Whether the execution timeout applies (default true).
    #[serde(default = "yes")]
    pub execution_timeout_enabled: bool,
    /// Execution timeout (default 1000 ms).
    #[serde(default = "thousand")]
    pub execution_timeout_in_milliseconds: u64,
}

fn twenty() -> u32 {
    20
}
fn fifty() -> u32 {
    50
}
fn ten() -> u32 {
    10
}
fn five_thousand() -> u64 {
    5_000
}
fn ten_thousand() -> u64 {
    10_000
}
fn five_hundred() -> u64 {
    500
}
fn thousand() -> u64 {
    1_000
}
fn yes() -> bool {
    true
}

impl Default for HystrixConfig {
    fn default() -> Self {
        ron::from_str("()").expect("every field has a default")
    }
}

impl HystrixConfig {
    /// Check values serde cannot, naming the field.
    fn check(&self) -> Result<(), String> {
        let p = "Hystrix";
        let window = self.metrics_rolling_statistical_window_in_milliseconds;
        let buckets = u64::from(self.metrics_rolling_statistical_window_buckets);
        let snap = self.metrics_health_snapshot_interval_in_milliseconds;
        if self.circuit_breaker_error_threshold_percentage > 100 {
            return Err(format!("{p}.circuitBreakerErrorThresholdPercentage must be <= 100"));
        }
        if self.circuit_breaker_sleep_window_in_milliseconds == 0 {
            return Err(format!("{p}.circuitBreakerSleepWindowInMilliseconds must be > 0"));
        }
        if buckets == 0 || window == 0 || !window.is_multiple_of(buckets) {
            return Err(format!(
                "{p}.metricsRollingStatisticalWindowBuckets must divide metricsRollingStatisticalWindowInMilliseconds"
            ));
        }
        if snap == 0 || snap > window {
            return Err(format!("{p}.metricsHealthSnapshotIntervalInMilliseconds must lie in [1, window]"));
        }
        if self.execution_timeout_enabled && self.execution_timeout_in_milliseconds == 0 {
            return Err(format!("{p}.executionTimeoutInMilliseconds must be > 0"));
        }
        Ok(())
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Hystrix {
    cfg: HystrixConfig,
    state: BreakerState,
    health: Window,
    interval: Time,
    next_snapshot: Time,
    opened_at: Time,
    why: Why,
}

impl Hystrix {
    /// Build from config.
    pub fn new(cfg: &HystrixConfig) -> Self {
        let interval = cfg.metrics_health_snapshot_interval_in_milliseconds.max(1) * MILLISECOND;
        let n = (cfg.metrics_rolling_statistical_window_in_milliseconds * MILLISECOND / interval).max(1) as u32;
        Self {
            cfg: cfg.clone(),
            state: BreakerState::Closed,
            // One spare bucket: the one filling now, left out of each snapshot.
            health: Window::time(n + 1, interval),
            interval,
            next_snapshot: interval,
            opened_at: 0,
            why: Why::Fresh,
        }
    }

    fn sleep_window(&self) -> Time {
        self.cfg.circuit_breaker_sleep_window_in_milliseconds * MILLISECOND
    }

    /// `HystrixCircuitBreakerImpl`'s subscriber: one health snapshot at `at`.
    fn snapshot(&mut self, at: Time) {
        let c = self.health.completed(at);
        if self.state != BreakerState::Closed
            || c.total < u64::from(self.cfg.circuit_breaker_request_volume_threshold)
            || c.total == 0
        {
            return;
        }
        let error_pct = c.failed * 100 / c.total; // (int) truncation, as HealthCounts does
        if error_pct >= u64::from(self.cfg.circuit_breaker_error_threshold_percentage) {
            let failure_pct = f64::from(self.cfg.circuit_breaker_error_threshold_percentage);
            self.why = Why::Rates { trial: false, counts: c, failure_pct, slow_pct: None };
            self.state = BreakerState::Open;
            self.opened_at = at;
        }
    }

    /// Take the snapshots due by `now`, in order. Hooks call it before recording, so a
    /// snapshot never sees a later outcome, and the breaker stays exact even when a timer
    /// fires late (or was never armed).
    fn catch_up(&mut self, now: Time) {
        while now >= self.next_snapshot {
            let at = self.next_snapshot;
            self.next_snapshot += self.interval;
            self.snapshot(at);
        }
    }

    /// `markNonSuccess`: HALF_OPEN -> OPEN with a new sleep window.
    fn non_success(&mut self, now: Time) {
        self.catch_up(now);
        self.health.record(now, Sample { failed: true, slow: false });
        if self.state == BreakerState::HalfOpen {
            self.why = Why::TrialFailed { slow: None };
            self.state = BreakerState::Open;
            self.opened_at = now;
        }
    }
}

impl Policy for Hystrix {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ATTEMPT_TIMEOUT).with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        self.catch_up(a.now);
        match self.state {
            BreakerState::Closed => Admission::Admit,
            // isAfterSleepWindow: currentTime > circuitOpened + sleepWindow.
            BreakerState::Open if a.now > self.opened_at + self.sleep_window() => {
                self.state = BreakerState::HalfOpen;
                self.why = Why::BreakOver { open_for: a.now - self.opened_at };
                Admission::Admit
            }
            _ => Admission::Refuse(Refusal::ShortCircuited),
        }
    }

    fn cancel(&mut self, a: &Attempt) {
        self.non_success(a.now); // a rejection: an error in the health counts
    }

    fn complete(&mut self, d: &Completed) {
        if d.outcome.is_failure() {
            self.non_success(d.now);
            return;
        }
        let ok = Sample { failed: false, slow: false };
        self.catch_up(d.now);
        self.health.record(d.now, ok);
        if self.state == BreakerState::HalfOpen {
            // markSuccess: CLOSED and metrics.resetStream().
            self.why = Why::TrialsPassed { ok: 1, needed: 1 };
            self.state = BreakerState::Closed;
            self.health.clear();
        }
    }

    fn attempt_timeout(&self, _class: ClassId) -> Option<(Time, Time)> {
        self.cfg.execution_timeout_enabled.then(|| (self.cfg.execution_timeout_in_milliseconds * MILLISECOND, 0))
    }

    fn on_wakeup(&mut self, now: Time) {
        self.catch_up(now);
    }

    fn status(&self) -> Status {
        Status {
            breaker: Some(self.state),
            wake_at: Some(self.next_snapshot),
            degraded: self.state != BreakerState::Closed,
            ..Status::default()
        }
    }

    fn reason(&self) -> String {
        self.why.text()
    }
}

impl PolicyConfig for HystrixConfig {
    const KIND: &'static str = "hystrix-breaker";

    fn facts(&self) -> Facts {
        // One bucket per health snapshot in the rolling window.
        let buckets = self.metrics_rolling_statistical_window_in_milliseconds as f64
            / self.metrics_health_snapshot_interval_in_milliseconds.max(1) as f64;
        Facts::plain(crate::metrics::LayerKind::Breaker).fallback(FallbackRule::Always).window_samples(buckets)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(self.check()?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Hystrix::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SECOND;
    use crate::policy::CallOutcome::{self, Error, Success, Timeout};

    const MS: Time = MILLISECOND;

    fn att(now: Time, id: u64) -> Attempt {
        Attempt::new(now, 0, id)
    }
    fn done(b: &mut Hystrix, now: Time, id: u64, o: CallOutcome) {
        b.complete(&Completed::new(now, 0, id, 0, o));
    }
    fn state(b: &Hystrix) -> BreakerState {
        b.status().breaker.unwrap()
    }

    #[test]
    fn defaults_are_the_librarys() {
        let c = HystrixConfig::default();
        assert_eq!(c.circuit_breaker_request_volume_threshold, 20);
        assert_eq!(c.circuit_breaker_error_threshold_percentage, 50);
        assert_eq!(c.circuit_breaker_sleep_window_in_milliseconds, 5_000);
        assert_eq!(c.metrics_rolling_statistical_window_in_milliseconds, 10_000);
        assert_eq!(c.metrics_health_snapshot_interval_in_milliseconds, 500);
        assert_eq!(Hystrix::new(&c).attempt_timeout(0), Some((SECOND, 0)));
    }

    #[test]
    fn trips_only_at_a_snapshot_on_completed_buckets() {
        let mut b = Hystrix::new(&HystrixConfig::default());
        // 10 errors + 10 successes in [0, 500 ms): 50 % of 20 >= 50 %.
        for i in 0..10 {
            done(&mut b, 100 * MS, i, Error);
            done(&mut b, 100 * MS, 100 + i, Success);
        }
        assert_eq!(state(&b), BreakerState::Closed, "no per-call decision");
        assert_eq!(b.status().wake_at, Some(500 * MS));
        b.on_wakeup(500 * MS);
        assert_eq!(state(&b), BreakerState::Open);
    }

    #[test]
    fn outcomes_in_the_filling_bucket_wait_for_the_next_snapshot() {
        let mut b = Hystrix::new(&HystrixConfig::default());
        for i in 0..19 {
            done(&mut b, 100 * MS, i, Timeout);
        }
        // The 20th arrives at exactly 500 ms: it belongs to bucket [500, 1000).
        done(&mut b, 500 * MS, 19, Error);
        b.on_wakeup(500 * MS);
        assert_eq!(state(&b), BreakerState::Closed, "19 < requestVolumeThreshold 20");
        b.on_wakeup(SECOND);
        assert_eq!(state(&b), BreakerState::Open);
    }

    #[test]
    fn integer_error_percentage_and_rolling_expiry() {
        let mut b = Hystrix::new(&HystrixConfig {
            circuit_breaker_request_volume_threshold: 3,
            circuit_breaker_error_threshold_percentage: 67,
            ..HystrixConfig::default()
        });
        // 2 of 3 = 66.67 % -> (int) 66 < 67: no trip.
        done(&mut b, 0, 1, Error);
        done(&mut b, 0, 2, Error);
        done(&mut b, 0, 3, Success);
        b.on_wakeup(500 * MS);
        assert_eq!(state(&b), BreakerState::Closed);
        // Two more errors at 9.9 s: bucket 0 (from 0 s) leaves the 10 s window at the
        // 10.5 s snapshot; at 10 s it still counts: 4 of 5 = 80 %.
        let mut c =
            Hystrix::new(&HystrixConfig { circuit_breaker_request_volume_threshold: 5, ..HystrixConfig::default() });
        for i in 0..3 {
            done(&mut c, 0, i, if i == 0 { Success } else { Error });
        }
        done(&mut c, 9_900 * MS, 8, Error);
        done(&mut c, 9_900 * MS, 9, Error);
        c.on_wakeup(10 * SECOND);
        assert_eq!(state(&c), BreakerState::Open);
        // Three errors at 0 s and two at 10.2 s: the 10.5 s snapshot covers buckets
        // [0.5 s, 10.5 s), so bucket 0 has left and only 2 < 5 calls remain.
        let mut d =
            Hystrix::new(&HystrixConfig { circuit_breaker_request_volume_threshold: 5, ..HystrixConfig::default() });
        for i in 0..3 {
            done(&mut d, 0, i, Error);
        }
        d.on_wakeup(10 * SECOND); // snapshots 0.5 s .. 10 s see 3 calls
        done(&mut d, 10_200 * MS, 8, Error);
        done(&mut d, 10_200 * MS, 9, Error);
        d.on_wakeup(10_500 * MS);
        assert_eq!(state(&d), BreakerState::Closed);
    }

    #[test]
    fn a_late_hook_takes_the_missed_snapshots_first() {
        let mut b =
            Hystrix::new(&HystrixConfig { circuit_breaker_request_volume_threshold: 2, ..HystrixConfig::default() });
        done(&mut b, 100 * MS, 1, Error);
        done(&mut b, 200 * MS, 2, Error);
        // No timer fired; the call at 1.2 s first takes the 0.5 s snapshot (2 errors: trip,
        // opened at 0.5 s) and is short-circuited.
        assert_eq!(b.admit(&att(1_200 * MS, 3)), Admission::Refuse(Refusal::ShortCircuited));
        assert_eq!(b.status().wake_at, Some(1_500 * MS));
        // Sleep window counted from the 0.5 s snapshot: a probe strictly after 5.5 s.
        assert_eq!(b.admit(&att(5_500 * MS, 4)), Admission::Refuse(Refusal::ShortCircuited));
        assert_eq!(b.admit(&att(5_500 * MS + 1, 5)), Admission::Admit);
    }

    #[test]
    fn single_probe_after_the_sleep_window() {
        let mut b =
            Hystrix::new(&HystrixConfig { circuit_breaker_request_volume_threshold: 1, ..HystrixConfig::default() });
        done(&mut b, 0, 1, Error);
        b.on_wakeup(500 * MS); // open at 500 ms
        let refused = Admission::Refuse(Refusal::ShortCircuited);
        assert_eq!(b.admit(&att(5_500 * MS, 2)), refused, "not strictly after");
        assert_eq!(b.admit(&att(5_500 * MS + 1, 3)), Admission::Admit);
        assert_eq!(b.admit(&att(5_500 * MS + 1, 4)), refused, "single probe");
        b.cancel(&att(5_500 * MS + 2, 3)); // refused further in: a rejection
        assert_eq!(state(&b), BreakerState::Open);
        let t = 5_500 * MS + 2;
        assert_eq!(b.admit(&att(t + 5 * SECOND + 1, 5)), Admission::Admit);
        done(&mut b, t + 5 * SECOND + 10, 5, Success);
        assert_eq!(state(&b), BreakerState::Closed);
        // The stream was reset: the earlier errors no longer count.
        b.on_wakeup(20 * SECOND);
        assert_eq!(state(&b), BreakerState::Closed);
    }
}
