//! A `Timeout` layer outside a retry layer bounds the whole request (issue 30 item 8, .NET's
//! `TotalRequestTimeout`), one inside it bounds each attempt.
//!
//! The semantics are Polly v8's, which the .NET standard handler runs:
//! `src/Polly.Core/Timeout/TimeoutResilienceStrategy.cs`, `ExecuteCoreAsync`, arms one
//! cancellation source (`CancelAfter(timeout)`) when the execution enters the strategy and
//! hands its token down in `context.CancellationToken`, so every attempt of a retry inside
//! it and every delay between them run under that one token; when it fires, the
//! `OperationCanceledException` becomes a `TimeoutRejectedException`.
//! `src/Polly.Core/Retry/RetryResilienceStrategy.cs`, `ExecuteCallbackAsync`, returns the
//! outcome without another attempt once `context.CancellationToken.IsCancellationRequested`,
//! and waits out its delay with `DelayAsync(delay, context)`, which the same token cuts short
//! (the `catch (OperationCanceledException)` returns at once). resilience4j's `TimeLimiter`
//! decorating a `Retry` behaves alike: the limiter's future is cancelled, retries included.
//!
//! Every figure below is computed by hand from a dependency that always takes 400 ms.

use crate::common;

use std::path::Path;

use brownout::engine::Time;
use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, RunResult, run_policy, run_policy_recorded};
use brownout::policy::CallOutcome;
use brownout::scenario::{Scenario, load_text};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const MS: Time = 1_000_000;

/// Three requests, 10 s apart (each ends long before the next arrives), to a dependency that
/// always takes 400 ms, through each stack given.
fn scenario(stacks: &[(&str, &str)]) -> Scenario {
    let sets: Vec<String> =
        stacks.iter().map(|(name, stack)| format!(r#"(name: "{name}", stack: [{stack}])"#)).collect();
    let text = format!(
        r#"Scenario(
        name: "request-timeout", seed: 1, horizon: "40s", window: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "60s")),
        classes: [(name: "api", arrivals: Scripted(times: ["1s", "11s", "21s"]), deadline: "5s")],
        dependency: (latency: Constant("400ms")),
        policies: [{}],
    )"#,
        sets.join(", ")
    );
    common::scenario(&text)
}

fn runs(s: &Scenario) -> Vec<(RunResult, Records)> {
    let model = Model::build(s, s.seed, Path::new(".")).unwrap();
    (0..s.policies.len()).map(|p| run_policy_recorded(&model, p, RunOptions::default()).unwrap()).collect()
}

/// Retry(max_attempts 3, a constant 100 ms backoff), retrying timeouts.
const RETRY: &str =
    r#"(policy: Retry((max_attempts: 3, backoff: "100ms", multiplier: 1.0, jitter: 0.0, on_timeout: true)))"#;
/// The per-attempt timeout, inside the retry.
const ATTEMPT: &str = r#"(policy: Timeout((timeout: "300ms")))"#;

/// (start, end) of each attempt of the first request, in ms after its arrival at 1 s.
fn first_attempts(r: &Records) -> Vec<(Time, Time, CallOutcome)> {
    let key = r.requests[0].key;
    let arrived = r.requests[0].arrived;
    r.attempts
        .iter()
        .filter(|a| a.key == key)
        .map(|a| ((a.start - arrived) / MS, (a.end - arrived) / MS, a.outcome))
        .collect()
}

