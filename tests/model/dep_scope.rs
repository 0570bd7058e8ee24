//! Per-dependency pools and policy layers scoped to dependencies (issue 33). Expected values
//! are hand timelines over constant latencies: a pool of one connection serializes its
//! dependency's calls, a layer scoped to a dependency acts on its calls alone.

use std::path::Path;

use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, run_policy, run_policy_recorded};

use crate::common;

/// One class `checkout` whose plan `calls` goes to `pricing` and `inventory` (constant
/// latencies written in `pricing` and `inventory`), fleet pool `pool`, the extra fleet
/// fields `fleet`, arrivals `arrivals`, one policy set `stack`.
fn two_deps(arrivals: &str, calls: &str, fleet: &str, pricing: &str, inventory: &str, stack: &str) -> String {
    format!(
        r#"Scenario(
    name: "scope", horizon: "2090ms", warmup: "0s", seed: 3,
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "10s"){fleet}),
    classes: [(name: "checkout", arrivals: {arrivals}, deadline: "1s", calls: {calls})],
    dependencies: [
        (name: "pricing", {pricing}),
        (name: "inventory", {inventory}),
    ],
    policies: [(name: "p", stack: [{stack}])],
)"#
    )
}

fn records(text: &str) -> Records {
    let s = common::scenario(text);
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_policy_recorded(&m, 0, RunOptions::default()).expect("runs").1
}

/// Per dependency (0 pricing, 1 inventory), the call records' service starts (ms), in order.
fn starts(r: &Records, dep: u16) -> Vec<u64> {
    let mut v: Vec<u64> = r.calls.iter().filter(|c| c.dependency == dep).map(|c| c.start / 1_000_000).collect();
    v.sort_unstable();
    v
}

#[test]
fn a_dependency_pool_of_one_serializes_its_calls_and_leaves_the_others_alone() {
    // Two checkouts at 1 s, each calling pricing (20 ms) and inventory (10 ms) at once.
    // pricing has a pool of one: the second pricing call waits for the first, 20 ms.
    // inventory shares the fleet pool (100 connections): neither of its calls waits.
    let plan = r#"[Parallel(calls: [Call("pricing"), Call("inventory")])]"#;
    let text = |fleet_pool: &str| {
        two_deps(
            r#"Scripted(times: ["1s", "1s"])"#,
            plan,
            r#", pools: [(dependency: "pricing", max_connections: 1)]"#,
            r#"latency: Constant("20ms")"#,
            r#"latency: Constant("10ms")"#,
            "",
        )
        .replace("max_connections: 100,", &format!("max_connections: {fleet_pool},"))
    };
    let r = records(&text("100"));
    assert_eq!(starts(&r, 0), [1000, 1020], "pricing: the second call waits the first's 20 ms");
    assert_eq!(starts(&r, 1), [1000, 1000], "inventory: no wait");
    let s = common::run_first(&text("100"));
    // The first checkout takes max(20, 10) = 20 ms, the second 20 + 20 = 40 ms.
    assert_eq!((s.classes[0].latency_ms.max, s.classes[0].latency_ms.mean), (40.0, 30.0));
    // A fleet pool of one now holds inventory's calls alone: its second call waits 10 ms,
    // while pricing's own pool is as before.
    let r = records(&text("1"));
    assert_eq!(starts(&r, 0), [1000, 1020], "pricing keeps its own pool");
    assert_eq!(starts(&r, 1), [1000, 1010], "inventory waits for the fleet pool's one connection");
}

