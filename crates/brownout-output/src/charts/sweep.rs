//! Sweep charts from `sweep.json`: a metric against one axis with confidence bands, heatmaps
//! over two axes, and the best setting per policy.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::style::{PolicyColors, Unit, fmt_num};
use super::{
    Bar, BarPanel, BarPanels, Chart, HeatPanel, HeatPanels, Kind, LinePanel, LinePanels, Series, policy_legend, slug,
};
use crate::metrics::catalog::{self, Direction};

/// The saved result of a sweep (`sweep.json`), as the sweep command writes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepResult {
    /// Sweep name.
    pub sweep: String,
    /// The base scenario's name.
    pub base: String,
    /// Root seed.
    pub seed: u64,
    /// Replications per point.
    pub replications: u32,
    /// The swept parameters.
    pub axes: Vec<SweepAxis>,
    /// Every policy set of the base scenario, in scenario order (the sweep may run only some):
    /// the roster whose names choose the charts' colours. Absent from older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenario_policies: Vec<String>,
    /// One row per (point, policy).
    pub rows: Vec<SweepRow>,
}

/// One swept parameter.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepAxis {
    /// Short name.
    pub name: String,
    /// Where it lives in the scenario.
    pub path: String,
    /// Values tried, in order.
    pub values: Vec<f64>,
}

/// One (point, policy) result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepRow {
    /// Point index.
    pub point: usize,
    /// Axis name to value.
    pub params: BTreeMap<String, f64>,
    /// Policy label.
    pub policy: String,
    /// Replications behind the estimates.
    pub replications: u32,
    /// `class/metric` or run-level metric name to its estimate.
    pub metrics: BTreeMap<String, Estimate>,
}

/// A mean with its confidence interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// Mean over replications.
    pub mean: f64,
    /// Interval low end.
    pub ci_lo: f64,
    /// Interval high end.
    pub ci_hi: f64,
}

/// Read `DIR/sweep.json`.
pub fn load(dir: &Path) -> Result<SweepResult> {
    let path = dir.join("sweep.json");
    let text = crate::read_regular(&path)?;
    serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Which way `metric` (a sweep's `class/metric` or run-level name) improves, as the
/// catalogue declares it; `Neither` for a name the catalogue lacks.
pub fn direction(metric: &str) -> Direction {
    catalog::by_path(metric).map_or(Direction::Neither, |m| m.direction)
}

/// "higher is better", "lower is better" or "neither is better" for `metric`.
fn better(metric: &str) -> &'static str {
    match direction(metric) {
        Direction::Higher => "higher is better",
        Direction::Lower => "lower is better",
        Direction::Neither => "neither is better",
    }
}

/// The tick format of `metric`'s catalogue unit (plain for a name the catalogue lacks).
pub fn unit_of(metric: &str) -> Unit {
    match catalog::by_path(metric).map(|m| m.unit) {
        Some(catalog::Unit::Ms) => Unit::Ms,
        Some(catalog::Unit::PerS) => Unit::PerS,
        Some(catalog::Unit::Fraction) => Unit::Fraction,
        _ => Unit::Plain,
    }
}

/// The name of `metric`'s catalogue unit in notes and colour bars ("ms", "/s", "%",
/// "count", ...); "value" for a plain number or a name the catalogue lacks.
pub fn unit_name(metric: &str) -> &'static str {
    match catalog::by_path(metric).map(|m| m.unit) {
        Some(catalog::Unit::Ms) => "ms",
        Some(catalog::Unit::PerS) => "/s",
        Some(catalog::Unit::PerMin) => "/min",
        Some(catalog::Unit::Fraction) => "%",
        Some(catalog::Unit::Count) => "count",
        Some(catalog::Unit::Cost) => "cost units",
        _ => "value",
    }
}

/// Policies in order of first appearance.
pub fn policies(s: &SweepResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &s.rows {
        if !out.contains(&r.policy) {
            out.push(r.policy.clone());
        }
    }
    out
}

/// The policies' colours: by name among the base scenario's policy sets (among the policies
/// run, for a file that does not list them).
pub fn colors(s: &SweepResult) -> PolicyColors {
    if s.scenario_policies.is_empty() {
        PolicyColors::new(policies(s))
    } else {
        PolicyColors::new(&s.scenario_policies)
    }
}

/// Metric names, sorted.
pub fn metrics(s: &SweepResult) -> Vec<String> {
    let set: BTreeSet<&String> = s.rows.iter().flat_map(|r| r.metrics.keys()).collect();
    set.into_iter().cloned().collect()
}

