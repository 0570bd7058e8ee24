//! `brownout run`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::Failure;
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
    /// Output folder (default: output/<scenario name>/).
    #[arg(long)]
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
}

/// Load and validate a scenario, its data files and plugin layers (the binary registers no
/// plugins), exactly as `check` and `run` both do.
pub fn load_scenario(path: &Path) -> Result<scenario::Scenario, scenario::ScenarioError> {
    scenario::load_with_plugins(path, &brownout::policy::plugin::Plugins::new())
}

/// Load, validate and build a scenario; errors are bad input (exit 2).
pub fn load_model(path: &Path, seed: Option<u64>) -> Result<Model, Failure> {
    let s = load_scenario(path).map_err(|e| Failure::input(format!("error: {e}")))?;
    let seed = seed.unwrap_or(s.seed);
    let dir = path.parent().unwrap_or(Path::new("."));
    Model::build(&s, seed, dir).map_err(|e| Failure::input(format!("error: {}: {e}", path.display())))
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

fn check_determinism(model: &Model, first: &ScenarioResult) -> Result<(), Failure> {
    // The second run is serial while the first was parallel: thread count must not matter.
    let second = run_all(model, RunOptions { timeseries: false, trace_limit: 0 }, false)?;
    for (a, b) in first.runs.iter().zip(&second.runs) {
        if a.trace_hash == b.trace_hash && a.events == b.events {
            continue;
        }
        // Re-run with traces kept to find the first differing event.
        let limit = a.events.max(b.events).min(50_000_000) as usize;
        let opts = RunOptions { timeseries: false, trace_limit: limit };
        let ta = run_all(model, opts, true)?;
        let tb = run_all(model, opts, false)?;
        let (ra, rb) = (
            ta.runs.iter().find(|r| r.policy == a.policy).map(|r| &r.trace),
            tb.runs.iter().find(|r| r.policy == a.policy).map(|r| &r.trace),
        );
        let at = match (ra, rb) {
            (Some(x), Some(y)) => x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(x.len().min(y.len())),
            _ => 0,
        };
        return Err(Failure {
            code: 1,
            message: format!(
                "non-determinism in policy \"{}\": trace hashes {:016x} vs {:016x}; first divergence at event #{at} (seed {})",
                a.policy,
                a.trace_hash,
                b.trace_hash,
                model.seed()
            ),
        });
    }
    println!("determinism: {} policy run(s) reproduced event for event", first.runs.len());
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

pub fn run(args: RunArgs) -> Result<(), Failure> {
    let model = load_model(&args.scenario, args.seed)?;
    let s = model.scenario();
    let out = out_dir(&args, &s.name)?;
    // Taken before running, so a second process on the folder is refused at once.
    let lock = folder::lock(&out).map_err(|e| Failure::input(format!("error: {e:#}")))?;
    let started = Instant::now();
    let result = run_all(&model, RunOptions { timeseries: true, trace_limit: 0 }, !args.serial)?;
    let wall = started.elapsed().as_secs_f64();
    if args.check_determinism {
        check_determinism(&model, &result)?;
    }
    let checked = report::expect::check(&result.summary, &s.expect);
    let stats = args.stats.then(|| {
        let threads = if args.serial { 1 } else { rayon::current_num_threads() };
        output::run::RunStats { wall_s: wall, parallel: !args.serial, threads, peak_rss_kib: peak_rss_kib() }
    });
    if let Some(stats) = &stats {
        print_stats(&result, stats);
    }
    let opts = output::run::RunFolder { charts: !args.no_charts, stats };
    output::run::write_run(&lock, s, model.seed(), &result, &checked, &opts)
        .map_err(|e| Failure::input(format!("error: {e:#}")))?;
    print!("{}", escape::terminal(&report::table::terminal(&result.summary)));
    println!("{}", escape::terminal(&format!("results in {}", out.display())));
    let failed: Vec<_> = checked.iter().filter(|c| !c.passed).collect();
    for c in &checked {
        let line = format!("{} {} (measured {:.4})", if c.passed { "PASS" } else { "FAIL" }, c.statement, c.actual);
        println!("{}", escape::terminal(&line));
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
