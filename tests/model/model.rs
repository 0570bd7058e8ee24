//! End-to-end properties of the model: determinism, conservation, limits, and metrics whose
//! values are worked out by hand from small scripted scenarios.

use crate::common::scenario;

use std::path::Path;

use brownout::metrics::summary::ScenarioSummary;
use brownout::model::{Model, RunOptions};
use brownout::output::summary_json;
use brownout::runner::{ScenarioResult, run_all};
use brownout::scenario::{Scenario, load_text};

fn run(s: &Scenario, seed: u64, parallel: bool) -> ScenarioResult {
    let model = Model::build(s, seed, Path::new(".")).unwrap();
    run_all(&model, RunOptions::default(), parallel).expect("runs")
}

/// A busy random scenario: Poisson traffic, log-normal drifting latency, errors, a pool
/// smaller than the load needs at the peak, and several policies.
const RANDOM: &str = r#"Scenario(
    name: "random", horizon: "60s", window: "5s",
    fleet: (instances: 3, workers: (slots: 40, queue: 20, max_wait: "200ms"),
            pool: (max_connections: 10, acquire_timeout: "300ms"), overhead: "2ms"),
    classes: [
        (name: "a", arrivals: Poisson(rate_per_s: 120.0), deadline: "1s", fallback: OnRefusalOrFailure),
        (name: "b", arrivals: Poisson(rate_per_s: 40.0), deadline: "3s"),
        (name: "local", arrivals: Poisson(rate_per_s: 50.0), deadline: "100ms", calls_dependency: false,
         work: Exponential(mean: "10ms")),
    ],
    dependency: (latency: LogNormal(median: "80ms", sigma: 0.6),
                 drift: Ramp(start: "10s", end: "30s", from: 1.0, to: 8.0),
                 error_rate: Constant(0.05)),
    catalogue: (items: 500, changes_per_hour: 30.0),
    policies: [
        (name: "none"),
        (name: "timeout-retry", stack: [
            (policy: Retry((max_attempts: 3, backoff: "50ms", multiplier: 2.0, jitter: 1.0))),
            (policy: Timeout((timeout: "400ms"))),
        ]),
        (name: "breaker", stack: [(policy: ConsecutiveBreaker((failures: 5, break_duration: "2s")))]),
        (name: "limit", stack: [(policy: Limiter((permits: 6, queue: 4, max_wait: "100ms")))]),
    ],
)"#;

#[test]
fn same_seed_gives_byte_identical_summary_on_any_thread_count() {
    let s = scenario(RANDOM);
    let a = summary_json(&run(&s, 7, true).summary).unwrap();
    let b = summary_json(&run(&s, 7, false).summary).unwrap();
    assert_eq!(a, b);
    let c = summary_json(&run(&s, 8, true).summary).unwrap();
    assert_ne!(a, c, "another seed must give other numbers");
}

#[test]
fn the_summary_does_not_depend_on_keeping_the_time_series() {
    // Sweeps run without the time series, `brownout run` with it: the recorder then skips
    // the window records, which must leave every summary figure as it was. A warm-up that
    // ends inside a window and a window that does not divide the horizon exercise the edges.
    let s =
        scenario(&RANDOM.replace(r#"horizon: "60s", window: "5s""#, r#"horizon: "61s", warmup: "7s", window: "4s""#));
    assert_eq!(s.warmup.ns(), 7_000_000_000, "the replacement took");
    let model = Model::build(&s, 11, Path::new(".")).unwrap();
    let with = run_all(&model, RunOptions::new().with_timeseries(true), false).expect("runs");
    let without = run_all(&model, RunOptions::new(), false).expect("runs");
    // 16 windows (15 of 4 s and one of 1 s) x 3 classes x 4 policies.
    assert_eq!(with.rows.len(), 16 * 3 * 4);
    assert!(without.rows.is_empty());
    assert_eq!(summary_json(&with.summary).unwrap(), summary_json(&without.summary).unwrap());
}

#[test]
fn every_request_ends_in_exactly_one_outcome_or_is_in_flight() {
    let s = scenario(RANDOM);
    let r = run(&s, 3, true);
    for (meta, sum) in r.runs.iter().zip(&r.summary.runs) {
        let finished: u64 = sum.classes.iter().map(|c| c.outcomes.total()).sum();
        assert_eq!(finished + sum.in_flight_at_end, meta.requests, "policy {}", meta.policy);
        assert!(meta.requests > 10_000);
    }
}

#[test]
fn limits_are_never_exceeded() {
    let s = scenario(RANDOM);
    let r = run(&s, 5, true).summary;
    for run in &r.runs {
        assert!(run.resources.workers.peak <= 40, "{}", run.policy);
        assert!(run.resources.pool.peak <= 10, "{}", run.policy);
    }
    // Six permits per instance, three instances: abandoned calls do not hold permits, but
    // nothing here times out, so the dependency never sees more than 18 at once.
    let limit = r.runs.iter().find(|x| x.policy == "limit").unwrap();
    assert!(limit.dependency.peak_in_flight <= 18);
    // The load is high enough for the limits to bind.
    assert_eq!(r.runs[0].resources.pool.peak, 10);
}

#[test]
fn warmup_excludes_early_requests() {
    let text = RANDOM.replace("horizon: \"60s\"", "horizon: \"60s\", warmup: \"30s\"");
    let all = run(&scenario(RANDOM), 3, false).summary;
    let late = run(&scenario(&text), 3, false).summary;
    let n = |s: &ScenarioSummary| s.runs[0].classes[0].requests;
    // Poisson at 120/s: about half the requests arrive after 30 s.
    let ratio = n(&late) as f64 / n(&all) as f64;
    assert!((0.45..0.55).contains(&ratio), "{ratio}");
}

/// Requests every 100 ms from t = 0 to 9.9 s, instant answers, a three-failure breaker
/// with a one-second break and a single probe, and a dependency mode timeline.
fn breaker_script(modes: &str) -> Scenario {
    let times: Vec<String> = (0..100).map(|k| format!("\"{}ms\"", k * 100)).collect();
    scenario(&format!(
        r#"Scenario(
        name: "script", horizon: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "1s")],
        dependency: (latency: Constant("0ms"), modes: [{modes}]),
        policies: [(name: "b", stack: [(policy: ConsecutiveBreaker((failures: 3, break_duration: "1s")))])],
    )"#,
        times.join(", ")
    ))
}

