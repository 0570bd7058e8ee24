//! Token-bucket rate limiter (Guava's `RateLimiter` without warm-up, Envoy's local rate
//! limit): `burst` tokens, refilled at `rate_per_s`; an attempt takes one token or is refused
//! at once as 429. Tokens are counted in nanotokens, so refilling is integer arithmetic.

use serde::{Deserialize, Serialize};

use super::{Admission, Attempt, BuildCtx, ConfigError, Policy, PolicyConfig, Refusal};
use crate::engine::{SECOND, Time};

/// Token-bucket configuration, e.g. `TokenBucket((rate_per_s: 100, burst: 20))`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenBucketConfig {
    /// Tokens added per second, per instance (>= 1).
    pub rate_per_s: u32,
    /// Tokens the bucket holds, and starts with (>= 1).
    pub burst: u32,
}

impl PolicyConfig for TokenBucketConfig {
    const KIND: &'static str = "token-bucket";

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        if self.rate_per_s == 0 {
            return Err("TokenBucket.rate_per_s must be >= 1".into());
        }
        if self.burst == 0 {
            return Err("TokenBucket.burst must be >= 1 (with no token nothing passes)".into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        let cap = u128::from(self.burst) * u128::from(SECOND);
        Box::new(TokenBucket { rate: u128::from(self.rate_per_s), cap, tokens: cap, at: 0 })
    }

    fn layer_kind(&self) -> crate::metrics::LayerKind {
        crate::metrics::LayerKind::Limiter
    }

    fn refuses_into_fallback(&self, _class: &str) -> bool {
        false // a 429
    }

    fn window_samples(&self) -> f64 {
        0.0
    }

    fn attempts_per_call(&self) -> f64 {
        1.0
    }

    fn may_call_again(&self) -> bool {
        false
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    /// Nanotokens added per nanosecond (= tokens per second).
    rate: u128,
    cap: u128,
    tokens: u128,
    at: Time,
}

impl Policy for TokenBucket {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::ADMIT
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        let elapsed = u128::from(a.now.saturating_sub(self.at));
        self.tokens = (self.tokens + elapsed * self.rate).min(self.cap);
        self.at = self.at.max(a.now);
        if self.tokens >= u128::from(SECOND) {
            self.tokens -= u128::from(SECOND);
            Admission::Admit
        } else {
            Admission::Refuse(Refusal::Rejected)
        }
    }

    fn reports_status(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND as MS;

    #[test]
    fn a_burst_then_one_token_per_tenth_of_a_second() {
        // 10 per second, burst 2: two at t = 0, the third refused; 100 ms later one token.
        let cfg = TokenBucketConfig { rate_per_s: 10, burst: 2 };
        cfg.validate(&[]).expect("valid");
        let mut p = cfg.build(&BuildCtx::default());
        let at = |ms: u64, id| Attempt::new(ms * MS, 0, id);
        assert_eq!(p.admit(&at(0, 1)), Admission::Admit);
        assert_eq!(p.admit(&at(0, 2)), Admission::Admit);
        assert_eq!(p.admit(&at(0, 3)), Admission::Refuse(Refusal::Rejected));
        assert_eq!(p.admit(&at(99, 4)), Admission::Refuse(Refusal::Rejected));
        assert_eq!(p.admit(&at(100, 5)), Admission::Admit);
        // A long pause refills only up to the burst.
        assert_eq!(p.admit(&at(10_000, 6)), Admission::Admit);
        assert_eq!(p.admit(&at(10_000, 7)), Admission::Admit);
        assert_eq!(p.admit(&at(10_000, 8)), Admission::Refuse(Refusal::Rejected));
    }
}
