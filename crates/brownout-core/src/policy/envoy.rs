//! Envoy cluster circuit breakers (`circuit_breakers.thresholds`) as a policy layer:
//! `EnvoyThresholds((thresholds: [(priority: Default, max_connections: 1024,
//! max_pending_requests: 1024, max_requests: 1024, max_retries: 3)]))`.
//!
//! Envoy keeps one resource manager per routing priority (`DEFAULT`, `HIGH`), each with its
//! own limits (1024 / 1024 / 1024 / 3 when not configured) and counters. A class whose
//! `priority` is above 0 routes at `High`, every other class at `Default`.
//!
//! Semantics (Envoy's HTTP/1.1 connection pool, one request per connection; `newStreamImpl`,
//! `attachStreamToClient`, `RetryStateImpl::shouldRetry`):
//! - `max_requests`: requests outstanding. A request that finds a free connection but
//!   `max_requests` active overflows at once (503 `upstream_rq_active_overflow`, counted
//!   as a refusal, `Rejected`).
//! - `max_connections`: with HTTP/1.1 each active request holds a connection, so at most
//!   `max_connections` are active; the next ones become pending.
//! - `max_pending_requests`: requests waiting for a connection; beyond it a request
//!   overflows at once (503 `upstream_rq_pending_overflow`). Pending requests are served in
//!   arrival order as connections free up (High before Default: this layer's queue is
//!   served by class priority) and wait until served or until their request ends.
//! - `max_retries`: retries outstanding. A retry asked for while `max_retries` of the
//!   priority's retries are outstanding is not made (`upstream_rq_retry_overflow`; the
//!   request ends with the failed attempt's outcome). A retry is outstanding from its
//!   admission by this layer to its end, so the layer must sit inside the retry layer.
//!
//! What Envoy has that this layer cannot express: connection establishment time and
//! `connect_timeout`; HTTP/2 multiplexing (many requests per connection); `max_connection_pools`;
//! `per_host_thresholds`; `retry_budget` (use `RetryBudget` beside it); the time a retry
//! waits in its backoff counts towards `max_retries` in Envoy but not here; limits are per
//! gateway instance (per Envoy), as in Envoy, and exact (no overshoot between workers).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    Admission, Attempt, BuildCtx, ClassId, Completed, ConfigError, Facts, Policy, PolicyConfig, QueueOrder, Refusal,
    RetryAsk,
};
use crate::engine::Time;

/// Envoy's routing priority.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Default, schemars::JsonSchema)]
pub enum EnvoyPriority {
    /// `DEFAULT`: classes with `priority: 0`.
    #[default]
    Default,
    /// `HIGH`: classes with a `priority` above 0.
    High,
}

/// One entry of `circuit_breakers.thresholds`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvoyThreshold {
    /// Routing priority these limits apply to (default `Default`).
    #[serde(default)]
    pub priority: EnvoyPriority,
    /// Connections to the cluster, per gateway instance (default 1024; >= 1).
    #[serde(default = "d1024")]
    pub max_connections: u32,
    /// Requests waiting for a connection (default 1024; 0 = none wait).
    #[serde(default = "d1024")]
    pub max_pending_requests: u32,
    /// Requests outstanding (default 1024; >= 1).
    #[serde(default = "d1024")]
    pub max_requests: u32,
    /// Retries outstanding (default 3; 0 = no retry is made).
    #[serde(default = "d3")]
    pub max_retries: u32,
}

fn d1024() -> u32 {
    1024
}
fn d3() -> u32 {
    3
}

impl Default for EnvoyThreshold {
    fn default() -> Self {
        Self {
            priority: EnvoyPriority::Default,
            max_connections: 1024,
            max_pending_requests: 1024,
            max_requests: 1024,
            max_retries: 3,
        }
    }
}

/// Envoy cluster circuit breakers; see the module docs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvoyThresholdsConfig {
    /// At most one entry per priority; a priority without one gets Envoy's defaults.
    #[serde(default = "default_thresholds")]
    pub thresholds: Vec<EnvoyThreshold>,
}

fn default_thresholds() -> Vec<EnvoyThreshold> {
    vec![EnvoyThreshold::default()]
}

impl EnvoyThresholdsConfig {
    /// The limits for `priority` (Envoy's defaults when no entry names it).
    pub fn for_priority(&self, priority: EnvoyPriority) -> EnvoyThreshold {
        let found = self.thresholds.iter().find(|t| t.priority == priority).cloned();
        found.unwrap_or(EnvoyThreshold { priority, ..EnvoyThreshold::default() })
    }
}

