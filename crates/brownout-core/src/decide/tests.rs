use super::*;
use crate::scenario::{Cmp, Constraint, Decide};

/// The catalogue's rule for `d`.
fn rule(d: &Decide) -> Rule {
    Rule::of(d, &Margins::default())
}

fn ge(v: f64) -> Constraint {
    Constraint {
        class: Some("a".into()),
        dependency: None,
        metric: "in_time_ratio".into(),
        phase: None,
        op: Cmp::Ge,
        value: v,
    }
}

fn decide(cs: Vec<Constraint>) -> Decide {
    Decide { minimize: Some("business_cost".into()), maximize: None, subject_to: cs }
}

#[test]
fn one_sided_bounds_by_hand() {
    // 1..5: mean 3, s^2 = 2.5, t(0.95, 4) = 2.131847 (table), half = 2.131847 * sqrt(2.5 / 5).
    let b = Bounds::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    let half = 2.131_847 * 0.5f64.sqrt();
    assert_eq!((b.n, b.mean), (5, 3.0));
    assert!((b.lo - (3.0 - half)).abs() < 1e-5 && (b.hi - (3.0 + half)).abs() < 1e-5, "{b:?}");
    let one = Bounds::of(&[7.0, f64::NAN]);
    assert_eq!((one.n, one.lo, one.hi), (1, 7.0, 7.0));
}

#[test]
fn verdicts_follow_the_bounds() {
    // Values 0.990, 0.992, 0.994: mean 0.992, s = 0.002, t(0.95, 2) = 2.919986,
    // half = 2.919986 * 0.002 / sqrt(3) = 0.003372: lo 0.98863, hi 0.99537.
    let v = [0.990, 0.992, 0.994];
    assert_eq!(judge(&ge(0.985), &v).verdict, Verdict::Holds);
    assert_eq!(judge(&ge(0.99), &v).verdict, Verdict::Unsure);
    assert_eq!(judge(&ge(0.996), &v).verdict, Verdict::Fails);
    let j = judge(&ge(0.99), &v);
    assert!((j.margin - (0.992 - 2.919_986 * 0.002 / 3f64.sqrt() - 0.99)).abs() < 1e-6, "{j:?}");
    let le = Constraint { op: Cmp::Le, ..ge(0.99) };
    assert_eq!(judge(&le, &v).verdict, Verdict::Unsure);
    assert_eq!(judge(&Constraint { value: 1.0, ..le.clone() }, &v).verdict, Verdict::Holds);
    assert!(judge(&ge(0.5), &[0.9]).untested);
    assert_eq!(judge(&ge(0.5), &[]).verdict, Verdict::Fails);
}

#[test]
fn choice_prefers_feasible_then_objective_then_least_violation() {
    let d = decide(vec![ge(0.9)]);
    let s = |obj: [f64; 3], c: [f64; 3]| Samples { objective: obj.to_vec(), constraints: vec![c.to_vec()] };
    let samples = vec![
        s([1.0, 1.0, 1.0], [0.5, 0.5, 0.5]),    // cheapest, infeasible
        s([5.0, 6.0, 7.0], [0.95, 0.96, 0.97]), // feasible
        s([3.0, 4.0, 5.0], [0.95, 0.96, 0.97]), // feasible and cheaper: the choice
    ];
    let evals: Vec<Evaluated> = samples.iter().map(|x| evaluate(&d, x)).collect();
    assert_eq!(evals.iter().map(|e| e.feasible).collect::<Vec<_>>(), [false, true, true]);
    let c = choose(Sense::Minimize, &evals, &samples, &rule(&d));
    assert_eq!((c.recommended, c.runner_up, c.feasible), (Some(2), Some(1), true));
    // Paired differences 2, 2, 2: no spread, the interval is the point 2 and excludes 0.
    assert_eq!(c.lost, Some(Lost::Objective { by: 2.0, significant: true }));

    // Only the infeasible ones: least violation wins; 0.5 short of 0.9 is 0.4 / 0.9.
    let evals2 = vec![evals[0].clone(), evaluate(&d, &s([9.0; 3], [0.8, 0.8, 0.8]))];
    let c2 = choose(Sense::Minimize, &evals2, &[samples[0].clone(), s([9.0; 3], [0.8; 3])], &rule(&d));
    assert_eq!((c2.recommended, c2.feasible), (Some(1), false));
    assert!((evals2[0].violation - 0.4 / 0.9).abs() < 1e-12);
    match c2.lost {
        Some(Lost::MoreViolation { by }) => assert!((by - (0.4 / 0.9 - 0.1 / 0.9)).abs() < 1e-12),
        other => panic!("{other:?}"),
    }
}

