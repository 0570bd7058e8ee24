//! resilience4j's exception lists imported as retry predicates (issues 34 and 35): what a
//! resilience4j `Retry` retries is `retryExceptions` (every exception when empty) minus
//! `ignoreExceptions`, ignoring first (resilience4j-retry `RetryConfig.java`,
//! `Builder.createExceptionPredicate` and `createRetryOnExceptionPredicate`; classes match by
//! `isAssignableFrom`, resilience4j-core `PredicateCreator.makePredicate`).

use crate::common;

use std::path::Path;

use brownout::import::{Imported, Library, import_text};
use brownout::metrics::summary::RunSummary;

fn import(yaml: &str) -> Imported {
    import_text(Some(Library::Resilience4j), Path::new("application.yml"), yaml, Some("dep")).unwrap()
}

/// A resilience4j retry (3 attempts, 10 ms apart) around a 50 ms time limiter, with the
/// retry's extra options `retry`.
fn yaml(retry: &str) -> String {
    format!(
        "resilience4j:
  retry:
    instances:
      dep:
        maxAttempts: 3
        waitDuration: 10ms
{retry}
  timelimiter:
    instances:
      dep:
        timeoutDuration: 50ms
"
    )
}

/// Run the imported stack: three requests to a dependency that takes 200 ms (so every
/// attempt times out) or fails at once after 10 ms.
fn run(out: &Imported, dependency: &str) -> RunSummary {
    let layers: Vec<String> = out.layers.iter().map(|l| l.ron()).collect();
    let text = format!(
        r#"Scenario(
        name: "r4j", horizon: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: ["0ms", "10ms", "20ms"]), deadline: "5s")],
        dependency: {dependency},
        policies: [(name: "p", stack: [{}])],
    )"#,
        layers.join(", ")
    );
    common::run_first(&text)
}

const SLOW: &str = r#"(latency: Constant("200ms"))"#;
const FAILING: &str = r#"(latency: Constant("10ms"), error_rate: Constant(1.0))"#;

#[test]
fn retrying_only_io_exceptions_does_not_retry_timeouts() {
    // TimeLimiter's TimeoutException is not an IOException: a timed-out attempt is not
    // retried, one call per request. A failed call (an IOException) still is: three each.
    let out = import(&yaml("        retryExceptions:\n          - java.io.IOException"));
    assert_eq!(run(&out, SLOW).amplification, 1.0, "{}", out.to_ron());
    assert_eq!(run(&out, FAILING).amplification, 3.0, "{}", out.to_ron());
}

#[test]
fn ignoring_timeouts_wins_over_retrying_every_exception() {
    // retryExceptions Throwable retries everything, but ignoring wins: timeouts not retried.
    let out = import(&yaml(
        "        retryExceptions: java.lang.Throwable\n        ignoreExceptions: java.util.concurrent.TimeoutException",
    ));
    assert_eq!(run(&out, SLOW).amplification, 1.0, "{}", out.to_ron());
    assert_eq!(run(&out, FAILING).amplification, 3.0, "{}", out.to_ron());
}

#[test]
fn retrying_only_timeouts_leaves_failed_calls_alone() {
    let out = import(&yaml("        retryExceptions:\n          - java.util.concurrent.TimeoutException"));
    assert_eq!(run(&out, SLOW).amplification, 3.0, "{}", out.to_ron());
    assert_eq!(run(&out, FAILING).amplification, 1.0, "{}", out.to_ron());
}

#[test]
fn without_lists_every_exception_is_retried_refusals_included() {
    // resilience4j's default retries every throwable, CallNotPermittedException and
    // BulkheadFullException included (RetryConfig's DEFAULT_RECORD_FAILURE_PREDICATE).
    let out = import(&yaml(""));
    let retry = &out.layers[0];
    let refusal = retry.fields.iter().find(|f| f.name == "on_refusal").expect("on_refusal written");
    assert_eq!(refusal.value, "[Layer429, Layer503, Dependency503]");
    assert!(!retry.fields.iter().any(|f| f.name == "on_error" || f.name == "on_timeout"));
    assert_eq!(run(&out, SLOW).amplification, 3.0);
}

