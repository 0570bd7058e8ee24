//! Overheads as distributions (issue 19): the gateway overhead (`fleet.overhead`) and the
//! per-call network time (`dependency.hop`) may be drawn from a distribution. Expected
//! figures come from the distributions' formulas; tolerances are several standard errors.

use crate::common::run_first as run;

use std::path::Path;

use brownout::metrics::summary::RunSummary;
use brownout::model::{Model, RunOptions};
use brownout::runner::run_all;
use brownout::scenario::load_text;

/// Classes `a` (200/s) and `b` (`b_rate`/s) calling a zero-latency dependency with room for
/// everyone, so a request's latency is its overhead plus its call's hop.
fn scenario(overhead: &str, hop: &str, b_rate: u32) -> String {
    format!(
        r#"Scenario(
            name: "overheads", seed: 7, horizon: "61s", warmup: "1s", window: "10s",
            fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "5s"),
                    overhead: {overhead}),
            classes: [
                (name: "a", arrivals: Poisson(rate_per_s: 200), deadline: "5s"),
                (name: "b", arrivals: Poisson(rate_per_s: {b_rate}), deadline: "5s"),
            ],
            dependency: (latency: Constant("0ms"), hop: {hop}),
            policies: [(name: "direct")],
        )"#
    )
}

fn run_in(dir: &Path, text: &str) -> RunSummary {
    let s = load_text(&dir.join("overheads.ron"), text).unwrap_or_else(|e| panic!("{e}"));
    let model = Model::build(&s, s.seed, dir).unwrap();
    run_all(&model, RunOptions::default(), false).expect("runs").summary.runs.remove(0)
}

fn near(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} +- {tol}");
}

