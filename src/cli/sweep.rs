//! `brownout sweep` and `brownout merge`: resolve the spec, open or resume the journal, run
//! the pending runs with a progress bar, render the result files.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Args;
use serde_json::{Value, json};

use super::progress::Progress;
use super::{Failure, json};
use brownout::output::folder;
use brownout::output::journal;
use brownout::report::escape;
use brownout::sweep::store::{self, Header, RunRecord};
use brownout::sweep::{self, Shard, grid, reuse};

/// Arguments of `brownout sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The sweep spec (RON).
    spec: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Output folder (default: output/<sweep name>/).
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
    /// Continue the sweep journaled in the output folder, skipping finished runs (starts one
    /// if there is none).
    #[arg(long)]
    resume: bool,
    /// Run only shard K of N (K from 0): runs whose number is K modulo N.
    #[arg(long)]
    shard: Option<Shard>,
    /// Print one JSON document on stdout (docs/json.md) instead of the file list.
    #[arg(long)]
    json: bool,
    /// No progress display.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Simulate every run, even those whose inputs equal another run's (for checking that
    /// reuse changes no result).
    #[arg(long, hide = true)]
    no_reuse: bool,
}

/// Arguments of `brownout merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Output folders of the shards.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where to write the merged result files.
    #[arg(long, short = 'o')]
    out: PathBuf,
}

fn io(e: anyhow::Error) -> Failure {
    Failure::input(format!("error: {e:#}"))
}

/// Worker threads beyond this many per core are refused: runs are CPU-bound, so more threads
/// only cost memory, and a typo such as `-j 100000` would spawn them all.
const THREADS_PER_CORE: usize = 4;

/// The worker thread count: `-j`, or one per core.
pub(super) fn threads(jobs: Option<usize>) -> Result<usize, Failure> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max = cores * THREADS_PER_CORE;
    match jobs {
        None => Ok(cores),
        Some(0) => Err(Failure::input("error: -j 0: a sweep needs at least one worker thread")),
        Some(j) if j > max => Err(Failure::input(format!(
            "error: -j {j}: at most {max} worker threads here ({THREADS_PER_CORE} per core, {cores} cores); runs are CPU-bound, so more threads than cores do not finish sooner"
        ))),
        Some(j) => Ok(j),
    }
}

/// Runs as `12 runs`, for the progress display.
fn runs(n: u64) -> String {
    format!("{n} runs")
}

/// Run (or resume, or run one shard of) a sweep and write its result files.
pub fn sweep(args: SweepArgs) -> Result<(), Failure> {
    let as_json = args.json;
    match run_sweep(args) {
        Ok(doc) => {
            if as_json {
                json::print(&doc);
            }
            Ok(())
        }
        Err(f) => Err(if as_json { json::fail("sweep", f, None) } else { f }),
    }
}

/// `--out`, or `output/<sweep name>/`.
fn out_dir(args: &SweepArgs, sweep: &str) -> Result<PathBuf, Failure> {
    match &args.out {
        Some(out) => Ok(out.clone()),
        None => {
            folder::default_dir(sweep).map_err(|e| Failure::input(format!("error: {}: {e:#}", args.spec.display())))
        }
    }
}

