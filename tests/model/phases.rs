//! Phases (issue 17): figures per named time window beside the whole run, derived phases,
//! expectations and sweep metrics that name a phase, and the bad inputs that name one wrongly.
//! Expected values are worked out by hand in the comments.

use crate::common::{self, run_text as run, scenario};

use brownout::metrics::summary::{PhaseSummary, ScenarioSummary};
use brownout::report::expect;
use common::brownout;

fn phase<'a>(s: &'a ScenarioSummary, name: &str) -> &'a PhaseSummary {
    s.phases.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no phase {name}"))
}

/// A request every 100 ms at 50, 150, ..., 29,950 ms (300 requests), a 1 s deadline, a
/// 10 ms dependency that is slow by 5 s from 10 s to 20 s: the 100 requests arriving then are
/// answered (ok) after 5 s, past the deadline; the 200 others in 10 ms. PHASES is replaced.
fn slow_middle(phases: &str) -> String {
    let times: Vec<String> = (0..300).map(|k| format!("\"{}ms\"", 50 + 100 * k)).collect();
    format!(
        r#"Scenario(
    name: "slow-middle", horizon: "40s",
    fleet: (instances: 1, workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "1s")],
    dependency: (latency: Constant("10ms"),
                 modes: [(at: "10s", mode: Slow("5s")), (at: "20s", mode: Healthy)]),
    policies: [(name: "none")],
    {phases}
)"#,
        times.join(", ")
    )
}

const BROWNOUT_PHASE: &str = r#"phases: [(name: "brownout", start: "10s", end: "20s")],"#;

#[test]
fn a_phase_reports_the_requests_that_arrived_in_it() {
    let s = run(&slow_middle(BROWNOUT_PHASE));
    assert_eq!(s.phases.len(), 1);
    let p = phase(&s, "brownout");
    assert_eq!((p.start_s, p.end_s, p.source.as_str()), (10.0, 20.0, "scenario"));
    let during = &p.runs[0].classes[0];
    // 100 arrivals in [10 s, 20 s), every one answered 5.01 s later: ok but late.
    assert_eq!(during.requests, 100);
    assert_eq!(during.outcomes.ok, 100);
    assert_eq!(during.goodput_ratio, 0.0);
    assert_eq!(during.deadline_missed, 100);
    // The whole run: 300 requests, 200 in time.
    let whole = &s.runs[0].classes[0];
    assert_eq!(whole.requests, 300);
    assert!((whole.goodput_ratio - 2.0 / 3.0).abs() < 1e-12, "{}", whole.goodput_ratio);
}

#[test]
fn summary_json_has_phases_only_when_the_run_has_some() {
    let with = serde_json::to_value(run(&slow_middle(BROWNOUT_PHASE))).unwrap();
    let list = with["phases"].as_array().expect("phases list");
    assert_eq!(list[0]["name"], "brownout");
    assert_eq!(list[0]["source"], "scenario");
    assert_eq!(list[0]["runs"][0]["classes"][0]["requests"], 100);
    // A flat dependency and no phases written: no derived phases, no `phases` key.
    let flat = slow_middle("").replace(r#"modes: [(at: "10s", mode: Slow("5s")), (at: "20s", mode: Healthy)]"#, "");
    let without = serde_json::to_value(run(&flat)).unwrap();
    assert!(without.get("phases").is_none(), "{}", without["phases"]);
}

#[test]
fn derived_phases_follow_the_mode_timeline() {
    // No phases written: the slow mode [10 s, 20 s) is `degraded`, with `before` [0, 10 s)
    // and `after` [20 s, 40 s) around it (no drift, so no ramp or recovery).
    let s = run(&slow_middle(""));
    let spans: Vec<(&str, f64, f64, &str)> =
        s.phases.iter().map(|p| (p.name.as_str(), p.start_s, p.end_s, p.source.as_str())).collect();
    assert_eq!(
        spans,
        [("before", 0.0, 10.0, "derived"), ("degraded", 10.0, 20.0, "derived"), ("after", 20.0, 40.0, "derived")]
    );
    let ratio = |n: &str| phase(&s, n).runs[0].classes[0].goodput_ratio;
    assert_eq!((ratio("before"), ratio("degraded"), ratio("after")), (1.0, 0.0, 1.0));
}

#[test]
fn derived_phases_of_a_drift_match_its_boundaries() {
    // Points: flat until 60 s, up to x20 by 90 s, held until 150 s, back by 180 s; warm-up
    // 30 s, horizon 240 s: before [30, 60), ramp [60, 90), degraded [90, 150),
    // recovery [150, 180), after [180, 240).
    let text = r#"Scenario(
        name: "drift", horizon: "240s", warmup: "30s",
        fleet: (instances: 1, workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 5.0), deadline: "1s")],
        dependency: (latency: Constant("10ms"),
                     drift: Points([("0s", 1.0), ("60s", 1.0), ("90s", 20.0), ("150s", 20.0), ("180s", 1.0)])),
        policies: [(name: "none")],
    )"#;
    let s = run(text);
    let spans: Vec<(&str, f64, f64)> = s.phases.iter().map(|p| (p.name.as_str(), p.start_s, p.end_s)).collect();
    assert_eq!(
        spans,
        [
            ("before", 30.0, 60.0),
            ("ramp", 60.0, 90.0),
            ("degraded", 90.0, 150.0),
            ("recovery", 150.0, 180.0),
            ("after", 180.0, 240.0)
        ]
    );
}

