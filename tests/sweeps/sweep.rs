//! Sweep tests. Index:
//! - `t_quantiles_match_published_tables`: Student t 0.975 quantiles against table values.
//! - `ci_covers_erlang_b_at_nominal_rate`: 95 % intervals of a no-queue limiter's refused
//!   fraction cover Erlang B(c, a) about 95 % of the time.
//! - `plan_*`: grid product, log ranges, sampling, run numbering and seeds.
//! - CLI (the built binary): `-j 1` equals `-j 2` byte for byte; three shards merged equal
//!   one unsharded run; a killed sweep resumed equals an uninterrupted one; bad paths and a
//!   changed spec are refused with exit 2.
//! - `every_scenario_round_trips_through_json`: what sweeps rely on to set parameters.
//! - `duration_axes_carry_their_unit_to_the_chart_titles`: plan.json, sweep.json and the
//!   heatmap's and curve's axis titles name a duration axis's unit, a plain number none.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::erlang_scenario as scenario;

use brownout::sweep::grid::{self, Plan};
use brownout::sweep::stats::mean_ci95;
use brownout::sweep::{Shard, run_one};
use brownout::verify::theory::t_quantile;
use rayon::prelude::*;

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

/// A folder holding `erlang.ron` and `sweep.ron` (the given spec body).
fn setup(horizon: &str, spec: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("erlang.ron"), scenario(horizon)).unwrap();
    let spec_path = dir.path().join("sweep.ron");
    std::fs::write(&spec_path, spec).unwrap();
    (dir, spec_path)
}

const SMALL: &str = r#"SweepSpec(
    name: "small", base: "erlang.ron", seed: 5, replications: 3,
    metrics: ["api/rejected", "api/requests", "api/p95_ms", "dependency_peak_in_flight"],
    axes: [
        (name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [1, 3]),
        (name: "mean_ms", path: "dependency.latency.Exponential.mean",
         range: (from: "20ms", to: "80ms", steps: 3, scale: Log)),
    ],
)"#;

fn sweep(spec: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(BIN).arg("sweep").arg(spec).arg("--out").arg(out).args(extra).output().unwrap()
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

const FILES: [&str; 3] = ["sweep.json", "sweep.csv", "runs.csv"];

fn same_files(a: &Path, b: &Path) {
    for f in FILES {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(x == y, "{f} differs between {} and {}", a.display(), b.display());
    }
}

#[test]
fn t_quantiles_match_published_tables() {
    // Two-sided 95 % critical values from any Student t table (3 decimals).
    for (df, table) in [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (29, 2.045), (120, 1.980)] {
        let t = t_quantile(0.975, df);
        assert!((t - table).abs() < 0.0005, "df {df}: {t} vs {table}");
    }
    // One-sided 0.95 column: t_{0.95, 10} = 1.812.
    assert!((t_quantile(0.95, 10) - 1.812).abs() < 0.0005);
}

/// Erlang B by the standard recurrence B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)).
fn erlang_b(c: u32, a: f64) -> f64 {
    (1..=c).fold(1.0, |b, k| a * b / (f64::from(k) + a * b))
}

#[test]
fn erlang_b_recurrence_by_hand() {
    // B(1, a) = a / (1 + a); B(2, 1) = (1/2) / (1 + 1 + 1/2) = 0.2.
    assert!((erlang_b(1, 0.5) - 1.0 / 3.0).abs() < 1e-12);
    assert!((erlang_b(2, 1.0) - 0.2).abs() < 1e-12);
}

#[test]
fn ci_covers_erlang_b_at_nominal_rate() {
    // 200 intervals, each from 3 independent replications (600 runs of 10 s measured).
    // The limiter refuses an arrival exactly when its 3 permits are held, so the refused
    // fraction estimates B(3, a) with a = 50/s x 40 ms = 2 Erlang.
    let (groups, per) = (200usize, 3u32);
    let spec = format!(
        r#"SweepSpec(name: "cov", base: "erlang.ron", seed: 17, replications: {},
            policies: ["limit"], metrics: ["api/rejected", "api/requests"], axes: [])"#,
        groups as u32 * per
    );
    let (_dir, spec_path) = setup("12s", &spec);
    let plan = grid::load(&spec_path).unwrap();
    let fractions: Vec<f64> = (0..plan.info.runs())
        .into_par_iter()
        .map(|run| {
            let r = run_one(&plan, run).unwrap();
            r.metrics[0].unwrap() / r.metrics[1].unwrap()
        })
        .collect();
    let truth = erlang_b(3, 2.0);
    let covered = fractions
        .chunks(per as usize)
        .filter(|g| {
            let ci = mean_ci95(g);
            ci.ci_lo <= truth && truth <= ci.ci_hi
        })
        .count();
    let rate = covered as f64 / groups as f64;
    assert!((0.90..=0.99).contains(&rate), "coverage {rate} of B(3, 2) = {truth}");
}