impl PolicyConfig for EnvoyThresholdsConfig {
    const KIND: &'static str = "envoy-thresholds";

    fn facts(&self) -> Facts {
        // A 429 (Envoy's overflow), never the fallback.
        Facts::plain(crate::metrics::LayerKind::Limiter)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        for (i, t) in self.thresholds.iter().enumerate() {
            if self.thresholds[..i].iter().any(|o| o.priority == t.priority) {
                return Err(format!(
                    "EnvoyThresholds.thresholds[{i}].priority: two entries for priority {:?}",
                    t.priority
                )
                .into());
            }
            if t.max_connections == 0 {
                return Err(format!("EnvoyThresholds.thresholds[{i}].max_connections must be >= 1").into());
            }
            if t.max_requests == 0 {
                return Err(format!("EnvoyThresholds.thresholds[{i}].max_requests must be >= 1").into());
            }
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(EnvoyThresholds::new(self))
    }
}

/// One priority's limits and counters.
#[derive(Debug, Clone)]
struct Manager {
    limits: EnvoyThreshold,
    /// Requests admitted and not finished (each holds a connection).
    active: u32,
    /// Requests parked waiting for a connection.
    pending: u32,
    /// Retry attempts admitted and not finished.
    retries: u32,
}

/// The runtime state: one resource manager per priority; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct EnvoyThresholds {
    managers: [Manager; 2],
    /// Attempts parked here, by id: their priority.
    parked: BTreeMap<u64, usize>,
    /// Attempts admitted here, by id: (priority, is a retry).
    admitted: BTreeMap<u64, (usize, bool)>,
    /// Each class's priority as its attempts showed it (a retry ask names only the class).
    class_priority: BTreeMap<ClassId, usize>,
}

fn index(priority: u32) -> usize {
    usize::from(priority > 0)
}

impl EnvoyThresholds {
    /// Build from config.
    pub fn new(cfg: &EnvoyThresholdsConfig) -> Self {
        let manager = |p| Manager { limits: cfg.for_priority(p), active: 0, pending: 0, retries: 0 };
        Self {
            managers: [manager(EnvoyPriority::Default), manager(EnvoyPriority::High)],
            parked: BTreeMap::new(),
            admitted: BTreeMap::new(),
            class_priority: BTreeMap::new(),
        }
    }

    /// An admitted attempt ended (completed or cancelled): free its connection and retry.
    fn finish(&mut self, id: u64) {
        if let Some((p, retry)) = self.admitted.remove(&id) {
            let m = &mut self.managers[p];
            m.active -= 1;
            if retry {
                m.retries -= 1;
            }
        }
    }
}

impl Policy for EnvoyThresholds {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ALLOW_RETRY).with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        let p = index(a.priority);
        self.class_priority.insert(a.class, p);
        let was_pending = self.parked.remove(&a.id).is_some();
        let m = &mut self.managers[p];
        if was_pending {
            m.pending -= 1;
        }
        if m.active < m.limits.max_connections {
            // A connection is free: the request attaches unless `max_requests` are active.
            if m.active >= m.limits.max_requests {
                return Admission::Refuse(Refusal::Rejected);
            }
            m.active += 1;
            let retry = a.number > 1;
            if retry {
                m.retries += 1;
            }
            self.admitted.insert(a.id, (p, retry));
            return Admission::Admit;
        }
        if m.pending >= m.limits.max_pending_requests {
            return Admission::Refuse(Refusal::Rejected);
        }
        m.pending += 1;
        self.parked.insert(a.id, p);
        Admission::Wait { max_wait: Time::MAX }
    }

    fn left_queue(&mut self, a: &Attempt) {
        if let Some(p) = self.parked.remove(&a.id) {
            self.managers[p].pending -= 1;
        }
    }

    fn cancel(&mut self, a: &Attempt) {
        self.finish(a.id);
    }

    fn complete(&mut self, d: &Completed) {
        self.finish(d.id);
    }

    fn allow_retry(&mut self, ask: &RetryAsk) -> bool {
        // The failed attempt passed this layer, so its class's priority is known.
        let p = self.class_priority.get(&ask.class).copied().unwrap_or(0);
        let m = &self.managers[p];
        m.retries < m.limits.max_retries
    }

    fn queue_order(&self) -> QueueOrder {
        QueueOrder::Priority
    }

    fn reports_status(&self) -> bool {
        false
    }
}
