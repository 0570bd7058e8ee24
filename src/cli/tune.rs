//! `brownout tune`: resolve the spec, open or resume the journal of evaluations, run the
//! search, write the recommendation, trace, chart and report.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde_json::{Value, json};

use super::{Failure, json};
use brownout::decide::recommendation::Recommendation;
use brownout::output::{folder, tune as files};
use brownout::report::escape;
use brownout::tune::{self, Hooks, Record};

/// Arguments of `brownout tune`.
#[derive(Args, Debug)]
pub struct TuneArgs {
    /// The tune spec (RON).
    spec: PathBuf,
    /// Worker threads for a candidate's replications (default: all cores). The result does
    /// not depend on it.
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Output folder (default: output/<tune name>/).
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
    /// Continue the search journaled in the output folder: journaled candidates are not run
    /// again, so it reaches the result the uninterrupted search would.
    #[arg(long)]
    resume: bool,
    /// Print one JSON document on stdout instead of the summary.
    #[arg(long)]
    json: bool,
    /// Skip the sensitivity runs after the search (each knob at its range's low and high end,
    /// the others at the recommended setting; outside the budget).
    #[arg(long)]
    no_sensitivity: bool,
}

fn io(e: anyhow::Error) -> Failure {
    Failure::input(format!("error: {e:#}"))
}

/// Run (or resume) a search and write its result files.
pub fn tune(args: TuneArgs) -> Result<(), Failure> {
    let as_json = args.json;
    match run_tune(args) {
        Ok(doc) => {
            if as_json {
                json::print(&doc);
            }
            Ok(())
        }
        Err(f) => Err(if as_json { json::fail("tune", f, None) } else { f }),
    }
}

fn run_tune(args: TuneArgs) -> Result<Value, Failure> {
    let space = tune::load(&args.spec).map_err(|e| Failure::input(format!("error: {e}")))?;
    let threads = super::sweep::threads(args.jobs)?;
    let out = match &args.out {
        Some(o) => o.clone(),
        None => folder::default_dir(&space.spec.name).map_err(io)?,
    };
    let lock = folder::lock(&out).map_err(io)?;
    folder::claim(&lock, folder::Kind::Tune).map_err(io)?;
    folder::clean_temporaries(&lock).map_err(io)?;
    let (mut journal, records) = files::open(&out, &space.hash, args.resume).map_err(io)?;
    folder::record(&lock, [files::JOURNAL]).map_err(io)?;
    let started = Instant::now();
    let out_of_time = || space.wall_ns.is_some_and(|w| started.elapsed().as_nanos() >= u128::from(w));
    let mut fresh_runs = 0u64;
    let mut on_eval = |e: &tune::Evaluation, fresh: bool| {
        if fresh {
            fresh_runs += u64::from(space.spec.replications);
            journal.append(&Record::of(e))?;
        }
        Ok(())
    };
    let hooks =
        Hooks { known: files::known(&records).map_err(io)?, on_eval: &mut on_eval, out_of_time: &out_of_time, threads };
    let (done, stop) = tune::search(&space, hooks)
        .map_err(|e| Failure::input(format!("error: {e:#} (finished candidates are kept; fix and --resume)")))?;
    let rec = tune::recommend(&space, &done);
    let sens = if args.no_sensitivity {
        None
    } else {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build().map_err(|e| io(e.into()))?;
        let mut measure = |v: &[f64]| pool.install(|| space.measure(v));
        let s = tune::sensitivity::sensitivity(&space, &rec, &done, &mut measure)
            .map_err(|e| Failure::input(format!("error: sensitivity runs: {e}")))?;
        Some(s)
    };
    let written = files::write(&out, &space, &rec, stop, &done, sens.as_ref()).map_err(io)?;
    folder::record(&lock, &written).map_err(io)?;
    let runs = done.last().map_or(0, |e| e.runs);
    // Under --json the human text goes to stderr: stdout holds the document alone.
    let say = |text: &str| {
        if args.json {
            eprintln!("{}", escape::terminal(text));
        } else {
            println!("{}", escape::terminal(text));
        }
    };
    say(&summary(&space.spec.name, &rec, runs, fresh_runs, stop));
    match &sens {
        None => say("sensitivity: not estimated (--no-sensitivity)"),
        Some(s) => {
            say(&format!(
                "sensitivity: {} settings (each knob at its range's ends, the others at the recommended setting), {} runs outside the budget",
                s.settings, s.runs
            ));
            for m in &s.metrics {
                let rows: Vec<String> = m.rows.iter().map(|r| format!("{} {}", r.axis, swing(r))).collect();
                say(&format!("  {} ({}): {}", m.metric, m.role, rows.join("; ")));
            }
        }
    }
    for p in &written {
        say(&format!("wrote {}", p.display()));
    }
    Ok(json!({
        "schema_version": json::SCHEMA_VERSION,
        "command": "tune",
        "ok": true,
        "exit_code": 0,
        "tune": space.spec.name,
        "out": out.display().to_string(),
        "runs": { "spent": runs, "run_now": fresh_runs, "resumed": runs - fresh_runs, "budget": space.spec.budget.runs },
        "stopped": stop,
        "recommendation": rec,
        "sensitivity": sens.as_ref().map(|s| json!({ "runs": s.runs, "settings": s.settings, "metrics": s.metrics })),
        "files": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    }))
}

/// A sensitivity row's swing: `width 0.0312 (beyond noise)`, or `–` without two values.
fn swing(r: &brownout::sweep::sensitivity::SensitivityRow) -> String {
    if r.width.is_nan() {
        return "–".into();
    }
    format!("width {:.4} ({})", r.width, if r.significant { "beyond noise" } else { "within noise" })
}

/// The terminal summary: what is recommended, its objective and constraints, the budget.
fn summary(name: &str, r: &Recommendation, runs: u64, fresh: u64, stop: tune::Stop) -> String {
    let mut s = format!("tune {name}: {} candidates, {runs} runs ({fresh} run now), stopped: {stop:?}\n", r.candidates);
    match &r.recommended {
        None => s += "no candidate evaluated within the budget\n",
        Some(c) => {
            let setting: Vec<String> = c.setting.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s += &format!(
                "{} {}: {:?} {} = {:.4} (one-sided 95 % {:.4} .. {:.4})\n",
                if r.feasible { "recommended" } else { "no feasible candidate within the budget; least violation" },
                setting.join(" "),
                r.sense,
                r.objective,
                c.objective.mean,
                c.objective.lo,
                c.objective.hi
            );
            for k in &c.constraints {
                s += &format!(
                    "  {} {} {}: mean {:.4}, bounds {:.4} .. {:.4}: {:?}\n",
                    k.metric, k.op, k.value, k.mean, k.lo, k.hi, k.verdict
                );
            }
            s += &format!("rule: {}\n", r.rule);
        }
    }
    for f in brownout::decide::recommendation::warnings(r) {
        s += &format!("warning: {f}\n");
    }
    s.trim_end().to_string()
}
