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
}

impl BuildCtx {
    /// For a scenario with these class names, on instance 0 of 1, with no plugins.
    pub fn new(classes: Vec<String>) -> Self {
        Self { classes, instance: 0, instances: 1, plugins: Plugins::new() }
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
    ($($variant:ident($cfg:ty),)+) => {
        /// A policy as written in a scenario file, e.g. `Timeout((timeout: "250ms"))`.
        #[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
        pub enum PolicySpec {
            $(
                #[doc = concat!("See [`", stringify!($cfg), "`].")]
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

// One line per policy: the name scenario files use, and its config type.
policies! {
    Timeout(super::timeout::TimeoutConfig),
    Retry(super::retry::RetryConfig),
    ConsecutiveBreaker(super::breaker::consecutive::ConsecutiveConfig),
    Limiter(super::limiter::fixed::FixedConfig),
    Hedge(super::hedge::HedgeConfig),
    Plugin(super::plugin::PluginConfig),
    Aimd(super::limiter::aimd::AimdConfig),
    Vegas(super::limiter::vegas::VegasConfig),
    Gradient2(super::limiter::gradient2::Gradient2Config),
    EnvoyGradient(super::limiter::envoy_gradient::EnvoyGradientConfig),
    TieredBulkhead(super::bulkhead::TieredBulkheadConfig),
    RetryBudget(super::budget::tps::TpsBudgetConfig),
    GrpcThrottle(super::budget::grpc::GrpcThrottleConfig),
    AdaptiveRetry(super::budget::adaptive::AdaptiveRetryConfig),
    ErrorRateBreaker(super::breaker::error_rate::ErrorRateConfig),
    LatencyBreaker(super::breaker::latency::LatencyConfig),
    Resilience4j(super::breaker::resilience4j::Resilience4jConfig),
    Polly(super::breaker::polly::PollyConfig),
    Hystrix(super::breaker::hystrix::HystrixConfig),
    Sentinel(super::breaker::sentinel::SentinelConfig),
    ShedByDeadline(super::shed::ShedByDeadlineConfig),
}
