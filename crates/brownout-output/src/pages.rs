//! A results folder's pictures and page: reading saved results back and writing the charts
//! and `report.html` next to them. Above both `charts` (which draws) and `html` (which lays
//! out the page), so neither names the other's caller.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::charts::{Rendered, render, run_charts, sweep};
use crate::metrics::WindowRow;
use crate::metrics::summary::ScenarioSummary;
use crate::report;
use crate::scenario::Scenario;
use crate::{html, interactive, read_regular, report_md, series, slo_alerts, write_atomic};

/// Write each chart as `charts/<stem>.png` and `.svg` under `dir`; returns the PNG paths
/// relative to `dir`, in order, for `report.md`.
pub(crate) fn write(dir: &Path, charts: &[Rendered]) -> Result<Vec<String>> {
    let mut paths = Vec::with_capacity(charts.len());
    for c in charts {
        let png = format!("charts/{}.png", c.stem);
        write_atomic(&dir.join(&png), &c.png)?;
        write_atomic(&dir.join(format!("charts/{}.svg", c.stem)), c.svg.as_bytes())?;
        paths.push(png);
    }
    Ok(paths)
}

/// Give charts whose stems coincide (classes `a b` and `A_B` both slug to `a_b`) distinct
/// stems `<stem>-2`, `-3`, ..., skipping any stem already taken, so no chart overwrites another.
pub(crate) fn unique_stems(charts: &mut [Rendered]) {
    let mut taken: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let all: std::collections::BTreeSet<String> = charts.iter().map(|c| c.stem.clone()).collect();
    for c in charts.iter_mut() {
        if !taken.contains(&c.stem) {
            taken.insert(c.stem.clone());
            continue;
        }
        let stem = (2..).map(|n| format!("{}-{n}", c.stem)).find(|s| !taken.contains(s) && !all.contains(s));
        c.stem = stem.unwrap_or_default();
        taken.insert(c.stem.clone());
    }
}

/// Read `DIR/summary.json` and `DIR/timeseries.csv` (no rows when the CSV is absent), the
/// rows streamed and coalesced as the charts draw them ([`series::read_series`]: every row as
/// saved unless the run has more than `MAX_CHART_WINDOWS` windows).
pub fn load_run(dir: &Path) -> Result<(ScenarioSummary, Vec<WindowRow>)> {
    let summary = load_summary(dir)?;
    let rows = load_series(dir, &summary)?.rows;
    Ok((summary, rows))
}

fn load_summary(dir: &Path) -> Result<ScenarioSummary> {
    let path = dir.join("summary.json");
    let text = read_regular(&path)?;
    let mut s: ScenarioSummary =
        serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))?;
    if let Some(r) = &mut s.replications {
        crate::report::replicate::sort_for_lookup(r);
    }
    Ok(s)
}

/// `DIR/timeseries.csv` as the charts draw it; no rows when the file is absent.
fn load_series(dir: &Path, summary: &ScenarioSummary) -> Result<series::Series> {
    let path = dir.join("timeseries.csv");
    if !path.exists() {
        return Ok(series::Series { rows: Vec::new(), factor: 1 });
    }
    series::read_series(&path, summary)
}

/// The run's charts from its (coalesced) series; `scenario` draws the graph's services.
fn series_charts(summary: &ScenarioSummary, s: &series::Series, scenario: Option<&Scenario>) -> Result<Vec<Rendered>> {
    run_charts(&series::charted(summary, s.factor), &s.rows, scenario)
}

/// The scenario saved beside the results (`scenario.ron`), when it is there and reads.
fn saved_scenario(dir: &Path) -> Option<Scenario> {
    read_regular(&dir.join("scenario.ron"))
        .ok()
        .and_then(|t| String::from_utf8(t).ok())
        .and_then(|t| crate::scenario::parse(&dir.join("scenario.ron"), &t).ok())
}

/// After a run whose `timeseries.csv` is already in `dir`: as [`write_run_with`], the series
/// read back from the file (streamed and coalesced, so memory does not grow with the horizon).
pub fn write_run_saved(dir: &Path, description: &str, summary: &ScenarioSummary, extra: String) -> Result<Vec<String>> {
    let s = load_series(dir, summary)?;
    let panels = slo_alerts::section(summary, &s.rows, s.factor) + &interactive::section(summary, &s.rows, s.factor);
    let charts = series_charts(summary, &s, saved_scenario(dir).as_ref())?;
    write_charts(dir, description, summary, charts, [panels, extra])
}

