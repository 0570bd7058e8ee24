//! Issue 18, "the run report recommends": a scenario's `decide` section makes `brownout run`
//! choose a policy set over the replications, store the choice in `summary.json`, write
//! `recommendation.json` and say it in the terminal and at the top of the reports; without
//! one the reports name the incident phase's winner on in-time success, ties as ties. The
//! expectations are worked out by hand from scenarios whose figures are exact.

use crate::common::{self, run_text as run};

use brownout::decide::{Lost, Verdict};
use brownout::report::decision;
use common::brownout;

/// A request every 100 ms (50 ms, 150 ms, ..., 5,950 ms: 60 requests) to a dependency that
/// always takes 10 ms, a 1 s deadline. `direct` and `same` (the same empty stack) answer every
/// request in time: in-time ratio 1, p95 about 10 ms. `tight` times out every call at 5 ms:
/// in-time ratio 0, and a p95 near 5 ms, so the objective alone (minimise p95) would pick it.
/// Every figure is exact and the same on every seed (nothing is drawn).
fn scenario(replications: u32, decide: &str) -> String {
    let times: Vec<String> = (0..60).map(|k| format!("\"{}ms\"", 50 + 100 * k)).collect();
    format!(
        r#"Scenario(
    name: "decide-run", horizon: "7s", replications: {replications},
    fleet: (instances: 1, workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "1s")],
    dependency: (latency: Constant("10ms")),
    policies: [
        (name: "direct", stack: []),
        (name: "same", stack: []),
        (name: "tight", stack: [(policy: Timeout((timeout: "5ms")))]),
    ],
    phases: [(name: "brownout", start: "2s", end: "4s")],
    {decide}
)"#,
        times.join(", ")
    )
}

/// Minimise p95 subject to 99 % in time during the `brownout` phase.
const DECIDE: &str = r#"decide: (minimize: "api/p95_ms", subject_to: [
        (class: "api", metric: "in_time_ratio", phase: "brownout", op: Ge, value: 0.99),
    ]),"#;

#[test]
fn a_set_that_cannot_meet_a_constraint_is_not_recommended_and_identical_stacks_tie() {
    let s = run(&scenario(3, DECIDE));
    let r = s.decision.as_ref().expect("a decide section gives a decision");
    assert_eq!((r.source.as_str(), r.replications, r.candidates), ("run", 3, 3));
    let rec = r.recommended.as_ref().unwrap();
    // `tight` has the smallest p95 (the objective would choose it) but 0 % in time.
    let p95 = |p: usize| s.runs[p].classes[0].latency_ms.p95;
    assert!(p95(2) < p95(0), "tight's p95 {} is below direct's {}", p95(2), p95(0));
    assert_eq!(rec.policy, "direct", "{r:#?}");
    assert!(r.feasible && rec.feasible);
    // The 20 requests of the phase (2.05 s .. 3.95 s) all in time on every seed: mean 1,
    // no spread, so both bounds are 1 and the constraint holds with margin 1 - 0.99.
    let c = &r.constraints[0];
    assert_eq!((c.metric.as_str(), c.op.as_str(), c.n), ("brownout:api/in_time_ratio", ">=", 3));
    assert_eq!((c.mean, c.lo, c.hi, c.verdict, c.untested), (1.0, 1.0, 1.0, Verdict::Holds, false));
    assert!((c.margin - 0.01).abs() < 1e-12, "{c:?}");
    // `same` has direct's stack: equal on every seed, a tie, and the earlier set is named.
    let up = r.runner_up.as_ref().unwrap();
    assert_eq!(up.policy, "same");
    assert_eq!(r.lost, Some(Lost::Objective { by: 0.0, significant: false }));
    // The stack is ready to paste: RON that reads back as direct's (empty) stack.
    assert_eq!(rec.stack.as_deref(), Some("[]"));
    let text = decision::markdown(&s);
    assert!(text.contains("**Recommended: `direct`**"), "{text}");
    assert!(text.contains("Runner-up `same`") && text.contains("it ties on"), "{text}");
}

