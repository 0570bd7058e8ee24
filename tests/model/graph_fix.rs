//! Every dependency of a service graph treated alike (issue 33): what read only the first
//! dependency (or drew alike for all) now reads each one. Expected values are worked by hand
//! in each test's comments.

use std::collections::BTreeMap;
use std::path::Path;

use brownout::decide::feasible;
use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, run_policy_recorded};
use brownout::scenario::{load_text, phases_of};

use crate::common;

fn recorded(text: &str) -> Records {
    let s = common::scenario(text);
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_policy_recorded(&m, 0, RunOptions::default()).expect("runs").1
}

// ---- outlier detection draws per dependency -----------------------------------------------

/// Two identical dependencies `a` and `b`, called at once by every request (optional calls,
/// so neither failure cancels the other): four replicas each, round robin, replica r slowed
/// by a factor r + 1 (so a call's latency, (r + 1) ms, names its replica), every answer an
/// error, and Envoy outlier detection ejecting on each 5xx with probability `enforcing` %
/// (one replica at most, for 20 ms, returned at a 5 ms sweep).
fn outliers(enforcing: u32) -> Records {
    let dep = |name: &str| {
        format!(
            r#"(name: "{name}", latency: Constant("1ms"), error_rate: Constant(1.0),
            replicas: Some((count: 4, balancing: RoundRobin,
                slow: [(replica: 1, start: "0s", end: "10s", factor: 2.0),
                       (replica: 2, start: "0s", end: "10s", factor: 3.0),
                       (replica: 3, start: "0s", end: "10s", factor: 4.0)],
                outlier_detection: Some((consecutive_5xx: 1, interval: "5ms", base_ejection_time: "20ms",
                    max_ejection_percent: 25, enforcing_consecutive_5xx: {enforcing})))))"#
        )
    };
    recorded(&format!(
        r#"Scenario(
    name: "outliers", horizon: "2s", seed: 5,
    fleet: (instances: 1, workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Poisson(rate_per_s: 1000), deadline: "1s",
        calls: [Parallel(calls: [Optional(dependency: "a"), Optional(dependency: "b")])])],
    dependencies: [{}, {}],
    policies: [(name: "p", stack: [])],
)"#,
        dep("a"),
        dep("b")
    ))
}

/// The replica (latency in ms - 1) of each request's call to dependency `d`, by request key.
fn replicas(r: &Records, d: u16) -> BTreeMap<u64, u64> {
    r.calls.iter().filter(|c| c.dependency == d).map(|c| (c.key, c.latency / 1_000_000 - 1)).collect()
}

#[test]
fn two_dependencies_outlier_detectors_enforce_by_draws_of_their_own() {
    // Always enforcing, the detectors draw nothing: a and b see the same calls at the same
    // times, eject the same replicas, and every request goes to the same replica of each.
    let sure = outliers(100);
    let (a, b) = (replicas(&sure, 0), replicas(&sure, 1));
    assert!(a.len() > 1500, "{} calls", a.len());
    assert_eq!(a, b, "no draw, the same choices");
    // Ejections happen: round robin alone sends to replicas 0, 1, 2, 3, 0, ... in the order
    // the calls start; the balancer skips an ejected replica.
    let mut order: Vec<(u64, u64)> =
        sure.calls.iter().filter(|c| c.dependency == 0).map(|c| (c.start, c.latency)).collect();
    order.sort_unstable();
    let skips = order.windows(2).filter(|w| w[1].1 / 1_000_000 - 1 != (w[0].1 / 1_000_000) % 4).count();
    assert!(skips > 10, "{skips} skips in {} calls", order.len());
    // At 50 %, each detection asks its own draw: shared draws (one label for every
    // dependency) would eject alike again; drawn apart, the choices part ways.
    let half = outliers(50);
    let (a, b) = (replicas(&half, 0), replicas(&half, 1));
    assert_eq!(a.len(), b.len());
    let apart = a.iter().filter(|(k, r)| b.get(k) != Some(r)).count();
    assert!(apart > a.len() / 10, "only {apart} of {} requests chose differently", a.len());
}

// ---- derived phases over every dependency ---------------------------------------------------

/// `a` and `b` with the dependency fields `a_more` and `b_more`, one class calling both.
fn two_timelines(a_more: &str, b_more: &str) -> String {
    format!(
        r#"Scenario(
    name: "timelines", horizon: "60s", warmup: "0s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Poisson(rate_per_s: 1), deadline: "1s",
        calls: [Parallel(calls: [Call("a"), Call("b")])])],
    dependencies: [(name: "a", latency: Constant("10ms"){a_more}), (name: "b", latency: Constant("10ms"){b_more})],
    policies: [(name: "p", stack: [])],
)"#
    )
}

