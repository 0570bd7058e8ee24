//! Sweep charts from `sweep.json`: a metric against one axis with confidence bands, heatmaps
//! over two axes, and the best setting per policy.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::style::{PolicyColors, Unit, fmt_num, fmt_setting};
use super::{
    Bar, BarPanel, BarPanels, Chart, Edge, HLine, HeatPanel, HeatPanels, Kind, LinePanel, LinePanels, Series, TARGET,
    policy_legend, slug,
};
use crate::metrics::catalog::{self, Direction};
use crate::sweep::grid::Role;
use brownout_core::decide::recommendation::ConstraintOut;
use brownout_core::sweep::best::BestSet;

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
    /// The best settings per metric, policy and condition, ties decided at sweep time by the
    /// replications paired by seed (`sweep::best`). Absent from files written before it: the
    /// charts then tie only equal means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<Vec<BestSet>>,
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
    /// The role written in the spec; without one, a decision for a path under `policies`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// The unit of `values` on a duration parameter (`ms`, `s`, ...); `None` for a plain
    /// number, and in files written before axes carried their unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl SweepAxis {
    /// A decision (a knob the user sets), not a condition (the environment).
    pub fn is_decision(&self) -> bool {
        self.role.unwrap_or_else(|| Role::default_for(&self.path)) == Role::Decision
    }

    /// The axis's title on a chart: its name, and its unit where it has one ("timeout (ms)").
    pub fn title(&self) -> String {
        match &self.unit {
            Some(u) => format!("{} ({u})", self.name),
            None => self.name.clone(),
        }
    }
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

/// A mean with its confidence interval. A figure without a value (no replication defined
/// it; an interval from fewer than two) is NaN, written `null`, and read back as NaN.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// Mean over replications.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// Interval low end.
    #[serde(deserialize_with = "nan_if_null")]
    pub ci_lo: f64,
    /// Interval high end.
    #[serde(deserialize_with = "nan_if_null")]
    pub ci_hi: f64,
}

impl Estimate {
    /// The interval, when it is known.
    pub fn ci(&self) -> Option<(f64, f64)> {
        (self.ci_lo.is_finite() && self.ci_hi.is_finite()).then_some((self.ci_lo, self.ci_hi))
    }
}

/// A number that JSON holds as `null` when it has no value (serde_json writes NaN so).
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
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

/// The best settings of one policy in one condition.
#[derive(Debug, Clone)]
pub struct Best<'a> {
    /// The condition axes' values (`axis=value, ...`); empty without condition axes.
    pub condition: String,
    /// The row with the best mean.
    pub top: &'a SweepRow,
    /// Every row tied for best, the best included, in point order (see [`tie_rule`]).
    pub rows: Vec<&'a SweepRow>,
}

/// Per condition (the values of the condition axes), the rows of `policy` tied for the best
/// mean of `metric` over the decision axes, as `sweep.json`'s `best` list gives them (ties by
/// paired intervals); for a file without the list, the rows whose mean equals the best.
/// Empty for a metric with no better direction, or a sweep with no decision axis (a
/// condition is never a setting to choose).
pub fn best<'a>(s: &'a SweepResult, policy: &str, metric: &str) -> Vec<Best<'a>> {
    let Some(sets) = &s.best else { return best_by_equal_means(s, policy, metric) };
    sets.iter()
        .filter(|b| b.policy == policy && b.metric == metric)
        .filter_map(|b| {
            // Indices from a file: one that points nowhere drops the set rather than panicking.
            let top = s.rows.get(b.best_row)?;
            let rows = b.tied_rows.iter().map(|&i| s.rows.get(i)).collect::<Option<Vec<_>>>()?;
            Some(Best { condition: axes_text(s, top, false), top, rows })
        })
        .collect()
}

/// How the best settings' ties were decided, for the notes and the report: "tied: paired
/// 95 % interval reaches inside the metric's margin, N replications", or equal means for a
/// `sweep.json` written before the paired ties.
pub fn tie_rule(s: &SweepResult) -> String {
    match s.best {
        Some(_) if s.replications < 2 => {
            "one replication: no interval, so no setting is shown to differ (every one ties with the best)".into()
        }
        Some(_) => {
            format!(
                "tied: {}, a difference within the metric's margin, {} replications",
                crate::sweep::stats::RULE,
                s.replications
            )
        }
        None => "tied: equal means (a sweep.json from before ties were judged by seed)".to_string(),
    }
}

