//! nginx in front of the dependency: the `NginxUpstream(..)` preset (an `upstream` block and
//! the `proxy_*` directives of the location that passes to it) and the `NginxLimitReq(..)`
//! layer (`limit_req`), each following nginx's own source (nginx 1.31, file and function
//! named at each rule). `limit_conn` needs no layer of its own: it is a `Limiter` with no
//! queue (see [`limit_conn`]).
//!
//! ## `NginxUpstream`
//! Expanded when the model is built (as `HaproxyBackend`), outermost first:
//!
//! 1. `proxy_next_upstream` and `proxy_next_upstream_tries`: a `Retry` with no backoff, when
//!    more than one try is allowed. nginx gives a request at most as many tries as the
//!    upstream has servers (`ngx_http_upstream_init_round_robin_peer` sets `peer.tries` to
//!    the number of servers, `ngx_http_upstream_init_request` lowers it to
//!    `next_upstream_tries` when that is set), and passes a failure to the next server only
//!    when its kind is listed (`ngx_http_upstream_next`: `(u->conf->next_upstream & ft_type)
//!    != ft_type` finalizes the request instead), and with `proxy_next_upstream_timeout` no
//!    next try once that long has passed since the first try began (`ngx_current_msec -
//!    u->peer.start_time >= timeout` there; `start_time` is set by
//!    `ngx_http_upstream_init_request` before the first try): the `Retry`'s `max_elapsed`;
//! 2. `max_conns`: a `Limiter((permits: max_conns x servers, queue: 0, refuse_as:
//!    BadGateway))`. Open-source nginx has no queue for `max_conns`: when every server is at
//!    its `max_conns`, `ngx_http_upstream_get_round_robin_peer`
//!    (`src/http/ngx_http_upstream_round_robin.c`) fails with `NGX_BUSY`, which
//!    `ngx_http_upstream_connect` (`src/http/ngx_http_upstream.c`) logs as "no live
//!    upstreams" and hands to `ngx_http_upstream_next` as `NGX_HTTP_UPSTREAM_FT_NOLIVE`; that
//!    kind is in no `proxy_next_upstream` mask, so the request is finalized at once with the
//!    status of the `default:` branch, `NGX_HTTP_BAD_GATEWAY` (502): outcome `error`, cause
//!    `no_live_upstream`. Round robin skips a server at its `max_conns` and takes another
//!    (`ngx_http_upstream_get_peer`), so a request is refused only when every server is
//!    full: one limit of their sum. Left out when `max_conns` is 0 (no limit);
//! 3. `proxy_read_timeout`: `Timeout((timeout: proxy_read_timeout, starts: Inactivity))`, a
//!    504 (`ngx_http_upstream_send_request` arms the read timer once the request is sent,
//!    for the response header; `ngx_event_pipe`, `src/event/ngx_event_pipe.c`, re-arms it
//!    between reads of the body, so it is an inactivity timeout: the dependency's `transfer`
//!    is timed from the first byte; with none it is the `Connection` start;
//!    `ngx_http_upstream_next` answers `NGX_HTTP_UPSTREAM_FT_TIMEOUT` with
//!    `NGX_HTTP_GATEWAY_TIME_OUT`). nginx's default is 60 s
//!    (`ngx_http_proxy_merge_loc_conf`).
//!
//! Which `proxy_next_upstream` kinds map onto the `Retry`'s predicates: `timeout` is
//! `on_timeout`; `error` (a connection failure: a partition cutting the call) and
//! `http_500` (an error answer) are both `on_error`, since brownout's dependency failures are
//! not told apart by status; `http_503` is `on_refusal: [Dependency503]` (the dependency's
//! full queue). A `max_conns` refusal (`Layer502`) is never retried, as in nginx. Not mapped:
//! the passive health check (`max_fails`, `fail_timeout`: a failed server is skipped
//! for a while; with one server nginx never skips it), which server a retry goes to (nginx
//! never tries a server twice; brownout's replicas are drawn per call), `non_idempotent`
//! (brownout's requests are taken as idempotent).
//!
//! The upstream's connections are the scenario's pool; on a pool with a `connect` (a set-up
//! time) it sets, in this policy set (`policy/pool_rules.rs`): `proxy_connect_timeout`, the
//! longest set-up (when the connect timer fires, `ngx_http_upstream_send_request_handler`
//! calls `ngx_http_upstream_next` with `NGX_HTTP_UPSTREAM_FT_TIMEOUT`, a 504; brownout counts
//! it as an `error` with cause `connect_timeout`, and a next-upstream retry takes it with
//! `error`, not `timeout`); and the upstream `keepalive` cache
//! (`src/http/modules/ngx_http_upstream_keepalive_module.c`): without `keepalive` nginx
//! closes each upstream connection after its request; with `keepalive N`,
//! `ngx_http_upstream_free_keepalive_peer` keeps a connection whose request succeeded in a
//! cache of at most N per worker, closing the least recently used one when the cache is
//! full, closes it once it has served `keepalive_requests` (1000 by default) or stayed idle
//! `keepalive_timeout` (60 s by default; `ngx_http_upstream_init_keepalive`'s
//! defaults), and `ngx_http_upstream_get_keepalive_peer` takes the most recently cached one.
//!
//! ## `NginxLimitReq`
//! `limit_req` (`src/http/modules/ngx_http_limit_req_module.c`), nginx's leaky bucket in
//! its own integer arithmetic: the rate and the excess are kept in thousandths of a request
//! (`ngx_http_limit_req_zone`: `ctx->rate = rate * 1000 / scale`, 60 for `r/m`;
//! `ngx_http_limit_req`: `burst * 1000`, `delay * 1000`) and time in whole milliseconds
//! (`ngx_current_msec`). For each request (`ngx_http_limit_req_lookup`): the first request
//! creates the key's node with excess 0 and passes; every later one computes `excess =
//! excess_before - rate * ms / 1000 + 1000` (`ms` the whole milliseconds since the node was
//! last updated), floored at 0; over `burst * 1000` it is refused with `limit_req_status`
//! (503 by default, `ngx_http_limit_req_merge_conf`) and changes nothing; otherwise the
//! node keeps the new excess (and the time, when `ms` is not 0). An admitted request with
//! excess over `delay * 1000` (`delay` 0 by default; `nodelay` is an infinite `delay`) waits
//! `(excess - delay * 1000) * 1000 / rate` milliseconds before it goes on
//! (`ngx_http_limit_req_account`, then `ngx_http_limit_req_delay` on the timer).
//!
//! One node per instance: the sample's key (`$server_name`) is the same for every request;
//! an nginx zone is shared by the worker processes of one host, so one instance is one host
//! (`scope: Fleet(..)` shares one node across the fleet). nginx applies `limit_req` once per
//! request (`r->main->limit_req_status` set), so the layer belongs outside any retry.
//!
//! Against `RateLimit` (Envoy's token bucket): with `nodelay`, `NginxLimitReq((rate:
//! PerSecond(r), burst: b, nodelay: true))` admits what `RateLimit((rate_per_s: r, burst: b
//! + 1))` admits, but for nginx's rounding (whole milliseconds, thousandths of a request, the
//! first request free) — which is why it is its own small bucket rather than a `RateLimit`.
//! Without `nodelay` it delays instead of refusing, which no other layer does. Its refusal
//! answer is the same `RefuseAs` as every limit's.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::limiter::fixed::{FixedConfig, RefuseAs};
use super::pool_rules::{KeepRule, PoolRules};
use super::retry::RetryConfig;
use super::timeout::{TimeoutConfig, TimeoutStart};
use super::{
    Admission, Attempt, BuildCtx, ClassId, ConfigError, Policy, PolicyConfig, PolicySpec, Refusal, Refused, Status,
};
use crate::engine::{MILLISECOND, Time};
use crate::units::Dur;

