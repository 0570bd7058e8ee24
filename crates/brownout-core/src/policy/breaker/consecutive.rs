//! The simplest breaker (R02's): open after `failures` consecutive failures for
//! `break_duration`, then let `probes` trial calls through (half-open). `success_threshold`
//! successes in a row close it (each success short of it lets one more probe through); a
//! failure re-opens it. Open -> half-open is lazy: the first call at or after the break
//! triggers it. Errors of the kinds in `exclude` count as successes.
//!
//! This is pybreaker's `CircuitBreaker` (1.4.1) with `fail_max` = `failures`, `reset_timeout`
//! = `break_duration`, `success_threshold` and `exclude` (by failure kind), checked step for
//! step against the real package by `tests/policies/differential.rs`. pybreaker's `call` holds the
//! breaker's lock for the whole call, so its calls never overlap; for overlapping calls
//! brownout bounds the half-open trials in flight by `probes` and credits a straggler's
//! outcome to the current state (pybreaker's generator calls credit it to the state that
//! admitted it). Not expressible: `exclude` predicates on the exception's content,
//! listeners, shared Redis state storage and `throw_new_error_on_trip` (no effect here).

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, CallOutcome, Completed, Policy, Refusal, Status};
use crate::engine::Time;
use crate::policy::why::Why;
use crate::policy::{BuildCtx, ConfigError, Facts, FallbackRule, PolicyConfig};
use crate::units::Dur;

/// Consecutive-failure breaker configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsecutiveConfig {
    /// Consecutive failures that open the breaker (>= 1).
    pub failures: u32,
    /// How long it stays open before admitting probes (> 0).
    pub break_duration: Dur,
    /// Trial calls admitted while half-open (>= 1).
    #[serde(default = "one")]
    pub probes: u32,
    /// Successes in a row while half-open that close the breaker (>= 1; default 1;
    /// pybreaker's `success_threshold`).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    #[schemars(!skip_serializing_if)]
    pub success_threshold: u32,
    /// Failure kinds counted as successes (pybreaker's `exclude`), e.g. `[Timeout]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<FailureKind>,
}

/// How a call can fail, for [`ConsecutiveConfig::exclude`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum FailureKind {
    /// The dependency answered with an error.
    Error,
    /// The attempt timed out.
    Timeout,
}

fn one() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

impl PolicyConfig for ConsecutiveConfig {
    const KIND: &'static str = "consecutive-breaker";

