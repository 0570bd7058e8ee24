//! `HaproxyBackend(..)` (issue 39): an HAProxy backend's `maxconn`, `maxqueue`, `timeout
//! queue` (or `timeout connect` in its place) and `timeout server`, expanded into a 503-refusing
//! limiter and a timeout from the connection (`policy/haproxy.rs`). Worked by hand: a
//! dependency that always takes 500 ms and three requests arriving together at 1 s.

use crate::common;

use brownout::metrics::summary::ClassSummary;

fn run(backend: &str) -> ClassSummary {
    let summary = common::run_first(&format!(
        r#"Scenario(
        name: "haproxy", seed: 1, horizon: "10s", window: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: ["1s", "1s", "1s"]), deadline: "5s")],
        dependency: (latency: Constant("500ms")),
        policies: [(name: "p", stack: [(policy: HaproxyBackend(({backend})))])],
    )"#
    ));
    summary.classes[0].clone()
}

/// (ok, error 503, timeout 504), (limiter_refused, attempt_timeout), slowest answer in ms.
fn figures(c: &ClassSummary) -> ((u64, u64, u64), (u64, u64), f64) {
    let o = &c.outcomes;
    ((o.ok, o.error, o.timeout), (c.causes.limiter_refused, c.causes.attempt_timeout), c.latency_ms.max)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1.0
}

#[test]
fn maxconn_queues_timeout_queue_answers_503_and_timeout_server_504() {
    // maxconn 1: A is sent at 0 and cut by `timeout server` at 400 (504). B and C queue and
    // leave the queue at 200 (`timeout queue`): two 503s. The slowest answer is A's, 400 ms.
    let (counts, causes, max) = figures(&run(r#"maxconn: 1, timeout_queue: "200ms", timeout_server: "400ms""#));
    assert_eq!((counts, causes), ((0, 2, 1), (2, 1)));
    assert!(close(max, 400.0), "{max}");
}

#[test]
fn maxqueue_refuses_at_once_and_timeout_connect_stands_in_for_timeout_queue() {
    // maxqueue 1: C finds the queue full (503 at 0); B waits `timeout connect` (100 ms, no
    // `timeout queue`) and gets a 503; A is answered at 500 (no `timeout server`).
    let c = run(r#"maxconn: 1, maxqueue: 1, timeout_connect: "100ms""#);
    assert_eq!(figures(&c).0, (1, 2, 0));
    assert!(close(c.latency_ms.max, 500.0), "{}", c.latency_ms.max);
    assert!(close(c.latency_failed_ms.max, 100.0), "{}", c.latency_failed_ms.max);
}

#[test]
fn timeout_server_does_not_count_the_queue() {
    // maxconn 1, `timeout server` 600 ms, no queue timeout: A answers at 500; B waits 0..500
    // and is answered at 1000; C waits 0..1000 and is answered at 1500. A timeout counting
    // the queue (600 ms from arrival) would have cut B at 600 and C at 600.
    let c = run(r#"maxconn: 1, timeout_server: "600ms""#);
    assert_eq!(figures(&c).0, (3, 0, 0));
    assert!(close(c.latency_ms.max, 1500.0), "{}", c.latency_ms.max);
}

#[test]
fn no_maxconn_no_queue() {
    // maxconn 0 (HAProxy's default): all three are sent at once; a 400 ms `timeout server`
    // cuts all three.
    let c = run(r#"timeout_server: "400ms""#);
    assert_eq!(figures(&c).0, (0, 0, 3));
}

#[test]
fn out_of_range_values_are_refused_at_their_line() {
    for (backend, field) in [
        (r#"maxconn: 1, timeout_server: "0ms""#, "timeout_server"),
        (r#"maxqueue: 3"#, "maxqueue"),
        ("retries: 4294967295", "retries"),
        ("servers: 0", "servers"),
    ] {
        let text = format!(
            r#"Scenario(
            name: "haproxy", seed: 1, horizon: "10s",
            fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
            classes: [(name: "api", arrivals: Scripted(times: ["1s"]), deadline: "5s")],
            dependency: (latency: Constant("500ms")),
            policies: [(name: "p", stack: [
                (policy: HaproxyBackend(({backend}))),
            ])],
        )"#
        );
        let err = brownout::scenario::load_text(std::path::Path::new("h.ron"), &text).unwrap_err().to_string();
        assert!(err.contains(&format!("HaproxyBackend.{field}")), "{err}");
        assert!(err.starts_with("h.ron:7:"), "{err}");
    }
}
