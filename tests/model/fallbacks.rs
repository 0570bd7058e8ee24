//! Fallbacks without a catalogue (issue 20): fail open, fail closed and the class's last
//! answer, each in a scenario whose counts follow by hand; and `check` refusing a fallback
//! that cannot take effect.
//!
//! Every scenario here sends one request every 100 ms, at 0.05 s, 0.15 s, ..., 9.95 s (100
//! requests over a 10 s horizon, no warm-up), to a dependency that answers in 10 ms.

use crate::common::run_first as run;

use std::process::Command;

use brownout::metrics::summary::{ClassSummary, RunSummary};

/// The arrival times, as RON durations.
fn every_100ms() -> String {
    (0..100).map(|k| format!("\"{}ms\"", 50 + 100 * k)).collect::<Vec<_>>().join(", ")
}

/// A one-class scenario: `class` adds fields to the class, `rest` adds top-level fields.
fn scenario(class: &str, dependency: &str, stack: &str, rest: &str) -> String {
    format!(
        r#"Scenario(
    name: "fb",
    horizon: "10s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "pay", arrivals: Scripted(times: [{}]), deadline: "1s", {class})],
    dependency: (latency: Constant("10ms"), {dependency}),
    policies: [(name: "p", stack: [{stack}])],
    {rest}
)"#,
        every_100ms()
    )
}

fn class(r: &RunSummary) -> &ClassSummary {
    &r.classes[0]
}

/// The dependency fails every call at once from 2 s to 5 s: the 30 requests at 2.05 ... 4.95 s.
const DOWN_2S_TO_5S: &str = r#"modes: [(at: "2s", mode: Unavailable), (at: "5s", mode: Healthy)]"#;

#[test]
fn fail_open_answers_every_failed_call_and_costs_per_use() {
    let text = scenario(
        "fallback: OnRefusalOrFailure, fallback_answer: FailOpen(cost_per_use: 0.25), order_fraction: 1.0",
        DOWN_2S_TO_5S,
        "",
        "business: (substitution_allowance: 0.5, degraded_substitution_allowance: 0.5, substitution_cost: 1, \
         refund_cost: 1, lost_order_cost: 7),",
    );
    let r = run(&text);
    let c = class(&r);
    assert_eq!(c.requests, 100);
    assert_eq!(c.outcomes.ok, 70, "the 70 requests outside 2-5 s");
    assert_eq!(c.outcomes.fallback, 30, "fallback answers, not dependency successes");
    assert_eq!(c.outcomes.error, 0);
    let a = c.fallback_answers.expect("a FailOpen class reports its answers");
    assert_eq!((a.open, a.closed, a.cached), (30, 0, 0));
    // 30 uses x 0.25; no order is lost: a fail-open answer carries the order.
    assert_eq!(a.cost, 7.5);
    assert_eq!(c.orders, 100);
    assert_eq!(c.lost_orders, 0);
    assert_eq!(c.business_cost, 7.5);
    assert_eq!(r.business_cost, 7.5);
    // Fail open counts as an in-time answer for the caller: all 100 in 10 s.
    assert_eq!(c.goodput_per_s, 10.0);
    assert_eq!(c.goodput_ratio, 1.0);
    assert_eq!(c.fresh_goodput_per_s, 7.0);
    assert_eq!(r.dependency.calls, 100, "every request called; the failed ones fell back");
}

#[test]
fn fail_closed_on_refusal_answers_each_refused_call_and_loses_its_order() {
    // One permit and calls of 150 ms: the request at 0.05 s holds the permit until 0.20 s, so
    // the one at 0.15 s is refused; the one at 0.25 s gets it, 0.35 s is refused, and so on:
    // the 50 requests at 0.15, 0.35, ..., 9.95 s are refused, as fallbacks (`refuse_as`).
    let text = scenario(
        "fallback: OnRefusal, fallback_answer: FailClosed(cost_per_use: 2.0), order_fraction: 1.0",
        "",
        "(policy: Limiter((permits: 1, refuse_as: Fallback)))",
        "business: (substitution_allowance: 0.5, degraded_substitution_allowance: 0.5, substitution_cost: 1, \
         refund_cost: 1, lost_order_cost: 7),",
    )
    .replace("Constant(\"10ms\")", "Constant(\"150ms\")");
    let r = run(&text);
    let c = class(&r);
    assert_eq!(c.outcomes.ok, 50);
    assert_eq!(c.outcomes.fallback, 50);
    assert_eq!(c.outcomes.rejected, 0, "every refusal was answered by the fallback");
    let a = c.fallback_answers.unwrap();
    assert_eq!((a.open, a.closed, a.cached), (0, 50, 0));
    assert_eq!(a.cost, 100.0, "50 uses x 2.0");
    // A definite refusal is not what the caller asked for: not in goodput, its order lost.
    assert_eq!(c.goodput_per_s, 5.0);
    assert_eq!(c.goodput_ratio, 0.5);
    assert_eq!(c.lost_orders, 50);
    assert_eq!(c.business_cost, 50.0 * 7.0 + 100.0);
    assert_eq!(r.dependency.calls, 50);
}

