//! A decision axis against a condition axis: the metric against the decision, one curve per
//! condition (and one panel per policy set), with the constraints' target lines. The value
//! axis is widened to hold the target (`draw::line_y_range`), so where each condition's curve
//! crosses it reads off directly.

use super::super::style::{Unit, sequential};
use super::super::{Chart, Kind, LegendEntry, LinePanel, LinePanels, Mark, Series, slug};
use super::shapes::with_links;
use super::targets::targets_of;
use super::{Estimate, SweepAxis, SweepResult, policies, unit_of};
use brownout_core::decide::recommendation::ConstraintOut;

/// The chart of `metric` against decision axis `d`, a curve per value of condition axis `c`.
pub(super) fn chart(
    s: &SweepResult,
    (d, c): (&SweepAxis, &SweepAxis),
    metric: &str,
    targets: &[ConstraintOut],
) -> Chart {
    let pols = policies(s);
    let n = c.values.len().max(1);
    // Conditions on the sequential scale, kept off its brightest end (unreadable on white).
    let color = |k: usize| sequential(if n == 1 { 0.0 } else { 0.8 * k as f64 / (n - 1) as f64 });
    let panels = pols
        .iter()
        .map(|p| {
            let series = c
                .values
                .iter()
                .enumerate()
                .map(|(k, &cv)| {
                    let mut pts: Vec<(f64, Estimate)> = s
                        .rows
                        .iter()
                        .filter(|r| &r.policy == p && r.params.get(&c.name) == Some(&cv))
                        .filter_map(|r| Some((*r.params.get(&d.name)?, *r.metrics.get(metric)?)))
                        .collect();
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Series {
                        color: color(k),
                        dashed: false,
                        segments: vec![pts.iter().filter(|x| !x.1.mean.is_nan()).map(|x| (x.0, x.1.mean)).collect()],
                        band: pts.iter().filter_map(|x| x.1.ci().map(|(lo, hi)| (x.0, lo, hi))).collect(),
                        dots: true,
                        best: Vec::new(),
                    }
                })
                .collect();
            LinePanel {
                title: format!("{p}: {metric} against {}", d.name),
                y_label: metric.to_string(),
                unit: unit_of(metric),
                series,
                hlines: targets_of(targets, metric, unit_of(metric)),
            }
        })
        .collect::<Vec<_>>();
    let lo = d.values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = d.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pad = if hi > lo { (hi - lo) * 0.04 } else { 1.0 };
    let legend = c
        .values
        .iter()
        .enumerate()
        .map(|(k, v)| LegendEntry {
            label: format!("{} = {}", c.title(), Unit::Plain.fmt(*v)),
            color: color(k),
            mark: Mark::Box,
        })
        .collect();
    let rows = panels.len().max(1) as u32;
    Chart {
        stem: format!("decision_{}", slug(metric)),
        title: format!("{}: {metric} against the decision {}", s.sweep, d.name),
        note: format!(
            "mean of {} replications, shaded = confidence interval; one curve per {} (a condition){}",
            s.replications,
            c.name,
            if targets.iter().any(|t| t.metric == metric) { ", dashed = the constraint's target" } else { "" }
        ),
        width: 1100,
        height: 110 + rows * 420,
        legend,
        kind: Kind::Lines(LinePanels {
            x_label: format!("{} — {}", with_links(s, d), d.path),
            x_unit: Unit::Plain,
            x_range: if lo.is_finite() { (lo - pad, hi + pad) } else { (0.0, 1.0) },
            shade: Vec::new(),
            marks: Vec::new(),
            panels,
        }),
    }
}