#[test]
fn a_timeout_outside_the_retry_bounds_attempts_backoffs_and_the_last_attempt() {
    let s = scenario(&[
        ("total-1s", &format!(r#"(policy: Timeout((timeout: "1s"))), {RETRY}, {ATTEMPT}"#)),
        ("total-750ms", &format!(r#"(policy: Timeout((timeout: "750ms"))), {RETRY}, {ATTEMPT}"#)),
        (
            "total-750ms-unwind",
            &format!(r#"(policy: Timeout((timeout: "750ms", unwind: "50ms"))), {RETRY}, {ATTEMPT}"#),
        ),
    ]);
    let runs = runs(&s);
    let timeout = CallOutcome::Timeout;

    // Total 1 s: attempt 1 runs 0..300 ms (attempt timeout), backoff 300..400, attempt 2
    // 400..700, backoff 700..800, attempt 3 from 800 ms is cut at the total, 1000 ms
    // (200 ms, not its own 300): the request ends timed out at exactly 1.0 s, after 3 calls.
    let (run, rec) = &runs[0];
    assert_eq!(first_attempts(rec), vec![(0, 300, timeout), (400, 700, timeout), (800, 1000, timeout)]);
    let c = &run.summary.classes[0];
    assert_eq!((c.requests, c.outcomes.timeout, c.causes.attempt_timeout), (3, 3, 3));
    assert_eq!((c.latency_ms.mean, c.latency_ms.max), (1000.0, 1000.0));
    assert_eq!(run.summary.dependency.calls, 9, "3 calls per request");

    // Total 750 ms: attempts 0..300 and 400..700; the backoff after attempt 2 would end at
    // 800 ms > 750 ms, so it is cut: the request ends timed out at 750 ms, no third attempt
    // (2 calls per request).
    let (run, rec) = &runs[1];
    assert_eq!(first_attempts(rec), vec![(0, 300, timeout), (400, 700, timeout)]);
    let c = &run.summary.classes[0];
    assert_eq!((c.requests, c.outcomes.timeout, c.causes.attempt_timeout), (3, 3, 3));
    assert_eq!((c.latency_ms.mean, c.latency_ms.max), (750.0, 750.0));
    assert_eq!(run.summary.dependency.calls, 6, "2 calls per request");
    assert_eq!(run.summary.amplification, 2.0);

    // The same with the total timeout's unwind of 50 ms: the 504 leaves at 750 + 50 ms.
    let (run, _) = &runs[2];
    let c = &run.summary.classes[0];
    assert_eq!((c.outcomes.timeout, c.latency_ms.mean, c.latency_ms.max), (3, 800.0, 800.0));
    assert_eq!(run.summary.dependency.calls, 6);
}

#[test]
fn a_timeout_inside_the_retry_still_bounds_each_attempt() {
    // With both timeouts inside the retry each bounds every attempt (the smaller wins):
    // attempts 0..300, 400..700, 800..1100 ms (backoffs 300..400, 700..800), 3 calls, the
    // request ends timed out at 1.1 s, exactly as with the attempt timeout alone.
    let s = scenario(&[
        ("inside", &format!(r#"{RETRY}, (policy: Timeout((timeout: "1s"))), {ATTEMPT}"#)),
        ("attempt-only", &format!("{RETRY}, {ATTEMPT}")),
        // No retry inside: a Timeout outside nothing bounds the single attempt, as before:
        // 0..300 ms.
        ("no-retry", &format!(r#"(policy: Timeout((timeout: "1s"))), {ATTEMPT}"#)),
    ]);
    let runs = runs(&s);
    let timeout = CallOutcome::Timeout;
    for (run, rec) in &runs[..2] {
        assert_eq!(first_attempts(rec), vec![(0, 300, timeout), (400, 700, timeout), (800, 1100, timeout)]);
        let c = &run.summary.classes[0];
        assert_eq!((c.outcomes.timeout, c.latency_ms.mean, c.latency_ms.max), (3, 1100.0, 1100.0));
        assert_eq!(run.summary.dependency.calls, 9);
    }
    let (run, rec) = &runs[2];
    assert_eq!(first_attempts(rec), vec![(0, 300, timeout)]);
    assert_eq!(run.summary.classes[0].latency_ms.max, 300.0);
}

#[test]
fn the_net_total_request_timeout_is_live() {
    // DotnetStandard with attempt_timeout 300 ms, constant 100 ms delays, 2 retries: as the
    // hand-written stack above, its total_timeout (1 s, then 750 ms) is where each request
    // ends; .NET validates total > attempt timeout.
    let preset = |total: &str| {
        format!(
            r#"(policy: DotnetStandard((total_timeout: "{total}", attempt_timeout: "300ms", max_retry_attempts: 2,
            retry_backoff: Constant, retry_delay: "100ms", retry_use_jitter: false)))"#
        )
    };
    let s = scenario(&[("1s", &preset("1s")), ("750ms", &preset("750ms"))]);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let latency = |p| run_policy(&model, p, RunOptions::default()).unwrap().summary.classes[0].latency_ms.max;
    assert_eq!((latency(0), latency(1)), (1000.0, 750.0));
}

/// Class a (one request at 1 s) holds a limiter's one permit from 1 s to 1.4 s (one 400 ms
/// call). Class b (requests at `b_times`) passes `b_outer` (b's layers only), a 300 ms
/// request timeout (b's only) and the retry, and waits for the permit.
fn queue_run(b_times: &str, b_outer: &str) -> RunResult {
    let text = format!(
        r#"Scenario(
        name: "queue", seed: 1, horizon: "10s", window: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "60s")),
        classes: [(name: "a", arrivals: Scripted(times: ["1s"]), deadline: "5s"),
                  (name: "b", arrivals: Scripted(times: [{b_times}]), deadline: "5s")],
        dependency: (latency: Constant("400ms")),
        policies: [(name: "p", stack: [{b_outer}
            (policy: Timeout((timeout: "300ms")), classes: ["b"]), {RETRY},
            (policy: Limiter((permits: 1, queue: 4, max_wait: "5s")))])],
    )"#
    );
    let s = load_text(Path::new("inline.ron"), &text).unwrap_or_else(|e| panic!("{e}"));
    runs(&s).swap_remove(0).0
}

#[test]
fn a_wait_in_a_layer_queue_ends_at_the_request_timeout() {
    // b arrives at 1.05 s: its wait is cut at 1.35 s, before the permit frees, so b ends
    // timed out after 300 ms without a call (Polly's outer token cancels a wait inside it as
    // it does a call: `RateLimiterResilienceStrategy.ExecuteCoreAsync` passes the context's
    // token to the limiter's `AcquireAsync`).
    let run = queue_run(r#""1050ms""#, "");
    let (a, b) = (&run.summary.classes[0], &run.summary.classes[1]);
    assert_eq!((a.outcomes.ok, a.latency_ms.max), (1, 400.0));
    assert_eq!((b.outcomes.timeout, b.causes.attempt_timeout, b.latency_ms.max), (1, 1, 300.0));
    assert_eq!(run.summary.dependency.calls, 1, "b never calls");
}

#[test]
fn layers_outside_the_retry_hear_that_a_cut_wait_timed_out() {
    // As above, b's wait is cut at 1.35 s. The breaker outside the timeout (b's, opening on
    // 1 failure for 10 s) hears a timeout, as Polly's outer strategies see the
    // `TimeoutRejectedException`, not a cancelled call: it opens, and b's next request at
    // 3 s is short-circuited.
    let breaker = r#"(policy: ConsecutiveBreaker((failures: 1, break_duration: "10s")), classes: ["b"]),"#;
    let run = queue_run(r#""1050ms", "3s""#, breaker);
    let b = &run.summary.classes[1];
    assert_eq!((b.outcomes.timeout, b.outcomes.short_circuited), (1, 1), "{:?}", b.outcomes);
}

/// One layer around the timed part of a stack, in RON: a breaker, a hedge or another
/// timeout (unwinding at most 19 ms), none of which makes a request wait.
fn no_wait() -> impl Strategy<Value = String> {
    prop_oneof![
        (1..5u32, 1..2_000u64)
            .prop_map(|(f, d)| format!(r#"(policy: ConsecutiveBreaker((failures: {f}, break_duration: "{d}ms")))"#)),
        (1..300u64).prop_map(|d| format!(r#"(policy: Hedge((delay: Some("{d}ms"))))"#)),
        (1..500u64, 0..20u64).prop_map(|(t, u)| format!(r#"(policy: Timeout((timeout: "{t}ms", unwind: "{u}ms")))"#)),
    ]
}

/// One of [`no_wait`] or a limiter with a queue.
fn extra() -> impl Strategy<Value = String> {
    prop_oneof![
        (1..6u32, 0..4u32, 1..300u64)
            .prop_map(|(p, q, w)| format!(r#"(policy: Limiter((permits: {p}, queue: {q}, max_wait: "{w}ms")))"#)),
        no_wait(),
    ]
}

/// A scenario whose one stack is `outer`, `Timeout(total)`, `middle`, a retry, `inner`, with a
/// dependency that fails, slows and queues. No slot queue, no local work and no response
/// overhead: a request passes the stack's first layer as it arrives, or is refused at once.
fn timed_scenario(
    outer: Vec<String>,
    total: u64,
    middle: Vec<String>,
    retry: (u32, u64, u32),
    inner: Vec<String>,
    load: (u32, u32, u32, u64, f64),
    dep: (u64, f64, Option<(u32, u32)>),
) -> String {
    let (attempts, backoff, jitter) = retry;
    let (instances, slots, conns, rate, errors) = (load.0, load.1, load.2, load.3, load.4);
    let (median, sigma, capacity) = dep;
    let retry = format!(
        r#"(policy: Retry((max_attempts: {attempts}, backoff: "{backoff}ms", multiplier: 2.0, jitter: 0.{jitter}, on_timeout: true)))"#
    );
    let capacity = capacity.map_or("None".to_string(), |(s, q)| format!("Some((servers: {s}, queue: {q}))"));
    let mut stack = outer;
    stack.push(format!(r#"(policy: Timeout((timeout: "{total}ms", unwind: "{}ms")))"#, total % 7));
    stack.extend(middle);
    stack.push(retry);
    stack.extend(inner);
    format!(
        r#"Scenario(
        name: "prop", seed: 1, horizon: "6s", window: "1s",
        fleet: (instances: {instances}, workers: (slots: {slots}, queue: 0),
            pool: (max_connections: {conns}, acquire_timeout: "200ms")),
        classes: [(name: "c", arrivals: Poisson(rate_per_s: {rate}), deadline: "2s")],
        dependency: (latency: LogNormal(median: "{median}ms", sigma: {sigma}), error_rate: Constant({errors}),
            capacity: {capacity}, modes: [(at: "2s", mode: Unavailable), (at: "3s", mode: Healthy)]),
        policies: [(name: "p", stack: [{}])],
    )"#,
        stack.join(", ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/request_timeout.txt"))),
        ..ProptestConfig::default()
    })]

    /// No request ends later than `total` (and the unwind of the timeout that fired, under
    /// 20 ms) after it passed the request-level timeout, which here is as it arrives (no layer
    /// before it makes it wait); and no attempt of it ends, and none starts, later than `total`
    /// after the first attempt's start, since the layer is passed before that attempt asks
    /// for a connection.
    #[test]
    fn no_request_outlasts_its_request_timeout(
        outer in prop::collection::vec(no_wait(), 0..2),
        total in 1..1_500u64,
        middle in prop::collection::vec(extra(), 0..2),
        retry in (2..6u32, 0..400u64, 0..10u32),
        inner in prop::collection::vec(extra(), 0..3),
        load in (1..3u32, 1..30u32, 1..12u32, 1..150u64, 0.0..0.5f64),
        dep in (1..300u64, 0.0..1.5f64, prop::option::of((1..10u32, 0..20u32))),
        seed in any::<u64>(),
    ) {
        let text = timed_scenario(outer, total, middle, retry, inner, load, dep);
        let s = load_text(Path::new("prop.ron"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let model = Model::build(&s, seed, Path::new(".")).unwrap();
        let (run, rec) = run_policy_recorded(&model, 0, RunOptions::default()).unwrap();
        let longest = run.summary.classes[0].latency_ms.max;
        prop_assert!(longest.is_nan() || longest < (total + 20) as f64,
            "a request lasted {longest} ms, past the total {total} ms\n{text}");
        let mut first = std::collections::BTreeMap::new();
        for a in &rec.attempts {
            let start = *first.entry(a.key).or_insert(a.start);
            prop_assert!(a.attempt > 1 || a.start == start);
            prop_assert!(a.end <= start + total * MS,
                "attempt {a:?} ends {} ms after the first attempt's start, past the total {total} ms\n{text}",
                (a.end - start) as f64 / 1e6);
        }
    }
}