/// A failure kind of `proxy_next_upstream` that brownout can tell apart (see the module docs
/// for the mapping and for the kinds left out).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum NextUpstream {
    /// `error`: the connection to the server failed (a partition cut the call): `on_error`.
    Error,
    /// `timeout`: `proxy_read_timeout` fired: `on_timeout`.
    Timeout,
    /// `http_500`: the server answered with an error: `on_error`.
    Http500,
    /// `http_503`: the server answered 503 without serving (the dependency's full queue):
    /// `on_refusal: [Dependency503]`.
    Http503,
}

/// An nginx upstream and the `proxy_*` directives of the location passing to it, as nginx
/// names them; see the module docs for the layers it stands for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NginxUpstreamConfig {
    /// `server ... max_conns=N`: requests one server takes at once; when every server is at
    /// it, nginx answers 502 at once ("no live upstreams", cause `no_live_upstream`), with no
    /// queue. 0 (nginx's default) = no limit.
    #[serde(default)]
    pub max_conns: u32,
    /// The upstream's `server` lines, each with `max_conns` (>= 1, default 1): the limit is
    /// their sum, and a request gets at most this many tries.
    #[serde(default = "one")]
    pub servers: u32,
    /// `proxy_read_timeout`: longest wait for the server's answer, timed from when the request
    /// holds its connection, between two reads (`starts: Inactivity`: the header, then the
    /// body's `transfer`, each within it; with no `transfer`, the whole answer), then a 504.
    /// Default "60s", nginx's.
    #[serde(default = "sixty_seconds")]
    pub proxy_read_timeout: Dur,
    /// `proxy_next_upstream`: which failures pass the request to the next server, any of
    /// `Error`, `Timeout`, `Http500`, `Http503`; empty for `off`. Default `[Error, Timeout]`,
    /// nginx's.
    #[serde(default = "error_timeout")]
    pub proxy_next_upstream: Vec<NextUpstream>,
    /// `proxy_next_upstream_tries`: most tries per request, the first included; 0 (nginx's
    /// default) = as many as there are `servers`, which also caps any other value.
    #[serde(default)]
    pub proxy_next_upstream_tries: u32,
    /// `proxy_next_upstream_timeout`: no next try once this long has passed since the first
    /// began, the try in progress left alone (`ngx_http_upstream_next`); a `Retry`'s
    /// `max_elapsed`. Left out (nginx's default, 0): no bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_next_upstream_timeout: Option<Dur>,
    /// `proxy_connect_timeout`: the longest set-up of a new upstream connection, on the pools
    /// its calls use that have a `connect` (past it, an `error` with cause
    /// `connect_timeout`). Left out: the pool's own `connect.timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_connect_timeout: Option<Dur>,
    /// The upstream's `keepalive N`: at most N idle connections kept open after their
    /// request succeeded (beyond, the least recently used one is closed); 0 (nginx's default,
    /// no `keepalive` line) closes every connection after its request. Only on the pools its
    /// calls use that have a `connect`.
    #[serde(default)]
    pub keepalive: u32,
    /// `keepalive_timeout`: an idle kept connection is closed after this long (default
    /// "60s", nginx's). Only with `keepalive`.
    #[serde(default = "sixty_seconds")]
    pub keepalive_timeout: Dur,
    /// `keepalive_requests`: a kept connection is closed after this many requests (>= 1;
    /// default 1000, nginx's). Only with `keepalive`.
    #[serde(default = "thousand")]
    pub keepalive_requests: u32,
}

