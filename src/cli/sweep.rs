//! `brownout sweep` and `brownout merge`: resolve the spec, open or resume the journal, run
//! the pending runs with a progress bar, render the result files.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::Failure;
use brownout::sweep::store::{self, Header, Journal};
use brownout::sweep::{self, Shard, grid};

/// Arguments of `brownout sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep spec (RON).
    spec: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Output folder (default: output/<sweep name>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue the sweep journaled in the output folder, skipping finished runs (starts one
    /// if there is none).
    #[arg(long)]
    resume: bool,
    /// Run only shard K of N (K from 0): runs whose number is K modulo N.
    #[arg(long)]
    shard: Option<Shard>,
}

/// Arguments of `brownout merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Output folders of the shards.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where to write the merged result files.
    #[arg(long)]
    out: PathBuf,
}

fn io(e: anyhow::Error) -> Failure {
    Failure::input(format!("error: {e:#}"))
}

/// Open the journal: new, or resumed after checking it belongs to this plan and shard.
fn open_journal(out: &Path, header: &Header, resume: bool) -> Result<Journal, Failure> {
    let exists = out.join(store::JOURNAL).exists();
    if !exists {
        return Journal::create(out, header).map_err(io);
    }
    if !resume {
        return Err(Failure::input(format!(
            "error: {} already holds a sweep journal: add --resume to continue it, or choose another --out",
            out.display()
        )));
    }
    let read = store::read_journal(out).map_err(io)?;
    if read.header != *header {
        return Err(Failure::input(format!(
            "error: cannot resume: the journal in {} is for plan {} shard {}, this is plan {} shard {} (the spec or scenario changed)",
            out.display(),
            read.header.hash,
            read.header.shard,
            header.hash,
            header.shard
        )));
    }
    Journal::reopen(out, read.valid_len).map_err(io)
}

fn progress(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {per_sec}  ETA {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Run (or resume, or run one shard of) a sweep and write its result files.
pub fn sweep(args: SweepArgs) -> Result<(), Failure> {
    let plan = grid::load(&args.spec).map_err(|e| Failure::input(format!("error: {e}")))?;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("output").join(&plan.info.sweep));
    let shard = args.shard.unwrap_or(Shard::ALL);
    let header = Header { hash: plan.info.hash.clone(), shard: shard.to_string() };
    let journal = open_journal(&out, &header, args.resume)?;
    store::write_plan(&out, &plan.info).map_err(io)?;
    let done = store::read_journal(&out).map_err(io)?.records;
    let todo = sweep::pending(&plan, shard, &done);
    let threads = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = progress(todo.len() as u64);
    let (events, requests) = (AtomicU64::new(0), AtomicU64::new(0));
    let started = Instant::now();
    let result = sweep::execute(&plan, &todo, threads, &journal, &|r| {
        events.fetch_add(r.events, Ordering::Relaxed);
        requests.fetch_add(r.requests, Ordering::Relaxed);
        bar.inc(1);
    });
    bar.finish_and_clear();
    result.map_err(|e| Failure::input(format!("error: {e:#} (finished runs are kept; fix and --resume)")))?;
    let wall = started.elapsed().as_secs_f64();
    let (events, requests) = (events.into_inner(), requests.into_inner());
    eprintln!(
        "sweep {}: {} points x {} policies x {} replications = {} runs ({} run now, {} resumed, shard {shard}); {requests} simulated requests; {wall:.2} s wall; {:.2} M events/s",
        plan.info.sweep,
        plan.info.points.len(),
        plan.info.policies.len(),
        plan.info.replications,
        plan.info.runs(),
        todo.len(),
        done.len(),
        events as f64 / wall.max(1e-9) / 1e6
    );
    if shard != Shard::ALL {
        println!("shard {shard} done in {}; combine the shards with `brownout merge DIR... --out OUT`", out.display());
        return Ok(());
    }
    finish(&out, &plan.info, std::slice::from_ref(&out))
}

/// Render the result files of `dirs`' journals into `out`.
fn finish(out: &Path, plan: &grid::PlanInfo, dirs: &[PathBuf]) -> Result<(), Failure> {
    let mut records = Vec::new();
    for d in dirs {
        records.extend(store::read_journal(d).map_err(io)?.records);
    }
    let records = store::complete(plan, records).map_err(io)?;
    let files = store::render(plan, &records).map_err(io)?;
    store::write_plan(out, plan).map_err(io)?;
    let paths = store::write_results(out, &files).map_err(io)?;
    for p in paths {
        println!("wrote {}", p.display());
    }
    // Sweep curves, heatmaps and the best setting per policy, from the files just written.
    let charts = brownout::output::charts::plot_dir(out).map_err(io)?;
    println!("wrote {} chart files and report.html in {}", charts.len(), out.display());
    Ok(())
}

/// Merge shard folders into the result files of an unsharded run.
pub fn merge(args: MergeArgs) -> Result<(), Failure> {
    let plan = store::read_plan(&args.dirs[0]).map_err(io)?;
    for d in &args.dirs[1..] {
        let other = store::read_plan(d).map_err(io)?;
        if other.hash != plan.hash {
            return Err(Failure::input(format!(
                "error: {} holds plan {} but {} holds plan {}: shards of different sweeps",
                d.display(),
                other.hash,
                args.dirs[0].display(),
                plan.hash
            )));
        }
    }
    for d in &args.dirs {
        let h = store::read_journal(d).map_err(io)?.header;
        if h.hash != plan.hash {
            return Err(Failure::input(format!(
                "error: the journal in {} belongs to plan {}, not {}",
                d.display(),
                h.hash,
                plan.hash
            )));
        }
    }
    finish(&args.out, &plan, &args.dirs)
}
