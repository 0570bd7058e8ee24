//! Connections with a life (`Pool::connect`, `Pool::keep_alive`): the immutable part, per
//! pool. The world's side (idle connections, set-up, closing) is `world/conns.rs`.

use std::path::Path;

use crate::engine::{Time, label_hash};
use crate::policy::pool_rules::{KeepRule, PoolRules};
use crate::scenario::{Connect, KeepAlive, PolicySet, Scenario};

use super::dependency::DelayDist;

/// The label of the fleet pool's set-up draws; a pool of one dependency's own salts it with
/// the dependency's name, so two pools never draw alike.
const CONNECT: u64 = label_hash("pool/connect");

/// One pool's connection life, ready to draw.
#[derive(Debug, Clone)]
pub(crate) struct ConnLife {
    /// The set-up time of a new connection, drawn per (request key, attempt).
    pub connect: DelayDist,
    /// The longest set-up (ns): past it the attempt fails (`Cause::ConnectTimeout`).
    pub timeout: Option<Time>,
    /// A succeeded call's connection is kept open for the next call.
    pub keep: bool,
    /// An idle connection this long unused (ns) is closed.
    pub idle: Option<Time>,
    /// A connection is closed after this many calls.
    pub max_requests: Option<u32>,
    /// At most this many idle connections per instance and dependency.
    pub max_idle: Option<u32>,
    /// The label its draws were built with (for a replication's reseeding).
    label: u64,
}

/// Pool `p`'s connect and keep-alive settings: 0 the fleet's `pool`, k `fleet.pools[k - 1]`,
/// which takes the fleet pool's when it gives no `connect` of its own.
pub(crate) fn settings(s: &Scenario, p: usize) -> (Option<&Connect>, Option<&KeepAlive>) {
    let shared = &s.fleet.pool;
    match p.checked_sub(1).map(|k| &s.fleet.pools[k]) {
        Some(own) if own.connect.is_some() => (own.connect.as_ref(), own.keep_alive.as_ref()),
        _ => (shared.connect.as_ref(), shared.keep_alive.as_ref()),
    }
}

/// The pool dependency `dep`'s calls use: 0 the fleet's, k `fleet.pools[k - 1]`.
fn pool_of(s: &Scenario, dep: &str) -> usize {
    s.fleet.pools.iter().position(|p| p.dependency == dep).map_or(0, |k| k + 1)
}

impl ConnLife {
    /// Every pool's connection life, by pool id (0 the fleet's `pool`, k `fleet.pools[k - 1]`);
    /// None for a pool without `connect` (today's instant, everlasting connections).
    pub(crate) fn build_all(s: &Scenario, seed: u64, dir: &Path) -> Result<Vec<Option<ConnLife>>, String> {
        (0..=s.fleet.pools.len())
            .map(|p| {
                let (Some(c), keep) = settings(s, p) else { return Ok(None) };
                let label = match p {
                    0 => CONNECT,
                    k => CONNECT ^ label_hash(&s.fleet.pools[k - 1].dependency),
                };
                Ok(Some(ConnLife {
                    connect: DelayDist::build(&c.latency, seed, label, dir)?,
                    timeout: c.timeout.map(|t| t.ns()),
                    keep: keep.is_some(),
                    idle: keep.and_then(|k| k.idle).map(|t| t.ns()),
                    max_requests: keep.and_then(|k| k.max_requests),
                    max_idle: keep.and_then(|k| k.max_idle),
                    label,
                }))
            })
            .collect()
    }

    /// Every pool's connection life in the runs of policy set `set`: a proxy preset in its
    /// stack sets the connect timeout and the reuse of the pools with a `connect` that its
    /// calls use (`policy/pool_rules.rs`), outermost preset first, so an inner one has the
    /// last word.
    pub(crate) fn for_set(base: &[Option<ConnLife>], s: &Scenario, set: &PolicySet) -> Vec<Option<ConnLife>> {
        let mut out = base.to_vec();
        for layer in &set.stack {
            let Some(rules) = layer.policy.pool_rules() else { continue };
            for (p, life) in out.iter_mut().enumerate() {
                if let Some(life) = life
                    && (layer.dependencies.is_empty() || layer.dependencies.iter().any(|d| pool_of(s, d) == p))
                {
                    life.apply(rules);
                }
            }
        }
        out
    }

    /// These settings under a proxy preset's `rules`.
    fn apply(&mut self, rules: PoolRules) {
        if let Some(t) = rules.connect_timeout {
            self.timeout = Some(t.ns());
        }
        match rules.keep {
            None => {}
            Some(KeepRule::Never) => self.keep = false,
            Some(KeepRule::Kept) => self.keep = true,
            Some(KeepRule::With(idle, max_requests, max_idle)) => {
                self.keep = true;
                self.idle = idle.map(|t| t.ns());
                self.max_requests = max_requests;
                self.max_idle = max_idle;
            }
        }
    }

    /// The same settings with draws derived from `seed` (a replication's).
    pub(crate) fn reseeded(&self, seed: u64) -> Self {
        Self { connect: self.connect.reseeded(seed, self.label), ..self.clone() }
    }

    /// The set-up of a new connection for the draw key `key` (class and request) and
    /// `attempt`: its time, and whether it fails (longer than the timeout, which is then
    /// the time it takes to fail).
    pub(crate) fn set_up(&self, key: u64, attempt: u64) -> (Time, bool) {
        let t = self.connect.at(key, attempt);
        match self.timeout {
            Some(limit) if t > limit => (limit, true),
            _ => (t, false),
        }
    }

    /// A connection that has served `uses` calls and whose last call succeeded may stay open.
    pub(crate) fn reusable(&self, uses: u32) -> bool {
        self.keep && self.max_requests.is_none_or(|n| uses < n)
    }

    /// An idle connection idle since `since` is closed by `now` (its idle time ran out).
    pub(crate) fn expired(&self, since: Time, now: Time) -> bool {
        self.idle.is_some_and(|idle| now.saturating_sub(since) >= idle)
    }
}