fn thousand() -> u32 {
    1000
}

fn one() -> u32 {
    1
}
fn sixty_seconds() -> Dur {
    Dur::ms(60_000)
}
fn error_timeout() -> Vec<NextUpstream> {
    vec![NextUpstream::Error, NextUpstream::Timeout]
}

impl NginxUpstreamConfig {
    /// Tries per request, the first included: the servers, capped by
    /// `proxy_next_upstream_tries` when set (`ngx_http_upstream_init_request`).
    pub fn tries(&self) -> u32 {
        match self.proxy_next_upstream_tries {
            0 => self.servers,
            n => n.min(self.servers),
        }
    }

    /// Its rules for the connections of the pools behind it (`policy/pool_rules.rs`).
    pub fn pool_rules(&self) -> PoolRules {
        let keep = match self.keepalive {
            0 => KeepRule::Never,
            n => KeepRule::With(Some(self.keepalive_timeout), Some(self.keepalive_requests), Some(n)),
        };
        PoolRules { connect_timeout: self.proxy_connect_timeout, keep: Some(keep) }
    }

    /// The layers it stands for, outermost first (see the module docs).
    pub fn expand(&self) -> Vec<PolicySpec> {
        let mut layers = Vec::new();
        let on = |k| self.proxy_next_upstream.contains(&k);
        if self.tries() > 1 && !self.proxy_next_upstream.is_empty() {
            layers.push(PolicySpec::Retry(RetryConfig {
                max_attempts: self.tries(),
                backoff: Dur(0),
                multiplier: 1.0,
                max_backoff: None,
                jitter: 0.0,
                on_timeout: on(NextUpstream::Timeout),
                on_error: on(NextUpstream::Error) || on(NextUpstream::Http500),
                on_refusal: if on(NextUpstream::Http503) { vec![Refused::Dependency503] } else { Vec::new() },
                give_up: 0.0,
                on_connect_failure: None,
                refused_delay: None,
                max_elapsed: self.proxy_next_upstream_timeout,
                // nginx's next upstream is the next server (`ngx_http_upstream_next`).
                replica: Default::default(),
            }));
        }
        if self.max_conns > 0 {
            let permits = self.max_conns.saturating_mul(self.servers);
            layers.push(PolicySpec::Limiter(FixedConfig::fifo(permits, 0, Dur(0), RefuseAs::BadGateway)));
        }
        layers.push(PolicySpec::Timeout(TimeoutConfig {
            timeout: self.proxy_read_timeout,
            unwind: Dur(0),
            starts: TimeoutStart::Inactivity,
        }));
        layers
    }
}

