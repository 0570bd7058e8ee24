//! What the rest of brownout needs to know about each policy, for one configuration of every
//! registered policy (two where a setting changes the answer): the `causes` counter its
//! refusals land in, whether its refusal lets a class's fallback answer, how many outcomes it
//! keeps per instance for the memory estimate, how many attempts it may make per call, whether
//! it may make more than one call per request, and how many layers it stands for. The expected
//! values are the table the hand-written matches held before these facts moved into each
//! policy's `PolicyConfig` impl (model/world/outcome.rs `layer_kind`, scenario/fallback.rs
//! `refuses_into_fallback`, scenario/estimate.rs `layer_bytes` and `check_attempts`,
//! decide/feasible.rs `several_calls`, policy/dotnet.rs `layer_count`; this test passed on
//! them, and again on the five methods each policy wrote before they became one `facts`);
//! the window sizes are worked from the literals below. `RateLimit` and `NginxLimitReq`
//! (added later) refuse like a limiter: counted in `limiter_refused`, falling back only with
//! `refuse_as: Fallback` (RateLimit; nginx's `limit_req` answers its status, never a fallback).

use crate::metrics::LayerKind;
use crate::policy::PolicySpec;

/// The facts of one configuration, as the rest of brownout reads them.
#[derive(Debug, PartialEq)]
struct Seen {
    kind: LayerKind,
    /// Refusing class "a", class "b" lets their fallback answer.
    fallback: (bool, bool),
    samples: f64,
    attempts: f64,
    more_calls: bool,
    layers: usize,
}

fn facts(p: &PolicySpec) -> Seen {
    let f = p.facts();
    Seen {
        kind: f.layer,
        fallback: (f.fallback.admits("a"), f.fallback.admits("b")),
        samples: f.window_samples,
        attempts: f.attempts_per_call,
        more_calls: f.may_call_again,
        layers: p.layer_count(),
    }
}

/// The policies the hand-written tables knew, and two added later; a policy registered later
/// needs no row here.
const REGISTERED: [&str; 27] = [
    "Timeout",
    "Retry",
    "ConsecutiveBreaker",
    "Limiter",
    "Hedge",
    "Plugin",
    "Aimd",
    "Vegas",
    "Gradient2",
    "EnvoyGradient",
    "TieredBulkhead",
    "RetryBudget",
    "GrpcThrottle",
    "AdaptiveRetry",
    "ErrorRateBreaker",
    "LatencyBreaker",
    "Resilience4j",
    "Polly",
    "Hystrix",
    "Sentinel",
    "ShedByDeadline",
    "EnvoyThresholds",
    "DotnetStandard",
    "Import",
    "Opossum",
    "RateLimit",
    "NginxLimitReq",
];

fn f(kind: LayerKind, fallback: (bool, bool), samples: f64, attempts: f64, more_calls: bool, layers: usize) -> Seen {
    Seen { kind, fallback, samples, attempts, more_calls, layers }
}

