//! What R02 could not test: fleet-wide state, partitions, replicas, restarts, priority and
//! LIFO queues, deadline shedding and users who reload. Expected values are worked out by
//! hand in the comments.

use crate::common::run_text as run;

use brownout::metrics::summary::{RunSummary, ScenarioSummary};

fn policy<'a>(s: &'a ScenarioSummary, name: &str) -> &'a RunSummary {
    s.runs.iter().find(|r| r.policy == name).unwrap()
}

fn every_10ms(n: usize) -> String {
    (0..n).map(|k| format!("\"{}ms\"", k * 10)).collect::<Vec<_>>().join(", ")
}

#[test]
fn fleet_wide_breaker_stops_the_fleet_after_n_failures_not_n_per_instance() {
    // 20 instances, round robin, the dependency down, a request every 10 ms, a breaker that
    // opens after 3 consecutive failures for an hour. Per instance: each of the 20 needs its
    // own 3 failures, so 60 calls. Fleet-wide with no delay: 3 calls. Fleet-wide with 25 ms
    // propagation: failures made at 0, 10, 20 ms reach the store at 25, 35, 45 ms; calls at
    // 30 and 40 ms still pass; from 50 ms on it is open: 5 calls.
    let text = format!(
        r#"Scenario(
        name: "scope", horizon: "3s",
        fleet: (instances: 20, workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "1s")],
        dependency: (latency: Constant("0ms"), modes: [(at: "0s", mode: Unavailable)]),
        policies: [
            (name: "per-instance", stack: [(policy: ConsecutiveBreaker((failures: 3, break_duration: "1h")))]),
            (name: "fleet", stack: [(policy: ConsecutiveBreaker((failures: 3, break_duration: "1h")), scope: Fleet(propagation: "0ms"))]),
            (name: "fleet-25ms", stack: [(policy: ConsecutiveBreaker((failures: 3, break_duration: "1h")), scope: Fleet(propagation: "25ms"))]),
        ],
    )"#,
        every_10ms(200)
    );
    let s = run(&text);
    assert_eq!(policy(&s, "per-instance").dependency.calls, 60);
    assert_eq!(policy(&s, "fleet").dependency.calls, 3);
    assert_eq!(policy(&s, "fleet-25ms").dependency.calls, 5);
    // Every instance reports the shared breaker open.
    let b = policy(&s, "fleet").breaker.clone().unwrap();
    assert_eq!(b.transitions, 20, "one closed->open transition seen by each of 20 instances");
}

const PARTITION: &str = r#"Scenario(
    name: "partition", horizon: "30s", seed: 4,
    fleet: (instances: 4, workers: (slots: 200), pool: (max_connections: 100, acquire_timeout: "1s")
            PARTITIONS),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 200.0), deadline: "1s")],
    dependency: (latency: LogNormal(median: "50ms", sigma: 0.5)),
    policies: [(name: "none")],
)"#;

#[test]
fn a_partition_of_two_instances_leaves_the_others_untouched() {
    let whole = run(&PARTITION.replace("PARTITIONS", ""));
    let cut = run(&PARTITION
        .replace("PARTITIONS", r#", partitions: [(start: "10s", end: "20s", instances: [0, 1], mode: FailFast)]"#));
    let (w, c) = (&whole.runs[0].per_instance, &cut.runs[0].per_instance);
    // Pools are per instance and the dependency has no capacity limit: instances 2 and 3
    // see exactly the same requests with the same latencies.
    assert_eq!(w[2], c[2]);
    assert_eq!(w[3], c[3]);
    assert_eq!(w[0].error + w[1].error, 0);
    // Instances 0 and 1 get half of 200/s for 10 s: ~1,000 fast failures (Poisson sd ~32).
    let errors = (c[0].error + c[1].error) as f64;
    assert!((errors - 1000.0).abs() < 160.0, "{errors}");
}

#[test]
fn round_robin_sends_a_quarter_of_calls_to_the_slow_replica() {
    // One instance, four replicas, replica 0 ten times slower (100 ms instead of 10 ms).
    // Round robin: exactly 1 call in 4 is slow, so the dependency's mean latency is
    // (100 + 3 * 10) / 4 = 32.5 ms. Least-outstanding steers calls away from the slow one.
    let text = r#"Scenario(
        name: "replicas", horizon: "40s",
        fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Scripted(times: [TIMES]), deadline: "1s")],
        dependency: (latency: Constant("10ms"),
                     replicas: (count: 4, balancing: BALANCING, slow: [(replica: 0, start: "0s", end: "1h", factor: 10.0)])),
        policies: [(name: "none")],
    )"#;
    let times = (0..400).map(|k| format!("\"{}ms\"", k * 5)).collect::<Vec<_>>().join(", ");
    let rr = run(&text.replace("TIMES", &times).replace("BALANCING", "RoundRobin"));
    let d = &rr.runs[0].dependency;
    assert_eq!(d.calls, 400);
    assert!((d.latency_ms.mean - 32.5).abs() < 1e-9, "{}", d.latency_ms.mean);
    let lo = run(&text.replace("TIMES", &times).replace("BALANCING", "LeastOutstanding"));
    // A call every 5 ms: the slow replica holds ~20 outstanding, the others ~2, so it gets
    // far fewer than a quarter of the calls.
    assert!(lo.runs[0].dependency.latency_ms.mean < 20.0, "{}", lo.runs[0].dependency.latency_ms.mean);
}

