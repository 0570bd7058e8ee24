//! One rule for "different" (issue 31): run stars, a sweep's best settings, `decide`, `tune`
//! and `diff` judge the same two sets of values by the same shared function
//! (`stats::paired_ci95` with the metric's margin), so a difference inside the margin is a
//! tie everywhere, even where its interval excludes zero. Also: a latency of answers is not
//! ranked between sets that answered different numbers, and cost is not ranked where the
//! scenario does not price failures.

use std::path::Path;

use brownout::decide::{self, Evaluated, Lost, Rule, Samples, Sense};
use brownout::metrics::catalogue::Margins;
use brownout::metrics::summary::{Comparison, RunSummary, ScenarioSummary};
use brownout::report::replicate::{self, RankRules, Standing};
use brownout::sweep::RunRecord;
use brownout::sweep::best::best_sets;
use brownout::sweep::grid::{AxisInfo, PlanInfo};

/// The shared input every path is given: two alternatives' in-time ratios over five seeds.
/// `b` trails `a` by 0.0005 (0.05 percentage point) on every seed, give or take 0.0001:
/// differences 0.0005, 0.0006, 0.0004, 0.0005, 0.0005, mean 0.0005, s^2 = 2e-8 / 4 = 5e-9,
/// s / sqrt(5) = 3.1623e-5, t(0.975, 4) = 2.776445 (tables: 2.776), half-width 8.780e-5:
/// [0.000412, 0.000588]. The interval excludes zero, and lies inside the catalogue's margin
/// for a ratio (0.001): a tie by the rule.
pub fn inside_the_margin() -> (Vec<f64>, Vec<f64>) {
    let a = vec![0.7660, 0.7700, 0.7620, 0.7680, 0.7650];
    let d = [0.0005, 0.0006, 0.0004, 0.0005, 0.0005];
    let b = a.iter().zip(d).map(|(x, y)| x - y).collect();
    (a, b)
}

/// A run summary of the grocery golden, its policy set renamed and its first class's
/// in-time ratio (or any figure) set by `edit`.
fn run(policy: &str, edit: impl Fn(&mut RunSummary)) -> RunSummary {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/golden/grocery/summary.json");
    let s: ScenarioSummary = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut r = s.runs[0].clone();
    r.policy = policy.to_string();
    edit(&mut r);
    r
}

/// The run path: `replicate::compare` over the two sets' runs, one run per seed.
fn run_path(a: &[f64], b: &[f64], rules: &RankRules) -> Comparison {
    let runs = |name: &str, xs: &[f64]| -> Vec<RunSummary> {
        xs.iter().map(|&v| run(name, |r| r.classes[0].in_time_ratio = v)).collect()
    };
    let (ra, rb) = (runs("a", a), runs("b", b));
    let sets = vec![ra.iter().collect::<Vec<_>>(), rb.iter().collect::<Vec<_>>()];
    let class = ra[0].classes[0].class.clone();
    replicate::compare(&sets, rules)
        .into_iter()
        .find(|c| c.metric == "in_time_ratio" && c.class.as_deref() == Some(class.as_str()))
        .expect("in_time_ratio compared")
}

/// The sweep path: `best_sets` over two settings of one decision axis.
fn sweep_path(a: &[f64], b: &[f64]) -> brownout::sweep::best::BestSet {
    let reps = a.len() as u32;
    let plan = PlanInfo {
        sweep: "s".into(),
        base: "b".into(),
        seed: 1,
        replications: reps,
        axes: vec![AxisInfo {
            name: "x".into(),
            path: "policies[p].stack[0].policy.Limiter.permits".into(),
            values: vec![0.0, 1.0],
            role: None,
            link: None,
            unit: None,
        }],
        points: vec![vec![0.0], vec![1.0]],
        policies: vec!["p".into()],
        metrics: vec!["c/in_time_ratio".into()],
        decide: None,
        hash: "h".into(),
        scenario_policies: Vec::new(),
        rules: Vec::new(),
    };
    let records: Vec<RunRecord> = a
        .iter()
        .chain(b)
        .enumerate()
        .map(|(run, &v)| RunRecord {
            run: run as u64,
            seed: plan.replication_seed(plan.run_id(run as u64).replication),
            events: 0,
            requests: 0,
            metrics: vec![Some(v)],
            answered: Vec::new(),
            key: None,
        })
        .collect();
    best_sets(&plan, &records).remove(0)
}

