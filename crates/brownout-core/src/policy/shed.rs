//! Deadline shedding (tower's `LoadShed`, judged by deadline instead of readiness): an
//! attempt whose request has less than `min_remaining` of its deadline left is refused at
//! once as 429. Such an attempt would most likely miss its deadline anyway, and the capacity
//! it would hold goes to requests that can still make theirs.

use serde::{Deserialize, Serialize};

use super::{Admission, Attempt, BuildCtx, ConfigError, Facts, Policy, PolicyConfig, Refusal};
use crate::engine::Time;
use crate::units::Dur;

/// Deadline-shedding configuration, e.g. `ShedByDeadline((min_remaining: "50ms"))`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShedByDeadlineConfig {
    /// Least deadline budget (the request's deadline minus now) an attempt needs to go on.
    pub min_remaining: Dur,
}

impl PolicyConfig for ShedByDeadlineConfig {
    const KIND: &'static str = "shed-by-deadline";

    fn facts(&self) -> Facts {
        // A 429: the answer it chose, never the fallback.
        Facts::plain(crate::metrics::LayerKind::Shed)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        if self.min_remaining.ns() == 0 {
            return Err("ShedByDeadline.min_remaining must be > 0 (with 0 nothing is ever shed)".into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(ShedByDeadline { min_remaining: self.min_remaining.ns() })
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct ShedByDeadline {
    min_remaining: Time,
}

impl Policy for ShedByDeadline {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::ADMIT
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        if a.remaining() < self.min_remaining { Admission::Refuse(Refusal::Rejected) } else { Admission::Admit }
    }

    fn reports_status(&self) -> bool {
        false // `status` is the default, always
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND as MS;

    fn shed(min_remaining_ms: u64) -> Box<dyn Policy> {
        let cfg = ShedByDeadlineConfig { min_remaining: Dur::ms(min_remaining_ms) };
        cfg.validate(&[]).expect("valid");
        cfg.build(&BuildCtx::default())
    }

    /// An attempt at `now_ms` of a request that arrived at 0 with a 1 s deadline.
    fn at(now_ms: u64) -> Attempt {
        Attempt::new(now_ms * MS, 0, now_ms).request(0, 1_000 * MS)
    }

    #[test]
    fn refuses_below_the_budget_and_admits_at_or_above_it() {
        let mut p = shed(50);
        // 1000 - 940 = 60 ms left >= 50: admitted.
        assert_eq!(p.admit(&at(940)), Admission::Admit);
        // 1000 - 950 = 50 ms left: not below the budget, admitted.
        assert_eq!(p.admit(&at(950)), Admission::Admit);
        // 1000 - 951 = 49 ms left < 50: refused.
        assert_eq!(p.admit(&at(951)), Admission::Refuse(Refusal::Rejected));
        // Past the deadline nothing is left.
        assert_eq!(p.admit(&at(1_200)), Admission::Refuse(Refusal::Rejected));
    }

    #[test]
    fn an_attempt_without_a_deadline_is_never_shed() {
        let mut p = shed(50);
        assert_eq!(p.admit(&Attempt::new(u64::MAX / 2, 0, 1)), Admission::Admit);
    }

    #[test]
    fn a_zero_budget_is_refused() {
        let cfg = ShedByDeadlineConfig { min_remaining: Dur::ms(0) };
        assert!(cfg.validate(&[]).unwrap_err().message.contains("ShedByDeadline.min_remaining"));
    }
}
