//! Unit tests of `estimate`, in a file of their own to keep the module short.

use super::*;
use crate::model::{Model, RunOptions, run_policy};

fn scenario(classes: &str, extra: &str) -> Scenario {
    let text = format!(
        r#"Scenario(name: "b", horizon: "10s", window: "1s",
                fleet: (workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "1s")),
                classes: [{classes}],
                dependency: (latency: Constant("100ms")),
                policies: [(name: "p")], {extra})"#
    );
    super::super::parse(std::path::Path::new("b.ron"), &text).unwrap()
}

#[test]
fn profile_integral_is_the_area_under_the_rate() {
    let d = |s| super::super::Dur::secs(s);
    let integral = |p: &[(super::super::Dur, f64)], h| profile_integral(p.iter().map(|(t, r)| (t.ns() as f64, *r)), h);
    // A ramp from 0 to 100/s over 10 s: a triangle of 0.5 x 10 x 100 = 500 requests;
    // held at 100/s for 10 s more: 1,500.
    assert_eq!(integral(&[(d(0), 0.0), (d(10), 100.0)], 10 * SECOND), 500.0);
    assert_eq!(integral(&[(d(0), 0.0), (d(10), 100.0)], 20 * SECOND), 1500.0);
    // Constant before the first point: 10/s over 10 s.
    assert_eq!(integral(&[(d(5), 10.0)], 10 * SECOND), 100.0);
    // A horizon inside a segment: 0.5 x 5 x 50 = 125.
    assert_eq!(integral(&[(d(0), 0.0), (d(10), 100.0)], 5 * SECOND), 125.0);
}

#[test]
fn events_count_each_request_s_certain_events_and_the_ticks() {
    // 100/s over 10 s = 1,000 requests, each an arrival and a dependency call; 11 ticks,
    // each visiting the one instance: 2,000 + 22.
    let s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 100), deadline: "1s")"#, "");
    assert_eq!(estimate(&s).unwrap().events, 2022.0);
    // Five users with no think time and 100 ms answers: 5 x 10 s / 100 ms = 500 requests
    // (the closed-loop test in tests/model/model.rs counts 500 answers).
    let s = scenario(r#"(name: "a", arrivals: ClosedLoop(users: 5, think: "0s"), deadline: "1s")"#, "");
    assert_eq!(estimate(&s).unwrap().events, 1022.0);
}

