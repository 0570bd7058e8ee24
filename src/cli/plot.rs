//! `brownout plot DIR`: re-render charts and `report.html` from saved results, without re-running.

use std::path::PathBuf;

use clap::Args;

use super::Failure;
use brownout::output;

/// Arguments of `brownout plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A results folder holding summary.json and timeseries.csv (a run) or sweep.json (a sweep).
    dir: PathBuf,
}

/// Re-render; a missing or unreadable results folder is bad input (exit 2).
pub fn plot(args: PlotArgs) -> Result<(), Failure> {
    let bad = |e: anyhow::Error| Failure::input(format!("error: {e:#}"));
    if !args.dir.is_dir() {
        return Err(Failure::input(format!("error: {}: no such results folder", args.dir.display())));
    }
    let lock = output::folder::lock(&args.dir).map_err(bad)?;
    output::folder::clean_temporaries(&lock).map_err(bad)?;
    let paths = output::pages::plot_dir(&args.dir).map_err(bad)?;
    // A run folder is replaced whole next time only if it holds nothing but what brownout
    // wrote: the charts drawn here are brownout's too.
    let svgs = paths.iter().map(|p| p.replace(".png", ".svg"));
    let written = paths.iter().cloned().chain(svgs).chain(["report.html".into(), "report.md".into()]);
    output::folder::record(&lock, written.collect::<Vec<_>>()).map_err(bad)?;
    let done = format!("{} chart(s) and report.html written in {}", paths.len(), args.dir.display());
    println!("{}", brownout::report::escape::terminal(&done));
    Ok(())
}
