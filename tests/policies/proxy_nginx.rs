//! `NginxUpstream(..)` and `NginxLimitReq(..)` (issue 39) through whole runs, worked by hand
//! from nginx 1.31's source (`policy/nginx.rs` names the functions): requests arriving
//! together at 1 s, a dependency that always takes the same time.

use crate::common;

use brownout::metrics::summary::ClassSummary;

fn run(times: usize, latency: &str, layer: &str) -> ClassSummary {
    let at = vec!["\"1s\""; times].join(", ");
    let summary = common::run_first(&format!(
        r#"Scenario(
        name: "nginx", seed: 1, horizon: "10s", window: "5s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: [{at}]), deadline: "5s")],
        dependency: (latency: Constant("{latency}")),
        policies: [(name: "p", stack: [(policy: {layer})])],
    )"#
    ));
    summary.classes[0].clone()
}

/// (ok, error, timeout, rejected).
type Outcomes = (u64, u64, u64, u64);
/// (no_live_upstream, limiter_refused, attempt_timeout).
type Causes = (u64, u64, u64);

fn figures(c: &ClassSummary) -> (Outcomes, Causes) {
    let (o, k) = (&c.outcomes, &c.causes);
    ((o.ok, o.error, o.timeout, o.rejected), (k.no_live_upstream, k.limiter_refused, k.attempt_timeout))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1.0
}