/// A `decide` section maximising the first class's in-time ratio, no constraints.
fn maximize() -> brownout::scenario::Decide {
    brownout::scenario::Decide {
        minimize: None,
        maximize: Some("checkout/in_time_ratio".into()),
        subject_to: Vec::new(),
    }
}

/// The decide path: `decide::choose` between the two.
fn decide_path(a: &[f64], b: &[f64]) -> decide::Choice {
    let d = maximize();
    let samples = [
        Samples { objective: a.to_vec(), constraints: Vec::new() },
        Samples { objective: b.to_vec(), constraints: Vec::new() },
    ];
    let evals: Vec<Evaluated> = samples.iter().map(|s| decide::evaluate(&d, s)).collect();
    decide::choose(Sense::Maximize, &evals, &samples, &Rule::of(&d, &Margins::default()))
}

/// The tune path: `tune::recommend` over two evaluated candidates of the shipped tune
/// example, its objective set to the in-time ratio.
fn tune_path(a: &[f64], b: &[f64]) -> brownout::decide::recommendation::Recommendation {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/tune/grocery-tiered.ron");
    let mut space = brownout::tune::load(&spec).expect("the shipped tune example loads");
    space.spec.decide = maximize();
    let done: Vec<brownout::tune::Evaluation> = [(8.0, a), (16.0, b)]
        .into_iter()
        .enumerate()
        .map(|(k, (permits, xs))| {
            let samples = Samples { objective: xs.to_vec(), constraints: Vec::new() };
            brownout::tune::Evaluation {
                values: vec![permits, 0.2],
                eval: decide::evaluate(&space.spec.decide, &samples),
                samples,
                runs: (k as u64 + 1) * xs.len() as u64,
            }
        })
        .collect();
    brownout::tune::recommend(&space, &done)
}

/// The diff path: two run folders' figures on the same seeds, A holding `a` and B holding `b`
/// as one class's in-time ratio, compared paired by seed.
fn diff_path(a: &[f64], b: &[f64]) -> brownout::diff::Diff {
    use brownout::diff::{Figure, Figures, Key, Rule as DiffRule, compare};
    use brownout::metrics::catalogue::{Scope, find};
    let m = find(Scope::Class, "in_time_ratio").unwrap();
    let figures = |xs: &[f64]| -> Figures {
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let key = Key { point: None, policy: "p".into(), class: Some("checkout".into()), phase: None };
        let fig = Figure { value: mean, ci95: None, values: xs.to_vec() };
        [(key, vec![(m, fig)])].into()
    };
    compare(&figures(a), &figures(b), DiffRule { min_change: 0.01, paired: true })
}

