//! `brownout sweep` and `brownout merge`: resolve the spec, open or resume the journal, run
//! the pending runs with a progress bar, render the result files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Args;
use serde_json::{Value, json};

use super::progress::Progress;
use super::{Failure, json};
use brownout::output::folder;
use brownout::output::journal;
use brownout::report::escape;
use brownout::sweep::RunRecord;
use brownout::sweep::{self, Shard, grid, reuse};
use brownout::unstable::store::{self, Header};

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
    /// No progress display. The files written and the best settings are still printed (on
    /// stderr with `--json`): `--quiet` silences the display of a sweep in progress, not its
    /// results.
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
        "merge": null,
    });
    if shard != Shard::ALL {
        let hint = merge_hint(&out, shard);
        let note = format!("shard {shard} done in {}; {hint}", out.display());
        if !args.json {
            println!("{}", escape::terminal(&note));
        }
        // The same hint for a script that reads the document: the merge command in backticks.
        doc["merge"] = json!(hint);
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

/// A word for a POSIX shell: as it is when it needs no quoting, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-+,:=@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The folders of every shard of `shard.count`, when `out`'s name holds this shard's number
/// exactly once (`results/shard-3`, `part-03`): the others are named by the same pattern, with
/// the same zero padding, beside it.
fn sibling_shards(out: &Path, shard: Shard) -> Option<Vec<PathBuf>> {
    let name = out.file_name()?.to_str()?;
    let bytes = name.as_bytes();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i > start {
            runs.push(start..i);
        } else {
            i += 1;
        }
    }
    let mut ours = runs.into_iter().filter(|r| name[r.clone()].parse::<u64>().ok() == Some(shard.index));
    let at = ours.next()?;
    if ours.next().is_some() {
        return None;
    }
    let width = if name[at.clone()].starts_with('0') { at.len() } else { 0 };
    let parent = out.parent().unwrap_or(Path::new(""));
    let named = |k: u64| parent.join(format!("{}{k:0width$}{}", &name[..at.start], &name[at.end..]));
    Some((0..shard.count).map(named).collect())
}

/// What a finished shard says about merging: the exact `brownout merge` command when the other
/// shards' folders follow from this one's name, else the command with the folders to fill in.
fn merge_hint(out: &Path, shard: Shard) -> String {
    let word = |p: &Path| shell_word(&p.to_string_lossy());
    if let Some(dirs) = sibling_shards(out, shard) {
        let merged = out.parent().unwrap_or(Path::new("")).join("merged");
        let dirs: Vec<String> = dirs.iter().map(|d| word(d)).collect();
        return format!(
            "once every shard is done, merge them with `brownout merge {} --out {}`",
            dirs.join(" "),
            word(&merged)
        );
    }
    let others: Vec<String> =
        (0..shard.count).filter(|&k| k != shard.index).map(|k| format!("{k}/{}", shard.count)).collect();
    let which = match others.len() {
        1 => format!("the folder of shard {}", others[0]),
        2..=5 => {
            format!("the folders of shards {} and {}", others[..others.len() - 1].join(", "), others[others.len() - 1])
        }
        n => format!("the folders of the other {n} shards"),
    };
    format!(
        "once every shard is done, merge them with `brownout merge {} DIR... --out OUT`, DIR... being {which}",
        word(out)
    )
}

/// A shard folder given to `merge`: its shard (from its journal's header) and the runs it holds.
struct Part<'a> {
    dir: &'a Path,
    shard: Shard,
    runs: BTreeSet<u64>,
}

/// Refuse shards that do not hold every run of the plan, naming each given shard that is
/// unfinished (its folder and how many of its runs are done) and each shard no folder holds.
fn check_shards(plan: &grid::PlanInfo, parts: &[Part]) -> Result<(), Failure> {
    let total = plan.runs();
    let have: BTreeSet<u64> = parts.iter().flat_map(|p| p.runs.iter().copied()).filter(|&r| r < total).collect();
    let missing: Vec<u64> = (0..total).filter(|r| !have.contains(r)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    // Runs of shard k of n: those below `total` congruent to k.
    let owned = |s: Shard| if s.index < total { (total - 1 - s.index) / s.count + 1 } else { 0 };
    let mut lines = Vec::new();
    let mut told = BTreeSet::new();
    for p in parts {
        let lost = missing.iter().filter(|&&r| p.shard.owns(r)).count() as u64;
        if lost > 0 && told.insert((p.shard.count, p.shard.index)) {
            let s = p.shard;
            lines.push(format!(
                "  shard {s} ({}): {} of {} runs finished; run it again with --shard {s} --out {} --resume",
                p.dir.display(),
                owned(s) - lost,
                owned(s),
                shell_word(&p.dir.to_string_lossy())
            ));
        }
    }
    let nobody: Vec<u64> = missing.iter().copied().filter(|&r| !parts.iter().any(|p| p.shard.owns(r))).collect();
    let counts: BTreeSet<u64> = parts.iter().map(|p| p.shard.count).collect();
    match (counts.len(), nobody.first()) {
        (_, None) => {}
        (1, Some(_)) => {
            let n = parts[0].shard.count;
            let absent: BTreeSet<u64> = nobody.iter().map(|r| r % n).collect();
            for k in absent {
                let s = Shard { index: k, count: n };
                lines.push(format!(
                    "  shard {s}: no folder given holds it ({} runs); run it with --shard {s}, or name its folder",
                    owned(s)
                ));
            }
        }
        (_, Some(first)) => lines.push(format!(
            "  {} runs are in no shard given (first: run {first}); the folders are shards of different counts ({})",
            nobody.len(),
            counts.iter().map(|n| format!("/{n}")).collect::<Vec<_>>().join(", ")
        )),
    }
    Err(Failure::input(format!(
        "error: {} of {total} runs are missing; nothing merged:\n{}",
        missing.len(),
        lines.join("\n")
    )))
}

/// Merge shard folders into the result files of an unsharded run. Each shard's `plan.json`
/// must be the one its journal was started with, all must be one plan, and together they must
/// hold every run; everything is checked before the output folder is touched.
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
    let (plan, _) = journal::read_plan(&args.dirs[0]).map_err(io)?;
    let mut records = Vec::new();
    let mut parts = Vec::new();
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
            h.shard.parse::<Shard>().map(|_| ())
        };
        let read = journal::read_journal(d, &plan, matches).map_err(io)?;
        let Some(header) = read.header else {
            return Err(Failure::input(format!(
                "error: {} has no header: that shard never started; run it (or --resume it) first",
                d.join(store::JOURNAL).display()
            )));
        };
        // Parsed by `matches` above.
        let shard = header.shard.parse().unwrap_or(Shard::ALL);
        parts.push(Part { dir: d, shard, runs: read.records.iter().map(|r| r.run).collect() });
        records.extend(read.records);
    }
    check_shards(&plan, &parts)?;
    let lock = folder::lock(&args.out).map_err(io)?;
    folder::claim(&lock, folder::Kind::Sweep).map_err(io)?;
    folder::clean_temporaries(&lock).map_err(io)?;
    let journals: Vec<String> = args.dirs.iter().map(|d| d.join(store::JOURNAL).display().to_string()).collect();
    finish(&lock, &plan, records, &journals.join(", "), true).map(|_| ())
}
