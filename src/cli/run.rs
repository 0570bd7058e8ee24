//! `brownout run`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::{Failure, Named, json, progress};
use brownout::model::{Model, RunOptions};
use brownout::output::folder;
use brownout::report::escape;
use brownout::runner::ScenarioResult;
use brownout::{output, report, runner, scenario};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (RON).
    scenario: PathBuf,
    /// Root seed (overrides the scenario's).
    #[arg(long)]
    seed: Option<u64>,
    /// Run every policy set on R seeds (overrides the scenario's `replications`; 1..=1000):
    /// the report gives means with 95 % intervals and stars only significant differences.
    #[arg(long, value_name = "R")]
    replications: Option<u32>,
    /// Output folder (default: output/<scenario name>/).
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
    /// Run the policies one after another instead of in parallel.
    #[arg(long)]
    serial: bool,
    /// Print engine statistics to stderr and write stats.json.
    #[arg(long)]
    stats: bool,
    /// Run twice and compare event-trace hashes; report the first divergence.
    #[arg(long)]
    check_determinism: bool,
    /// Skip charts and report.html (faster; `brownout plot DIR` can draw them later).
    #[arg(long)]
    no_charts: bool,
    /// Print one JSON document on stdout (docs/json.md) instead of the tables.
    #[arg(long)]
    json: bool,
    /// Also write the expectations as a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// No progress display. The results table, the expectations' PASS/FAIL lines and
    /// warnings are still printed (on stderr with `--json`): `--quiet` silences the display
    /// of a run in progress, not its results.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Write every state change of the policy layers, with its reason, to FILE (JSON lines,
    /// docs/events.md).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Most state changes the event log keeps per policy set; later ones are counted, not kept.
    #[arg(long, value_name = "N", default_value_t = 100_000, requires = "events",
          value_parser = clap::value_parser!(u64).range(1..))]
    events_max: u64,
}

/// Load and validate a scenario, its data files and plugin layers (the binary registers no
/// plugins), exactly as `check` and `run` both do.
pub fn load_scenario(path: &Path) -> Result<scenario::Scenario, scenario::ScenarioError> {
    let s = scenario::load_with_plugins(path, &brownout::policy::plugin::Plugins::new())?;
    // What an Import layer's file holds that a stack cannot (Envoy's outlier detection).
    for w in scenario::import_warnings(path) {
        eprintln!("{}", brownout::report::escape::terminal(&format!("warning: {}: {w}", path.display())));
    }
    Ok(s)
}

/// Load, validate and build a scenario; errors are bad input (exit 2), with the scenario error
/// (file, line, column) where loading failed.
fn load_model(path: &Path, args: &RunArgs) -> Result<Model, (Failure, Option<scenario::ScenarioError>)> {
    let mut s = load_scenario(path).map_err(|e| (Failure::input(format!("error: {e}")), Some(e)))?;
    if let Some(r) = args.replications {
        replications(path, &mut s, r).map_err(|f| (f, None))?;
    }
    build_model(path, &s, args.seed).map_err(|f| (f, None))
}

/// Apply `--replications R`: checked as the scenario field is (range and memory budget).
fn replications(path: &Path, s: &mut scenario::Scenario, r: u32) -> Result<(), Failure> {
    s.replications = r;
    scenario::validate(s)
        .map_err(|e| Failure::input(format!("error: {}: --replications {r}: {}", path.display(), e.message)))
}

