//! The chart of each metric: against the one axis with confidence bands, or a heatmap over
//! two axes, one panel per policy.

use super::super::style::{Unit, fmt_num};
use super::super::{Chart, HeatPanel, HeatPanels, Kind, LinePanel, LinePanels, Series, policy_legend, slug};
use super::best::{best, best_chart, best_note};
use super::targets::{target_edges, targets_of};
use super::{Estimate, SweepAxis, SweepResult, better, colors, metrics, policies, unit_name, unit_of};
use brownout_core::decide::recommendation::ConstraintOut;

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
    // A linked axis follows the axes it reads: it is drawn with them, never as an axis of
    // its own (a diagonal heatmap).
    let free: Vec<&SweepAxis> = s.axes.iter().filter(|a| a.link.is_none()).collect();
    let mut out: Vec<Chart> = match free[..] {
        [a] => names.iter().map(|m| against_axis(s, a, m, targets)).collect(),
        [a, b] if a.is_decision() != b.is_decision() => {
            let (d, c) = if a.is_decision() { (a, b) } else { (b, a) };
            names.iter().map(|m| super::decision::chart(s, (d, c), m, targets)).collect()
        }
        [a, b] => names.iter().map(|m| heatmap(s, (a, b), m, targets)).collect(),
        _ => Vec::new(),
    };
    let pols = policies(s);
    let ranked: Vec<String> = names.into_iter().filter(|m| pols.iter().any(|p| !best(s, p, m).is_empty())).collect();
    if !ranked.is_empty() {
        out.push(best_chart(s, &ranked, targets));
    }
    out.extend(super::super::tornado::charts(s, targets));
    out
}

fn against_axis(s: &SweepResult, axis: &SweepAxis, metric: &str, targets: &[ConstraintOut]) -> Chart {
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
        x_label: format!("{} — {}", with_links(s, axis), axis.path),
        x_unit: Unit::Plain,
        x_range: if lo.is_finite() { (lo - pad, hi + pad) } else { (0.0, 1.0) },
        shade: Vec::new(),
        marks: Vec::new(),
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

fn heatmap(s: &SweepResult, (ax, ay): (&SweepAxis, &SweepAxis), metric: &str, targets: &[ConstraintOut]) -> Chart {
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
            x_label: with_links(s, ax),
            y_label: with_links(s, ay),
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

/// An axis's title with the linked axes that follow it: "authorize_share (refund_share = 1 -
/// authorize_share)".
pub(super) fn with_links(s: &SweepResult, axis: &SweepAxis) -> String {
    let reads = |link: &str| link.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == axis.name);
    let follows: Vec<String> = s
        .axes
        .iter()
        .filter_map(|a| a.link.as_deref().filter(|l| reads(l)).map(|l| format!("{} = {l}", a.name)))
        .collect();
    match follows.is_empty() {
        true => axis.title(),
        false => format!("{} ({})", axis.title(), follows.join(", ")),
    }
}