/// The row of `policy` with the best mean of `metric` (first one on ties); none for a metric
/// with no better direction.
pub fn best<'a>(s: &'a SweepResult, policy: &str, metric: &str) -> Option<&'a SweepRow> {
    let up = match direction(metric) {
        Direction::Higher => true,
        Direction::Lower => false,
        Direction::Neither => return None,
    };
    let mut found: Option<(&SweepRow, f64)> = None;
    for r in s.rows.iter().filter(|r| r.policy == policy) {
        let Some(e) = r.metrics.get(metric) else {
            continue;
        };
        let better = match found {
            None => true,
            Some((_, b)) => (up && e.mean > b) || (!up && e.mean < b),
        };
        if better {
            found = Some((r, e.mean));
        }
    }
    found.map(|(r, _)| r)
}

/// "axis=value, axis=value" in axis order.
pub fn setting(s: &SweepResult, r: &SweepRow) -> String {
    s.axes
        .iter()
        .filter_map(|a| r.params.get(&a.name).map(|v| format!("{}={}", a.name, fmt_num(*v))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every sweep chart: per metric a line chart (one axis) or heatmap (two axes), then the
/// best-setting chart.
pub fn charts(s: &SweepResult) -> Vec<Chart> {
    let names = metrics(s);
    let mut out: Vec<Chart> = match s.axes.len() {
        1 => names.iter().map(|m| against_axis(s, m)).collect(),
        2 => names.iter().map(|m| heatmap(s, m)).collect(),
        _ => Vec::new(),
    };
    let ranked: Vec<String> = names.into_iter().filter(|m| direction(m) != Direction::Neither).collect();
    if !ranked.is_empty() {
        out.push(best_chart(s, &ranked));
    }
    out
}

fn against_axis(s: &SweepResult, metric: &str) -> Chart {
    let axis = &s.axes[0];
    let pols = policies(s);
    let colors = colors(s);
    let series = pols
        .iter()
        .map(|p| {
            let mut pts: Vec<(f64, Estimate)> = s
                .rows
                .iter()
                .filter(|r| &r.policy == p)
                .filter_map(|r| Some((*r.params.get(&axis.name)?, *r.metrics.get(metric)?)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let best = best(s, p, metric).and_then(|r| Some((*r.params.get(&axis.name)?, r.metrics.get(metric)?.mean)));
            Series {
                color: colors.of(p),
                dashed: false,
                segments: vec![pts.iter().map(|(x, e)| (*x, e.mean)).collect()],
                band: pts.iter().map(|(x, e)| (*x, e.ci_lo, e.ci_hi)).collect(),
                dots: true,
                best,
            }
        })
        .collect();
    let lo = axis.values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = axis.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pad = if hi > lo { (hi - lo) * 0.04 } else { 1.0 };
    let panel = LinePanel {
        title: format!("{metric} against {}", axis.name),
        y_label: metric.to_string(),
        unit: unit_of(metric),
        series,
        hlines: Vec::new(),
    };
    let lines = LinePanels {
        x_label: format!("{} ({})", axis.name, axis.path),
        x_unit: Unit::Plain,
        x_range: if lo.is_finite() { (lo - pad, hi + pad) } else { (0.0, 1.0) },
        shade: Vec::new(),
        panels: vec![panel],
    };
    Chart {
        stem: format!("sweep_{}", slug(metric)),
        title: format!("{}: {metric}", s.sweep),
        note: format!(
            "mean of {} replications, shaded = confidence interval, {}",
            s.replications,
            if direction(metric) == Direction::Neither {
                "no best setting (neither is better)".to_string()
            } else {
                format!("ring = best setting ({})", better(metric))
            }
        ),
        width: 1100,
        height: 520,
        legend: policy_legend(&pols, &colors),
        kind: Kind::Lines(lines),
    }
}

fn heatmap(s: &SweepResult, metric: &str) -> Chart {
    let (ax, ay) = (&s.axes[0], &s.axes[1]);
    let pols = policies(s);
    let colors = colors(s);
    let mut scale = (f64::INFINITY, f64::NEG_INFINITY);
    let panels: Vec<HeatPanel> = pols
        .iter()
        .map(|p| {
            let cells: Vec<Vec<Option<f64>>> = ax
                .values
                .iter()
                .map(|&x| {
                    ay.values
                        .iter()
                        .map(|&y| {
                            let v = cell(s, p, metric, (&ax.name, x), (&ay.name, y))?;
                            scale = (scale.0.min(v), scale.1.max(v));
                            Some(v)
                        })
                        .collect()
                })
                .collect();
            let best = best(s, p, metric).and_then(|r| {
                let bx = r.params.get(&ax.name)?;
                let by = r.params.get(&ay.name)?;
                Some((ax.values.iter().position(|v| v == bx)?, ay.values.iter().position(|v| v == by)?))
            });
            HeatPanel { title: p.clone(), color: colors.of(p), cells, best }
        })
        .collect();
    let columns = panels.len().clamp(1, 2);
    let rows = panels.len().div_ceil(columns).max(1) as u32;
    Chart {
        stem: format!("heatmap_{}", slug(metric)),
        title: format!("{}: {metric}", s.sweep),
        note: format!(
            "mean of {} replications; colour = {metric} in {}{}, brighter = higher ({}){}",
            s.replications,
            unit_name(metric),
            if scale.0 <= scale.1 {
                format!(" from {} to {}", unit_of(metric).fmt(scale.0), unit_of(metric).fmt(scale.1))
            } else {
                String::new()
            },
            better(metric),
            if direction(metric) == Direction::Neither { "" } else { "; red outline = best cell per policy" }
        ),
        width: 1100,
        height: 80 + rows * 420,
        legend: Vec::new(),
        kind: Kind::Heatmap(HeatPanels {
            x_label: ax.name.clone(),
            y_label: ay.name.clone(),
            x_ticks: ax.values.iter().map(|v| fmt_num(*v)).collect(),
            y_ticks: ay.values.iter().map(|v| fmt_num(*v)).collect(),
            unit: unit_of(metric),
            scale,
            bar_title: unit_name(metric).to_string(),
            columns,
            panels,
        }),
    }
}

fn cell(s: &SweepResult, policy: &str, metric: &str, x: (&str, f64), y: (&str, f64)) -> Option<f64> {
    s.rows
        .iter()
        .find(|r| r.policy == policy && r.params.get(x.0) == Some(&x.1) && r.params.get(y.0) == Some(&y.1))
        .and_then(|r| r.metrics.get(metric))
        .map(|e| e.mean)
}

fn best_chart(s: &SweepResult, names: &[String]) -> Chart {
    let pols = policies(s);
    let colors = colors(s);
    let panels: Vec<BarPanel> = names
        .iter()
        .map(|m| BarPanel {
            title: format!("{m} ({})", better(m)),
            unit: unit_of(m),
            bars: pols
                .iter()
                .filter_map(|p| {
                    let r = best(s, p, m)?;
                    let e = r.metrics.get(m)?;
                    Some(Bar {
                        label: p.clone(),
                        color: colors.of(p),
                        value: e.mean,
                        ci: Some((e.ci_lo, e.ci_hi)),
                        note: format!(" at {}", setting(s, r)),
                    })
                })
                .collect(),
        })
        .collect();
    let rows = panels.len().div_ceil(2) as u32;
    Chart {
        stem: "sweep_best".into(),
        title: format!("{}: best setting per policy", s.sweep),
        note: "bar = best mean over the sweep, whisker = its confidence interval, text = the setting".into(),
        width: 1100,
        height: 100 + rows * (70 + 30 * pols.len() as u32),
        legend: policy_legend(&pols, &colors),
        kind: Kind::Bars(BarPanels { columns: 2, panels }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One policy over one axis with `metric` at `values`.
    fn sweep(metric: &str, values: &[f64]) -> SweepResult {
        let rows = values
            .iter()
            .enumerate()
            .map(|(i, &v)| SweepRow {
                point: i,
                params: BTreeMap::from([("x".to_string(), i as f64)]),
                policy: "p".into(),
                replications: 1,
                metrics: BTreeMap::from([(metric.to_string(), Estimate { mean: v, ci_lo: v, ci_hi: v })]),
            })
            .collect();
        let axes = vec![SweepAxis {
            name: "x".into(),
            path: "x".into(),
            values: (0..values.len()).map(|i| i as f64).collect(),
        }];
        SweepResult {
            sweep: "s".into(),
            base: "b".into(),
            seed: 1,
            replications: 1,
            axes,
            scenario_policies: Vec::new(),
            rows,
        }
    }

    #[test]
    fn an_even_load_on_the_dependency_ranks_best() {
        // The name contains "throughput", yet lower (an even load) is better: the direction
        // comes from the catalogue, never from the name (issue 15 defect 4).
        let s = sweep("dependency_throughput_cv", &[0.3, 0.1, 0.2]);
        assert_eq!(setting(&s, best(&s, "p", "dependency_throughput_cv").unwrap()), "x=1");
    }

    #[test]
    fn a_metric_with_no_better_direction_has_no_best_setting() {
        // Requests finished per second, failures included: set by the traffic.
        let s = sweep("c/throughput_per_s", &[10.0, 30.0, 20.0]);
        assert!(best(&s, "p", "c/throughput_per_s").is_none());
        let list = charts(&s);
        assert!(list.iter().all(|c| c.stem != "sweep_best"), "nothing to rank");
        assert!(list[0].note.contains("no best setting"), "{}", list[0].note);
    }
}
