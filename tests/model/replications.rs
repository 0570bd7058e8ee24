//! `brownout run --replications R`: every policy set on R common seeds, means with 95 %
//! intervals, and stars and a verdict that claim only what the paired differences support.

use crate::common::{self, scenario};

use std::path::Path;

use brownout::engine::{counter_u64, label_hash};
use brownout::metrics::summary::{Comparison, ScenarioSummary};
use brownout::model::{Model, RunOptions, run_policy};
use brownout::report::replicate::{self, Standing};
use brownout::report::table;
use brownout::runner::{replication_seed, run_all, run_replicated};

/// One class, a dependency with a long tail, and three policy sets: `plain` and `loose-limit`
/// (a limiter whose 10,000 permits 40 requests a second never use up) cannot differ; a 100 ms
/// timeout cuts the tail (a lower p95) and with it the answers that came between 100 ms and
/// the 1 s deadline (less goodput).
const TEXT: &str = r#"Scenario(
    name: "reps",
    seed: 3,
    horizon: "60s",
    warmup: "5s",
    fleet: (workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 40), deadline: "1s")],
    dependency: (latency: LogNormal(median: "50ms", sigma: 1.0)),
    policies: [
        (name: "plain", stack: []),
        (name: "loose-limit", stack: [(policy: Limiter((permits: 10000)))]),
        (name: "timeout", stack: [(policy: Timeout((timeout: "100ms")))]),
    ],
)"#;

fn model(text: &str) -> Model {
    let s = scenario(text);
    Model::build(&s, s.seed, Path::new(".")).unwrap()
}

fn replicated(text: &str, r: u32, parallel: bool) -> ScenarioSummary {
    run_replicated(&model(text), r, RunOptions::default(), parallel).expect("runs").summary
}

fn comparison<'a>(s: &'a ScenarioSummary, metric: &str) -> &'a Comparison {
    replicate::comparison(s.replications.as_ref().expect("replicated"), metric, Some("api")).expect(metric)
}

/// The index among a row's cells (see [`row`]) of the column of catalogue metric `metric`:
/// its title's place in the header line, which starts with `policy`.
fn column(terminal: &str, metric: &str) -> usize {
    let m = brownout::metrics::catalogue::CATALOGUE.iter().find(|m| m.name == metric && m.column.is_some()).unwrap();
    let header = terminal.lines().find(|l| l.trim_start().starts_with("policy ")).expect("a header line");
    let titles: Vec<&str> = header.split("  ").map(str::trim).filter(|c| !c.is_empty()).skip(1).collect();
    titles.iter().position(|t| *t == m.column.unwrap().title).unwrap_or_else(|| panic!("no {metric} column: {header}"))
}

/// The cells of `policy`'s row in the terminal table, after the name.
fn row(terminal: &str, policy: &str) -> Vec<String> {
    let line = terminal.lines().find(|l| l.starts_with(&format!("{policy} "))).unwrap_or_else(|| panic!("{policy}"));
    line[policy.len()..].split("  ").map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect()
}

#[test]
fn replication_seeds_follow_their_definition() {
    // Replication 0 is the root seed; replication k >= 1 is the counter-based draw keyed by
    // (root, "run/replication", k, 0), as the runner's documentation states.
    for root in [0, 1, 42, u64::MAX] {
        assert_eq!(replication_seed(root, 0), root);
        for k in 1..50u32 {
            assert_eq!(replication_seed(root, k), counter_u64(root, label_hash("run/replication"), u64::from(k), 0));
        }
        let mut seeds: Vec<u64> = (0..1000).map(|k| replication_seed(root, k)).collect();
        seeds.sort();
        seeds.dedup();
        assert_eq!(seeds.len(), 1000, "distinct seeds");
    }
}

#[test]
fn a_model_with_another_seed_runs_as_one_built_with_it() {
    // Drawn overhead, hop and timeout unwind too: every counter the model holds takes the seed.
    let drawn = TEXT
        .replace(
            r#"acquire_timeout: "1s")),"#,
            r#"acquire_timeout: "1s"), overhead: Exponential(mean: "2ms"),
               timeout_unwind: Exponential(mean: "5ms")),"#,
        )
        .replace(r#"sigma: 1.0)),"#, r#"sigma: 1.0), hop: Exponential(mean: "1ms")),"#);
    assert_ne!(drawn, TEXT);
    for text in [TEXT, drawn.as_str()] {
        same_as_built_with(text);
    }
}