impl PolicyConfig for NginxUpstreamConfig {
    const KIND: &'static str = "nginx-upstream";

    fn facts(&self) -> crate::policy::Facts {
        // Its 502s never fall back.
        crate::policy::Facts::plain(crate::metrics::LayerKind::Other)
            .attempts_per_call(f64::from(self.tries()))
            .may_call_again(self.tries() > 1)
    }

    fn preset_layers(&self) -> Option<Vec<PolicySpec>> {
        Some(self.expand())
    }

    fn validate(&self, classes: &[&str]) -> Result<(), ConfigError> {
        if self.servers == 0 {
            return Err("NginxUpstream.servers must be >= 1 (an upstream has at least one server)".into());
        }
        if self.proxy_read_timeout.ns() == 0 {
            return Err("NginxUpstream.proxy_read_timeout must be > 0".into());
        }
        if self.proxy_connect_timeout.is_some_and(|t| t.ns() == 0) {
            return Err("NginxUpstream.proxy_connect_timeout must be > 0 (leave it out for the pool's own)".into());
        }
        if self.proxy_next_upstream_timeout.is_some_and(|t| t.ns() == 0) {
            return Err("NginxUpstream.proxy_next_upstream_timeout must be > 0 (leave it out for no bound)".into());
        }
        if self.keepalive_timeout.ns() == 0 {
            return Err("NginxUpstream.keepalive_timeout must be > 0".into());
        }
        if self.keepalive_requests == 0 {
            return Err("NginxUpstream.keepalive_requests must be >= 1".into());
        }
        if self.max_conns.checked_mul(self.servers).is_none() {
            return Err("NginxUpstream.max_conns times servers must be at most 4294967295".into());
        }
        for spec in self.expand() {
            spec.validate(classes).map_err(|m| format!("NginxUpstream: {m}"))?;
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        // Expanded by the model before building; built alone it admits everything.
        Box::new(super::dotnet::Unexpanded)
    }
}

/// `limit_conn zone N` with `limit_conn_status` (503 by default): a `Limiter` with no queue.
/// `ngx_http_limit_conn_handler` (`src/http/modules/ngx_http_limit_conn_module.c`) refuses a
/// request when the key already holds `N` (`lc->conn >= limits[i].conn`) and otherwise counts
/// it until the request ends (`ngx_http_limit_conn_cleanup`); the status defaults to
/// `NGX_HTTP_SERVICE_UNAVAILABLE` (`ngx_http_limit_conn_merge_conf`). Nothing waits. `status`
/// 429 is `Rejected`, anything else `Unavailable` (503).
pub fn limit_conn(conn: u32, status: u16) -> FixedConfig {
    let refuse_as = if status == 429 { RefuseAs::Rejected } else { RefuseAs::Unavailable };
    FixedConfig::fifo(conn, 0, Dur(0), refuse_as)
}

/// A `limit_req_zone` rate: `N r/s` or `N r/m`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum NginxRate {
    /// `rate=Nr/s`.
    PerSecond(u32),
    /// `rate=Nr/m`.
    PerMinute(u32),
}

impl NginxRate {
    /// Thousandths of a request per second, as nginx keeps it (`ngx_http_limit_req_zone`:
    /// `rate * 1000 / scale`, integer division).
    pub fn milli_per_s(self) -> u64 {
        match self {
            NginxRate::PerSecond(n) => u64::from(n) * 1000,
            NginxRate::PerMinute(n) => u64::from(n) * 1000 / 60,
        }
    }
}

/// `limit_req` with its zone's rate and `limit_req_status`, e.g. `NginxLimitReq((rate:
/// PerSecond(50), burst: 20, nodelay: true, status: 429))`; see the module docs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NginxLimitReqConfig {
    /// The zone's `rate=`: `PerSecond(n)` or `PerMinute(n)`, n >= 1.
    pub rate: NginxRate,
    /// `burst=`: requests in excess of the rate that are still admitted (default 0).
    #[serde(default)]
    pub burst: u32,
    /// `nodelay`: admitted requests in excess go on at once instead of being delayed.
    #[serde(default)]
    pub nodelay: bool,
    /// `delay=`: requests in excess that go on at once before the rest are delayed (default
    /// 0: every request in excess is delayed); not with `nodelay`.
    #[serde(default)]
    pub delay: u32,
    /// `limit_req_status`: 503 (nginx's default, an `error`) or 429 (`rejected`); causes
    /// count it as `limiter_refused`.
    #[serde(default = "service_unavailable")]
    pub status: u16,
}

