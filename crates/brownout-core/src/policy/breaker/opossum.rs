//! opossum (Node, npm `opossum` 10.0.0) `CircuitBreaker`, with its option names (in
//! snake_case) and defaults. Checked step for step against the real package by
//! `tests/policies/differential.rs`.
//!
//! Reproduced (lib/circuit.js, lib/status.js):
//! - Every call is a *fire*, counted when it starts, also when the breaker rejects it; the
//!   error rate is `failures / fires * 100` over the rolling window, so calls still in flight
//!   and rejected calls count in the denominator (a failure with no fire left in the window
//!   gives an infinite rate, as JavaScript's `1 / 0`).
//! - The window is `rolling_count_buckets` buckets of `floor(rolling_count_timeout /
//!   rolling_count_buckets)` whole ms, rotated by an interval timer started at time 0; it is
//!   never cleared on close.
//! - The check is made only when a call fails: no trip while `fires < volume_threshold`
//!   (unless half-open), trip when the rate is strictly above `error_threshold_percentage`.
//! - `reset_timeout` runs as a timer from the moment the breaker opens; then HALF_OPEN lets
//!   exactly one call through (`pendingClose`). Any success while half-open closes the
//!   breaker, any failure re-opens it, stragglers' outcomes included.
//! - `timeout` is the breaker's own call timeout: a timed-out call is a failure (brownout's
//!   per-attempt timeout, [`Policy::attempt_timeout`], unwind 0). `"0s"` = no timeout
//!   (opossum's `timeout: false`).
//! - `capacity` (the semaphore): a call over it is rejected and counted as a failure
//!   (opossum's `semaphoreLocked` goes through the failure path); `0` rejects every call
//!   (`new Semaphore(0)`); left out, unbounded (`Number.MAX_SAFE_INTEGER`).
//! - `allow_warm_up`: no trip during the first `rolling_count_timeout`.
//! - Node timer delays under 1 ms or over 2^31 - 1 ms run after 1 ms, as Node does.
//! - Timers due at the same ms run in the order they were set (as the fake clock the
//!   differential test drives opossum with orders them): the bucket rotation is re-armed
//!   each time it runs, a call's timeout is set when the call starts, the reset timer when
//!   the breaker opens. So a timeout due at a rotation runs first when it was set before the
//!   previous rotation (a timeout longer than a bucket), after it otherwise.
//!
//! Differences: an attempt an inner layer refuses or that gives up waiting inside
//! ([`Policy::cancel`]) is a failure, as opossum sees the wrapped function reject; the call
//! timeout starts when the dependency call starts (after inner layers' queues); an answer
//! arriving exactly at the timeout wins (opossum's timer would fire first).
//!
//! Options brownout cannot express: `errorFilter` (errors counted as successes), `enabled:
//! false` / `disable()` (no protection), `healthCheck`, `cache`, `coalesce`,
//! `abortController`, a pre-filled `status` or `state` (a breaker starting open or
//! half-open), `rotateBucketController` (shared bucket timer), `fallback` (brownout's
//! class fallback plays its part), and the metrics-only options (`rollingPercentilesEnabled`,
//! `enableSnapshots`, `name`, `group`).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, ClassId, Completed, Policy, Refusal, Status};
use crate::engine::{MILLISECOND, Time};
use crate::policy::{BuildCtx, CallOutcome, ConfigError, Facts, FallbackRule, PolicyConfig};
use crate::units::Dur;