fn build_model(path: &Path, s: &scenario::Scenario, seed: Option<u64>) -> Result<Model, Failure> {
    let seed = seed.unwrap_or(s.seed);
    let dir = path.parent().unwrap_or(Path::new("."));
    Model::build(s, seed, dir).map_err(|e| Failure::input(format!("error: {}: {e}", path.display())))
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Run every policy set; a run a guard stopped is bad input (exit 2, nothing written).
fn run_all(model: &Model, opts: RunOptions, parallel: bool) -> Result<ScenarioResult, Failure> {
    runner::run_all(model, opts, parallel)
        .map_err(|e| Failure::input(format!("error: {e} (seed {}; nothing written)", model.seed())))
}

fn check_determinism(model: &Model, first: &ScenarioResult, json: bool) -> Result<(), Failure> {
    // The second run is serial while the first was parallel: thread count must not matter.
    let second = run_all(model, RunOptions::new(), false)?;
    for (a, b) in first.runs.iter().zip(&second.runs) {
        if a.trace_hash == b.trace_hash && a.events == b.events {
            continue;
        }
        // Re-run with traces kept to find the first differing event.
        let limit = a.events.max(b.events).min(50_000_000) as usize;
        let opts = RunOptions::new().with_trace_limit(limit);
        let ta = run_all(model, opts, true)?;
        let tb = run_all(model, opts, false)?;
        let same = |r: &&runner::RunMeta| r.policy == a.policy && r.replication == a.replication;
        let (ra, rb) = (ta.runs.iter().find(same).map(|r| &r.trace), tb.runs.iter().find(same).map(|r| &r.trace));
        let at = match (ra, rb) {
            (Some(x), Some(y)) => x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(x.len().min(y.len())),
            _ => 0,
        };
        return Err(Failure {
            code: 1,
            message: format!(
                "non-determinism in policy \"{}\": trace hashes {:016x} vs {:016x}; first divergence at event #{at} (seed {})",
                a.policy, a.trace_hash, b.trace_hash, a.seed
            ),
        });
    }
    let note = format!("determinism: {} policy run(s) reproduced event for event", first.runs.len());
    // Under --json, stdout holds the document alone.
    if json {
        eprintln!("{note}")
    } else {
        println!("{note}")
    }
    Ok(())
}

/// Where a run writes: `--out`, or `output/<scenario name>/`.
fn out_dir(args: &RunArgs, name: &str) -> Result<PathBuf, Failure> {
    match &args.out {
        Some(out) => Ok(out.clone()),
        None => {
            folder::default_dir(name).map_err(|e| Failure::input(format!("error: {}: {e:#}", args.scenario.display())))
        }
    }
}

/// Every file a run reads: the scenario, its data files and the files its `Import` layers
/// read (gone from the loaded scenario, replaced by their layers, so read from its text).
fn inputs(path: &Path, s: &scenario::Scenario) -> Vec<Named> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut v = vec![Named::new("the scenario file", path)];
    v.extend(scenario::data_files(s).into_iter().map(|f| Named::new("the data file", dir.join(f))));
    let text = brownout::output::read_regular(path).ok().and_then(|t| String::from_utf8(t).ok());
    if let Some(raw) = text.and_then(|t| scenario::parse(path, &t).ok()) {
        for layer in raw.policies.iter().flat_map(|p| &p.stack) {
            if let brownout::policy::PolicySpec::Import(c) = &layer.policy {
                v.push(Named::new("the imported file", dir.join(&c.file)));
            }
        }
    }
    v
}

/// What a finished run hands to its printer.
struct Finished {
    result: ScenarioResult,
    out: PathBuf,
    checked: Vec<report::expect::Checked>,
}

pub fn run(args: RunArgs) -> Result<(), Failure> {
    let model = match load_model(&args.scenario, &args) {
        Ok(m) => m,
        Err((f, at)) => return Err(if args.json { json::fail("run", f, at.as_ref()) } else { f }),
    };
    let done = match execute(&args, &model) {
        Ok(done) => done,
        Err(f) => return Err(if args.json { json::fail("run", f, None) } else { f }),
    };
    let failed: Vec<_> = done.checked.iter().filter(|c| !c.passed).collect();
    // Under --json the human text goes to stderr: stdout holds the document alone.
    let say = |text: &str| {
        if args.json {
            eprint!("{}", escape::terminal(text));
        } else {
            print!("{}", escape::terminal(text));
        }
    };
    say(&report::table::terminal(&done.result.summary));
    say(&report::dependencies::terminal(&done.result.summary));
    say(&report::decision::terminal(&done.result.summary));
    say(&format!("results in {}\n", done.out.display()));
    for c in &done.checked {
        say(&format!("{} {} (measured {})\n", if c.passed { "PASS" } else { "FAIL" }, c.statement, c.measured()));
    }
    if args.json {
        let code = if failed.is_empty() { 0 } else { 1 };
        json::print(&json::run_doc(&done.result.summary, &done.out, &done.checked, code));
    }
    if !failed.is_empty() {
        return Err(Failure {
            code: 1,
            message: format!(
                "{} expectation(s) failed: {} (seed {})",
                failed.len(),
                failed.iter().map(|c| c.statement.as_str()).collect::<Vec<_>>().join("; "),
                model.seed()
            ),
        });
    }
    Ok(())
}

