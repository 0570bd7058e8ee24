//! Issue 31, "feasibility before simulation": when a constraint cannot be met by any policy
//! set, `check` and the recommendation say so and give the bound. The SRE's case: a query
//! class that must call the dependency, with no fallback, whose 400 ms deadline is far below
//! the dependency's latency at the drift peak. The bound is checked against a hand integral
//! written here, and against what a run measures.

use crate::common;

use std::path::Path;

use brownout::decide::feasible;
use brownout::report::decision;
use brownout::scenario::parse;
use common::brownout;

/// Base latency log-normal (median 200 ms, sigma 0.6), ramped linearly from x1 at 60 s to x9
/// at 120 s (a 1.8 s median at the peak) and held to the end (180 s). Poisson arrivals at
/// 40/s with a 400 ms deadline, no fallback. Worker slots and connections far above the
/// ~100 requests in flight at the peak, infinite dependency capacity: no queueing, so a
/// run with an empty stack should come close to the bound.
const SCENARIO: &str = r#"Scenario(
    name: "query-brownout", seed: 11, horizon: "180s",
    fleet: (instances: 1, workers: (slots: 5000), pool: (max_connections: 5000, acquire_timeout: "10s")),
    classes: [(name: "query", arrivals: Poisson(rate_per_s: 40.0), deadline: "400ms")],
    dependency: (latency: LogNormal(median: "200ms", sigma: 0.6),
                 drift: Ramp(start: "60s", end: "120s", from: 1.0, to: 9.0)),
    policies: [
        (name: "direct", stack: []),
        (name: "timeout", stack: [(policy: Timeout((timeout: "350ms")))]),
    ],
    phases: [(name: "incident", start: "60s", end: "180s")],
    decide: (maximize: "incident:query/in_time_ratio", subject_to: [
        (class: "query", metric: "in_time_ratio", phase: "incident", op: Ge, value: 0.5),
    ]),
)"#;

/// Standard normal CDF through erf, Abramowitz & Stegun 7.1.26 (absolute error below
/// 1.5e-7): independent of the library's statrs.
fn phi(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * x);
    let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 { 0.5 * (1.0 + erf) } else { 0.5 * (1.0 - erf) }
}

/// The hand integral: with a constant arrival rate the best in-time ratio over [60 s, 180 s)
/// is (1/120 s) ∫ Φ((ln d − μ(t)) / σ) dt, with d = 0.4 s, σ = 0.6 and
/// μ(t) = ln 0.2 s + ln m(t), m(t) = 1 + 8 (t − 60) / 60 on the ramp and 9 after it.
/// Midpoint rule with 120,000 steps (error far below 1e-6 on this smooth integrand).
fn hand_bound() -> f64 {
    let (sigma, d, median) = (0.6f64, 0.4f64, 0.2f64);
    let m = |t: f64| if t < 120.0 { 1.0 + 8.0 * (t - 60.0) / 60.0 } else { 9.0 };
    let steps = 120_000;
    let h = 120.0 / steps as f64;
    let sum: f64 = (0..steps)
        .map(|i| {
            let t = 60.0 + (i as f64 + 0.5) * h;
            phi((d.ln() - (median.ln() + m(t).ln())) / sigma)
        })
        .sum();
    sum * h / 120.0
}

fn scenario() -> brownout::scenario::Scenario {
    common::scenario(SCENARIO)
}

