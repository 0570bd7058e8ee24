//! Service graphs against theory and hand timelines (issue 33): the `graph` verification
//! model's closed forms (scenarios/verify/graph.ron, crates/brownout-core/src/verify/graph.rs)
//! fail when the model departs from them, Little's law holds at each dependency, the draws
//! the gateway makes for a call are keyed by its dependency, and a step that ends while it
//! still sends its calls stops sending.

use std::collections::BTreeMap;
use std::path::Path;

use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, run_policy_recorded};
use brownout::scenario::{Dur, load};

use crate::common;

fn recorded(s: &brownout::scenario::Scenario, dir: &Path) -> (brownout::metrics::summary::RunSummary, Records) {
    let m = Model::build(s, s.seed, dir).unwrap();
    let (out, records) = run_policy_recorded(&m, 0, RunOptions::default()).expect("runs");
    (out.summary, records)
}

#[test]
fn a_pool_too_small_to_ignore_breaks_the_graph_models_closed_forms() {
    // Four connections for 500 requests a second each holding up to three calls of tens of
    // milliseconds: calls wait for a connection, so the latencies are no longer the plan's
    // draws alone and the order statistics must fail.
    let dir = crate::verify::edited_models("graph.ron", "max_connections: 100000", "max_connections: 4");
    let out = std::process::Command::new(common::BIN)
        .args(["verify", "--quick", "--models", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let row = stdout.lines().find(|l| l.contains("all: All, mean")).expect("the All row");
    assert!(row.ends_with("FAIL"), "{row}");
}

#[test]
fn littles_law_holds_at_each_dependency_of_the_graph_model() {
    // Every call runs to its end (a First or Quorum loser keeps its dependency working), so
    // dependency d holds on average (calls to d per second) x (mean latency of d) calls.
    // By hand from graph.ron, each class at 100/s: a is called by all, first and sequence,
    // 300/s x 10 ms = 3; b the same at 20 ms = 6; c by all and first, 200/s x 40 ms = 8;
    // q three times by quorum, 300/s x 30 ms = 9; s three times by slow, 300/s x
    // (0.9 x 10 + 0.1 x 100) ms = 5.7. Sum 31.7.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/verify");
    let mut s = load(&dir.join("graph.ron")).unwrap();
    s.horizon = Dur::secs(200);
    let (summary, records) = recorded(&s, &dir);
    let (from, to) = (s.warmup.ns(), s.horizon.ns());
    // The time each dependency spends holding calls in [warm-up, horizon): the integral of
    // its calls in flight.
    let mut held = [0u128; 5];
    for c in &records.calls {
        let (start, end) = (c.start.max(from), (c.start + c.latency).min(to));
        if end > start {
            held[c.dependency as usize] += u128::from(end - start);
        }
    }
    let span = (to - from) as f64;
    let expected = [3.0, 6.0, 8.0, 9.0, 5.7];
    // Each mean in flight is a time average over 190 s of a count that forgets itself within a few call times (tens of ms): its
    // standard deviation is about 1 %, so 5 % is over four of them.
    for (d, (&h, &e)) in held.iter().zip(&expected).enumerate() {
        let l = h as f64 / span;
        assert!((l - e).abs() < 0.05 * e, "dependency {d}: mean in flight {l} vs {e}");
    }
    // The world's own gauge of calls in flight (all dependencies together) is the sum.
    let total = held.iter().sum::<u128>() as f64 / span;
    let gauge = summary.dependency.mean_in_flight;
    assert!((gauge - total).abs() < 1e-3 * total, "gauge {gauge} vs sum of dependencies {total}");
}

/// Two dependencies that always fail after 10 ms, called at once as optional calls, each
/// retried once after a fully jittered backoff of up to 100 ms.
fn jittered(calls: &str) -> String {
    format!(
        r#"Scenario(
    name: "jitter", horizon: "20s", seed: 9,
    fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Poisson(rate_per_s: 20), deadline: "1s", calls: {calls})],
    dependencies: [
        (name: "a", latency: Constant("10ms"), error_rate: Constant(1.0)),
        (name: "b", latency: Constant("10ms"), error_rate: Constant(1.0)),
    ],
    policies: [(name: "p", stack: [(policy: Retry((max_attempts: 2, backoff: "100ms", jitter: 1.0)))])],
)"#
    )
}

#[test]
fn the_retry_jitter_of_calls_to_two_dependencies_is_drawn_apart() {
    // When the retry (attempt 2; attempts count from 1) starts, per (request, dependency).
    let retries = |r: &Records, dep: u16| -> BTreeMap<u64, u64> {
        r.calls.iter().filter(|c| c.dependency == dep && c.attempt == 2).map(|c| (c.key, c.start)).collect()
    };
    let both = recorded(
        &common::scenario(&jittered(r#"[Parallel(calls: [Optional(dependency: "a"), Optional(dependency: "b")])]"#)),
        Path::new("."),
    )
    .1;
    let (a, b) = (retries(&both, 0), retries(&both, 1));
    // (A request arriving in the last tenth of a second may see one retry sent and not the
    // other by the horizon.)
    assert!(a.len() > 300 && b.len() > 300, "{} and {}", a.len(), b.len());
    // Both first calls fail at 10 ms; each retry waits its own uniform draw below 100 ms, so
    // two retries of one request start at the same nanosecond only by a coincidence of
    // continuous draws: never, unless the draws are shared.
    let same = a.iter().filter(|(k, t)| b.get(k) == Some(t)).count();
    assert_eq!(same, 0, "{same} of {} requests retried a and b at the same instant", a.len());
    // And b's calls leave a's retries where they were.
    let alone = recorded(&common::scenario(&jittered(r#"[Optional(dependency: "a")]"#)), Path::new(".")).1;
    assert_eq!(retries(&alone, 0), a);
}

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
