//! The calling service's fleet: instances, worker slots, the connection pool, partitions and restarts.

use serde::{Deserialize, Serialize};

use super::*;

/// The calling service's fleet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fleet {
    /// Number of gateway instances (>= 1). Arrivals are spread round robin.
    #[serde(default = "one")]
    pub instances: u32,
    /// Worker slots per instance.
    pub workers: Workers,
    /// Connection pool to the dependency, per instance; with several `dependencies`, the
    /// pool their calls share, except the calls to a dependency given one of `pools`.
    pub pool: Pool,
    /// Connection pools of their own, per instance, for some of `dependencies` (at most one
    /// per dependency). A call to such a dependency takes a connection from its pool alone
    /// and waits there when it is full, so a slow dependency that holds all its connections
    /// leaves the others' calls alone. The pool belongs to the calling gateway, beside
    /// `pool`, not to the dependency. Empty: every call shares `pool`, as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<DependencyPool>,
    /// Gateway processing time added to every response (R02 measured ~5 ms per hop): a
    /// duration, or a distribution drawn for each request.
    #[serde(default)]
    pub overhead: Delay,
    /// The time the gateway takes to produce its 504 after an attempt timeout, drawn for each
    /// timed-out attempt from this duration or distribution. Left out, each Timeout layer's
    /// own fixed `unwind` applies; given, it replaces them (the unwind is the gateway's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_unwind: Option<Delay>,
    /// Network partitions cutting instances off from the dependency.
    #[serde(default)]
    pub partitions: Vec<Partition>,
    /// Instance restarts (crashes or a rolling deploy).
    #[serde(default)]
    pub restarts: Vec<Restart>,
}

/// A window during which some gateway instances cannot reach the dependency (or the named
/// dependencies of several).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    /// When the partition starts.
    pub start: Dur,
    /// When it ends (not before `start`).
    pub end: Dur,
    /// Instance indices cut off (each below `fleet.instances`).
    pub instances: Vec<u32>,
    /// What a call from a cut-off instance does.
    pub mode: PartitionMode,
    /// The dependencies cut off (names from `dependencies`; empty = every dependency, the
    /// one `dependency` included). A partition naming `["pricing"]` cuts the instances'
    /// calls to pricing alone; their calls to the other dependencies go through.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<String>,
}

/// How calls across a partition fail.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum PartitionMode {
    /// The call hangs until the connect timeout, then fails.
    Hang {
        /// Connect timeout.
        connect_timeout: Dur,
    },
    /// The call fails at once (connection refused).
    FailFast,
}

/// A restart of some instances at a time: in-flight requests on them fail, and state that
/// is not persistent is lost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Restart {
    /// When the first instance restarts.
    pub at: Dur,
    /// Instances restarted (in this order).
    pub instances: Vec<u32>,
    /// Gap between consecutive instances (0 = all at once; > 0 = a rolling deploy).
    #[serde(default)]
    pub interval: Dur,
    /// Policy state (breaker, limits) survives the restart.
    #[serde(default)]
    pub persistent_policies: bool,
    /// Cache contents survive the restart.
    #[serde(default)]
    pub persistent_cache: bool,
}

fn one() -> u32 {
    1
}

/// Worker slots: at most `slots` requests handled at once per instance.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workers {
    /// Concurrent requests per instance (>= 1).
    pub slots: u32,
    /// Requests that may wait for a slot (0 = reject at once).
    #[serde(default)]
    pub queue: u32,
    /// Longest wait for a slot before rejection (none = as long as it takes; 0 = never wait).
    #[serde(default)]
    pub max_wait: Option<Dur>,
}

/// A connection pool to the dependency.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    /// Connections per instance (>= 1).
    pub max_connections: u32,
    /// Longest wait to acquire a connection; after it the attempt fails as an error.
    pub acquire_timeout: Dur,
}

/// A connection pool of one dependency's own (`fleet.pools`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DependencyPool {
    /// The dependency whose calls take connections from it (a name from `dependencies`).
    pub dependency: String,
    /// Connections per instance (>= 1).
    pub max_connections: u32,
    /// Longest wait to acquire a connection; after it the attempt fails as an error.
    /// Left out, the fleet `pool`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_timeout: Option<Dur>,
}