#[test]
fn plan_grid_is_axis_product_with_common_seeds() {
    let (_dir, spec_path) = setup("4s", SMALL);
    let plan: Plan = grid::load(&spec_path).unwrap();
    // 2 permits x 3 log-spaced means (20, 40, 80 ms: ratio 2) = 6 points, first axis slowest.
    assert_eq!(plan.info.axes[1].values, vec![20.0, 40.0, 80.0]);
    assert_eq!(plan.info.points.len(), 6);
    assert_eq!(plan.info.points[4], vec![3.0, 40.0]);
    assert_eq!(plan.info.runs(), 6 * 2 * 3);
    let id = plan.info.run_id(4 * 6 + 3 + 2); // point 4, policy 1, replication 2
    assert_eq!((id.point, id.policy, id.replication), (4, 1, 2));
    // The point's scenario really holds the values.
    let s = &plan.scenarios[4];
    assert!(format!("{:?}", s.policies[1].stack[0].policy).contains("permits: 3"));
    assert!(format!("{:?}", s.dependency.latency).contains("40000000"));
    // Seeds depend on the replication only.
    assert_ne!(plan.info.replication_seed(0), plan.info.replication_seed(1));
    let a = run_one(&plan, plan_run(&plan, 0, 1, 2)).unwrap();
    let b = run_one(&plan, plan_run(&plan, 5, 0, 2)).unwrap();
    assert_eq!(a.seed, b.seed);
    let shards: Vec<Shard> = ["0/3", "1/3", "2/3"].iter().map(|s| s.parse().unwrap()).collect();
    for run in 0..plan.info.runs() {
        assert_eq!(shards.iter().filter(|s| s.owns(run)).count(), 1);
    }
    assert!("3/3".parse::<Shard>().is_err());
}

fn plan_run(plan: &Plan, point: u64, policy: u64, rep: u64) -> u64 {
    let r = u64::from(plan.info.replications);
    (point * plan.info.policies.len() as u64 + policy) * r + rep
}

#[test]
fn plan_latin_hypercube_puts_one_sample_in_each_stratum() {
    let spec = r#"SweepSpec(name: "lhs", base: "erlang.ron", metrics: ["api/ok"],
        sample: (method: LatinHypercube, samples: 8, seed: 4),
        axes: [
            (name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s", range: (from: 10, to: 90)),
            (name: "mean_ms", path: "dependency.latency.Exponential.mean", range: (from: 1, to: 256, scale: Log), unit: "ms"),
        ])"#;
    let (_dir, spec_path) = setup("4s", spec);
    let plan = grid::load(&spec_path).unwrap();
    assert_eq!(plan.info.points.len(), 8);
    // Linear axis: strata of width 10 over [10, 90]; log axis: strata of ratio 2 over [1, 256].
    let mut lin: Vec<usize> = plan.info.points.iter().map(|p| ((p[0] - 10.0) / 10.0) as usize).collect();
    let mut log: Vec<usize> = plan.info.points.iter().map(|p| p[1].log2().floor() as usize).collect();
    lin.sort();
    log.sort();
    assert_eq!(lin, (0..8).collect::<Vec<_>>());
    assert_eq!(log, (0..8).collect::<Vec<_>>());
    // Uniform draws stay in range, and the sample seed alone fixes them.
    let uniform = |seed: u32| {
        let text = spec.replace("LatinHypercube", "Uniform").replace("seed: 4", &format!("seed: {seed}"));
        std::fs::write(&spec_path, text).unwrap();
        grid::load(&spec_path).unwrap().info.points
    };
    let (a, b, c) = (uniform(4), uniform(4), uniform(5));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(a.iter().all(|p| (10.0..=90.0).contains(&p[0]) && (1.0..=256.0).contains(&p[1])));
}

