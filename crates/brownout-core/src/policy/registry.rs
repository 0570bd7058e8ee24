//! The registry: one enum variant per policy, as written in scenario files, and the one
//! place that builds a runtime policy from its config. Adding a policy is one line in each.

use serde::{Deserialize, Serialize};

use super::breaker::consecutive::{Consecutive, ConsecutiveConfig};
use super::breaker::error_rate::{ErrorRate, ErrorRateConfig};
use super::breaker::hystrix::{Hystrix, HystrixConfig};
use super::breaker::latency::{Latency, LatencyConfig};
use super::breaker::polly::{Polly, PollyConfig};
use super::breaker::resilience4j::{Resilience4j, Resilience4jConfig};
use super::breaker::sentinel::{Sentinel, SentinelConfig};
use super::budget::adaptive::{AdaptiveRetry, AdaptiveRetryConfig};
use super::budget::grpc::{GrpcThrottle, GrpcThrottleConfig};
use super::budget::tps::{TpsBudget, TpsBudgetConfig};
use super::bulkhead::{TieredBulkhead, TieredBulkheadConfig};
use super::hedge::{Hedge, HedgeConfig};
use super::limiter::aimd::{Aimd, AimdConfig};
use super::limiter::envoy_gradient::{EnvoyGradient, EnvoyGradientConfig};
use super::limiter::fixed::{Fixed, FixedConfig};
use super::limiter::gradient2::{Gradient2, Gradient2Config};
use super::limiter::vegas::{Vegas, VegasConfig};
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
    /// Plugin factories registered by the program running the scenario.
    pub plugins: super::plugin::Plugins,
}

impl BuildCtx {
    /// The id of class `name`, if it exists.
    pub fn class_id(&self, name: &str) -> Option<ClassId> {
        self.classes.iter().position(|c| c == name).map(|i| i as ClassId)
    }
}

/// A policy as written in a scenario file, e.g. `Timeout((timeout: "250ms"))`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum PolicySpec {
    /// Per-attempt timeout.
    Timeout(TimeoutConfig),
    /// Bounded retry with backoff and jitter.
    Retry(RetryConfig),
    /// Breaker opening after N consecutive failures, single probe (R02).
    ConsecutiveBreaker(ConsecutiveConfig),
    /// Fixed concurrency limit, no queue or a bounded queue.
    Limiter(FixedConfig),
    /// Hedged requests after a fixed delay or a latency percentile.
    Hedge(HedgeConfig),
    /// A policy registered from outside brownout (see `policy::plugin`).
    Plugin(super::plugin::PluginConfig),
    /// Netflix AIMD adaptive limit.
    Aimd(AimdConfig),
    /// Netflix Vegas adaptive limit.
    Vegas(VegasConfig),
    /// Netflix Gradient2 adaptive limit.
    Gradient2(Gradient2Config),
    /// Envoy adaptive-concurrency gradient controller.
    EnvoyGradient(EnvoyGradientConfig),
    /// Tiered bulkhead by request class with a latency trip.
    TieredBulkhead(TieredBulkheadConfig),
    /// tower TpsBudget retry budget.
    RetryBudget(TpsBudgetConfig),
    /// gRPC retry throttling.
    GrpcThrottle(GrpcThrottleConfig),
    /// Marc Brooker's adaptive retry token bucket.
    AdaptiveRetry(AdaptiveRetryConfig),
    /// Error-rate / slow-call-rate breaker with COUNT or TIME window, ageing, stragglers.
    ErrorRateBreaker(ErrorRateConfig),
    /// Windowed latency-percentile breaker.
    LatencyBreaker(LatencyConfig),
    /// resilience4j CircuitBreaker, its parameter names and defaults.
    Resilience4j(Resilience4jConfig),
    /// Polly v8 circuit breaker, its parameter names and defaults.
    Polly(PollyConfig),
    /// Hystrix circuit breaker (health snapshots), its parameter names and defaults.
    Hystrix(HystrixConfig),
    /// Sentinel DegradeRule breaker, its parameter names and defaults.
    Sentinel(SentinelConfig),
}

