//! An HAProxy backend as a preset: `HaproxyBackend((maxconn: 20, timeout_queue: "200ms",
//! timeout_server: "500ms"))` stands for the layers that reproduce what a caller of the proxy
//! sees, expanded when the model is built (as `DotnetStandard`), outermost first:
//!
//! 1. the server's connection limit and the backend's queue: `Limiter((permits: maxconn,
//!    queue: maxqueue (0: unlimited), max_wait: timeout_queue, refuse_as: Unavailable))`. A
//!    request over `maxconn` waits, first come first served, and one still queued after
//!    `timeout queue` gets a 503 (`src/backend.c`, `back_try_conn_req`, the `SC_ST_QUE`
//!    branch, sets `STRM_ET_QUEUE_TO`, which `src/http_ana.c`, `http_return_srv_error`,
//!    answers 503, termination state `sQ`); counted as `error`, cause `limiter_refused`.
//!    Left out when `maxconn` is 0 (HAProxy: no limit, no queue);
//! 2. `timeout server`: `Timeout((timeout: timeout_server, starts: Connection))`, from when
//!    the request holds its connection, never counting the queue (`src/stream.c`,
//!    `back_establish`, arms it once the server connection is established); a 504
//!    (`src/http_ana.c`, `http_wait_for_response`), cause `attempt_timeout`. Left out when
//!    unset (HAProxy: no timeout, with a warning at start-up).
//!
//! `timeout queue` unset falls back to `timeout connect`, as the configuration manual says
//! ("If unspecified, the same value as the backend's connection timeout"); both unset, a
//! request waits without limit. docs/proxies.md compares the mapping with the real proxy.
//!
//! `timeout connect` and `http-reuse` are rules for the server connections, which are the
//! scenario's pool: when the pool has a `connect` (a set-up time), `timeout connect` is its
//! connect timeout in this policy set (a set-up past it fails the request with a 503,
//! termination state `sC`: `src/stream.c`, `default_srv_error`, sets `SF_ERR_SRVTO` and
//! `SF_FINST_C` for `STRM_ET_CONN_TO`, which `src/http_ana.c`, `http_return_srv_error`,
//! answers 503; cause `connect_timeout`), and `http-reuse never` closes every connection
//! after its call (`safe`, HAProxy's default, and the others keep it for the next;
//! `doc/configuration.txt`, "http-reuse"). HAProxy closes a server connection after no
//! number of requests (it has no equivalent of nginx's `keepalive_requests`). A pool without
//! `connect` connects at once and is left alone (`policy/pool_rules.rs`).
//!
//! What brownout leaves out: `retries` and `option redispatch` (HAProxy retries connection failures
//! only, which brownout's dependency has under a partition alone), health checks and
//! balancing across servers (the dependency's `replicas` balance; one `maxconn` per server is
//! the sum over the backend's servers here).

use serde::{Deserialize, Serialize};

use super::limiter::fixed::{FixedConfig, RefuseAs};
use super::pool_rules::{KeepRule, PoolRules};
use super::timeout::{TimeoutConfig, TimeoutStart};
use super::{BuildCtx, ConfigError, Policy, PolicyConfig, PolicySpec};
use crate::engine::Time;
use crate::units::Dur;