/// After a run: render its charts into `dir/charts/` and write `dir/report.html`.
/// Returns the PNG paths for `report.md`.
pub fn write_run(dir: &Path, description: &str, summary: &ScenarioSummary, rows: &[WindowRow]) -> Result<Vec<String>> {
    write_run_with(dir, description, summary, rows, String::new())
}

/// As [`write_run`], with `extra` (already-rendered HTML) after the charts.
pub fn write_run_with(
    dir: &Path,
    description: &str,
    summary: &ScenarioSummary,
    rows: &[WindowRow],
    extra: String,
) -> Result<Vec<String>> {
    let panels = slo_alerts::section(summary, rows, 1) + &interactive::section(summary, rows, 1);
    write_charts(dir, description, summary, run_charts(summary, rows, None)?, [panels, extra])
}

/// Write `charts` and `report.html` (the interactive panels before the charts, `extra` after
/// them); the PNG paths.
fn write_charts(
    dir: &Path,
    description: &str,
    summary: &ScenarioSummary,
    mut charts: Vec<Rendered>,
    [panels, extra]: [String; 2],
) -> Result<Vec<String>> {
    unique_stems(&mut charts);
    let paths = write(dir, &charts)?;
    let sections = [html::run_section(description, summary), panels, html::charts_section(&charts), extra];
    let page = html::page(&format!("brownout report: {}", summary.scenario), &sections);
    write_atomic(&dir.join("report.html"), page.as_bytes())?;
    Ok(paths)
}

/// `brownout plot DIR`: re-render every chart from the saved results (a run's
/// `summary.json` + `timeseries.csv`, a sweep's `sweep.json`, or both) and rewrite
/// `report.html`; `report.md` too when `scenario.ron` is there to rebuild it from.
/// Returns the chart paths written.
pub fn plot_dir(dir: &Path) -> Result<Vec<String>> {
    let has_run = dir.join("summary.json").exists();
    let has_sweep = dir.join("sweep.json").exists();
    if !has_run && !has_sweep {
        bail!("{}: no summary.json or sweep.json to plot", dir.display());
    }
    let mut sections = Vec::new();
    let mut charts = Vec::new();
    let mut title = String::from("brownout report");
    if has_run {
        let summary = load_summary(dir)?;
        let rows = load_series(dir, &summary)?;
        // The saved scenario gives the description, the expectations and the graph's
        // services; it is optional.
        let scenario = saved_scenario(dir);
        let description = scenario.as_ref().map_or("", |s| s.description.as_str());
        sections.push(html::run_section(description, &summary));
        sections.push(slo_alerts::section(&summary, &rows.rows, rows.factor));
        sections.push(interactive::section(&summary, &rows.rows, rows.factor));
        charts.extend(series_charts(&summary, &rows, scenario.as_ref())?);
        unique_stems(&mut charts);
        title = format!("brownout report: {}", summary.scenario);
        if let Some(s) = &scenario {
            let checked = report::expect::check(&summary, &s.expect);
            let paths: Vec<String> = charts.iter().map(|c| format!("charts/{}.png", c.stem)).collect();
            write_atomic(&dir.join("report.md"), report_md(s, &summary, &checked, &paths).as_bytes())?;
        }
    }
    if has_sweep {
        let sw = sweep::load(dir)?;
        // The sweep's recommendation goes first: it is what the reader came for.
        let rec = read_regular(&dir.join("recommendation.json")).ok();
        if let Some(s) = rec.as_deref().and_then(crate::recommend_html::section) {
            sections.insert(0, s);
        }
        let targets = rec
            .and_then(|j| serde_json::from_slice::<brownout_core::decide::recommendation::Recommendation>(&j).ok())
            .map(|r| r.constraints)
            .unwrap_or_default();
        sections.push(html::sweep_section(&sw));
        let sweep_charts: Vec<Rendered> =
            sweep::charts_with(&sw, &targets).iter().map(render).collect::<Result<_>>()?;
        charts.extend(sweep_charts);
        unique_stems(&mut charts);
        if !has_run {
            title = format!("brownout sweep: {}", sw.sweep);
        }
    }
    let paths = write(dir, &charts)?;
    sections.push(html::charts_section(&charts));
    write_atomic(&dir.join("report.html"), html::page(&title, &sections).as_bytes())?;
    Ok(paths)
}