fn run_sweep(args: SweepArgs) -> Result<Value, Failure> {
    let plan = grid::load(&args.spec).map_err(|e| Failure::input(format!("error: {e}")))?;
    let threads = threads(args.jobs)?;
    let out = out_dir(&args, &plan.info.sweep)?;
    let lock = folder::lock(&out).map_err(io)?;
    folder::claim(&lock, folder::Kind::Sweep).map_err(io)?;
    folder::clean_temporaries(&lock).map_err(io)?;
    let shard = args.shard.unwrap_or(Shard::ALL);
    let plan_bytes = store::plan_bytes(&plan.info).map_err(|e| io(e.into()))?;
    let header = Header { hash: plan.info.hash.clone(), shard: shard.to_string(), plan: store::checksum(&plan_bytes) };
    let keys = reuse::run_keys(&plan).map_err(io)?;
    let (journal::Opened { journal, done, restarted }, carried) = if args.no_reuse {
        (journal::open(&out, &plan.info, &header, args.resume).map_err(io)?, None)
    } else {
        journal::open_reusing(&out, &plan.info, &header, args.resume, &keys, shard).map_err(io)?
    };
    if restarted {
        let path = out.join(store::JOURNAL);
        eprintln!("note: {} has no complete header (torn when it was created); starting it afresh", path.display());
    }
    if let Some(c) = carried {
        eprintln!(
            "note: the spec changed since {} was started: {} runs take finished records (their inputs are unchanged); {} finished runs fit none and are dropped",
            out.join(store::JOURNAL).display(),
            c.kept,
            c.dropped
        );
    }
    // Rewritten on every start, so an edited plan.json is replaced by the spec's.
    journal::write_plan(&out, &plan.info).map_err(io)?;
    folder::record(&lock, [store::JOURNAL, store::PLAN]).map_err(io)?;
    let todo = sweep::pending(&plan, shard, &done);
    let schedule = reuse::schedule(&todo, &keys, &done, !args.no_reuse);
    let bar = Progress::new(args.quiet, todo.len() as u64, "finished", runs);
    let (events, requests) = (AtomicU64::new(0), AtomicU64::new(0));
    let started = Instant::now();
    let result = reuse::execute(&plan, &keys, &schedule, threads, &|r| journal.append(r), &|r, reused| {
        if !reused {
            events.fetch_add(r.events, Ordering::Relaxed);
            requests.fetch_add(r.requests, Ordering::Relaxed);
        }
        if let Some(bar) = &bar {
            bar.add(1);
        }
    });
    if let Some(bar) = &bar {
        bar.finish();
    }
    result.map_err(|e| Failure::input(format!("error: {e:#} (finished runs are kept; fix and --resume)")))?;
    let wall = started.elapsed().as_secs_f64();
    let (events, requests) = (events.into_inner(), requests.into_inner());
    eprintln!(
        "{}",
        escape::terminal(&format!(
            "sweep {}: {} points x {} policies x {} replications = {} runs ({} run now, {} reused, {} resumed, shard {shard}); {requests} simulated requests; {wall:.2} s wall; {:.2} M events/s",
            plan.info.sweep,
            plan.info.points.len(),
            plan.info.policies.len(),
            plan.info.replications,
            plan.info.runs(),
            schedule.execute.len(),
            schedule.reused(),
            done.len(),
            events as f64 / wall.max(1e-9) / 1e6
        ))
    );
    let mut doc = json!({
        "schema_version": json::SCHEMA_VERSION,
        "command": "sweep",
        "ok": true,
        "exit_code": 0,
        "sweep": plan.info.sweep,
        "out": out.display().to_string(),
        "shard": shard.to_string(),
        "runs": {
            "planned": plan.info.runs(),
            "run_now": schedule.execute.len(),
            "reused": schedule.reused(),
            "resumed": done.len(),
        },
        "simulated_requests": requests,
        "files": [],
        "charts": 0,
    });
    if shard != Shard::ALL {
        let note = format!(
            "shard {shard} done in {}; combine the shards with `brownout merge DIR... --out OUT`",
            out.display()
        );
        if !args.json {
            println!("{}", escape::terminal(&note));
        }
        return Ok(doc);
    }
    let records = journal::read_journal(&out, &plan.info, |_| Ok(())).map_err(io)?.records;
    let journal_path = out.join(store::JOURNAL).display().to_string();
    let (files, charts, recommendation) = finish(&lock, &plan.info, records, &journal_path, !args.json)?;
    doc["files"] = json!(files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>());
    doc["charts"] = json!(charts);
    // As recommendation.json holds it; null without a `decide` section.
    doc["recommendation"] = json!(recommendation);
    Ok(doc)
}