#[test]
fn last_answer_serves_the_last_success_until_it_is_too_old() {
    // The last success before the outage is the request at 1.95 s, answered at 1.96 s. With
    // max_age 2 s the requests at 2.05 ... 3.95 s (20) get it, aged 0.09 ... 1.99 s; those at
    // 4.05 ... 4.95 s (10) are older than that and fail.
    let text = scenario(
        "fallback: OnRefusalOrFailure, fallback_answer: LastAnswer(cost_per_use: 0.5, max_age: \"2s\")",
        DOWN_2S_TO_5S,
        "",
        "",
    );
    let r = run(&text);
    let c = class(&r);
    assert_eq!(c.outcomes.ok, 70);
    assert_eq!(c.outcomes.fallback, 20);
    assert_eq!(c.outcomes.error, 10);
    let a = c.fallback_answers.unwrap();
    assert_eq!((a.open, a.closed, a.cached), (0, 0, 20));
    assert_eq!(a.cost, 10.0, "20 uses x 0.5");
    assert_eq!(r.business_cost, 10.0);
    // The oldest answer served was 1.99 s old (histograms keep 3 significant digits).
    assert!((c.staleness_ms.max - 1990.0).abs() <= 2.0, "{}", c.staleness_ms.max);
    // Ages 90, 190, ..., 1990 ms: the median lies between the 10th and 11th, 990 and 1090 ms.
    assert!((989.0..=1091.0).contains(&c.staleness_ms.p50), "{}", c.staleness_ms.p50);
    assert_eq!(c.stale_wrong, 0, "without a catalogue no answer is known to be wrong");
    assert_eq!(c.goodput_ratio, 0.9, "cached answers are answers");
}

#[test]
fn a_restart_forgets_the_last_answer_unless_the_cache_persists() {
    // As above without max_age; the instance restarts at 3 s (no request is in flight then).
    // Without a persistent cache only the 10 requests at 2.05 ... 2.95 s get the last answer.
    for (persistent, cached) in [(false, 10), (true, 30)] {
        let text = scenario("fallback: OnRefusalOrFailure, fallback_answer: LastAnswer()", DOWN_2S_TO_5S, "", "")
            .replace(
                "acquire_timeout: \"1s\")",
                &format!(
                    "acquire_timeout: \"1s\"), restarts: [(at: \"3s\", instances: [0], persistent_cache: {persistent})]"
                ),
            );
        let c = class(&run(&text)).clone();
        assert_eq!(c.fallback_answers.unwrap().cached, cached, "persistent_cache: {persistent}");
        assert_eq!(c.outcomes.error, 30 - cached);
    }
}

#[test]
fn a_catalogue_fallback_reports_no_fallback_answers() {
    let text =
        scenario("fallback: OnRefusalOrFailure", DOWN_2S_TO_5S, "", "catalogue: (items: 1, changes_per_hour: 0),");
    let c = class(&run(&text)).clone();
    assert_eq!(c.outcomes.fallback, 30, "the prewarmed catalogue answers the outage");
    assert_eq!(c.fallback_answers, None);
}

/// `brownout check` on `text`: (exit code, stderr).
fn check(text: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.ron"), text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_brownout")).arg("check").arg("s.ron").current_dir(dir.path()).output();
    let out = out.unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The 1-based line and column of byte `at` of `text`.
