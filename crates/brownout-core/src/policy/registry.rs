//! The registry: one line per policy, as written in scenario files. Each line names a config
//! type that implements [`PolicyConfig`] (kind, validation, build) beside its policy, so the
//! compiler refuses a policy whose validation or build is missing.

use serde::{Deserialize, Serialize};

use super::plugin::Plugins;
use super::{ClassId, Policy};
use crate::metrics::LayerKind;

/// A policy's config as a scenario file holds it: everything the registry needs of it.
pub trait PolicyConfig {
    /// Short kind name for reports, e.g. `"limiter"`.
    const KIND: &'static str;

    /// Check values that serde cannot: returns what is wrong, naming the field. `classes`
    /// are the scenario's class names (for per-class settings).
    fn validate(&self, classes: &[&str]) -> Result<(), ConfigError>;

    /// Build a fresh runtime policy (one per gateway instance). Called only on a config that
    /// passed [`PolicyConfig::validate`].
    fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy>;

    /// The facts the rest of brownout reads about this policy: where its refusals count, whose
    /// fallback they let answer, its memory term, its attempts and calls per request. No
    /// default body: a policy that leaves it out does not compile, instead of silently
    /// counting as "other". Most write one line, `Facts::plain(LayerKind::..)` and a setter
    /// or two.
    fn facts(&self) -> Facts;

    /// The layers a preset stands for, outermost first, replacing it before a world is built
    /// (`DotnetStandard`); None for a policy that is one layer itself, as nearly all are.
    fn preset_layers(&self) -> Option<Vec<PolicySpec>> {
        None
    }
}

/// What the rest of brownout reads about a policy ([`PolicyConfig::facts`]): one value, so a
/// policy states them in one place and a reader asks for them once.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// Where this layer's refusals that are not short circuits count in `causes` (and, for a
    /// limiter or a bulkhead, which queue-wait figures its waits feed).
    pub layer: LayerKind,
    /// Whose fallback a refusal by this layer can let answer (model/world/outcome.rs,
    /// `conclude`): a breaker's short circuit, a limiter with `refuse_as: Fallback`, a bulkhead
    /// class with `on_full: FallbackNow`. A 429 is the answer the policy chose and never falls
    /// back. A class whose fallback is `OnRefusal` needs a layer whose rule admits it.
    /// [`FallbackRule::Always`] where it is known only later (plugins, imports).
    pub fallback: FallbackRule,
    /// Outcomes (or buckets) one instance of this layer keeps, growing with its settings: the
    /// memory estimate's term for it (0 for a layer whose state is fixed-size).
    pub window_samples: f64,
    /// Attempts one call into this layer may make: a retry's `max_attempts`, 1 for a layer
    /// that does not retry. The estimate multiplies them over a stack against
    /// `limits.max_attempts`.
    pub attempts_per_call: f64,
    /// The layer may send more than one dependency call for one request (retries, hedges;
    /// true where it is known only later: plugins, imports). The feasibility bound needs one
    /// call per request.
    pub may_call_again: bool,
}

impl Facts {
    /// A layer of kind `layer` whose refusals never let a fallback answer, whose state is
    /// fixed-size, and which makes one attempt and one call per call into it: most policies.
    pub const fn plain(layer: LayerKind) -> Self {
        Self {
            layer,
            fallback: FallbackRule::Never,
            window_samples: 0.0,
            attempts_per_call: 1.0,
            may_call_again: false,
        }
    }

    /// A layer known only once built or read (a plugin, an import): counted as `Other`, and
    /// assumed to refuse into any fallback and to call again, so that no check refuses a
    /// scenario for what the layer may turn out not to do.
    pub const UNKNOWN: Self = Self {
        layer: LayerKind::Other,
        fallback: FallbackRule::Always,
        window_samples: 0.0,
        attempts_per_call: 1.0,
        may_call_again: true,
    };

    /// With fallback rule `rule`.
    pub fn fallback(mut self, rule: FallbackRule) -> Self {
        self.fallback = rule;
        self
    }

    /// Keeping `samples` outcomes (or buckets) per instance.
    pub fn window_samples(mut self, samples: f64) -> Self {
        self.window_samples = samples;
        self
    }

    /// Making up to `attempts` attempts per call.
    pub fn attempts_per_call(mut self, attempts: f64) -> Self {
        self.attempts_per_call = attempts;
        self
    }

    /// Sending more than one call per request when `again`.
    pub fn may_call_again(mut self, again: bool) -> Self {
        self.may_call_again = again;
        self
    }
}

