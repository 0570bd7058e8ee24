//! Per-attempt timeout: the attempt is abandoned when it takes longer than `timeout`.
//!
//! The dependency keeps working on an abandoned call (its capacity stays occupied, as with
//! a fire-and-forget RPC); the connection returns to the pool when the timeout fires.

use serde::{Deserialize, Serialize};

use super::{Admission, Attempt, ClassId, Policy};
use crate::engine::Time;
use crate::policy::{BuildCtx, PolicyConfig};
use crate::units::Dur;

/// Timeout configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeoutConfig {
    /// Longest an attempt may take (> 0).
    pub timeout: Dur,
    /// Time from the timeout firing until the gateway answers 504 (R02: 269 ms - 250 ms; 0 = at once).
    #[serde(default)]
    pub unwind: Dur,
}

impl PolicyConfig for TimeoutConfig {
    const KIND: &'static str = "timeout";

    fn validate(&self, _classes: &[&str]) -> Result<(), String> {
        if self.timeout.ns() == 0 {
            return Err("Timeout.timeout must be > 0".into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Timeout::new(self))
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct Timeout {
    timeout: Time,
    unwind: Time,
}

impl Timeout {
    /// Build from config.
    pub fn new(cfg: &TimeoutConfig) -> Self {
        Self { timeout: cfg.timeout.ns(), unwind: cfg.unwind.ns() }
    }
}

impl Policy for Timeout {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::ATTEMPT_TIMEOUT
    }

    fn reports_status(&self) -> bool {
        false // `status` is the default, always
    }

    fn admit(&mut self, _attempt: &Attempt) -> Admission {
        Admission::Admit
    }

    fn attempt_timeout(&self, _class: ClassId) -> Option<(Time, Time)> {
        Some((self.timeout, self.unwind))
    }
}
