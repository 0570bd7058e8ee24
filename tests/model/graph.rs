//! Service graphs (issue 33): several dependencies and call plans. Expected values are
//! worked by hand from constant latencies (a sequence adds, a parallel group waits for its
//! slowest, first or k-th call) and from the plan's rules; common random numbers are keyed by
//! (request, dependency, occurrence, attempt).

use std::collections::BTreeMap;
use std::path::Path;

use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, run_policy_recorded};

use crate::common;

/// One class at 20 requests a second through a plan over three dependencies with constant
/// latencies a = 10 ms, b = 20 ms, c = 30 ms, unbounded fleet, no overhead. Arrivals stop a
/// second before the horizon, so every request has finished when the run ends and counts
/// of calls per request are exact.
fn graph(calls: &str, extra: &str, stack: &str) -> String {
    format!(
        r#"Scenario(
    name: "graph", horizon: "20s", seed: 5,
    fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
    classes: [(name: "checkout", arrivals: PoissonProfile(points: [("0s", 20.0), ("19s", 20.0), ("19001ms", 0.0)]), deadline: "1s", calls: {calls})],
    dependencies: [
        (name: "a", latency: Constant("10ms"){extra}),
        (name: "b", latency: Constant("20ms")),
        (name: "c", latency: Constant("30ms")),
    ],
    policies: [(name: "p", stack: [{stack}])],
)"#
    )
}

fn mean_ms(text: &str) -> (f64, f64, u64) {
    let r = common::run_first(text);
    let c = &r.classes[0];
    (c.latency_ms.mean, c.latency_ms.max, c.requests)
}