#[test]
fn disjoint_phases_covering_the_span_add_up_to_the_whole_run() {
    // Poisson traffic, a random dependency and a limiter; three phases tile [warm-up, horizon).
    let text = r#"Scenario(
        name: "tiles", horizon: "120s", warmup: "10s", seed: 3,
        fleet: (instances: 2, workers: (slots: 20, queue: 10, max_wait: "100ms"),
                pool: (max_connections: 10, acquire_timeout: "200ms")),
        classes: [(name: "a", arrivals: Poisson(rate_per_s: 60.0), deadline: "500ms"),
                  (name: "b", arrivals: Poisson(rate_per_s: 20.0), deadline: "2s")],
        dependency: (latency: LogNormal(median: "60ms", sigma: 0.8),
                     drift: Brownout(start: "40s", ramp: "10s", hold: "20s", peak: 8.0)),
        policies: [(name: "none"),
                   (name: "limit", stack: [(policy: Limiter((permits: 6))), (policy: Timeout((timeout: "400ms")))])],
        phases: [(name: "one", start: "10s", end: "45s"), (name: "two", start: "45s", end: "77s"),
                 (name: "three", start: "77s", end: "120s")],
    )"#;
    let s = run(text);
    let span = s.measured_s;
    for (r, whole) in s.runs.iter().enumerate() {
        for (c, wc) in whole.classes.iter().enumerate() {
            let parts: u64 = s.phases.iter().map(|p| p.runs[r].classes[c].requests).sum();
            assert_eq!(parts, wc.requests, "{} {}", whole.policy, wc.class);
            let ok: u64 = s.phases.iter().map(|p| p.runs[r].classes[c].outcomes.ok).sum();
            assert_eq!(ok, wc.outcomes.ok);
        }
        let calls: u64 = s.phases.iter().map(|p| p.runs[r].dependency.calls).sum();
        assert_eq!(calls, whole.dependency.calls, "{}", whole.policy);
        // Time-weighted means weighted by phase length give the whole run's mean.
        let weighted = |f: &dyn Fn(&brownout::metrics::summary::RunSummary) -> f64| {
            s.phases.iter().map(|p| f(&p.runs[r]) * (p.end_s - p.start_s)).sum::<f64>() / span
        };
        let inflight = weighted(&|x| x.dependency.mean_in_flight);
        assert!((inflight - whole.dependency.mean_in_flight).abs() < 1e-9 * inflight.max(1.0), "{inflight}");
        let busy = weighted(&|x| x.resources.workers.mean);
        assert!((busy - whole.resources.workers.mean).abs() < 1e-9 * busy.max(1.0), "{busy}");
    }
    assert!(s.runs[0].dependency.mean_in_flight > 0.0);
}

fn expectation(line: &str) -> Vec<expect::Checked> {
    let text = slow_middle(&format!("{BROWNOUT_PHASE} expect: [{line}],"));
    let s = scenario(&text);
    let summary = common::run(&s).summary;
    expect::check(&summary, &s.expect)
}

#[test]
fn an_expectation_on_a_phase_passes() {
    // In time during the brownout: 0 of 100 (by hand, above).
    let c = expectation(
        r#"(policy: "none", class: "api", phase: "brownout", metric: "goodput_ratio", op: Eq, value: 0.0)"#,
    );
    assert!(c[0].passed, "{c:?}");
    assert_eq!(c[0].actual, 0.0);
    assert!(c[0].statement.contains("during brownout"), "{}", c[0].statement);
}

