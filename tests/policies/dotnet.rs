//! The .NET standard resilience handler preset (`DotnetStandard`): its expansion is the
//! five hand-written layers, with the handler's documented defaults.

use crate::common;

use std::path::Path;

use brownout::model::{Model, RunOptions};
use brownout::policy::PolicySpec;
use brownout::runner::run_all;
use brownout::scenario::{Scenario, parse, validate};

fn scenario(stacks: &[(&str, &str)]) -> Scenario {
    let sets: Vec<String> =
        stacks.iter().map(|(name, stack)| format!(r#"(name: "{name}", stack: [{stack}])"#)).collect();
    let text = format!(
        r#"Scenario(
        name: "dotnet", horizon: "60s", seed: 7,
        fleet: (instances: 2, workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 150.0), deadline: "5s")],
        dependency: (latency: LogNormal(median: "80ms", sigma: 1.0), error_rate: Constant(0.08),
            modes: [(at: "20s", mode: Unavailable), (at: "30s", mode: Healthy)]),
        policies: [{}],
    )"#,
        sets.join(", ")
    );
    common::scenario(&text)
}

#[test]
fn the_preset_runs_exactly_as_the_five_hand_written_layers() {
    let preset = r#"(policy: DotnetStandard((rate_limiter_permits: 40, total_timeout: "3s",
        max_retry_attempts: 2, retry_backoff: Exponential, retry_delay: "100ms", failure_ratio: 0.5,
        minimum_throughput: 20, sampling_duration: "2s", break_duration: "1s", attempt_timeout: "250ms")))"#;
    let by_hand = r#"(policy: Limiter((permits: 40))), (policy: Timeout((timeout: "3s"))),
        (policy: Retry((max_attempts: 3, backoff: "100ms", multiplier: 2.0))),
        (policy: Polly((FailureRatio: 0.5, MinimumThroughput: 20, SamplingDuration: "2s", BreakDuration: "1s"))),
        (policy: Timeout((timeout: "250ms")))"#;
    let s = scenario(&[("preset", preset), ("by_hand", by_hand)]);
    let runs = common::run(&s).summary.runs;
    let json = |i: usize| {
        let mut v = serde_json::to_value(&runs[i]).unwrap();
        v["policy"] = serde_json::Value::Null; // the label, which differs
        v
    };
    assert_eq!(json(0), json(1));
    // The run exercises the breaker and the retries (the outage opens it; errors and
    // timeouts are retried).
    let c = &runs[0].classes[0];
    assert!(c.outcomes.short_circuited > 0 && c.outcomes.ok > 0, "{:?}", c.outcomes);
    assert!(runs[0].amplification > 1.0, "{}", runs[0].amplification);
}

#[test]
fn the_defaults_are_the_handlers() {
    // AddStandardResilienceHandler's documented defaults, written out in the preset's syntax
    // and as the five layers.
    let s = scenario(&[
        ("defaults", "(policy: DotnetStandard(()))"),
        (
            "spelled",
            r#"(policy: DotnetStandard((rate_limiter_permits: 1000, rate_limiter_queue: 0,
            total_timeout: "30s", max_retry_attempts: 3, retry_backoff: Exponential, retry_delay: "2s",
            retry_use_jitter: true, failure_ratio: 0.1, minimum_throughput: 100, sampling_duration: "30s",
            break_duration: "5s", attempt_timeout: "10s")))"#,
        ),
        (
            "layers",
            r#"(policy: Limiter((permits: 1000, queue: 0))), (policy: Timeout((timeout: "30s"))),
            (policy: Retry((max_attempts: 4, backoff: "2s", multiplier: 2.0, jitter: 0.0, on_timeout: true))),
            (policy: Polly((FailureRatio: 0.1, MinimumThroughput: 100, SamplingDuration: "30s", BreakDuration: "5s"))),
            (policy: Timeout((timeout: "10s")))"#,
        ),
    ]);
    assert_eq!(s.policies[0].stack, s.policies[1].stack);
    let PolicySpec::DotnetStandard(c) = &s.policies[0].stack[0].policy else { panic!("not the preset") };
    let layers: Vec<PolicySpec> = s.policies[2].stack.iter().map(|l| l.policy.clone()).collect();
    assert_eq!(c.expand(), layers);
}

