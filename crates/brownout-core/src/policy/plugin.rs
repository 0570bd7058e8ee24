//! Policies from outside brownout: a team registers a factory for its in-house resilience
//! code under a name, and scenarios use it as `Plugin((name: "...", params: {...}))` beside
//! the built-in policies. See `examples/custom_policy.rs`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{BuildCtx, ConfigError, Facts, Policy, PolicyConfig};

/// A plugin policy as written in a scenario file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// The name the factory was registered under.
    pub name: String,
    /// Numeric parameters, handed to the factory as they are.
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
}

impl PluginConfig {
    /// A parameter, or `default` when the scenario leaves it out.
    pub fn param(&self, key: &str, default: f64) -> f64 {
        self.params.get(key).copied().unwrap_or(default)
    }
}

impl PolicyConfig for PluginConfig {
    const KIND: &'static str = "plugin";

    fn facts(&self) -> Facts {
        // What a plugin refuses with, and how often it calls, is known only once built.
        Facts::UNKNOWN
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        if self.name.trim().is_empty() {
            return Err("Plugin.name must not be empty".into());
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
        // Checked by `Model::build`, which builds every plugin once before any run.
        ctx.plugins.build(self, ctx).expect("plugin checked by Model::build")
    }
}

/// Builds one runtime policy (per gateway instance) from its config, or says what is wrong.
pub type PluginFactory = dyn Fn(&PluginConfig, &BuildCtx) -> Result<Box<dyn Policy>, String> + Send + Sync;

/// The registered plugin factories, by name.
#[derive(Clone, Default)]
pub struct Plugins {
    factories: BTreeMap<String, Arc<PluginFactory>>,
}

impl fmt::Debug for Plugins {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_list().entries(self.factories.keys()).finish()
    }
}

impl Plugins {
    /// No plugins.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register `factory` under `name` (a later registration replaces an earlier one).
    pub fn register<F>(mut self, name: &str, factory: F) -> Self
    where
        F: Fn(&PluginConfig, &BuildCtx) -> Result<Box<dyn Policy>, String> + Send + Sync + 'static,
    {
        self.factories.insert(name.to_string(), Arc::new(factory));
        self
    }

    /// Build the plugin `cfg` names.
    pub fn build(&self, cfg: &PluginConfig, ctx: &BuildCtx) -> Result<Box<dyn Policy>, PluginError> {
        let factory = self.factories.get(&cfg.name).ok_or_else(|| PluginError::Unknown {
            name: cfg.name.clone(),
            registered: self.factories.keys().cloned().collect(),
        })?;
        factory(cfg, ctx).map_err(PluginError::Refused)
    }
}

/// Why [`Plugins::build`] built no policy. Its `Display` is the message `Model::build` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PluginError {
    /// No plugin is registered under the name.
    Unknown {
        /// The name the layer gives.
        name: String,
        /// The names registered, in order.
        registered: Vec<String>,
    },
    /// The factory refused the layer's settings, saying why.
    Refused(String),
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            PluginError::Unknown { name, registered } => write!(
                f,
                "unknown plugin \"{name}\" (registered: {}); plugins are registered by programs that use brownout as a library",
                if registered.is_empty() { "none".to_string() } else { registered.join(", ") }
            ),
            PluginError::Refused(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for PluginError {}