/// Which classes' fallback a layer's refusal lets answer ([`Facts::fallback`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FallbackRule {
    /// No class's: its refusals are answers of their own (a 429, a 502, a 503 error).
    Never,
    /// Every class's (a breaker's short circuit, `refuse_as: Fallback`).
    Always,
    /// These classes' only, by name (a bulkhead's `on_full: FallbackNow` classes).
    Classes(Vec<String>),
}

impl FallbackRule {
    /// `Always` when `falls_back`, else `Never`.
    pub fn when(falls_back: bool) -> Self {
        if falls_back { FallbackRule::Always } else { FallbackRule::Never }
    }

    /// Refusing an attempt of class `class` can let the class's fallback answer.
    pub fn admits(&self, class: &str) -> bool {
        match self {
            FallbackRule::Never => false,
            FallbackRule::Always => true,
            FallbackRule::Classes(names) => names.iter().any(|n| n == class),
        }
    }
}

/// What is wrong with a policy's settings: the field, and a message that starts with it (e.g.
/// `Limiter.permits must be >= 1`). The scenario's loader locates the message at the field in
/// the file (`policies[i].stack[j].policy.Limiter.permits`).
///
/// `#[non_exhaustive]`: build it from the message (`"...".into()`, `format!(..).into()`), whose
/// leading path is the field.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigError {
    /// The field inside the policy as scenario files write it, e.g. `Limiter.class_max_wait`
    /// or `TieredBulkhead.classes[1].name`; empty when the message starts with no field.
    pub field: String,
    /// What is wrong, starting with the field.
    pub message: String,
}

impl ConfigError {
    /// The error `message`, located at the field path it starts with.
    pub fn new(message: impl Into<String>) -> Self {
        let message = message.into();
        Self { field: message_path(&message).to_string(), message }
    }
}

impl From<String> for ConfigError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for ConfigError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// The field path a message starts with: `Limiter.class_max_wait` of
/// `Limiter.class_max_wait: unknown class ..`, brackets and all (`classes[0].name`), without
/// the full stop that may end it.
fn message_path(message: &str) -> &str {
    let mut depth = 0;
    let end = message
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            depth == 0 && !(c.is_ascii_alphanumeric() || "_.[]".contains(c))
        })
        .map_or(message.len(), |(i, _)| i);
    message[..end].trim_end_matches('.')
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

/// Declares [`PolicySpec`] from one `Variant(ConfigType)` line per policy, under its one-line
/// description, and dispatches every [`PolicyConfig`] method to the config's impl.
macro_rules! policies {
    ($(#[doc = $doc:literal] $variant:ident($cfg:ty),)+) => {
        /// A policy as written in a scenario file, e.g. `Timeout((timeout: "250ms"))`.
        #[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
        pub enum PolicySpec {
            $(
                #[doc = $doc]
                $variant($cfg),
            )+
        }

        impl PolicySpec {
            /// Every registered policy, in registry order: the name scenario files use and its
            /// one-line description.
            pub const REGISTRY: &'static [(&'static str, &'static str)] = &[$((stringify!($variant), $doc.trim_ascii()),)+];

            /// The name scenario files use, e.g. `"Limiter"`.
            pub fn name(&self) -> &'static str {
                match self {
                    $(PolicySpec::$variant(_) => stringify!($variant),)+
                }
            }

            /// Build a fresh runtime policy (one per gateway instance).
            pub fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
                match self {
                    $(PolicySpec::$variant(c) => c.build(ctx),)+
                }
            }

            /// Check values that serde cannot: returns what is wrong, naming the field.
            /// `classes` are the scenario's class names (for per-class settings).
            pub fn validate(&self, classes: &[&str]) -> Result<(), ConfigError> {
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

            /// See [`PolicyConfig::facts`].
            pub fn facts(&self) -> Facts {
                match self {
                    $(PolicySpec::$variant(c) => c.facts(),)+
                }
            }

            /// See [`PolicyConfig::preset_layers`].
            pub fn preset_layers(&self) -> Option<Vec<PolicySpec>> {
                match self {
                    $(PolicySpec::$variant(c) => c.preset_layers(),)+
                }
            }

            /// How many layers this policy is in a built stack (a preset stands for several).
            pub fn layer_count(&self) -> usize {
                self.preset_layers().map_or(1, |l| l.len())
            }
        }
    };
}