/// [`best`] for a `sweep.json` without the `best` list: only equal means tie, as the
/// per-replication values it would take to pair them are not in the file.
fn best_by_equal_means<'a>(s: &'a SweepResult, policy: &str, metric: &str) -> Vec<Best<'a>> {
    let up = match direction(metric) {
        Direction::Higher => true,
        Direction::Lower => false,
        Direction::Neither => return Vec::new(),
    };
    if !s.axes.iter().any(SweepAxis::is_decision) {
        return Vec::new();
    }
    let mut out: Vec<(Best, f64)> = Vec::new();
    for r in s.rows.iter().filter(|r| r.policy == policy) {
        let Some(e) = r.metrics.get(metric).filter(|e| !e.mean.is_nan()) else {
            continue;
        };
        let condition = axes_text(s, r, false);
        let Some(at) = out.iter().position(|(b, _)| b.condition == condition) else {
            out.push((Best { condition, top: r, rows: vec![r] }, e.mean));
            continue;
        };
        let (group, top) = &mut out[at];
        if e.mean == *top {
            group.rows.push(r);
        } else if (up && e.mean > *top) || (!up && e.mean < *top) {
            (group.top, group.rows, *top) = (r, vec![r], e.mean);
        }
    }
    out.into_iter().map(|(b, _)| b).collect()
}

