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
//!    Left out when `maxconn` is 0 (HAProxy: no limit, no queue). A queue timeout is never
//!    retried (that branch closes the stream, it never reaches `back_handle_st_cer`);
//! 2. `retries` (3 by default, `CONN_RETRIES` in `include/haproxy/defaults.h`): a `Retry`
//!    of `retries + 1` attempts that retries connection failures alone (`on_connect_failure`,
//!    never an error answer nor a `timeout server`: `retry-on conn-failure`, the default set
//!    by `src/proxy.c`, `init_new_proxy`), as `src/backend.c`, `back_handle_st_cer`, does: it
//!    gives up once `conn_retries >= max_retries` (a 503, termination state `sC`), and before
//!    retrying on the same server after a connection *error* (refused, `must_tar`) it waits
//!    min(`timeout connect`, 1 s), the turn-around; after a connect *timeout* it retries at
//!    once (`refused_delay`). Where it sits follows which server the retry goes to
//!    (`include/haproxy/stream.h`, `stream_choose_redispatch`): without `option redispatch`
//!    the stream stays assigned to its server and keeps its place in the server's count, so
//!    the `Retry` sits inside the limiter (a retry does not queue again); with `option
//!    redispatch` and more than one server (round robin, no persistence) every retry is
//!    redispatched at once, no turn-around, through the queue again, so the `Retry` sits
//!    outside the limiter. With `option redispatch` and one server only the last retry is
//!    redispatched, back to the same server (`srv_act <= 1` keeps the turn-around): brownout
//!    keeps its place, as without the option. Left out when `retries` is 0;
//! 3. `timeout server`: `Timeout((timeout: timeout_server, starts: Inactivity))`, from when
//!    the request holds its connection, never counting the queue (`src/stream.c`,
//!    `back_establish`, arms it once the server connection is established), as an
//!    inactivity timeout ("the maximum inactivity time on the server side",
//!    `doc/configuration.txt`): it bounds the wait for the answer's first byte, then the
//!    body's (the dependency's `transfer`; with none, the `Connection` start); a 504
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
//! A connection failure is a call a partition cut off: `FailFast` is a refused connection,
//! `Hang` one that times out after the partition's `connect_timeout`, which stands for
//! `timeout connect` where the pool has no `connect` set-up.
//!
//! Which replica (the dependency's `replicas` are the backend's servers) a retry reaches
//! follows [`redispatches`]: HAProxy assigns the server before it connects (`src/backend.c`,
//! `assign_server`, then `connect_server`), so a call a partition cuts off has taken its
//! replica too, and a retry stays on it (`back_handle_st_cer` leaves the stream assigned,
//! `SC_ST_ASS`) unless it is redispatched, when it is balanced anew (the `Retry`'s
//! [`ReplicaRule::Haproxy`]).
//!
//! What brownout leaves out: `retry-on` conditions other than `conn-failure` (layer-7 retries),
//! health checks and balancing across servers (the dependency's `replicas` balance; one
//! `maxconn` per server is the sum over the backend's servers here).

use serde::{Deserialize, Serialize};

use super::limiter::fixed::{FixedConfig, RefuseAs};
use super::pool_rules::{KeepRule, PoolRules};
use super::retry::{ReplicaRule, RetryConfig};
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
    /// its connection, as an inactivity timeout (a `Timeout` with `starts: Inactivity`: the
    /// queue does not count; the first byte, then the body's `transfer`, each within it;
    /// with no `transfer`, the whole answer), then a 504. Unset: no limit.
    #[serde(default)]
    pub timeout_server: Option<Dur>,
    /// `retries`: connection attempts after the first that failed to connect (a partition
    /// cutting the call off), never after an error answer or a `timeout server`. Default 3,
    /// HAProxy's.
    #[serde(default = "three")]
    pub retries: u32,
    /// `option redispatch`: a retry may go to another server. Without it every retry goes
    /// back to the replica its first attempt was assigned. With it a retry is balanced anew
    /// over the dependency's `replicas` when more than one is up or health checks found its
    /// own down; with more than one server it is redispatched at once, through the queue
    /// again and without the turn-around delay; with one (or without the option) a retry
    /// keeps its place and waits min(`timeout_connect`, 1 s) after a refused connection.
    /// Default false, HAProxy's.
    #[serde(default)]
    pub redispatch: bool,
    /// The backend's `server` lines (>= 1, default 1): whether a redispatch can reach another
    /// server.
    #[serde(default = "one")]
    pub servers: u32,
    /// `http-reuse`: `Never` closes each server connection after its call, `Safe`,
    /// `Aggressive` and `Always` keep it open for the next call (brownout's calls are all
    /// alike, so the three are one), on the pools its calls use that have a `connect`. Left
    /// out: the pool's `keep_alive` decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_reuse: Option<HttpReuse>,
}