/// Four requests, one per class, through a one-permit limiter with a queue; each call takes
/// 100 ms. Latency per class reveals the service order.
fn queue_order(order: &str) -> Vec<f64> {
    let text = format!(
        r#"Scenario(
        name: "order", horizon: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [
            (name: "a", arrivals: Scripted(times: ["0ms"]), deadline: "5s"),
            (name: "b", arrivals: Scripted(times: ["1ms"]), deadline: "5s"),
            (name: "c", arrivals: Scripted(times: ["2ms"]), deadline: "5s", priority: 1),
            (name: "d", arrivals: Scripted(times: ["3ms"]), deadline: "5s"),
        ],
        dependency: (latency: Constant("100ms")),
        policies: [(name: "p", stack: [(policy: Limiter((permits: 1, queue: 10, max_wait: "5s", order: {order})))])],
    )"#
    );
    run(&text).runs[0].classes.iter().map(|c| c.latency_ms.max).collect()
}

#[test]
fn fifo_lifo_and_priority_queues_serve_in_their_order() {
    // a runs at once (done at 100 ms). FIFO then b, c, d: done at 200, 300, 400.
    assert_eq!(queue_order("Fifo"), vec![100.0, 199.0, 298.0, 397.0]);
    // LIFO: the freshest first: d (200), c (300), b (400).
    assert_eq!(queue_order("Lifo"), vec![100.0, 399.0, 298.0, 197.0]);
    // Priority: c (priority 1) first (200), then b (300), d (400).
    assert_eq!(queue_order("Priority"), vec![100.0, 299.0, 198.0, 397.0]);
}

#[test]
fn deadline_shedding_drops_the_request_least_likely_to_make_it() {
    // One permit, queue of one. a runs (0-100 ms). b waits (deadline 5 s, due at 5.001 s).
    // c arrives at 2 ms with deadline 8 s (due 8.002 s): the queue is full and b has the
    // least budget left, so b is shed and c waits.
    let text = r#"Scenario(
        name: "shed", horizon: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [
            (name: "a", arrivals: Scripted(times: ["0ms"]), deadline: "10s"),
            (name: "b", arrivals: Scripted(times: ["1ms"]), deadline: "5s"),
            (name: "c", arrivals: Scripted(times: ["2ms"]), deadline: "8s"),
        ],
        dependency: (latency: Constant("100ms")),
        policies: [(name: "p", stack: [(policy: Limiter((permits: 1, queue: 1, max_wait: "5s", shed_by_deadline: true)))])],
    )"#;
    let s = run(text);
    let c = &s.runs[0].classes;
    assert_eq!((c[0].outcomes.ok, c[1].outcomes.rejected, c[2].outcomes.ok), (1, 1, 1));
    assert_eq!(c[2].latency_ms.max, 198.0);
}

#[test]
fn a_restart_loses_breaker_state_unless_persistent() {
    // One instance, dependency down, a request every 10 ms, breaker after 3 failures for an
    // hour. It opens after 3 calls. A restart at 1 s forgets that: 3 more calls re-open it.
    let text = format!(
        r#"Scenario(
        name: "restart", horizon: "2s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s"),
                restarts: [(at: "1005ms", instances: [0], persistent_policies: PERSIST)]),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "1s")],
        dependency: (latency: Constant("0ms"), modes: [(at: "0s", mode: Unavailable)]),
        policies: [(name: "b", stack: [(policy: ConsecutiveBreaker((failures: 3, break_duration: "1h")))])],
    )"#,
        every_10ms(200)
    );
    let lost = run(&text.replace("PERSIST", "false"));
    let kept = run(&text.replace("PERSIST", "true"));
    assert_eq!(lost.runs[0].dependency.calls, 6);
    assert_eq!(kept.runs[0].dependency.calls, 3);
}