/// opossum's `CircuitBreaker` options (the ones brownout models).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpossumConfig {
    /// `timeout`: the breaker's own call timeout, whole ms (default 10 s; `"0s"` = none).
    #[serde(default = "ten_s")]
    pub timeout: Dur,
    /// `errorThresholdPercentage`: trip when the error rate is strictly above it, in [0, 100]
    /// (default 50).
    #[serde(default = "fifty")]
    pub error_threshold_percentage: f64,
    /// `resetTimeout`: how long it stays open before one trial call, whole ms (default 30 s).
    #[serde(default = "thirty_s")]
    pub reset_timeout: Dur,
    /// `rollingCountTimeout`: the rolling window's length, whole ms (> 0; default 10 s).
    #[serde(default = "ten_s")]
    pub rolling_count_timeout: Dur,
    /// `rollingCountBuckets`: buckets in the window (>= 1; default 10).
    #[serde(default = "ten")]
    pub rolling_count_buckets: u32,
    /// `volumeThreshold`: fires in the window needed before it may trip (default 0).
    #[serde(default)]
    pub volume_threshold: u32,
    /// `capacity`: calls in flight at once, over it a call is rejected as a failure; 0
    /// rejects every call, as opossum's `Semaphore(0)` (default: none, unbounded, opossum's
    /// `Number.MAX_SAFE_INTEGER`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
    /// `allowWarmUp`: no trip during the first `rolling_count_timeout` (default false).
    #[serde(default)]
    pub allow_warm_up: bool,
}

fn ten_s() -> Dur {
    Dur::secs(10)
}
fn thirty_s() -> Dur {
    Dur::secs(30)
}
fn fifty() -> f64 {
    50.0
}
fn ten() -> u32 {
    10
}

impl Default for OpossumConfig {
    fn default() -> Self {
        ron::from_str("()").expect("every field has a default")
    }
}

/// Node runs a timer whose delay is under 1 ms or over 2^31 - 1 ms after 1 ms.
fn node_delay(ms: u64) -> Time {
    let ms = if (1..=2_147_483_647).contains(&ms) { ms } else { 1 };
    ms * MILLISECOND
}

impl OpossumConfig {
    fn check(&self) -> Result<(), String> {
        let p = "Opossum";
        for (name, d) in [
            ("timeout", self.timeout),
            ("reset_timeout", self.reset_timeout),
            ("rolling_count_timeout", self.rolling_count_timeout),
        ] {
            if !d.ns().is_multiple_of(MILLISECOND) {
                return Err(format!("{p}.{name} must be whole milliseconds (opossum takes ms)"));
            }
        }
        let pct = self.error_threshold_percentage;
        if !(0.0..=100.0).contains(&pct) {
            return Err(format!("{p}.error_threshold_percentage must lie in [0, 100]"));
        }
        if self.rolling_count_timeout.ns() == 0 {
            return Err(format!("{p}.rolling_count_timeout must be > 0"));
        }
        if self.rolling_count_buckets == 0 {
            return Err(format!("{p}.rolling_count_buckets must be >= 1"));
        }
        Ok(())
    }
}

/// One bucket of the rolling window: the counts the trip decision reads.
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    fires: u64,
    failures: u64,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Opossum {
    cfg: OpossumConfig,
    state: BreakerState,
    /// HALF_OPEN and its one trial not yet taken (opossum's `pendingClose`).
    pending_close: bool,
    /// The half-open trial in flight.
    trial: Option<u64>,
    /// Newest bucket at the front, as opossum's window array.
    window: VecDeque<Bucket>,
    totals: Bucket,
    bucket_width: Time,
    next_rotation: Time,
    /// When the open breaker's reset timer fires, and when it was started.
    reset_at: Option<Time>,
    opened_at: Time,
    warm_until: Time,
    in_flight: u32,
}

impl Opossum {
    /// Build from config.
    pub fn new(cfg: &OpossumConfig) -> Self {
        let n = cfg.rolling_count_buckets.max(1);
        let window_ms = cfg.rolling_count_timeout.ns() / MILLISECOND;
        let bucket_width = node_delay(window_ms / u64::from(n));
        Self {
            cfg: cfg.clone(),
            state: BreakerState::Closed,
            pending_close: false,
            trial: None,
            window: std::iter::repeat_n(Bucket::default(), n as usize).collect(),
            totals: Bucket::default(),
            bucket_width,
            next_rotation: bucket_width,
            reset_at: None,
            opened_at: 0,
            warm_until: if cfg.allow_warm_up { node_delay(window_ms) } else { 0 },
            in_flight: 0,
        }
    }