fn position(text: &str, at: usize) -> (usize, usize) {
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

#[test]
fn check_refuses_fallbacks_that_cannot_take_effect_at_their_value() {
    let limiter = "(policy: Limiter((permits: 1, refuse_as: Fallback)))";
    let timeout = "(policy: Timeout((timeout: \"50ms\")))";
    // (class fields, stack, the text the error must point at, words the message must hold)
    let cases = [
        ("fallback: OnRefusalOrFailure", "", "OnRefusalOrFailure", "no catalogue"),
        ("fallback_answer: FailOpen(cost_per_use: 1)", limiter, "FailOpen", "fallback is None"),
        (
            "fallback: OnRefusal, calls_dependency: false, fallback_answer: LastAnswer()",
            limiter,
            "LastAnswer",
            "never calls the dependency",
        ),
        ("fallback: OnRefusal, fallback_answer: FailClosed()", timeout, "OnRefusal", "can refuse"),
        ("fallback: OnRefusal, fallback_answer: FailClosed(cost_per_use: -1)", limiter, "-1", "cost_per_use"),
        ("fallback: OnRefusal, fallback_answer: LastAnswer(max_age: \"0s\")", limiter, "\"0s\"", "max_age"),
    ];
    for (fields, stack, at, words) in cases {
        let text = scenario(fields, "", stack, "");
        let (code, stderr) = check(&text);
        assert_eq!(code, Some(2), "{fields}: {stderr}");
        let (line, col) = position(&text, text.find(fields).unwrap() + fields.find(at).unwrap());
        assert!(stderr.contains(&format!("s.ron:{line}:{col}")), "{fields}: want s.ron:{line}:{col} in {stderr}");
        assert!(stderr.contains(words), "{fields}: want {words:?} in {stderr}");
    }
}

/// A refusal as 429 never falls back (`refuse_as: Rejected`, a bulkhead class with
/// `on_full: Reject` or `Wait`, Envoy's thresholds, shedding by deadline), so a class that falls
/// back `OnRefusal` behind such layers only would never use its fallback: `check` refuses it
/// at the class's `fallback`.
#[test]
fn check_refuses_a_fallback_on_refusal_behind_layers_that_only_answer_429() {
    let fields = "fallback: OnRefusal, fallback_answer: FailOpen()";
    for stack in [
        "(policy: Limiter((permits: 1)))",
        "(policy: Limiter((permits: 1, refuse_as: Rejected))), (policy: Aimd((refuse_as: Rejected)))",
        "(policy: TieredBulkhead((permits: 1, classes: [(name: \"pay\", share: 1, on_full: Reject)])))",
        "(policy: TieredBulkhead((permits: 1, classes: [(name: \"pay\", share: 1, on_full: Wait(\"1s\"))])))",
        "(policy: EnvoyThresholds((thresholds: [(max_requests: 1)])))",
        "(policy: ShedByDeadline((min_remaining: \"100ms\")))",
        // A layer that could fall back, but over another class only.
        "(policy: Limiter((permits: 1, refuse_as: Fallback)), classes: [\"other\"])",
    ] {
        // The scenario's classes come before the stack, which may name "pay" too.
        let text = scenario(fields, "", stack, "").replacen(
            "classes: [(name: \"pay\"",
            "classes: [(name: \"other\", arrivals: Poisson(rate_per_s: 1), deadline: \"1s\"), (name: \"pay\"",
            1,
        );
        let (code, stderr) = check(&text);
        assert_eq!(code, Some(2), "{stack}: {stderr}");
        let (line, col) = position(&text, text.find(fields).unwrap() + fields.find("OnRefusal").unwrap());
        assert!(stderr.contains(&format!("s.ron:{line}:{col}")), "{stack}: want s.ron:{line}:{col} in {stderr}");
        assert!(stderr.contains("429"), "{stack}: want the reason in {stderr}");
    }
}

#[test]
fn run_refuses_what_check_refuses_and_writes_nothing() {
    let text = scenario("fallback: OnRefusalOrFailure", "", "", "");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.ron"), &text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_brownout"))
        .args(["run", "s.ron", "--out", "out"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no catalogue"));
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_fallback_that_can_take_effect_passes_check() {
    let limiter = "(policy: Limiter((permits: 1, refuse_as: Fallback)))";
    for (fields, stack) in [
        ("fallback: OnRefusal, fallback_answer: FailOpen()", limiter),
        (
            "fallback: OnRefusal, fallback_answer: FailOpen()",
            "(policy: ConsecutiveBreaker((failures: 1, break_duration: \"1s\")))",
        ),
        (
            "fallback: OnRefusal, fallback_answer: FailOpen()",
            "(policy: TieredBulkhead((permits: 1, classes: [(name: \"pay\", share: 1, on_full: FallbackNow)])))",
        ),
        // One layer of the stack that can fall back is enough, beside one that answers 429.
        (
            "fallback: OnRefusal, fallback_answer: FailOpen()",
            "(policy: Limiter((permits: 1))), (policy: Vegas((refuse_as: Fallback)))",
        ),
        ("fallback: OnRefusalOrFailure, fallback_answer: FailClosed(cost_per_use: 3)", ""),
        ("fallback: OnRefusalOrFailure, fallback_answer: LastAnswer(max_age: \"1m\")", ""),
        ("fallback: None", ""),
    ] {
        let (code, stderr) = check(&scenario(fields, "", stack, ""));
        assert_eq!(code, Some(0), "{fields}: {stderr}");
    }
}