/// Exponential overhead with mean 10 ms: mean 10, median 10 ln 2 = 6.931, p95 10 ln 20 =
/// 29.957 (ms). About 12,000 requests of class a: the mean's standard error is 0.09 ms, the
/// median's 0.09 ms and the p95's 0.4 ms.
#[test]
fn an_exponential_overhead_gives_the_exponential_latency() {
    let r = run(&scenario(r#"Exponential(mean: "10ms")"#, r#""0ms""#, 50));
    let a = r.classes[0].latency_ms;
    near(a.mean, 10.0, 0.5, "mean");
    near(a.p50, 10.0 * 2f64.ln(), 0.5, "median");
    near(a.p95, 10.0 * 20f64.ln(), 2.0, "p95");
}

/// Log-normal hop with median 4 ms and sigma 0.5: a request's latency (the hop and nothing
/// else) has median 4 and mean 4 exp(0.5^2 / 2) = 4.533 ms; about 15,000 calls. The hop is
/// network time: the dependency's own figures (service time) leave it out.
#[test]
fn a_log_normal_hop_gives_the_log_normal_call_latency() {
    let r = run(&scenario(r#""0ms""#, r#"LogNormal(median: "4ms", sigma: 0.5)"#, 50));
    let a = r.classes[0].latency_ms;
    near(a.p50, 4.0, 0.1, "median");
    near(a.mean, 4.0 * (0.125f64).exp(), 0.1, "request mean");
    assert_eq!(r.dependency.latency_ms.max, 0.0, "the dependency's service time");
}

/// An empirical overhead resamples the file's values: 1, 2, 3 and 6 ms equally often, so the
/// mean is 3 ms (standard error 0.02 ms) and no request takes longer than 6 ms.
#[test]
fn an_empirical_overhead_resamples_its_file() {
    let dir = std::env::temp_dir().join(format!("brownout-overheads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("overhead.csv"), "latency_ms\n1\n2\n3\n6\n").unwrap();
    let r = run_in(&dir, &scenario(r#"Empirical(file: "overhead.csv")"#, r#""0ms""#, 50));
    std::fs::remove_dir_all(&dir).ok();
    let a = r.classes[0].latency_ms;
    near(a.mean, 3.0, 0.1, "mean");
    assert_eq!(a.max, 6.0);
}

/// Common random numbers: a request's overhead and hop are its own draws, so class a's
/// latencies are the same whether class b sends 50 or 400 requests a second (a shared
/// stream would hand class a other values as soon as b's requests interleave).
#[test]
fn drawn_overheads_keep_common_random_numbers() {
    let (overhead, hop) = (r#"LogNormal(median: "5ms", sigma: 1.0)"#, r#"Exponential(mean: "2ms")"#);
    let few = run(&scenario(overhead, hop, 50));
    let many = run(&scenario(overhead, hop, 400));
    assert_eq!(few.classes[0].outcomes, many.classes[0].outcomes);
    assert_eq!(few.classes[0].latency_ms, many.classes[0].latency_ms);
    assert_ne!(few.classes[1].outcomes, many.classes[1].outcomes, "class b did change");
}

/// A constant written either way is the same run: `"5ms"` and `Constant("5ms")`.
#[test]
fn a_constant_distribution_is_the_fixed_delay() {
    let fixed = run(&scenario(r#""5ms""#, r#""1ms""#, 50));
    let constant = run(&scenario(r#"Constant("5ms")"#, r#"Constant("1ms")"#, 50));
    assert_eq!(fixed.classes, constant.classes);
    assert_eq!(fixed.classes[0].latency_ms.max, 6.0);
}

/// Bad parameters are refused with the line and column of the offending value.
#[test]
fn bad_delays_and_cancellations_are_located() {
    let base = scenario(r#""1ms""#, r#""1ms""#, 50);
    let cases = [
        (r#"overhead: "1ms""#, r#"overhead: LogNormal(median: "5ms", sigma: NaN)"#, "sigma"),
        (r#"hop: "1ms""#, r#"hop: Exponential(mean: "0ms")"#, "mean must be > 0"),
        (r#"overhead: "1ms""#, r#"overhead: "1ms", timeout_unwind: Exponential(mean: "0ms")"#, "mean must be > 0"),
        (r#"hop: "1ms""#, r#"hop: "1ms", cancellation: KeepWorking(delay: "5ms")"#, ""),
        (r#"hop: "1ms""#, r#"hop: "1ms", cancellation: Propagate(delay: "-5ms")"#, ""),
    ];
    for (from, to, says) in cases {
        let text = base.replacen(from, to, 1);
        let e = load_text(Path::new("bad.ron"), &text).expect_err(to);
        let line = text.lines().position(|l| l.contains(to)).expect("the edited line") + 1;
        assert_eq!(e.line, line, "{to}: {e}");
        assert!(e.col > 0, "{to}: {e}");
        assert!(e.message.contains(says), "{to}: {e}");
    }
}

/// A drawn timeout unwind (`fleet.timeout_unwind`): a dependency that always outlasts the
/// 100 ms timeout, no overhead, so each request fails at 100 ms plus its unwind draw,
/// Exponential with mean 10 ms: failed latency mean 110, median 100 + 10 ln 2 = 106.93, p95
/// 100 + 10 ln 20 = 129.96 ms (about 12,000 requests; standard errors under 0.1 ms, 0.4 for
/// the p95). Without the field the Timeout layer's fixed unwind (20 ms) applies to each.
#[test]
fn a_drawn_timeout_unwind_gives_the_exponential_tail_after_the_timeout() {
    let text = |unwind: &str| {
        format!(
            r#"Scenario(
            name: "unwind", seed: 7, horizon: "61s", warmup: "1s", window: "10s",
            fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "5s"){unwind}),
            classes: [(name: "a", arrivals: Poisson(rate_per_s: 200), deadline: "5s")],
            dependency: (latency: Constant("1s")),
            policies: [(name: "t", stack: [(policy: Timeout((timeout: "100ms", unwind: "20ms")))])],
        )"#
        )
    };
    let drawn = run(&text(r#", timeout_unwind: Exponential(mean: "10ms")"#)).classes[0].clone();
    assert_eq!(drawn.outcomes.timeout, drawn.requests, "every request times out");
    let f = drawn.latency_failed_ms;
    near(f.mean, 110.0, 0.5, "mean");
    near(f.p50, 100.0 + 10.0 * 2f64.ln(), 0.5, "median");
    near(f.p95, 100.0 + 10.0 * 20f64.ln(), 2.0, "p95");
    let fixed = run(&text("")).classes[0].latency_failed_ms;
    near(fixed.mean, 120.0, 1e-6, "the layer's fixed unwind");
    near(fixed.max, 120.0, 1e-6, "the layer's fixed unwind");
}