fn three() -> u32 {
    3
}
fn one() -> u32 {
    1
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

    /// Every retry is redispatched to another server, through the queue again and without
    /// the turn-around (`stream_choose_redispatch` with `srv_act > 1`).
    fn redispatches(&self) -> bool {
        self.redispatch && self.servers > 1
    }

    /// `retries` as a `Retry` of connection failures alone (`back_handle_st_cer`).
    fn retry(&self) -> Option<PolicySpec> {
        if self.retries == 0 {
            return None;
        }
        // The turn-around: 1 s, or `timeout connect` when shorter; none on a redispatch.
        let turn_around = self.timeout_connect.map_or(Dur::ms(1000), |c| Dur(c.ns().min(Dur::ms(1000).ns())));
        Some(PolicySpec::Retry(RetryConfig {
            max_attempts: self.retries.saturating_add(1),
            backoff: Dur(0),
            multiplier: 1.0,
            max_backoff: None,
            jitter: 0.0,
            on_timeout: false,
            on_error: false,
            on_refusal: Vec::new(),
            give_up: 0.0,
            on_connect_failure: Some(true),
            refused_delay: (!self.redispatches()).then_some(turn_around),
            max_elapsed: None,
            replica: ReplicaRule::Haproxy { redispatch: self.redispatch },
        }))
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
        let retry = self.retry();
        if self.redispatches() {
            layers.extend(retry.clone());
        }
        if self.maxconn > 0 {
            let queue = if self.maxqueue == 0 { u32::MAX } else { self.maxqueue };
            layers.push(PolicySpec::Limiter(FixedConfig::fifo(
                self.maxconn,
                queue,
                self.queue_wait(),
                RefuseAs::Unavailable,
            )));
        }
        if !self.redispatches() {
            layers.extend(retry);
        }
        if let Some(timeout) = self.timeout_server {
            layers.push(PolicySpec::Timeout(TimeoutConfig {
                timeout,
                unwind: Dur(0),
                starts: TimeoutStart::Inactivity,
            }));
        }
        layers
    }
}

impl PolicyConfig for HaproxyBackendConfig {
    const KIND: &'static str = "haproxy-backend";

    fn facts(&self) -> crate::policy::Facts {
        // Its 503s never fall back; its retries call again.
        crate::policy::Facts::plain(crate::metrics::LayerKind::Other)
            .attempts_per_call(f64::from(self.retries) + 1.0)
            .may_call_again(self.retries > 0)
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
        if self.servers == 0 {
            return Err("HaproxyBackend.servers must be >= 1 (a backend has at least one server)".into());
        }
        if self.retries == u32::MAX {
            return Err("HaproxyBackend.retries must be below 4294967295".into());
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

/// Whether an HAProxy retry leaves the server of the attempt before for another, as
/// `include/haproxy/stream.h`, `stream_choose_redispatch`, decides (called by
/// `src/backend.c`, `back_handle_st_cer`, after `conn_retries++`): never without `option
/// redispatch` (`option`); with it, when the server is no longer up (`cur_state <
/// SRV_ST_RUNNING`: health checks found it down, `server_up` false), or when more than one
/// server is up (`srv_act > 1`, `active` here) and neither persistence (`SF_DIRECT`: brownout
/// has no cookies) nor a hash balancing (`BE_LB_KIND_HI`: brownout's balancings are round
/// robin, random, least outstanding and two choices) pins the stream. The interval clause
/// (`redispatch_after`, `option redispatch <n>`: every n-th retry; -1, the default, the last)
/// is left out: it can only add a redispatch when one server is up and it is the stream's
/// own, and balancing over that one server picks it again.
pub fn redispatches(option: bool, server_up: bool, active: u32) -> bool {
    option && (!server_up || active > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry_of(config: &HaproxyBackendConfig) -> RetryConfig {
        match config.retry() {
            Some(PolicySpec::Retry(r)) => r,
            other => panic!("not a Retry: {other:?}"),
        }
    }

    fn backend(redispatch: bool) -> HaproxyBackendConfig {
        let mut c: HaproxyBackendConfig = ron::from_str("(retries: 3)").expect("parses");
        c.redispatch = redispatch;
        c
    }

    #[test]
    fn without_option_redispatch_a_retry_keeps_its_server() {
        // `stream_choose_redispatch`: the first test is `s->be->options & PR_O_REDISP`;
        // without it the `else` branch sets `SC_ST_ASS`, the server assigned before.
        for (up, active) in [(true, 1), (true, 3), (false, 0), (false, 2)] {
            assert!(!redispatches(false, up, active), "up {up}, active {active}");
        }
        assert!(retry_of(&backend(false)).replica.keeps(true, 3));
    }

    #[test]
    fn with_option_redispatch_and_several_servers_up_every_retry_is_redispatched() {
        // `stream_choose_redispatch`: `!(s->flags & SF_DIRECT) && s->be->srv_act > 1` and a
        // balancing that is not a hash: `sess_change_server(s, NULL)`, `SC_ST_REQ`.
        assert!(redispatches(true, true, 2));
        assert!(!retry_of(&backend(true)).replica.keeps(true, 3));
    }

    #[test]
    fn with_option_redispatch_a_server_found_down_is_left() {
        // `stream_choose_redispatch`: `__objt_server(s->target)->cur_state <
        // SRV_ST_RUNNING` redispatches whatever the number of servers.
        assert!(redispatches(true, false, 1));
        assert!(redispatches(true, false, 0));
    }

    #[test]
    fn with_option_redispatch_and_one_server_up_a_retry_stays_on_it() {
        // One server up, the stream's own: neither the `srv_act > 1` clause nor the server
        // state redispatches; the interval clause would, onto that same server.
        assert!(!redispatches(true, true, 1));
        assert!(retry_of(&backend(true)).replica.keeps(true, 1));
    }
}
