//! Issue 30, items 4 to 7: what the dependency's figures measure (queue wait, service time
//! and their sum), that network time delays the caller and never holds a server, that a
//! policy's way of refusing (`refuse_as`, a tiered bulkhead's `on_full`) is what the request
//! gets, and that a `Delay` runs as the shape it names. Every expected value is worked out by
//! hand or from a queueing closed form in the test's comment.

use crate::common::run_first as run;

use std::path::Path;
use std::process::Command;

use brownout::metrics::summary::RunSummary;
use brownout::scenario::parse;

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

/// Five requests at the same instant (1 s) of one class that falls back (fail open), to a
/// dependency answering in 100 ms, through `layer`. The dependency never fails, so every
/// fallback comes from a refusal; `OnRefusalOrFailure` rather than `OnRefusal`, which `check`
/// refuses behind a layer that only answers 429.
fn five_at_once(layer: &str) -> String {
    format!(
        r#"Scenario(
    name: "five", horizon: "10s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "10s")),
    classes: [(name: "pay", arrivals: Scripted(times: ["1s", "1s", "1s", "1s", "1s"]), deadline: "5s",
               fallback: OnRefusalOrFailure, fallback_answer: FailOpen(cost_per_use: 0))],
    dependency: (latency: Constant("100ms")),
    policies: [(name: "p", stack: [(policy: {layer})])],
)"#
    )
}

/// (ok, rejected, fallback) of the run.
fn counts(r: &RunSummary) -> (u64, u64, u64) {
    let o = &r.classes[0].outcomes;
    (o.ok, o.rejected, o.fallback)
}

/// A 1-permit limiter admits the first of five simultaneous requests; the other four are
/// refused. `refuse_as` says what they get: a 429 or the class's fallback (here fail open).
#[test]
fn refuse_as_decides_between_429_and_fallback() {
    let rejected = run(&five_at_once("Limiter((permits: 1, refuse_as: Rejected))"));
    assert_eq!(counts(&rejected), (1, 4, 0));
    let fallback = run(&five_at_once("Limiter((permits: 1, refuse_as: Fallback))"));
    assert_eq!(counts(&fallback), (1, 0, 4));
    // The adaptive limiters share the gate: AIMD starting at a limit of 1.
    let aimd =
        |how: &str| five_at_once(&format!("Aimd((initial_limit: 1, min_limit: 1, max_limit: 1, refuse_as: {how}))"));
    assert_eq!(counts(&run(&aimd("Rejected"))), (1, 4, 0));
    assert_eq!(counts(&run(&aimd("Fallback"))), (1, 0, 4));
}

/// Waits that end without a permit are refused the limiter's way too: four requests wait
/// 10 ms behind a 100 ms call and time out.
#[test]
fn an_expired_wait_is_refused_as_the_limiter_says() {
    let limiter =
        |how: &str| five_at_once(&format!("Limiter((permits: 1, queue: 4, max_wait: \"10ms\", refuse_as: {how}))"));
    assert_eq!(counts(&run(&limiter("Rejected"))), (1, 4, 0));
    assert_eq!(counts(&run(&limiter("Fallback"))), (1, 0, 4));
}

/// The tiered bulkhead: a class with no free permit is refused with 429 under `Reject` and
/// gets the fallback at once under `FallbackNow`.
#[test]
fn tiered_bulkhead_on_full_decides_between_429_and_fallback() {
    let bulkhead = |on_full: &str| {
        five_at_once(&format!(
            "TieredBulkhead((permits: 1, classes: [(name: \"pay\", share: 1.0, on_full: {on_full})]))"
        ))
    };
    assert_eq!(counts(&run(&bulkhead("Reject"))), (1, 4, 0));
    assert_eq!(counts(&run(&bulkhead("FallbackNow"))), (1, 0, 4));
}

/// Poisson arrivals at `rate`/s for 2,000 s (no warm-up effect worth a figure: 20 s) to a
/// dependency with `dependency` settings; nothing else delays a request.
fn open_loop(rate: f64, dependency: &str) -> String {
    format!(
        r#"Scenario(
    name: "queue", seed: 11, horizon: "2000s", warmup: "20s", window: "100s",
    fleet: (workers: (slots: 100000), pool: (max_connections: 100000, acquire_timeout: "1h")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: {rate}), deadline: "1h")],
    dependency: ({dependency}),
    policies: [(name: "none", stack: [])],
)"#
    )
}

