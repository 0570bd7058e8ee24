//! Issue 21 target 3: window rows stream to disk as windows close. The streamed
//! `timeseries.csv` is byte for byte the file written from every row kept in memory, and the
//! charts read it back coalesced to a bounded number of points per series.

use std::path::Path;
use std::process::Command;

use brownout::metrics::WindowRow;
use brownout::model::{Model, RunOptions};
use brownout::output;
use brownout::runner::{run_all, run_all_streamed};

/// Three policy sets, two classes (one name needing CSV quoting), 40 one-second windows.
const SCENARIO: &str = r#"Scenario(
    name: "stream",
    seed: 11,
    horizon: "40s",
    window: "1s",
    fleet: (instances: 2, workers: (slots: 4), pool: (max_connections: 4, acquire_timeout: "1s")),
    classes: [
        (name: "cart, \"new\"", arrivals: Poisson(rate_per_s: 60), deadline: "100ms"),
        (name: "browse", arrivals: Poisson(rate_per_s: 30), deadline: "1s"),
    ],
    dependency: (latency: LogNormal(median: "30ms", sigma: 0.8)),
    policies: [
        (name: "direct", stack: []),
        (name: "timeout", stack: [(policy: Timeout((timeout: "60ms")))]),
        (name: "=sum(1)", stack: [(policy: Timeout((timeout: "200ms")))]),
    ],
)"#;

fn model(dir: &Path) -> Model {
    let path = dir.join("stream.ron");
    std::fs::write(&path, SCENARIO).unwrap();
    let s = brownout::scenario::load(&path).unwrap();
    Model::build(&s, s.seed, dir).unwrap()
}

const OPTS: RunOptions = RunOptions::new().with_timeseries(true);

#[test]
fn the_streamed_timeseries_csv_is_the_file_of_the_rows_kept_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let kept = run_all(&m, OPTS, false).unwrap();
    assert_eq!(kept.rows.len(), 3 * 40 * 2);
    let want = output::timeseries_csv(&kept.rows).unwrap();
    for parallel in [false, true] {
        let out = dir.path().join(format!("out-{parallel}"));
        let lock = output::folder::lock(&out).unwrap();
        let stage = output::run::RunStage::new(&lock, 3).unwrap();
        let streamed = run_all_streamed(&m, OPTS, parallel, None, &|p| stage.sink(p)).unwrap();
        assert!(streamed.rows.is_empty(), "streamed rows are not kept");
        assert_eq!(streamed.summary, kept.summary);
        let opts = output::run::RunFolder { charts: false, stats: None, events_file: None };
        stage.write(m.scenario(), m.seed(), &streamed, &[], &opts).unwrap();
        let got = std::fs::read(out.join("timeseries.csv")).unwrap();
        assert!(got == want, "parallel {parallel}: the streamed file differs");
        // Nothing but the run's files: the parts were joined and removed.
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n != output::folder::META)
            .collect();
        names.sort();
        assert_eq!(names, ["report.md", "scenario.ron", "summary.csv", "summary.json", "timeseries.csv"]);
    }
}

#[test]
fn brownout_run_writes_the_same_timeseries_csv_as_the_rows_kept_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let want = output::timeseries_csv(&run_all(&m, OPTS, false).unwrap().rows).unwrap();
    for serial in [true, false] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_brownout"));
        c.arg("run").arg("stream.ron").args(["--out", "out", "--quiet"]).current_dir(dir.path());
        if serial {
            c.arg("--serial");
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(std::fs::read(dir.path().join("out/timeseries.csv")).unwrap() == want, "serial {serial}");
        // The charts read the file back whole: 40 windows are fewer than the bound.
        let (_, back) = output::pages::load_run(&dir.path().join("out")).unwrap();
        let kept: Vec<WindowRow> = run_all(&m, OPTS, false).unwrap().rows;
        assert_eq!(back.len(), kept.len());
    }
}

#[test]
fn a_stage_dropped_unwritten_leaves_no_folder_and_no_part_file() {
    // A run that fails drops the stage after its sinks wrote rows.
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let out = dir.path().join("out");
    let lock = output::folder::lock(&out).unwrap();
    let stage = output::run::RunStage::new(&lock, 3).unwrap();
    run_all_streamed(&m, OPTS, false, None, &|p| stage.sink(p)).unwrap();
    drop(stage);
    drop(lock);
    // The folder the lock created, holding nothing but the lock, goes with it; nothing else stays.
    let mut left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    assert_eq!(left, ["stream.ron"]);
}
