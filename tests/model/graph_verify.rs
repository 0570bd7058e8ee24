//! Service graphs against theory and hand timelines (issue 33): the `graph` verification
//! model's closed forms (scenarios/verify/graph.ron, crates/brownout-core/src/verify/graph.rs)
//! fail when the model departs from them, Little's law holds at each dependency, the draws
//! the gateway makes for a call are keyed by its dependency, and a step that ends while it
//! still sends its calls stops sending.

use crate::common;

/// A limiter with one permit, held for a second by the first request (class `hold`, one
/// call to `h` at 0 ms); the other classes arrive while it is held, so their first call is
/// refused at once (429), and what follows in their plans must never be sent.
fn refused_at_once(calls: &str) -> brownout::metrics::summary::RunSummary {
    common::run_first(&format!(
        r#"Scenario(
    name: "refused", horizon: "3s", seed: 1,
    fleet: (instances: 1, workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [
        (name: "hold", arrivals: Scripted(times: ["0ms"]), deadline: "5s", calls: [Call("h")]),
        (name: "plan", arrivals: Scripted(times: ["10ms"]), deadline: "5s", calls: {calls}),
    ],
    dependencies: [
        (name: "h", latency: Constant("1s")),
        (name: "a", latency: Constant("10ms")),
        (name: "b", latency: Constant("10ms")),
        (name: "c", latency: Constant("10ms")),
    ],
    policies: [(name: "p", stack: [(policy: Limiter((permits: 1, queue: 0)))])],
)"#
    ))
}

#[test]
fn an_all_group_whose_first_call_is_refused_fails_with_the_refusal_and_sends_nothing_more() {
    // The group fails at its first call's refusal; b and c are never sent, nor is the next
    // step (one call, fewer than the group's three).
    let r = refused_at_once(r#"[Parallel(calls: [Call("a"), Call("b"), Call("c")]), Call("a")]"#);
    let c = &r.classes[1];
    assert_eq!((c.requests, c.outcomes.rejected), (1, 1));
    assert_eq!(c.latency_ms.max, 0.0, "refused at once");
    assert_eq!(r.dependency.calls, 1, "only the held call to h reached a dependency");
}

#[test]
fn a_group_degraded_at_its_first_refusal_starts_a_shorter_step_and_stops_sending() {
    // Quorum(2) of an optional call and a required one: the optional call's refusal leaves
    // two successes out of reach with only an optional failure, so the group ends degraded
    // while its second call is still unsent, and the one-call step after it starts at once
    // (and is refused too). The group must not go on to send its second call from the
    // shorter step's list (commit 903d0d3: it read past that list's end).
    let r = refused_at_once(
        r#"[Parallel(join: Quorum(2), calls: [Optional(dependency: "a"), Call("b")]), Optional(dependency: "c")]"#,
    );
    let c = &r.classes[1];
    assert_eq!((c.requests, c.outcomes.fallback), (1, 1), "degraded: a fallback answer");
    assert_eq!(r.dependency.calls, 1, "only the held call to h reached a dependency");
}