#[test]
fn jobs_1_and_2_write_identical_files() {
    let (dir, spec) = setup("4s", SMALL);
    let (a, b) = (dir.path().join("j1"), dir.path().join("j2"));
    ok(&sweep(&spec, &a, &["-j", "1"]));
    ok(&sweep(&spec, &b, &["-j", "2"]));
    same_files(&a, &b);
    // The shape the charts code against.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(a.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(v["replications"], 3);
    assert_eq!(v["rows"].as_array().unwrap().len(), 12);
    let row = &v["rows"][3];
    assert_eq!(row["point"], 1);
    assert_eq!(row["policy"], "limit");
    assert_eq!(row["params"]["mean_ms"], 40.0);
    let m = &row["metrics"]["api/rejected"];
    assert!(m["ci_lo"].as_f64().unwrap() <= m["mean"].as_f64().unwrap());
}

#[test]
fn three_shards_merged_equal_one_run() {
    let (dir, spec) = setup("4s", SMALL);
    let whole = dir.path().join("whole");
    ok(&sweep(&spec, &whole, &["-j", "2"]));
    let mut shards = Vec::new();
    for k in 0..3 {
        let d = dir.path().join(format!("shard{k}"));
        ok(&sweep(&spec, &d, &["-j", "1", "--shard", &format!("{k}/3")]));
        assert!(!d.join("sweep.csv").exists(), "a shard alone writes no results");
        shards.push(d);
    }
    // The merged results never go into one of the shards (named as it is or through an alias):
    // the shard would then hold its journal and the whole sweep's results at once.
    for out in [shards[1].clone(), shards[1].join(".")] {
        let o = Command::new(BIN).arg("merge").args(&shards).arg("--out").arg(&out).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "--out {}", out.display());
        assert!(String::from_utf8_lossy(&o.stderr).contains("is one of the shards"), "{o:?}");
        assert!(!shards[1].join("sweep.csv").exists(), "nothing written into the shard");
    }
    let merged = dir.path().join("merged");
    let o = Command::new(BIN).arg("merge").args(&shards[..2]).arg("--out").arg(&merged).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "two of three shards are incomplete");
    let o = Command::new(BIN).arg("merge").args(&shards).arg("--out").arg(&merged).output().unwrap();
    ok(&o);
    same_files(&whole, &merged);
}