fn service_unavailable() -> u16 {
    503
}

impl PolicyConfig for NginxLimitReqConfig {
    const KIND: &'static str = "nginx-limit-req";

    fn facts(&self) -> crate::policy::Facts {
        // Its refusals and delays count with the limiters' (`limiter_refused`).
        crate::policy::Facts::plain(crate::metrics::LayerKind::Limiter)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        if self.rate.milli_per_s() == 0 {
            return Err("NginxLimitReq.rate must be at least 1 request per second or per minute".into());
        }
        if self.nodelay && self.delay > 0 {
            return Err("NginxLimitReq.delay and nodelay exclude each other: nodelay delays nothing".into());
        }
        if !matches!(self.status, 429 | 503) {
            return Err(format!("NginxLimitReq.status {}: brownout answers a refusal 429 or 503", self.status).into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(NginxLimitReq {
            rate: self.rate.milli_per_s(),
            burst: u64::from(self.burst) * 1000,
            delay: if self.nodelay { u64::MAX } else { u64::from(self.delay) * 1000 },
            refuse_as: if self.status == 429 { RefuseAs::Rejected } else { RefuseAs::Unavailable },
            node: None,
            delayed: VecDeque::new(),
        })
    }
}

/// The key's node: `ngx_http_limit_req_node_t`'s `excess` and `last`.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// Thousandths of a request in excess of the rate.
    excess: u64,
    /// Whole milliseconds when the node was last updated.
    last: u64,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct NginxLimitReq {
    /// Thousandths of a request per second.
    rate: u64,
    /// `burst * 1000`.
    burst: u64,
    /// `delay * 1000` (`u64::MAX` for `nodelay`).
    delay: u64,
    refuse_as: RefuseAs,
    /// None until the first request.
    node: Option<Node>,
    /// The delayed attempts, in the order they were admitted: (id, when they go on). Their
    /// times never decrease: a request admitted `e` ms after another has an excess lower by
    /// `rate * e / 1000 - 1000`, so its delay ends `1000 / rate` s after the other's.
    delayed: VecDeque<(u64, Time)>,
}

impl NginxLimitReq {
    /// `ngx_http_limit_req_lookup` then `ngx_http_limit_req_account` at `now`: None when
    /// refused (`NGX_BUSY`: the node is left as it was), else the delay in milliseconds.
    fn account(&mut self, now: Time) -> Option<u64> {
        let now_ms = now / MILLISECOND;
        let Some(node) = &mut self.node else {
            // A new node: excess 0, `last` now, passed without delay.
            self.node = Some(Node { excess: 0, last: now_ms });
            return Some(0);
        };
        let ms = now_ms.saturating_sub(node.last);
        let excess = (node.excess + 1000).saturating_sub(self.rate.saturating_mul(ms) / 1000);
        if excess > self.burst {
            return None;
        }
        node.excess = excess;
        if ms != 0 {
            node.last = now_ms;
        }
        Some(if excess <= self.delay { 0 } else { (excess - self.delay) * 1000 / self.rate })
    }
}

impl Policy for NginxLimitReq {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::ADMIT
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        // Asked again for an attempt it delayed: it goes on once its delay is over.
        if let Some(i) = self.delayed.iter().position(|&(id, _)| id == a.id) {
            if a.now >= self.delayed[i].1 {
                self.delayed.remove(i);
                return Admission::Admit;
            }
            return Admission::Wait { max_wait: Time::MAX };
        }
        match self.account(a.now) {
            None => Admission::Refuse(self.refuse_as.refusal()),
            Some(0) => Admission::Admit,
            Some(ms) => {
                self.delayed.push_back((a.id, a.now.saturating_add(ms.saturating_mul(MILLISECOND))));
                Admission::Wait { max_wait: Time::MAX }
            }
        }
    }

    fn left_queue(&mut self, a: &Attempt) {
        // Its request ended while delayed; nginx keeps the excess it accounted.
        self.delayed.retain(|&(id, _)| id != a.id);
    }

    fn refusal(&self, _class: ClassId) -> Refusal {
        self.refuse_as.refusal()
    }

    fn status(&self) -> Status {
        Status { wake_at: self.delayed.front().map(|d| d.1), ..Status::default() }
    }
}

#[cfg(test)]
mod tests;
