//! Envoy cluster circuit breakers (`EnvoyThresholds`) and outlier detection over the
//! replicas, in whole runs against hand-computed timelines.

use crate::common::{run_first as run, scenario as load};

use std::path::Path;

use brownout::metrics::summary::RunSummary;
use brownout::model::{Model, RunOptions};
use brownout::runner::run_all;
use brownout::scenario::{parse, validate};

/// `classes` and `stack` in a one-instance scenario with ample slots and pool; the
/// dependency answers in 100 ms, with errors at `error_rate`.
fn scenario(classes: &str, error_rate: f64, stack: &str) -> String {
    format!(
        r#"Scenario(
        name: "envoy", horizon: "10s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
        classes: [{classes}],
        dependency: (latency: Constant("100ms"), error_rate: Constant({error_rate:?})),
        policies: [(name: "p", stack: [{stack}])],
    )"#
    )
}

const FIVE: &str = r#"(name: "api", arrivals: Scripted(times: ["0ms", "1ms", "2ms", "3ms", "4ms"]), deadline: "10s")"#;

#[test]
fn connections_bound_the_active_requests_and_the_rest_queue_up_to_max_pending() {
    // Two connections, one pending slot: requests at 0 and 1 ms go at once (done 100 and
    // 101 ms); the one at 2 ms waits for the first connection free (100 ms) and is done at
    // 200 ms (198 ms after it arrived); those at 3 and 4 ms overflow (503, a refusal).
    let t = r#"(policy: EnvoyThresholds((thresholds: [(priority: Default, max_connections: 2,
        max_pending_requests: 1, max_requests: 2, max_retries: 3)])))"#;
    let r = run(&scenario(FIVE, 0.0, t));
    let c = &r.classes[0];
    assert_eq!((c.outcomes.ok, c.outcomes.rejected), (3, 2));
    assert!((c.latency_ms.max - 198.0).abs() < 1e-6, "{}", c.latency_ms.max);
}

#[test]
fn max_requests_below_max_connections_overflows_at_once_without_queueing() {
    // Four connections but two requests: the third request finds a free connection and
    // overflows on attach (upstream_rq_active_overflow); nothing ever pends.
    let t = r#"(policy: EnvoyThresholds((thresholds: [(max_connections: 4, max_pending_requests: 10,
        max_requests: 2)])))"#;
    let r = run(&scenario(FIVE, 0.0, t));
    let c = &r.classes[0];
    assert_eq!((c.outcomes.ok, c.outcomes.rejected), (2, 3));
    assert!((c.latency_ms.max - 100.0).abs() < 1e-6, "{}", c.latency_ms.max);
}

#[test]
fn max_retries_bounds_the_retries_outstanding() {
    // Every call fails after 100 ms; requests at 0, 1, 2 ms. Request 1 fails at 100 ms and
    // retries at once (retry outstanding: 1, until it fails at 200 ms); requests 2 and 3
    // fail at 101 and 102 ms with one retry outstanding: not retried. 4 calls for 3
    // requests. With Envoy's default 3, every request retries: 6 calls.
    let three = r#"(name: "api", arrivals: Scripted(times: ["0ms", "1ms", "2ms"]), deadline: "10s")"#;
    let stack = |max: u32| {
        format!(
            r#"(policy: Retry((max_attempts: 2))), (policy: EnvoyThresholds((thresholds: [(max_retries: {max})])))"#
        )
    };
    let one = run(&scenario(three, 1.0, &stack(1)));
    assert_eq!(one.classes[0].outcomes.error, 3);
    assert!((one.amplification - 4.0 / 3.0).abs() < 1e-9, "{}", one.amplification);
    let default = run(&scenario(three, 1.0, &stack(3)));
    assert!((default.amplification - 2.0).abs() < 1e-9, "{}", default.amplification);
}

#[test]
fn each_priority_has_its_own_limits_and_a_missing_one_gets_envoys_defaults() {
    // Default is limited to one request and no pending; High (class priority 1) gets
    // 1024 / 1024 / 1024 / 3. Three requests of each class at 0, 1, 2 ms.
    let classes = r#"(name: "bulk", arrivals: Scripted(times: ["0ms", "1ms", "2ms"]), deadline: "10s"),
        (name: "vip", priority: 1, arrivals: Scripted(times: ["0ms", "1ms", "2ms"]), deadline: "10s")"#;
    let t = r#"(policy: EnvoyThresholds((thresholds: [(priority: Default, max_connections: 1,
        max_pending_requests: 0, max_requests: 1)])))"#;
    let r = run(&scenario(classes, 0.0, t));
    let (bulk, vip) = (&r.classes[0], &r.classes[1]);
    assert_eq!((bulk.outcomes.ok, bulk.outcomes.rejected), (1, 2));
    assert_eq!((vip.outcomes.ok, vip.outcomes.rejected), (3, 0));
}

#[test]
fn two_entries_for_one_priority_are_refused_naming_the_layer() {
    let t = r#"(policy: EnvoyThresholds((thresholds: [(priority: High), (priority: High)])))"#;
    let s = parse(Path::new("inline.ron"), &scenario(FIVE, 0.0, t)).unwrap();
    let err = format!("{:?}", validate(&s).unwrap_err());
    assert!(err.contains("two entries for priority High"), "{err}");
}

