//! Layers outside a retry layer see one call per request: the one they admitted. They must
//! hear its completion under the id they admitted it with (the first attempt's), not the
//! id of whichever retry ended the request, or any layer that tracks calls by id leaks them.

use std::path::Path;

use brownout::metrics::summary::RunSummary;
use brownout::model::{Model, RunOptions};
use brownout::runner::run_all;
use brownout::scenario::{parse, validate};

fn run(text: &str) -> RunSummary {
    let s = parse(Path::new("inline.ron"), text).unwrap_or_else(|e| panic!("{e}"));
    validate(&s).unwrap_or_else(|e| panic!("{e:?}"));
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_all(&model, RunOptions::default(), false).unwrap().summary.runs.remove(0)
}

/// One instance with ample slots and pool; `n` requests one second apart (so never two in
/// flight at once); the dependency answers every call with an error after 100 ms; `stack`.
fn scenario(n: usize, stack: &str) -> String {
    let times: Vec<String> = (0..n).map(|i| format!("\"{i}s\"")).collect();
    format!(
        r#"Scenario(
        name: "outer-ids", horizon: "20s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "10s")],
        dependency: (latency: Constant("100ms"), error_rate: Constant(1.0)),
        policies: [(name: "p", stack: [{stack}])],
    )"#,
        times.join(", ")
    )
}

#[test]
fn envoy_thresholds_outside_a_retry_get_every_request_back() {
    // Each request: attempt 1 fails at +100 ms, the retry (no backoff) fails at +200 ms, the
    // request ends in error at +200 ms, long before the next arrives. Envoy (outermost)
    // holds at most one active request, so with max_requests 2 it never overflows
    // (envoy.rs `admit`: refuse only when `active >= max_requests`): 8 errors, 0 refusals,
    // 2 calls per request.
    let stack = r#"(policy: EnvoyThresholds((thresholds: [(max_connections: 3, max_pending_requests: 0,
        max_requests: 2)]))), (policy: Retry((max_attempts: 2)))"#;
    let r = run(&scenario(8, stack));
    let c = &r.classes[0];
    assert_eq!((c.outcomes.error, c.outcomes.rejected), (8, 0), "{:?}", c.outcomes);
    assert!((r.amplification - 2.0).abs() < 1e-9, "{}", r.amplification);
}

#[test]
fn an_adaptive_limiter_outside_a_retry_samples_the_request_it_admitted() {
    // One request, admitted by AIMD (limit 2) with 1 in flight; both attempts fail with
    // errors (not drops: gate.rs `complete`), so the sample at +200 ms is good with
    // inflight 1, and 1 * 2 >= 2 raises the limit to 3 (aimd.rs `update`, Netflix
    // AIMDLimit). A sample lost to a wrong id leaves it at 2.
    let stack = r#"(policy: Aimd((initial_limit: 2, min_limit: 1, max_limit: 10))),
        (policy: Retry((max_attempts: 2)))"#;
    let r = run(&scenario(1, stack));
    let limit = r.limit.as_ref().expect("the stack has a limiter");
    assert_eq!(r.classes[0].outcomes.error, 1);
    assert_eq!(limit.max, 3.0, "{limit:?}");
}

#[test]
fn an_ageing_error_rate_breaker_outside_a_retry_counts_the_request_it_admitted() {
    // With in-flight ageing the breaker tracks admitted calls by id and drops a completion
    // it does not track (error_rate.rs `complete`). Request 1 (at 0 s) fails after its
    // retry at 200 ms, well under the 5 s slow threshold: one failed call of one, at least
    // minimum_calls 1 and over the 50 % default threshold, so the breaker opens for 30 s
    // and request 2 (at 1 s) is short-circuited.
    let stack = r#"(policy: ErrorRateBreaker((window: Count(10), minimum_calls: 1,
        slow_call_duration_threshold: Some("5s"), break_duration: "30s", inflight_ageing: true))),
        (policy: Retry((max_attempts: 2)))"#;
    let r = run(&scenario(2, stack));
    let c = &r.classes[0];
    assert_eq!((c.outcomes.error, c.outcomes.short_circuited), (1, 1), "{:?}", c.outcomes);
}
