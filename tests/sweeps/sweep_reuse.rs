//! Sweeps never redo work (issue 21, target 2). Index:
//! - `a_policy_set_runs_the_same_alone`: the premise of reuse, on every shipped scenario: a
//!   policy set gives the identical results (summary, phases, event trace) whether the other
//!   sets are there or not, so a run's key needs only its own set.
//! - `shipped_timeout_sweep_runs_each_distinct_run_once`: `scenarios/sweeps/grocery-timeout.ron`
//!   (shortened) simulates 5 x 2 + 2 x 2 of its 30 runs and writes the same bytes as with
//!   reuse off.
//! - `resume_after_adding_points_runs_only_the_new_inputs`: a spec edit that adds a value
//!   runs only the runs whose inputs are new, and writes what a fresh sweep writes.
//! - `resume_after_a_seed_change_is_refused_and_keeps_the_journal`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use brownout::model::{Model, RunOptions, run_policy};
use brownout::scenario::{self, Scenario};
use brownout::sweep::grid;

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `s` with the first of `horizons` shorter than its own that keeps it valid (runs stay
/// short), else `s`.
fn shortened(s: Scenario, horizons: &[&str]) -> Scenario {
    for h in horizons {
        let mut v = serde_json::to_value(&s).unwrap();
        v["horizon"] = (*h).into();
        match serde_json::from_value::<Scenario>(v) {
            Ok(short) if short.horizon < s.horizon && scenario::validate(&short).is_ok() => return short,
            _ => {}
        }
    }
    s
}

/// Everything a run gives that a sweep could record, as comparable text.
fn outcome(m: &Model, policy: usize) -> String {
    let r = run_policy(m, policy, RunOptions::default()).unwrap();
    let summary = serde_json::to_string(&r.summary).unwrap();
    let phases = serde_json::to_string(&r.phases).unwrap();
    format!("{summary}\n{phases}\ntrace {:x} requests {} end {}", r.trace_hash, r.requests, r.end)
}

#[test]
fn a_policy_set_runs_the_same_alone() {
    let mut checked = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    files.sort();
    for path in files {
        let s = shortened(scenario::load(&path).unwrap(), &["90s", "3m"]);
        if s.policies.len() < 2 {
            continue;
        }
        let dir = path.parent().unwrap();
        let seed = 0x5eed_0021;
        let all = Model::build(&s, seed, dir).unwrap();
        // The last set: alone it moves to index 0, so an index-keyed draw would show too.
        let last = s.policies.len() - 1;
        let alone = Scenario { policies: vec![s.policies[last].clone()], ..s.clone() };
        let one = Model::build(&alone, seed, dir).unwrap();
        assert_eq!(outcome(&all, last), outcome(&one, 0), "{}: set {last} alone differs", path.display());
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} scenarios with two or more policy sets");
}

fn run(args: &[&str]) -> Output {
    let o = Command::new(BIN).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap()
}

fn same_results(a: &Path, b: &Path) {
    for f in ["sweep.json", "sweep.csv", "runs.csv"] {
        let (x, y) = (std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap());
        assert!(x == y, "{f} differs between {} and {}", a.display(), b.display());
    }
}

#[test]
fn shipped_timeout_sweep_runs_each_distinct_run_once() {
    let shipped = std::fs::read_to_string(root().join("scenarios/sweeps/grocery-timeout.ron")).unwrap();
    let base = root().join("scenarios/grocery.ron");
    // Shortened: 4 minutes whose brownout starts at 2 m, so the timeouts matter.
    let short = shipped.replace("\"../grocery.ron\"", &format!("{:?}", base.display().to_string())).replace(
        "axes: [",
        r#"axes: [
        (name: "horizon", path: "horizon", values: ["4m"]),
        (name: "start", path: "dependency.drift.Brownout.start", values: ["2m"]),
        (name: "ramp", path: "dependency.drift.Brownout.ramp", values: ["30s"]),"#,
    );
    assert_ne!(short, shipped);
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("short.ron");
    std::fs::write(&spec, short).unwrap();
    let plan = grid::load(&spec).unwrap();
    // By hand from the spec: 5 timeout values x 3 sets x 2 replications; only timeout-only
    // reads the timeout, so it runs 5 x 2 times and the two other sets 2 times each.
    assert_eq!((plan.info.points.len(), plan.info.policies.len(), plan.info.replications), (5, 3, 2));
    let (planned, distinct) = (5 * 3 * 2, 5 * 2 + 2 * 2);
    assert_eq!(plan.info.policies[0], "timeout-only");
    let (with, without) = (dir.path().join("with"), dir.path().join("without"));
    let spec = spec.to_str().unwrap();
    let a = run(&["sweep", spec, "--out", with.to_str().unwrap(), "-j", "2", "-q", "--json"]);
    let b = run(&["sweep", spec, "--out", without.to_str().unwrap(), "-j", "2", "-q", "--json", "--no-reuse"]);
    let (a_runs, b_runs) = (&json(&a)["runs"], &json(&b)["runs"]);
    assert_eq!((a_runs["planned"].as_u64(), b_runs["planned"].as_u64()), (Some(planned), Some(planned)));
    assert_eq!((a_runs["run_now"].as_u64(), a_runs["reused"].as_u64()), (Some(distinct), Some(planned - distinct)));
    assert_eq!((b_runs["run_now"].as_u64(), b_runs["reused"].as_u64()), (Some(planned), Some(0)));
    let line = String::from_utf8_lossy(&a.stderr);
    assert!(line.contains(&format!("({distinct} run now, {} reused,", planned - distinct)), "{line}");
    same_results(&with, &without);
}

const ERLANG: &str = r#"Scenario(
    name: "erlang", seed: 3, horizon: "6s", warmup: "1s",
    fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 60.0), deadline: "60s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [
        (name: "direct", stack: []),
        (name: "limit", stack: [(policy: Limiter((permits: 3, queue: 0)))]),
        (name: "timeout", stack: [(policy: Timeout((timeout: "50ms")))]),
    ],
)"#;

