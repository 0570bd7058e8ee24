//! Writing results: JSON, CSV and Markdown. Every file is written to a temporary file
//! (created exclusively, under an unpredictable name) and renamed into place, so a crash never
//! leaves a half-written file that looks complete; [`folder`] locks output folders and makes a
//! run's folder all-or-nothing; [`crate::report::escape`] makes names safe for each format.

#![warn(missing_docs)]

// The core's modules under their old paths, so `crate::metrics::...` reads as before.
#[cfg(test)]
pub(crate) use brownout_core::model;
pub(crate) use brownout_core::unstable::fsread;
pub(crate) use brownout_core::{metrics, report, runner, scenario, sweep};

pub mod charts;
pub mod events;
pub mod folder;
pub(crate) mod html;
pub(crate) mod interactive;
pub mod journal;
pub mod junit;
pub mod openmetrics;
pub mod pages;
pub(crate) mod recommend_html;
pub mod run;
pub mod series;
pub(crate) mod slo_alerts;
pub mod tune;

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::metrics::WindowRow;
use crate::metrics::catalogue;
use crate::metrics::summary::ScenarioSummary;
use crate::report::escape;
use crate::report::expect::Checked;
use crate::scenario::Scenario;

/// Largest results file read back (a summary, a journal, a plan, a recommendation): far
/// above what `limits.max_output` lets a run or sweep write into one file by default.
pub const MAX_RESULT_BYTES: u64 = 1 << 30;

/// `path` opened for reading when it is a regular file (see `fsread::open_regular`): a results
/// file that links to a device such as `/dev/zero`, or a FIFO, would otherwise be read
/// without end or block.
pub(crate) fn open_regular(path: &Path) -> Result<std::fs::File> {
    crate::fsread::open_regular(path).with_context(|| format!("reading {}", path.display()))
}

/// The bytes of the regular file `path`, at most [`MAX_RESULT_BYTES`] (see
/// `fsread::read_capped`).
pub fn read_regular(path: &Path) -> Result<Vec<u8>> {
    crate::fsread::read_capped(path, MAX_RESULT_BYTES).with_context(|| format!("reading {}", path.display()))
}

/// Write `bytes` to `path` atomically: a temporary file in the same folder, created
/// exclusively under a random name (so a planted file or link is never written through),
/// then renamed over `path`. On failure the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Like File::create: the umask decides (tempfile's default is owner-only).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp =
        builder.tempfile_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes).with_context(|| format!("writing {}", tmp.path().display()))?;
    tmp.as_file().sync_all().ok();
    tmp.persist(path).map_err(|e| e.error).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// `summary.json`, pretty-printed with a trailing newline.
pub fn summary_json(s: &ScenarioSummary) -> Result<Vec<u8>> {
    let mut v = serde_json::to_vec_pretty(s)?;
    v.push(b'\n');
    Ok(v)
}

/// `summary.csv`: one row per (policy, class), a column per catalogue metric that has one, in
/// the catalogue's append-only column order (empty where the run lacks the part, e.g. no
/// breaker, or the figure has no value: NaN).
pub fn summary_csv(s: &ScenarioSummary) -> Result<Vec<u8>> {
    let cols = catalogue::csv_columns();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["policy", "class"].into_iter().chain(cols.iter().map(|(_, name)| *name)))?;
    for r in &s.runs {
        for c in &r.classes {
            let values = cols
                .iter()
                .map(|(m, _)| m.read(r, Some(c)).filter(|v| !v.is_nan()).map_or(String::new(), |v| v.to_string()));
            w.write_record([escape::csv_cell(&r.policy), escape::csv_cell(&c.class)].into_iter().chain(values))?;
        }
    }
    Ok(w.into_inner()?)
}

/// `timeseries.csv`: one row per (policy, window, class); names as [`escape::csv_cell`]s
/// ([`pages::load_run`] reads them back).
pub fn timeseries_csv(rows: &[WindowRow]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        series::write_row(&mut w, r)?;
    }
    Ok(w.into_inner()?)
}

/// `report.md`: scenario, tables, verdict and expectations.
pub fn report_md(scenario: &Scenario, s: &ScenarioSummary, checked: &[Checked], charts: &[String]) -> String {
    let mut out = format!("# brownout report: {}\n\n", escape::md(&s.scenario));
    if !scenario.description.is_empty() {
        out.push_str(&format!("{}\n\n", escape::md_text(scenario.description.trim())));
    }
    out.push_str(&format!(
        "Seed {}, horizon {}, warm-up {}, {} gateway instance(s), {} worker slots and {} connections each; \
         {} measured seconds.\n\n",
        s.seed,
        scenario.horizon,
        scenario.warmup,
        scenario.fleet.instances,
        scenario.fleet.workers.slots,
        scenario.fleet.pool.max_connections,
        s.measured_s
    ));
    out.push_str(&format!("## Recommendation\n\n{}", report::decision::markdown(s)));
    if let Some(stack) = s.decision.as_ref().and_then(|d| d.recommended.as_ref()?.stack.as_ref()) {
        out.push_str(&format!("\nThe recommended stack, ready to paste:\n\n```ron\n{stack}\n```\n"));
    }
    out.push_str("\n## Comparison\n");
    if !s.phases.is_empty() {
        out.push_str(&format!("\n{}\n", escape::md(&report::table::phases_line(s))));
    }
    if let Some(note) = report::table::replications_note(s) {
        out.push_str(&format!("\n{note}\n"));
    }
    out.push_str(&report::table::markdown(s));
    out.push_str(&report::dependencies::markdown_with(s, Some(scenario)));
    out.push_str("\n## Verdict\n\n");
    out.push_str(&report::table::verdicts(s));
    let slo = report::slo::markdown(s);
    if !slo.is_empty() {
        out.push_str(&format!("\n## SLOs and error budgets\n\n{slo}"));
    }
    let recovery = report::recovery::markdown(s);
    if !recovery.is_empty() {
        out.push_str(&format!("\n## Recovery and backlog\n{recovery}"));
    }
    if !checked.is_empty() {
        out.push_str("\n## Expectations\n\n");
        for c in checked {
            out.push_str(&format!(
                "- {} {} (measured {})\n",
                if c.passed { "PASS" } else { "FAIL" },
                escape::md(&c.statement),
                c.measured()
            ));
        }
    }
    if !charts.is_empty() {
        out.push_str("\n## Charts\n\n");
        for c in charts {
            out.push_str(&format!("![{c}]({c})\n\n"));
        }
    }
    out
}