impl PolicySpec {
    /// Build a fresh runtime policy (one per gateway instance).
    pub fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
        match self {
            PolicySpec::Timeout(c) => Box::new(Timeout::new(c)),
            PolicySpec::Retry(c) => Box::new(Retry::new(c)),
            PolicySpec::ConsecutiveBreaker(c) => Box::new(Consecutive::new(c)),
            PolicySpec::Limiter(c) => Box::new(Fixed::new(c, ctx)),
            PolicySpec::Hedge(c) => Box::new(Hedge::new(c)),
            // Checked by `Model::build`, which builds every plugin once before any run.
            PolicySpec::Plugin(c) => ctx.plugins.build(c, ctx).expect("plugin checked by Model::build"),
            PolicySpec::Aimd(c) => Box::new(Aimd::limiter(c)),
            PolicySpec::Vegas(c) => Box::new(Vegas::limiter(c, ctx)),
            PolicySpec::Gradient2(c) => Box::new(Gradient2::limiter(c)),
            PolicySpec::EnvoyGradient(c) => Box::new(EnvoyGradient::new(c, ctx)),
            PolicySpec::TieredBulkhead(c) => Box::new(TieredBulkhead::new(c, ctx)),
            PolicySpec::RetryBudget(c) => Box::new(TpsBudget::new(c)),
            PolicySpec::GrpcThrottle(c) => Box::new(GrpcThrottle::new(c)),
            PolicySpec::AdaptiveRetry(c) => Box::new(AdaptiveRetry::new(c)),
            PolicySpec::ErrorRateBreaker(c) => Box::new(ErrorRate::new(c)),
            PolicySpec::LatencyBreaker(c) => Box::new(Latency::new(c)),
            PolicySpec::Resilience4j(c) => Box::new(Resilience4j::new(c)),
            PolicySpec::Polly(c) => Box::new(Polly::new(c)),
            PolicySpec::Hystrix(c) => Box::new(Hystrix::new(c)),
            PolicySpec::Sentinel(c) => Box::new(Sentinel::new(c)),
        }
    }

    /// Check values that serde cannot: returns what is wrong, naming the field.
    /// `classes` are the scenario's class names (for per-class settings).
    // `!(x >= 1.0)` is deliberate: it also rejects NaN.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn validate(&self, classes: &[&str]) -> Result<(), String> {
        match self {
            PolicySpec::Timeout(c) if c.timeout.ns() == 0 => Err("Timeout.timeout must be > 0".into()),
            PolicySpec::Retry(c) if c.max_attempts == 0 => {
                Err("Retry.max_attempts must be >= 1 (it counts the first call)".into())
            }
            PolicySpec::Retry(c) if !(0.0..=1.0).contains(&c.jitter) => Err("Retry.jitter must lie in [0, 1]".into()),
            PolicySpec::Retry(c) if c.multiplier.is_nan() || c.multiplier < 1.0 => {
                Err("Retry.multiplier must be >= 1".into())
            }
            PolicySpec::ConsecutiveBreaker(c) if c.failures == 0 => {
                Err("ConsecutiveBreaker.failures must be >= 1".into())
            }
            PolicySpec::ConsecutiveBreaker(c) if c.probes == 0 => Err("ConsecutiveBreaker.probes must be >= 1".into()),
            PolicySpec::Limiter(c) if c.permits == 0 => Err("Limiter.permits must be >= 1".into()),
            PolicySpec::Limiter(c) if c.queue > 0 && c.max_wait.ns() == 0 => {
                Err("Limiter.queue > 0 needs a max_wait > 0 (with max_wait 0 nothing ever waits)".into())
            }
            PolicySpec::Limiter(c) if c.class_max_wait.iter().any(|(n, _)| !classes.contains(&n.as_str())) => {
                Err("Limiter.class_max_wait names an unknown class".into())
            }
            PolicySpec::Hedge(c) if !(c.latency_percentile > 0.0 && c.latency_percentile < 1.0) => {
                Err("Hedge.latency_percentile must lie in (0, 1)".into())
            }
            PolicySpec::Hedge(c) if c.period.ns() == 0 => Err("Hedge.period must be > 0".into()),
            PolicySpec::Plugin(c) if c.name.trim().is_empty() => Err("Plugin.name must not be empty".into()),
            PolicySpec::Aimd(c) => super::limiter::aimd::validate(c),
            PolicySpec::Vegas(c) => super::limiter::vegas::validate(c),
            PolicySpec::Gradient2(c) => super::limiter::gradient2::validate(c),
            PolicySpec::EnvoyGradient(c) => super::limiter::envoy_gradient::validate(c),
            PolicySpec::TieredBulkhead(c) => super::bulkhead::validate(c, classes),
            PolicySpec::RetryBudget(c) => super::budget::tps::validate(c),
            PolicySpec::GrpcThrottle(c) => super::budget::grpc::validate(c),
            PolicySpec::AdaptiveRetry(c) => super::budget::adaptive::validate(c),
            PolicySpec::ErrorRateBreaker(c) => c.validate(),
            PolicySpec::LatencyBreaker(c) => c.validate(),
            PolicySpec::Resilience4j(c) => c.validate(),
            PolicySpec::Polly(c) => c.validate(),
            PolicySpec::Hystrix(c) => c.validate(),
            PolicySpec::Sentinel(c) => c.validate(),
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
            PolicySpec::Hedge(_) => "hedge",
            PolicySpec::Plugin(_) => "plugin",
            PolicySpec::Aimd(_) => "aimd",
            PolicySpec::Vegas(_) => "vegas",
            PolicySpec::Gradient2(_) => "gradient2",
            PolicySpec::EnvoyGradient(_) => "envoy-gradient",
            PolicySpec::TieredBulkhead(_) => "tiered-bulkhead",
            PolicySpec::RetryBudget(_) => "retry-budget",
            PolicySpec::GrpcThrottle(_) => "grpc-throttle",
            PolicySpec::AdaptiveRetry(_) => "adaptive-retry",
            PolicySpec::ErrorRateBreaker(_) => "error-rate-breaker",
            PolicySpec::LatencyBreaker(_) => "latency-breaker",
            PolicySpec::Resilience4j(_) => "resilience4j-breaker",
            PolicySpec::Polly(_) => "polly-breaker",
            PolicySpec::Hystrix(_) => "hystrix-breaker",
            PolicySpec::Sentinel(_) => "sentinel-breaker",
        }
    }
}
