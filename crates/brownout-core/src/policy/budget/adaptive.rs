//! Marc Brooker's adaptive retry token bucket: the bucket starts full at `bucket_size`, each
//! new request adds `refill_per_request` (capped), and a retry is allowed only while the
//! bucket holds more than `retry_cost`, which it then takes. Kept in thousandths of a token
//! so that ten refills of 0.1 make exactly one.

use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::policy::{Admission, Attempt, ClassId, Policy, RetryAsk};
use crate::policy::{BuildCtx, ConfigError, Facts, PolicyConfig};

/// Adaptive retry bucket configuration (defaults from Brooker's simulation: 5, 0.1, 1).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveRetryConfig {
    /// Bucket capacity, in tokens.
    #[serde(default = "five")]
    pub bucket_size: f64,
    /// Tokens added per new request, in [0, 1e12].
    #[serde(default = "tenth")]
    pub refill_per_request: f64,
    /// Tokens a retry costs (and must be exceeded for a retry).
    #[serde(default = "one")]
    pub retry_cost: f64,
}

fn five() -> f64 {
    5.0
}
fn tenth() -> f64 {
    0.1
}
fn one() -> f64 {
    1.0
}

fn milli(x: f64) -> i64 {
    (x * 1000.0).round() as i64
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct AdaptiveRetry {
    size: i64,
    refill: i64,
    cost: i64,
    tokens: i64,
}

impl AdaptiveRetry {
    /// Build from config.
    pub fn new(cfg: &AdaptiveRetryConfig) -> Self {
        Self {
            size: milli(cfg.bucket_size),
            refill: milli(cfg.refill_per_request),
            cost: milli(cfg.retry_cost),
            tokens: milli(cfg.bucket_size),
        }
    }
}

impl Policy for AdaptiveRetry {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::ON_REQUEST.with(crate::policy::Hooks::ALLOW_RETRY).with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, _a: &Attempt) -> Admission {
        Admission::Admit
    }

    fn on_request(&mut self, _now: Time, _class: ClassId) -> bool {
        self.tokens = (self.tokens + self.refill).min(self.size);
        false // the status stays the default
    }

    fn allow_retry(&mut self, _ask: &RetryAsk) -> bool {
        if self.tokens > self.cost {
            self.tokens -= self.cost;
            true
        } else {
            false
        }
    }
}

/// Validation messages for [`AdaptiveRetryConfig`].
fn check(c: &AdaptiveRetryConfig) -> Result<(), String> {
    // Finite too: the bucket is kept in whole thousandths of a token (an i64).
    if !(c.bucket_size > 0.0 && c.bucket_size <= 1e12) {
        return Err("AdaptiveRetry.bucket_size must lie in (0, 1e12]".into());
    }
    if !(c.refill_per_request >= 0.0 && c.refill_per_request <= 1e12) {
        return Err("AdaptiveRetry.refill_per_request must lie in [0, 1e12]".into());
    }
    if !(c.retry_cost > 0.0 && c.retry_cost <= 1e12) {
        return Err("AdaptiveRetry.retry_cost must lie in (0, 1e12]".into());
    }
    Ok(())
}

impl PolicyConfig for AdaptiveRetryConfig {
    const KIND: &'static str = "adaptive-retry";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Other)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(check(self)?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(AdaptiveRetry::new(self))
    }
}
