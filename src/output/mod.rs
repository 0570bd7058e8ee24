//! Writing results: JSON, CSV and Markdown. Every file is written to a temporary name and
//! renamed into place, so a crash never leaves a half-written file that looks complete.

pub mod charts;
pub mod html;

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::metrics::WindowRow;
use crate::metrics::catalog;
use crate::metrics::summary::ScenarioSummary;
use crate::report;
use crate::report::expect::Checked;
use crate::scenario::Scenario;

/// Write `bytes` to `path` atomically (temporary file in the same folder, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes)?;
        f.sync_all().ok();
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// `summary.json`, pretty-printed with a trailing newline.
pub fn summary_json(s: &ScenarioSummary) -> Result<Vec<u8>> {
    let mut v = serde_json::to_vec_pretty(s)?;
    v.push(b'\n');
    Ok(v)
}

/// `summary.csv`: one row per (policy, class), a column per catalogue metric that has one
/// (empty where the run lacks the part, e.g. no breaker).
pub fn summary_csv(s: &ScenarioSummary) -> Result<Vec<u8>> {
    let cols: Vec<_> = catalog::CATALOG.iter().filter_map(|m| Some((m, m.csv?))).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["policy", "class"].into_iter().chain(cols.iter().map(|(_, name)| *name)))?;
    for r in &s.runs {
        for c in &r.classes {
            let values = cols.iter().map(|(m, _)| m.read(r, Some(c)).map_or(String::new(), |v| v.to_string()));
            w.write_record([r.policy.clone(), c.class.clone()].into_iter().chain(values))?;
        }
    }
    Ok(w.into_inner()?)
}

/// `timeseries.csv`: one row per (policy, window, class).
pub fn timeseries_csv(rows: &[WindowRow]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    Ok(w.into_inner()?)
}

/// `report.md`: scenario, tables, verdict and expectations.
pub fn report_md(scenario: &Scenario, s: &ScenarioSummary, checked: &[Checked], charts: &[String]) -> String {
    let mut out = format!("# brownout report: {}\n\n", s.scenario);
    if !scenario.description.is_empty() {
        out.push_str(&format!("{}\n\n", scenario.description.trim()));
    }
    out.push_str(&format!(
        "Seed {}, horizon {}, warm-up {}, {} gateway instance(s), {} worker slots and {} connections each; \
         {} measured seconds.\n\n## Comparison\n",
        s.seed,
        scenario.horizon,
        scenario.warmup,
        scenario.fleet.instances,
        scenario.fleet.workers.slots,
        scenario.fleet.pool.max_connections,
        s.measured_s
    ));
    out.push_str(&report::table::markdown(s));
    out.push_str("\n## Verdict\n\n");
    out.push_str(&report::table::verdict(s));
    if !checked.is_empty() {
        out.push_str("\n## Expectations\n\n");
        for c in checked {
            out.push_str(&format!(
                "- {} {} (measured {:.4})\n",
                if c.passed { "PASS" } else { "FAIL" },
                c.statement,
                c.actual
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
