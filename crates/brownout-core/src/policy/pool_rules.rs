//! What a proxy preset says of the connections of the pool behind it (issue 39): HAProxy's
//! `timeout connect` and `http-reuse`, nginx's `proxy_connect_timeout` and `keepalive`. A
//! proxy's connections to its server are the scenario's pool (its `max_connections` is the
//! proxy's connection limit, its `connect` the network's set-up time); a preset in a policy
//! set sets, for that set's runs, the connect timeout and the reuse of every pool with a
//! `connect` that its calls use (those of its `dependencies` when it is scoped to some).
//! A pool without `connect` connects at once and is left alone, so a preset changes nothing
//! there (every scenario written before connections had a life).

use super::PolicySpec;
use crate::units::Dur;

/// Whether a proxy keeps a server connection open after a successful call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepRule {
    /// Never: every call opens its own connection (HAProxy `http-reuse never`, nginx without
    /// `keepalive`).
    Never,
    /// Kept, idle expiry and limits as the pool's `keep_alive` says (none when it has none):
    /// HAProxy `http-reuse safe|aggressive|always`.
    Kept,
    /// Kept with these limits: (idle expiry, calls per connection, idle connections kept):
    /// nginx `keepalive_timeout`, `keepalive_requests`, `keepalive`.
    With(Option<Dur>, Option<u32>, Option<u32>),
}

/// A preset's rules for the connections of the pools behind it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolRules {
    /// The longest set-up of a new connection (None: the pool's own `connect.timeout`).
    pub connect_timeout: Option<Dur>,
    /// Which connections stay open (None: as the pool's `keep_alive` says).
    pub keep: Option<KeepRule>,
}

impl PolicySpec {
    /// The rules a proxy preset sets for the connections of the pools behind it; None for
    /// every other layer.
    pub fn pool_rules(&self) -> Option<PoolRules> {
        match self {
            PolicySpec::HaproxyBackend(c) => Some(c.pool_rules()),
            PolicySpec::NginxUpstream(c) => Some(c.pool_rules()),
            _ => None,
        }
    }
}
