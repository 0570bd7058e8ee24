//! Sweep charts from `sweep.json`: a metric against one axis with confidence bands, heatmaps
//! over two axes, and the best setting per policy.
//!
//! - `best`: the best settings per policy and condition, and their bar chart.
//! - `targets`: a constraint's target line, and its boundary on a heatmap.
//! - `shapes`: the chart of each metric: against one axis, or a heatmap over two.
//! - `decision`: a decision axis against a condition axis: one curve per condition.

mod best;
mod decision;
mod shapes;
mod targets;
#[cfg(test)]
mod tests;

pub use best::{best, not_comparable, settings_text, tie_rule};
#[cfg(test)]
pub use shapes::charts;
pub use shapes::charts_with;
#[cfg(test)]
pub(crate) use targets::target_at_least;
pub(crate) use targets::targets_of;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::style::{PolicyColors, Unit};
use crate::metrics::catalogue::{self, Direction};
use crate::sweep::grid::Role;
use brownout_core::sweep::best::BestSet;
use brownout_core::sweep::sensitivity::Sensitivity;

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
    /// How much each axis moves each metric around the recommended setting
    /// (`sweep::sensitivity`); absent from files written before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensitivity: Vec<Sensitivity>,
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
    /// The link of a linked axis (`1 - authorize_share`): its value follows the axes the
    /// expression names, so the charts draw it with them, not as an axis of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
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
    catalogue::by_path(metric).map_or(Direction::Neither, |m| m.direction)
}

/// "higher is better", "lower is better" or "neither is better" for `metric`.
pub(super) fn better(metric: &str) -> &'static str {
    match direction(metric) {
        Direction::Higher => "higher is better",
        Direction::Lower => "lower is better",
        Direction::Neither => "neither is better",
    }
}

/// The tick format of `metric`'s catalogue unit (plain for a name the catalogue lacks).
pub fn unit_of(metric: &str) -> Unit {
    match catalogue::by_path(metric).map(|m| m.unit) {
        Some(catalogue::Unit::Ms) => Unit::Ms,
        Some(catalogue::Unit::PerS) => Unit::PerS,
        Some(catalogue::Unit::Fraction) => Unit::Fraction,
        _ => Unit::Plain,
    }
}

/// The name of `metric`'s catalogue unit in notes and colour bars ("ms", "/s", "%",
/// "count", ...); "value" for a plain number or a name the catalogue lacks.
pub fn unit_name(metric: &str) -> &'static str {
    match catalogue::by_path(metric).map(|m| m.unit) {
        Some(catalogue::Unit::Ms) => "ms",
        Some(catalogue::Unit::S) => "s",
        Some(catalogue::Unit::PerS) => "/s",
        Some(catalogue::Unit::PerMin) => "/min",
        Some(catalogue::Unit::Fraction) => "%",
        Some(catalogue::Unit::Count) => "count",
        Some(catalogue::Unit::Cost) => "cost units",
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