#[test]
fn an_unknown_exception_is_warned_at_its_line_and_matches_nothing() {
    let out = import(&yaml(
        "        retryExceptions:\n          - java.io.IOException\n          - com.example.FlakyException",
    ));
    let w = out.warnings.iter().find(|w| w.key == "com.example.FlakyException").expect("a warning");
    // Line 9 of the text, the column of the class name.
    assert_eq!((w.at.line, w.at.col), (9, 13), "{}", out.warning_text(w));
    assert!(w.message.contains("assumed to match none"), "{}", w.message);
    // Timeouts still not retried: the unknown class matched nothing.
    assert_eq!(run(&out, SLOW).amplification, 1.0);
}

#[test]
fn a_list_of_numbers_is_refused_at_the_value() {
    let text = yaml("        retryExceptions:\n          - 42");
    let e = import_text(Some(Library::Resilience4j), Path::new("application.yml"), &text, Some("dep")).unwrap_err();
    assert_eq!((e.line, e.col), (8, 13), "{e}");
    assert!(e.message.contains("expected a class name"), "{e}");
}

/// A resilience4j breaker (4 calls, opening at 50 %) around a 50 ms time limiter, with the
/// breaker's extra options `breaker`, and no retry.
fn breaker_yaml(breaker: &str) -> String {
    format!(
        "resilience4j:
  circuitbreaker:
    instances:
      dep:
        slidingWindowSize: 4
        minimumNumberOfCalls: 4
{breaker}
  timelimiter:
    instances:
      dep:
        timeoutDuration: 50ms
"
    )
}

/// Ten requests 100 ms apart to a dependency that takes 200 ms: every call times out.
fn run_breaker(out: &Imported) -> RunSummary {
    let layers: Vec<String> = out.layers.iter().map(|l| l.ron()).collect();
    let times: Vec<String> = (0..10).map(|i| format!("\"{}ms\"", i * 100)).collect();
    common::run_first(&format!(
        r#"Scenario(
        name: "r4j", horizon: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "5s")],
        dependency: {SLOW},
        policies: [(name: "p", stack: [{}])],
    )"#,
        times.join(", "),
        layers.join(", ")
    ))
}

#[test]
fn a_breaker_recording_only_io_exceptions_counts_timeouts_as_successes() {
    // CircuitBreakerStateMachine.handleThrowable: not ignored, not recorded -> onSuccess. Four
    // timeouts open the default breaker (100 % >= 50 %) and the other six are short-circuited;
    // recording only IOException, the timeouts are successes and it never opens.
    let default = run_breaker(&import(&breaker_yaml("")));
    assert_eq!(default.classes[0].outcomes.short_circuited, 6);
    let out = import(&breaker_yaml("        recordExceptions:\n          - java.io.IOException"));
    let cb = &out.layers[0];
    assert!(cb.fields.iter().any(|f| f.name == "timeoutsAs" && f.value == "Success"), "{}", out.to_ron());
    assert!(!cb.fields.iter().any(|f| f.name == "errorsAs"), "{}", out.to_ron());
    let r = run_breaker(&out);
    assert_eq!((r.classes[0].outcomes.short_circuited, r.classes[0].outcomes.timeout), (0, 10));
}

#[test]
fn a_breaker_ignoring_timeouts_neither_counts_nor_opens_on_them() {
    let out = import(&breaker_yaml("        ignoreExceptions: java.util.concurrent.TimeoutException"));
    assert!(out.layers[0].fields.iter().any(|f| f.name == "timeoutsAs" && f.value == "Ignored"));
    assert_eq!(run_breaker(&out).classes[0].outcomes.short_circuited, 0);
}