/// Render the result files of `records` (read from `journals`, for messages) into `out`,
/// listing them on stdout if `list` (else on stderr: stdout holds a JSON document). Returns
/// the files, the number of chart files and the recommendation.
fn finish(
    lock: &folder::Lock,
    plan: &grid::PlanInfo,
    records: Vec<RunRecord>,
    journals: &str,
    list: bool,
) -> Result<(Vec<PathBuf>, usize, Option<brownout::decide::recommendation::Recommendation>), Failure> {
    let out = lock.dir();
    let records = store::complete(plan, records).map_err(|e| Failure::input(format!("error: {journals}: {e}")))?;
    let written = journal::write_sweep(out, plan, &records).map_err(io)?;
    let charts = written.chart_files.iter().flat_map(|c| [c.clone(), c.replace(".png", ".svg")]);
    let all = written.files.iter().map(|p| p.display().to_string()).chain(charts);
    folder::record(lock, all.chain([store::PLAN.to_string(), "report.html".to_string()])).map_err(io)?;
    let say = |text: &str| {
        if list {
            println!("{}", escape::terminal(text));
        } else {
            eprintln!("{}", escape::terminal(text));
        }
    };
    for p in &written.files {
        say(&format!("wrote {}", p.display()));
    }
    say(&format!("wrote {} chart files and report.html in {}", written.charts, out.display()));
    say(&format!(
        "best settings: {}, a difference within a metric's margin is a tie (margins in sweep.json)",
        sweep::stats::RULE
    ));
    for b in sweep::best::best_sets(plan, &records) {
        let Some(why) = &b.unranked else { continue };
        let condition: Vec<String> = b.condition.iter().map(|(a, v)| format!("{a}={v}")).collect();
        let at = if condition.is_empty() { String::new() } else { format!(" @ {}", condition.join(", ")) };
        say(&format!("no best setting of {} for {}{at}: {why}", b.metric, b.policy));
    }
    if let Some(r) = &written.recommendation {
        say(&sweep::decide::summary_text(r));
    }
    Ok((written.files, written.charts, written.recommendation))
}

/// Merge shard folders into the result files of an unsharded run. Each shard's `plan.json`
/// must be the one its journal was started with, and all must be one plan.
pub fn merge(args: MergeArgs) -> Result<(), Failure> {
    // Results written into a shard would sit beside its journal, and a later merge or resume of
    // that shard would find a folder that is neither.
    let out = folder::resolve(&args.out).map_err(io)?;
    for d in &args.dirs {
        if folder::resolve(d).map_err(io)? == out {
            return Err(Failure::input(format!(
                "error: --out {} is one of the shards ({}): merge into a folder of its own",
                args.out.display(),
                d.display()
            )));
        }
    }
    let lock = folder::lock(&args.out).map_err(io)?;
    folder::claim(&lock, folder::Kind::Sweep).map_err(io)?;
    folder::clean_temporaries(&lock).map_err(io)?;
    let (plan, _) = journal::read_plan(&args.dirs[0]).map_err(io)?;
    let mut records = Vec::new();
    for d in &args.dirs {
        let (other, crc) = journal::read_plan(d).map_err(io)?;
        if other.hash != plan.hash {
            return Err(Failure::input(format!(
                "error: {} holds plan {} but {} holds plan {}: shards of different sweeps",
                d.display(),
                other.hash,
                args.dirs[0].display(),
                plan.hash
            )));
        }
        let plan_path = d.join(store::PLAN);
        let matches = |h: &Header| {
            if h.hash != plan.hash {
                return Err(format!("this journal belongs to plan {}, not {}", h.hash, plan.hash));
            }
            if h.plan != crc {
                return Err(format!(
                    "{} was changed after the sweep wrote it (its checksum is {crc}, the journal's header says {})",
                    plan_path.display(),
                    h.plan
                ));
            }
            Ok(())
        };
        let read = journal::read_journal(d, &plan, matches).map_err(io)?;
        if read.header.is_none() {
            return Err(Failure::input(format!(
                "error: {} has no header: that shard never started; run it (or --resume it) first",
                d.join(store::JOURNAL).display()
            )));
        }
        records.extend(read.records);
    }
    let journals: Vec<String> = args.dirs.iter().map(|d| d.join(store::JOURNAL).display().to_string()).collect();
    finish(&lock, &plan, records, &journals.join(", "), true).map(|_| ())
}
