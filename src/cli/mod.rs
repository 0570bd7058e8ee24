//! Argument parsing and the subcommands. Exit codes: 0 success, 1 a failed expectation or
//! verification, 2 bad input (nothing written).

mod calibrate;
mod check;
mod completions;
mod diff;
mod examples;
mod explain;
mod export;
mod import;
mod json;
mod new;
mod plot;
mod progress;
mod run;
mod sweep;
mod tune;
mod verify;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Deterministic simulator for protecting a service from a slow-but-not-failing dependency.
#[derive(Parser, Debug)]
#[command(name = "brownout", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every policy of a scenario on the same traffic and write results.
    Run(run::RunArgs),
    /// Check the simulator against queueing theory (Erlang B/C, Little, timeout tails).
    Verify(verify::VerifyArgs),
    /// Re-render charts and report.html from a results folder, without re-running.
    Plot(plot::PlotArgs),
    /// Sweep scenario parameters over a grid or sample, with replications and intervals.
    Sweep(sweep::SweepArgs),
    /// Search a policy set's knobs for the best setting a decision asks for (Nelder-Mead).
    Tune(tune::TuneArgs),
    /// Combine the output folders of sweep shards into the unsharded result files.
    Merge(sweep::MergeArgs),
    /// Validate a scenario file without running it.
    Check {
        /// The scenario file (RON).
        scenario: PathBuf,
        /// Print one JSON document on stdout (docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// Compare two result folders of `run`: the figures that changed beyond noise.
    Diff(diff::DiffArgs),
    /// Write a commented starter scenario from a template (see --list).
    New(new::NewArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(completions::CompletionsArgs),
    /// Explain scenario fields and policy parameters: meaning, unit, default and range.
    Explain(explain::ExplainArgs),
    /// Turn a resilience4j, Envoy/Istio, opossum or .NET configuration file into a policy stack.
    Import(import::ImportArgs),
    /// Write a run's time series for other tools: `export openmetrics DIR --start TIME`.
    Export(export::ExportArgs),
    /// Fit a runnable scenario from telemetry: `calibrate prometheus RANGE.json... --out DIR`,
    /// `calibrate otlp TRACES.jsonl... --out DIR`.
    Calibrate(calibrate::CalibrateArgs),
}

/// The command line definition, with each subcommand's examples in its help.
pub fn command() -> clap::Command {
    examples::with_examples(Cli::command())
}

/// A failure with its exit code.
pub struct Failure {
    /// 1 = results failed a check; 2 = bad input.
    pub code: u8,
    /// What to print.
    pub message: String,
}

impl Failure {
    /// Bad input.
    pub fn input(message: impl Into<String>) -> Self {
        Self { code: 2, message: message.into() }
    }
}

/// `--out FILE` of a command that otherwise prints: `None` (standard output) for `-`.
fn out_file(out: Option<&Path>) -> Option<&Path> {
    out.filter(|p| p.as_os_str() != "-")
}

/// A path a command reads or writes, with what it is for messages (`--events`, `the
/// scenario file`).
pub(crate) struct Named {
    /// What the path is, as the user knows it.
    pub what: String,
    /// The path as given.
    pub path: PathBuf,
}

impl Named {
    /// `what` at `path`.
    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self { what: what.into(), path: path.into() }
    }

    fn describe(&self) -> String {
        format!("{} {}", self.what, self.path.display())
    }
}

/// Where `path` is, resolved (absolute, links and `..` resolved), and its identity (device,
/// inode) when it exists: two spellings, a link or a hard link of one file are one file.
fn place(path: &Path) -> (PathBuf, Option<(u64, u64)>) {
    let real = brownout::output::folder::resolve(path).unwrap_or_else(|_| path.to_path_buf());
    #[cfg(unix)]
    let id = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    };
    #[cfg(not(unix))]
    let id = None;
    (real, id)
}

/// Refuse, before anything runs or is written, an output file that is another output, lies in
/// (or is) the output folder `out` (replaced whole, or refused next time for holding it), or
/// is one of `inputs`; and an output folder that is an input. Exit 2 naming both.
pub(crate) fn check_paths(out: Option<&Named>, files: &[Named], inputs: &[Named]) -> Result<(), Failure> {
    let same = |a: &(PathBuf, Option<(u64, u64)>), b: &(PathBuf, Option<(u64, u64)>)| {
        a.0 == b.0 || (a.1.is_some() && a.1 == b.1)
    };
    let refuse = |a: &Named, b: &Named, how: &str| {
        Err(Failure::input(format!(
            "error: {} {how} {}: brownout never writes one file twice, nor over its inputs; choose another path",
            a.describe(),
            b.describe()
        )))
    };
    let places: Vec<_> = files.iter().map(|f| place(&f.path)).collect();
    let read: Vec<_> = inputs.iter().map(|f| place(&f.path)).collect();
    for (i, (f, p)) in files.iter().zip(&places).enumerate() {
        for (g, q) in files.iter().zip(&places).take(i) {
            if same(p, q) {
                return refuse(f, g, "is the same file as");
            }
        }
        if let Some(o) = out {
            let d = place(&o.path);
            if same(p, &d) || p.0.starts_with(&d.0) {
                return refuse(f, o, "is in the output folder");
            }
        }
        for (g, q) in inputs.iter().zip(&read) {
            if same(p, q) {
                return refuse(f, g, "is");
            }
        }
    }
    if let Some(o) = out {
        let d = place(&o.path);
        for (g, q) in inputs.iter().zip(&read) {
            if same(&d, q) {
                return refuse(o, g, "is");
            }
        }
    }
    Ok(())
}

/// An argument error from clap: under `--json` (anywhere before a `--`), one error document
/// on stdout as well as clap's text on stderr, with clap's exit code; help and version
/// requests, and everything without `--json`, as clap does it.
fn argument_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let args: Vec<String> = std::env::args().skip(1).take_while(|a| a != "--").collect();
    let json = args.iter().any(|a| a == "--json");
    let shown = matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if json && !shown {
        let names: Vec<String> = command().get_subcommands().map(|c| c.get_name().to_string()).collect();
        let name = args.iter().find(|a| names.contains(a)).map_or("brownout", String::as_str);
        let text = e.render().to_string();
        let message = text.trim().trim_start_matches("error: ");
        json::print(&json::argument_error(name, u8::try_from(e.exit_code()).unwrap_or(2), message));
    }
    e.exit()
}

pub fn main() -> ExitCode {
    let cli = command().try_get_matches().and_then(|m| Cli::from_arg_matches(&m)).unwrap_or_else(|e| argument_error(e));
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Plot(args) => plot::plot(args),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Tune(args) => tune::tune(args),
        Command::Merge(args) => sweep::merge(args),
        Command::Check { scenario, json } => check::check(&scenario, json),
        Command::Diff(args) => diff::diff(args),
        Command::New(args) => new::new(args),
        Command::Completions(args) => completions::completions(args),
        Command::Explain(args) => explain::explain(args),
        Command::Import(args) => import::import(args),
        Command::Export(args) => export::export(args),
        Command::Calibrate(args) => calibrate::calibrate(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // Messages quote names and paths: never let them send control sequences.
            eprintln!("{}", brownout::report::escape::terminal(&f.message));
            ExitCode::from(f.code)
        }
    }
}
