//! A constraint's target: the line drawn at its value, and where it parts a heatmap's cells.

use super::super::style::Unit;
use super::super::{Edge, HLine, TARGET};
use brownout_core::decide::recommendation::ConstraintOut;

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
