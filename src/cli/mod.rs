//! Argument parsing and the subcommands. Exit codes: 0 success, 1 a failed expectation or
//! verification, 2 bad input (nothing written).

mod check;
mod completions;
mod diff;
mod examples;
mod explain;
mod import;
mod json;
mod new;
mod plot;
mod progress;
mod run;
mod sweep;
mod tune;
mod verify;

use std::path::PathBuf;
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

pub fn main() -> ExitCode {
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit());
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