fn spec(permits: &str, seed: u64) -> String {
    format!(
        r#"SweepSpec(name: "grow", base: "erlang.ron", seed: {seed}, replications: 2,
    metrics: ["api/rejected", "api/ok_ratio", "api/p95_ms"],
    axes: [(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [{permits}])])"#
    )
}

fn folder() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("erlang.ron"), ERLANG).unwrap();
    let spec = dir.path().join("sweep.ron").display().to_string();
    (dir, spec)
}

#[test]
fn resume_after_adding_points_runs_only_the_new_inputs() {
    let (dir, spec_path) = folder();
    let (grown, fresh) = (dir.path().join("grown"), dir.path().join("fresh"));
    let out = grown.to_str().unwrap();
    std::fs::write(&spec_path, spec("1, 3", 5)).unwrap();
    // 2 points x 3 sets x 2 replications; only limit reads the permits: 2 x 2 + 2 x 2 runs.
    let first = json(&run(&["sweep", &spec_path, "--out", out, "-q", "--json"]));
    assert_eq!((first["runs"]["planned"].as_u64(), first["runs"]["run_now"].as_u64()), (Some(12), Some(8)));
    std::fs::write(&spec_path, spec("1, 3, 5", 5)).unwrap();
    let resumed = run(&["sweep", &spec_path, "--out", out, "-q", "--json", "--resume"]);
    let r = json(&resumed);
    // The new point 5: its direct and timeout runs have the inputs of finished runs, its
    // limit runs (2 replications) are new; the other 16 of 18 runs take journal records.
    assert_eq!(r["runs"]["planned"].as_u64(), Some(18));
    assert_eq!((r["runs"]["run_now"].as_u64(), r["runs"]["resumed"].as_u64()), (Some(2), Some(16)));
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("16 runs take finished records"));
    let f = json(&run(&["sweep", &spec_path, "--out", fresh.to_str().unwrap(), "-q", "--json", "--no-reuse"]));
    assert_eq!(f["runs"]["run_now"].as_u64(), Some(18));
    same_results(&grown, &fresh);
    // The rewritten journal is the edited plan's: merge accepts it.
    let merged = dir.path().join("merged");
    run(&["merge", out, "--out", merged.to_str().unwrap()]);
    same_results(&merged, &fresh);
}

#[test]
fn resume_after_a_seed_change_is_refused_and_keeps_the_journal() {
    let (dir, spec_path) = folder();
    let out = dir.path().join("out");
    std::fs::write(&spec_path, spec("1, 3", 5)).unwrap();
    run(&["sweep", &spec_path, "--out", out.to_str().unwrap(), "-q"]);
    let journal = std::fs::read(out.join("journal.jsonl")).unwrap();
    std::fs::write(&spec_path, spec("1, 3", 6)).unwrap();
    let o = Command::new(BIN).args(["sweep", &spec_path, "--out", out.to_str().unwrap(), "--resume"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot resume") && err.contains("none of the journal's 12 finished runs"), "{err}");
    assert_eq!(std::fs::read(out.join("journal.jsonl")).unwrap(), journal);
}

#[test]
fn resume_after_a_data_file_changed_reuses_no_run_of_the_old_data() {
    let (dir, spec_path) = folder();
    let csv = ERLANG.replace("Poisson(rate_per_s: 60.0)", r#"Csv(file: "rate.csv")"#);
    assert_ne!(csv, ERLANG);
    std::fs::write(dir.path().join("erlang.ron"), csv).unwrap();
    let rates = dir.path().join("rate.csv");
    std::fs::write(&rates, "t_s,rate_per_s\n0,60.0\n").unwrap();
    std::fs::write(&spec_path, spec("1, 3", 5)).unwrap();
    let (out, fresh) = (dir.path().join("out"), dir.path().join("fresh"));
    run(&["sweep", &spec_path, "--out", out.to_str().unwrap(), "-q"]);
    let journal = std::fs::read(out.join("journal.jsonl")).unwrap();
    // The scenario and the spec are unchanged; only what the file holds is not.
    std::fs::write(&rates, "t_s,rate_per_s\n0,30.0\n").unwrap();
    let o = Command::new(BIN).args(["sweep", &spec_path, "--out", out.to_str().unwrap(), "--resume"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "a resume took runs of the old data: {err}");
    assert!(err.contains("cannot resume") && err.contains("data file"), "{err}");
    assert_eq!(std::fs::read(out.join("journal.jsonl")).unwrap(), journal);
    // The data matters: a sweep of the new file gives other results than the journal's.
    run(&["sweep", &spec_path, "--out", fresh.to_str().unwrap(), "-q"]);
    assert_ne!(std::fs::read(fresh.join("runs.csv")).unwrap(), std::fs::read(out.join("runs.csv")).unwrap());
    // Put back, the file's runs are the journal's again: the resume takes every one of them.
    std::fs::write(&rates, "t_s,rate_per_s\n0,60.0\n").unwrap();
    let r = json(&run(&["sweep", &spec_path, "--out", out.to_str().unwrap(), "-q", "--json", "--resume"]));
    assert_eq!((r["runs"]["run_now"].as_u64(), r["runs"]["resumed"].as_u64()), (Some(0), Some(12)));
}