#[test]
fn breaker_transitions_match_a_hand_count() {
    // Unavailable until 5 s. Failures at 0.0, 0.1, 0.2 s open it (1 transition). Probes at
    // 1.2, 2.2, 3.2, 4.2 s fail: open -> half-open -> open, 2 transitions each (8). The probe
    // at 5.2 s succeeds: open -> half-open -> closed (2). Total 11, no open-closed-open cycle.
    // Calls: 3 failures + 5 probes + the 47 requests from 5.3 s to 9.9 s = 55.
    let s = breaker_script(r#"(at: "0s", mode: Unavailable), (at: "5s", mode: Healthy)"#);
    let r = &run(&s, 1, false).summary.runs[0];
    let b = r.breaker.as_ref().unwrap();
    assert_eq!(b.transitions, 11);
    assert_eq!(b.cycles, 0);
    assert_eq!(r.dependency.calls, 55);
    let api = &r.classes[0];
    assert_eq!(api.outcomes.error, 3 + 4);
    assert_eq!(api.outcomes.ok, 1 + 47);
    assert_eq!(api.outcomes.short_circuited, 100 - 7 - 48);
    // Open from 0.2 s to 5.2 s except the instants of the probes: 5.0 s of 10 s.
    assert!((b.open_fraction - 0.5).abs() < 1e-9, "{}", b.open_fraction);
}

#[test]
fn a_flapping_dependency_counts_a_cycle() {
    // Unavailable [0, 2 s), healthy [2, 4 s), unavailable [4, 6 s), healthy after.
    // Open at 0.2; probe 1.2 fails; probe 2.2 closes; failures at 4.0, 4.1, 4.2 re-open it
    // (one open -> closed -> open cycle); probe 5.2 fails; probe 6.2 closes.
    // Transitions: 1 + 2 + 2 + 1 + 2 + 2 = 10.
    let s = breaker_script(
        r#"(at: "0s", mode: Unavailable), (at: "2s", mode: Healthy), (at: "4s", mode: Unavailable), (at: "6s", mode: Healthy)"#,
    );
    let b = run(&s, 1, false).summary.runs[0].breaker.clone().unwrap();
    assert_eq!(b.transitions, 10);
    assert_eq!(b.cycles, 1);
}

#[test]
fn latency_above_the_deadline_gives_zero_goodput() {
    let s = scenario(
        r#"Scenario(
        name: "late", horizon: "20s",
        fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 50.0), deadline: "500ms")],
        dependency: (latency: Constant("600ms")),
        policies: [(name: "none")],
    )"#,
    );
    let r = run(&s, 1, false).summary;
    let api = &r.runs[0].classes[0];
    assert!(api.requests > 800);
    assert_eq!(api.goodput_per_s, 0.0);
    assert_eq!(api.deadline_missed, api.requests);
    // Every request is answered after 600 ms, except those still out at the horizon past
    // their 500 ms deadline (arrived in [19.4 s, 19.5 s]), judged `unfinished`.
    assert_eq!(api.outcomes.ok + api.causes.unfinished, api.requests);
    assert_eq!(api.latency_ms.p50, 600.0);
}

#[test]
fn goodput_counts_answers_within_the_deadline() {
    // Exponential latency with mean 100 ms and a 100 ms deadline: P(latency <= 100 ms) =
    // 1 - e^-1 = 0.632. With ~20,000 requests the standard error is ~0.0034.
    let s = scenario(
        r#"Scenario(
        name: "expo", horizon: "200s",
        fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 100.0), deadline: "100ms")],
        dependency: (latency: Exponential(mean: "100ms")),
        policies: [(name: "none")],
    )"#,
    );
    let api = run(&s, 11, false).summary.runs[0].classes[0].clone();
    let expected = 1.0 - (-1.0f64).exp();
    assert!((api.goodput_ratio - expected).abs() < 0.015, "{}", api.goodput_ratio);
    // Throughput is the Poisson rate: 100/s within a few standard errors (sqrt(20000)/200).
    assert!((api.throughput_per_s - 100.0).abs() < 3.0, "{}", api.throughput_per_s);
}

