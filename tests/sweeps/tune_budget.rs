//! A tune stopped by its budget at any point ends with a complete, consistent folder (issue 31).
//! The hazard: the optimizer halts with an error while its simplex is (re)initialised, and a
//! search that unwraps it panics ("search stopped: Runs", exit 101) whenever the budget runs out
//! as a start begins, on `--resume` too. Index:
//! - `every_run_budget_ends_with_a_complete_folder`: budgets of 1 to 3x the first simplex's
//!   runs (a property over every stopping point of a tiny search): exit 0 and a folder whose
//!   files agree with each other, or exit 2 and nothing written when not even one candidate
//!   fits; resuming the folder of budget b - 1 at budget b gives the files of budget b.
//! - `every_wall_stop_ends_with_a_complete_folder`: the wall-clock stop, driven through the
//!   library's clock hook by a count of checks instead of a clock (no timed assertion).

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use brownout::tune::{self, Hooks, Stop};

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

/// A loss system over 20 simulated seconds (each run takes milliseconds): Poisson 50/s,
/// exponential 40 ms calls, a limiter without a queue.
const SCENARIO: &str = r#"Scenario(
    name: "tiny", seed: 3, horizon: "20s", warmup: "2s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 50.0), deadline: "60s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [(name: "limit", stack: [(policy: Limiter((permits: 3, queue: 2, max_wait: "20ms")))])],
)"#;

/// Knobs in the first simplex: a start simplex has knobs + 1 vertices.
const KNOBS: u64 = 2;
const REPLICATIONS: u64 = 2;

/// Two knobs, 2 replications per candidate, a budget of `runs`.
fn spec(runs: u64) -> String {
    format!(
        r#"TuneSpec(
    name: "tiny-tune", base: "tiny.ron", seed: 11, replications: {REPLICATIONS}, policy: "limit",
    knobs: [
        (name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", range: (from: 1, to: 20), integer: true),
        (name: "queue", path: "policies[limit].stack[0].policy.Limiter.queue", range: (from: 0, to: 8), integer: true),
    ],
    decide: (minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", op: Ge, value: 0.95)]),
    budget: (runs: {runs}),
)"#
    )
}

fn write_spec(dir: &Path, runs: u64) -> PathBuf {
    std::fs::write(dir.join("tiny.ron"), SCENARIO).unwrap();
    let p = dir.join("tune.ron");
    std::fs::write(&p, spec(runs)).unwrap();
    p
}

fn tune(spec: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(BIN).arg("tune").arg(spec).arg("--out").arg(out).args(["-j", "1"]).args(extra).output().unwrap()
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(f).display()))
}

const RESULTS: [&str; 5] = ["recommendation.json", "trace.csv", "charts/best.png", "charts/best.svg", "report.html"];

/// The files of a finished tune folder agree with each other and with the budget: as many
/// candidates in the recommendation as trace rows and journal records, runs within the budget,
/// and a feasible recommendation exactly when the trace holds a feasible candidate.
/// `journaled`: the folder was written by the command, which journals every candidate.
fn consistent(out: &Path, budget: u64, journaled: bool, what: &str) {
    for f in RESULTS {
        assert!(out.join(f).is_file(), "{what}: {f} missing");
    }
    let r: serde_json::Value = serde_json::from_str(&read(out, "recommendation.json")).unwrap();
    let trace = read(out, "trace.csv");
    let rows: Vec<Vec<&str>> = trace.lines().skip(1).map(|l| l.split(',').collect()).collect();
    if journaled {
        let journal = read(out, "tune-journal.jsonl");
        assert_eq!(journal.lines().count(), rows.len() + 1, "{what}: journal header and records against trace rows");
    }
    assert_eq!(r["candidates"].as_u64().unwrap(), rows.len() as u64, "{what}: {r}");
    // Columns: evaluation, runs, permits, queue, objective, feasible, violation, best_feasible.
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], (i + 1).to_string(), "{what}");
        assert_eq!(row[1].parse::<u64>().unwrap(), (i as u64 + 1) * REPLICATIONS, "{what}: runs column");
    }
    assert!(rows.len() as u64 * REPLICATIONS <= budget, "{what}: {} candidates over a budget of {budget}", rows.len());
    let feasible: Vec<&Vec<&str>> = rows.iter().filter(|r| r[5] == "true").collect();
    assert_eq!(r["feasible"], !feasible.is_empty(), "{what}: {r}");
    if rows.is_empty() {
        assert!(r["recommended"].is_null(), "{what}: {r}");
    } else {
        let setting = &r["recommended"]["setting"];
        let (p, q) = (setting["permits"].as_f64().unwrap(), setting["queue"].as_f64().unwrap());
        let pool = if feasible.is_empty() { rows.iter().collect() } else { feasible };
        assert!(
            pool.iter().any(|row| row[2].parse::<f64>().unwrap() == p && row[3].parse::<f64>().unwrap() == q),
            "{what}: the recommended setting ({p}, {q}) is not among the candidates it may come from"
        );
    }
    let html = read(out, "report.html");
    assert!(html.contains("Recommendation"), "{what}: report.html");
    if rows.is_empty() {
        assert!(html.contains("No candidate was evaluated within the budget"), "{what}: {html}");
    } else if r["feasible"] == false {
        assert!(html.contains("No feasible candidate within the budget"), "{what}: {html}");
    }
}