fn same_as_built_with(text: &str) {
    let s = scenario(text);
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let fresh = Model::build(&s, 777, Path::new(".")).unwrap();
    for p in 0..s.policies.len() {
        let a = run_policy(&m.with_seed(777), p, RunOptions::default()).unwrap();
        let b = run_policy(&fresh, p, RunOptions::default()).unwrap();
        assert_eq!(a.summary, b.summary);
        assert_eq!(a.trace_hash, b.trace_hash);
    }
}

#[test]
fn each_replication_is_the_run_of_its_seed_and_means_are_their_average() {
    let s = scenario(TEXT);
    let r = replicated(TEXT, 2, false);
    let reps = r.replications.as_ref().unwrap();
    assert_eq!(reps.seeds, vec![3, replication_seed(3, 1)]);
    // Each replication run alone with its seed, as `--seed` would.
    let alone = |seed: u64| {
        let m = Model::build(&s, seed, Path::new(".")).unwrap();
        run_policy(&m, 0, RunOptions::default()).unwrap().summary.classes[0].goodput_per_s
    };
    let (a, b) = (alone(reps.seeds[0]), alone(reps.seeds[1]));
    let i = replicate::interval(&reps.runs[0], "goodput_per_s", Some("api")).unwrap();
    assert!((i.mean - (a + b) / 2.0).abs() < 1e-9, "{} vs {}", i.mean, (a + b) / 2.0);
    // Two values: half-width t(0.975, 1) * |a - b| / 2 = 12.706 * |a - b| / 2.
    let half = 12.706_2 * (a - b).abs() / 2.0;
    assert!(((i.ci95[1] - i.ci95[0]) / 2.0 - half).abs() < 1e-3 * half.max(1e-9));
    // `runs` is replication 0's: the root seed's own figures.
    assert_eq!(r.runs[0].classes[0].goodput_per_s, a);
}

#[test]
fn one_replication_is_exactly_a_plain_run() {
    let m = model(TEXT);
    let plain = run_all(&m, RunOptions::new().with_timeseries(true), true).unwrap();
    let one = run_replicated(&m, 1, RunOptions::new().with_timeseries(true), true).unwrap();
    assert!(plain.summary.replications.is_none());
    assert_eq!(serde_json::to_string(&plain.summary).unwrap(), serde_json::to_string(&one.summary).unwrap());
    assert_eq!(plain.rows.len(), one.rows.len());
    let ten = run_replicated(&m, 10, RunOptions::new().with_timeseries(true), true).unwrap();
    assert_eq!(ten.summary.runs, plain.summary.runs, "runs hold replication 0's figures");
    assert_eq!(ten.rows.len(), plain.rows.len(), "only replication 0 keeps a time series");
    assert_eq!(ten.runs.len(), 30, "3 policy sets x 10 replications");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    assert_eq!(replicated(TEXT, 4, true), replicated(TEXT, 4, false));
}

#[test]
fn a_layer_that_cannot_bind_ties_and_a_timeout_that_cuts_the_tail_is_starred() {
    let s = replicated(TEXT, 10, true);
    // Goodput: plain and loose-limit are the same runs; the timeout loses the late-but-in-time
    // answers. The two tie for best, and neither is starred.
    let g = comparison(&s, "goodput_per_s");
    assert!(!g.significant, "{g:?}");
    assert!(["plain", "loose-limit"].contains(&g.best.as_str()));
    assert_eq!(replicate::standing(g, "plain"), Standing::TiedBest);
    assert_eq!(replicate::standing(g, "loose-limit"), Standing::TiedBest);
    assert_eq!(replicate::standing(g, "timeout"), Standing::Behind);
    // p95 latency: the timeout caps it near 100 ms; the median alone is 50 ms and sigma 1
    // puts the untouched p95 near 50 * e^1.645 = 259 ms.
    let p = comparison(&s, "p95_ms");
    assert_eq!((p.best.as_str(), p.significant), ("timeout", true), "{p:?}");
    let t = table::terminal(&s);
    let (plain, timeout) = (row(&t, "plain"), row(&t, "timeout"));
    // Each cell is "mean ± half" with its mark; columns found by their catalogue title. Goodput
    // ties as compared above; the timeout cuts the late answers, so it alone is starred on late.
    let (goodput, late) = (column(&t, "goodput_per_s"), column(&t, "late"));
    assert!(plain[goodput].contains(" ± ") && plain[goodput].ends_with('='), "{t}");
    assert!(row(&t, "loose-limit")[goodput].ends_with('='), "{t}");
    assert!(!timeout[goodput].ends_with('*') && !timeout[goodput].ends_with('='), "{t}");
    assert!(timeout[late].ends_with('*') && !plain[late].ends_with('*'), "{t}");
    assert!(t.contains("over 10 seeds"), "{t}");
    let v = table::verdict(&s);
    assert!(v.contains("`plain` at") && v.contains("`loose-limit` at") && v.contains("tie for best"), "{v}");
    assert!(v.contains("the worst was `timeout`"), "{v}");
}