    /// The bucket-rotation timer, every rotation due up to `now`.
    fn rotate(&mut self, now: Time) {
        if now < self.next_rotation {
            return;
        }
        let due = (now - self.next_rotation) / self.bucket_width + 1;
        if due >= self.window.len() as u64 {
            self.window.iter_mut().for_each(|b| *b = Bucket::default());
            self.totals = Bucket::default();
        } else {
            for _ in 0..due {
                let old = self.window.pop_back().expect("at least one bucket");
                self.totals.fires -= old.fires;
                self.totals.failures -= old.failures;
                self.window.push_front(Bucket::default());
            }
        }
        self.next_rotation = self.next_rotation.saturating_add(due.saturating_mul(self.bucket_width));
    }

    /// Timers due up to `now`; the reset timer only if `reset_first` allows it at a tie.
    fn catch_up(&mut self, now: Time, reset_first_at_tie: bool) {
        self.rotate(now);
        self.reset_due(now, reset_first_at_tie);
    }

    /// The reset timer, if due by `now` (at `now` itself only if `at_tie`).
    fn reset_due(&mut self, now: Time, at_tie: bool) {
        if let Some(t) = self.reset_at
            && (t < now || (t == now && at_tie))
        {
            self.reset_at = None;
            self.state = BreakerState::HalfOpen;
            self.pending_close = true;
        }
    }

    fn open(&mut self, now: Time) {
        if self.state != BreakerState::Open {
            self.state = BreakerState::Open;
            self.pending_close = false;
            self.opened_at = now;
            self.reset_at = Some(now.saturating_add(node_delay(self.cfg.reset_timeout.ns() / MILLISECOND)));
        }
    }

    fn close(&mut self) {
        self.state = BreakerState::Closed;
        self.pending_close = false;
        self.reset_at = None;
    }

    /// opossum's `fail`: count the failure, then the trip check.
    fn fail(&mut self, now: Time) {
        self.window[0].failures += 1;
        self.totals.failures += 1;
        if now < self.warm_until {
            return;
        }
        let half_open = self.state == BreakerState::HalfOpen;
        let Bucket { fires, failures } = self.totals;
        if fires < u64::from(self.cfg.volume_threshold) && !half_open {
            return;
        }
        // JavaScript arithmetic: failures / 0 is Infinity, above any threshold.
        let rate = failures as f64 / fires as f64 * 100.0;
        if rate > self.cfg.error_threshold_percentage || half_open {
            self.open(now);
        }
    }

    /// A call this layer admitted is over: its semaphore permit comes back.
    fn release(&mut self, id: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.trial == Some(id) {
            self.trial = None;
        }
    }
}

