//! The .NET `Microsoft.Extensions.Http.Resilience` standard handler
//! (`AddStandardResilienceHandler`) as a preset stack: `DotnetStandard((...))` stands for
//! the handler's five strategies and is expanded, when the model is built, into five layers
//! in the handler's order, outermost first:
//!
//! 1. rate limiter: `Limiter((permits: rate_limiter_permits, queue: rate_limiter_queue))`
//!    (a `ConcurrencyLimiter`, 1000 permits, queue 0; its queue waits without a time limit);
//! 2. total request timeout: `Timeout((timeout: total_timeout))` (30 s): outside the retry
//!    layer, it bounds the whole request, attempts and delays included, and no retry starts
//!    once it has fired, as .NET's outer Polly timeout does (see `policy/timeout.rs`);
//! 3. retry: `Retry((max_attempts: max_retry_attempts + 1, backoff: retry_delay, multiplier:
//!    2 for Exponential, 1 for Constant))` (3 retries, 2 s exponential), on errors (5xx) and
//!    timeouts; a refusal by the breaker (`BrokenCircuitException`) is not retried;
//! 4. circuit breaker: `Polly((FailureRatio, MinimumThroughput, SamplingDuration,
//!    BreakDuration))` (0.1, 100, 30 s, 5 s), brownout's Polly v8 breaker (v8 has only the
//!    "advanced" failure-ratio breaker);
//! 5. attempt timeout: `Timeout((timeout: attempt_timeout))` (10 s).
//!
//! The layers keep the `DotnetStandard` layer's `classes`, `scope` and `persistent`.
//!
//! What the handler has that brownout cannot express:
//! - `UseJitter`: .NET jitters Constant and Linear delays by +-25 % and Exponential ones
//!   with decorrelated jitter (V2), both centred on the plain delays; brownout's jitter only
//!   shortens delays, so the expansion keeps the plain delays (the same mean for Constant,
//!   about the same for Exponential) and drops the spread.
//! - `Linear` backoff (delay x n): brownout's retry is constant or geometric, so
//!   `retry_backoff: Linear` is refused.
//! - `MaxDelay`, `ShouldHandle` predicates (408 and 429 answers, which brownout has not),
//!   `Retry-After` headers, `BreakDurationGenerator`, manual circuit control (isolate,
//!   close), the rate limiter's `QueueProcessingOrder` (FIFO here), hedging (use `Hedge`).

use serde::{Deserialize, Serialize};

use super::breaker::polly::PollyConfig;
use super::limiter::fixed::{FixedConfig, RefuseAs};
use super::retry::{RetryConfig, dependency_503};
use super::timeout::{TimeoutConfig, TimeoutStart};
use super::{
    Admission, Attempt, BuildCtx, ConfigError, Facts, FallbackRule, Policy, PolicyConfig, PolicySpec, QueueOrder,
};
use crate::engine::Time;
use crate::units::Dur;

/// Polly's `DelayBackoffType`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum DotnetBackoff {
    /// The same delay before every retry.
    Constant,
    /// delay x n before retry n (not expressible: refused).
    Linear,
    /// delay x 2^(n-1) before retry n.
    Exponential,
}