    fn facts(&self) -> Facts {
        // A short circuit is a 503 the class's fallback decides.
        Facts::plain(crate::metrics::LayerKind::Breaker).fallback(FallbackRule::Always)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        // A zero break re-admits the very next call: the breaker opens and closes at the same
        // instant and never refuses anything.
        if self.break_duration.ns() == 0 {
            return Err("ConsecutiveBreaker.break_duration is 0; expected > 0 (an open breaker that lasts no time \
                        refuses nothing)"
                .into());
        }
        if self.failures == 0 {
            return Err("ConsecutiveBreaker.failures must be >= 1".into());
        }
        if self.probes == 0 {
            return Err("ConsecutiveBreaker.probes must be >= 1".into());
        }
        if self.success_threshold == 0 {
            return Err("ConsecutiveBreaker.success_threshold must be >= 1".into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Consecutive::new(self))
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Consecutive {
    failures: u32,
    break_duration: Time,
    probes: u32,
    success_threshold: u32,
    exclude_error: bool,
    exclude_timeout: bool,
    state: BreakerState,
    consecutive: u32,
    /// Successes in a row while half-open.
    successes: u32,
    open_until: Time,
    probes_left: u32,
    why: Why,
}

impl Consecutive {
    /// Build from config.
    pub fn new(cfg: &ConsecutiveConfig) -> Self {
        Self {
            failures: cfg.failures.max(1),
            break_duration: cfg.break_duration.ns(),
            probes: cfg.probes.max(1),
            success_threshold: cfg.success_threshold.max(1),
            exclude_error: cfg.exclude.contains(&FailureKind::Error),
            exclude_timeout: cfg.exclude.contains(&FailureKind::Timeout),
            state: BreakerState::Closed,
            consecutive: 0,
            successes: 0,
            open_until: 0,
            probes_left: 0,
            why: Why::Fresh,
        }
    }

    fn open(&mut self, now: Time) {
        self.state = BreakerState::Open;
        self.open_until = now.saturating_add(self.break_duration);
        self.consecutive = 0;
    }
}

impl Policy for Consecutive {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        if self.state == BreakerState::Open && a.now >= self.open_until {
            self.state = BreakerState::HalfOpen;
            self.why = Why::BreakOver { open_for: a.now - (self.open_until - self.break_duration) };
            self.probes_left = self.probes;
            self.successes = 0;
        }
        match self.state {
            BreakerState::Closed => Admission::Admit,
            BreakerState::Open => Admission::Refuse(Refusal::ShortCircuited),
            BreakerState::HalfOpen if self.probes_left > 0 => {
                self.probes_left -= 1;
                Admission::Admit
            }
            BreakerState::HalfOpen => Admission::Refuse(Refusal::ShortCircuited),
        }
    }

    fn cancel(&mut self, _a: &Attempt) {
        if self.state == BreakerState::HalfOpen {
            self.probes_left += 1;
        }
    }

    fn complete(&mut self, d: &Completed) {
        let failed = match d.outcome {
            CallOutcome::Success => false,
            CallOutcome::Error => !self.exclude_error,
            CallOutcome::Timeout => !self.exclude_timeout,
        };
        match self.state {
            BreakerState::Closed => {
                if failed {
                    self.consecutive += 1;
                    if self.consecutive >= self.failures {
                        self.why = Why::Consecutive { failures: self.consecutive, threshold: self.failures };
                        self.open(d.now);
                    }
                } else {
                    self.consecutive = 0;
                }
            }
            BreakerState::HalfOpen => {
                if failed {
                    self.why = Why::TrialFailed { slow: None };
                    self.open(d.now);
                } else {
                    self.successes += 1;
                    if self.successes >= self.success_threshold {
                        self.why = Why::TrialsPassed { ok: self.successes, needed: self.success_threshold };
                        self.state = BreakerState::Closed;
                        self.consecutive = 0;
                    } else {
                        // pybreaker lets the next call through after a success.
                        self.probes_left = (self.probes_left + 1).min(self.probes);
                    }
                }
            }
            // Stragglers finishing while open change nothing.
            BreakerState::Open => {}
        }
    }

    fn status(&self) -> Status {
        Status { breaker: Some(self.state), ..Status::default() }
    }

    fn reason(&self) -> String {
        self.why.text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MILLISECOND, SECOND};
    use crate::policy::CallOutcome;

    fn att(now: Time, id: u64) -> Attempt {
        Attempt::new(now, 0, id)
    }
    fn done(now: Time, id: u64, outcome: CallOutcome) -> Completed {
        Completed::new(now, 0, id, now, outcome)
    }

    #[test]
    fn r02_three_failures_open_a_one_second_break_then_one_probe() {
        let mut b = Consecutive::new(&ConsecutiveConfig {
            failures: 3,
            break_duration: Dur::secs(1),
            probes: 1,
            success_threshold: 1,
            exclude: vec![],
        });
        for i in 0..3 {
            assert_eq!(b.admit(&att(i * MILLISECOND, i)), Admission::Admit);
            b.complete(&done(i * MILLISECOND, i, CallOutcome::Error));
        }
        let opened = 2 * MILLISECOND;
        assert_eq!(b.status().breaker, Some(BreakerState::Open));
        assert_eq!(
            b.admit(&att(opened + SECOND - 1, 9)),
            Admission::Refuse(Refusal::ShortCircuited),
            "still inside the break"
        );
        assert_eq!(b.admit(&att(opened + SECOND, 10)), Admission::Admit, "the probe");
        assert_eq!(b.admit(&att(opened + SECOND, 11)), Admission::Refuse(Refusal::ShortCircuited), "only one probe");
        b.complete(&done(opened + SECOND + 1, 10, CallOutcome::Success));
        assert_eq!(b.status().breaker, Some(BreakerState::Closed));
    }

    #[test]
    fn a_success_resets_the_count() {
        let mut b = Consecutive::new(&ConsecutiveConfig {
            failures: 3,
            break_duration: Dur::secs(1),
            probes: 1,
            success_threshold: 1,
            exclude: vec![],
        });
        for (i, o) in
            [CallOutcome::Error, CallOutcome::Error, CallOutcome::Success, CallOutcome::Error].into_iter().enumerate()
        {
            b.admit(&att(0, i as u64));
            b.complete(&done(0, i as u64, o));
        }
        assert_eq!(b.status().breaker, Some(BreakerState::Closed));
    }

    fn cfg(ron: &str) -> ConsecutiveConfig {
        ron::from_str(ron).unwrap()
    }

    #[test]
    fn success_threshold_needs_that_many_half_open_successes_one_at_a_time() {
        // pybreaker success_threshold = 2: the first success keeps it half-open and lets the
        // next call through; a failure in between re-opens and restarts the count.
        let mut b = Consecutive::new(&cfg("(failures: 1, break_duration: \"1s\", success_threshold: 2)"));
        b.admit(&att(0, 1));
        b.complete(&done(0, 1, CallOutcome::Error));
        assert_eq!(b.admit(&att(SECOND, 2)), Admission::Admit);
        assert_eq!(b.admit(&att(SECOND, 3)), Admission::Refuse(Refusal::ShortCircuited), "one probe at a time");
        b.complete(&done(SECOND, 2, CallOutcome::Success));
        assert_eq!(b.status().breaker, Some(BreakerState::HalfOpen), "1 of 2 successes");
        assert_eq!(b.admit(&att(SECOND, 4)), Admission::Admit, "the next call is a probe");
        b.complete(&done(SECOND, 4, CallOutcome::Error));
        assert_eq!(b.status().breaker, Some(BreakerState::Open));
        let t = 2 * SECOND;
        for id in [5, 6] {
            assert_eq!(b.admit(&att(t, id)), Admission::Admit);
            b.complete(&done(t, id, CallOutcome::Success));
        }
        assert_eq!(b.status().breaker, Some(BreakerState::Closed), "2 in a row after the re-open");
    }

    #[test]
    fn excluded_failures_count_as_successes() {
        // pybreaker `exclude`: an excluded error is handled as a success (counter reset; in
        // half-open it counts toward success_threshold).
        let mut b = Consecutive::new(&cfg("(failures: 2, break_duration: \"1s\", exclude: [Timeout])"));
        for (i, o) in [CallOutcome::Error, CallOutcome::Timeout, CallOutcome::Error].into_iter().enumerate() {
            b.admit(&att(0, i as u64));
            b.complete(&done(0, i as u64, o));
        }
        assert_eq!(b.status().breaker, Some(BreakerState::Closed), "the timeout reset the count");
        b.admit(&att(0, 3));
        b.complete(&done(0, 3, CallOutcome::Error));
        assert_eq!(b.status().breaker, Some(BreakerState::Open));
        b.admit(&att(SECOND, 4));
        b.complete(&done(SECOND, 4, CallOutcome::Timeout));
        assert_eq!(b.status().breaker, Some(BreakerState::Closed), "an excluded timeout closes");
    }

    #[test]
    fn validation_names_the_new_fields() {
        let e = cfg("(failures: 1, break_duration: \"1s\", success_threshold: 0)").validate(&[]).unwrap_err();
        assert!(e.message.contains("ConsecutiveBreaker.success_threshold"), "{e}");
    }
}
