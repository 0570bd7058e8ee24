//! The simplest breaker (R02's): open after `failures` consecutive failures for
//! `break_duration`, then let `probes` trial calls through (half-open). A successful probe
//! closes it; a failed one re-opens it. Open -> half-open is lazy: the first call after the
//! break triggers it.

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, Completed, Policy, Refusal, Status};
use crate::engine::Time;
use crate::policy::why::Why;
use crate::policy::{BuildCtx, PolicyConfig};
use crate::units::Dur;

/// Consecutive-failure breaker configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsecutiveConfig {
    /// Consecutive failures that open the breaker (>= 1).
    pub failures: u32,
    /// How long it stays open before admitting probes.
    pub break_duration: Dur,
    /// Trial calls admitted while half-open (>= 1).
    #[serde(default = "one")]
    pub probes: u32,
}

fn one() -> u32 {
    1
}

impl PolicyConfig for ConsecutiveConfig {
    const KIND: &'static str = "consecutive-breaker";

    fn validate(&self, _classes: &[&str]) -> Result<(), String> {
        if self.failures == 0 {
            return Err("ConsecutiveBreaker.failures must be >= 1".into());
        }
        if self.probes == 0 {
            return Err("ConsecutiveBreaker.probes must be >= 1".into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Consecutive::new(self))
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct Consecutive {
    failures: u32,
    break_duration: Time,
    probes: u32,
    state: BreakerState,
    consecutive: u32,
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
            state: BreakerState::Closed,
            consecutive: 0,
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
    fn admit(&mut self, a: &Attempt) -> Admission {
        if self.state == BreakerState::Open && a.now >= self.open_until {
            self.state = BreakerState::HalfOpen;
            self.why = Why::BreakOver { open_for: a.now - (self.open_until - self.break_duration) };
            self.probes_left = self.probes;
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
        let failed = d.outcome.is_failure();
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
                    self.why = Why::TrialsPassed { ok: 1, needed: 1 };
                    self.state = BreakerState::Closed;
                    self.consecutive = 0;
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
        let mut b = Consecutive::new(&ConsecutiveConfig { failures: 3, break_duration: Dur::secs(1), probes: 1 });
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
        let mut b = Consecutive::new(&ConsecutiveConfig { failures: 3, break_duration: Dur::secs(1), probes: 1 });
        for (i, o) in
            [CallOutcome::Error, CallOutcome::Error, CallOutcome::Success, CallOutcome::Error].into_iter().enumerate()
        {
            b.admit(&att(0, i as u64));
            b.complete(&done(0, i as u64, o));
        }
        assert_eq!(b.status().breaker, Some(BreakerState::Closed));
    }
}