#[test]
fn a_difference_inside_the_margin_is_a_tie_in_run_sweep_decide_tune_and_diff() {
    let (a, b) = inside_the_margin();
    // The interval excludes zero: under a zero-based rule every path would call `a` better.
    let p = brownout::stats::paired_ci95(&a, &b, 0.0);
    assert!(p.differs && p.diff.ci_lo > 0.0, "{p:?}");
    assert!((p.diff.ci_lo - (0.0005 - 8.780e-5)).abs() < 1e-7, "{p:?}");

    // Run: both tied for best, no star.
    let c = run_path(&a, &b, &RankRules::default());
    assert_eq!(c.margin, 0.001);
    assert!(!c.significant, "{c:?}");
    assert_eq!(replicate::standing(&c, "a"), Standing::TiedBest);
    assert_eq!(replicate::standing(&c, "b"), Standing::TiedBest);

    // Sweep: the two settings tie.
    let best = sweep_path(&a, &b);
    assert_eq!((best.best_row, best.tied_rows.clone(), best.significant), (Some(0), vec![0, 1], false));

    // Decide: `a` is named (the better mean), and the runner-up ties.
    let choice = decide_path(&a, &b);
    assert_eq!(choice.recommended, Some(0));
    assert!(matches!(choice.lost, Some(Lost::Objective { significant: false, .. })), "{:?}", choice.lost);

    // Tune: decides through decide, with the base scenario's margins.
    let r = tune_path(&a, &b);
    assert!(matches!(r.lost, Some(Lost::Objective { significant: false, .. })), "{:?}", r.lost);
    assert!(r.rule.contains("within ±0.1 pt"), "{}", r.rule);

    // Diff: B against A on the same seeds is no change (and no regression to gate on).
    let d = diff_path(&a, &b);
    assert_eq!(d.compared, 1);
    assert!(d.changes.is_empty(), "{:?}", d.changes);

    // The same values five times as far apart (0.25 point) lie beyond the margin: every
    // path calls `a` better, so the ties above are the margin's doing.
    let far: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - 5.0 * (x - y)).collect();
    assert!(run_path(&a, &far, &RankRules::default()).significant);
    assert!(sweep_path(&a, &far).significant);
    assert!(matches!(decide_path(&a, &far).lost, Some(Lost::Objective { significant: true, .. })));
    assert!(matches!(tune_path(&a, &far).lost, Some(Lost::Objective { significant: true, .. })));
    let d = diff_path(&a, &far);
    assert_eq!(d.changes.len(), 1, "{:?}", d.changes);
    assert_eq!(d.changes[0].verdict, brownout::diff::Verdict::Worse);
}

/// A small scenario with a `statistics` section.
fn scenario(statistics: &str) -> Result<brownout::scenario::Scenario, String> {
    let text = format!(
        r#"Scenario(
    name: "margins", horizon: "10s",
    fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "checkout", arrivals: Poisson(rate_per_s: 10), deadline: "1s")],
    dependency: (latency: Constant("10ms")),
    policies: [(name: "a"), (name: "b")],
{statistics}
)"#
    );
    brownout::scenario::load_text(Path::new("margins.ron"), &text).map_err(|e| e.to_string())
}