/// `HttpStandardResilienceOptions`, the handler's defaults; see the module docs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DotnetStandardConfig {
    /// `RateLimiter.DefaultRateLimiterOptions.PermitLimit` (default 1000; >= 1).
    #[serde(default = "thousand")]
    pub rate_limiter_permits: u32,
    /// `RateLimiter.DefaultRateLimiterOptions.QueueLimit` (default 0).
    #[serde(default)]
    pub rate_limiter_queue: u32,
    /// `TotalRequestTimeout.Timeout` (default 30 s; above `attempt_timeout`): bounds the whole
    /// request, every attempt and retry delay included.
    #[serde(default = "thirty_s")]
    pub total_timeout: Dur,
    /// `Retry.MaxRetryAttempts`, retries after the first attempt (default 3; >= 1).
    #[serde(default = "three")]
    pub max_retry_attempts: u32,
    /// `Retry.BackoffType` (default `Exponential`).
    #[serde(default = "exponential")]
    pub retry_backoff: DotnetBackoff,
    /// `Retry.Delay` (default 2 s).
    #[serde(default = "two_s")]
    pub retry_delay: Dur,
    /// `Retry.UseJitter` (default true; see the module docs).
    #[serde(default = "yes")]
    pub retry_use_jitter: bool,
    /// `CircuitBreaker.FailureRatio` (default 0.1; in (0, 1]).
    #[serde(default = "tenth")]
    pub failure_ratio: f64,
    /// `CircuitBreaker.MinimumThroughput` (default 100; >= 2).
    #[serde(default = "hundred")]
    pub minimum_throughput: u32,
    /// `CircuitBreaker.SamplingDuration` (default 30 s; 0.5 s to 24 h, as Polly validates, and at
    /// least twice `attempt_timeout`).
    #[serde(default = "thirty_s")]
    pub sampling_duration: Dur,
    /// `CircuitBreaker.BreakDuration` (default 5 s; 0.5 s to 24 h, as Polly validates).
    #[serde(default = "five_s")]
    pub break_duration: Dur,
    /// `AttemptTimeout.Timeout` (default 10 s; > 0), timed from the attempt (a `Timeout` with
    /// `starts: Attempt`: Polly's timeout wraps the whole call, the wait for a connection
    /// included).
    #[serde(default = "ten_s")]
    pub attempt_timeout: Dur,
}

fn thousand() -> u32 {
    1000
}
fn three() -> u32 {
    3
}
fn hundred() -> u32 {
    100
}
fn tenth() -> f64 {
    0.1
}
fn yes() -> bool {
    true
}
fn exponential() -> DotnetBackoff {
    DotnetBackoff::Exponential
}
fn two_s() -> Dur {
    Dur::secs(2)
}
fn five_s() -> Dur {
    Dur::secs(5)
}
fn ten_s() -> Dur {
    Dur::secs(10)
}
fn thirty_s() -> Dur {
    Dur::secs(30)
}

impl Default for DotnetStandardConfig {
    fn default() -> Self {
        ron::from_str("()").expect("every field has a default")
    }
}

impl DotnetStandardConfig {
    /// The five layers it stands for, outermost first (see the module docs).
    pub fn expand(&self) -> Vec<PolicySpec> {
        let multiplier = match self.retry_backoff {
            DotnetBackoff::Exponential => 2.0,
            DotnetBackoff::Constant | DotnetBackoff::Linear => 1.0,
        };
        vec![
            PolicySpec::Limiter(FixedConfig {
                permits: self.rate_limiter_permits,
                queue: self.rate_limiter_queue,
                // .NET's queue has no time limit.
                max_wait: Dur(if self.rate_limiter_queue > 0 { Time::MAX } else { 0 }),
                refuse_as: RefuseAs::Rejected,
                order: QueueOrder::Fifo,
                class_max_wait: Vec::new(),
                shed_by_deadline: false,
            }),
            PolicySpec::Timeout(TimeoutConfig {
                timeout: self.total_timeout,
                unwind: Dur(0),
                starts: TimeoutStart::Attempt,
            }),
            PolicySpec::Retry(RetryConfig {
                max_attempts: self.max_retry_attempts.saturating_add(1),
                backoff: self.retry_delay,
                multiplier,
                max_backoff: None,
                jitter: 0.0,
                on_timeout: true,
                on_error: true,
                on_refusal: dependency_503(),
                give_up: 0.0,
                on_connect_failure: None,
                refused_delay: None,
                max_elapsed: None,
                replica: Default::default(),
            }),
            PolicySpec::Polly(PollyConfig {
                failure_ratio: self.failure_ratio,
                minimum_throughput: self.minimum_throughput,
                sampling_duration: self.sampling_duration,
                break_duration: self.break_duration,
            }),
            PolicySpec::Timeout(TimeoutConfig {
                timeout: self.attempt_timeout,
                unwind: Dur(0),
                starts: TimeoutStart::Attempt,
            }),
        ]
    }
}

