//! resilience4j `CircuitBreaker` (CircuitBreakerStateMachine), with its own parameter names
//! and defaults.
//!
//! Reproduced (resilience4j 2.4.0): COUNT_BASED ring (minimumNumberOfCalls capped at
//! slidingWindowSize) or TIME_BASED buckets of one epoch-second (not capped); rates computed
//! in `f32` as `count * 100f / total` and judged once `total >= minimumNumberOfCalls`,
//! tripping at `failureRate >= failureRateThreshold || slowCallRate >= slowCallRateThreshold`;
//! slow is `duration > slowCallDurationThreshold`; open duration `waitDurationInOpenState` or
//! `waitIntervalFunctionInOpenState(attempts)` (attempts 1 from CLOSED, +1 per re-open from
//! HALF_OPEN), both in whole milliseconds as the library (`Duration.toMillis()` truncates; the
//! exponential backoff truncates each step, so 250 ms x 1.5 waits 250, 375, 562 ms and 1 ms
//! x 1.5 never grows); lazy OPEN -> HALF_OPEN on the first call *strictly after* the wait, or
//! by timer exactly at it with `automaticTransitionFromOpenToHalfOpenEnabled`; HALF_OPEN is a
//! fresh COUNT_BASED ring of `permittedNumberOfCallsInHalfOpenState` with minimum
//! `min(minimumNumberOfCalls, permitted)`, permits not returned on completion, only by
//! `releasePermission` ([`Policy::cancel`]), which adds one unconditionally as the library
//! does, also for a call admitted before the current episode (so more trials than configured
//! can run); `maxWaitDurationInHalfOpenState` of at least 1 ms (whole ms; under 1 ms it is off)
//! moves a stuck HALF_OPEN to `transitionToStateAfterWaitDuration`; outcomes of stragglers are
//! credited to the current state; outcomes while OPEN are dropped (r4j records them into
//! metrics that are discarded at the next transition). Durations the builder refuses (under
//! 1 ms) are refused at load.
//!
//! Deliberate differences: an inner layer's refusal reaches this breaker as `cancel`, which
//! is treated as `releasePermission` (as if BulkheadFullException were in `ignoreExceptions`;
//! r4j by default records it as a failure); TIME_BASED epoch seconds count from virtual time
//! zero; `waitIntervalFunctionInOpenState` offers exponential backoff only (no randomized
//! or custom functions).
//!
//! `recordExceptions` / `ignoreExceptions` are read per kind of failure (`errorsAs`,
//! `timeoutsAs`: a failure, a success, or ignored). Options brownout cannot express: the
//! `recordResult` and `transitionOnResult` predicates, the
//! FORCED_OPEN, DISABLED and METRICS_ONLY states, `initialState`, and
//! `writableStackTraceEnabled` / event consumers (no effect on behaviour).

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, CallOutcome, Completed, Policy, Refusal, Status};
use super::window::{Counts, Sample, Window};
use crate::engine::{MILLISECOND, SECOND, Time};
use crate::policy::why::Why;
use crate::policy::{BuildCtx, ConfigError, Facts, FallbackRule, PolicyConfig};
use crate::units::Dur;

/// `slidingWindowType`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema)]
pub enum SlidingWindowType {
    /// Ring of the last `slidingWindowSize` outcomes.
    #[default]
    #[serde(rename = "COUNT_BASED")]
    CountBased,
    /// `slidingWindowSize` buckets of one epoch-second.
    #[serde(rename = "TIME_BASED")]
    TimeBased,
}

/// `transitionToStateAfterWaitDuration`: where a HALF_OPEN breaker goes after
/// `maxWaitDurationInHalfOpenState`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema)]
pub enum StateAfterWait {
    /// Back to OPEN (default).
    #[default]
    #[serde(rename = "OPEN")]
    Open,
    /// To CLOSED.
    #[serde(rename = "CLOSED")]
    Closed,
}

/// `waitIntervalFunctionInOpenState`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all_fields = "camelCase")]
pub enum IntervalFunction {
    /// `IntervalFunction.ofExponentialBackoff(initialInterval, multiplier, maxInterval)`, in
    /// whole ms: `x(1) = initialInterval`, `x(k+1) = (long) (x(k) * multiplier)` (each step
    /// truncated), then `min(x(attempt), maxInterval)`.
    ExponentialBackoff {
        /// First wait.
        initial_interval: Dur,
        /// Growth per attempt.
        multiplier: f64,
        /// Cap (None = uncapped).
        #[serde(default)]
        max_interval: Option<Dur>,
    },
}

