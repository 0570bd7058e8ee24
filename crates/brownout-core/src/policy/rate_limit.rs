//! Token-bucket rate limiter: Envoy's local rate limit, `RateLimit((rate_per_s: 100.0,
//! burst: 20))`.
//!
//! Envoy's semantics, not Guava's: the bucket starts full with `burst` tokens (Envoy's
//! `max_tokens`) and refills continuously at `rate_per_s` (`tokens_per_fill / fill_interval`),
//! never past `burst`, losing the partial token while full (`TokenBucketImpl::consume`,
//! `source/common/common/token_bucket_impl.cc`: `tokens_ = min(elapsed * fill_rate + tokens_,
//! max_tokens_)`); an attempt takes one token or is refused at once (Envoy's local rate limit
//! answers 429 and never queues). Guava's `SmoothBursty` instead lets a request through on
//! credit and makes the next one wait; this layer never delays.
//!
//! Tokens refill in whole nanoseconds: one token every `ceil(1e9 / rate_per_s)` ns, so the
//! rate is exact for rates that divide a second and otherwise rounded down by under 1 ns per
//! token. Hence the closed form: in any window of length `t` the layer admits at most
//! `burst + t / period` attempts, and under constant overload exactly `burst + floor(T /
//! period)` over `T` from a full bucket.
//!
//! One bucket per instance (the libraries' local limit); `scope: Fleet(..)` on the layer
//! shares one bucket by the fleet (a global limit). `per_class: true` keeps one bucket per
//! class instead of one for all the classes the layer sees.

use serde::{Deserialize, Serialize};

use super::limiter::fixed::RefuseAs;
use super::{Admission, Attempt, BuildCtx, ConfigError, Facts, Policy, PolicyConfig};
use crate::engine::{SECOND, Time};

/// Token-bucket configuration, e.g. `RateLimit((rate_per_s: 100.0, burst: 20))`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimitConfig {
    /// Tokens added per second (Envoy's `tokens_per_fill / fill_interval`), > 0 and at most
    /// 1e9 (one per nanosecond).
    pub rate_per_s: f64,
    /// Bucket size, the tokens it starts with and the most it holds (Envoy's `max_tokens`),
    /// >= 1.
    pub burst: u32,
    /// How a refused attempt is answered: `Rejected` (429, Envoy's local rate limit) or
    /// `Fallback` (the class's fallback answer).
    #[serde(default = "rejected")]
    pub refuse_as: RefuseAs,
    /// One bucket per class instead of one shared by every class the layer sees.
    #[serde(default)]
    pub per_class: bool,
}

fn rejected() -> RefuseAs {
    RefuseAs::Rejected
}

impl RateLimitConfig {
    /// Nanoseconds per token: `ceil(1e9 / rate_per_s)`.
    pub fn period(&self) -> Time {
        ((SECOND as f64) / self.rate_per_s).ceil() as Time
    }
}

impl PolicyConfig for RateLimitConfig {
    const KIND: &'static str = "rate-limit";

    fn facts(&self) -> Facts {
        // Its refusals count with the limiters' (`limiter_refused`): refused by a limit.
        Facts::plain(crate::metrics::LayerKind::Limiter).fallback(self.refuse_as.fallback_rule())
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        if !(self.rate_per_s > 0.0 && self.rate_per_s <= SECOND as f64) {
            return Err("RateLimit.rate_per_s must be > 0 and at most 1e9 (one token per nanosecond)".into());
        }
        if self.burst == 0 {
            return Err("RateLimit.burst must be >= 1 (the bucket holds at least one token)".into());
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
        let buckets = if self.per_class { ctx.classes.len().max(1) } else { 1 };
        Box::new(RateLimit {
            period: self.period(),
            burst: u64::from(self.burst),
            refuse_as: self.refuse_as,
            per_class: self.per_class,
            buckets: vec![Bucket { tokens: u64::from(self.burst), last: 0, carry: 0 }; buckets],
        })
    }
}

/// One bucket: whole tokens, and the time toward the next one.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Whole tokens held (at most `burst`).
    tokens: u64,
    /// When it was last refilled.
    last: Time,
    /// Nanoseconds accumulated toward the next token since `last` (< period; 0 while full).
    carry: Time,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct RateLimit {
    period: Time,
    burst: u64,
    refuse_as: RefuseAs,
    per_class: bool,
    buckets: Vec<Bucket>,
}

impl RateLimit {
    /// Refill `b` up to `now` and take a token if there is one.
    fn take(period: Time, burst: u64, b: &mut Bucket, now: Time) -> bool {
        let elapsed = now.saturating_sub(b.last).saturating_add(b.carry);
        b.last = now;
        let added = elapsed / period;
        b.tokens = b.tokens.saturating_add(added).min(burst);
        b.carry = if b.tokens == burst { 0 } else { elapsed % period };
        if b.tokens == 0 {
            return false;
        }
        b.tokens -= 1;
        true
    }
}

impl Policy for RateLimit {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::ADMIT
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        let i = if self.per_class { (a.class as usize).min(self.buckets.len() - 1) } else { 0 };
        if Self::take(self.period, self.burst, &mut self.buckets[i], a.now) {
            Admission::Admit
        } else {
            Admission::Refuse(self.refuse_as.refusal())
        }
    }