#[test]
fn constant_backoff_keeps_the_delay() {
    let s = scenario(&[("c", r#"(policy: DotnetStandard((retry_backoff: Constant, retry_delay: "300ms")))"#)]);
    let PolicySpec::DotnetStandard(c) = &s.policies[0].stack[0].policy else { panic!("not the preset") };
    let PolicySpec::Retry(r) = &c.expand()[2] else { panic!("the third layer is the retry") };
    assert_eq!((r.backoff.ns(), r.multiplier), (300_000_000, 1.0));
}

/// The validation error of a preset layer `layer` and, with `others`, more layers.
fn refusal(layer: &str) -> String {
    let text = format!(
        r#"Scenario(
        name: "dotnet", horizon: "1s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 1.0), deadline: "1s")],
        dependency: (latency: Constant("1ms")),
        policies: [(name: "p", stack: [{layer}])],
    )"#
    );
    let s = parse(Path::new("inline.ron"), &text).unwrap_or_else(|e| panic!("{e}"));
    format!("{:?}", validate(&s).unwrap_err())
}

#[test]
fn what_dotnet_refuses_or_brownout_cannot_express_is_refused_naming_the_field() {
    let err = refusal("(policy: DotnetStandard((retry_backoff: Linear)))");
    assert!(err.contains("DotnetStandard.retry_backoff") && err.contains("Linear"), "{err}");
    let err = refusal(r#"(policy: DotnetStandard((attempt_timeout: "30s")))"#);
    assert!(err.contains("DotnetStandard.total_timeout"), "{err}");
    let err = refusal(r#"(policy: DotnetStandard((attempt_timeout: "20s", total_timeout: "60s")))"#);
    assert!(err.contains("DotnetStandard.sampling_duration"), "{err}");
    let err = refusal("(policy: DotnetStandard((failure_ratio: 0.0)))");
    assert!(err.contains("DotnetStandard.failure_ratio"), "{err}");
}

#[test]
fn the_five_layers_count_towards_the_stack_limit() {
    // 5 + 4 = 9 layers: over the limit of 8.
    let four = r#"(policy: Timeout((timeout: "1s"))), "#.repeat(4);
    let err = refusal(&format!("(policy: DotnetStandard(())), {four}"));
    assert!(err.contains("has 9 layers"), "{err}");
}

/// Issue 32: a million .NET retries ran 60 M calls in 25 s and `amplification` read 0.0 (no
/// request ever finished, so none counted). Validation now refuses the layer
/// (`scenario::estimate`); the model does not validate, so this checks the run's own cap: each
/// request stops at `limits.max_attempts` and amplification is its calls per request.
#[test]
fn dotnet_retries_stop_at_max_attempts_and_amplification_counts_them() {
    let text = r#"Scenario(
        name: "dotnet", horizon: "10s", seed: 7,
        fleet: (workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 100.0), deadline: "5s")],
        dependency: (latency: Constant("1ms"), error_rate: Constant(1.0)),
        limits: (max_attempts: 4),
        policies: [(name: "p", stack: [(policy: DotnetStandard((max_retry_attempts: 3, retry_delay: "0s",
            retry_use_jitter: false, minimum_throughput: 1000000000)))])],
    )"#;
    let run = |retries: &str| {
        let s = parse(Path::new("inline.ron"), &text.replace("max_retry_attempts: 3", retries)).unwrap();
        let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
        run_all(&model, RunOptions::default(), false).unwrap().summary.runs.remove(0)
    };
    // Every call fails and the breaker never has its throughput: 3 retries make 4 calls a
    // request, amplification 4 by hand (calls / requests that called).
    let within = run("max_retry_attempts: 3");
    let c = &within.classes[0];
    assert!(c.requests > 500, "{}", c.requests);
    assert_eq!(c.outcomes.error, c.requests);
    assert_eq!(within.amplification, 4.0);
    // A million retries (validation would refuse them) stop at the same 4 attempts.
    let over = run("max_retry_attempts: 1000000");
    assert_eq!(over.classes[0].outcomes.error, c.outcomes.error);
    assert_eq!(over.amplification, 4.0);
}