/// resilience4j `CircuitBreakerConfig` (the fields brownout models).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Resilience4jConfig {
    /// Failure percentage that opens, in (0, 100] (default 50).
    #[serde(default = "fifty")]
    pub failure_rate_threshold: f32,
    /// Slow-call percentage that opens, in (0, 100] (default 100).
    #[serde(default = "hundred")]
    pub slow_call_rate_threshold: f32,
    /// A call longer than this is slow (default 60 s).
    #[serde(default = "sixty_s")]
    pub slow_call_duration_threshold: Dur,
    /// Open duration (default 60 s), unless an interval function is given.
    #[serde(default = "sixty_s")]
    pub wait_duration_in_open_state: Dur,
    /// Open duration as a function of the attempt number.
    #[serde(default)]
    pub wait_interval_function_in_open_state: Option<IntervalFunction>,
    /// Trial calls per HALF_OPEN episode (>= 1; default 10).
    #[serde(default = "ten")]
    pub permitted_number_of_calls_in_half_open_state: u32,
    /// Outcomes needed before rates are judged (>= 1; default 100).
    #[serde(default = "hundred_u")]
    pub minimum_number_of_calls: u32,
    /// Ring size or number of one-second buckets (>= 1; default 100).
    #[serde(default = "hundred_u")]
    pub sliding_window_size: u32,
    /// COUNT_BASED (default) or TIME_BASED.
    #[serde(default)]
    pub sliding_window_type: SlidingWindowType,
    /// Longest HALF_OPEN stay; 0 = unbounded (default).
    #[serde(default)]
    pub max_wait_duration_in_half_open_state: Dur,
    /// Where a HALF_OPEN breaker goes after that wait (default OPEN).
    #[serde(default)]
    pub transition_to_state_after_wait_duration: StateAfterWait,
    /// OPEN -> HALF_OPEN by timer instead of on the next call (default false).
    #[serde(default)]
    pub automatic_transition_from_open_to_half_open_enabled: bool,
    /// How a failed call counts (brownout's reading of `recordExceptions` /
    /// `ignoreExceptions` for the exception a failed call throws; default `Failure`).
    #[serde(default)]
    pub errors_as: CountAs,
    /// How a timed-out call counts (the `TimeoutException`; default `Failure`).
    #[serde(default)]
    pub timeouts_as: CountAs,
}

/// How the breaker counts a call that threw, as `CircuitBreakerStateMachine.handleThrowable`
/// decides: an ignored exception first, then a recorded one, else a success.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema)]
pub enum CountAs {
    /// A failure (every exception, when `recordExceptions` is empty: the default).
    #[default]
    Failure,
    /// A success: an exception not in a non-empty `recordExceptions` (`onSuccess`).
    Success,
    /// Not recorded, its permission released: an exception in `ignoreExceptions`.
    Ignored,
}

fn fifty() -> f32 {
    50.0
}
fn hundred() -> f32 {
    100.0
}
fn hundred_u() -> u32 {
    100
}
fn ten() -> u32 {
    10
}
fn sixty_s() -> Dur {
    Dur::secs(60)
}

/// `Duration.toMillis()`: whole milliseconds, truncated.
fn millis(d: Dur) -> u64 {
    d.ns() / MILLISECOND
}

/// One step of `IntervalFunction.ofExponentialBackoff`: `(long) (x * multiplier)` (Java's
/// cast truncates and saturates, as Rust's `as`).
fn backoff_step(x_ms: u64, multiplier: f64) -> u64 {
    (x_ms as f64 * multiplier) as u64
}

impl Default for Resilience4jConfig {
    fn default() -> Self {
        ron::from_str("()").expect("every field has a default")
    }
}

