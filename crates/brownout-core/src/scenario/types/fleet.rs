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
    /// Setting up a new connection (TCP, TLS): how long it takes and how long it may take.
    /// Left out: a connection is ready at once and reused forever, and `keep_alive` must be
    /// left out too. Given, an attempt takes an idle open connection if there is one (no
    /// set-up), else opens one, holding its slot of the pool while it connects
    /// (docs/proxies.md, "Connections with a life").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Connect>,
    /// Which connections are kept open for the next call once their call succeeds (needs
    /// `connect`). Left out with `connect` given: none, every call opens its own connection
    /// and closes it after (HTTP `Connection: close`, nginx without `keepalive`). A timed-out
    /// or failed call always closes its connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<KeepAlive>,
}

/// How a pool's new connection is set up (`Pool::connect`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Connect {
    /// The set-up time of a new connection (connect and TLS handshake): a duration, or a
    /// distribution written as a dependency's latency, drawn for each new connection from
    /// the attempt's own counter (request key, attempt, "connect"). The attempt holds its
    /// pool slot meanwhile; an `Attempt` timeout covers the set-up, a `Connection` timeout
    /// starts after it.
    pub latency: Delay,
    /// Longest set-up (> 0): a set-up that would take longer fails the attempt when it runs
    /// out, as an `error` with cause `connect_timeout` (HAProxy `timeout connect`, a 503;
    /// nginx `proxy_connect_timeout`, a 504), and the connection is never opened. Left out:
    /// no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Dur>,
}

/// Which connections a pool keeps open for later calls (`Pool::keep_alive`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeepAlive {
    /// An idle connection unused this long (> 0) is closed: the next call opens a new one
    /// (nginx `keepalive_timeout`, Go's `IdleConnTimeout`). Left out: idle connections stay
    /// open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<Dur>,
    /// A connection is closed after this many calls (>= 1; nginx `keepalive_requests`).
    /// Left out: no limit (HAProxy has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_requests: Option<u32>,
    /// At most this many idle connections (>= 1) per instance and dependency: a connection
    /// going idle beyond it closes the one idle longest (nginx `keepalive N`, Go's
    /// `MaxIdleConnsPerHost`). Left out: no limit (at most the pool's connections are idle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_idle: Option<u32>,
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
    /// Its connections' set-up, as the fleet pool's `connect`. Left out, the fleet `pool`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Connect>,
    /// Its connections' reuse, as the fleet pool's `keep_alive`. Left out, the fleet
    /// `pool`'s (when this pool's `connect` is left out too: a pool that gives its own
    /// `connect` gives its own `keep_alive`, or keeps none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<KeepAlive>,
}
