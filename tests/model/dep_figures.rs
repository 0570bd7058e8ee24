//! Per-dependency figures, causes keyed by dependency, and per-call figures of a plan with
//! its critical path (issue 33). Expected values are
//! worked by hand from constant latencies (docs/graphs.md's worked example: inventory 10 ms
//! and pricing 20 ms in parallel, then payment 30 ms) and from Little's law; the one-dependency
//! form must not show the new fields at all (its summary keeps its bytes).

use brownout::metrics::summary::{Causes, DependencyFigures, RunSummary};

use crate::common;

/// One class at 20 requests a second over the worked example's plan (`calls`), with the
/// three dependencies' latencies and extra settings; arrivals stop three seconds before the
/// horizon so every request finishes and the counts are exact.
fn checkout(calls: &str, pricing: &str, stack: &str) -> String {
    format!(
        r#"Scenario(
    name: "checkout", horizon: "20s", seed: 11,
    fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "5s")),
    classes: [(name: "checkout", arrivals: PoissonProfile(points: [("0s", 20.0), ("17s", 20.0), ("17001ms", 0.0)]), deadline: "1s", calls: {calls})],
    dependencies: [
        (name: "inventory", latency: Constant("10ms")),
        (name: "pricing", {pricing}),
        (name: "payment", latency: Constant("30ms")),
    ],
    policies: [(name: "p", stack: [{stack}])],
)"#
    )
}

const EXAMPLE: &str = r#"[Parallel(calls: [Call("inventory"), Call("pricing")]), Call("payment")]"#;

fn dep<'a>(r: &'a RunSummary, name: &str) -> &'a DependencyFigures {
    r.dependencies.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("no figures for {name}"))
}

/// The causes that `name` is blamed for in class 0 (all zero when it is not listed).
fn blamed(r: &RunSummary, name: Option<&str>) -> Causes {
    let c = &r.classes[0];
    c.causes_by_dependency.iter().find(|d| d.dependency.as_deref() == name).map_or(Causes::default(), |d| d.causes)
}