impl Policy for Opossum {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ATTEMPT_TIMEOUT).with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        self.catch_up(a.now, true);
        self.window[0].fires += 1;
        self.totals.fires += 1;
        if self.state != BreakerState::Closed && !self.pending_close {
            return Admission::Refuse(Refusal::ShortCircuited);
        }
        self.pending_close = false;
        if self.cfg.capacity.is_some_and(|c| self.in_flight >= c) {
            self.fail(a.now);
            return Admission::Refuse(Refusal::Rejected);
        }
        self.in_flight += 1;
        if self.state == BreakerState::HalfOpen {
            self.trial = Some(a.id);
        }
        Admission::Admit
    }

    fn cancel(&mut self, a: &Attempt) {
        self.catch_up(a.now, true);
        self.release(a.id);
        self.fail(a.now);
    }

    fn complete(&mut self, d: &Completed) {
        // A call's own timeout timer was set at its admission. At a tie it runs before a
        // reset timer set later (the breaker opened after the call started), and before the
        // rotation due now if that was re-armed later, at the previous rotation (one bucket
        // ago), after the call started. Timeouts due at the same time arrive in the order
        // they were set (the world's timers pop in insertion order).
        let timer = d.outcome == CallOutcome::Timeout;
        let reset_first = !timer || self.opened_at < d.admitted_at;
        let rotation_after = timer && d.admitted_at.saturating_add(self.bucket_width) < d.now;
        if rotation_after {
            self.rotate(d.now - 1);
            self.reset_due(d.now, reset_first);
        } else {
            self.catch_up(d.now, reset_first);
        }
        self.release(d.id);
        if d.outcome.is_failure() {
            self.fail(d.now);
        } else if self.state == BreakerState::HalfOpen {
            self.close();
        }
        // The rotation due now, if any, stays due: other timeouts set before it was re-armed
        // run before it too, and the next call or timer at or after now runs it first.
    }

    fn attempt_timeout(&self, _class: ClassId) -> Option<(Time, Time)> {
        (self.cfg.timeout.ns() > 0).then(|| (node_delay(self.cfg.timeout.ns() / MILLISECOND), 0))
    }

    fn on_wakeup(&mut self, now: Time) {
        self.catch_up(now, true);
    }

    fn status(&self) -> Status {
        Status {
            breaker: Some(self.state),
            wake_at: self.reset_at,
            degraded: self.state != BreakerState::Closed,
            ..Status::default()
        }
    }
}

impl PolicyConfig for OpossumConfig {
    const KIND: &'static str = "opossum-breaker";