#[test]
fn killed_then_resumed_equals_uninterrupted() {
    let spec_text = SMALL.replace("replications: 3", "replications: 24");
    let (dir, spec) = setup("4s", &spec_text);
    let (whole, cut) = (dir.path().join("whole"), dir.path().join("cut"));
    let mut child = Command::new(BIN)
        .args(["sweep", spec.to_str().unwrap(), "-j", "1", "--out", cut.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let journal = cut.join("journal.jsonl");
    let lines = || std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
    // Wait (polling, no timing assertion) until a few runs are journaled, then kill.
    while lines() < 6 {
        assert!(child.try_wait().unwrap().is_none(), "sweep ended before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = lines();
    assert!(kept < 1 + 288, "killed mid-sweep");
    // A kill during a write leaves a torn line: resuming must drop it.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .map(|mut f| std::io::Write::write_all(&mut f, b"{\"run\":3,\"se").unwrap())
        .unwrap();
    let o = sweep(&spec, &cut, &["-j", "2"]);
    assert_eq!(o.status.code(), Some(2), "an existing journal needs --resume");
    ok(&sweep(&spec, &cut, &["-j", "2", "--resume"]));
    ok(&sweep(&spec, &whole, &["-j", "2"]));
    same_files(&whole, &cut);
    // Resuming with a different spec is refused.
    std::fs::write(&spec, spec_text.replace("seed: 5", "seed: 6")).unwrap();
    let o = sweep(&spec, &cut, &["--resume"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot resume"));
}

#[test]
fn bad_paths_and_values_exit_2_naming_the_line() {
    let cases = [
        ("policies[nope].stack[0].policy.Limiter.permits", "[1]", "no element named \"nope\""),
        ("dependency.drift.Ramp.to", "[2]", "has no \"Ramp\""),
        ("policies[limit].stack[0].policy.Limiter.permits", "[0]", "permits must be >= 1"),
        ("dependency.latency.Exponential.mean", "[5]", "plain number on a duration"),
        ("fleet.workers", "[5]", "an object"),
    ];
    for (path, values, why) in cases {
        let spec = format!(
            "SweepSpec(name: \"bad\", base: \"erlang.ron\", metrics: [\"api/ok\"],\n  axes: [\n    (name: \"x\", path: \"{path}\", values: {values}),\n  ])"
        );
        let (dir, spec_path) = setup("4s", &spec);
        let out = dir.path().join("out");
        let o = sweep(&spec_path, &out, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{path}: {err}");
        assert!(err.contains(why), "{path}: {err}");
        assert!(err.contains("sweep.ron:3:"), "{path}: names the line: {err}");
        assert!(!out.exists(), "nothing is written before a bad spec is fixed");
    }
    let (dir, spec_path) = setup("4s", &SMALL.replace("api/p95_ms", "api/p96_ms"));
    let o = sweep(&spec_path, &dir.path().join("out"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("p96_ms"));
}

#[test]
fn every_scenario_round_trips_through_json() {
    // Sweeps set parameters on the JSON form of a scenario: any scenario type that does not
    // survive Scenario -> JSON -> Scenario unchanged would silently change every point.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let Ok(s) = brownout::scenario::load(&path) else {
            continue; // a sweep spec, not a scenario
        };
        let back: brownout::scenario::Scenario = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 2);
}

/// A duration axis reported in seconds and a count of permits: the plan and `sweep.json` say
/// "s" for the first and nothing for the second, and the charts title the axes "mean (s)" and
/// "permits" (issue 18). The shares of the payments sweep are plain numbers too.
#[test]
fn duration_axes_carry_their_unit_to_the_chart_titles() {
    let spec = |axes: &str| {
        format!(
            r#"SweepSpec(name: "units", base: "erlang.ron", seed: 5, replications: 1, metrics: ["api/p95_ms"],
                axes: [{axes}])"#
        )
    };
    let permits = r#"(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [1, 3])"#;
    let mean = r#"(name: "mean", path: "dependency.latency.Exponential.mean", values: ["20ms", "40ms"], unit: "s")"#;
    let (dir, two) = setup("3s", &spec(&format!("{permits}, {mean}")));
    let plan = grid::load(&two).unwrap().info;
    let units: Vec<Option<&str>> = plan.axes.iter().map(|a| a.unit.as_deref()).collect();
    assert_eq!(units, [None, Some("s")]);
    assert_eq!(plan.axes[1].values, [0.02, 0.04], "20 ms and 40 ms in seconds");
    let out = dir.path().join("two");
    ok(&sweep(&two, &out, &[]));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(v["axes"][1]["unit"], "s");
    assert!(v["axes"][0].get("unit").is_none(), "a count has no unit: {}", v["axes"][0]);
    // Plotters writes each text on a line of its own. A decision (permits) against a
    // condition (the latency): one curve per condition, each named with the unit.
    let svg = std::fs::read_to_string(out.join("charts/decision_api_p95_ms.svg")).unwrap();
    let has = |svg: &str, t: &str| svg.lines().any(|l| l.trim() == t);
    let x = "permits — policies[limit].stack[0].policy.Limiter.permits";
    assert!(has(&svg, x) && has(&svg, "mean (s) = 0.02"), "axis titles in:\n{svg}");
    // One axis: the curve's x axis.
    let one = dir.path().join("one.ron");
    std::fs::write(&one, spec(mean)).unwrap();
    let out = dir.path().join("one");
    ok(&sweep(&one, &out, &[]));
    let svg = std::fs::read_to_string(out.join("charts/sweep_api_p95_ms.svg")).unwrap();
    assert!(has(&svg, "mean (s) — dependency.latency.Exponential.mean"), "x axis title in:\n{svg}");
    // The payments sweep's shares and depth are plain numbers.
    let shares = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sweeps/payments-share.ron");
    let plan = grid::load(&shares).unwrap().info;
    assert!(plan.axes.iter().all(|a| a.unit.is_none()), "{:?}", plan.axes);
}