/// "axis=value, axis=value" over the decision axes (`decision`) or the condition axes.
fn axes_text(s: &SweepResult, r: &SweepRow, decision: bool) -> String {
    s.axes
        .iter()
        .filter(|a| a.is_decision() == decision)
        .filter_map(|a| r.params.get(&a.name).map(|v| format!("{}={}", a.name, fmt_setting(*v))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The decision setting of `r`: "axis=value, axis=value" over the decision axes.
pub fn decision_setting(s: &SweepResult, r: &SweepRow) -> String {
    axes_text(s, r, true)
}

/// The tied best settings, joined: "a=1 | a=2".
pub fn settings_text(s: &SweepResult, b: &Best) -> String {
    b.rows.iter().map(|r| decision_setting(s, r)).collect::<Vec<_>>().join(" | ")
}

/// Every sweep chart: per metric a line chart (one axis) or heatmap (two axes), then the
/// best-setting chart.
#[allow(dead_code)] // the tests' entry, and any caller without a recommendation
pub fn charts(s: &SweepResult) -> Vec<Chart> {
    charts_with(s, &[])
}

/// [`charts`], with the constraints of the sweep's `decide` section drawn as target lines on
/// the charts of their metrics.
pub fn charts_with(s: &SweepResult, targets: &[ConstraintOut]) -> Vec<Chart> {
    let names = metrics(s);
    let mut out: Vec<Chart> = match s.axes.len() {
        1 => names.iter().map(|m| against_axis(s, m, targets)).collect(),
        2 => names.iter().map(|m| heatmap(s, m, targets)).collect(),
        _ => Vec::new(),
    };
    let pols = policies(s);
    let ranked: Vec<String> = names.into_iter().filter(|m| pols.iter().any(|p| !best(s, p, m).is_empty())).collect();
    if !ranked.is_empty() {
        out.push(best_chart(s, &ranked, targets));
    }
    out
}

/// "≥" for `>=` and so on.
fn op_sign(op: &str) -> &str {
    match op {
        ">=" => "≥",
        "<=" => "≤",
        other => other,
    }
}

/// The target line of the constraints on `metric` (a sweep's or a run's metric path).
pub(crate) fn targets_of(targets: &[ConstraintOut], metric: &str, unit: Unit) -> Vec<HLine> {
    targets
        .iter()
        .filter(|c| c.metric == metric)
        .map(|c| HLine { y: c.value, label: format!("target {} {}", op_sign(&c.op), unit.fmt(c.value)), color: TARGET })
        .collect()
}

/// Whether `v` meets the constraint `op value` (`op` as [`ConstraintOut`] writes it); `None`
/// for an operator this chart does not know. The heatmap judges the cell's mean, as it shows.
fn meets(op: &str, value: f64, v: f64) -> Option<bool> {
    Some(match op {
        ">=" => v >= value,
        ">" => v > value,
        "<=" => v <= value,
        "<" => v < value,
        "==" => (v - value).abs() <= 1e-9,
        _ => return None,
    })
}

/// The cell edges between horizontally or vertically adjacent cells of which one meets a
/// constraint and the other does not; an empty cell (no row) does neither, so it has no edge.
/// `cells[x][y]` as in [`HeatPanel::cells`]; edges in order, each once.
pub(crate) fn target_edges(cells: &[Vec<Option<f64>>], constraints: &[&ConstraintOut]) -> Vec<Edge> {
    let mut out = Vec::new();
    for c in constraints {
        let ok = |i: usize, j: usize| -> Option<bool> {
            let v = (*cells.get(i)?.get(j)?)?;
            meets(&c.op, c.value, v)
        };
        for (i, col) in cells.iter().enumerate() {
            for j in 0..col.len() {
                let Some(here) = ok(i, j) else { continue };
                // The right neighbour shares the vertical edge at x = i + 1.
                if ok(i + 1, j).is_some_and(|r| r != here) {
                    out.push(((i + 1, j), (i + 1, j + 1)));
                }
                // The neighbour above shares the horizontal edge at y = j + 1.
                if ok(i, j + 1).is_some_and(|u| u != here) {
                    out.push(((i, j + 1), (i + 1, j + 1)));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Why a sweep has no best setting for `metric`, or what the ring marks.
fn best_note(s: &SweepResult, metric: &str) -> String {
    if direction(metric) == Direction::Neither {
        "no best setting (neither is better)".to_string()
    } else if !s.axes.iter().any(SweepAxis::is_decision) {
        "no best setting: every axis is a condition (see the recommendation)".to_string()
    } else {
        format!("ring = best setting ({}; ties all ringed)", better(metric))
    }
}

fn against_axis(s: &SweepResult, metric: &str, targets: &[ConstraintOut]) -> Chart {
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
            let best = best(s, p, metric)
                .iter()
                .flat_map(|b| b.rows.iter())
                .filter_map(|r| Some((*r.params.get(&axis.name)?, r.metrics.get(metric)?.mean)))
                .collect();
            Series {
                color: colors.of(p),
                dashed: false,
                segments: vec![pts.iter().map(|(x, e)| (*x, e.mean)).collect()],
                band: pts.iter().filter_map(|(x, e)| e.ci().map(|(lo, hi)| (*x, lo, hi))).collect(),
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
        hlines: targets_of(targets, metric, unit_of(metric)),
    };
    let lines = LinePanels {
        x_label: format!("{} — {}", axis.title(), axis.path),
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
            best_note(s, metric)
        ),
        width: 1100,
        height: 520,
        legend: policy_legend(&pols, &colors),
        kind: Kind::Lines(lines),
    }
}

fn heatmap(s: &SweepResult, metric: &str, targets: &[ConstraintOut]) -> Chart {
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
            let best = best(s, p, metric)
                .iter()
                .flat_map(|b| b.rows.iter())
                .filter_map(|r| {
                    let bx = r.params.get(&ax.name)?;
                    let by = r.params.get(&ay.name)?;
                    Some((ax.values.iter().position(|v| v == bx)?, ay.values.iter().position(|v| v == by)?))
                })
                .collect();
            let constraints: Vec<&ConstraintOut> = targets.iter().filter(|c| c.metric == metric).collect();
            let target_edges = target_edges(&cells, &constraints);
            HeatPanel { title: p.clone(), color: colors.of(p), cells, best, target_edges }
        })
        .collect();
    let columns = panels.len().clamp(1, 2);
    let rows = panels.len().div_ceil(columns).max(1) as u32;
    Chart {
        stem: format!("heatmap_{}", slug(metric)),
        title: format!("{}: {metric}", s.sweep),
        note: format!(
            "mean of {} replications; colour = {metric} in {}{}, brighter = higher ({}){}{}",
            s.replications,
            unit_name(metric),
            if scale.0 <= scale.1 {
                format!(" from {} to {}", unit_of(metric).fmt(scale.0), unit_of(metric).fmt(scale.1))
            } else {
                String::new()
            },
            better(metric),
            if pols.iter().any(|p| !best(s, p, metric).is_empty()) {
                "; red outline = best cells per policy (and condition), ties all outlined"
            } else {
                ""
            },
            targets_of(targets, metric, unit_of(metric))
                .iter()
                .map(|t| format!("; dashed line = {} (it parts the cells whose mean meets it from the rest)", t.label))
                .collect::<String>()
        ),
        width: 1100,
        height: 80 + rows * 420,
        legend: Vec::new(),
        kind: Kind::Heatmap(HeatPanels {
            x_label: ax.title(),
            y_label: ay.title(),
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

fn best_chart(s: &SweepResult, names: &[String], targets: &[ConstraintOut]) -> Chart {
    let pols = policies(s);
    let colors = colors(s);
    let panels: Vec<BarPanel> = names
        .iter()
        .map(|m| BarPanel {
            title: format!("{m} ({})", better(m)),
            unit: unit_of(m),
            bars: pols
                .iter()
                .flat_map(|p| {
                    let colors = &colors;
                    best(s, p, m).into_iter().filter_map(move |b| {
                        let e = b.top.metrics.get(m)?;
                        let tie = if b.rows.len() > 1 { " (tie)" } else { "" };
                        Some(Bar {
                            label: if b.condition.is_empty() { p.clone() } else { format!("{p} @ {}", b.condition) },
                            color: colors.of(p),
                            value: e.mean,
                            ci: e.ci(),
                            note: format!(" at {}{tie}", settings_text(s, &b)),
                        })
                    })
                })
                .collect(),
            targets: targets_of(targets, m, unit_of(m)),
        })
        .collect();
    let rows = panels.len().div_ceil(2) as u32;
    let bars = panels.iter().map(|p| p.bars.len()).max().unwrap_or(1) as u32;
    let conditions = s.axes.iter().any(|a| !a.is_decision());
    Chart {
        stem: "sweep_best".into(),
        title: format!("{}: best setting per policy", s.sweep),
        note: format!(
            "bar = best mean over the decision axes{}, whisker = its confidence interval, text = the setting (ties all listed; {})",
            if conditions { " per condition (across conditions: see the recommendation)" } else { "" },
            tie_rule(s)
        ),
        width: 1100,
        height: 100 + rows * (70 + 30 * bars),
        legend: policy_legend(&pols, &colors),
        kind: Kind::Bars(BarPanels { columns: 2, panels }),
    }
}

/// A constraint `metric >= value` judged on one replication (untested), for chart tests.
#[cfg(test)]
pub(crate) fn target_at_least(metric: &str, value: f64) -> ConstraintOut {
    ConstraintOut {
        metric: metric.into(),
        op: ">=".into(),
        value,
        n: 1,
        mean: value,
        lo: value,
        hi: value,
        verdict: crate::metrics::decision::Verdict::Holds,
        margin: 0.0,
        untested: true,
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
            path: "policies.0.stack.0.timeout".into(),
            values: (0..values.len()).map(|i| i as f64).collect(),
            role: None,
            unit: None,
        }];
        SweepResult {
            sweep: "s".into(),
            base: "b".into(),
            seed: 1,
            replications: 1,
            axes,
            scenario_policies: Vec::new(),
            rows,
            best: None,
        }
    }

    #[test]
    fn an_even_load_on_the_dependency_ranks_best() {
        // The name contains "throughput", yet lower (an even load) is better: the direction
        // comes from the catalogue, never from the name (issue 15 defect 4).
        let s = sweep("dependency_throughput_cv", &[0.3, 0.1, 0.2]);
        let b = best(&s, "p", "dependency_throughput_cv");
        assert_eq!(b.len(), 1);
        assert_eq!(settings_text(&s, &b[0]), "x=1");
    }

    #[test]
    fn a_metric_with_no_better_direction_has_no_best_setting() {
        // Requests finished per second, failures included: set by the traffic.
        let s = sweep("c/throughput_per_s", &[10.0, 30.0, 20.0]);
        assert!(best(&s, "p", "c/throughput_per_s").is_empty());
        let list = charts(&s);
        assert!(list.iter().all(|c| c.stem != "sweep_best"), "nothing to rank");
        assert!(list[0].note.contains("no best setting"), "{}", list[0].note);
    }

    #[test]
    fn settings_with_identical_results_all_rank_best() {
        // x=0 and x=2 give the same goodput: both are best, neither is "the first one".
        let s = sweep("c/goodput_per_s", &[7.0, 3.0, 7.0]);
        let b = best(&s, "p", "c/goodput_per_s");
        assert_eq!(b.len(), 1);
        assert_eq!(settings_text(&s, &b[0]), "x=0 | x=2");
        let list = charts(&s);
        let chart = list.iter().find(|c| c.stem == "sweep_best").expect("a best chart");
        let Kind::Bars(bars) = &chart.kind else { panic!("bars") };
        assert!(bars.panels[0].bars[0].note.contains("x=0 | x=2 (tie)"), "{:?}", bars.panels[0].bars[0]);
        let Kind::Lines(l) = &list[0].kind else { panic!("lines") };
        assert_eq!(l.panels[0].series[0].best, vec![(0.0, 7.0), (2.0, 7.0)]);
    }

    #[test]
    fn a_condition_axis_is_never_offered_as_the_best_setting() {
        // One condition axis alone: nothing to choose.
        let mut s = sweep("c/goodput_per_s", &[7.0, 3.0, 5.0]);
        s.axes[0].path = "dependency.drift".into();
        assert!(best(&s, "p", "c/goodput_per_s").is_empty());
        assert!(charts(&s).iter().all(|c| c.stem != "sweep_best"));
        // A decision axis `d` and a condition axis `depth` (written as one, though under
        // `policies`): the best `d` per depth, and the setting names `d` only.
        let row = |point: usize, d: f64, depth: f64, v: f64| SweepRow {
            point,
            params: BTreeMap::from([("d".to_string(), d), ("depth".to_string(), depth)]),
            policy: "p".into(),
            replications: 1,
            metrics: BTreeMap::from([("c/goodput_per_s".to_string(), Estimate { mean: v, ci_lo: v, ci_hi: v })]),
        };
        let axis = |name: &str, role| SweepAxis {
            name: name.into(),
            path: format!("policies.0.stack.0.{name}"),
            values: vec![1.0, 2.0],
            role,
            unit: None,
        };
        s.axes = vec![axis("d", None), axis("depth", Some(Role::Condition))];
        // depth 1: d=2 best (9 > 4); depth 2: d=1 best (8 > 6).
        s.rows = vec![row(0, 1.0, 1.0, 4.0), row(1, 1.0, 2.0, 8.0), row(2, 2.0, 1.0, 9.0), row(3, 2.0, 2.0, 6.0)];
        let b = best(&s, "p", "c/goodput_per_s");
        let got: Vec<(String, String)> = b.iter().map(|b| (b.condition.clone(), settings_text(&s, b))).collect();
        assert_eq!(got, vec![("depth=1".to_string(), "d=2".to_string()), ("depth=2".to_string(), "d=1".to_string())]);
        let html = crate::html::sweep_section(&s);
        assert!(html.contains("<td>depth=1</td><td>9</td><td>9 .. 9</td><td>d=2</td>"), "{html}");
    }

    /// The best bar chart's panel for the first metric, and the chart's note.
    fn best_bars(s: &SweepResult) -> (Vec<Bar>, String) {
        let list = charts(s);
        let chart = list.into_iter().find(|c| c.stem == "sweep_best").expect("a best chart");
        let Kind::Bars(bars) = chart.kind else { panic!("bars") };
        (bars.panels[0].bars.clone(), chart.note)
    }

    #[test]
    fn ties_come_from_the_sweeps_paired_comparison() {
        // Goodput 9, 8, 3 over three replications. Means alone make x=0 the one best; the
        // sweep's paired intervals (sweep::best, at sweep time) found x=1 tied with it. The
        // charts and the report draw what the file says, and say how it was decided.
        let mut s = sweep("c/goodput_per_s", &[9.0, 8.0, 3.0]);
        s.replications = 3;
        s.best = Some(vec![BestSet {
            metric: "c/goodput_per_s".into(),
            policy: "p".into(),
            condition: BTreeMap::new(),
            best_row: 0,
            tied_rows: vec![0, 1],
            significant: false,
            margin: 0.1,
        }]);
        let b = best(&s, "p", "c/goodput_per_s");
        assert_eq!((b.len(), b[0].top.point, settings_text(&s, &b[0])), (1, 0, "x=0 | x=1".to_string()));
        let (bars, note) = best_bars(&s);
        assert_eq!((bars[0].value, bars[0].note.as_str()), (9.0, " at x=0 | x=1 (tie)"));
        let rule =
            "tied: paired by seed, Student-t 95 % (df = n−1), a difference within the metric's margin, 3 replications";
        assert!(note.contains(rule), "{note}");
        let Kind::Lines(l) = &charts(&s)[0].kind else { panic!("lines") };
        assert_eq!(l.panels[0].series[0].best, vec![(0.0, 9.0), (1.0, 8.0)]);
        // The report states the rule with the metric's margin.
        let stated = "rule: paired by seed, Student-t 95 % (df = n−1), a difference within its margin is a tie \
                      (c/goodput_per_s ±0.1/s)";
        assert!(crate::html::sweep_section(&s).contains(stated), "{}", crate::html::sweep_section(&s));
        // A set whose row index points nowhere (a hand-edited file) is dropped, not a panic.
        s.best.as_mut().unwrap()[0].tied_rows.push(7);
        assert!(best(&s, "p", "c/goodput_per_s").is_empty());
    }

    #[test]
    fn a_sweep_json_without_the_best_list_still_loads() {
        // Written before paired ties: no `best`. It loads, and ties fall back to equal means.
        let text = r#"{"sweep": "s", "base": "b", "seed": 1, "replications": 3,
            "axes": [{"name": "x", "path": "policies.0.stack.0.timeout", "values": [0, 1, 2]}],
            "rows": [
              {"point": 0, "params": {"x": 0}, "policy": "p", "replications": 3,
               "metrics": {"c/goodput_per_s": {"mean": 7.0, "ci_lo": 6.0, "ci_hi": 8.0}}},
              {"point": 1, "params": {"x": 1}, "policy": "p", "replications": 3,
               "metrics": {"c/goodput_per_s": {"mean": 6.5, "ci_lo": 5.0, "ci_hi": 8.0}}},
              {"point": 2, "params": {"x": 2}, "policy": "p", "replications": 3,
               "metrics": {"c/goodput_per_s": {"mean": 7.0, "ci_lo": 6.5, "ci_hi": 7.5}}}]}"#;
        let s: SweepResult = serde_json::from_str(text).unwrap();
        assert_eq!(s.best, None);
        let b = best(&s, "p", "c/goodput_per_s");
        assert_eq!(settings_text(&s, &b[0]), "x=0 | x=2");
        let (_, note) = best_bars(&s);
        assert!(note.contains("tied: equal means"), "{note}");
        assert!(!note.contains("interval of the difference"), "{note}");
    }

    #[test]
    fn a_constrained_metric_draws_its_target() {
        let s = sweep("c/in_time_ratio", &[0.95, 0.99, 0.995]);
        let target = target_at_least("c/in_time_ratio", 0.99);
        let list = charts_with(&s, std::slice::from_ref(&target));
        let Kind::Lines(l) = &list[0].kind else { panic!("lines") };
        let h = &l.panels[0].hlines;
        assert_eq!((h.len(), h[0].y, h[0].label.as_str()), (1, 0.99, "target ≥ 99%"));
        let best = list.iter().find(|c| c.stem == "sweep_best").unwrap();
        let Kind::Bars(b) = &best.kind else { panic!("bars") };
        assert_eq!(b.panels[0].targets[0].y, 0.99);
        // A constraint on another metric draws nothing here.
        let other = charts_with(&sweep("c/goodput_per_s", &[1.0, 2.0]), &[target]);
        let Kind::Lines(l) = &other[0].kind else { panic!("lines") };
        assert!(l.panels[0].hlines.is_empty());
    }
}