#[test]
fn the_event_estimate_stays_below_what_a_run_handles() {
    // The estimate counts only certain events, so a refused scenario could not have run:
    // check it against real runs of an open and a closed class.
    for arrivals in ["Poisson(rate_per_s: 200)", "ClosedLoop(users: 7, think: \"20ms\")"] {
        let s = scenario(&format!(r#"(name: "a", arrivals: {arrivals}, deadline: "1s")"#), "");
        let model = Model::build(&s, 3, std::path::Path::new(".")).unwrap();
        let run = run_policy(&model, 0, RunOptions::default()).expect("within the limits");
        let e = estimate(&s).unwrap().events;
        let actual = run.summary.events as f64;
        assert!(e <= actual * 1.05 && e >= actual * 0.5, "{arrivals}: estimate {e}, run {actual}");
    }
}

#[test]
fn a_closed_loop_that_takes_no_time_is_refused() {
    let mut s = scenario(r#"(name: "a", arrivals: ClosedLoop(users: 2, think: "0s"), deadline: "1s")"#, "");
    s.dependency.latency = super::super::Latency::Constant(super::super::Dur(0));
    let r = check(&s).unwrap_err();
    assert_eq!(r.path, "classes[0]");
    assert!(r.message.contains("infinitely many requests"), "{}", r.message);
    // Any time makes it finite: 1 ms of overhead, 2 users x 10 s / 1 ms = 20,000 requests.
    s.fleet.overhead = super::super::Delay::Fixed(super::super::Dur::ms(1));
    // Each is an arrival, a dependency call and a response after the overhead.
    assert_eq!(estimate(&s).unwrap().events, 20_000.0 * 3.0 + 22.0);
    // But 1 ns makes 2e10 requests, over the default 2e10 events.
    s.fleet.overhead = super::super::Delay::Fixed(super::super::Dur(1));
    assert!(check(&s).unwrap_err().message.contains("limits.max_events"));
}

#[test]
fn memory_names_the_estimate_the_limit_and_the_field() {
    let mut s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#, "");
    s.fleet.instances = 1_000_000_000;
    // 1e9 instances x 512 bytes is 477 GiB by itself.
    let e = estimate(&s).unwrap();
    assert!(e.memory >= 512.0e9, "{}", e.memory);
    let r = check(&s).unwrap_err();
    assert_eq!(r.path, "fleet.instances");
    let m = r.message;
    for part in ["GiB of memory", "1000000000 instances", "limits.max_memory (4.0 GiB)", "max_memory: \""] {
        assert!(m.contains(part), "{part:?} not in {m}");
    }
    // The limit the message suggests is enough.
    let suggested = m.split("max_memory: \"").nth(1).unwrap().split('"').next().unwrap();
    s.limits.max_memory = suggested.parse().unwrap();
    assert!(check(&s).is_ok(), "{suggested}");
}

#[test]
fn suggested_limits_round_up_to_two_digits() {
    assert_eq!(round_up(1.000_000_002_9e10), 1.1e10);
    assert_eq!(round_up(1234.0), 1300.0);
    assert_eq!(round_up(0.0), 0.0);
}

#[test]
fn rows_count_charted_windows_classes_and_policies() {
    let s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#, "");
    let one = estimate(&s).unwrap().memory;
    let mut many = s.clone();
    many.horizon = super::super::Dur::secs(1_000_000);
    let row = std::mem::size_of::<crate::metrics::WindowRow>() as f64 + ROW_TEXT_BYTES + 1.0;
    // 11 windows in 10 s; the charts keep 500 at most, whatever the horizon: 489 more rows
    // (one class, one policy named "p"), and nothing per window beyond them.
    let grown = estimate(&many).unwrap().memory - one;
    assert!((grown - 489.0 * (row + 1.0)).abs() < 1.0, "{grown}");
    let mut more = s.clone();
    more.horizon = super::super::Dur::secs(2_000_000);
    assert_eq!(estimate(&more).unwrap().memory, estimate(&many).unwrap().memory);
}

#[test]
fn attempts_multiply_across_retry_layers() {
    let retry = "(policy: Retry((max_attempts: 40)))";
    let text = "limits: (max_attempts: 1599)";
    let mut s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#, text);
    s.policies[0].stack = super::super::parse(
        std::path::Path::new("x"),
        &format!(
            r#"Scenario(name: "x", horizon: "1s", fleet: (workers: (slots: 1), pool: (max_connections: 1,
                acquire_timeout: "1s")), classes: [], dependency: (latency: Constant("1ms")),
                policies: [(name: "p", stack: [{retry}, {retry}])])"#
        ),
    )
    .unwrap()
    .policies[0]
        .stack
        .clone();
    // 40 x 40 = 1,600 attempts.
    let m = check(&s).unwrap_err().message;
    assert!(m.contains("1600 attempts per request") && m.contains("limits.max_attempts (1599)"), "{m}");
    s.limits.max_attempts = 1600;
    assert!(check(&s).is_ok());
}

/// `s` with the one policy set's stack replaced by `layers` (RON).
fn with_stack(mut s: Scenario, layers: &str) -> Scenario {
    let text = format!(
        r#"Scenario(name: "x", horizon: "1s", fleet: (workers: (slots: 1), pool: (max_connections: 1,
            acquire_timeout: "1s")), classes: [], dependency: (latency: Constant("1ms")),
            policies: [(name: "p", stack: [{layers}])])"#
    );
    s.policies[0].stack = super::super::parse(std::path::Path::new("x"), &text).unwrap().policies[0].stack.clone();
    s
}