    fn facts(&self) -> Facts {
        // One bucket (two u64 counts) per `rolling_count_buckets`.
        Facts::plain(crate::metrics::LayerKind::Breaker)
            .fallback(FallbackRule::Always)
            .window_samples(f64::from(self.rolling_count_buckets))
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(self.check()?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Opossum::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SECOND;
    use crate::policy::CallOutcome::{Error, Success, Timeout};

    const MS: Time = MILLISECOND;
    const YES: Admission = Admission::Admit;
    const OPEN: Admission = Admission::Refuse(Refusal::ShortCircuited);

    fn att(now: Time, id: u64) -> Attempt {
        Attempt::new(now, 0, id)
    }
    fn done(b: &mut Opossum, start: Time, now: Time, id: u64, o: CallOutcome) {
        b.complete(&Completed::new(now, 0, id, start, o));
    }
    fn state(b: &Opossum) -> BreakerState {
        b.status().breaker.unwrap()
    }
    /// A config as a scenario spells it (`Option` fields without `Some`).
    fn cfg(ron: &str) -> OpossumConfig {
        ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(ron)
            .unwrap()
    }

    #[test]
    fn capacity_zero_rejects_every_call() {
        // opossum 10.0.0 `lib/circuit.js`, the constructor: `capacity` is taken as is when
        // `Number.isInteger` (so 0 too) and `new Semaphore(0)` is built; `lib/semaphore.js`
        // `test()` is false while its counter is below 1: every fire is `semaphoreLocked`.
        // Threshold 100 keeps it closed (1 failure / 1 fire = 100 %, not above).
        let mut b = Opossum::new(&cfg("(capacity: 0, error_threshold_percentage: 100.0)"));
        for id in 0..3 {
            assert_eq!(b.admit(&att(0, id)), Admission::Refuse(Refusal::Rejected), "call {id}");
        }
        // Left out: Number.MAX_SAFE_INTEGER, no limit.
        let mut b = Opossum::new(&OpossumConfig::default());
        for id in 0..100 {
            assert_eq!(b.admit(&att(0, id)), YES);
        }
    }

    #[test]
    fn a_timeout_and_a_rotation_due_together_run_in_the_order_they_were_set() {
        // Timers due at the same ms run in the order they were set (fake-timers,
        // `compareTimers` by `order`; `callTimer` gives a re-armed interval a new order).
        // `lib/status.js` re-arms the rotation (`setInterval`) each time it runs; a call's
        // timeout (`lib/circuit.js` `call`, `setTimeout`) is set at its fire. A 1 s window
        // of 10 buckets rotates at 100, 200 ... ms; the bucket of call 1 (fired at 0 ms)
        // leaves at the rotation at 1000 ms.
        let c = "(timeout: \"150ms\", rolling_count_timeout: \"1s\", rolling_count_buckets: 10)";
        let mut b = Opossum::new(&cfg(c));
        b.admit(&att(0, 1));
        done(&mut b, 0, 10 * MS, 1, Success);
        // Call 2's timeout, due at 1000 ms, was set at 850 ms, before the rotation due then
        // was re-armed (900 ms): it runs first, with call 1 still in the window: 1 failure /
        // 2 fires = 50 %, not above 50 %.
        b.admit(&att(850 * MS, 2));
        done(&mut b, 850 * MS, 1000 * MS, 2, Timeout);
        assert_eq!(state(&b), BreakerState::Closed, "the timeout ran before the rotation");
        // A 50 ms timeout set at 950 ms, after the re-arm at 900 ms: the rotation runs first
        // and call 1 leaves: 1 failure / 1 fire.
        let mut b = Opossum::new(&cfg(&c.replace("150ms", "50ms")));
        b.admit(&att(0, 1));
        done(&mut b, 0, 10 * MS, 1, Success);
        b.admit(&att(950 * MS, 2));
        done(&mut b, 950 * MS, 1000 * MS, 2, Timeout);
        assert_eq!(state(&b), BreakerState::Open, "the rotation ran before the timeout");
        // Two timeouts set at 850 ms both run before the rotation at 1000 ms (found by the
        // differential test): with call 1 still in the window, the second sees 3 fires >=
        // volume 3 and 2 failures / 3 = 66.7 % > 50 %; a rotation between them would leave
        // 2 fires, under the volume.
        let mut b = Opossum::new(&cfg(&c.replace(")", ", volume_threshold: 3)")));
        b.admit(&att(0, 1));
        done(&mut b, 0, 10 * MS, 1, Success);
        b.admit(&att(850 * MS, 2));
        b.admit(&att(850 * MS, 3));
        done(&mut b, 850 * MS, 1000 * MS, 2, Timeout);
        done(&mut b, 850 * MS, 1000 * MS, 3, Timeout);
        assert_eq!(state(&b), BreakerState::Open, "both timeouts ran before the rotation");
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let c = OpossumConfig::default();
        assert_eq!(c.timeout, Dur::secs(10));
        assert_eq!(c.error_threshold_percentage, 50.0);
        assert_eq!(c.reset_timeout, Dur::secs(30));
        assert_eq!(c.rolling_count_timeout, Dur::secs(10));
        assert_eq!(c.rolling_count_buckets, 10);
        assert_eq!((c.volume_threshold, c.capacity, c.allow_warm_up), (0, None, false));
        assert_eq!(Opossum::new(&c).attempt_timeout(0), Some((10 * SECOND, 0)));
        assert_eq!(Opossum::new(&cfg("(timeout: \"0s\")")).attempt_timeout(0), None);
    }

    #[test]
    fn calls_in_flight_count_as_fires_and_the_rate_must_exceed_the_threshold() {
        let mut b = Opossum::new(&OpossumConfig::default());
        assert_eq!(b.admit(&att(0, 1)), YES); // still in flight
        assert_eq!(b.admit(&att(0, 2)), YES);
        done(&mut b, 0, MS, 2, Error);
        assert_eq!(state(&b), BreakerState::Closed, "1 / 2 fires = 50 %, not above 50 %");
        assert_eq!(b.admit(&att(MS, 3)), YES);
        done(&mut b, MS, 2 * MS, 3, Error);
        assert_eq!(state(&b), BreakerState::Open, "2 / 3 fires = 66.7 %");
    }

    #[test]
    fn reset_by_timer_single_trial_window_kept_on_close() {
        let mut b = Opossum::new(&cfg("(reset_timeout: \"1s\")"));
        b.admit(&att(0, 1));
        done(&mut b, 0, 0, 1, Error); // 1 / 1: open at 0
        assert_eq!(b.status().wake_at, Some(SECOND), "the reset timer");
        assert_eq!(b.admit(&att(SECOND - 1, 2)), OPEN, "a rejected call is a fire");
        b.on_wakeup(SECOND);
        assert_eq!(state(&b), BreakerState::HalfOpen);
        assert_eq!(b.admit(&att(SECOND, 3)), YES, "the one trial");
        assert_eq!(b.admit(&att(SECOND, 4)), OPEN, "nobody else while half-open");
        done(&mut b, SECOND, SECOND + MS, 3, Success);
        assert_eq!(state(&b), BreakerState::Closed);
        // Window kept: fires 1, 2, 3, 4 and the next one = 5, failures 1 + 1 = 2: 40 %.
        b.admit(&att(SECOND + MS, 5));
        done(&mut b, SECOND + MS, SECOND + MS, 5, Error);
        assert_eq!(state(&b), BreakerState::Closed, "2 / 5 = 40 %");
        b.admit(&att(SECOND + MS, 6));
        done(&mut b, SECOND + MS, SECOND + MS, 6, Error);
        assert_eq!(state(&b), BreakerState::Closed, "3 / 6 = 50 %, not above 50 %");
        b.admit(&att(SECOND + MS, 7));
        done(&mut b, SECOND + MS, SECOND + MS, 7, Error);
        assert_eq!(state(&b), BreakerState::Open, "4 / 7 = 57 %");
    }

    #[test]
    fn volume_threshold_counts_fires_and_half_open_ignores_it() {
        let mut b = Opossum::new(&cfg("(volume_threshold: 3, reset_timeout: \"1s\")"));
        for id in 0..2 {
            b.admit(&att(0, id));
            done(&mut b, 0, 0, id, Error);
        }
        assert_eq!(state(&b), BreakerState::Closed, "2 fires < 3");
        b.admit(&att(0, 2));
        done(&mut b, 0, 0, 2, Error);
        assert_eq!(state(&b), BreakerState::Open, "3 fires, 100 %");
        assert_eq!(b.admit(&att(SECOND, 3)), YES, "the reset timer is due: half-open");
        done(&mut b, SECOND, SECOND, 3, Error);
        assert_eq!(state(&b), BreakerState::Open, "a half-open failure re-opens");
    }

    #[test]
    fn straggler_success_closes_a_half_open_breaker() {
        let mut b = Opossum::new(&cfg("(reset_timeout: \"1s\", error_threshold_percentage: 40.0)"));
        b.admit(&att(0, 1)); // the straggler
        b.admit(&att(0, 2));
        done(&mut b, 0, 0, 2, Error); // 1 / 2 = 50 % > 40 %
        assert_eq!(state(&b), BreakerState::Open);
        b.on_wakeup(SECOND);
        done(&mut b, 0, SECOND + MS, 1, Success);
        assert_eq!(state(&b), BreakerState::Closed);
    }

    #[test]
    fn an_old_calls_timeout_at_the_reset_instant_fires_first() {
        // Call 1's timeout timer (started at 0) and the reset timer (started at the open,
        // also 0) are both due at 1 s; the older fires first: a failure while OPEN changes
        // nothing, then the reset makes it half-open.
        let mut b = Opossum::new(&cfg("(timeout: \"1s\", reset_timeout: \"1s\", error_threshold_percentage: 40.0)"));
        b.admit(&att(0, 1));
        b.admit(&att(0, 2));
        done(&mut b, 0, 0, 2, Error);
        done(&mut b, 0, SECOND, 1, Timeout);
        assert_eq!(state(&b), BreakerState::Open, "the timeout came first");
        b.on_wakeup(SECOND);
        assert_eq!(state(&b), BreakerState::HalfOpen, "then the reset");
    }

    #[test]
    fn buckets_rotate_every_whole_ms_interval_from_time_zero() {
        // 1 s window of 2 buckets (500 ms): the fire at 100 ms leaves at the rotation at 1 s.
        let mut b =
            Opossum::new(&cfg("(rolling_count_timeout: \"1s\", rolling_count_buckets: 2, volume_threshold: 2)"));
        b.admit(&att(100 * MS, 1));
        done(&mut b, 100 * MS, 100 * MS, 1, Error);
        b.admit(&att(SECOND, 2));
        done(&mut b, SECOND, SECOND, 2, Error);
        assert_eq!(state(&b), BreakerState::Closed, "1 fire in the window < 2");
        b.admit(&att(SECOND + 499 * MS, 3));
        done(&mut b, SECOND, SECOND + 499 * MS, 3, Error);
        assert_eq!(state(&b), BreakerState::Open, "2 fires, 2 failures");
    }

    #[test]
    fn a_failure_whose_fire_left_the_window_trips_at_an_infinite_rate() {
        let mut b = Opossum::new(&cfg("(rolling_count_timeout: \"1s\", rolling_count_buckets: 1)"));
        b.admit(&att(0, 1));
        done(&mut b, 0, 2 * SECOND, 1, Error); // 1 failure / 0 fires
        assert_eq!(state(&b), BreakerState::Open);
    }

    #[test]
    fn capacity_rejections_are_failures_and_warm_up_holds_the_trip() {
        let mut b = Opossum::new(&cfg("(capacity: 1, error_threshold_percentage: 40.0)"));
        assert_eq!(b.admit(&att(0, 1)), YES);
        assert_eq!(b.admit(&att(0, 2)), Admission::Refuse(Refusal::Rejected));
        assert_eq!(state(&b), BreakerState::Open, "semaphoreLocked: 1 failure / 2 fires > 40 %");
        let mut w = Opossum::new(&cfg("(allow_warm_up: true)"));
        w.admit(&att(0, 1));
        done(&mut w, 0, 10 * SECOND - 1, 1, Error);
        assert_eq!(state(&w), BreakerState::Closed, "warming up for 10 s");
        w.admit(&att(10 * SECOND, 2));
        done(&mut w, 10 * SECOND, 10 * SECOND, 2, Error);
        assert_eq!(state(&w), BreakerState::Open, "warm-up over: 2 failures / 1 fire (the first rotated out at 10 s)");
    }

    #[test]
    fn an_inner_refusal_is_a_failure() {
        let mut b = Opossum::new(&cfg("(capacity: 1)"));
        b.admit(&att(0, 1));
        b.cancel(&att(0, 1));
        assert_eq!(state(&b), BreakerState::Open, "1 / 1");
        b.on_wakeup(30 * SECOND);
        assert_eq!(b.admit(&att(30 * SECOND, 2)), YES, "the permit came back");
    }

    #[test]
    fn validation_names_the_field() {
        let e = |r: &str| cfg(r).check().unwrap_err();
        assert!(e("(timeout: \"1500us\")").contains("Opossum.timeout must be whole milliseconds"));
        assert!(e("(error_threshold_percentage: 100.5)").contains("error_threshold_percentage"));
        assert!(e("(rolling_count_buckets: 0)").contains("rolling_count_buckets"));
        assert!(e("(rolling_count_timeout: \"0s\")").contains("rolling_count_timeout"));
        assert!(cfg("(timeout: \"0s\", reset_timeout: \"0s\")").check().is_ok());
    }
}
