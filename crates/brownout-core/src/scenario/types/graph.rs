//! Service graphs: several named dependencies and each class's call plan.

use serde::{Deserialize, Serialize};

use super::*;

/// One step of a class's call plan (`calls: [..]`): the steps run one after the other, and
/// the request completes when its last step does. Each call passes the class's policy stack
/// as an attempt does (its timeouts, retries and breakers act per call); the class's
/// deadline covers the whole plan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum Step {
    /// A required call to the named dependency: its failure fails the request.
    Call(String),
    /// An optional call: its failure degrades the answer (a fallback answer) instead of
    /// failing it, after the fallback's own cost.
    Optional {
        /// The dependency called (a name from `dependencies`).
        dependency: String,
        /// How long the fallback takes when the call fails (default 0).
        #[serde(default)]
        cost: Dur,
    },
    /// Calls sent together; the step ends by its join rule.
    Parallel {
        /// When the group is done (default `All`).
        #[serde(default)]
        join: Join,
        /// The calls (`Call` or `Optional`, at least one; no group inside a group).
        calls: Vec<Step>,
    },
}

/// When a parallel group is done.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema)]
pub enum Join {
    /// Every call answered (a required call's failure fails the group at once and cancels
    /// the others).
    #[default]
    All,
    /// The first success (the others are cancelled); the group fails when every call fails.
    First,
    /// `k` successes (the others are cancelled); it fails once `k` can no longer be reached.
    Quorum(u32),
}

impl Step {
    /// The dependency a single call names (None for a group).
    pub fn dependency(&self) -> Option<&str> {
        match self {
            Step::Call(d) | Step::Optional { dependency: d, .. } => Some(d),
            Step::Parallel { .. } => None,
        }
    }

    /// The calls of this step: itself for a call, its calls for a group.
    pub fn calls(&self) -> &[Step] {
        match self {
            Step::Parallel { calls, .. } => calls,
            _ => std::slice::from_ref(self),
        }
    }
}

impl Dependency {
    /// The value `dependency` takes when a scenario lists `dependencies` instead: no name,
    /// never written back (`is_absent`), never run.
    pub fn absent() -> Self {
        ron::from_str(r#"(name: "", latency: Constant("0ns"))"#).expect("a valid placeholder")
    }

    /// This is the placeholder of a scenario that lists `dependencies`.
    pub fn is_absent(&self) -> bool {
        self.name.is_empty()
    }
}

impl Scenario {
    /// The dependencies the classes call: `dependencies` when listed, else the one
    /// `dependency`. Dependency ids in the model are indices into this list.
    pub fn deps(&self) -> &[Dependency] {
        if self.dependencies.is_empty() { std::slice::from_ref(&self.dependency) } else { &self.dependencies }
    }

    /// The first dependency: the one the one-dependency figures (`verify`'s models)
    /// describe. Derived phases and `decide`'s bounds read every dependency.
    pub fn primary(&self) -> &Dependency {
        &self.deps()[0]
    }

    /// The path of dependency `d` in the file (`dependency` or `dependencies[d]`).
    pub fn dep_path(&self, d: usize) -> String {
        if self.dependencies.is_empty() { "dependency".into() } else { format!("dependencies[{d}]") }
    }
}
