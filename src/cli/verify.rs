//! `brownout verify`: run the queueing-theory suite and print its pass/fail table.

use std::path::PathBuf;

use clap::Args;

use serde_json::{Value, json};

use super::progress::Progress;
use super::{Failure, json};
use brownout::verify::suite;
use brownout::verify::theory::Interval;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Shorter horizons and 5 replications (about 20 s in a debug build).
    #[arg(long)]
    quick: bool,
    /// Replications per model (default 5 with --quick, else 10).
    #[arg(long)]
    replications: Option<usize>,
    /// Root seed; each replication derives its own.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Folder of the model files (default: scenarios/verify, else the one in the source tree).
    #[arg(long)]
    models: Option<PathBuf>,
    /// Print one JSON document on stdout (docs/json.md) instead of the table.
    #[arg(long)]
    json: bool,
    /// No progress display on stderr. The checks' table is still printed: `--quiet`
    /// silences the display of the suite in progress, not its results.
    #[arg(long, short)]
    quiet: bool,
}

fn models_dir(given: Option<PathBuf>) -> PathBuf {
    given.unwrap_or_else(|| {
        let local = PathBuf::from("scenarios/verify");
        if local.is_dir() {
            local
        } else {
            // Run from elsewhere: the models shipped with the source tree.
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/verify")
        }
    })
}

pub fn run(args: VerifyArgs) -> Result<(), Failure> {
    let opts = suite::Options {
        quick: args.quick,
        replications: args.replications,
        seed: args.seed,
        dir: models_dir(args.models),
    };
    let bar = Progress::new(args.quiet, suite::runs(&opts) as u64, "finished", |n| format!("{n} runs"));
    let outcome = suite::run_observed(&opts, &|_| {
        if let Some(bar) = &bar {
            bar.add(1);
        }
    });
    if let Some(bar) = &bar {
        bar.finish();
    }
    let report = match outcome {
        Ok(r) => r,
        Err(e) => {
            let f = Failure::input(format!("error: {e}"));
            return Err(if args.json { json::fail("verify", f, None) } else { f });
        }
    };
    if args.json {
        json::print(&document(&report));
    } else {
        print!("{}", suite::render(&report));
    }
    if report.passed() { Ok(()) } else { Err(Failure { code: 1, message: "verification failed".into() }) }
}

fn interval(i: &Interval) -> Value {
    json!({ "mean": json::number(Some(i.mean)), "lo": json::number(Some(i.lo)), "hi": json::number(Some(i.hi)) })
}

/// The suite's verdicts as the `verify --json` document.
fn document(report: &suite::Report) -> Value {
    let checks: Vec<Value> = report
        .checks
        .iter()
        .map(|c| {
            json!({
                "model": c.model,
                "quantity": c.quantity,
                "expected": json::number(Some(c.expected)),
                "ci95": interval(&c.ci),
                "family": interval(&c.family),
                "tolerance": c.tolerance,
                "why": c.why,
                "passed": c.passed,
            })
        })
        .collect();
    let code = if report.passed() { 0 } else { 1 };
    json!({
        "schema_version": json::SCHEMA_VERSION,
        "command": "verify",
        "ok": report.passed(),
        "exit_code": code,
        "seed": report.seed,
        "replications": report.replications,
        "quick": report.quick,
        "checks": checks,
    })
}
