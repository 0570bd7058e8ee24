//! `ShedByDeadline` in a whole run, against hand-computed attempt timelines.

use crate::common;

use std::path::Path;

use brownout::metrics::summary::RunSummary;
use brownout::scenario::{parse, validate};

/// Three requests, each answered with an error after 100 ms, retried every 200 ms up to ten
/// attempts, with a 1 s deadline; `inner` is the layer inside the retry.
fn run(inner: &str) -> RunSummary {
    let text = format!(
        r#"Scenario(
        name: "shed", horizon: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: ["0ms", "10ms", "20ms"]), deadline: "1s")],
        dependency: (latency: Constant("100ms"), error_rate: Constant(1.0)),
        policies: [(name: "p", stack: [
            (policy: Retry((max_attempts: 10, backoff: "200ms"))),
            {inner}
        ])],
    )"#
    );
    common::run_first(&text)
}

#[test]
fn a_retry_with_too_little_deadline_left_is_refused() {
    // Attempt 1 at 0 ms (1000 ms left) fails at 100 ms; attempt 2 at 300 ms (700 ms left)
    // fails at 400 ms; attempt 3 at 600 ms has 400 ms left < 500 ms: shed as 429. Two
    // dependency calls per request, and every request ends rejected.
    let r = run(r#"(policy: ShedByDeadline((min_remaining: "500ms"))),"#);
    let c = &r.classes[0];
    assert_eq!((c.outcomes.rejected, c.outcomes.error), (3, 0));
    assert_eq!(r.amplification, 2.0);
}

#[test]
fn a_smaller_budget_lets_one_more_attempt_through() {
    // With 300 ms required, attempt 3 (400 ms left) goes; attempt 4 at 900 ms (100 ms left)
    // is shed: three calls per request.
    let r = run(r#"(policy: ShedByDeadline((min_remaining: "300ms"))),"#);
    assert_eq!(r.classes[0].outcomes.rejected, 3);
    assert_eq!(r.amplification, 3.0);
}

#[test]
fn without_shedding_every_attempt_is_made() {
    // The control: all ten attempts reach the dependency and the requests end in error.
    let r = run(r#"(policy: Timeout((timeout: "1s"))),"#);
    let c = &r.classes[0];
    assert_eq!((c.outcomes.rejected, c.outcomes.error), (0, 3));
    assert_eq!(r.amplification, 10.0);
}

#[test]
fn a_zero_budget_is_a_validation_error_naming_the_field() {
    let text = r#"Scenario(
        name: "shed", horizon: "1s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 1.0), deadline: "1s")],
        dependency: (latency: Constant("1ms")),
        policies: [(name: "p", stack: [(policy: ShedByDeadline((min_remaining: "0ms")))])],
    )"#;
    let s = parse(Path::new("inline.ron"), text).unwrap_or_else(|e| panic!("{e}"));
    let err = format!("{:?}", validate(&s).unwrap_err());
    assert!(err.contains("ShedByDeadline.min_remaining"), "{err}");
}