    fn refusal(&self, _class: crate::policy::ClassId) -> crate::policy::Refusal {
        self.refuse_as.refusal()
    }

    fn reports_status(&self) -> bool {
        false // `status` is the default, always
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND as MS;

    fn limiter(rate_per_s: f64, burst: u32) -> Box<dyn Policy> {
        RateLimitConfig { rate_per_s, burst, refuse_as: RefuseAs::Rejected, per_class: false }
            .build(&BuildCtx::new(vec!["a".into(), "b".into()]))
    }

    fn admitted(p: &mut dyn Policy, now: Time, class: u16) -> bool {
        p.admit(&Attempt::new(now, class, 0)) == Admission::Admit
    }

    #[test]
    fn a_full_bucket_admits_its_burst_then_one_per_period() {
        // 10/s, burst 3: three at t = 0, the fourth refused; one token every 100 ms.
        let mut p = limiter(10.0, 3);
        let at0: Vec<bool> = (0..4).map(|_| admitted(p.as_mut(), 0, 0)).collect();
        assert_eq!(at0, [true, true, true, false]);
        assert!(!admitted(p.as_mut(), 99 * MS, 0));
        assert!(admitted(p.as_mut(), 100 * MS, 0));
        assert!(!admitted(p.as_mut(), 150 * MS, 0));
        // The 50 ms since the last token count toward the next: due at 200 ms.
        assert!(!admitted(p.as_mut(), 199 * MS, 0));
        assert!(admitted(p.as_mut(), 200 * MS, 0));
    }

    #[test]
    fn a_full_bucket_does_not_bank_time() {
        // Idle for 10 s with burst 2: two tokens, not 100; the partial token is dropped while full.
        let mut p = limiter(10.0, 2);
        assert!(admitted(p.as_mut(), 0, 0));
        let burst: Vec<bool> = (0..3).map(|_| admitted(p.as_mut(), 10_000 * MS, 0)).collect();
        assert_eq!(burst, [true, true, false]);
    }

    #[test]
    fn per_class_buckets_are_separate() {
        let mut shared = limiter(1.0, 1);
        assert!(admitted(shared.as_mut(), 0, 0));
        assert!(!admitted(shared.as_mut(), 0, 1));
        let mut apart = RateLimitConfig { rate_per_s: 1.0, burst: 1, refuse_as: RefuseAs::Rejected, per_class: true }
            .build(&BuildCtx::new(vec!["a".into(), "b".into()]));
        assert!(admitted(apart.as_mut(), 0, 0));
        assert!(admitted(apart.as_mut(), 0, 1));
        assert!(!admitted(apart.as_mut(), 0, 1));
    }

    #[test]
    fn the_period_rounds_up_to_whole_nanoseconds() {
        let c = |rate_per_s| RateLimitConfig { rate_per_s, burst: 1, refuse_as: RefuseAs::Rejected, per_class: false };
        assert_eq!(c(1000.0).period(), 1_000_000);
        assert_eq!(c(3.0).period(), 333_333_334);
        assert_eq!(c(1e9).period(), 1);
    }
}