#[test]
fn equal_objectives_are_a_tie_and_noise_is_not_significant() {
    let d = decide(vec![]);
    let a = Samples { objective: vec![1.0, 2.0, 3.0], constraints: vec![] };
    let b = Samples { objective: vec![1.0, 2.0, 3.0], constraints: vec![] };
    let evals = [evaluate(&d, &a), evaluate(&d, &b)];
    let c = choose(Sense::Minimize, &evals, &[a.clone(), b], &rule(&d));
    assert_eq!(c.recommended, Some(0), "ties keep the earlier candidate");
    assert_eq!(c.lost, Some(Lost::Objective { by: 0.0, significant: false }));
    // Paired differences +1, -1, +1.5: mean 0.5, interval straddles 0.
    let n = Samples { objective: vec![2.0, 1.0, 4.5], constraints: vec![] };
    let c = choose(Sense::Minimize, &[evaluate(&d, &a), evaluate(&d, &n)], &[a, n], &rule(&d));
    assert_eq!(c.recommended, Some(0));
    assert!(matches!(c.lost, Some(Lost::Objective { significant: false, .. })));
}

#[test]
fn worst_case_across_conditions() {
    let d = decide(vec![ge(0.9)]);
    let mild = evaluate(&d, &Samples { objective: vec![1.0; 3], constraints: vec![vec![0.99; 3]] });
    let deep = evaluate(&d, &Samples { objective: vec![4.0; 3], constraints: vec![vec![0.6; 3]] });
    let w = worst_case(Sense::Minimize, &[mild.clone(), deep.clone()]);
    assert!(!w.feasible);
    assert_eq!(w.objective.mean, 4.0);
    assert_eq!(w.constraints[0].bounds.mean, 0.6);
    assert!((w.violation - 0.3 / 0.9).abs() < 1e-12);
    assert!(worst_case(Sense::Minimize, &[mild.clone(), mild]).feasible);
}

#[test]
fn validation_names_the_field() {
    let ok: &Resolve = &|_| Ok(());
    assert!(validate(&decide(vec![ge(0.9)]), ok).is_ok());
    let both = Decide { maximize: Some("x".into()), ..decide(vec![]) };
    assert_eq!(validate(&both, ok).unwrap_err().0, ".maximize");
    let none = Decide { minimize: None, ..decide(vec![]) };
    assert_eq!(validate(&none, ok).unwrap_err().0, "");
    let eq = Constraint { op: Cmp::Eq, ..ge(0.9) };
    assert_eq!(validate(&decide(vec![ge(0.9), eq]), ok).unwrap_err().0, ".subject_to[1].op");
    let unknown = Constraint { metric: "speediness".into(), ..ge(0.9) };
    let e = validate(&decide(vec![unknown]), ok).unwrap_err();
    assert_eq!(e.0, ".subject_to[0].metric");
    assert!(e.1.contains("unknown metric \"speediness\""), "{}", e.1);
    let no_phase: &Resolve = &|r| match r {
        ObjectiveRef::Metric(m) if m.phase.is_some() => Err((".phase", "unknown phase".into())),
        _ => Ok(()),
    };
    let phased = Constraint { phase: Some("nope".into()), ..ge(0.9) };
    assert_eq!(validate(&decide(vec![phased]), no_phase).unwrap_err().0, ".subject_to[0].phase");
}

#[test]
fn objectives_parse_as_metrics_or_axes() {
    let m = |s| match ObjectiveRef::parse(s).unwrap() {
        ObjectiveRef::Metric(m) => m.path(),
        ObjectiveRef::Axis(a) => format!("axis {a}"),
    };
    assert_eq!(m("business_cost"), "business_cost");
    assert_eq!(m("brownout:authorize/in_time_ratio"), "brownout:authorize/in_time_ratio");
    assert_eq!(m("authorize_share"), "axis authorize_share");
    assert!(ObjectiveRef::parse("in_time_ratio").unwrap_err().to_string().contains("per-class"));
    assert!(ObjectiveRef::parse("a/bogus").unwrap_err().to_string().contains("unknown metric"));
}

#[test]
fn objectives_are_ranked_over_the_replications_every_feasible_candidate_has() {
    // a has no objective value in replication 2. Over its own replications a averages 5, b
    // over all three (4 + 4 + 100) / 3 = 36; on replications 0 and 1, where both have one, a
    // is 5 and b is 4: maximising, a is the choice (`stats::common_means`, the rule of
    // the run report's stars and a sweep's best settings).
    let d = decide(vec![]);
    let a = Samples { objective: vec![5.0, 5.0, f64::NAN], constraints: vec![] };
    let b = Samples { objective: vec![4.0, 4.0, 100.0], constraints: vec![] };
    let evals = [evaluate(&d, &a), evaluate(&d, &b)];
    assert!(evals.iter().all(|e| e.feasible));
    let c = choose(Sense::Maximize, &evals, &[a.clone(), b.clone()], &rule(&d));
    assert_eq!((c.recommended, c.runner_up), (Some(0), Some(1)));
    let c = choose(Sense::Maximize, &[evals[1].clone(), evals[0].clone()], &[b, a], &rule(&d));
    assert_eq!(c.recommended, Some(1));
}

