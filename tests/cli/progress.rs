//! Progress reporting (issue 20) never changes results: the observer the runner calls with
//! simulated time sees every window tick of every policy set up to the horizon, and the run
//! folder is byte-identical with and without a progress display.

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use brownout::model::{Model, RunOptions};
use brownout::runner::{run_all, run_all_observed};

fn model(file: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(file);
    let s = brownout::scenario::load(&path).unwrap();
    Model::build(&s, s.seed, path.parent().unwrap()).unwrap()
}

#[test]
fn the_observer_sees_every_window_and_changes_nothing() {
    let m = model("limiters-demo.ron");
    let opts = RunOptions::new().with_timeseries(true);
    let plain = run_all(&m, opts, true).unwrap();
    let seen = Mutex::new(Vec::new());
    let observed = run_all_observed(&m, opts, true, &|p, t| seen.lock().unwrap().push((p, t))).unwrap();
    assert_eq!(plain.summary, observed.summary);
    assert_eq!(plain.rows, observed.rows);
    let seen = seen.into_inner().unwrap();
    let (window, horizon) = (m.scenario().window.ns(), m.scenario().horizon.ns());
    // 3 minutes in the default 1 s windows: ticks at 1 s, 2 s, ..., 180 s for each policy set.
    let ticks: Vec<u64> = (1..=horizon / window).map(|k| k * window).collect();
    assert_eq!(ticks.len(), 180);
    for p in 0..m.scenario().policies.len() {
        let times: Vec<u64> = seen.iter().filter(|(q, _)| *q == p).map(|&(_, t)| t).collect();
        assert_eq!(times, ticks, "policy set {p}");
    }
}

#[test]
fn run_folder_is_the_same_with_and_without_progress() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/limiters-demo.ron");
    for (out, quiet) in [("quiet", true), ("shown", false)] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_brownout"));
        c.arg("run").arg(&scenario).args(["--out", out, "--no-charts"]).current_dir(dir.path());
        if quiet {
            c.arg("--quiet");
        }
        let o = c.output().unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for file in ["summary.json", "summary.csv", "timeseries.csv", "report.md"] {
        let a = std::fs::read(dir.path().join("quiet").join(file)).unwrap();
        let b = std::fs::read(dir.path().join("shown").join(file)).unwrap();
        assert!(a == b, "{file} differs with progress shown");
    }
}