fn spans(text: &str) -> Vec<(String, u64, u64)> {
    phases_of(&common::scenario(text))
        .into_iter()
        .map(|p| (p.name, p.start / 1_000_000_000, p.end / 1_000_000_000))
        .collect()
}

#[test]
fn phases_are_derived_from_a_brownout_of_any_dependency() {
    // b browns out (ramp 10..15 s, hold to 35 s, back at 40 s); a is flat: the incident is b's.
    let brownout = r#", drift: Brownout(start: "10s", ramp: "5s", hold: "20s", peak: 5.0)"#;
    let want = |v: &[(&str, u64, u64)]| v.iter().map(|&(n, a, b)| (n.to_string(), a, b)).collect::<Vec<_>>();
    assert_eq!(
        spans(&two_timelines("", brownout)),
        want(&[("before", 0, 10), ("ramp", 10, 15), ("degraded", 15, 35), ("recovery", 35, 40), ("after", 40, 60)])
    );
    // And a is unavailable from 50 to 55 s: degraded runs from b's peak (15 s) to a's return
    // (55 s), which is after b's recovery ends (40 s), so there is no recovery phase.
    let down = r#", modes: [(at: "50s", mode: Unavailable), (at: "55s", mode: Healthy)]"#;
    assert_eq!(
        spans(&two_timelines(down, brownout)),
        want(&[("before", 0, 10), ("ramp", 10, 15), ("degraded", 15, 55), ("after", 55, 60)])
    );
}

// ---- decide's feasibility bounds per class plan ----------------------------------------------

/// A class with plan `calls` over `a` and `b` (dependency fields `a_more`, `b_more`, each
/// 10 ms constant before them), Poisson at 10/s over 10 s, a 1 s deadline, no fallback,
/// constrained to an in-time ratio of at least 0.99. The bound `decide` gives.
fn bound(calls: &str, a_more: &str, b_more: &str) -> (f64, String) {
    let text = format!(
        r#"Scenario(
    name: "bounds", horizon: "10s", warmup: "0s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Poisson(rate_per_s: 10), deadline: "1s", calls: {calls})],
    dependencies: [(name: "a", latency: Constant("10ms"){a_more}), (name: "b", latency: Constant("10ms"){b_more})],
    policies: [(name: "p", stack: [])],
    decide: (maximize: "c/in_time_ratio", subject_to: [(class: "c", metric: "in_time_ratio", op: Ge, value: 0.99)]),
)"#
    );
    let c = feasible::ceilings_at(&common::scenario(&text), Path::new(".")).expect("builds");
    assert_eq!(c.len(), 1, "{c:?}");
    (c[0].best, c[0].why.clone())
}