#[test]
fn every_server_at_max_conns_is_a_502_at_once_apart_from_503_and_504() {
    // ngx_http_upstream_get_round_robin_peer fails (NGX_BUSY) with the one server at
    // max_conns=1; ngx_http_upstream_connect: "no live upstreams", ngx_http_upstream_next
    // finalizes 502. A is sent and cut by proxy_read_timeout at 400 ms (504); B and C get
    // 502 at once: outcome error, cause no_live_upstream (not limiter_refused, a 503).
    let c = run(3, "500ms", r#"NginxUpstream((max_conns: 1, proxy_read_timeout: "400ms"))"#);
    assert_eq!(figures(&c), ((0, 2, 1, 0), (2, 0, 1)));
    assert!(close(c.latency_failed_ms.max, 400.0), "{}", c.latency_failed_ms.max);
}

#[test]
fn a_502_is_never_passed_to_the_next_upstream() {
    // Two servers of max_conns=1: two are sent, the third finds both full: 502, not retried
    // although two tries are allowed (FT_NOLIVE is in no proxy_next_upstream mask; the
    // preset's Retry has no `Layer502` in `on_refusal`). The two sent are answered at 300 ms.
    let c = run(3, "300ms", r#"NginxUpstream((max_conns: 1, servers: 2, proxy_read_timeout: "1s"))"#);
    assert_eq!(figures(&c), ((2, 1, 0, 0), (1, 0, 0)));
    assert!(close(c.latency_failed_ms.max, 0.0), "{}", c.latency_failed_ms.max);
}

#[test]
fn a_read_timeout_goes_to_the_next_server_while_tries_are_left() {
    // ngx_http_upstream_next: `timeout` is in proxy_next_upstream (nginx's default, error
    // timeout) and two servers give two tries: cut at 400, tried again at once, cut at 800.
    let c = run(1, "500ms", r#"NginxUpstream((servers: 2, proxy_read_timeout: "400ms"))"#);
    assert_eq!(figures(&c).0, (0, 0, 1, 0));
    assert!(close(c.latency_failed_ms.max, 800.0), "{}", c.latency_failed_ms.max);
    // proxy_next_upstream_tries 1, or `off` (an empty list): one try, cut at 400.
    for layer in [
        r#"NginxUpstream((servers: 2, proxy_read_timeout: "400ms", proxy_next_upstream_tries: 1))"#,
        r#"NginxUpstream((servers: 2, proxy_read_timeout: "400ms", proxy_next_upstream: []))"#,
        r#"NginxUpstream((servers: 2, proxy_read_timeout: "400ms", proxy_next_upstream: [Error]))"#,
    ] {
        let c = run(1, "500ms", layer);
        assert!(close(c.latency_failed_ms.max, 400.0), "{layer}: {}", c.latency_failed_ms.max);
    }
}

#[test]
fn proxy_next_upstream_timeout_stops_the_next_try_not_the_one_in_progress() {
    // Five servers give five tries, each cut by proxy_read_timeout 100 ms and passed on at
    // once: 504 at 500 ms. With proxy_next_upstream_timeout 250 ms, ngx_http_upstream_next
    // finalizes once `ngx_current_msec - u->peer.start_time >= timeout`: the failures at 100
    // and 200 ms pass on (100, 200 < 250), the third try (from 200 ms) is not cut at 250 ms
    // and times out at 300 ms, when 300 >= 250 ends the request: 504 at 300 ms.
    let c = run(1, "1s", r#"NginxUpstream((servers: 5, proxy_read_timeout: "100ms"))"#);
    assert_eq!(figures(&c).0, (0, 0, 1, 0));
    assert!(close(c.latency_failed_ms.max, 500.0), "{}", c.latency_failed_ms.max);
    let bounded = r#"NginxUpstream((servers: 5, proxy_read_timeout: "100ms", proxy_next_upstream_timeout: "250ms"))"#;
    let c = run(1, "1s", bounded);
    assert_eq!(figures(&c).0, (0, 0, 1, 0));
    assert!(close(c.latency_failed_ms.max, 300.0), "{}", c.latency_failed_ms.max);
    // The same bound written as the Retry it expands into.
    let c = run(1, "1s", r#"Retry((max_attempts: 5, max_elapsed: "250ms"))), (policy: Timeout((timeout: "100ms"))"#);
    assert!(close(c.latency_failed_ms.max, 300.0), "{}", c.latency_failed_ms.max);
}

#[test]
fn limit_req_nodelay_admits_the_first_plus_burst_of_thirty_at_once() {
    // ngx_http_limit_req_lookup: 30 at once at 50r/s burst=20: the first and 20 more pass
    // (excess up to 20000), 9 are refused with limit_req_status 429 (`rejected`).
    let c = run(30, "10ms", "NginxLimitReq((rate: PerSecond(50), burst: 20, nodelay: true, status: 429))");
    assert_eq!(figures(&c), ((21, 0, 0, 9), (0, 9, 0)));
    assert!(close(c.latency_ms.max, 10.0), "{}", c.latency_ms.max);
}

#[test]
fn limit_req_without_nodelay_delays_the_burst_20_ms_apart() {
    // ngx_http_limit_req_account: the k-th after the first waits k * 1000 * 1000 / 50000 =
    // 20 k ms: answers at 10, 30, .., 410 ms (service 10 ms); 9 refused with the default
    // status 503 (an `error`, cause limiter_refused).
    let c = run(30, "10ms", "NginxLimitReq((rate: PerSecond(50), burst: 20))");
    assert_eq!(figures(&c), ((21, 9, 0, 0), (0, 9, 0)));
    assert!(close(c.latency_ms.max, 410.0), "{}", c.latency_ms.max);
    // The median answer of 10, 30, .., 410 is the 11th, 210 ms.
    assert!(close(c.latency_answered_ms.p50, 210.0), "{}", c.latency_answered_ms.p50);
}

#[test]
fn limit_conn_is_a_limiter_with_no_queue_answering_503() {
    // ngx_http_limit_conn_handler: `limit_conn zone 2` refuses the third in flight at once,
    // limit_conn_status 503 by default: Limiter((permits: 2, queue: 0, refuse_as: Unavailable)).
    let c = run(3, "100ms", "Limiter((permits: 2, queue: 0, refuse_as: Unavailable))");
    assert_eq!(figures(&c), ((2, 1, 0, 0), (0, 1, 0)));
}

#[test]
fn out_of_range_values_are_refused_at_their_line() {
    for (layer, field) in [
        (r#"NginxUpstream((servers: 0))"#, "NginxUpstream.servers"),
        (r#"NginxUpstream((proxy_read_timeout: "0ms"))"#, "NginxUpstream.proxy_read_timeout"),
        (r#"NginxLimitReq((rate: PerSecond(0)))"#, "NginxLimitReq.rate"),
        (r#"NginxLimitReq((rate: PerSecond(5), status: 404))"#, "NginxLimitReq.status"),
    ] {
        let text = format!(
            r#"Scenario(
            name: "nginx", seed: 1, horizon: "10s",
            fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
            classes: [(name: "api", arrivals: Scripted(times: ["1s"]), deadline: "5s")],
            dependency: (latency: Constant("500ms")),
            policies: [(name: "p", stack: [
                (policy: {layer}),
            ])],
        )"#
        );
        let err = brownout::scenario::load_text(std::path::Path::new("n.ron"), &text).unwrap_err().to_string();
        assert!(err.contains(field), "{err}");
        assert!(err.starts_with("n.ron:7:"), "{err}");
    }
}