/// Pricing always fails after 20 ms, inventory always answers in 10 ms; checkouts every
/// 100 ms from 0 to 2 s (21; the last is done by the 2.09 s horizon), pricing optional (a failure degrades the answer at no cost).
fn breaker(scope: &str) -> String {
    two_deps(
        r#"Periodic(rate_per_s: 10)"#,
        r#"[Optional(dependency: "pricing"), Call("inventory")]"#,
        "",
        r#"latency: Constant("20ms"), error_rate: Constant(1.0)"#,
        r#"latency: Constant("10ms")"#,
        &format!(r#"(policy: ConsecutiveBreaker((failures: 5, break_duration: "100s")){scope})"#),
    )
}

#[test]
fn a_breaker_scoped_to_pricing_opens_on_its_failures_while_inventory_keeps_flowing() {
    // Scoped to pricing, the breaker counts pricing's five failures in a row and opens:
    // pricing is called 5 times, then refused at once; inventory is called by every checkout.
    let r = records(&breaker(r#", dependencies: ["pricing"]"#));
    assert_eq!(r.requests.len(), 21);
    assert_eq!(starts(&r, 0).len(), 5, "pricing: five calls, then the breaker refuses");
    assert_eq!(starts(&r, 1).len(), 21, "inventory: every checkout's call");
    let s = common::run_first(&breaker(r#", dependencies: ["pricing"]"#));
    let c = &s.classes[0];
    assert_eq!((c.outcomes.fallback, c.outcomes.ok), (21, 0), "every answer degraded, none failed");
    // 20 + 10 ms while pricing is called, 0 + 10 ms once its breaker is open.
    assert_eq!(c.latency_ms.max, 30.0);
    assert!((c.latency_ms.mean - (5.0 * 30.0 + 16.0 * 10.0) / 21.0).abs() < 1e-9, "{}", c.latency_ms.mean);
    // Unscoped, the same breaker also counts inventory's successes, which reset the count
    // after each pricing failure: it never opens and pricing is called by every checkout.
    let r = records(&breaker(""));
    assert_eq!(starts(&r, 0).len(), 21);
    // Scoped to inventory, which never fails, it never opens either.
    let r = records(&breaker(r#", dependencies: ["inventory"]"#));
    assert_eq!(starts(&r, 0).len(), 21);
}

/// Both dependencies answer in 50 ms; a 20 ms `Timeout` scoped to `dep`; pricing optional.
fn timeout(dep: &str) -> String {
    two_deps(
        r#"Periodic(rate_per_s: 10)"#,
        r#"[Optional(dependency: "pricing"), Call("inventory")]"#,
        "",
        r#"latency: Constant("50ms")"#,
        r#"latency: Constant("50ms")"#,
        &format!(r#"(policy: Timeout((timeout: "20ms")), dependencies: ["{dep}"])"#),
    )
}

#[test]
fn a_timeout_scoped_to_one_dependency_does_not_bound_the_other() {
    // On pricing: pricing is cut at 20 ms (a degraded answer), inventory runs its 50 ms:
    // every checkout answers a fallback at 70 ms.
    let c = &common::run_first(&timeout("pricing")).classes[0];
    assert_eq!((c.outcomes.fallback, c.outcomes.error, c.outcomes.timeout), (21, 0, 0));
    assert_eq!((c.latency_ms.mean, c.latency_ms.max), (70.0, 70.0));
    // On inventory: pricing runs its 50 ms, inventory is cut at 20 ms: every checkout times
    // out at 70 ms.
    let c = &common::run_first(&timeout("inventory")).classes[0];
    assert_eq!((c.outcomes.fallback, c.outcomes.ok), (0, 0));
    assert_eq!(c.outcomes.timeout, 21);
    assert_eq!((c.latency_ms.mean, c.latency_ms.max), (70.0, 70.0));
}

/// Small pools of their own, layers scoped to each dependency (a retry and a breaker on
/// pricing, a timeout on inventory, a limiter on payment, a hedge on inventory), an unscoped
/// limiter for one class, two instances and a restart, over drawn latencies at a load that
/// fills the pools: the world's recount (every window tick in this profile) holds, and every
/// request is counted once.
#[test]
fn pools_and_scoped_layers_keep_every_request_counted_once_under_load() {
    let text = r#"Scenario(
    name: "busy", horizon: "20s", warmup: "0s", seed: 11,
    fleet: (instances: 2, workers: (slots: 40, queue: 20), pool: (max_connections: 4, acquire_timeout: "30ms"),
            pools: [(dependency: "pricing", max_connections: 2, acquire_timeout: "20ms"), (dependency: "payment", max_connections: 3)],
            restarts: [(at: "7s", instances: [1])]),
    classes: [
        (name: "checkout", arrivals: Poisson(rate_per_s: 150), deadline: "300ms",
         calls: [Parallel(calls: [Call("inventory"), Optional(dependency: "pricing", cost: "1ms")]), Call("payment")]),
        (name: "browse", arrivals: Poisson(rate_per_s: 100), deadline: "200ms",
         calls: [Parallel(join: First, calls: [Call("pricing"), Call("inventory")])]),
    ],
    dependencies: [
        (name: "inventory", latency: Exponential(mean: "15ms")),
        (name: "pricing", latency: Exponential(mean: "25ms"), error_rate: Constant(0.2)),
        (name: "payment", latency: Exponential(mean: "20ms")),
    ],
    policies: [
        (name: "scoped", stack: [
            (policy: Retry((max_attempts: 3, backoff: "5ms")), dependencies: ["pricing"]),
            (policy: ConsecutiveBreaker((failures: 3, break_duration: "200ms")), dependencies: ["pricing"]),
            (policy: Timeout((timeout: "40ms")), dependencies: ["inventory"]),
            (policy: Hedge((delay: Some("20ms"))), dependencies: ["inventory"]),
            (policy: Limiter((permits: 2)), dependencies: ["payment"]),
            (policy: Limiter((permits: 10)), classes: ["browse"]),
        ]),
        (name: "unscoped", stack: [(policy: Timeout((timeout: "40ms")))]),
    ],
)"#;
    let s = common::scenario(text);
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    for policy in 0..s.policies.len() {
        let r = run_policy(&m, policy, RunOptions::default()).expect("runs");
        let sum = &r.summary;
        // Every arrival ends under one outcome or is still in flight (calls are no requests).
        let finished: u64 = sum.classes.iter().map(|c| c.outcomes.total()).sum();
        assert_eq!(r.requests, finished + sum.in_flight_at_end, "{}", sum.policy);
        assert!(r.requests > 4000, "{}: {}", sum.policy, r.requests);
        assert!(sum.resources.pool_waiting_mean > 0.0, "{}: the pools fill", sum.policy);
    }
}
