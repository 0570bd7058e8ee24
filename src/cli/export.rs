//! `brownout export openmetrics DIR --start TIME [--out FILE]`: a run folder's time series
//! in the OpenMetrics text format (the mapping is `brownout::output::openmetrics`'s).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{Failure, Named};
use brownout::output::openmetrics;
use brownout::report::escape;

/// Arguments of `brownout export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(subcommand)]
    format: Format,
}

/// The formats written.
#[derive(Subcommand, Debug)]
enum Format {
    /// OpenMetrics text (for `promtool tsdb create-blocks-from openmetrics`): one family per
    /// `timeseries.csv` column, labels policy, class and phase (docs/openmetrics.md).
    Openmetrics {
        /// The run folder (`brownout run`'s output) whose `timeseries.csv` is written.
        dir: PathBuf,
        /// The wall-clock time of the run's time 0, RFC 3339 (`2026-01-01T00:00:00Z`).
        #[arg(long)]
        start: String,
        /// Write to this file instead of standard output (`-`: standard output).
        #[arg(long, short = 'o')]
        out: Option<PathBuf>,
    },
}

/// Export, or exit 2 with nothing written.
pub fn export(args: ExportArgs) -> Result<(), Failure> {
    let Format::Openmetrics { dir, start, out } = args.format;
    let start_ms = openmetrics::parse_start(&start).map_err(|m| Failure::input(format!("error: {m}")))?;
    let out = super::out_file(out.as_deref()).map(PathBuf::from);
    if let Some(o) = &out {
        super::check_paths(Some(&Named::new("the run folder", &dir)), &[Named::new("--out", o)], &[])?;
    }
    let dest = match &out {
        Some(o) => openmetrics::Dest::File(o),
        None => openmetrics::Dest::Stream(&mut std::io::stdout().lock()),
    };
    openmetrics::export(&dir, start_ms, dest).map_err(|e| Failure::input(format!("error: {e:#}")))?;
    if let Some(o) = &out {
        eprintln!("{}", escape::terminal(&format!("wrote {}", o.display())));
    }
    Ok(())
}