/// An HAProxy backend's limits and timeouts, as its configuration names them; see the
/// module docs for the layers it stands for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HaproxyBackendConfig {
    /// `server ... maxconn N`: requests sent to the server at once (summed over the backend's
    /// servers); beyond it a request waits in the queue. 0 (HAProxy's default) = no limit.
    #[serde(default)]
    pub maxconn: u32,
    /// `server ... maxqueue N`: requests that may wait; beyond it a request gets a 503 at
    /// once. 0 (HAProxy's default) = no limit.
    #[serde(default)]
    pub maxqueue: u32,
    /// `timeout queue`: longest wait in the queue, then a 503. Unset: `timeout_connect`, as
    /// HAProxy does; both unset: no limit.
    #[serde(default)]
    pub timeout_queue: Option<Dur>,
    /// `timeout connect`: the longest set-up of a new server connection, in this policy set
    /// the connect timeout of the pools its calls use that have a `connect` (past it, a 503
    /// with cause `connect_timeout`); also the fallback for an unset `timeout_queue`. A pool
    /// without `connect` connects at once, so there it is only that fallback.
    #[serde(default)]
    pub timeout_connect: Option<Dur>,
    /// `timeout server`: longest wait for the server's answer from when the request holds
    /// its connection (a `Timeout` with `starts: Connection`: the queue does not count), then
    /// a 504. Unset: no limit.
    #[serde(default)]
    pub timeout_server: Option<Dur>,
    /// `http-reuse`: `Never` closes each server connection after its call, `Safe`,
    /// `Aggressive` and `Always` keep it open for the next call (brownout's calls are all
    /// alike, so the three are one), on the pools its calls use that have a `connect`. Left
    /// out: the pool's `keep_alive` decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_reuse: Option<HttpReuse>,
}

/// HAProxy's `http-reuse` modes (`doc/configuration.txt`, "http-reuse").
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum HttpReuse {
    /// `never`: every request gets its own server connection, closed after it.
    Never,
    /// `safe` (HAProxy's default): an idle connection is reused for a later request.
    Safe,
    /// `aggressive`: as `safe` for brownout.
    Aggressive,
    /// `always`: as `safe` for brownout.
    Always,
}

impl HaproxyBackendConfig {
    /// The longest wait in the queue (`Time::MAX`: no limit).
    fn queue_wait(&self) -> Dur {
        self.timeout_queue.or(self.timeout_connect).unwrap_or(Dur(Time::MAX))
    }

    /// Its rules for the connections of the pools behind it (`policy/pool_rules.rs`).
    pub fn pool_rules(&self) -> PoolRules {
        PoolRules {
            connect_timeout: self.timeout_connect,
            keep: self.http_reuse.map(|r| if r == HttpReuse::Never { KeepRule::Never } else { KeepRule::Kept }),
        }
    }

    /// The layers it stands for, outermost first (see the module docs).
    pub fn expand(&self) -> Vec<PolicySpec> {
        let mut layers = Vec::new();
        if self.maxconn > 0 {
            let queue = if self.maxqueue == 0 { u32::MAX } else { self.maxqueue };
            layers.push(PolicySpec::Limiter(FixedConfig::fifo(
                self.maxconn,
                queue,
                self.queue_wait(),
                RefuseAs::Unavailable,
            )));
        }
        if let Some(timeout) = self.timeout_server {
            layers.push(PolicySpec::Timeout(TimeoutConfig {
                timeout,
                unwind: Dur(0),
                starts: TimeoutStart::Connection,
            }));
        }
        layers
    }
}

impl PolicyConfig for HaproxyBackendConfig {
    const KIND: &'static str = "haproxy-backend";

    fn facts(&self) -> crate::policy::Facts {
        // Its 503s never fall back.
        crate::policy::Facts::plain(crate::metrics::LayerKind::Other)
    }

    fn preset_layers(&self) -> Option<Vec<PolicySpec>> {
        Some(self.expand())
    }

    fn validate(&self, classes: &[&str]) -> Result<(), ConfigError> {
        for (field, d) in [
            ("timeout_queue", self.timeout_queue),
            ("timeout_connect", self.timeout_connect),
            ("timeout_server", self.timeout_server),
        ] {
            if d.is_some_and(|d| d.ns() == 0) {
                return Err(format!("HaproxyBackend.{field} must be > 0 (leave it out for no limit)").into());
            }
        }
        if self.maxqueue > 0 && self.maxconn == 0 {
            return Err("HaproxyBackend.maxqueue needs a maxconn: without one HAProxy queues nothing".into());
        }
        for spec in self.expand() {
            spec.validate(classes).map_err(|m| format!("HaproxyBackend: {m}"))?;
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        // Expanded by the model before building; built alone it admits everything.
        Box::new(super::dotnet::Unexpanded)
    }
}