#[test]
fn the_defaults_are_envoys() {
    let s = load(&scenario(FIVE, 0.0, "(policy: EnvoyThresholds(()))"));
    let written = load(&scenario(
        FIVE,
        0.0,
        r#"(policy: EnvoyThresholds((thresholds: [(priority: Default, max_connections: 1024,
        max_pending_requests: 1024, max_requests: 1024, max_retries: 3)])))"#,
    ));
    assert_eq!(s.policies[0].stack, written.policies[0].stack);
}

// ---- outlier detection -----------------------------------------------------------------

/// Ten replicas answering in 10 ms, round robin from replica 0, a 95 ms attempt timeout;
/// `slow` replicas answer in 1 s (every call to them times out). A request every 10 ms
/// from 1 ms (200 requests), so request i goes to replica i mod 10 until an ejection.
fn replicas(slow: &[u32], outlier: &str) -> RunSummary {
    let times: Vec<String> = (0..200).map(|i| format!("\"{}ms\"", 10 * i + 1)).collect();
    let slow: Vec<String> =
        slow.iter().map(|r| format!(r#"(replica: {r}, start: "0s", end: "10s", factor: 100.0)"#)).collect();
    run(&format!(
        r#"Scenario(
        name: "outlier", horizon: "3s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "10s")],
        dependency: (latency: Constant("10ms"),
            replicas: Some((count: 10, balancing: RoundRobin, slow: [{}], outlier_detection: {outlier}))),
        policies: [(name: "p", stack: [(policy: Timeout((timeout: "95ms")))])],
    )"#,
        times.join(", "),
        slow.join(", ")
    ))
}

#[test]
fn a_slow_replica_is_ejected_after_five_consecutive_timeouts() {
    // Without detection replica 0 takes requests 0, 10, ..., 190: 20 timeouts. With it,
    // the fifth timeout (request 40, at 401 + 95 = 496 ms) ejects it for 30 s: 5 timeouts.
    assert_eq!(replicas(&[0], "None").classes[0].outcomes.timeout, 20);
    assert_eq!(replicas(&[0], "Some(())").classes[0].outcomes.timeout, 5);
}

#[test]
fn max_ejection_percent_caps_the_ejected_replicas() {
    // Replicas 0 and 1 slow. Replica 0 is ejected at 496 ms; replica 1's fifth timeout
    // (request 41, at 506 ms) would make 2 of 10 = 20 % > 10 %: not ejected. The balancer
    // then cycles over replicas 1..9: replica 1 takes request 50 (cursor 50 is replica 0,
    // skipped) and every 9th after it, 50 + 9k <= 199: 17 more. Timeouts: 5 + 5 + 17 = 27.
    assert_eq!(replicas(&[0, 1], "Some(())").classes[0].outcomes.timeout, 27);
    // At 20 % both go: replica 1 is ejected at 506 ms, after request 50 (501 ms) went to it:
    // 5 + 6 = 11 timeouts.
    assert_eq!(replicas(&[0, 1], "Some((max_ejection_percent: 20))").classes[0].outcomes.timeout, 11);
}

#[test]
fn a_percentage_over_100_is_refused_naming_the_field() {
    let text = r#"Scenario(
        name: "outlier", horizon: "1s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 1.0), deadline: "1s")],
        dependency: (latency: Constant("1ms"),
            replicas: Some((count: 4, balancing: Random, outlier_detection: Some((max_ejection_percent: 101))))),
        policies: [(name: "p", stack: [])],
    )"#;
    let s = parse(Path::new("inline.ron"), text).unwrap();
    let err = format!("{:?}", validate(&s).unwrap_err());
    assert!(err.contains("replicas.outlier_detection.max_ejection_percent"), "{err}");
}

// ---- jitter from the replication's seed (issue 30 item 14) -------------------------------

/// An adaptive limiter whose only randomness is its jitter: scripted arrivals every 5 ms for
/// 20 s, a constant 40 ms dependency, no errors. Run at root seed `seed`.
fn jittered(stack: &str, seed: u64) -> String {
    let times: Vec<String> = (0..4000).map(|i| format!("\"{}ms\"", 5 * i)).collect();
    let text = format!(
        r#"Scenario(
        name: "jitter", horizon: "20s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "10s")],
        dependency: (latency: Constant("40ms")),
        policies: [(name: "p", stack: [{stack}])],
    )"#,
        times.join(", ")
    );
    let s = load(&text);
    let model = Model::build(&s, seed, Path::new(".")).unwrap();
    let run = run_all(&model, RunOptions::default(), false).unwrap().summary.runs.remove(0);
    serde_json::to_string(&run).unwrap()
}

/// The min_rtt windows of Envoy's gradient controller start `interval + jitter` apart, the
/// jitter drawn from the replication's seed (so replication intervals include its
/// variance): two root seeds give two trajectories, one seed always the same one.
#[test]
fn envoy_gradient_jitter_follows_the_replications_seed() {
    let g = r#"(policy: EnvoyGradient((concurrency_update_interval: "100ms",
        min_rtt_calc_interval: "1s", jitter: 50.0, request_count: 20)))"#;
    assert_eq!(jittered(g, 1), jittered(g, 1), "one seed, one trajectory");
    assert_ne!(jittered(g, 1), jittered(g, 2), "the jitter must come from the run's seed");
}