#[test]
fn the_bound_is_the_hand_integral_and_a_run_stays_under_it() {
    let want = hand_bound();
    // At the peak alone Φ((ln 0.4 − ln 1.8) / 0.6) = Φ(−2.507) ≈ 0.6 %: the phase's bound is
    // mostly the ramp's early part.
    assert!(want > 0.05 && want < 0.3, "hand integral {want}");
    let s = scenario();
    let c = feasible::ceilings_at(&s, Path::new(".")).expect("the dependency builds");
    assert_eq!(c.len(), 1, "{c:?}");
    let c = &c[0];
    assert_eq!((c.constraint, c.metric.as_str(), c.op.as_str()), (0, "incident:query/in_time_ratio", ">="));
    // Simpson's rule between the drift's knots against the midpoint rule: both far finer
    // than 1e-5; the erf approximation adds at most 1.5e-7.
    assert!((c.best - want).abs() < 1e-5, "bound {} vs hand {want}", c.best);
    assert!(c.unreachable, "a 50 % target is above the bound {want}");
    assert!(c.why.contains("one call per request"), "{}", c.why);

    // A run: nothing queues in the empty stack, so it measures the bound up to sampling
    // noise (4,800 requests in the phase: standard error sqrt(p (1 − p) / n)); the timeout
    // set can only do worse. Neither exceeds the bound beyond the noise.
    let r = common::run(&s);
    let sum = &r.summary;
    let phase = sum.phases.iter().find(|p| p.name == "incident").expect("the incident phase");
    let view = sum.phase_view(phase);
    let n = view.runs[0].classes[0].requests as f64;
    let se = (want * (1.0 - want) / n).sqrt();
    for run in &view.runs {
        let got = run.classes[0].in_time_ratio;
        assert!(got <= want + 4.0 * se, "{}: measured {got} above the bound {want} (se {se})", run.policy);
    }
    let direct = view.runs[0].classes[0].in_time_ratio;
    assert!((direct - want).abs() < 4.0 * se, "direct measured {direct}, bound {want} (se {se})");

    // The recommendation says no policy can meet it and gives the bound, not only "no policy
    // set meets every constraint".
    let rec = sum.decision.as_ref().expect("a decision");
    assert!(!rec.feasible);
    assert_eq!(rec.bounds.len(), 1);
    assert!((rec.bounds[0].best - want).abs() < 1e-5);
    let text = decision::markdown(sum);
    let pct = format!("{:.2} %", want * 100.0);
    assert!(text.contains("No policy can meet"), "{text}");
    assert!(text.contains(&pct), "the bound {pct} is not in:\n{text}");
}

#[test]
fn check_warns_with_the_bound_and_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("q.ron"), SCENARIO).unwrap();
    let o = brownout(&["check", "q.ron"], tmp.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let pct = format!("{:.2} %", hand_bound() * 100.0);
    assert!(err.contains("warning") && err.contains("no policy can meet") && err.contains(&pct), "{err}");
    assert!(err.contains("incident:query/in_time_ratio >= 0.5"), "{err}");
    let o = brownout(&["check", "--json", "q.ron"], tmp.path());
    assert_eq!(o.status.code(), Some(0));
    let doc = common::document(&o);
    let b = &doc["bounds"][0];
    assert_eq!(b["unreachable"], serde_json::json!(true), "{doc}");
    assert!((b["best"].as_f64().unwrap() - hand_bound()).abs() < 1e-5, "{doc}");
    assert!(doc["warnings"][0].as_str().unwrap().contains("no policy can meet"), "{doc}");
}