impl Resilience4jConfig {
    /// Check values serde cannot, naming the field (as r4j's builder does).
    fn check(&self) -> Result<(), String> {
        let p = "Resilience4j";
        for (name, v) in [
            ("failureRateThreshold", self.failure_rate_threshold),
            ("slowCallRateThreshold", self.slow_call_rate_threshold),
        ] {
            if v.is_nan() || v <= 0.0 || v > 100.0 {
                return Err(format!("{p}.{name} must lie in (0, 100]"));
            }
        }
        if self.slow_call_duration_threshold.ns() == 0 {
            return Err(format!("{p}.slowCallDurationThreshold must be > 0"));
        }
        // The builder and IntervalFunction take whole ms (`toMillis()`) and refuse under 1 ms.
        if millis(self.wait_duration_in_open_state) < 1 {
            return Err(format!("{p}.waitDurationInOpenState must be at least 1 ms"));
        }
        if let Some(IntervalFunction::ExponentialBackoff { initial_interval, multiplier, max_interval }) =
            self.wait_interval_function_in_open_state
        {
            if millis(initial_interval) < 1 || multiplier.is_nan() || multiplier < 1.0 {
                return Err(format!(
                    "{p}.waitIntervalFunctionInOpenState needs initialInterval of at least 1 ms and multiplier >= 1"
                ));
            }
            if max_interval.is_some_and(|m| millis(m) < 1) {
                return Err(format!("{p}.waitIntervalFunctionInOpenState needs maxInterval of at least 1 ms"));
            }
        }
        for (name, v) in [
            ("permittedNumberOfCallsInHalfOpenState", self.permitted_number_of_calls_in_half_open_state),
            ("minimumNumberOfCalls", self.minimum_number_of_calls),
            ("slidingWindowSize", self.sliding_window_size),
        ] {
            if v == 0 {
                return Err(format!("{p}.{name} must be >= 1"));
            }
        }
        Ok(())
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Resilience4j {
    cfg: Resilience4jConfig,
    state: BreakerState,
    metrics: Window,
    min_calls: u32,
    permits: u32,
    retry_after: Time,
    half_open_until: Option<Time>,
    attempts: u32,
    opened_at: Time,
    why: Why,
    /// The interval function's value for `attempts` before the cap, in ms (it iterates, so
    /// each open takes one step from the last).
    backoff_ms: u64,
}

impl Resilience4j {
    /// Build from config.
    pub fn new(cfg: &Resilience4jConfig) -> Self {
        let mut b = Self {
            cfg: cfg.clone(),
            state: BreakerState::Closed,
            metrics: Window::count(1),
            min_calls: 1,
            permits: 0,
            retry_after: 0,
            half_open_until: None,
            attempts: 0,
            opened_at: 0,
            why: Why::Fresh,
            backoff_ms: 0,
        };
        b.enter_closed();
        b
    }

    /// `CircuitBreakerMetrics.forClosed`.
    fn enter_closed(&mut self) {
        let n = self.cfg.sliding_window_size;
        let min = self.cfg.minimum_number_of_calls;
        (self.metrics, self.min_calls) = match self.cfg.sliding_window_type {
            SlidingWindowType::CountBased => (Window::count(n), min.min(n)),
            SlidingWindowType::TimeBased => (Window::time(n, SECOND), min),
        };
        self.state = BreakerState::Closed;
        self.attempts = 0;
        self.half_open_until = None;
    }

    /// `OpenState(attempts + 1)`.
    fn enter_open(&mut self, now: Time) {
        self.attempts = self.attempts.saturating_add(1);
        let wait_ms = match self.cfg.wait_interval_function_in_open_state {
            None => millis(self.cfg.wait_duration_in_open_state),
            Some(IntervalFunction::ExponentialBackoff { initial_interval, multiplier, max_interval }) => {
                self.backoff_ms = if self.attempts == 1 {
                    millis(initial_interval)
                } else {
                    backoff_step(self.backoff_ms, multiplier)
                };
                max_interval.map_or(self.backoff_ms, |m| self.backoff_ms.min(millis(m)))
            }
        };
        self.state = BreakerState::Open;
        self.opened_at = now;
        self.retry_after = now.saturating_add(wait_ms.saturating_mul(MILLISECOND));
        self.half_open_until = None;
    }

    /// `HalfOpenState`: `CircuitBreakerMetrics.forHalfOpen(permitted)`.
    fn enter_half_open(&mut self, now: Time) {
        self.why = Why::BreakOver { open_for: now - self.opened_at };
        let n = self.cfg.permitted_number_of_calls_in_half_open_state;
        self.metrics = Window::count(n);
        self.min_calls = self.cfg.minimum_number_of_calls.min(n);
        self.permits = n;
        self.state = BreakerState::HalfOpen;
        // The library schedules the timer only when `toMillis() >= 1`, for whole ms.
        let max_ms = millis(self.cfg.max_wait_duration_in_half_open_state);
        self.half_open_until = (max_ms >= 1).then(|| now.saturating_add(max_ms * MILLISECOND));
    }

    /// `checkIfThresholdsExceeded`: Some(true) above, Some(false) below, None = too few calls.
    fn verdict(&self, c: Counts) -> Option<bool> {
        if c.total == 0 || c.total < u64::from(self.min_calls) {
            return None;
        }
        let failure_rate = c.failed as f32 * 100.0 / c.total as f32;
        let slow_rate = c.slow as f32 * 100.0 / c.total as f32;
        Some(failure_rate >= self.cfg.failure_rate_threshold || slow_rate >= self.cfg.slow_call_rate_threshold)
    }

    fn tick(&mut self, now: Time) {
        if self.state == BreakerState::HalfOpen && self.half_open_until.is_some_and(|t| now >= t) {
            self.why = Why::HalfOpenExpired { waited: self.cfg.max_wait_duration_in_half_open_state.ns() };
            match self.cfg.transition_to_state_after_wait_duration {
                StateAfterWait::Open => self.enter_open(now),
                StateAfterWait::Closed => self.enter_closed(),
            }
        }
        if self.state == BreakerState::Open
            && self.cfg.automatic_transition_from_open_to_half_open_enabled
            && now >= self.retry_after
        {
            self.enter_half_open(now);
        }
    }
}

impl Policy for Resilience4j {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        self.tick(a.now);
        // OpenState.tryAcquirePermission: clock.instant().isAfter(retryAfterWaitDuration).
        if self.state == BreakerState::Open && a.now > self.retry_after {
            self.enter_half_open(a.now);
        }
        match self.state {
            BreakerState::Closed => Admission::Admit,
            BreakerState::HalfOpen if self.permits > 0 => {
                self.permits -= 1;
                Admission::Admit
            }
            _ => Admission::Refuse(Refusal::ShortCircuited),
        }
    }

    fn cancel(&mut self, _a: &Attempt) {
        // HalfOpenState.releasePermission(): a permit back for any call, also one admitted
        // before this half-open episode; CLOSED and OPEN ignore it.
        if self.state == BreakerState::HalfOpen {
            self.permits = self.permits.saturating_add(1);
        }
    }

    fn complete(&mut self, d: &Completed) {
        self.tick(d.now);
        let counted = match d.outcome {
            CallOutcome::Success => CountAs::Success,
            CallOutcome::Error => self.cfg.errors_as,
            CallOutcome::Timeout => self.cfg.timeouts_as,
        };
        if counted == CountAs::Ignored {
            // handleThrowable: an ignored exception releases its permission, nothing else.
            if self.state == BreakerState::HalfOpen {
                self.permits = self.permits.saturating_add(1);
            }
            return;
        }
        if self.state == BreakerState::Open {
            return;
        }
        let s = Sample {
            failed: counted == CountAs::Failure,
            slow: d.duration() > self.cfg.slow_call_duration_threshold.ns(),
        };
        self.metrics.record(d.now, s);
        let c = self.metrics.counts(d.now);
        let verdict = self.verdict(c);
        let trial = self.state == BreakerState::HalfOpen;
        if verdict == Some(true) || (trial && verdict.is_some()) {
            let failure_pct = f64::from(self.cfg.failure_rate_threshold);
            let slow_pct = Some(f64::from(self.cfg.slow_call_rate_threshold));
            self.why = Why::Rates { trial, counts: c, failure_pct, slow_pct };
        }
        match (self.state, verdict) {
            (_, Some(true)) => self.enter_open(d.now),
            (BreakerState::HalfOpen, Some(false)) => self.enter_closed(),
            _ => {}
        }
    }

    fn on_wakeup(&mut self, now: Time) {
        self.tick(now);
    }

    fn status(&self) -> Status {
        let wake_at = match self.state {
            BreakerState::Open if self.cfg.automatic_transition_from_open_to_half_open_enabled => {
                Some(self.retry_after)
            }
            BreakerState::HalfOpen => self.half_open_until,
            _ => None,
        };
        Status { breaker: Some(self.state), wake_at, degraded: self.state != BreakerState::Closed, ..Status::default() }
    }

    fn reason(&self) -> String {
        self.why.text()
    }
}

impl PolicyConfig for Resilience4jConfig {
    const KIND: &'static str = "resilience4j-breaker";

    fn facts(&self) -> Facts {
        let samples =
            f64::from(self.sliding_window_size) + f64::from(self.permitted_number_of_calls_in_half_open_state);
        Facts::plain(crate::metrics::LayerKind::Breaker).fallback(FallbackRule::Always).window_samples(samples)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(self.check()?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Resilience4j::new(self))
    }
}

#[cfg(test)]
mod tests;
