//! `brownout verify`: run the queueing-theory suite and print its pass/fail table.

use std::path::PathBuf;

use clap::Args;

use super::Failure;
use brownout::verify::suite;

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
    let report = suite::run(&opts).map_err(|e| Failure::input(format!("error: {e}")))?;
    print!("{}", suite::render(&report));
    if report.passed() { Ok(()) } else { Err(Failure { code: 1, message: "verification failed".into() }) }
}