#[test]
fn a_sequence_adds_its_calls_and_a_parallel_group_joins_by_its_rule() {
    // a then b: 10 + 20 = 30 ms for every request.
    let (mean, max, n) = mean_ms(&graph(r#"[Call("a"), Call("b")]"#, "", ""));
    assert!(n > 300, "{n}");
    assert_eq!((mean, max), (30.0, 30.0));
    // All three at once: the slowest, 30 ms; then a: 40 ms.
    let all = r#"[Parallel(calls: [Call("a"), Call("b"), Call("c")]), Call("a")]"#;
    assert_eq!(mean_ms(&graph(all, "", "")).0, 40.0);
    // The first of the three: 10 ms. Two of three: the second fastest, 20 ms.
    let first = r#"[Parallel(join: First, calls: [Call("c"), Call("b"), Call("a")])]"#;
    assert_eq!(mean_ms(&graph(first, "", "")).0, 10.0);
    let quorum = r#"[Parallel(join: Quorum(2), calls: [Call("c"), Call("b"), Call("a")])]"#;
    assert_eq!(mean_ms(&graph(quorum, "", "")).0, 20.0);
}

#[test]
fn a_required_failure_fails_the_request_and_an_optional_one_degrades_it_at_its_cost() {
    // a always fails: a required a fails every request and b is never called.
    let r = common::run_first(&graph(r#"[Call("a"), Call("b")]"#, ", error_rate: Constant(1.0)", ""));
    let c = &r.classes[0];
    assert_eq!(c.outcomes.error, c.requests);
    assert_eq!(r.dependency.calls, c.requests, "one call to a per request, none to b");
    assert_eq!(c.causes.dependency_error, c.requests);
    // Optional a, with a fallback costing 5 ms: 10 + 5 + 20 = 35 ms, a fallback answer.
    let optional = r#"[Optional(dependency: "a", cost: "5ms"), Call("b")]"#;
    let r = common::run_first(&graph(optional, ", error_rate: Constant(1.0)", ""));
    let c = &r.classes[0];
    assert_eq!((c.outcomes.fallback, c.outcomes.error), (c.requests, 0));
    assert_eq!((c.latency_ms.mean, c.latency_ms.max), (35.0, 35.0));
    assert_eq!(r.dependency.calls, 2 * c.requests);
}

#[test]
fn a_required_failure_in_a_group_fails_it_at_once_and_cancels_the_others() {
    // a fails after 10 ms while c would take 30: the request fails at 10 ms, c is abandoned.
    let calls = r#"[Parallel(calls: [Call("c"), Call("a")])]"#;
    let r = common::run_first(&graph(calls, ", error_rate: Constant(1.0)", ""));
    let c = &r.classes[0];
    assert_eq!(c.outcomes.error, c.requests);
    assert_eq!(c.latency_ms.max, 10.0);
    assert!(r.dependency.abandoned >= c.requests - 2, "{} abandoned of {}", r.dependency.abandoned, c.requests);
}

#[test]
fn timeouts_and_retries_act_per_call() {
    // A 25 ms timeout per attempt: a (10 ms) and b (20 ms) each pass it, so the 30 ms plan
    // succeeds; on the request as a whole it would have fired.
    let timeout = r#"(policy: Timeout((timeout: "25ms")))"#;
    let r = common::run_first(&graph(r#"[Call("a"), Call("b")]"#, "", timeout));
    assert_eq!(r.classes[0].outcomes.ok, r.classes[0].requests);
    // c (30 ms) does not: every request times out after 10 + 25 ms, and each of its three
    // attempts under a retry is one more call to c.
    let retry =
        r#"(policy: Retry((max_attempts: 3, backoff: "0ms", jitter: 0.0))), (policy: Timeout((timeout: "25ms")))"#;
    let r = common::run_first(&graph(r#"[Call("a"), Call("c")]"#, "", retry));
    let c = &r.classes[0];
    assert_eq!(c.outcomes.timeout, c.requests);
    assert_eq!(c.latency_ms.max, 10.0 + 3.0 * 25.0);
    assert_eq!(r.dependency.calls, 4 * c.requests, "one call to a and three to c per request");
}

fn records(text: &str) -> Records {
    let s = common::scenario(text);
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_policy_recorded(&m, 0, RunOptions::default()).expect("runs").1
}

/// Exponential latencies for a and b: every call draws.
fn drawn(calls: &str) -> String {
    graph(calls, "", "")
        .replace(r#"Constant("10ms")"#, r#"Exponential(mean: "10ms")"#)
        .replace(r#"Constant("20ms")"#, r#"Exponential(mean: "20ms")"#)
}

#[test]
fn adding_a_call_to_one_dependency_leaves_the_draws_of_another_alone() {
    let latencies = |r: &Records, dep: u16| -> BTreeMap<(u16, u64, u32), u64> {
        r.calls.iter().filter(|c| c.dependency == dep).map(|c| ((c.class, c.key, c.attempt), c.latency)).collect()
    };
    let alone = records(&drawn(r#"[Call("a")]"#));
    let a = latencies(&alone, 0);
    assert!(a.len() > 300, "{}", a.len());
    for plan in
        [r#"[Call("a"), Call("b")]"#, r#"[Call("b"), Call("a")]"#, r#"[Parallel(calls: [Call("b"), Call("a")])]"#]
    {
        let with_b = records(&drawn(plan));
        assert_eq!(latencies(&with_b, 0), a, "{plan}");
        // b draws apart from a: the same request's call to b is not a's draw.
        let b = latencies(&with_b, 1);
        assert_eq!(b.len(), a.len());
        let same = b.iter().filter(|(k, v)| a.get(k) == Some(v)).count();
        assert_eq!(same, 0, "{plan}");
    }
    // A second call to a draws anew (its occurrence is part of its key); the first keeps its draw.
    let twice = records(&drawn(r#"[Call("a"), Call("a")]"#));
    let calls = latencies(&twice, 0);
    assert_eq!(calls.len(), 2 * a.len());
    assert!(a.iter().all(|(k, v)| calls.get(k) == Some(v)));
}

#[test]
fn the_one_dependency_form_may_name_its_dependency_in_a_plan() {
    // The single dependency (default name "dependency") called twice in a row: 2 x 10 ms.
    let text = graph(r#"[Call("dependency"), Call("dependency")]"#, "", "").replace(
        r#"dependencies: [
        (name: "a", latency: Constant("10ms")),
        (name: "b", latency: Constant("20ms")),
        (name: "c", latency: Constant("30ms")),
    ],"#,
        r#"dependency: (latency: Constant("10ms")),"#,
    );
    assert_eq!(mean_ms(&text).0, 20.0);
}
