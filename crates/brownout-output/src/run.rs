//! A run's folder: which files it holds, their names and their content. The folder is
//! written into a staging folder and swapped in whole ([`super::folder`]).

use std::path::Path;

use anyhow::{Context, Result};

use super::{events, folder, pages, report_md, series, summary_csv, summary_json, write_atomic};
use crate::metrics::RowSink;
use crate::report::expect::Checked;
use crate::runner::ScenarioResult;
use crate::scenario::Scenario;

/// What a run writes at the top of its folder (and `charts/` the charts it lists in its
/// manifest, [`folder`]); a folder holding anything else is not replaced.
pub const RUN_FILES: &[&str] = &[
    "scenario.ron",
    "summary.json",
    "summary.csv",
    "timeseries.csv",
    "report.md",
    "report.html",
    "stats.json",
    "recommendation.json",
    "charts",
];

/// How the run was carried out, for `stats.json` (measured by the caller: the library reads
/// no clock).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunStats {
    /// Wall-clock seconds the runs took.
    pub wall_s: f64,
    /// Whether the policy sets ran in parallel.
    pub parallel: bool,
    /// Worker threads used.
    pub threads: usize,
    /// Peak resident memory of the process in KiB, where known.
    pub peak_rss_kib: Option<u64>,
}

/// What to write besides the files every run folder holds.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFolder {
    /// Draw the charts and `report.html` (`brownout plot DIR` can draw them later).
    pub charts: bool,
    /// Write `stats.json` with these figures.
    pub stats: Option<RunStats>,
    /// Where the event file went, for the reports' pointer (the runs kept events).
    pub events_file: Option<std::path::PathBuf>,
}

/// Write the run folder guarded by `lock`: the scenario as run (with `seed`, so running it
/// again reproduces the results), `summary.json`, `summary.csv`, `timeseries.csv` (from
/// `result.rows`), `report.md`, and as `opts` asks the charts, `report.html` and `stats.json`.
/// The folder is replaced whole or not at all; a folder holding files brownout did not write
/// is refused. A run that streamed its rows writes through a [`RunStage`] instead.
pub fn write_run(
    lock: &folder::Lock,
    scenario: &Scenario,
    seed: u64,
    result: &ScenarioResult,
    checked: &[Checked],
    opts: &RunFolder,
) -> Result<()> {
    let stage = RunStage::new(lock, 1)?;
    stage.sink(0).window(&result.rows);
    stage.write(scenario, seed, result, checked, opts)
}

/// A run folder being written, staged before the runs so they stream their time-series rows
/// into it as windows close (`runner::run_all_streamed` with [`RunStage::sink`]); dropped
/// unwritten (a run failed), it leaves nothing behind.
#[derive(Debug)]
pub struct RunStage {
    staged: folder::Staged,
    parts: series::Parts,
}

impl RunStage {
    /// Stage the folder guarded by `lock` for a run of `policies` policy sets; refuses, before
    /// anything runs, a folder holding files brownout did not write.
    pub fn new(lock: &folder::Lock, policies: usize) -> Result<Self> {
        let staged = folder::stage(lock)?;
        let parts = series::Parts::new(staged.path(), policies);
        Ok(Self { staged, parts })
    }

    /// Where policy set `policy`'s time-series rows go.
    pub fn sink(&self, policy: usize) -> Box<dyn RowSink> {
        self.parts.sink(policy)
    }

    /// Write the rest of the folder as [`write_run`] describes (the streamed rows become
    /// `timeseries.csv`, in policy order) and put it in place.
    pub fn write(
        self,
        scenario: &Scenario,
        seed: u64,
        result: &ScenarioResult,
        checked: &[Checked],
        opts: &RunFolder,
    ) -> Result<()> {
        let dir = self.staged.path();
        let written = self
            .parts
            .join(&dir.join("timeseries.csv"))
            .and_then(|()| write_files(dir, scenario, seed, result, checked, opts))
            .and_then(|()| {
                opts.stats.map_or(Ok(()), |stats| write_atomic(&dir.join("stats.json"), &stats_json(result, &stats)?))
            });
        written.and_then(|()| self.staged.commit()).context("writing results")
    }
}

