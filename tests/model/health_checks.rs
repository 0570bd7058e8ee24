//! HAProxy's active health checks of the dependency's replicas (`replicas.health_check`,
//! `model/health.rs`), worked by hand from HAProxy 3.5-dev's `src/check.c`
//! (`set_server_check_status`: the health counter; `check_notify_failure` /
//! `check_notify_success`: down at 0, up from `rise`), `src/server.c` (a server starts at
//! health `rise`) and `start_check_task` (replica r of n first checked at `inter x r / n`; the
//! next check `inter` after one ends).
//!
//! Two replicas, round robin, 100 ms answers, checks `inter 2s fall 3 rise 2`, `timeout
//! check 500ms`. Replica 1 is slowed x10 (1 s) from 5 s to 15 s, then x2 (200 ms) to 30 s.
//! Its checks: 1.0-1.1 pass (health 4), 3.1-3.2 pass, 5.2-5.7 timed out (3), 7.7-8.2 (2),
//! 10.2-10.7 (0: down at 10.7, within 5 s + 0.1 s + fall x (inter + timeout) = 12.6 s),
//! 12.7-13.2 fails, 15.2-15.4 passes (1), 17.4-17.6 passes (up at 17.6, rise x (inter +
//! answer) after the last failed check ended). Replica 0's checks always pass.

use crate::common;

/// The slowest answer, in ms, of requests at `times` (round robin from replica 0).
fn slowest(times: &str, checks: bool) -> (u64, f64) {
    let health = if checks { r#", health_check: Some((inter: "2s", fall: 3, rise: 2, timeout: "500ms"))"# } else { "" };
    let summary = common::run_first(&format!(
        r#"Scenario(
        name: "health", seed: 1, horizon: "30s", window: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: [{times}]), deadline: "5s")],
        dependency: (latency: Constant("100ms"), replicas: (count: 2, balancing: RoundRobin,
            slow: [(replica: 1, start: "5s", end: "15s", factor: 10.0), (replica: 1, start: "15s", end: "30s", factor: 2.0)]{health})),
        policies: [(name: "p", stack: [])],
    )"#
    ));
    let c = &summary.classes[0];
    (c.outcomes.ok, c.latency_ms.max)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1.0
}

#[test]
fn a_replica_stays_in_the_balancing_until_its_third_failed_check_ends() {
    // Two requests just before 10.7: replica 0, then replica 1, still up (health 2), 1 s.
    let (ok, max) = slowest(r#""10.6s", "10.65s""#, true);
    assert!(ok == 2 && close(max, 1000.0), "{ok} {max}");
    // From 10.7 replica 1 is down: both go to replica 0.
    let (ok, max) = slowest(r#""10.7s", "10.75s""#, true);
    assert!(ok == 2 && close(max, 100.0), "{ok} {max}");
    // Without checks the second goes to the slow replica.
    let (_, max) = slowest(r#""10.7s", "10.75s""#, false);
    assert!(close(max, 1000.0), "{max}");
}

#[test]
fn a_down_replica_comes_back_after_rise_passed_checks() {
    // One passed check (15.2-15.4) is not enough: still down at 17.5.
    let (ok, max) = slowest(r#""17.5s", "17.55s""#, true);
    assert!(ok == 2 && close(max, 100.0), "{ok} {max}");
    // The second ends at 17.6: replica 1 (200 ms now) takes the second request.
    let (ok, max) = slowest(r#""17.6s", "17.65s""#, true);
    assert!(ok == 2 && close(max, 200.0), "{ok} {max}");
}

#[test]
fn with_every_replica_down_a_call_fails_at_once() {
    // One replica slowed x10 from 5 s: checks 0-0.1, 2.1-2.2, 4.2-4.3 pass, 6.3-6.8,
    // 8.8-9.3, 11.3-11.8 fail: down at 11.8. A request at 12 s gets a 503 at once (HAProxy:
    // no server available), where without checks it waits its 1 s answer.
    let run = |health: &str| {
        let summary = common::run_first(&format!(
            r#"Scenario(
            name: "health", seed: 1, horizon: "30s", window: "5s",
            fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
            classes: [(name: "api", arrivals: Scripted(times: ["12s"]), deadline: "5s")],
            dependency: (latency: Constant("100ms"), replicas: (count: 1, balancing: RoundRobin,
                slow: [(replica: 0, start: "5s", end: "20s", factor: 10.0)]{health})),
            policies: [(name: "p", stack: [])],
        )"#
        ));
        summary.classes[0].clone()
    };
    let c = run(r#", health_check: Some((fall: 3, rise: 2, timeout: "500ms"))"#);
    assert_eq!((c.outcomes.ok, c.outcomes.error), (0, 1));
    assert!(close(c.latency_failed_ms.max, 0.0), "{}", c.latency_failed_ms.max);
    let c = run("");
    assert_eq!((c.outcomes.ok, c.outcomes.error), (1, 0));
    assert!(close(c.latency_ms.max, 1000.0), "{}", c.latency_ms.max);
}

#[test]
fn bad_health_check_values_are_refused_at_their_line() {
    for (check, field) in [("fall: 0", "fall"), ("rise: 0", "rise"), (r#"inter: "0s""#, "inter")] {
        let text = format!(
            r#"Scenario(
            name: "health", seed: 1, horizon: "10s",
            fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
            classes: [(name: "api", arrivals: Scripted(times: ["1s"]), deadline: "5s")],
            dependency: (latency: Constant("100ms"), replicas: (count: 2, balancing: RoundRobin,
                health_check: Some(({check})))),
            policies: [(name: "p", stack: [])],
        )"#
        );
        let err = brownout::scenario::load_text(std::path::Path::new("h.ron"), &text).unwrap_err().to_string();
        assert!(err.contains(&format!("health_check.{field}")), "{err}");
        assert!(err.starts_with("h.ron:6:"), "{err}");
    }
}
