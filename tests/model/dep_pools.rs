//! Pool saturation, connection waits and breaker state per dependency (issue 33), worked by
//! hand from docs/graphs.md's timelines over constant latencies: a pool of one connection
//! serializes its dependency's calls, and a breaker scoped to pricing opens on its fifth
//! failure in a row and stays open.

use brownout::metrics::summary::{DependencyFigures, RunSummary};

use crate::common;

/// One instance, checkout calling `calls` at `arrivals`; pricing and inventory with the
/// latencies written, the fleet pool of `fleet_pool` connections plus the extra fleet fields
/// `fleet`, one policy set `stack`. Horizon 2.09 s, no warm-up.
fn scenario(arrivals: &str, calls: &str, fleet_pool: u32, fleet: &str, pricing: &str, stack: &str) -> String {
    format!(
        r#"Scenario(
    name: "pools", horizon: "2090ms", warmup: "0s", seed: 3,
    fleet: (workers: (slots: 100), pool: (max_connections: {fleet_pool}, acquire_timeout: "10s"){fleet}),
    classes: [(name: "checkout", arrivals: {arrivals}, deadline: "1s", calls: {calls})],
    dependencies: [
        (name: "pricing", {pricing}),
        (name: "inventory", latency: Constant("10ms")),
    ],
    policies: [(name: "p", stack: [{stack}])],
)"#
    )
}

fn dep<'a>(r: &'a RunSummary, name: &str) -> &'a DependencyFigures {
    r.dependencies.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("no figures for {name}"))
}

/// The measured span, ms: the horizon, as there is no warm-up.
const SPAN_MS: f64 = 2090.0;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Two checkouts at 1 s, each calling pricing (20 ms) and inventory (10 ms) at once;
/// pricing has a pool of one connection of its own.
fn two_checkouts(fleet_pool: u32) -> RunSummary {
    common::run_first(&scenario(
        r#"Scripted(times: ["1s", "1s"])"#,
        r#"[Parallel(calls: [Call("pricing"), Call("inventory")])]"#,
        fleet_pool,
        r#", pools: [(dependency: "pricing", max_connections: 1)]"#,
        r#"latency: Constant("20ms")"#,
        "",
    ))
}

#[test]
fn a_pool_of_one_is_saturated_while_its_two_calls_run_one_after_the_other() {
    // pricing's pool of one: the first call holds it over [1000, 1020) ms, the second, which
    // waited 20 ms, over [1020, 1040): saturated 40 ms of the 2090 ms; waits 0 and 20 ms.
    let r = two_checkouts(100);
    let p = dep(&r, "pricing");
    assert!(close(p.pool_saturated_fraction, 40.0 / SPAN_MS), "{}", p.pool_saturated_fraction);
    assert!(close(p.pool_wait_ms_mean, 10.0), "{}", p.pool_wait_ms_mean);
    // inventory shares the fleet's hundred: two of them out at most, never all; no wait.
    let i = dep(&r, "inventory");
    assert_eq!((i.pool_saturated_fraction, i.pool_wait_ms_mean), (0.0, 0.0));
    // No breaker is scoped to either: no value.
    assert!(p.breaker_open_fraction.is_nan() && i.breaker_open_fraction.is_nan());

    // A fleet pool of one holds inventory's calls alone (pricing has its own): the first
    // over [1000, 1010), the second, after waiting 10 ms, over [1010, 1020): saturated
    // 20 ms; waits 0 and 10 ms. pricing's own pool is as before.
    let r = two_checkouts(1);
    let i = dep(&r, "inventory");
    assert!(close(i.pool_saturated_fraction, 20.0 / SPAN_MS), "{}", i.pool_saturated_fraction);
    assert!(close(i.pool_wait_ms_mean, 5.0), "{}", i.pool_wait_ms_mean);
    let p = dep(&r, "pricing");
    assert!(close(p.pool_saturated_fraction, 40.0 / SPAN_MS), "{}", p.pool_saturated_fraction);
}

#[test]
fn a_breaker_scoped_to_pricing_is_open_from_its_fifth_failure_to_the_horizon() {
    // Checkouts every 100 ms from 0; pricing always fails after 20 ms, the breaker scoped to
    // it opens on the fifth failure in a row (the checkout at 400 ms, failing at 420 ms) and
    // its break of 100 s outlasts the run: open over [420, 2090) ms of one instance.
    let r = common::run_first(&scenario(
        "Periodic(rate_per_s: 10)",
        r#"[Optional(dependency: "pricing"), Call("inventory")]"#,
        100,
        "",
        r#"latency: Constant("20ms"), error_rate: Constant(1.0)"#,
        r#"(policy: ConsecutiveBreaker((failures: 5, break_duration: "100s")), dependencies: ["pricing"])"#,
    ));
    let p = dep(&r, "pricing");
    assert!(close(p.breaker_open_fraction, (SPAN_MS - 420.0) / SPAN_MS), "{}", p.breaker_open_fraction);
    assert!(dep(&r, "inventory").breaker_open_fraction.is_nan(), "no breaker is scoped to inventory");
    // The fleet pool of 100 never fills.
    assert_eq!(p.pool_saturated_fraction, 0.0);
}