// One line per policy, under its one-line description (README's policy table and `brownout
// explain` show it): the name scenario files use, and its config type.
policies! {
    /// Per-attempt timeout inside a retry layer (or with none inside it); outside the first retry layer, a request-level timeout over every attempt and backoff (.NET's total request timeout).
    Timeout(super::timeout::TimeoutConfig),
    /// Bounded retry with backoff and jitter; `max_attempts` counts the first call.
    Retry(super::retry::RetryConfig),
    /// Breaker opening after N consecutive failures, with N probes (R02's breaker; pybreaker's with `success_threshold` and `exclude`).
    ConsecutiveBreaker(super::breaker::consecutive::ConsecutiveConfig),
    /// Fixed concurrency limit, no queue or a bounded FIFO, LIFO or priority queue; deadline shedding.
    Limiter(super::limiter::fixed::FixedConfig),
    /// Hedged requests after a fixed delay (Polly) or a latency percentile (tower).
    Hedge(super::hedge::HedgeConfig),
    /// A policy registered from outside brownout by a program that uses it as a library (see `policy::plugin`).
    Plugin(super::plugin::PluginConfig),
    /// Netflix concurrency-limits AIMD adaptive limit.
    Aimd(super::limiter::aimd::AimdConfig),
    /// Netflix concurrency-limits Vegas adaptive limit.
    Vegas(super::limiter::vegas::VegasConfig),
    /// Netflix concurrency-limits Gradient2 adaptive limit.
    Gradient2(super::limiter::gradient2::Gradient2Config),
    /// Envoy adaptive-concurrency gradient controller.
    EnvoyGradient(super::limiter::envoy_gradient::EnvoyGradientConfig),
    /// Per-class partitions with borrowing; `Wait` or `FallbackNow` per class; latency trip with a single probe.
    TieredBulkhead(super::bulkhead::TieredBulkheadConfig),
    /// tower's TpsBudget retry budget.
    RetryBudget(super::budget::tps::TpsBudgetConfig),
    /// gRPC retry throttling.
    GrpcThrottle(super::budget::grpc::GrpcThrottleConfig),
    /// Marc Brooker's adaptive retry token bucket.
    AdaptiveRetry(super::budget::adaptive::AdaptiveRetryConfig),
    /// Error-rate / slow-call-rate breaker: count or time window, minimum calls, growing breaks, N probes, bounded half-open, in-flight ageing, straggler policy.
    ErrorRateBreaker(super::breaker::error_rate::ErrorRateConfig),
    /// Windowed latency-percentile breaker (the seed's trip: p95 over the deadline for N windows).
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
    /// Token-bucket rate limit (Envoy's local rate limit): `burst` tokens refilled at `rate_per_s`, an attempt without a token refused at once.
    RateLimit(super::rate_limit::RateLimitConfig),
    /// Envoy cluster circuit breakers: max connections, pending requests, requests and retries per priority.
    EnvoyThresholds(super::envoy::EnvoyThresholdsConfig),
    /// .NET `AddStandardResilienceHandler`: five layers (rate limiter, total timeout, retry, Polly breaker, attempt timeout).
    DotnetStandard(super::dotnet::DotnetStandardConfig),
    /// HAProxy backend: `maxconn` and its queue (`maxqueue`, `timeout queue`: 503), `timeout server` from the connection (504).
    HaproxyBackend(super::haproxy::HaproxyBackendConfig),
    /// nginx upstream: `max_conns` (502 when every server is full, no queue), `proxy_read_timeout` from the connection (504), `proxy_next_upstream` tries.
    NginxUpstream(super::nginx::NginxUpstreamConfig),
    /// nginx `limit_req`: the leaky bucket in thousandths of a request (`rate`, `burst`, `nodelay`, `delay`), refused with `limit_req_status`.
    NginxLimitReq(super::nginx::NginxLimitReqConfig),
    /// The layers of a library's configuration file (resilience4j, Envoy/Istio, opossum, .NET), read when the scenario is loaded.
    Import(super::import_layer::ImportLayerConfig),
    /// opossum (Node) circuit breaker, its option names (snake_case) and defaults.
    Opossum(super::breaker::opossum::OpossumConfig),
}

#[cfg(test)]
mod tests {
    use super::ConfigError;

    fn field(message: &str) -> String {
        ConfigError::new(message).field
    }

    #[test]
    fn policy_messages_name_their_field() {
        assert_eq!(field("Limiter.permits must be >= 1"), "Limiter.permits");
        assert_eq!(field("ErrorRateBreaker.window: Count size"), "ErrorRateBreaker.window");
        assert_eq!(field("TieredBulkhead.classes[check out].share must"), "TieredBulkhead.classes[check out].share");
        assert_eq!(field("Retry.max_attempts must be >= 1 (it counts)"), "Retry.max_attempts");
        assert_eq!(field("odd message"), "odd");
    }
}