/// The result files of a run besides `timeseries.csv` (already in `dir`), into `dir`.
fn write_files(
    dir: &Path,
    s: &Scenario,
    seed: u64,
    result: &ScenarioResult,
    checked: &[Checked],
    opts: &RunFolder,
) -> Result<()> {
    let saved = Scenario { seed, ..s.clone() };
    let scenario_ron = ron::ser::to_string_pretty(&saved, ron::ser::PrettyConfig::default())?;
    write_atomic(&dir.join("scenario.ron"), scenario_ron.as_bytes())?;
    write_atomic(&dir.join("summary.json"), &summary_json(&result.summary)?)?;
    write_atomic(&dir.join("summary.csv"), &summary_csv(&result.summary)?)?;
    if let Some(d) = &result.summary.decision {
        let mut json = serde_json::to_vec_pretty(d)?;
        json.push(b'\n');
        write_atomic(&dir.join("recommendation.json"), &json)?;
    }
    let kept = events::kept(result);
    let charts = if opts.charts {
        let extra = if kept { events::html_section(result, result.summary.setup.horizon_s) } else { String::new() };
        pages::write_run_saved(dir, &s.description, &result.summary, extra)?
    } else {
        Vec::new()
    };
    let mut md = report_md(s, &result.summary, checked, &charts);
    if kept {
        md.push_str(&events::md_section(result, opts.events_file.as_deref()));
    }
    write_atomic(&dir.join("report.md"), md.as_bytes())
}

/// `stats.json`: events and simulated requests, their rates, and how the runs were carried out.
fn stats_json(result: &ScenarioResult, stats: &RunStats) -> Result<Vec<u8>> {
    let wall = stats.wall_s;
    let events: u64 = result.runs.iter().map(|r| r.events).sum();
    let requests: u64 = result.runs.iter().map(|r| r.requests).sum();
    let json = serde_json::json!({
        "wall_s": wall,
        "events": events,
        "events_per_s": events as f64 / wall,
        "simulated_requests": requests,
        "simulated_requests_per_s": requests as f64 / wall,
        "policies": result.runs.len(),
        "parallel": stats.parallel,
        "threads": stats.threads,
        "peak_rss_kib": stats.peak_rss_kib,
        "peak_pending_events": result.runs.iter().map(|r| r.peak_pending).max().unwrap_or(0),
    });
    let mut bytes = serde_json::to_vec_pretty(&json)?;
    bytes.push(b'\n');
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Model, RunOptions};

    /// Two scripted requests to a healthy dependency, one policy set.
    const SCENARIO: &str = r#"Scenario(
        name: "folder",
        seed: 5,
        horizon: "3s",
        fleet: (instances: 1, workers: (slots: 2), pool: (max_connections: 2, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Scripted(times: ["1s", "2s"]), deadline: "1s")],
        dependency: (latency: Constant("10ms")),
        policies: [(name: "direct", stack: [])],
    )"#;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != folder::META)
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_run_folder_holds_the_run_files_and_the_scenario_as_run() {
        let s = crate::scenario::load_text(Path::new("folder.ron"), SCENARIO).unwrap();
        let model = Model::build(&s, 9, Path::new(".")).unwrap();
        let result = crate::runner::run_all(&model, RunOptions::new().with_timeseries(true), false).unwrap();
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("run");
        let lock = folder::lock(&out).unwrap();
        let stats = RunStats { wall_s: 2.0, parallel: false, threads: 1, peak_rss_kib: None };
        write_run(&lock, &s, 9, &result, &[], &RunFolder { charts: false, stats: Some(stats), events_file: None })
            .unwrap();
        let want = ["report.md", "scenario.ron", "stats.json", "summary.csv", "summary.json", "timeseries.csv"];
        assert_eq!(names(&out), want);
        assert!(want.iter().all(|f| RUN_FILES.contains(f)));
        // The saved scenario is the one given, with the seed that was used instead of its own.
        let saved = std::fs::read_to_string(out.join("scenario.ron")).unwrap();
        let back = crate::scenario::parse(Path::new("scenario.ron"), &saved).unwrap();
        assert_eq!(back, Scenario { seed: 9, ..s });
        // Rates are the run's own counts over the wall time given.
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("stats.json")).unwrap()).unwrap();
        let events = result.runs[0].events;
        assert_eq!(json["events"], events);
        assert_eq!(json["events_per_s"], events as f64 / 2.0);
        assert_eq!(json["simulated_requests"], result.runs[0].requests);
        assert_eq!((json["threads"].as_u64(), json["peak_rss_kib"].is_null()), (Some(1), true));
    }

    #[test]
    fn a_folder_holding_a_file_brownout_did_not_write_is_not_replaced() {
        let s = crate::scenario::load_text(Path::new("folder.ron"), SCENARIO).unwrap();
        let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
        let result = crate::runner::run_all(&model, RunOptions::new().with_timeseries(true), false).unwrap();
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("run");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("notes.txt"), "mine").unwrap();
        let lock = folder::lock(&out).unwrap();
        let e =
            write_run(&lock, &s, s.seed, &result, &[], &RunFolder { charts: false, stats: None, events_file: None })
                .unwrap_err();
        assert!(format!("{e:#}").contains("holds notes.txt"), "{e:#}");
        assert_eq!(names(&out), ["notes.txt"]);
    }
}
