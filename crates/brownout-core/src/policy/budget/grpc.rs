//! gRPC `retryThrottling{maxTokens, tokenRatio}`: tokens start at `max_tokens`; a failed
//! attempt takes one, a successful one gives back `token_ratio` (capped at `max_tokens`);
//! retries are allowed only while tokens > max_tokens / 2.
//!
//! Tokens are kept in thousandths as gRPC core does (`token_ratio` has three decimals).
//! Errors and timeouts count as failures. Place it at or inside the Retry layer so that it
//! sees every attempt (outside it sees one outcome per request).

use serde::{Deserialize, Serialize};

use crate::policy::{Admission, Attempt, Completed, Policy, RetryAsk};
use crate::policy::{BuildCtx, ConfigError, Facts, PolicyConfig};

/// gRPC retry throttling configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrpcThrottleConfig {
    /// Bucket size, 1 to 1000.
    pub max_tokens: u32,
    /// Tokens returned per success (> 0, three decimals).
    pub token_ratio: f64,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct GrpcThrottle {
    max_milli: i64,
    ratio_milli: i64,
    milli: i64,
}

impl GrpcThrottle {
    /// Build from config.
    pub fn new(cfg: &GrpcThrottleConfig) -> Self {
        let max_milli = cfg.max_tokens as i64 * 1000;
        Self { max_milli, ratio_milli: (cfg.token_ratio * 1000.0).round() as i64, milli: max_milli }
    }
}

impl Policy for GrpcThrottle {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ALLOW_RETRY).with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, _a: &Attempt) -> Admission {
        Admission::Admit
    }

    fn complete(&mut self, d: &Completed) {
        self.milli = if d.outcome.is_failure() {
            (self.milli - 1000).max(0)
        } else {
            (self.milli + self.ratio_milli).min(self.max_milli)
        };
    }

    fn allow_retry(&mut self, _ask: &RetryAsk) -> bool {
        self.milli > self.max_milli / 2
    }
}

/// Validation messages for [`GrpcThrottleConfig`].
fn check(c: &GrpcThrottleConfig) -> Result<(), String> {
    if c.max_tokens == 0 || c.max_tokens > 1000 {
        return Err("GrpcThrottle.max_tokens must lie in [1, 1000]".into());
    }
    if c.token_ratio.is_nan() || c.token_ratio <= 0.0 {
        return Err("GrpcThrottle.token_ratio must be > 0".into());
    }
    Ok(())
}

impl PolicyConfig for GrpcThrottleConfig {
    const KIND: &'static str = "grpc-throttle";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Other)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(check(self)?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(GrpcThrottle::new(self))
    }
}
