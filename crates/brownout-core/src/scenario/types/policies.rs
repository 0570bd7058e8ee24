//! The policy sets to compare: stacks of layers.

use serde::{Deserialize, Serialize};

use super::*;

/// One policy configuration: a stack of layers, outermost first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicySet {
    /// Label in tables and charts.
    pub name: String,
    /// Layers, outermost first (like `Retry(Breaker(Limiter(Timeout(call))))`); at most 8.
    #[serde(default)]
    pub stack: Vec<Layer>,
    /// Stacks of services in this set (`[(service: "pricing", stack: [..])]`), each replacing
    /// that service's own `stack` while this set runs (empty: every service keeps its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceStack>,
}

/// A layer: a policy, optionally restricted to some classes and to the calls to some
/// dependencies.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// The policy.
    pub policy: PolicySpec,
    /// Classes it applies to (empty = all).
    #[serde(default)]
    pub classes: Vec<String>,
    /// Dependencies whose calls it applies to (names from `dependencies`; empty = every
    /// call). A scoped layer sees only the calls to those dependencies: a breaker scoped to
    /// `["pricing"]` counts and refuses pricing calls alone, a `Timeout` bounds only them, a
    /// bulkhead holds only their permits. With `classes` too, it applies to the calls of
    /// those classes to those dependencies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<String>,
    /// Where the policy's state lives: in each instance (the libraries' default) or shared
    /// by the fleet.
    #[serde(default)]
    pub scope: Scope,
    /// The state survives an instance restart (kept outside the process).
    #[serde(default)]
    pub persistent: bool,
}

/// Scope of a policy's state.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default, schemars::JsonSchema)]
pub enum Scope {
    /// Each gateway instance has its own state.
    #[default]
    Instance,
    /// One state for the fleet, in a store: decisions read it at once; outcomes and releases
    /// reach it after `propagation`.
    Fleet {
        /// Delay before an outcome or release updates the shared state.
        #[serde(default)]
        propagation: Dur,
    },
}

/// Most layers one policy stack may have: a request keeps its admission time per layer in a
/// fixed array of this size.
pub const MAX_LAYERS: usize = 8;