#[test]
fn each_dependency_gets_its_own_calls_latency_and_in_flight() {
    let r = common::run_first(&checkout(EXAMPLE, r#"latency: Constant("20ms")"#, ""));
    let n = r.classes[0].requests;
    assert!(n > 300, "{n}");
    let names: Vec<&str> = r.dependencies.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["inventory", "pricing", "payment"], "in the scenario's order");
    // The span is the measured time: calls / calls per second of the summed block.
    let secs = r.dependency.calls as f64 / r.dependency.calls_per_s;
    for (name, ms) in [("inventory", 10.0), ("pricing", 20.0), ("payment", 30.0)] {
        let d = dep(&r, name);
        // One call of one attempt per request to each dependency.
        assert_eq!((d.calls, d.attempts, d.amplification), (n, n, 1.0), "{name}");
        assert_eq!((d.service_ms.mean, d.service_ms.max, d.total_ms.mean), (ms, ms, ms), "{name}");
        assert_eq!(d.queue_wait_ms.max, 0.0, "{name}: unbounded capacity never queues");
        // Little's law at the edge: mean in flight = attempts per second x time there.
        let little = n as f64 / secs * ms / 1000.0;
        assert!((d.mean_in_flight - little).abs() < 1e-9 * little.max(1.0), "{name}: {} vs {little}", d.mean_in_flight);
        assert!(d.peak_in_flight >= 1);
    }
    // The summed block keeps its meaning: the sum over the dependencies.
    assert_eq!(r.dependency.calls, r.dependencies.iter().map(|d| d.attempts).sum::<u64>());
    assert_eq!(r.dependency.calls, 3 * n);
}

#[test]
fn retries_amplify_only_the_edge_that_fails() {
    // Pricing always fails; three attempts each (no backoff). Its call is optional, so the
    // plan goes on to payment: inventory and payment see one attempt per call, pricing three.
    let calls =
        r#"[Parallel(calls: [Call("inventory"), Optional(dependency: "pricing", cost: "1ms")]), Call("payment")]"#;
    let retry = r#"(policy: Retry((max_attempts: 3, backoff: "0ms", jitter: 0.0)))"#;
    let r = common::run_first(&checkout(calls, r#"latency: Constant("20ms"), error_rate: Constant(1.0)"#, retry));
    let n = r.classes[0].requests;
    assert_eq!((dep(&r, "pricing").calls, dep(&r, "pricing").attempts), (n, 3 * n));
    assert_eq!(dep(&r, "pricing").amplification, 3.0);
    assert_eq!((dep(&r, "inventory").amplification, dep(&r, "payment").amplification), (1.0, 1.0));
    assert_eq!(r.dependency.calls, 5 * n);
}

#[test]
fn a_late_checkout_is_put_on_the_slow_dependency_and_causes_still_sum() {
    // Only pricing is slow: 1.5 s against a 1 s deadline. Payment's 30 ms first, then
    // inventory (10 ms) and pricing in parallel: pricing ends the last step, so every
    // checkout is answered at 1.53 s, late, and blamed on pricing (the call that decided the
    // longest step).
    let late_last = r#"[Call("payment"), Parallel(calls: [Call("inventory"), Call("pricing")])]"#;
    let r = common::run_first(&checkout(late_last, r#"latency: Constant("1500ms")"#, ""));
    let c = &r.classes[0];
    assert!(c.requests > 300);
    assert_eq!((c.causes.late, c.causes.total()), (c.requests, c.requests));
    assert_eq!(blamed(&r, Some("pricing")).late, c.requests);
    assert_eq!(blamed(&r, Some("inventory")).total() + blamed(&r, Some("payment")).total(), 0);
    let sum: u64 = c.causes_by_dependency.iter().map(|d| d.causes.total()).sum();
    assert_eq!(sum, c.causes.total());
    // Required pricing that always fails: every checkout fails on pricing's error.
    let r = common::run_first(&checkout(EXAMPLE, r#"latency: Constant("20ms"), error_rate: Constant(1.0)"#, ""));
    let c = &r.classes[0];
    assert_eq!(c.causes.dependency_error, c.requests);
    assert_eq!(blamed(&r, Some("pricing")).dependency_error, c.requests);
    assert_eq!(c.causes_by_dependency.len(), 1, "{:?}", c.causes_by_dependency);
}

#[test]
fn a_late_checkout_is_put_on_the_slow_call_even_when_a_fast_one_ends_the_plan() {
    // Pricing (1.5 s) first, then inventory and payment in parallel (10 and 30 ms): every
    // checkout is answered at 1.53 s, late. Pricing held the critical path for 1.5 s of it,
    // payment (which ended the last step) for 30 ms: "late because pricing was slow" is the
    // figure a reader needs, so the longest step's deciding call is blamed, not the last one.
    let slow_first = r#"[Call("pricing"), Parallel(calls: [Call("inventory"), Call("payment")])]"#;
    let r = common::run_first(&checkout(slow_first, r#"latency: Constant("1500ms")"#, ""));
    let c = &r.classes[0];
    assert!(c.requests > 300);
    assert_eq!((c.causes.late, c.causes.total()), (c.requests, c.requests));
    assert_eq!(blamed(&r, Some("pricing")).late, c.requests, "{:?}", c.causes_by_dependency);
    assert_eq!(blamed(&r, Some("payment")).total() + blamed(&r, Some("inventory")).total(), 0);
}

#[test]
fn a_refused_worker_slot_is_no_dependency_s_doing() {
    // One slot, no queue, 20 a second over a 50 ms plan: about 1 in 2 find the slot taken
    // (Erlang B with a = 1: 1/2); those are blamed on no dependency (`null`).
    let text = checkout(EXAMPLE, r#"latency: Constant("20ms")"#, "")
        .replace("workers: (slots: 1000)", "workers: (slots: 1, queue: 0)");
    let r = common::run_first(&text);
    let c = &r.classes[0];
    assert!(c.causes.worker_slots_full > 0);
    assert_eq!(blamed(&r, None).worker_slots_full, c.causes.worker_slots_full);
    let sum: u64 = c.causes_by_dependency.iter().map(|d| d.causes.total()).sum();
    assert_eq!(sum, c.causes.total());
}

#[test]
fn the_one_dependency_form_writes_no_per_dependency_fields() {
    let r = common::run_first(&common::erlang_scenario("20s"));
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("\"dependencies\""), "{json}");
    assert!(!json.contains("causes_by_dependency"), "{json}");
}

#[test]
fn each_call_of_the_plan_holds_its_share_of_the_critical_path() {
    // docs/graphs.md's worked example: the parallel step lasts 20 ms and pricing ends it;
    // payment's step lasts 30 ms; every checkout takes 50 ms. Pricing 20/50, payment 30/50,
    // inventory never on the critical path.
    let r = common::run_first(&checkout(EXAMPLE, r#"latency: Constant("20ms")"#, ""));
    let c = &r.classes[0];
    let n = c.requests;
    let got: Vec<(u32, &str, bool)> = c.calls.iter().map(|k| (k.step, k.dependency.as_str(), k.optional)).collect();
    assert_eq!(got, [(0, "inventory", false), (0, "pricing", false), (1, "payment", false)]);
    for k in &c.calls {
        assert_eq!((k.outcomes.ok, k.outcomes.total(), k.cancelled), (n, n, 0), "{}", k.dependency);
    }
    let share: Vec<f64> = c.calls.iter().map(|k| k.critical_share).collect();
    assert_eq!(share, [0.0, 0.4, 0.6]);
    let ms: Vec<f64> = c.calls.iter().map(|k| k.critical_ms).collect();
    assert_eq!(ms, [0.0, 20.0 * n as f64, 30.0 * n as f64]);
    // The first of payment (30 ms) and inventory (10 ms): inventory ends every step, and
    // every payment call is cancelled.
    let first = r#"[Parallel(join: First, calls: [Call("payment"), Call("inventory")])]"#;
    let r = common::run_first(&checkout(first, r#"latency: Constant("20ms")"#, ""));
    let c = &r.classes[0];
    let n = c.requests;
    assert_eq!((c.calls[0].cancelled, c.calls[0].outcomes.total(), c.calls[0].critical_share), (n, 0, 0.0));
    assert_eq!((c.calls[1].outcomes.ok, c.calls[1].critical_share), (n, 1.0));
}

#[test]
fn a_class_without_a_plan_has_no_call_figures() {
    // One call to inventory: no plan, no per-call figures, but its dependency's figures.
    let r = common::run_first(&checkout(r#"[Call("inventory")]"#, r#"latency: Constant("20ms")"#, ""));
    assert!(r.classes[0].calls.is_empty());
    assert_eq!(r.dependencies[0].calls, r.classes[0].requests);
    assert_eq!(r.dependencies[1].calls, 0);
}