fn table() -> Vec<(&'static str, Seen)> {
    use LayerKind::{Breaker, Bulkhead, Limiter, Other, Shed};
    const NO: (bool, bool) = (false, false);
    const YES: (bool, bool) = (true, true);
    vec![
        (r#"Timeout((timeout: "2s"))"#, f(Other, NO, 0.0, 1.0, false, 1)),
        (r#"Retry((max_attempts: 3, backoff: "100ms"))"#, f(Other, NO, 0.0, 3.0, true, 1)),
        (r#"ConsecutiveBreaker((failures: 5, break_duration: "5s", probes: 1))"#, f(Breaker, YES, 0.0, 1.0, false, 1)),
        ("Limiter((permits: 12))", f(Limiter, NO, 0.0, 1.0, false, 1)),
        ("Limiter((permits: 12, refuse_as: Fallback))", f(Limiter, YES, 0.0, 1.0, false, 1)),
        (r#"Hedge((delay: Some("50ms")))"#, f(Other, NO, 0.0, 1.0, true, 1)),
        (r#"Plugin((name: "in-house"))"#, f(Other, YES, 0.0, 1.0, true, 1)),
        ("Aimd(())", f(Limiter, NO, 0.0, 1.0, false, 1)),
        ("Aimd((refuse_as: Fallback))", f(Limiter, YES, 0.0, 1.0, false, 1)),
        ("Vegas(())", f(Limiter, NO, 0.0, 1.0, false, 1)),
        ("Vegas((refuse_as: Fallback))", f(Limiter, YES, 0.0, 1.0, false, 1)),
        ("Gradient2(())", f(Limiter, NO, 0.0, 1.0, false, 1)),
        ("Gradient2((refuse_as: Fallback))", f(Limiter, YES, 0.0, 1.0, false, 1)),
        (
            r#"EnvoyGradient((concurrency_update_interval: "1s", min_rtt_calc_interval: "30s"))"#,
            f(Limiter, NO, 0.0, 1.0, false, 1),
        ),
        (
            r#"EnvoyGradient((concurrency_update_interval: "1s", min_rtt_calc_interval: "30s", refuse_as: Fallback))"#,
            f(Limiter, YES, 0.0, 1.0, false, 1),
        ),
        (
            r#"TieredBulkhead((permits: 40, classes: [(name: "a", share: 0.5, on_full: FallbackNow),
                (name: "b", share: 0.5, on_full: Wait("3s"))]))"#,
            f(Bulkhead, (true, false), 0.0, 1.0, false, 1),
        ),
        ("RetryBudget(())", f(Other, NO, 0.0, 1.0, false, 1)),
        ("GrpcThrottle((max_tokens: 10, token_ratio: 0.1))", f(Other, NO, 0.0, 1.0, false, 1)),
        ("AdaptiveRetry(())", f(Other, NO, 0.0, 1.0, false, 1)),
        // 50 outcomes in the window and 4 half-open calls.
        (
            r#"ErrorRateBreaker((window: Count(50), minimum_calls: 20, failure_rate_threshold: 50.0,
                break_duration: "10s", half_open_calls: 4))"#,
            f(Breaker, YES, 54.0, 1.0, false, 1),
        ),
        // 6 buckets and 4 half-open calls.
        (
            r#"ErrorRateBreaker((window: Time(buckets: 6, bucket: "1s"), minimum_calls: 20,
                failure_rate_threshold: 50.0, break_duration: "10s", half_open_calls: 4))"#,
            f(Breaker, YES, 10.0, 1.0, false, 1),
        ),
        (
            r#"LatencyBreaker((window: "10s", percentile: 0.95, threshold: "1s", consecutive: 3,
                break_duration: "30s", probes: 1))"#,
            f(Breaker, YES, 0.0, 1.0, false, 1),
        ),
        // 40 in the sliding window and 7 permitted half-open calls.
        (
            "Resilience4j((slidingWindowSize: 40, permittedNumberOfCallsInHalfOpenState: 7))",
            f(Breaker, YES, 47.0, 1.0, false, 1),
        ),
        ("Polly(())", f(Breaker, YES, 0.0, 1.0, false, 1)),
        // 10 s window in 500 ms health snapshots: 20 buckets.
        (
            "Hystrix((metricsRollingStatisticalWindowInMilliseconds: 10000, \
             metricsHealthSnapshotIntervalInMilliseconds: 500))",
            f(Breaker, YES, 20.0, 1.0, false, 1),
        ),
        ("Sentinel((count: 1000, timeWindow: 10))", f(Breaker, YES, 0.0, 1.0, false, 1)),
        (r#"ShedByDeadline((min_remaining: "50ms"))"#, f(Shed, NO, 0.0, 1.0, false, 1)),
        ("EnvoyThresholds(())", f(Limiter, NO, 0.0, 1.0, false, 1)),
        // Five layers, its retry making max_retry_attempts + 1 = 4 attempts.
        ("DotnetStandard((max_retry_attempts: 3))", f(Other, YES, 0.0, 4.0, true, 5)),
        (r#"Import((file: "application.yml"))"#, f(Other, YES, 0.0, 1.0, true, 1)),
        ("Opossum((rolling_count_buckets: 12))", f(Breaker, YES, 12.0, 1.0, false, 1)),
        ("RateLimit((rate_per_s: 90.0, burst: 20))", f(Limiter, NO, 0.0, 1.0, false, 1)),
        ("RateLimit((rate_per_s: 90.0, burst: 20, refuse_as: Fallback))", f(Limiter, YES, 0.0, 1.0, false, 1)),
        ("NginxLimitReq((rate: PerSecond(50), burst: 20, status: 429))", f(Limiter, NO, 0.0, 1.0, false, 1)),
    ]
}

/// A bulkhead's rule names its `FallbackNow` classes and no other; a limiter's follows
/// `refuse_as`.
#[test]
fn fallback_rules_admit_the_classes_they_name() {
    use crate::policy::FallbackRule;
    let bulkhead = FallbackRule::Classes(vec!["a".into(), "c".into()]);
    assert_eq!(["a", "b", "c"].map(|c| bulkhead.admits(c)), [true, false, true]);
    assert!(FallbackRule::Always.admits("z") && !FallbackRule::Never.admits("a"));
    assert_eq!(FallbackRule::when(true), FallbackRule::Always);
    assert_eq!(FallbackRule::when(false), FallbackRule::Never);
}

#[test]
fn every_policy_states_its_facts_as_the_old_tables_did() {
    let mut seen = std::collections::BTreeSet::new();
    for (text, want) in table() {
        let spec: PolicySpec = ron::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        seen.insert(spec.name());
        assert_eq!(facts(&spec), want, "{text}");
    }
    assert_eq!(seen, REGISTERED.into_iter().collect::<std::collections::BTreeSet<_>>(), "a policy has no row");
}
