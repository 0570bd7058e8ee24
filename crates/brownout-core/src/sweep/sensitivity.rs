//! How much each axis of a sweep moves a metric: one-at-a-time ranges around an anchor
//! point, for the sensitivity table and its tornado chart.
//!
//! The anchor is the recommended candidate when the sweep decides (its policy set and
//! decision setting), else the row with the best mean of the metric (the first row for a
//! metric better neither way). Its condition axes are held at the worst case for the metric:
//! the condition point where the anchor's mean is worst (below a `>=` constraint's target side
//! for a constraint, the catalogue's worse direction otherwise; the first condition point
//! for a metric better neither way). Each axis is then moved over its values with every other
//! free axis held at the anchor; a linked axis moves with the axes it reads and has no row of
//! its own. With more than one policy set, the policy set is moved too (one more row).
//!
//! A row's width is max − min of the metric's means along the axis. Whether it is more than
//! noise is the project's one rule ([`paired_ci95`]): the replications of the setting with the
//! highest mean against those of the lowest, paired by seed; the width is `significant` when
//! that interval excludes zero. With one replication nothing is significant.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::grid::{PlanInfo, Role};
use super::store::RunRecord;
use crate::decide::{Sense, measure_of};
use crate::metrics::catalogue::{self, Direction};
use crate::scenario::Cmp;
use crate::stats::paired_ci95;

/// What moves along a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mover {
    /// A decision axis.
    Decision,
    /// A condition axis.
    Condition,
    /// The policy set.
    Policy,
}

/// One step along a row: the setting and the metric's mean there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The axis value as written in the sweep (or the policy set's name).
    pub label: String,
    /// The metric's mean over the replications; `null` (NaN) without a value.
    #[serde(with = "figure")]
    pub mean: f64,
}

/// One axis (or the policy set) moved with the others held at the anchor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SensitivityRow {
    /// The axis name, or `policy set`.
    pub axis: String,
    /// Decision axis, condition axis or the policy set.
    pub mover: Mover,
    /// The linked axes that move with this one, each as `name = link`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follows: Vec<String>,
    /// The steps, in axis order (policy sets in plan order).
    pub steps: Vec<Step>,
    /// The lowest mean along the row; `null` (NaN) with fewer than two steps with a value.
    #[serde(with = "figure")]
    pub lo: f64,
    /// The highest mean along the row; as `lo`.
    #[serde(with = "figure")]
    pub hi: f64,
    /// `hi - lo`; `null` (NaN) when the row has fewer than two steps with a value.
    #[serde(with = "figure")]
    pub width: f64,
    /// The paired 95 % interval (by seed) of the highest step minus the lowest excludes zero:
    /// the width is more than the replications' noise.
    pub significant: bool,
}

/// The sensitivity of one metric: one entry of `sweep.json`'s `sensitivity` list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sensitivity {
    /// The metric as the sweep names it.
    pub metric: String,
    /// `objective`, `constraint` or `metric` (a sweep without a `decide` section).
    pub role: String,
    /// The anchor's policy set.
    pub policy: String,
    /// The anchor: every free (unlinked) axis's value.
    pub anchor: BTreeMap<String, f64>,
    /// The anchor's mean of the metric; `null` (NaN) without a value.
    #[serde(with = "figure")]
    pub anchor_mean: f64,
    /// How the anchor was chosen, in words.
    pub held: String,
    /// One row per free axis (and the policy set), widest first; rows without a width last.
    pub rows: Vec<SensitivityRow>,
}

/// A figure in JSON: `null` when it is not a number, read back as NaN.
mod figure {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() { s.serialize_some(v) } else { s.serialize_none() }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// A sweep's run values for one metric: `vals(point, policy)` is its value per replication.
struct Values<'a> {
    info: &'a PlanInfo,
    records: &'a [RunRecord],
    k: usize,
}

impl Values<'_> {
    fn vals(&self, point: usize, policy: usize) -> Vec<f64> {
        let r = self.info.replications as usize;
        let first = (point * self.info.policies.len() + policy) * r;
        (0..r)
            .map(|i| self.records.get(first + i).and_then(|x| x.metrics.get(self.k).copied().flatten()))
            .map(|v| v.unwrap_or(f64::NAN))
            .collect()
    }

    fn mean(&self, point: usize, policy: usize) -> f64 {
        crate::stats::mean_ci95(&self.vals(point, policy)).mean
    }
}

/// Which way a metric is better: a constraint's side of its target, else the catalogue's.
fn direction(metric: &str, constraint: Option<Cmp>) -> Direction {
    match constraint {
        Some(Cmp::Ge | Cmp::Gt) => Direction::Higher,
        Some(Cmp::Le | Cmp::Lt) => Direction::Lower,
        _ => catalogue::by_path(metric).map_or(Direction::Neither, |m| m.direction),
    }
}