impl PolicyConfig for DotnetStandardConfig {
    const KIND: &'static str = "dotnet-standard";

    fn facts(&self) -> Facts {
        // Its expansion holds a Polly breaker and a Retry layer of `max_retry_attempts + 1`
        // attempts.
        Facts::plain(crate::metrics::LayerKind::Other)
            .fallback(FallbackRule::Always)
            .attempts_per_call(f64::from(self.max_retry_attempts) + 1.0)
            .may_call_again(true)
    }

    fn preset_layers(&self) -> Option<Vec<PolicySpec>> {
        Some(self.expand())
    }

    fn validate(&self, classes: &[&str]) -> Result<(), ConfigError> {
        // Polly's CircuitBreakerStrategyOptions (src/Polly.Core/CircuitBreaker/
        // CircuitBreakerStrategyOptions.TResult.cs): BreakDuration and SamplingDuration carry
        // [Range(typeof(TimeSpan), "00:00:00.500", "1.00:00:00")], which .NET validates.
        const HALF_SECOND: u64 = 500_000_000;
        const DAY: u64 = 86_400_000_000_000;
        for (field, d) in [("break_duration", self.break_duration), ("sampling_duration", self.sampling_duration)] {
            if !(HALF_SECOND..=DAY).contains(&d.ns()) {
                return Err(format!(
                    "DotnetStandard.{field} is {d}; .NET (Polly's CircuitBreakerStrategyOptions) requires 0.5 s to 24 h"
                )
                .into());
            }
        }
        let s = |d: Dur| d.ns() as f64 / 1e9;
        if self.rate_limiter_permits == 0 {
            return Err("DotnetStandard.rate_limiter_permits must be >= 1".into());
        }
        if self.max_retry_attempts == 0 {
            return Err("DotnetStandard.max_retry_attempts must be >= 1 (Polly's range)".into());
        }
        if self.retry_backoff == DotnetBackoff::Linear {
            return Err("DotnetStandard.retry_backoff: Linear backoff has no brownout equivalent; \
                        use Constant or Exponential"
                .into());
        }
        if !(self.failure_ratio > 0.0 && self.failure_ratio <= 1.0) {
            return Err("DotnetStandard.failure_ratio must lie in (0, 1]".into());
        }
        if self.attempt_timeout.ns() == 0 {
            return Err("DotnetStandard.attempt_timeout must be > 0".into());
        }
        if self.total_timeout <= self.attempt_timeout {
            return Err(format!(
                "DotnetStandard.total_timeout ({} s) must be above attempt_timeout ({} s), as .NET validates",
                s(self.total_timeout),
                s(self.attempt_timeout)
            )
            .into());
        }
        if self.sampling_duration.ns() < self.attempt_timeout.ns().saturating_mul(2) {
            return Err(format!(
                "DotnetStandard.sampling_duration ({} s) must be at least twice attempt_timeout ({} s), as .NET validates",
                s(self.sampling_duration),
                s(self.attempt_timeout)
            ).into());
        }
        // The layers' own checks, under this layer's names.
        for spec in self.expand() {
            spec.validate(classes).map_err(|m| format!("DotnetStandard: {m}"))?;
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        // The model expands this layer into five before building; built alone (by a
        // program calling `PolicySpec::build` itself) it admits everything.
        Box::new(Unexpanded)
    }
}

/// What an unexpanded `DotnetStandard` builds to: a layer that admits everything.
#[derive(Debug, Clone, Copy)]
pub(super) struct Unexpanded;

impl Policy for Unexpanded {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::ADMIT
    }

    fn admit(&mut self, _a: &Attempt) -> Admission {
        Admission::Admit
    }

    fn reports_status(&self) -> bool {
        false
    }
}
