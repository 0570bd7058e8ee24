//! The registry: one line per policy, as written in scenario files. Each line names a config
//! type that implements [`PolicyConfig`] (kind, validation, build) beside its policy, so the
//! compiler refuses a policy whose validation or build is missing.

use serde::{Deserialize, Serialize};

use super::plugin::Plugins;
use super::{ClassId, Policy};

/// A policy's config as a scenario file holds it: everything the registry needs of it.
pub trait PolicyConfig {
    /// Short kind name for reports, e.g. `"limiter"`.
    const KIND: &'static str;

    /// Check values that serde cannot: returns what is wrong, naming the field. `classes`
    /// are the scenario's class names (for per-class settings).
    fn validate(&self, classes: &[&str]) -> Result<(), String>;

    /// Build a fresh runtime policy (one per gateway instance). Called only on a config that
    /// passed [`PolicyConfig::validate`].
    fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy>;
}

/// What a policy may need to know about the scenario when it is built.
///
/// `#[non_exhaustive]`: build it with [`BuildCtx::new`] and the setters.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BuildCtx {
    /// Class names; a class's [`ClassId`] is its index here.
    pub classes: Vec<String>,
    /// Index of the gateway instance the policy runs on.
    pub instance: u32,
    /// Number of gateway instances.
    pub instances: u32,
    /// Plugin factories registered by the program running the scenario.
    pub plugins: Plugins,
    /// The run's root seed (the replication's): a policy's own random draws (Vegas's probe
    /// jitter, Envoy's min_rtt jitter) derive from it, so replications vary them.
    pub seed: u64,
    /// The layer's position in its stack, so two layers of one stack draw apart.
    pub layer: u32,
}

impl BuildCtx {
    /// For a scenario with these class names, on instance 0 of 1, with no plugins.
    pub fn new(classes: Vec<String>) -> Self {
        Self { classes, instance: 0, instances: 1, plugins: Plugins::new(), seed: 0, layer: 0 }
    }

    /// For a run with root seed `seed`.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// For layer `layer` (its index in the stack).
    pub fn at_layer(mut self, layer: u32) -> Self {
        self.layer = layer;
        self
    }

    /// The key of this layer on this instance, for counter-based draws keyed by both.
    pub fn draw_key(&self) -> u64 {
        (u64::from(self.layer) << 32) | u64::from(self.instance)
    }

    /// On gateway instance `instance` of `instances`.
    pub fn on_instance(mut self, instance: u32, instances: u32) -> Self {
        self.instance = instance;
        self.instances = instances;
        self
    }

    /// With these plugin factories.
    pub fn with_plugins(mut self, plugins: Plugins) -> Self {
        self.plugins = plugins;
        self
    }

    /// The id of class `name`, if it exists.
    pub fn class_id(&self, name: &str) -> Option<ClassId> {
        self.classes.iter().position(|c| c == name).map(|i| i as ClassId)
    }
}

/// Declares [`PolicySpec`] from one `Variant(ConfigType)` line per policy and dispatches
/// `kind`, `validate` and `build` to the config's [`PolicyConfig`] impl.
macro_rules! policies {
    ($($(#[$doc:meta])* $variant:ident($cfg:ty),)+) => {
        /// A policy as written in a scenario file, e.g. `Timeout((timeout: "250ms"))`.
        #[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
        pub enum PolicySpec {
            $(
                $(#[$doc])*
                $variant($cfg),
            )+
        }

        impl PolicySpec {
            /// Build a fresh runtime policy (one per gateway instance).
            pub fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
                match self {
                    $(PolicySpec::$variant(c) => c.build(ctx),)+
                }
            }

            /// Check values that serde cannot: returns what is wrong, naming the field.
            /// `classes` are the scenario's class names (for per-class settings).
            pub fn validate(&self, classes: &[&str]) -> Result<(), String> {
                match self {
                    $(PolicySpec::$variant(c) => c.validate(classes),)+
                }
            }

            /// Short kind name for reports.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(PolicySpec::$variant(_) => <$cfg as PolicyConfig>::KIND,)+
                }
            }
        }
    };
}

// One line per policy (under its one-line description): the name scenario files use, and its
// config type.
policies! {
    /// Per-attempt timeout.
    Timeout(super::timeout::TimeoutConfig),
    /// Bounded retry with backoff and jitter.
    Retry(super::retry::RetryConfig),
    /// Breaker opening after N consecutive failures, single probe (R02).
    ConsecutiveBreaker(super::breaker::consecutive::ConsecutiveConfig),
    /// Fixed concurrency limit, no queue or a bounded queue.
    Limiter(super::limiter::fixed::FixedConfig),
    /// Hedged requests after a fixed delay or a latency percentile.
    Hedge(super::hedge::HedgeConfig),
    /// A policy registered from outside brownout (see `policy::plugin`).
    Plugin(super::plugin::PluginConfig),
    /// Netflix AIMD adaptive limit.
    Aimd(super::limiter::aimd::AimdConfig),
    /// Netflix Vegas adaptive limit.
    Vegas(super::limiter::vegas::VegasConfig),
    /// Netflix Gradient2 adaptive limit.
    Gradient2(super::limiter::gradient2::Gradient2Config),
    /// Envoy adaptive-concurrency gradient controller.
    EnvoyGradient(super::limiter::envoy_gradient::EnvoyGradientConfig),
    /// Tiered bulkhead by request class with a latency trip.
    TieredBulkhead(super::bulkhead::TieredBulkheadConfig),
    /// tower TpsBudget retry budget.
    RetryBudget(super::budget::tps::TpsBudgetConfig),
    /// gRPC retry throttling.
    GrpcThrottle(super::budget::grpc::GrpcThrottleConfig),
    /// Marc Brooker's adaptive retry token bucket.
    AdaptiveRetry(super::budget::adaptive::AdaptiveRetryConfig),
    /// Error-rate / slow-call-rate breaker with COUNT or TIME window, ageing, stragglers.
    ErrorRateBreaker(super::breaker::error_rate::ErrorRateConfig),
    /// Windowed latency-percentile breaker.
    LatencyBreaker(super::breaker::latency::LatencyConfig),
    /// resilience4j CircuitBreaker, its parameter names and defaults.
    Resilience4j(super::breaker::resilience4j::Resilience4jConfig),
    /// Polly v8 circuit breaker, its parameter names and defaults.
    Polly(super::breaker::polly::PollyConfig),
    /// Hystrix circuit breaker (health snapshots), its parameter names and defaults.
    Hystrix(super::breaker::hystrix::HystrixConfig),
    /// Sentinel DegradeRule breaker, its parameter names and defaults.
    Sentinel(super::breaker::sentinel::SentinelConfig),
    /// Refuse an attempt at once when its request has less than `min_remaining` of its deadline left.
    ShedByDeadline(super::shed::ShedByDeadlineConfig),
    /// Envoy cluster circuit breakers: max connections, pending requests, requests and retries per priority.
    EnvoyThresholds(super::envoy::EnvoyThresholdsConfig),
    /// .NET `AddStandardResilienceHandler`: five layers (rate limiter, total timeout, retry, Polly breaker, attempt timeout).
    DotnetStandard(super::dotnet::DotnetStandardConfig),
    /// The layers of a library's configuration file (resilience4j, Envoy/Istio, opossum, .NET), read when the scenario is loaded.
    Import(super::import_layer::ImportLayerConfig),
    /// opossum (Node) circuit breaker, its option names (snake_case) and defaults.
    Opossum(super::breaker::opossum::OpossumConfig),
}
