//! Services that call services: a dependency with a fleet, a policy stack and a call plan of
//! its own (`dependencies[k].service`), and a policy set's own stack for a service
//! (`policies[i].services`).

use serde::{Deserialize, Serialize};

use super::*;

/// What makes a dependency a service: a call to it takes one of its worker slots and runs
/// its plan, each call of the plan passing its own stack, and it answers its caller when
/// its plan ends (success, a degraded answer, or the failure's status). The dependency's
/// `latency` is then the service's own work per call, before its plan; its `hop` the
/// network round trip from its caller; its `cancellation` says whether a caller that gives
/// up on a call cancels the service's calls below it (docs/graphs.md, "How a service runs").
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Service {
    /// Its instances (>= 1): a call goes to one of them by its key (as the gateway's requests
    /// do), and each has its own worker slots, pool and policy layers.
    #[serde(default = "one_instance")]
    pub instances: u32,
    /// Worker slots of each instance: at most `slots` calls handled at once, the others
    /// waiting in FIFO order as the gateway's requests wait for a slot (`queue`, `max_wait`).
    pub workers: Workers,
    /// The connection pool its calls take connections from (left out: each worker slot
    /// holds a connection of its own, so its calls never wait for one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<Pool>,
    /// Its policy layers, outermost first, which every call of its plan passes as a
    /// gateway's calls pass the policy set's stack (a layer's `dependencies` name calls of
    /// this plan; `classes` is not used here). A policy set's `services` may replace it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<Layer>,
    /// Its call plan, as a class's `calls`: steps naming other dependencies (at least one
    /// call; a service that reaches itself through its calls is refused).
    pub calls: Vec<Step>,
}

fn one_instance() -> u32 {
    1
}

/// A policy set's stack for one service (`policies[i].services`): in that set, the
/// service's calls pass these layers instead of the service's own `stack`, so policy sets
/// can compare the protections of any layer of the graph.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceStack {
    /// The service (the name of a dependency with a `service`).
    pub service: String,
    /// Its layers in this set, outermost first (empty: no protection).
    #[serde(default)]
    pub stack: Vec<Layer>,
}

impl Scenario {
    /// The layers service `dep` (an index into `deps`) passes its calls through in policy
    /// set `set`: the set's own stack for it, else the service's `stack`; None when `dep`
    /// is no service.
    pub fn service_stack(&self, set: usize, dep: usize) -> Option<&[Layer]> {
        let d = &self.deps()[dep];
        let own = d.service.as_ref()?;
        let chosen = self.policies.get(set).and_then(|p| p.services.iter().find(|s| s.service == d.name));
        Some(chosen.map_or(own.stack.as_slice(), |s| s.stack.as_slice()))
    }

    /// The scenario has a dependency that is a service.
    pub fn has_services(&self) -> bool {
        self.deps().iter().any(|d| d.service.is_some())
    }
}