#[test]
fn a_loss_inside_the_objectives_margin_is_a_tie() {
    // Maximise a's in-time ratio. b trails the choice by 0.0026 points (2.6e-5 as a
    // fraction) on every seed: the paired interval is the point 2.6e-5, which excludes zero
    // (the old rule called it "not tied") but lies inside the catalogue's 0.1-point margin.
    let d = Decide { minimize: None, maximize: Some("a/in_time_ratio".into()), subject_to: vec![] };
    let a = Samples { objective: vec![0.766, 0.770, 0.762], constraints: vec![] };
    let b = Samples { objective: a.objective.iter().map(|x| x - 2.6e-5).collect(), constraints: vec![] };
    let evals = [evaluate(&d, &a), evaluate(&d, &b)];
    let c = choose(Sense::Maximize, &evals, &[a, b], &rule(&d));
    assert_eq!(c.recommended, Some(0));
    match c.lost {
        Some(Lost::Objective { by, significant: false }) => assert!((by - 2.6e-5).abs() < 1e-12, "{by}"),
        other => panic!("a tie, not {other:?}"),
    }
}

#[test]
fn equally_infeasible_candidates_are_ranked_by_the_objective() {
    // The repro: maximise a share (a decision axis, margin 0) subject to an in-time
    // ratio that no candidate meets, each falling short by the same amount. Candidate 0 has
    // the smaller share, 0.2; candidate 1 the larger, 0.6. Equal violations (0.5 short of
    // 0.9: 0.5 / 0.9 each) are no reason to prefer the earlier: the larger share wins, and
    // the runner-up loses on the objective by 0.4, not by "0.0000" of violation.
    let d = Decide { minimize: None, maximize: Some("share".into()), subject_to: vec![ge(0.9)] };
    let s = |share: f64| Samples { objective: vec![share; 3], constraints: vec![vec![0.4; 3]] };
    let samples = [s(0.2), s(0.6)];
    let evals: Vec<Evaluated> = samples.iter().map(|x| evaluate(&d, x)).collect();
    assert_eq!(evals[0].violation, evals[1].violation);
    let c = choose(Sense::Maximize, &evals, &samples, &Rule::new(&d, &|p| Margins::default().of_path(p)));
    assert_eq!((c.recommended, c.runner_up, c.feasible), (Some(1), Some(0), false));
    match c.lost {
        Some(Lost::Objective { by, significant: true }) => assert!((by - 0.4).abs() < 1e-12, "{by}"),
        other => panic!("lost on the objective, not {other:?}"),
    }
    // Violations within the constraint's margin (0.001 / 0.9) are equal too: 0.4 and
    // 0.4005 short of 0.9 differ by 0.0005.
    let t = |share: f64, v: f64| Samples { objective: vec![share; 3], constraints: vec![vec![v; 3]] };
    let samples = [t(0.2, 0.4005), t(0.6, 0.4)];
    let evals: Vec<Evaluated> = samples.iter().map(|x| evaluate(&d, x)).collect();
    assert!(evals[0].violation < evals[1].violation);
    let c = choose(Sense::Maximize, &evals, &samples, &rule(&d));
    assert_eq!(c.recommended, Some(1));
    // The same share as well: a tie, reported as one, the earlier named.
    let samples = [s(0.6), s(0.6)];
    let evals: Vec<Evaluated> = samples.iter().map(|x| evaluate(&d, x)).collect();
    let c = choose(Sense::Maximize, &evals, &samples, &rule(&d));
    assert_eq!(c.recommended, Some(0));
    assert_eq!(c.lost, Some(Lost::Objective { by: 0.0, significant: false }));
    // A violation larger by more than the margin still loses on violation.
    let samples = [t(0.9, 0.3), t(0.1, 0.4)];
    let evals: Vec<Evaluated> = samples.iter().map(|x| evaluate(&d, x)).collect();
    let c = choose(Sense::Maximize, &evals, &samples, &rule(&d));
    assert_eq!(c.recommended, Some(1));
    assert!(matches!(c.lost, Some(Lost::MoreViolation { .. })), "{:?}", c.lost);
}
