//! The registry: one enum variant per policy, as written in scenario files, and the one
//! place that builds a runtime policy from its config. Adding a policy is one line in each.

use serde::{Deserialize, Serialize};

use super::breaker::consecutive::{Consecutive, ConsecutiveConfig};
use super::limiter::fixed::{Fixed, FixedConfig};
use super::retry::{Retry, RetryConfig};
use super::timeout::{Timeout, TimeoutConfig};
use super::{ClassId, Policy};

/// What a policy may need to know about the scenario when it is built.
#[derive(Debug, Clone, Default)]
pub struct BuildCtx {
    /// Class names; a class's [`ClassId`] is its index here.
    pub classes: Vec<String>,
    /// Index of the gateway instance the policy runs on.
    pub instance: u32,
    /// Number of gateway instances.
    pub instances: u32,
}

impl BuildCtx {
    /// The id of class `name`, if it exists.
    pub fn class_id(&self, name: &str) -> Option<ClassId> {
        self.classes
            .iter()
            .position(|c| c == name)
            .map(|i| i as ClassId)
    }
}

/// A policy as written in a scenario file, e.g. `Timeout((timeout: "250ms"))`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum PolicySpec {
    /// Per-attempt timeout.
    Timeout(TimeoutConfig),
    /// Bounded retry with backoff and jitter.
    Retry(RetryConfig),
    /// Breaker opening after N consecutive failures, single probe (R02).
    ConsecutiveBreaker(ConsecutiveConfig),
    /// Fixed concurrency limit, no queue or a bounded queue.
    Limiter(FixedConfig),
}

impl PolicySpec {
    /// Build a fresh runtime policy (one per gateway instance).
    pub fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
        let _ = ctx;
        match self {
            PolicySpec::Timeout(c) => Box::new(Timeout::new(c)),
            PolicySpec::Retry(c) => Box::new(Retry::new(c)),
            PolicySpec::ConsecutiveBreaker(c) => Box::new(Consecutive::new(c)),
            PolicySpec::Limiter(c) => Box::new(Fixed::new(c)),
        }
    }

    /// Check values that serde cannot: returns what is wrong, naming the field.
    /// `classes` are the scenario's class names (for per-class settings).
    // `!(x >= 1.0)` is deliberate: it also rejects NaN.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn validate(&self, classes: &[&str]) -> Result<(), String> {
        let _ = classes;
        match self {
            PolicySpec::Timeout(c) if c.timeout.ns() == 0 => {
                Err("Timeout.timeout must be > 0".into())
            }
            PolicySpec::Retry(c) if c.max_attempts == 0 => {
                Err("Retry.max_attempts must be >= 1 (it counts the first call)".into())
            }
            PolicySpec::Retry(c) if !(0.0..=1.0).contains(&c.jitter) => {
                Err("Retry.jitter must lie in [0, 1]".into())
            }
            PolicySpec::Retry(c) if !(c.multiplier >= 1.0) => {
                Err("Retry.multiplier must be >= 1".into())
            }
            PolicySpec::ConsecutiveBreaker(c) if c.failures == 0 => {
                Err("ConsecutiveBreaker.failures must be >= 1".into())
            }
            PolicySpec::ConsecutiveBreaker(c) if c.probes == 0 => {
                Err("ConsecutiveBreaker.probes must be >= 1".into())
            }
            PolicySpec::Limiter(c) if c.permits == 0 => Err("Limiter.permits must be >= 1".into()),
            _ => Ok(()),
        }
    }

    /// Short kind name for reports.
    pub fn kind(&self) -> &'static str {
        match self {
            PolicySpec::Timeout(_) => "timeout",
            PolicySpec::Retry(_) => "retry",
            PolicySpec::ConsecutiveBreaker(_) => "consecutive-breaker",
            PolicySpec::Limiter(_) => "limiter",
        }
    }
}