#[test]
fn a_plan_is_bounded_by_each_dependency_it_cannot_do_without() {
    // a fails half its calls, b a quarter; a call is in time when it succeeds (10 ms << 1 s).
    let (a, b) = (", error_rate: Constant(0.5)", ", error_rate: Constant(0.25)");
    let near = |(got, why): (f64, String), want: f64| assert!((got - want).abs() < 1e-9, "{got} vs {want}: {why}");
    // Both required, in sequence: the request needs both, min(0.5, 0.75) = 0.5.
    near(bound(r#"[Call("a"), Call("b")]"#, a, b), 0.5);
    // b first and a after it: a's later window has the same constant rate, 0.5.
    near(bound(r#"[Call("b"), Call("a")]"#, a, b), 0.5);
    // First of the two: one success is enough, max(0.5, 0.75) = 0.75.
    near(bound(r#"[Parallel(join: First, calls: [Call("a"), Call("b")])]"#, a, b), 0.75);
    // a optional (its failure degrades, bounding nothing): b alone, 0.75, in a step or in a
    // group of All.
    near(bound(r#"[Call("b"), Optional(dependency: "a")]"#, a, b), 0.75);
    near(bound(r#"[Parallel(calls: [Optional(dependency: "a"), Call("b")])]"#, a, b), 0.75);
    // Nothing required: no bound.
    let (best, why) = bound(r#"[Optional(dependency: "a"), Optional(dependency: "b")]"#, a, b);
    assert!(best.is_nan() && why.contains("no required call"), "{best}: {why}");
}

#[test]
fn a_later_call_to_a_browned_out_dependency_bounds_by_its_window() {
    // b takes 10 ms, 20 times more (200 ms) from 5 s, and is unavailable from 5 s in the
    // second case. Called after a (10 ms, flat), it starts within [t, t + 1 s] of arrival t.
    let step = r#", drift: Step(at: "5s", factor: 20.0)"#;
    let near = |(got, why): (f64, String), want: f64| assert!((got - want).abs() < 1e-6, "{got} vs {want}: {why}");
    // 200 ms still fits the 1 s deadline: no bound below 1.
    near(bound(r#"[Call("a"), Call("b")]"#, "", step), 1.0);
    // At 150 times (1.5 s) it cannot: arrivals before 5 s may still find b at 10 ms (their
    // window starts before 5 s), those after never do: half of the 10 s, 0.5. The first
    // dependency alone (a, flat) would say 1.
    let slow = r#", drift: Step(at: "5s", factor: 150.0)"#;
    near(bound(r#"[Call("a"), Call("b")]"#, "", slow), 0.5);
    // Unavailable from 5 s: the same half.
    let down = r#", modes: [(at: "5s", mode: Unavailable)]"#;
    near(bound(r#"[Call("a"), Call("b")]"#, "", down), 0.5);
    // Optional, b bounds nothing: 1.
    near(bound(r#"[Call("a"), Optional(dependency: "b")]"#, "", down), 1.0);
}

// ---- the closed loop's cycle over the plan --------------------------------------------------

/// 100 closed-loop users thinking 1 ms, for an hour, calling `calls` over `fast` (1 ms) and
/// `slow` (1 s), under `limits.max_events` = `max_events`.
fn closed_loop(calls: &str, max_events: u64) -> Result<(), String> {
    let text = format!(
        r#"Scenario(
    name: "loop", horizon: "1h",
    fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: ClosedLoop(users: 100, think: "1ms"), deadline: "5s", calls: {calls})],
    dependencies: [(name: "fast", latency: Constant("1ms")), (name: "slow", latency: Constant("1s"))],
    policies: [(name: "p", stack: [])],
    limits: (max_events: {max_events}),
)"#
    );
    load_text(Path::new("loop.ron"), &text).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn a_closed_loop_cycle_takes_the_plans_calls() {
    // Calling slow, a user's cycle is 1 ms + 1 s: 100 x 3600 / 1.001 = 359,640 requests of
    // 2 events (arrival, call), plus 3,601 windows x 2 ticks: about 726,500 events, under a
    // million. Were the cycle the first dependency's (fast, 2 ms), 1.8e8 requests.
    closed_loop(r#"[Call("slow")]"#, 1_000_000).unwrap();
    // Over 700,000 all the same: the estimate counts the slow cycle, not a free one.
    let e = closed_loop(r#"[Call("slow")]"#, 700_000).unwrap_err();
    assert!(e.contains("limits.max_events (700000)"), "{e}");
    // First of slow and fast ends at fast: 2 ms cycles, 1.8e8 requests, 3.6e8 events.
    let e = closed_loop(r#"[Parallel(join: First, calls: [Call("slow"), Call("fast")])]"#, 1_000_000).unwrap_err();
    assert!(e.contains("limits.max_events"), "{e}");
    // All of them waits for slow: 359,640 requests again, of 3 events (arrival, two calls):
    // 1,078,921 + 7,202 = 1,086,123, over a million and under 1.1 million.
    closed_loop(r#"[Parallel(calls: [Call("slow"), Call("fast")])]"#, 1_100_000).unwrap();
    closed_loop(r#"[Parallel(calls: [Call("slow"), Call("fast")])]"#, 1_000_000).unwrap_err();
}

// ---- partitions cutting some dependencies ----------------------------------------------------

/// Ten requests (0, 100, ..., 900 ms) on one instance, each calling `a` (10 ms, required),
/// then `b` (10 ms, optional), with instance 0 cut off (at once, `FailFast`) for the whole
/// run from `cut` (a partition's `dependencies`, or none).
fn partitioned(cut: Option<&str>) -> String {
    let partitions = match cut {
        None => String::new(),
        Some(deps) => {
            format!(r#", partitions: [(instances: [0], start: "0s", end: "10s", mode: FailFast{deps})]"#)
        }
    };
    let times: Vec<String> = (0..10).map(|i| format!("\"{}ms\"", 100 * i)).collect();
    format!(
        r#"Scenario(
    name: "cut", horizon: "2s", warmup: "0s",
    fleet: (instances: 1, workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s"){partitions}),
    classes: [(name: "c", arrivals: Scripted(times: [{}]), deadline: "1s",
        calls: [Call("a"), Optional(dependency: "b")])],
    dependencies: [(name: "a", latency: Constant("10ms")), (name: "b", latency: Constant("10ms"))],
    policies: [(name: "p", stack: [])],
)"#,
        times.join(", ")
    )
}

#[test]
fn a_partition_can_cut_one_dependency() {
    // (ok, error, fallback, mean latency ms to 0.1 ms) of the ten requests.
    let outcome = |cut: Option<&str>| {
        let r = common::run_first(&partitioned(cut));
        let c = &r.classes[0];
        (c.outcomes.ok, c.outcomes.error, c.outcomes.fallback, (c.latency_ms.mean * 10.0).round() / 10.0)
    };
    // Uncut: a then b, 20 ms, all ok.
    assert_eq!(outcome(None), (10, 0, 0, 20.0));
    // Cut from b alone: a answers in 10 ms, b fails at once: a degraded answer at 10 ms.
    assert_eq!(outcome(Some(r#", dependencies: ["b"]"#)), (0, 0, 10, 10.0));
    // Cut from a alone: the required call fails at once, b is never called: errors at 0 ms.
    assert_eq!(outcome(Some(r#", dependencies: ["a"]"#)), (0, 10, 0, 0.0));
    // Naming no dependency cuts them all, as before: the same errors at once.
    assert_eq!(outcome(Some("")), (0, 10, 0, 0.0));
}

#[test]
fn a_partition_of_an_unknown_dependency_is_refused_at_its_name() {
    let text = partitioned(Some(r#", dependencies: ["a", "pricing"]"#));
    let e = load_text(Path::new("cut.ron"), &text).expect_err("pricing is no dependency");
    assert!(e.message.contains("unknown dependency \"pricing\" (known: a, b)"), "{e}");
    let offset = text.find(r#""pricing""#).unwrap();
    let line = text[..offset].matches('\n').count() + 1;
    let col = offset - text[..offset].rfind('\n').map_or(0, |n| n + 1) + 1;
    assert_eq!((e.line, e.col), (line, col), "{e}");
}

// ---- retry budgets hear of each call scoped to them --------------------------------------

/// One request calling `a` twice (optional, always failing, 10 ms) and then `b` (10 ms),
/// retried once under tower's budget (`plan_budget::budgeted`), the budget's layer taking
/// `scope`.
fn budgeted(scope: &str) -> String {
    let calls = r#"[Optional(dependency: "a"), Optional(dependency: "a"), Call("b")]"#;
    crate::plan_budget::budgeted(calls, scope)
}

#[test]
fn a_budget_scoped_to_a_dependency_deposits_per_call_to_it() {
    // Scoped to a, the budget wraps a's client (tower's TpsBudget deposits per request to the
    // service it wraps, and each call is one): the first call deposits 1 and its failure
    // cannot withdraw 2; the second deposits, the balance is 2, its failure is retried.
    // Attempts at a: 1 + 2 = 3, and b's one call: 4 dependency calls.
    assert_eq!(common::run_first(&budgeted(r#", dependencies: ["a"]"#)).dependency.calls, 4);
    // Unscoped, it wraps every client the calls pass through and hears of each call as
    // well (b's deposits too, after a's): the same 4 (`plan_budget.rs`).
    assert_eq!(common::run_first(&budgeted("")).dependency.calls, 4);
}

// ---- the event estimate counts a plan's retries ------------------------------------------

/// 1,000 requests a second for an hour calling `a` then `b`, under `stack`, with
/// `limits.max_events` = 50,000,000 (`connect_estimate::hour_of_load`).
fn retried(stack: &str) -> Result<(), String> {
    let deps = r#"dependencies: [(name: "a", latency: Constant("1ms")), (name: "b", latency: Constant("1ms"))]"#;
    crate::connect_estimate::hour_of_load("", r#", calls: [Call("a"), Call("b")]"#, deps, stack, 50_000_000)
}

#[test]
fn a_plans_retries_count_in_the_event_estimate() {
    // 3,600,000 requests; 3,601 windows x 2 ticks = 7,202 events. Without retries each
    // request is 3 events (arrival, two calls): 10,807,202.
    retried("").unwrap();
    // Ten attempts per call: 1 + 2 x 10 = 21 events a request, 75,607,202, over 50 million.
    let e = retried(r#"(policy: Retry((max_attempts: 10, backoff: "1ms")))"#).unwrap_err();
    assert!(e.contains("75607202 events"), "{e}");
    // Scoped to b alone: 1 + 1 + 10 = 12 a request, 43,207,202: under it.
    retried(r#"(policy: Retry((max_attempts: 10, backoff: "1ms")), dependencies: ["b"])"#).unwrap();
}
