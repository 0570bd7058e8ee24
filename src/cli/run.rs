//! `brownout run`.

use std::path::{Path, PathBuf};

use clap::Args;

use super::Failure;
use brownout::model::{Model, RunOptions};
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
}

pub fn load_model(path: &Path, seed: Option<u64>) -> Result<Model, Failure> {
    let s = scenario::load(path).map_err(|e| Failure::input(format!("error: {e}")))?;
    let seed = seed.unwrap_or(s.seed);
    let dir = path.parent().unwrap_or(Path::new("."));
    Model::build(&s, seed, dir).map_err(|e| Failure::input(format!("error: {}: {e}", path.display())))
}

pub fn run(args: RunArgs) -> Result<(), Failure> {
    let model = load_model(&args.scenario, args.seed)?;
    let s = &model.scenario;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("output").join(&s.name));
    let result = runner::run_all(&model, RunOptions { timeseries: true }, !args.serial);
    for r in &result.runs {
        if let Some(why) = &r.aborted {
            return Err(Failure::input(format!(
                "error: policy \"{}\": {why} (seed {}; nothing written)",
                r.policy, model.seed
            )));
        }
    }
    let checked = report::expect::check(&result.summary, &s.expect);
    let io = |e: anyhow::Error| Failure { code: 2, message: format!("error: writing results: {e:#}") };
    output::write_atomic(&out.join("summary.json"), &output::summary_json(&result.summary).map_err(io)?).map_err(io)?;
    output::write_atomic(&out.join("summary.csv"), &output::summary_csv(&result.summary).map_err(io)?).map_err(io)?;
    output::write_atomic(&out.join("timeseries.csv"), &output::timeseries_csv(&result.rows).map_err(io)?).map_err(io)?;
    let md = output::report_md(s, &result.summary, &checked, &[]);
    output::write_atomic(&out.join("report.md"), md.as_bytes()).map_err(io)?;
    print!("{}", report::table::terminal(&result.summary));
    println!("results in {}", out.display());
    let failed: Vec<_> = checked.iter().filter(|c| !c.passed).collect();
    for c in &checked {
        println!("{} {} (measured {:.4})", if c.passed { "PASS" } else { "FAIL" }, c.statement, c.actual);
    }
    if !failed.is_empty() {
        return Err(Failure {
            code: 1,
            message: format!(
                "{} expectation(s) failed: {} (seed {})",
                failed.len(),
                failed.iter().map(|c| c.statement.as_str()).collect::<Vec<_>>().join("; "),
                model.seed
            ),
        });
    }
    Ok(())
}