#[test]
fn an_opossum_window_counts_its_buckets() {
    let s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#, "");
    let base = estimate(&s).unwrap().memory;
    // 2e9 buckets of two u64 counts (opossum.rs's Bucket) = 32 GB per layer per instance:
    // its run aborted in the allocation. Counted at SAMPLE_BYTES (16) a bucket, beside the
    // layer's own 512 bytes, for the one instance and policy set.
    let s = with_stack(s, "(policy: Opossum((rolling_count_buckets: 2000000000)))");
    let grown = estimate(&s).unwrap().memory - base;
    assert!((grown - (512.0 + 16.0 * 2.0e9)).abs() < 1.0, "{grown}");
    let r = check(&s).unwrap_err();
    assert!(r.message.contains("limits.max_memory") && r.path == "policies[0]", "{r:?}");
}

#[test]
fn a_dotnet_handler_s_retries_count_against_max_attempts() {
    let s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#, "");
    // max_retry_attempts 999 expands into Retry((max_attempts: 1000)) (policy/dotnet.rs):
    // exactly the default limit. One more retry is over it.
    let ok = with_stack(s.clone(), "(policy: DotnetStandard((max_retry_attempts: 999)))");
    assert!(check(&ok).is_ok());
    let over = with_stack(s, "(policy: DotnetStandard((max_retry_attempts: 1000)))");
    let m = check(&over).unwrap_err().message;
    assert!(m.contains("1001 attempts per request") && m.contains("limits.max_attempts (1000)"), "{m}");
}