#[test]
fn every_run_budget_ends_with_a_complete_folder() {
    let simplex_runs = (KNOBS + 1) * REPLICATIONS;
    let dir = tempfile::tempdir().unwrap();
    let resumed = dir.path().join("resumed");
    for budget in 1..=3 * simplex_runs {
        let p = write_spec(dir.path(), budget);
        let out = dir.path().join(format!("b{budget}"));
        let o = tune(&p, &out, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        if budget < REPLICATIONS {
            // Not one candidate fits: refused before anything runs, located in the spec.
            assert_eq!(o.status.code(), Some(2), "budget {budget}: {err}");
            assert!(err.contains("tune.ron:") && err.contains("budget.runs"), "budget {budget}: {err}");
            assert!(!out.exists(), "budget {budget}: a refused tune wrote {}", out.display());
            continue;
        }
        assert_eq!(o.status.code(), Some(0), "budget {budget}: {err}");
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("stopped: Runs") || stdout.contains("stopped: Converged"), "{stdout}");
        consistent(&out, budget, true, &format!("budget {budget}"));
        // The folder of the budget before, resumed with this budget, holds this budget's files.
        let o = tune(&p, &resumed, &["--resume"]);
        assert_eq!(o.status.code(), Some(0), "resume at {budget}: {}", String::from_utf8_lossy(&o.stderr));
        consistent(&resumed, budget, true, &format!("resumed at {budget}"));
        for f in ["recommendation.json", "trace.csv", "report.html"] {
            assert!(read(&out, f) == read(&resumed, f), "budget {budget}: {f} differs after resuming");
        }
    }
}

#[test]
fn every_wall_stop_ends_with_a_complete_folder() {
    let dir = tempfile::tempdir().unwrap();
    let space = tune::load(&write_spec(dir.path(), 1000)).unwrap();
    let simplex = (KNOBS + 1) as usize;
    for allowed in 0..=3 * simplex {
        // The clock says the wall budget is spent at the check after `allowed` fresh candidates.
        let checks = Cell::new(0usize);
        let out_of_time = || {
            checks.set(checks.get() + 1);
            checks.get() > allowed
        };
        let mut on_eval = |_: &tune::Evaluation, _: bool| Ok(());
        let hooks = Hooks { known: Default::default(), on_eval: &mut on_eval, out_of_time: &out_of_time, threads: 1 };
        let (done, stop) = tune::search(&space, hooks).unwrap();
        assert_eq!(stop, Stop::Wall, "allowed {allowed}");
        assert_eq!(done.len(), allowed, "allowed {allowed}: candidates evaluated");
        let rec = tune::recommend(&space, &done);
        let out = dir.path().join(format!("w{allowed}"));
        let written = brownout::output::tune::write(&out, &space, &rec, stop, &done, None).unwrap();
        assert_eq!(written.len(), RESULTS.len());
        consistent(&out, 1000, false, &format!("wall stop after {allowed}"));
    }
}