/// The index among `candidates` whose `mean` is best (`worst` false) or worst in direction
/// `d`, NaN never chosen; the first with a value when `d` is neither, the first when none has.
fn pick(d: Direction, worst: bool, candidates: &[usize], mean: impl Fn(usize) -> f64) -> Option<usize> {
    let mut at: Option<(usize, f64)> = None;
    for &c in candidates {
        let m = mean(c);
        if m.is_nan() {
            continue;
        }
        let better = match (d, at) {
            (_, None) => true,
            (Direction::Higher, Some((_, b))) => (m > b) != worst && m != b,
            (Direction::Lower, Some((_, b))) => (m < b) != worst && m != b,
            (Direction::Neither, Some(_)) => false,
        };
        if better {
            at = Some((c, m));
        }
    }
    at.map(|(c, _)| c).or_else(|| candidates.first().copied())
}

/// Does `p` share `q`'s values on every axis in `axes`?
fn same(info: &PlanInfo, p: usize, q: usize, axes: &[usize]) -> bool {
    axes.iter().all(|&i| info.points[p][i].to_bits() == info.points[q][i].to_bits())
}

/// A value as the sweep writes it: `0.5`, `24`.
fn label(v: f64) -> String {
    format!("{v}")
}

/// The sensitivity of every metric a finished sweep decides on (the objective when it is a
/// metric, then each constraint's), or of every metric without a `decide` section, from its
/// complete, run-ordered `records`. Empty for a plan with neither an axis of more than one
/// value nor more than one policy set.
pub fn sensitivities(info: &PlanInfo, records: &[RunRecord]) -> Vec<Sensitivity> {
    let decision = super::decide::recommend(info, records);
    let rec = decision.as_ref().and_then(|d| d.recommendation.recommended.as_ref());
    let d = info.decide.as_ref().map(|p| &p.decide);
    // (metric, role, the constraint's comparison), in plan order; a metric read twice once.
    let mut wanted: Vec<(String, &'static str, Option<Cmp>)> = Vec::new();
    match d {
        Some(d) => {
            let objective = Sense::of(d).and_then(|(_, o)| match crate::decide::ObjectiveRef::parse(o) {
                Ok(crate::decide::ObjectiveRef::Metric(m)) => Some(m.path()),
                _ => None,
            });
            wanted.extend(objective.map(|m| (m, "objective", None)));
            for c in &d.subject_to {
                if let Ok(m) = measure_of(c).map(|m| m.path())
                    && !wanted.iter().any(|w| w.0 == m)
                {
                    wanted.push((m, "constraint", Some(c.op)));
                }
            }
        }
        None => wanted.extend(info.metrics.iter().map(|m| (m.clone(), "metric", None))),
    }
    let free: Vec<usize> = (0..info.axes.len()).filter(|&i| info.axes[i].link.is_none()).collect();
    let moving = free.iter().any(|&i| info.axes[i].values.len() > 1) || info.policies.len() > 1;
    if !moving {
        return Vec::new();
    }
    let links = linked(info);
    wanted
        .into_iter()
        .filter_map(|(metric, role, op)| {
            let k = info.metrics.iter().position(|m| *m == metric)?;
            let v = Values { info, records, k };
            Some(one(info, &v, &free, &links, (&metric, role, op), rec))
        })
        .collect()
}

/// Per axis, the linked axes that move with it, as `name = link`: those whose link reads it,
/// directly or through another linked axis.
fn linked(info: &PlanInfo) -> Vec<Vec<String>> {
    let names: Vec<&str> = info.axes.iter().map(|a| a.name.as_str()).collect();
    let texts: Vec<Option<&str>> = info.axes.iter().map(|a| a.link.as_deref()).collect();
    let mut out = vec![Vec::new(); info.axes.len()];
    // The unlinked axes each linked axis follows; links come in order, each after those it reads.
    let mut roots: Vec<Vec<usize>> = (0..info.axes.len()).map(|i| vec![i]).collect();
    for l in super::link::parse_all(&names, &texts).unwrap_or_default() {
        let mut mine: Vec<usize> = l.reads.iter().flat_map(|&j| roots[j].clone()).collect();
        mine.sort_unstable();
        mine.dedup();
        for &r in &mine {
            out[r].push(format!("{} = {}", names[l.axis], texts[l.axis].unwrap_or_default()));
        }
        roots[l.axis] = mine;
    }
    out
}

fn one(
    info: &PlanInfo,
    v: &Values,
    free: &[usize],
    links: &[Vec<String>],
    (metric, role, op): (&str, &str, Option<Cmp>),
    rec: Option<&crate::decide::recommendation::Candidate>,
) -> Sensitivity {
    let d = direction(metric, op);
    let decisions: Vec<usize> = free.iter().copied().filter(|&i| info.axes[i].role() == Role::Decision).collect();
    let np = info.policies.len();
    // The anchor's policy and decision setting.
    let rows: Vec<(usize, usize)> = (0..info.points.len()).flat_map(|p| (0..np).map(move |k| (p, k))).collect();
    let recommended = rec.and_then(|c| {
        let k = info.policies.iter().position(|p| *p == c.policy)?;
        let p = (0..info.points.len()).find(|&p| {
            decisions
                .iter()
                .all(|&i| c.setting.get(&info.axes[i].name).map(|x| x.to_bits()) == Some(info.points[p][i].to_bits()))
        })?;
        Some((p, k))
    });
    let (held_decision, (p0, policy)) = match recommended {
        Some(at) => ("decision axes at the recommended setting", at),
        None => {
            let ids: Vec<usize> = (0..rows.len()).collect();
            let best = pick(d, false, &ids, |r| v.mean(rows[r].0, rows[r].1)).unwrap_or(0);
            ("decision axes at the setting with the best mean", rows[best])
        }
    };
    // Conditions held at their worst case for this metric, given the anchor's decisions.
    let conditions: Vec<usize> = free.iter().copied().filter(|&i| info.axes[i].role() == Role::Condition).collect();
    let alike: Vec<usize> = (0..info.points.len()).filter(|&p| same(info, p, p0, &decisions)).collect();
    let p0 = if conditions.is_empty() { p0 } else { pick(d, true, &alike, |p| v.mean(p, policy)).unwrap_or(p0) };
    let held_condition = match (conditions.is_empty(), d) {
        (true, _) => "",
        (false, Direction::Neither) => {
            "; condition axes at the first condition point (the metric is better neither way)"
        }
        (false, _) => "; condition axes at their worst case for this metric",
    };
    let mut out_rows: Vec<SensitivityRow> = free
        .iter()
        .filter(|&&a| info.axes[a].values.len() > 1)
        .map(|&a| {
            let others: Vec<usize> = free.iter().copied().filter(|&j| j != a).collect();
            let mut along: Vec<usize> = (0..info.points.len()).filter(|&p| same(info, p, p0, &others)).collect();
            along.sort_by(|&x, &y| info.points[x][a].total_cmp(&info.points[y][a]));
            along.dedup_by(|x, y| info.points[*x][a].to_bits() == info.points[*y][a].to_bits());
            let mover = if info.axes[a].role() == Role::Decision { Mover::Decision } else { Mover::Condition };
            let labels = along.iter().map(|&p| label(info.points[p][a])).collect();
            let sets = along.iter().map(|&p| v.vals(p, policy)).collect();
            row(&info.axes[a].name, mover, links[a].clone(), labels, sets, info.margin_of(metric))
        })
        .collect();
    if np > 1 {
        let labels = info.policies.clone();
        let sets = (0..np).map(|k| v.vals(p0, k)).collect();
        out_rows.push(row("policy set", Mover::Policy, Vec::new(), labels, sets, info.margin_of(metric)));
    }
    sort_rows(&mut out_rows);
    Sensitivity {
        metric: metric.to_string(),
        role: role.to_string(),
        policy: info.policies[policy].clone(),
        anchor: free.iter().map(|&i| (info.axes[i].name.clone(), info.points[p0][i])).collect(),
        anchor_mean: v.mean(p0, policy),
        held: format!("{held_decision}{held_condition}"),
        rows: out_rows,
    }
}

/// Widest first; a row without a width last; equal widths keep axis order.
pub(crate) fn sort_rows(rows: &mut [SensitivityRow]) {
    rows.sort_by(|a, b| match (a.width.is_nan(), b.width.is_nan()) {
        (false, false) => b.width.total_cmp(&a.width),
        (x, y) => x.cmp(&y),
    });
}

/// A row from its steps' labels and replication values.
/// A width is "beyond noise" by the one rule: the paired interval of highest minus lowest
/// lies beyond the metric's `margin`.
pub(crate) fn row(
    axis: &str,
    mover: Mover,
    follows: Vec<String>,
    labels: Vec<String>,
    sets: Vec<Vec<f64>>,
    margin: f64,
) -> SensitivityRow {
    let means: Vec<f64> = sets.iter().map(|s| crate::stats::mean_ci95(s).mean).collect();
    let valued: Vec<usize> = (0..means.len()).filter(|&i| !means[i].is_nan()).collect();
    let (mut lo, mut hi, mut significant) = (f64::NAN, f64::NAN, false);
    if valued.len() >= 2 {
        let min = valued.iter().copied().min_by(|&a, &b| means[a].total_cmp(&means[b])).unwrap_or(0);
        let max = valued.iter().copied().max_by(|&a, &b| means[a].total_cmp(&means[b])).unwrap_or(0);
        (lo, hi) = (means[min], means[max]);
        significant = paired_ci95(&sets[max], &sets[min], margin).differs;
    }
    let steps = labels.into_iter().zip(&means).map(|(label, &mean)| Step { label, mean }).collect();
    SensitivityRow { axis: axis.to_string(), mover, follows, steps, lo, hi, width: hi - lo, significant }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::grid::AxisInfo;

    /// Decision axis `d` (1, 2) by condition axis `c` (1, 2), one policy, two replications:
    /// goodput `10 d - c`, minus and plus 0.5 in replications 0 and 1.
    fn plan() -> (PlanInfo, Vec<RunRecord>) {
        let axis = |name: &str, path: &str| AxisInfo {
            name: name.into(),
            path: path.into(),
            values: vec![1.0, 2.0],
            role: None,
            link: None,
            unit: None,
        };
        let points = vec![vec![1.0, 1.0], vec![1.0, 2.0], vec![2.0, 1.0], vec![2.0, 2.0]];
        let info = PlanInfo {
            sweep: "s".into(),
            base: "b".into(),
            seed: 1,
            replications: 2,
            axes: vec![axis("d", "policies[p].stack[0].policy.Limiter.permits"), axis("c", "dependency.drift")],
            points: points.clone(),
            policies: vec!["p".into()],
            metrics: vec!["c/goodput_per_s".into()],
            decide: None,
            hash: "h".into(),
            scenario_policies: Vec::new(),
            rules: Vec::new(),
        };
        let records = points
            .iter()
            .flat_map(|p| [10.0 * p[0] - p[1] - 0.5, 10.0 * p[0] - p[1] + 0.5])
            .enumerate()
            .map(|(run, v)| RunRecord {
                run: run as u64,
                seed: 0,
                events: 0,
                requests: 0,
                metrics: vec![Some(v)],
                answered: Vec::new(),
                key: None,
            })
            .collect();
        (info, records)
    }

    #[test]
    fn decisions_at_the_best_conditions_at_their_worst_widest_first() {
        // Best mean: d=2, c=1 (19). The worst condition for d=2: c=2 (18), the anchor. Along d
        // at c=2: 8 and 18, width 10; along c at d=2: 19 and 18, width 1. Every replication
        // differs by the same amount, so both widths are beyond noise.
        let (info, records) = plan();
        let s = sensitivities(&info, &records);
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!((s.role.as_str(), s.anchor_mean), ("metric", 18.0));
        assert_eq!(s.anchor, BTreeMap::from([("c".to_string(), 2.0), ("d".to_string(), 2.0)]));
        assert!(s.held.contains("best mean") && s.held.contains("worst case"), "{}", s.held);
        let got: Vec<(&str, Mover, f64, f64, f64, bool)> =
            s.rows.iter().map(|r| (r.axis.as_str(), r.mover, r.lo, r.hi, r.width, r.significant)).collect();
        assert_eq!(
            got,
            [("d", Mover::Decision, 8.0, 18.0, 10.0, true), ("c", Mover::Condition, 18.0, 19.0, 1.0, true)]
        );
    }

    #[test]
    fn a_row_with_one_valued_step_has_no_width_and_sorts_last() {
        // d=1, c=2 undefined in every replication: the d row has one step with a value.
        let (info, mut records) = plan();
        records[2].metrics[0] = None;
        records[3].metrics[0] = None;
        let s = &sensitivities(&info, &records)[0];
        assert_eq!(s.rows[0].axis, "c");
        assert!(s.rows[1].width.is_nan() && !s.rows[1].significant, "{:?}", s.rows[1]);
        // Written as null, read back as NaN.
        let json = serde_json::to_string(&s.rows[1]).unwrap();
        assert!(json.contains("\"width\":null"), "{json}");
        let back: SensitivityRow = serde_json::from_str(&json).unwrap();
        assert!(back.width.is_nan());
    }

    #[test]
    fn a_linked_axis_moves_with_the_axes_it_reads_through_other_links() {
        // b = 1 - d reads d; e = b * 2 reads b, so d moves e too; c is read by none.
        let (mut info, _) = plan();
        let mut linked_axis = |name: &str, link: &str| {
            let mut a = info.axes[0].clone();
            (a.name, a.link) = (name.into(), Some(link.into()));
            info.axes.push(a);
        };
        linked_axis("b", "1 - d");
        linked_axis("e", "b * 2");
        let got = linked(&info);
        assert_eq!(got[0], ["b = 1 - d", "e = b * 2"]);
        assert!(got[1].is_empty() && got[2].is_empty());
    }
}