/// Item 5. One server, 10 ms constant service, a 40 ms round trip on the network, 30 calls/s:
/// the server is busy rho = 30 x 0.010 = 0.3 of the time, an M/D/1 queue whose mean wait is
/// (Pollaczek-Khinchine) Wq = rho S / (2 (1 - rho)) = 0.3 x 10 / 1.4 = 2.14 ms. The caller
/// waits Wq + S + hop = 2.14 + 10 + 40 = 52.14 ms on average. Were the hop holding the
/// server, rho would be 1.5 and the queue would grow without bound.
#[test]
fn the_network_hop_delays_the_caller_and_holds_no_server() {
    let r = run(&open_loop(30.0, r#"latency: Constant("10ms"), hop: "40ms", capacity: (servers: 1, queue: 1000000)"#));
    let mean = r.classes[0].latency_ms.mean;
    assert!((mean - 52.14).abs() < 1.0, "mean request latency {mean} ms, M/D/1 gives 52.14 ms");
    // The dependency's own figures leave the hop out: the wait and the 10 ms service.
    let d = &r.dependency;
    assert!((d.queue_wait_ms.mean - 2.14).abs() < 0.5, "queue wait {} ms, M/D/1 gives 2.14 ms", d.queue_wait_ms.mean);
    assert!((d.latency_ms.mean - 10.0).abs() < 0.1, "service {} ms", d.latency_ms.mean);
}

/// Item 5, `Mode::Slow`: its extra time is the server's (a slow server, not a slow network),
/// so it holds the server. 15 calls/s, 10 ms service plus 40 ms extra: S = 50 ms,
/// rho = 0.75, Wq = 0.75 x 50 / (2 x 0.25) = 75 ms, a mean of 125 ms. Were the extra time
/// network time, rho would be 0.15 and the mean 50 + 0.15 x 10 / 1.7 = 50.9 ms.
#[test]
fn slow_mode_extra_time_holds_the_server() {
    let r = run(&open_loop(
        15.0,
        r#"latency: Constant("10ms"), modes: [(at: "0s", mode: Slow("40ms"))], capacity: (servers: 1, queue: 1000000)"#,
    ));
    let mean = r.classes[0].latency_ms.mean;
    assert!((mean - 125.0).abs() < 8.0, "mean request latency {mean} ms, M/D/1 gives 125 ms");
    assert!((r.dependency.latency_ms.mean - 50.0).abs() < 0.1, "service {} ms", r.dependency.latency_ms.mean);
}

/// Item 4. M/M/1: 75 calls/s, exponential service with mean 10 ms (mu = 100/s), one server.
/// Mean wait in queue Wq = rho / (mu - lambda) = 0.75 / 25 s = 30 ms, mean service 10 ms,
/// mean time at the dependency W = 1 / (mu - lambda) = 40 ms. The summary gives each.
#[test]
fn dependency_queue_wait_service_and_their_sum_match_mm1() {
    let r = run(&open_loop(75.0, r#"latency: Exponential(mean: "10ms"), capacity: (servers: 1, queue: 1000000)"#));
    let d = &r.dependency;
    assert!((d.queue_wait_ms.mean - 30.0).abs() < 3.0, "queue wait {} ms, M/M/1 gives 30 ms", d.queue_wait_ms.mean);
    assert!(
        (d.latency_ms.mean - 10.0).abs() < 0.3,
        "service {} ms, the distribution's mean is 10 ms",
        d.latency_ms.mean
    );
    assert!((d.time_ms.mean - 40.0).abs() < 3.0, "time at the dependency {} ms, M/M/1 gives 40 ms", d.time_ms.mean);
    // Without a queue the wait is zero: infinite capacity.
    let free = run(&open_loop(75.0, r#"latency: Exponential(mean: "10ms")"#));
    assert_eq!(free.dependency.queue_wait_ms.max, 0.0);
}

/// A one-class scenario with the dependency's `hop` written as `hop`: 100 requests a second
/// for 200 s to a dependency answering in 1 ms, so a request takes 1 ms plus its hop.
fn with_hop(hop: &str) -> String {
    format!(
        r#"Scenario(
    name: "hop", seed: 5, horizon: "200s",
    fleet: (workers: (slots: 100000), pool: (max_connections: 100000, acquire_timeout: "1h")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 100), deadline: "1h")],
    dependency: (latency: Constant("1ms"),
        hop: {hop}),
    policies: [(name: "none", stack: [])],
)"#
    )
}

/// Item 7: each shape runs as its distribution, checked on its quantiles (about 20,000
/// draws; the recorder's histogram keeps 3 significant digits):
/// - `Constant("20ms")`: every request takes 21 ms;
/// - `Exponential(mean: "20ms")`: median 1 + 20 ln 2 = 14.86 ms, p95 1 + 20 ln 20 = 60.9 ms;
/// - `LogNormal(median: "20ms", sigma: 0.5)`: median 21 ms, p95 1 + 20 exp(1.645 x 0.5) = 46.5 ms.
#[test]
fn each_delay_shape_runs_as_its_distribution() {
    let lat = |hop: &str| run(&with_hop(hop)).classes[0].latency_ms;
    let c = lat(r#"Constant("20ms")"#);
    assert!((c.p50 - 21.0).abs() < 0.1 && (c.p95 - 21.0).abs() < 0.1, "{c:?}");
    let fixed = lat(r#""20ms""#);
    assert!((fixed.p95 - 21.0).abs() < 0.1, "{fixed:?}");
    let e = lat(r#"Exponential(mean: "20ms")"#);
    assert!((e.p50 - 14.86).abs() < 0.6 && (e.p95 - 60.9).abs() < 2.5, "{e:?}");
    assert!((e.mean - 21.0).abs() < 0.6, "{e:?}");
    let l = lat(r#"LogNormal(median: "20ms", sigma: 0.5)"#);
    assert!((l.p50 - 21.0).abs() < 0.6 && (l.p95 - 46.5).abs() < 1.5, "{l:?}");
}

/// Item 7: a shape is read by its name. `Exponential` takes `mean:`, so `Exponential("20ms")`
/// is refused rather than run as a constant, and `Uniform` is no shape rather than an
/// exponential; both at the line and column of the offending text.
#[test]
fn a_delay_of_a_wrong_or_unknown_shape_is_refused_where_it_is_written() {
    for bad in [r#"Exponential("20ms")"#, r#"Uniform(mean: "20ms")"#, r#"Gamma(mean: "1ms")"#] {
        let text = with_hop(bad);
        let e = parse(Path::new("w.ron"), &text).map(|_| ()).expect_err(bad);
        // `hop: ` opens line 6 at column 9; the value starts at column 14.
        assert_eq!(e.line, 6, "{bad}: {e}");
        assert!(e.col >= 14 && e.col <= 14 + bad.len(), "{bad}: {e}");
    }
    let e = parse(Path::new("w.ron"), &with_hop(r#"Uniform(mean: "20ms")"#)).map(|_| ()).unwrap_err();
    assert!(e.message.contains("Uniform") && e.message.contains("Exponential"), "{}", e.message);
    // A bad duration inside a shape is refused on its line, at or just past the string.
    let e = parse(Path::new("w.ron"), &with_hop(r#"Exponential(mean: "2O ms")"#)).map(|_| ()).unwrap_err();
    let at = 14 + "Exponential(mean: ".len();
    assert!(e.line == 6 && e.col >= at && e.col <= at + "\"2O ms\")".len(), "{e}");
}

/// Item 7: a sweep sets values on the scenario's JSON form and reads it back; a scenario with
/// a distribution delay survives that, so no axis is blamed for it.
#[test]
fn a_sweep_over_a_scenario_with_a_distribution_delay_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = with_hop(r#"Exponential(mean: "2ms")"#).replace("200s", "5s").replace(
        "fleet: (",
        "fleet: (overhead: LogNormal(median: \"1ms\", sigma: 0.3), timeout_unwind: Constant(\"1ms\"), ",
    );
    std::fs::write(dir.path().join("hop.ron"), scenario).unwrap();
    let spec = r#"SweepSpec(
    name: "hop", base: "hop.ron", seed: 1, replications: 1,
    metrics: ["api/p95_ms"],
    axes: [(name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s", values: [10, 20])],
)"#;
    std::fs::write(dir.path().join("sweep.ron"), spec).unwrap();
    let out = dir.path().join("out");
    let o = Command::new(BIN).arg("sweep").arg(dir.path().join("sweep.ron")).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("sweep.csv").exists());
}