#[test]
fn no_bound_is_guessed_where_a_fallback_or_drawn_work_can_change_it() {
    let with = |from: &str, to: &str| {
        let text = SCENARIO.replace(from, to);
        let s = parse(Path::new("inline.ron"), &text).unwrap_or_else(|e| panic!("{e}"));
        feasible::ceilings_at(&s, Path::new(".")).unwrap()
    };
    let fallback = with(
        r#"deadline: "400ms")"#,
        r#"deadline: "400ms", fallback: OnRefusalOrFailure, fallback_answer: FailOpen(cost_per_use: 0.0))"#,
    );
    assert!(fallback[0].best.is_nan() && !fallback[0].unreachable, "{fallback:?}");
    assert!(fallback[0].why.starts_with("no bound: ") && fallback[0].why.contains("fallback"), "{fallback:?}");
    let drawn = with(r#"deadline: "400ms")"#, r#"deadline: "400ms", work: Exponential(mean: "5ms"))"#);
    assert!(drawn[0].best.is_nan() && drawn[0].why.contains("local work"), "{drawn:?}");
    // A fixed local work shifts the call and shrinks the room: 100 ms of work leaves 300 ms.
    let worked = with(r#"deadline: "400ms")"#, r#"deadline: "400ms", work: Constant("100ms"))"#);
    let plain = with("x", "x");
    assert!(worked[0].best < plain[0].best, "{worked:?} vs {plain:?}");
    // A set that retries is named: the bound covers one call per request.
    let retry =
        with(r#"(name: "direct", stack: [])"#, r#"(name: "direct", stack: [(policy: Retry((max_attempts: 2)))])"#);
    assert!(retry[0].why.contains("\"direct\"") && retry[0].why.contains("more than once"), "{retry:?}");
}

#[test]
fn tune_says_no_policy_can_meet_the_constraint() {
    // The same scenario (a 60 s incident phase, for speed) with a limiter whose permits are
    // tuned: a knob on the policies alone, so the scenario's bound holds for every candidate.
    let dir = tempfile::tempdir().unwrap();
    let text = SCENARIO
        .replace(
            r#"(name: "direct", stack: []),"#,
            r#"(name: "limit", stack: [(policy: Limiter((permits: 50, queue: 0)))]),"#,
        )
        .replace("\"180s\"", "\"120s\"")
        .replace(r#"end: "180s""#, r#"end: "120s""#);
    std::fs::write(dir.path().join("q.ron"), text).unwrap();
    let spec = r#"TuneSpec(
    name: "q", base: "q.ron", replications: 2, policy: "limit",
    knobs: [(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", range: (from: 10, to: 100), integer: true)],
    decide: (maximize: "incident:query/in_time_ratio",
             subject_to: [(class: "query", metric: "in_time_ratio", phase: "incident", op: Ge, value: 0.5)]),
    budget: (runs: 8),
)"#;
    std::fs::write(dir.path().join("t.ron"), spec).unwrap();
    let o = brownout(&["tune", "t.ron", "--out", "out"], dir.path());
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("warning: no policy can meet incident:query/in_time_ratio >= 0.5"), "{out}");
    let rec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/recommendation.json")).unwrap()).unwrap();
    assert_eq!(rec["bounds"][0]["unreachable"], true, "{rec}");
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(html.contains("<li>Warning: no policy can meet"), "report.html lacks the bound");
}

#[test]
fn sweep_says_no_policy_can_meet_the_constraint_with_the_bound() {
    // The scenario above swept on the timeout set's timeout: an axis on the policies alone,
    // so every setting shares the scenario's traffic and dependency, and the recommendation
    // gives the hand integral's bound, in the words `run` and `tune` use.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("q.ron"), SCENARIO).unwrap();
    let spec = r#"SweepSpec(
    name: "q", base: "q.ron", replications: 2, policies: ["timeout"],
    metrics: ["incident:query/in_time_ratio"],
    axes: [(name: "timeout", path: "policies[timeout].stack[0].policy.Timeout.timeout", values: ["300ms", "390ms"])],
)"#;
    std::fs::write(dir.path().join("s.ron"), spec).unwrap();
    let o = brownout(&["sweep", "s.ron", "--out", "out"], dir.path());
    let err = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{err}");
    let pct = format!("{:.2} %", hand_bound() * 100.0);
    let said = format!("warning: no policy can meet incident:query/in_time_ratio >= 0.5: the best possible is {pct}");
    assert!(err.contains(&said), "{err}");
    let rec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/recommendation.json")).unwrap()).unwrap();
    assert_eq!(rec["feasible"], false, "{rec}");
    assert_eq!(rec["bounds"][0]["unreachable"], true, "{rec}");
    assert!((rec["bounds"][0]["best"].as_f64().unwrap() - hand_bound()).abs() < 1e-5, "{rec}");
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(html.contains("<li>Warning: no policy can meet"), "report.html lacks the bound");

    // A condition axis on the drift's peak: x9 (the hand integral) and x5, which leaves more
    // requests in time. A candidate must meet the constraint in both, so the bound is the
    // lower one, x9's, and says it is taken in the worst condition.
    let spec = spec.replace(
        "values: [\"300ms\", \"390ms\"])]",
        "values: [\"300ms\", \"390ms\"]), (name: \"peak\", path: \"dependency.drift.Ramp.to\", values: [5.0, 9.0])]",
    );
    std::fs::write(dir.path().join("c.ron"), spec.replace("name: \"q\"", "name: \"c\"")).unwrap();
    let o = brownout(&["sweep", "c.ron", "--out", "c"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let rec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("c/recommendation.json")).unwrap()).unwrap();
    assert!((rec["bounds"][0]["best"].as_f64().unwrap() - hand_bound()).abs() < 1e-5, "{rec}");
    assert!(rec["bounds"][0]["why"].as_str().unwrap().ends_with("in the condition where it is lowest"), "{rec}");
}