#[test]
fn an_expectation_on_a_phase_fails_where_the_whole_run_would_pass() {
    // The whole run's 2/3 passes `>= 0.5`; the phase's 0 does not.
    let whole = expectation(r#"(policy: "none", class: "api", metric: "goodput_ratio", op: Ge, value: 0.5)"#);
    assert!(whole[0].passed, "{whole:?}");
    let during = expectation(
        r#"(policy: "none", class: "api", phase: "brownout", metric: "goodput_ratio", op: Ge, value: 0.5)"#,
    );
    assert!(!during[0].passed, "{during:?}");
    assert_eq!(during[0].actual, 0.0);
}

/// 1-based line and column of the first `marker` in `text`.
fn position(text: &str, marker: &str) -> (usize, usize) {
    let at = text.find(marker).unwrap_or_else(|| panic!("{marker} not in text"));
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// `check` and `run` both refuse `text` with exit 2, naming `file:line:` of `marker` and
/// `words`; `run` writes no folder.
fn refused(name: &str, text: &str, marker: &str, words: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{name}.ron"));
    std::fs::write(&file, text).unwrap();
    let (line, _) = position(text, marker);
    let out = dir.path().join("out");
    let f = file.to_str().unwrap();
    for args in [vec!["check", f], vec!["run", f, "--out", out.to_str().unwrap()]] {
        let o = brownout(&args, dir.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name} {args:?}: {err}");
        assert!(err.contains(&format!("{name}.ron:{line}:")), "{name}: expected line {line}: {err}");
        assert!(err.contains(words), "{name}: expected {words:?}: {err}");
    }
    assert!(!out.exists(), "{name}: run wrote a folder");
}

/// The slow-middle scenario with `phases` on their own lines, for located errors.
fn with_phases(phases: &str) -> String {
    slow_middle(&format!("phases: [\n{phases}\n],"))
}

#[test]
fn overlapping_phases_are_refused_at_the_second_start() {
    let text = with_phases("(name: \"a\", start: \"5s\", end: \"15s\"),\n(name: \"b\", start: \"12s\", end: \"25s\"),");
    refused("overlap", &text, "start: \"12s\"", "overlap");
}

#[test]
fn an_empty_phase_is_refused_at_its_end() {
    let text = with_phases("(name: \"a\", start: \"5s\",\n end: \"5s\"),");
    refused("empty", &text, "end: \"5s\"", "empty");
}

#[test]
fn a_phase_past_the_horizon_or_before_warmup_is_refused() {
    let text = with_phases("(name: \"a\", start: \"5s\",\n end: \"50s\"),");
    refused("outside", &text, "end: \"50s\"", "after the horizon");
    let warm = with_phases("(name: \"a\",\n start: \"1s\", end: \"5s\"),")
        .replace("horizon: \"40s\"", "horizon: \"40s\", warmup: \"2s\"");
    refused("before-warmup", &warm, "start: \"1s\"", "before the warm-up");
}

#[test]
fn an_unnamed_or_twice_named_phase_is_refused() {
    refused("unnamed", &with_phases("(name: \"\", start: \"5s\", end: \"6s\"),"), "name: \"\"", "must not be empty");
    let twice = with_phases("(name: \"a\", start: \"5s\", end: \"6s\"),\n(name: \"a\", start: \"7s\", end: \"8s\"),");
    refused("twice", &twice, "name: \"a\", start: \"7s\"", "defined twice");
}

#[test]
fn an_expectation_naming_an_unknown_phase_is_refused() {
    let text = slow_middle(&format!(
        "{BROWNOUT_PHASE}\n expect: [\n(policy: \"none\", class: \"api\",\n phase: \"outage\", metric: \"goodput_ratio\", op: Ge, value: 0.5)],"
    ));
    refused("unknown-phase", &text, "phase: \"outage\"", "unknown phase \"outage\" (phases: brownout)");
}

#[test]
fn a_sweep_metric_naming_an_unknown_phase_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.ron"), slow_middle(BROWNOUT_PHASE)).unwrap();
    let spec = "SweepSpec(name: \"s\", base: \"base.ron\",\n metrics: [\"brownout:api/goodput_ratio\",\n \"outage:api/goodput_ratio\"],\n axes: [(name: \"x\", path: \"classes[api].deadline\", values: [\"1s\", \"2s\"])])";
    std::fs::write(dir.path().join("spec.ron"), spec).unwrap();
    let out = dir.path().join("out");
    let o = brownout(&["sweep", "spec.ron", "-j", "1", "--out", out.to_str().unwrap()], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let (line, _) = position(spec, "\"outage:");
    assert!(err.contains(&format!("spec.ron:{line}:")), "expected line {line}: {err}");
    assert!(err.contains("unknown phase \"outage\""), "{err}");
    assert!(!out.exists());
}

#[test]
fn a_sweep_metric_with_a_phase_reads_the_phase() {
    // Deadline 1 s: goodput during the brownout 0 (answers after 5.01 s); deadline 6 s: 1.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.ron"), slow_middle(BROWNOUT_PHASE)).unwrap();
    let spec = r#"SweepSpec(name: "s", base: "base.ron", metrics: ["brownout:api/goodput_ratio", "api/goodput_ratio"],
        axes: [(name: "deadline", path: "classes[api].deadline", values: ["1s", "6s"])])"#;
    let spec_path = dir.path().join("spec.ron");
    std::fs::write(&spec_path, spec).unwrap();
    let plan = brownout::sweep::grid::load(&spec_path).unwrap();
    let values: Vec<Vec<Option<f64>>> =
        (0..2).map(|run| brownout::sweep::run_one(&plan, run).unwrap().metrics).collect();
    assert_eq!(values[0][0], Some(0.0));
    assert!((values[0][1].unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(values[1], vec![Some(1.0), Some(1.0)]);
}