#[test]
fn an_infeasible_runner_up_says_which_constraint_it_misses_and_by_how_much() {
    // Without `same`, tight is the runner-up: 0 % in time against 99 %, short by 0.99.
    let text = scenario(2, DECIDE).replace(r#"(name: "same", stack: []),"#, "");
    let s = run(&text);
    let r = s.decision.as_ref().unwrap();
    assert_eq!(r.recommended.as_ref().unwrap().policy, "direct");
    let up = r.runner_up.as_ref().unwrap();
    assert_eq!(up.policy, "tight");
    assert!(!up.feasible);
    assert_eq!(up.constraints[0].verdict, Verdict::Fails);
    match r.lost {
        Some(Lost::Infeasible { constraint: 0, by }) => assert!((by - 0.99).abs() < 1e-12, "{by}"),
        ref other => panic!("{other:?}"),
    }
    let md = decision::markdown(&s);
    assert!(md.contains("does not meet `brownout:api/in_time_ratio` >= 99.00 %"), "{md}");
    assert!(md.contains("short by 99.00 %"), "{md}");
}

#[test]
fn when_no_set_meets_the_constraints_the_least_short_is_named_as_such() {
    // 100 % in time is out of reach for tight (0 %) and, with Gt, for direct too (exactly 1).
    let decide = DECIDE.replace("op: Ge, value: 0.99", "op: Gt, value: 1.0");
    let s = run(&scenario(2, &decide).replace(r#"(name: "same", stack: []),"#, ""));
    let r = s.decision.as_ref().unwrap();
    assert!(!r.feasible);
    // direct's shortfall is the least (it touches the target), tight's is the whole 1.0.
    assert_eq!(r.recommended.as_ref().unwrap().policy, "direct");
    assert!(decision::markdown(&s).contains("No policy set meets every constraint; closest: `direct`"));
}

#[test]
fn one_seed_gives_untested_verdicts_and_asks_for_replications() {
    let s = run(&scenario(1, DECIDE));
    let r = s.decision.as_ref().unwrap();
    assert_eq!(r.replications, 1);
    assert!(r.constraints.iter().all(|c| c.untested), "{r:#?}");
    let text = decision::markdown(&s);
    assert!(text.contains("One seed") && text.contains("--replications"), "{text}");
    assert!(text.contains("untested (one seed)"), "{text}");
}

#[test]
fn without_decide_the_incident_phase_winner_is_named_and_ties_are_ties() {
    let s = run(&scenario(1, ""));
    assert!(s.decision.is_none());
    // The summary keeps its old shape: no `decision` key.
    assert!(!serde_json::to_string(&s).unwrap().contains("\"decision\""));
    let text = decision::markdown(&s);
    assert!(text.contains("during brownout"), "{text}");
    // direct and same both 100 % in time during the phase: a tie, not a win; tight (0 %) is not named.
    assert!(text.contains("`direct` at 100.0%, `same` at 100.0% tie"), "{text}");
    assert!(!text.contains("`tight`"), "{text}");
    // Without `same`, direct wins alone.
    let s = run(&scenario(1, "").replace(r#"(name: "same", stack: []),"#, ""));
    assert!(decision::markdown(&s).contains("`direct` at 100.0% wins"), "{}", decision::markdown(&s));
}

#[test]
fn run_writes_recommendation_json_prints_it_and_puts_it_first_in_the_reports() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("s.ron"), scenario(2, DECIDE)).unwrap();
    let o = brownout(&["run", "s.ron", "--out", "out"], tmp.path());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}{stdout}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("== Recommendation ==") && stdout.contains("Recommended: direct"), "{stdout}");
    let out = tmp.path().join("out");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("recommendation.json")).unwrap()).unwrap();
    assert_eq!(json["source"], "run");
    assert_eq!(json["recommended"]["policy"], "direct");
    assert_eq!(json["constraints"][0]["verdict"], "holds");
    assert_eq!(json["runner_up"]["policy"], "same");
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["decision"], json);
    for report in ["report.md", "report.html"] {
        let text = std::fs::read_to_string(out.join(report)).unwrap();
        let (rec, cmp) = (text.find("Recommendation").unwrap(), text.find("Comparison").unwrap());
        assert!(rec < cmp, "{report}: the recommendation comes before the tables");
    }
    // Without a decide section nothing is written beyond the usual files.
    std::fs::write(tmp.path().join("plain.ron"), scenario(1, "")).unwrap();
    let o = brownout(&["run", "plain.ron", "--out", "plain"], tmp.path());
    assert!(o.status.success());
    assert!(!tmp.path().join("plain/recommendation.json").exists());
}

/// Bad `decide` sections: `check` and `run` both exit 2 naming the file, line and column of
/// the offending value, and `run` writes nothing.
#[test]
fn bad_decide_sections_are_refused_with_their_location() {
    let cases = [
        (DECIDE.replace("api/p95_ms", "api/nonsense_ms"), "nonsense_ms", 12),
        (DECIDE.replace("phase: \"brownout\"", "phase: \"outage\""), "outage", 13),
        (DECIDE.replace("class: \"api\"", "class: \"nobody\""), "nobody", 13),
    ];
    for (decide, named, line) in cases {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("s.ron"), scenario(2, &decide)).unwrap();
        for args in [&["check", "s.ron"][..], &["run", "s.ron", "--out", "out"][..]] {
            let o = brownout(args, tmp.path());
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?} {named}: {err}");
            assert!(err.contains(named), "{args:?}: {err}");
            assert!(err.contains(&format!("s.ron:{line}:")), "{args:?} {named}: wants line {line}: {err}");
            assert!(!tmp.path().join("out").exists());
        }
    }
}
