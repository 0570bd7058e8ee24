//! What a caller sees from a proxy (issue 39): a queue timeout is a 503, a server timeout a
//! 504, a limiter's refusal a 429 or a 503 as configured (`refuse_as`), and `causes` keep
//! them apart. Envoy's adaptive concurrency filter refuses with 503 ("reached concurrency
//! limit"), so `EnvoyGradient` does unless told otherwise.
//!
//! HAProxy answers an expired `timeout queue` with 503 and an expired `timeout server` with
//! 504 (`src/http_ana.c`: `http_return_srv_error` sets 503 for `STRM_ET_QUEUE_TO`;
//! `http_wait_for_response` returns 504 on a read timeout); nginx refuses over `limit_req` /
//! `limit_conn` with `limit_req_status` / `limit_conn_status`, 503 unless configured
//! (`src/http/modules/ngx_http_limit_req_module.c`, `ngx_http_limit_req_merge_conf`:
//! `ngx_conf_merge_uint_value(conf->status_code, prev->status_code,
//! NGX_HTTP_SERVICE_UNAVAILABLE)`).
//!
//! Every case: a dependency that always takes 500 ms, three requests arriving together at
//! 1 s, worked by hand below.

use crate::common;

use brownout::metrics::summary::ClassSummary;

fn run(pool: &str, stack: &str) -> ClassSummary {
    let summary = common::run_first(&format!(
        r#"Scenario(
        name: "refusal-status", seed: 1, horizon: "10s", window: "5s",
        fleet: (workers: (slots: 10), pool: {pool}),
        classes: [(name: "api", arrivals: Scripted(times: ["1s", "1s", "1s"]), deadline: "5s")],
        dependency: (latency: Constant("500ms")),
        policies: [(name: "p", stack: [{stack}])],
    )"#
    ));
    summary.classes[0].clone()
}

/// (ok, error, timeout, rejected).
type Outcomes = (u64, u64, u64, u64);
/// (pool_acquire_timeout, attempt_timeout, limiter_refused).
type Causes = (u64, u64, u64);

fn counts(c: &ClassSummary) -> (Outcomes, Causes) {
    let o = &c.outcomes;
    let k = &c.causes;
    ((o.ok, o.error, o.timeout, o.rejected), (k.pool_acquire_timeout, k.attempt_timeout, k.limiter_refused))
}

#[test]
fn a_queue_timeout_is_a_503_and_a_server_timeout_a_504() {
    // HAProxy `maxconn 1`, `timeout queue 200ms`, `timeout server 400ms` as the pool and a
    // timeout from the connection. A takes the connection at 0 and is cut at 400: 504.
    // B and C wait for it from 0; their 200 ms queue timeout ends at 200: two 503s.
    let c = run(
        r#"(max_connections: 1, acquire_timeout: "200ms")"#,
        r#"(policy: Timeout((timeout: "400ms", starts: Connection)))"#,
    );
    assert_eq!(counts(&c), ((0, 2, 1, 0), (2, 1, 0)));
}

#[test]
fn a_limiter_refuses_with_the_status_it_is_given() {
    // A limiter of 1 permit and a queue of 1 (200 ms), in front of a 400 ms timeout. A is
    // admitted and cut at 400 (504). B waits and is refused at 200; C finds the queue full
    // and is refused at 0. Refused as `Rejected`: two 429s; as `Unavailable`: two 503s,
    // counted as errors; the cause is the limiter's either way.
    let pool = r#"(max_connections: 10, acquire_timeout: "1s")"#;
    let stack = |refuse_as: &str| {
        format!(
            r#"(policy: Limiter((permits: 1, queue: 1, max_wait: "200ms", refuse_as: {refuse_as}))),
               (policy: Timeout((timeout: "400ms")))"#
        )
    };
    assert_eq!(counts(&run(pool, &stack("Rejected"))), ((0, 0, 1, 2), (0, 1, 2)));
    assert_eq!(counts(&run(pool, &stack("Unavailable"))), ((0, 2, 1, 0), (0, 1, 2)));
}

#[test]
fn a_503_refusal_never_falls_back() {
    // A class with a fallback on every refusal or failure still gets the 503: a proxy has no
    // fallback to give (as `Rejected`, and unlike a breaker's short circuit). The timed-out
    // A falls back (a failure).
    let summary = common::run_first(
        r#"Scenario(
        name: "refusal-status", seed: 1, horizon: "10s", window: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Scripted(times: ["1s", "1s", "1s"]), deadline: "5s",
                   fallback: OnRefusalOrFailure, fallback_answer: FailOpen(cost_per_use: 0.0))],
        dependency: (latency: Constant("500ms")),
        policies: [(name: "p", stack: [
            (policy: Limiter((permits: 1, queue: 1, max_wait: "200ms", refuse_as: Unavailable))),
            (policy: Timeout((timeout: "400ms"))),
        ])],
    )"#,
    );
    let c = &summary.classes[0];
    assert_eq!((c.outcomes.error, c.outcomes.fallback, c.causes.limiter_refused), (2, 1, 2));
}

/// Envoy's adaptive concurrency filter answers a request over its limit with 503 and the
/// details "reached concurrency limit" (envoyproxy/envoy,
/// `source/extensions/filters/http/adaptive_concurrency/adaptive_concurrency_filter.cc`,
/// `AdaptiveConcurrencyFilter::decodeHeaders`: `sendLocalReply(Http::Code::ServiceUnavailable,
/// "", nullptr, absl::nullopt, "reached concurrency limit")`), so `EnvoyGradient` refuses as
/// `Unavailable` by default: an `error`, counted in `limiter_refused`.
#[test]
fn envoy_gradient_refuses_with_503_unless_told_otherwise() {
    // The controller starts at the first attempt with a min_rtt window, which pins the limit
    // to `min_concurrency` = 1 until `request_count` (50) samples arrive. A is admitted and
    // answered at 1.5 s; B and C are refused at once (the filter has no queue).
    let pool = r#"(max_connections: 10, acquire_timeout: "1s")"#;
    let stack = |refuse_as: &str| {
        format!(
            r#"(policy: EnvoyGradient((concurrency_update_interval: "100ms", min_rtt_calc_interval: "60s",
                min_concurrency: 1{refuse_as})))"#
        )
    };
    assert_eq!(counts(&run(pool, &stack(""))), ((1, 2, 0, 0), (0, 0, 2)), "Envoy's 503 by default");
    assert_eq!(counts(&run(pool, &stack(", refuse_as: Rejected"))), ((1, 0, 0, 2), (0, 0, 2)), "a 429 when asked");
}
