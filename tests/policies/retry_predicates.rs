//! `Retry`'s predicates, each live in a whole run against hand-worked timelines: `on_error`,
//! `on_timeout`, `on_refusal` (a layer's 429, a layer's 503, the dependency's 503) and
//! `give_up` (clients that give up before a retry).

use crate::common;

use std::path::Path;

use brownout::metrics::summary::RunSummary;
use brownout::scenario::{parse, validate};

/// One policy set `stack` over scripted `arrivals` to a dependency `dependency`.
fn run(arrivals: &str, dependency: &str, stack: &str) -> RunSummary {
    let text = format!(
        r#"Scenario(
        name: "predicates", horizon: "20s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: {arrivals}, deadline: "5s")],
        dependency: {dependency},
        policies: [(name: "p", stack: [{stack}])],
    )"#
    );
    common::run_first(&text)
}

const FAILING: &str = r#"(latency: Constant("100ms"), error_rate: Constant(1.0))"#;
const THREE: &str = r#"Scripted(times: ["0ms", "10ms", "20ms"])"#;

#[test]
fn on_error_false_leaves_failed_calls_alone() {
    // Every call fails after 100 ms. With errors retried, each of the three requests makes
    // all three attempts (amplification 3); without, one.
    let retried = run(THREE, FAILING, r#"(policy: Retry((max_attempts: 3, backoff: "100ms")))"#);
    assert_eq!((retried.classes[0].outcomes.error, retried.amplification), (3, 3.0));
    let not = run(THREE, FAILING, r#"(policy: Retry((max_attempts: 3, backoff: "100ms", on_error: false)))"#);
    assert_eq!((not.classes[0].outcomes.error, not.amplification), (3, 1.0));
}

#[test]
fn on_timeout_false_leaves_timeouts_alone_but_retries_errors() {
    // A 200 ms call timed out at 50 ms: with on_timeout false no retry (one call each); an
    // error is still retried (the control above).
    let slow = r#"(latency: Constant("200ms"))"#;
    let stack = r#"(policy: Retry((max_attempts: 3, backoff: "10ms", on_timeout: false))),
                   (policy: Timeout((timeout: "50ms")))"#;
    let r = run(THREE, slow, stack);
    assert_eq!((r.classes[0].outcomes.timeout, r.amplification), (3, 1.0));
    let stack = r#"(policy: Retry((max_attempts: 3, backoff: "10ms"))), (policy: Timeout((timeout: "50ms")))"#;
    assert_eq!(run(THREE, slow, stack).amplification, 3.0);
}

/// Two requests at 0 and 10 ms through a one-permit limiter inside the retry; calls take
/// 100 ms and succeed.
fn limited(on_refusal: &str) -> RunSummary {
    let stack =
        format!(r#"(policy: Retry((max_attempts: 3, backoff: "100ms"{on_refusal}))), (policy: Limiter((permits: 1)))"#);
    run(r#"Scripted(times: ["0ms", "10ms"])"#, r#"(latency: Constant("100ms"))"#, &stack)
}

#[test]
fn on_refusal_layer_429_retries_a_limiter_refusal() {
    // Request 1 holds the permit from 0 to 100 ms. Request 2 at 10 ms is refused (429).
    // By default that ends it: one rejected. Retrying 429s, it tries again at 110 ms, finds
    // the permit free and succeeds: two answers, two calls.
    let plain = limited("");
    assert_eq!((plain.classes[0].outcomes.ok, plain.classes[0].outcomes.rejected), (1, 1));
    let retried = limited(", on_refusal: [Layer429]");
    assert_eq!((retried.classes[0].outcomes.ok, retried.classes[0].outcomes.rejected), (2, 0));
    assert_eq!(retried.dependency.calls, 2, "a refused attempt makes no call");
    // Naming only the breaker's 503 does not retry a limiter's 429.
    assert_eq!(limited(", on_refusal: [Layer503]").classes[0].outcomes.rejected, 1);
}

#[test]
fn on_refusal_layer_503_retries_an_open_breaker_refusal() {
    // Calls fail after 100 ms; the breaker opens on the first failure (100 ms) for 150 ms.
    // Request 1 (0 ms) fails at 100 ms and, errors not retried, ends in error. Request 2
    // (120 ms) meets the open breaker: by default a 503 (short-circuited). Retrying 503s, it
    // tries again at 320 ms, after the break: the probe call fails at 420 ms, an error.
    let stack = |extra: &str| {
        format!(
            r#"(policy: Retry((max_attempts: 3, backoff: "200ms", on_error: false{extra}))),
               (policy: ConsecutiveBreaker((failures: 1, break_duration: "150ms", probes: 1)))"#
        )
    };
    let two = r#"Scripted(times: ["0ms", "120ms"])"#;
    let plain = run(two, FAILING, &stack(""));
    assert_eq!((plain.classes[0].outcomes.short_circuited, plain.classes[0].outcomes.error), (1, 1));
    assert_eq!(plain.dependency.calls, 1, "one call for two requests");
    let retried = run(two, FAILING, &stack(", on_refusal: [Layer503]"));
    assert_eq!((retried.classes[0].outcomes.short_circuited, retried.classes[0].outcomes.error), (0, 2));
    assert_eq!(retried.dependency.calls, 2, "the retried request made the probe call");
}

#[test]
fn on_refusal_dependency_503_is_retried_by_default_and_can_be_left_alone() {
    // One server, no queue: request 1 (0 ms) is served until 100 ms; request 2 (10 ms)
    // finds the queue full and gets the 503 at once. By default (`[Dependency503]`, as
    // before the predicates) it is retried at 60 ms and again at 110 ms, when the server is
    // free: two answers. With `on_refusal: []` it ends in error after one call, even with
    // errors retried.
    let dep = r#"(latency: Constant("100ms"), capacity: Some((servers: 1, queue: 0)))"#;
    let two = r#"Scripted(times: ["0ms", "10ms"])"#;
    let default = run(two, dep, r#"(policy: Retry((max_attempts: 3, backoff: "50ms")))"#);
    assert_eq!((default.classes[0].outcomes.ok, default.amplification), (2, 2.0));
    let left = run(two, dep, r#"(policy: Retry((max_attempts: 3, backoff: "50ms", on_refusal: [])))"#);
    assert_eq!((left.classes[0].outcomes.ok, left.classes[0].outcomes.error), (1, 1));
    assert_eq!(left.amplification, 1.0);
}

#[test]
fn give_up_one_never_retries_and_one_half_retries_about_half() {
    // give_up 1: no retry at all.
    let never = run(THREE, FAILING, r#"(policy: Retry((max_attempts: 3, backoff: "10ms", give_up: 1.0)))"#);
    assert_eq!(never.amplification, 1.0);
    // give_up 0.5 over about 4,000 requests (Poisson, 200/s for 20 s) that always fail, two
    // retries allowed: a request makes its 2nd attempt with probability 1/2 and its 3rd with
    // 1/4, so 1 + 1/2 + 1/4 = 1.75 attempts expected; attempts per request are 1, 2, 3 with
    // probabilities 1/2, 1/4, 1/4, variance 3.75 - 1.75² = 0.6875, so the mean over 4,000
    // has σ = √(0.6875/4000) ≈ 0.013: 0.06 is over 4σ.
    let arrivals = r#"Poisson(rate_per_s: 200.0)"#;
    let r = run(arrivals, FAILING, r#"(policy: Retry((max_attempts: 3, backoff: "10ms", give_up: 0.5)))"#);
    assert!((r.amplification - 1.75).abs() < 0.06, "amplification {}", r.amplification);
}

#[test]
fn give_up_is_the_same_draw_for_every_policy_set() {
    // Two identical sets compared in one scenario: the same clients give up in both.
    let text = format!(
        r#"Scenario(
        name: "crn", horizon: "5s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 100.0), deadline: "5s")],
        dependency: {FAILING},
        policies: [
            (name: "a", stack: [(policy: Retry((max_attempts: 4, backoff: "10ms", give_up: 0.3)))]),
            (name: "b", stack: [(policy: Retry((max_attempts: 4, backoff: "10ms", give_up: 0.3)))]),
        ],
    )"#
    );
    let s = common::run_text(&text);
    assert_eq!(s.runs[0].amplification, s.runs[1].amplification);
    assert!(s.runs[0].amplification > 1.0 && s.runs[0].amplification < 4.0);
}

#[test]
fn give_up_outside_zero_to_one_is_refused_naming_the_field() {
    let text = r#"Scenario(
        name: "bad", horizon: "1s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 1.0), deadline: "1s")],
        dependency: (latency: Constant("1ms")),
        policies: [(name: "p", stack: [(policy: Retry((max_attempts: 2, give_up: 1.5)))])],
    )"#;
    let s = parse(Path::new("inline.ron"), text).unwrap_or_else(|e| panic!("{e}"));
    let err = format!("{:?}", validate(&s).unwrap_err());
    assert!(err.contains("Retry.give_up"), "{err}");
}