#[test]
fn one_seed_stars_no_difference_and_says_so() {
    let s = replicated(TEXT, 1, false);
    let t = table::terminal(&s);
    for p in ["plain", "loose-limit", "timeout"] {
        assert!(row(&t, p).iter().all(|c| !c.ends_with('*')), "{t}");
    }
    assert!(t.contains("one seed: differences not tested; use --replications"), "{t}");
    assert!(table::markdown(&s).contains("one seed: differences not tested"));
    assert!(table::verdict(&s).contains("One seed: differences not tested"));
}

#[test]
fn the_verdict_never_names_one_policy_set_best_and_worst() {
    // One policy set: it is neither compared nor the worst.
    let one = TEXT.replace(
        r#"(name: "loose-limit", stack: [(policy: Limiter((permits: 10000)))]),
        (name: "timeout", stack: [(policy: Timeout((timeout: "100ms")))]),"#,
        "",
    );
    let v = table::verdict(&replicated(&one, 1, false));
    assert!(v.contains("`plain`") && !v.contains("worst"), "{v}");
    // Two sets with equal results on one seed: a tie, no worst.
    let two = TEXT.replace(r#"(name: "timeout", stack: [(policy: Timeout((timeout: "100ms")))]),"#, "");
    let v = table::verdict(&replicated(&two, 1, false));
    assert!(v.contains("tie for best") && !v.contains("worst"), "{v}");
}

#[test]
fn the_command_line_flag_writes_the_replications_block() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("s.ron"), TEXT).unwrap();
    let run = |extra: &[&str], out: &str| {
        let mut args = vec!["run", "s.ron", "--no-charts", "-q", "--out", out];
        args.extend(extra);
        let o = common::brownout(&args, tmp.path());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(tmp.path().join(out).join("summary.json")).unwrap();
        (serde_json::from_str::<serde_json::Value>(&text).unwrap(), String::from_utf8_lossy(&o.stdout).to_string())
    };
    let (one, _) = run(&[], "one");
    let (ten, stdout) = run(&["--replications", "10"], "ten");
    assert!(one.get("replications").is_none());
    assert_eq!(one["runs"], ten["runs"], "runs hold replication 0's figures");
    let reps = &ten["replications"];
    assert_eq!(reps["count"], 10);
    assert_eq!(reps["seeds"][0], 3);
    assert_eq!(reps["seeds"].as_array().unwrap().len(), 10);
    let goodput = reps["runs"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "goodput_per_s" && m["class"] == "api")
        .unwrap();
    let (lo, mean, hi) =
        (goodput["ci95"][0].as_f64().unwrap(), goodput["mean"].as_f64().unwrap(), goodput["ci95"][1].as_f64().unwrap());
    assert!(lo < mean && mean < hi);
    assert!(stdout.contains(" ± ") && stdout.contains("over 10 seeds"), "{stdout}");
    // The saved scenario reruns the same way.
    let saved = std::fs::read_to_string(tmp.path().join("ten/scenario.ron")).unwrap();
    assert!(saved.contains("replications: 10"), "{saved}");
}

#[test]
fn replications_out_of_range_are_refused_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("s.ron"), TEXT).unwrap();
    for r in ["0", "1001"] {
        let o = common::brownout(&["run", "s.ron", "--replications", r, "--out", "x"], tmp.path());
        assert_eq!(o.status.code(), Some(2), "{r}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("replications must lie in 1..=1000"), "{r}");
        assert!(!tmp.path().join("x").exists(), "nothing written");
    }
    let bad = TEXT.replace("seed: 3,", "seed: 3,\n    replications: 0,");
    std::fs::write(tmp.path().join("bad.ron"), bad).unwrap();
    for cmd in ["run", "check"] {
        let o = common::brownout(&[cmd, "bad.ron"], tmp.path());
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("bad.ron:4:19") && err.contains("replications must lie in 1..=1000"), "{cmd}: {err}");
    }
}