/// Run every policy set, check the expectations and write the folder (and `--junit`).
fn execute(args: &RunArgs, model: &Model) -> Result<Finished, Failure> {
    let s = model.scenario();
    let out = out_dir(args, &s.name)?;
    // Before the lock, so a bad path leaves nothing behind.
    let files: Vec<Named> = [("--events", &args.events), ("--junit", &args.junit)]
        .into_iter()
        .filter_map(|(what, p)| p.as_ref().map(|p| Named::new(what, p)))
        .collect();
    super::check_paths(Some(&Named::new("--out", &out)), &files, &inputs(&args.scenario, s))?;
    if let Some(path) = &args.events {
        output::events::check_writable(path).map_err(|e| Failure::input(format!("error: {e:#}")))?;
    }
    let io = |e: anyhow::Error| Failure { code: 2, message: format!("error: writing results: {e:#}") };
    // Taken before running, so a second process on the folder is refused at once.
    let lock = folder::lock(&out).map_err(|e| Failure::input(format!("error: {e:#}")))?;
    let started = Instant::now();
    let events = if args.events.is_some() { usize::try_from(args.events_max).unwrap_or(usize::MAX) } else { 0 };
    let opts = RunOptions::new().with_timeseries(true).with_events(events);
    // Staged before running: the runs stream their time series into it as windows close.
    let stage =
        output::run::RunStage::new(&lock, s.policies.len()).map_err(|e| Failure::input(format!("error: {e:#}")))?;
    let result = progress::run_all(model, opts, !args.serial, args.quiet, &|p| stage.sink(p))
        .map_err(|e| Failure::input(format!("error: {e} (seed {}; nothing written)", model.seed())))?;
    let wall = started.elapsed().as_secs_f64();
    if args.check_determinism {
        check_determinism(model, &result, args.json)?;
    }
    let checked = report::expect::check(&result.summary, &s.expect);
    let stats = args.stats.then(|| {
        let threads = if args.serial { 1 } else { rayon::current_num_threads() };
        output::run::RunStats { wall_s: wall, parallel: !args.serial, threads, peak_rss_kib: peak_rss_kib() }
    });
    if let Some(stats) = &stats {
        print_stats(&result, stats);
    }
    if let Some(path) = &args.events {
        write_events(path, &result)?;
    }
    let folder_opts = output::run::RunFolder { charts: !args.no_charts, stats, events_file: args.events.clone() };
    stage
        .write(s, model.seed(), &result, &checked, &folder_opts)
        .map_err(|e| Failure::input(format!("error: {e:#}")))?;
    if let Some(path) = &args.junit {
        let xml = output::junit::expectations(&s.name, &s.expect, &checked).map_err(io)?;
        output::write_atomic(path, &xml).map_err(io)?;
    }
    Ok(Finished { result, out, checked })
}

/// The `--events` file, first (a failure leaves no results folder); a note for each policy
/// set whose log reached `--events-max`.
fn write_events(path: &Path, result: &ScenarioResult) -> Result<(), Failure> {
    output::events::write_events(path, result).map_err(|e| Failure::input(format!("error: writing events: {e:#}")))?;
    for r in result.runs.iter().filter(|r| r.log.dropped > 0) {
        let kept = r.log.events.len();
        eprintln!(
            "note: event log of policy \"{}\" kept the first {kept} of {} state changes (--events-max)",
            escape::terminal(&r.policy),
            kept as u64 + r.log.dropped
        );
    }
    Ok(())
}

/// The figures of `stats.json`, on stderr.
fn print_stats(result: &ScenarioResult, stats: &output::run::RunStats) {
    let wall = stats.wall_s;
    let events: u64 = result.runs.iter().map(|r| r.events).sum();
    let requests: u64 = result.runs.iter().map(|r| r.requests).sum();
    eprintln!(
        "stats: {events} events, {requests} requests in {wall:.3} s wall: {:.2} M events/s, {:.2} M requests/s, peak RSS {} KiB",
        events as f64 / wall / 1e6,
        requests as f64 / wall / 1e6,
        stats.peak_rss_kib.map_or("?".into(), |k| k.to_string())
    );
}