#[test]
fn margins_from_the_scenario_are_live() {
    // `statistics.margins` sets the margin the run's stars use: with the in-time ratio's
    // margin at 0 for checkout, the same values that tie by the catalogue's 0.1 point give
    // `a` a star (the interval [0.000412, 0.000588] excludes zero).
    let (a, b) = inside_the_margin();
    let s = scenario(r#"    statistics: (margins: {"checkout/in_time_ratio": 0.0, "p95_ms": 5.0}),"#).unwrap();
    let rules = RankRules::of_scenario(&s);
    let c = run_path(&a, &b, &rules);
    assert_eq!(c.margin, 0.0);
    assert_eq!(replicate::standing(&c, "a"), Standing::Best);
    // The class-less key is every class's; the catalogue keeps the rest.
    let p95 = brownout::metrics::catalogue::by_path("checkout/p95_ms").unwrap();
    assert_eq!(rules.margins.of(p95, Some("checkout")), 5.0);
    assert_eq!(rules.margins.of_path("checkout/late"), 1.0);
    // A name the catalogue does not know is refused where it is written.
    let e = scenario("    statistics: (margins: {\"checkout/in_time_ratoi\": 0.002}),").unwrap_err();
    assert!(e.contains("margins.ron:7:") && e.contains("unknown per-class metric \"in_time_ratoi\""), "{e}");
    let e = scenario("    statistics: (margins: {\"cart/in_time_ratio\": 0.002}),").unwrap_err();
    assert!(e.contains("unknown class \"cart\""), "{e}");
    let e = scenario("    statistics: (margins: {\"in_time_ratio\": -1.0}),").unwrap_err();
    assert!(e.contains("must be finite and >= 0"), "{e}");
}

#[test]
fn answering_less_earns_no_star_on_answer_latency() {
    // The issue's repro: a breaker that answered almost nothing had the lowest answer p95
    // and was starred best. Set "breaker" answers 40 requests in time at p95 50 ms; "plain"
    // answers 1,000 (in time) at p95 400 ms, over three seeds with a little spread each.
    let sets: Vec<Vec<RunSummary>> = [("plain", 1000u64, 400.0), ("breaker", 40, 50.0)]
        .into_iter()
        .map(|(name, answered, p95)| {
            (0..3u64)
                .map(|k| {
                    run(name, |r| {
                        let c = &mut r.classes[0];
                        (c.in_time, c.late, c.causes.wrong_answer) = (answered + k, 0, 0);
                        c.latency_answered_ms.p95 = p95 + k as f64;
                    })
                })
                .collect()
        })
        .collect();
    let refs: Vec<Vec<&RunSummary>> = sets.iter().map(|s| s.iter().collect()).collect();
    let class = sets[0][0].classes[0].class.clone();
    let all = replicate::compare(&refs, &RankRules::default());
    let c = all.iter().find(|c| c.metric == "answered_p95_ms" && c.class.as_deref() == Some(&class)).unwrap();
    // Means 1,001 and 41 answered: 960 apart, beyond the count's margin of 1.
    assert_eq!(c.unranked.as_deref(), Some("not comparable: answered 1,001 vs 41"));
    assert_eq!(replicate::standing(c, "breaker"), Standing::Unranked);
    assert!(!c.significant);
    // Equal answered counts: the lower p95 is starred as before.
    let same: Vec<Vec<RunSummary>> = sets
        .iter()
        .map(|s| s.iter().map(|r| run(&r.policy, |x| x.classes[0] = r.classes[0].clone())).collect())
        .collect();
    let mut same = same;
    for (k, r) in same[1].iter_mut().enumerate() {
        r.classes[0].in_time = 1000 + k as u64;
    }
    let refs: Vec<Vec<&RunSummary>> = same.iter().map(|s| s.iter().collect()).collect();
    let all = replicate::compare(&refs, &RankRules::default());
    let c = all.iter().find(|c| c.metric == "answered_p95_ms" && c.class.as_deref() == Some(&class)).unwrap();
    assert_eq!(c.unranked, None);
    assert_eq!(replicate::standing(c, "breaker"), Standing::Best);
}

#[test]
fn cost_is_ranked_only_where_the_scenario_prices_failures() {
    // No business section: a failed or late answer costs nothing, so cost is not ranked,
    // neither per class nor for the run, and the comparison says why.
    let s = scenario("").unwrap();
    let rules = RankRules::of_scenario(&s);
    assert_eq!(rules.unpriced, vec!["checkout".to_string()]);
    assert!(rules.run_unpriced);
    let sets: Vec<Vec<RunSummary>> = [("a", 10.0), ("b", 20.0)]
        .into_iter()
        .map(|(name, cost)| {
            (0..3)
                .map(|k| {
                    run(name, |r| {
                        r.classes[0].business_cost = cost + f64::from(k);
                        r.business_cost = cost + f64::from(k);
                    })
                })
                .collect()
        })
        .collect();
    let refs: Vec<Vec<&RunSummary>> = sets.iter().map(|s| s.iter().collect()).collect();
    let class = sets[0][0].classes[0].class.clone();
    let all = replicate::compare(&refs, &rules);
    let per_class = all.iter().find(|c| c.metric == "business_cost" && c.class.as_deref() == Some(&class)).unwrap();
    let whole = all.iter().find(|c| c.metric == "business_cost" && c.class.is_none()).unwrap();
    for c in [per_class, whole] {
        assert!(c.unranked.as_deref().is_some_and(|w| w.contains("without an order_fraction")), "{c:?}");
        assert_eq!(replicate::standing(c, "a"), Standing::Unranked);
    }
    // Priced (an order fraction and a lost-order cost): the cheaper set is starred.
    let priced = RankRules { unpriced: Vec::new(), run_unpriced: false, ..rules };
    let all = replicate::compare(&refs, &priced);
    let c = all.iter().find(|c| c.metric == "business_cost" && c.class.is_none()).unwrap();
    assert_eq!(replicate::standing(c, "a"), Standing::Best);
}