#[test]
fn reloads_count_at_their_most_in_events_and_memory() {
    let plain = r#"(name: "a", arrivals: Poisson(rate_per_s: 100), deadline: "1s")"#;
    let base = estimate(&scenario(plain, "")).unwrap();
    let reload = |r: &str| {
        let class = plain.replace(r#""1s")"#, &format!(r#""1s", reload: ({r}))"#));
        estimate(&scenario(&class, "")).unwrap()
    };
    // Every answer bad, each reloaded with probability 0.5, at most 3 times: an arrival
    // makes 1 + 0.5 + 0.25 + 0.125 = 1.875 requests, each an arrival and a dependency
    // call. 1,000 arrivals: 1,875 x 2 events + 22 ticks.
    let e = reload(r#"patience: "1ms", probability: 0.5, delay: "1s", max_reloads: 3"#);
    assert_eq!(e.events, 1875.0 * 2.0 + 22.0);
    // 875 reloads over 10 s, each waiting 1 s: by Little's law 87.5 wait at once, each an
    // event (32 bytes) and a slab entry (32 bytes).
    assert_eq!(e.memory - base.memory, 87.5 * 64.0);
    // A chain of reloads 4 s apart fits 2 in the 10 s horizon, whatever max_reloads says:
    // 1 + 1 + 1 = 3 requests an arrival.
    let e = reload(r#"patience: "1ms", probability: 1.0, delay: "4s", max_reloads: 1000"#);
    assert_eq!(e.events, 3000.0 * 2.0 + 22.0);
    // No delay, certain reloads, 4,294,967,295 of them: 4,294,967,296 requests an arrival,
    // 8.6e12 events, over the default 2e10; refused at the field, with a limit that allows it.
    let class = plain.replace(
        r#""1s")"#,
        r#""1s", reload: (patience: "1ms", probability: 1.0, delay: "0s", max_reloads: 4294967295))"#,
    );
    let mut s = scenario(&class, "");
    assert_eq!(estimate(&s).unwrap().events, 1000.0 * 4_294_967_296.0 * 2.0 + 22.0);
    let r = check(&s).unwrap_err();
    assert_eq!(r.path, "classes[0].reload.max_reloads");
    assert!(r.message.contains("limits.max_events (20000000000)") && r.message.contains("reload"), "{r:?}");
    let suggested = r.message.split("max_events: ").nth(1).unwrap().split(')').next().unwrap();
    s.limits.max_events = suggested.parse().unwrap();
    assert!(check(&s).is_ok(), "{suggested}");
    // 10,000 arrivals a second, each reloaded 10 s later up to 1,000 times in a 10,000 s
    // horizon: 999 reloads an arrival, 1e8 x 999 over 1e4 s = 9.99e6 a second, 9.99e7
    // waiting at once, 6.4 GB: over the default 4 GiB of memory, blamed on the delay.
    let class = plain
        .replace("rate_per_s: 100", "rate_per_s: 10000")
        .replace(r#""1s")"#, r#""1s", reload: (patience: "1ms", probability: 1.0, delay: "10s", max_reloads: 1000))"#);
    let mut s = scenario(&class, "");
    s.horizon = super::super::Dur::secs(10_000);
    s.limits.max_events = u64::MAX;
    let r = check(&s).unwrap_err();
    assert_eq!(r.path, "classes[0].reload.delay", "{r:?}");
    assert!(r.message.contains("limits.max_memory"), "{r:?}");
}

#[test]
fn output_counts_series_rows_and_summaries() {
    let mut s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#, "");
    // 10 s in 1 s windows: 11 windows x 1 class x 1 policy set = 11 rows of 160 bytes, and
    // one summary of 4 KiB + 3 KiB for its class (one replication).
    assert_eq!(estimate(&s).unwrap().output, 11.0 * 160.0 + 4096.0 + 3072.0);
    // 1,000,000 windows x 8 classes x 4 sets = 32e6 rows, 5.1 GB: over the default 4 GiB.
    s.horizon = super::super::Dur::secs(999_999);
    s.classes = (0..8).map(|i| super::super::Class { name: format!("c{i}"), ..s.classes[0].clone() }).collect();
    s.policies = (0..4).map(|i| super::super::PolicySet { name: format!("p{i}"), ..s.policies[0].clone() }).collect();
    let r = check(&s).unwrap_err();
    assert_eq!(r.path, "horizon");
    for part in ["1000000 windows x 8 classes x 4 policies", "limits.max_output (4.0 GiB)", "max_output: \""] {
        assert!(r.message.contains(part), "{part:?} not in {}", r.message);
    }
    // The limit the message suggests is enough.
    let suggested = r.message.split("max_output: \"").nth(1).unwrap().split('"').next().unwrap();
    s.limits.max_output = suggested.parse().unwrap();
    assert!(check(&s).is_ok(), "{suggested}");
}

#[test]
fn phases_count_a_recorder_of_every_class_per_run() {
    let s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#, "");
    let base = estimate(&s).unwrap().memory;
    let mut phased = s.clone();
    phased.phases = (0..100)
        .map(|i| super::super::Phase {
            name: format!("p{i}"),
            start: super::super::Dur::ms(i),
            end: super::super::Dur::ms(i + 1),
        })
        .collect();
    // 100 phases x (16 KiB + 1 class x 24 KiB) x 1 policy set.
    assert_eq!(estimate(&phased).unwrap().memory - base, 100.0 * (16.0 + 24.0) * 1024.0);
}

#[test]
fn a_sweep_counts_its_points_runs_and_records() {
    let s = scenario(r#"(name: "a", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#, "");
    let size = SweepSize { points: 9.0e6, axes: 2, policies: 1, replications: 1, metrics: 1, scenario_bytes: 1000 };
    let m = check_sweep(&s, &size).unwrap_err();
    assert!(m.contains("9000000 points x 1 policies x 1 replications = 9000000 runs"), "{m}");
    assert!(m.contains("limits.max_memory"), "{m}");
    // 9e6 points x (24 x 1,000 + 48 + 32) + 9e6 runs x (160 + 64) bytes = 218.7 GB (203.7 GiB),
    // so 204 GiB holds it and 203 GiB does not.
    let mut big = s.clone();
    big.limits.max_memory = ByteSize::gib(203);
    assert!(check_sweep(&big, &size).is_err());
    big.limits.max_memory = ByteSize::gib(204);
    assert!(check_sweep(&big, &size).is_ok());
    let small = SweepSize { points: 16.0, replications: 5, ..size };
    assert!(check_sweep(&s, &small).is_ok());
}
