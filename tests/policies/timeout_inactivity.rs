//! An inactivity timeout (`Timeout((starts: Inactivity))`, issue 39): HAProxy's `timeout
//! server` ("the maximum inactivity time on the server side", `doc/configuration.txt`) and
//! nginx's `proxy_read_timeout` (armed for the header by `ngx_http_upstream_send_request`,
//! re-armed between reads of the body by `ngx_event_pipe`) bound the wait for the answer's
//! first byte and then the wait for its body, each alone, where a `Connection` timeout bounds
//! the whole answer. The dependency's `transfer` is the body's time after the first byte.
//!
//! Worked by hand: one request at 1 s, a 250 ms timeout, the first byte after the
//! dependency's latency, the body `transfer` later:
//! - 100 ms + 300 ms: `Connection` fires at 250 (the answer is due at 400); `Inactivity`
//!   sees the first byte at 100, then waits for the body from there: 100 + 250 = 350 < 400,
//!   it fires at 350.
//! - 100 ms + 200 ms: `Connection` fires at 250; `Inactivity`: the body is in at 300 <= 350,
//!   ok in 300 ms.
//! - 300 ms + 100 ms: the first byte is late for both: 504 at 250.
//! - `transfer` 0: the first byte is the whole answer and both starts agree.

use crate::common;

/// (ok, timeout, slowest answer in ms) of a request at 1 s.
fn run(latency: &str, transfer: &str, starts: &str) -> (u64, u64, f64) {
    let summary = common::run_first(&format!(
        r#"Scenario(
        name: "inactivity", seed: 1, horizon: "5s", window: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: ["1s"]), deadline: "4s")],
        dependency: (latency: Constant("{latency}"), transfer: "{transfer}"),
        policies: [(name: "t", stack: [(policy: Timeout((timeout: "250ms", starts: {starts})))])],
    )"#
    ));
    let c = &summary.classes[0];
    (c.outcomes.ok, c.outcomes.timeout, c.latency_ms.max)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1.0
}

#[test]
fn a_slow_body_times_out_from_its_first_byte_not_from_the_connection() {
    let (ok, timeout, max) = run("100ms", "300ms", "Connection");
    assert!((ok, timeout) == (0, 1) && close(max, 250.0), "{ok} {timeout} {max}");
    let (ok, timeout, max) = run("100ms", "300ms", "Inactivity");
    assert!((ok, timeout) == (0, 1) && close(max, 350.0), "{ok} {timeout} {max}");
}

#[test]
fn a_body_within_the_limit_of_its_first_byte_is_answered() {
    let (ok, timeout, _) = run("100ms", "200ms", "Connection");
    assert_eq!((ok, timeout), (0, 1));
    let (ok, timeout, max) = run("100ms", "200ms", "Inactivity");
    assert!((ok, timeout) == (1, 0) && close(max, 300.0), "{ok} {timeout} {max}");
}

#[test]
fn a_late_first_byte_times_out_alike() {
    for starts in ["Connection", "Inactivity"] {
        let (ok, timeout, max) = run("300ms", "100ms", starts);
        assert!((ok, timeout) == (0, 1) && close(max, 250.0), "{starts}: {ok} {timeout} {max}");
    }
}

#[test]
fn without_a_transfer_time_inactivity_is_the_connection_start() {
    for latency in ["200ms", "300ms"] {
        assert_eq!(run(latency, "0s", "Inactivity"), run(latency, "0s", "Connection"), "{latency}");
    }
    // An outer attempt timeout still caps the body's wait: 100 + 250 = 350 is past the 320 ms
    // attempt timeout, which fires first.
    let summary = common::run_first(
        r#"Scenario(
        name: "inactivity", seed: 1, horizon: "5s", window: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: ["1s"]), deadline: "4s")],
        dependency: (latency: Constant("100ms"), transfer: "300ms"),
        policies: [(name: "t", stack: [(policy: Timeout((timeout: "320ms"))),
            (policy: Timeout((timeout: "250ms", starts: Inactivity)))])],
    )"#,
    );
    let c = &summary.classes[0];
    assert_eq!(c.outcomes.timeout, 1);
    assert!(close(c.latency_ms.max, 320.0), "{}", c.latency_ms.max);
}