#[test]
fn a_restart_empties_the_cache_so_fallbacks_fail() {
    // Two instances with pre-warmed caches; the dependency is down from 5 s. Instance 0
    // restarts at 10 s. Without a persistent cache its later requests have no fallback.
    let text = r#"Scenario(
        name: "cold", horizon: "20s",
        fleet: (instances: 2, workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s"),
                restarts: [(at: "10s", instances: [0], persistent_cache: PERSIST)]),
        classes: [(name: "browse", arrivals: Poisson(rate_per_s: 50.0), deadline: "1s", fallback: OnRefusalOrFailure)],
        dependency: (latency: Constant("0ms"), modes: [(at: "5s", mode: Unavailable)]),
        catalogue: (items: 10, changes_per_hour: 0.0),
        policies: [(name: "none")],
    )"#;
    let lost = run(&text.replace("PERSIST", "false"));
    let kept = run(&text.replace("PERSIST", "true"));
    let (l, k) = (&lost.runs[0].per_instance, &kept.runs[0].per_instance);
    assert_eq!(k[0].error + k[1].error, 0, "a warm cache answers every failure");
    // Instance 0 gets ~25/s for 10 s after the restart: ~250 errors (Poisson sd ~16).
    assert!((l[0].error as f64 - 250.0).abs() < 80.0, "{}", l[0].error);
    assert_eq!(l[1], k[1], "instance 1 is untouched");
}

#[test]
fn impatient_users_reload_and_add_load() {
    // Ten requests at 0..9 s; every answer takes 2 s, longer than the 1 s patience, and every
    // user reloads once (max_reloads 1): 20 requests in all, 20 dependency calls.
    let times = (0..10).map(|k| format!("\"{k}s\"")).collect::<Vec<_>>().join(", ");
    let text = format!(
        r#"Scenario(
        name: "reload", horizon: "30s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
        classes: [(name: "page", arrivals: Scripted(times: [{times}]), deadline: "1s",
                   reload: (patience: "1s", probability: 1.0, max_reloads: 1))],
        dependency: (latency: Constant("2s")),
        policies: [(name: "none")],
    )"#
    );
    let s = run(&text);
    assert_eq!(s.runs[0].classes[0].requests, 20);
    assert_eq!(s.runs[0].dependency.calls, 20);
}

#[test]
fn hedging_after_a_fixed_delay_takes_the_first_answer() {
    // Two replicas in round robin; replica 0 answers in 1 s, replica 1 in 10 ms. One
    // request a second, so calls never overlap. Without hedging requests alternate between
    // 1,000 ms and 10 ms. With a 50 ms hedge, the primary always lands on replica 0 (the
    // hedge takes the next round-robin slot), the hedge on replica 1 answers at 60 ms, and
    // each request makes two calls.
    let times = (0..10).map(|k| format!("\"{k}s\"")).collect::<Vec<_>>().join(", ");
    let text = format!(
        r#"Scenario(
        name: "hedge", horizon: "20s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Scripted(times: [{times}]), deadline: "5s")],
        dependency: (latency: Constant("10ms"),
                     replicas: (count: 2, balancing: RoundRobin, slow: [(replica: 0, start: "0s", end: "1h", factor: 100.0)])),
        policies: [
            (name: "plain"),
            (name: "hedged", stack: [(policy: Hedge((delay: "50ms")))]),
        ],
    )"#
    );
    let s = run(&text);
    let plain = &policy(&s, "plain").classes[0].latency_ms;
    assert_eq!((plain.mean, plain.max), (505.0, 1000.0));
    let h = policy(&s, "hedged");
    assert_eq!(h.classes[0].latency_ms.max, 60.0);
    assert_eq!(h.classes[0].latency_ms.p50, 60.0);
    assert_eq!(h.dependency.calls, 20);
    assert_eq!(h.dependency.abandoned, 10, "every slow primary is abandoned");
}

#[test]
fn a_persistent_limiter_gets_its_permits_back_from_requests_lost_in_a_crash() {
    // One permit, kept outside the process. A call is in flight (1 s latency) when the
    // instance restarts at 0.5 s: the request dies, and the permit it held must come back,
    // or every later request would be refused. Requests at 2 s and 4 s each get the permit.
    let text = r#"Scenario(
        name: "crash", horizon: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s"),
                restarts: [(at: "500ms", instances: [0])]),
        classes: [(name: "api", arrivals: Scripted(times: ["0s", "2s", "4s"]), deadline: "5s")],
        dependency: (latency: Constant("1s")),
        policies: [(name: "kept", stack: [(policy: Limiter((permits: 1)), persistent: true)])],
    )"#;
    let s = run(text);
    let o = s.runs[0].classes[0].outcomes;
    assert_eq!((o.error, o.ok, o.rejected), (1, 2, 0));
}