#[test]
fn closed_loop_users_send_as_fast_as_answers_come_back() {
    // Five users, no think time, every answer takes exactly 100 ms: each user completes a
    // request every 100 ms, so 10 s give 5 x 100 = 500 answers, and the 5 requests sent at
    // exactly 10 s are still in flight at the horizon.
    let s = scenario(
        r#"Scenario(
        name: "closed", horizon: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: ClosedLoop(users: 5, think: "0s"), deadline: "1s")],
        dependency: (latency: Constant("100ms")),
        policies: [(name: "none")],
    )"#,
    );
    let r = &run(&s, 1, false).summary.runs[0];
    assert_eq!(r.classes[0].outcomes.ok, 500);
    assert_eq!(r.in_flight_at_end, 5);
}

fn scenario_in_tests(text: &str) -> ScenarioResult {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let s = load_text(&dir.join("inline.ron"), text).unwrap_or_else(|e| panic!("{e}"));
    let model = Model::build(&s, s.seed, &dir).unwrap();
    run_all(&model, RunOptions::default(), false).expect("runs")
}

#[test]
fn empirical_latencies_are_resampled_from_the_csv() {
    // Two observed latencies, 100 and 300 ms: each call draws one of them with probability
    // 1/2, so the dependency's mean is 200 ms (standard error ~100/sqrt(n)) and its minimum
    // and maximum are exactly the two values.
    let r = scenario_in_tests(
        r#"Scenario(
        name: "empirical", horizon: "100s",
        fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 50.0), deadline: "1s")],
        dependency: (latency: Empirical(file: "data/two-latencies.csv")),
        policies: [(name: "none")],
    )"#,
    );
    let d = &r.summary.runs[0].dependency.latency_ms;
    assert!((d.mean - 200.0).abs() < 10.0, "{}", d.mean);
    assert_eq!(d.max, 300.0);
    // No gateway overhead: a request's latency is one of the two observed values, so the
    // median is one of them, to the histogram's 3 significant digits (0.1 %).
    let p50 = r.summary.runs[0].classes[0].latency_ms.p50;
    assert!((p50 - 100.0).abs() <= 0.1 || (p50 - 300.0).abs() <= 0.3, "{p50}");
}

#[test]
fn an_incident_replayed_from_csv_drives_the_latency() {
    // Observed latency 100 ms until 10 s, then 1,000 ms; the base latency is a constant
    // 100 ms, so the drift factor is 1 then 10. A call at 5 s takes 100 ms, one at 15 s 1 s.
    let r = scenario_in_tests(
        r#"Scenario(
        name: "replay", horizon: "20s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
        classes: [
            (name: "before", arrivals: Scripted(times: ["5s"]), deadline: "5s"),
            (name: "after", arrivals: Scripted(times: ["15s"]), deadline: "5s"),
        ],
        dependency: (latency: Constant("100ms"), drift: Csv(file: "data/incident.csv")),
        policies: [(name: "none")],
    )"#,
    );
    let c = &r.summary.runs[0].classes;
    assert_eq!(c[0].latency_ms.max, 100.0);
    assert_eq!(c[1].latency_ms.max, 1000.0);
}

#[test]
fn check_determinism_reproduces_every_run() {
    // A folder of its own: a fixed path under /tmp is shared with every other checkout's run.
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_brownout"))
        .args([
            "run",
            concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/r02-limit.ron"),
            "--check-determinism",
            "--no-charts",
        ])
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("reproduced event for event"));
}

/// Poisson traffic at 100/s for `horizon`, 10 s windows: the dependency's throughput CV.
fn poisson_throughput_cv(horizon: &str) -> f64 {
    let s = scenario(&format!(
        r#"Scenario(
    name: "cv", horizon: "{horizon}", window: "10s",
    fleet: (instances: 1, workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
    classes: [(name: "a", arrivals: Poisson(rate_per_s: 100.0), deadline: "1s")],
    dependency: (latency: Constant("10ms")),
    policies: [(name: "direct", stack: [])],
)"#
    ));
    run(&s, 1, false).summary.runs[0].dependency.throughput_cv
}

#[test]
fn the_throughput_cv_does_not_depend_on_a_short_last_window() {
    // Issue 15 defect 3: 0.032 at 90 s but 0.310 at 91 s. A 10 s window of Poisson calls at
    // 100/s holds 1,000 +- sqrt(1,000) calls: a CV near 0.032 whatever the horizon.
    let (a, b) = (poisson_throughput_cv("90s"), poisson_throughput_cv("91s"));
    assert!((0.01..0.06).contains(&a), "90 s: {a}");
    assert!((0.01..0.06).contains(&b), "91 s: {b}");
    assert!((a - b).abs() < 0.01, "90 s: {a}, 91 s: {b}");
}
