//! A sweep's best settings per metric: within one policy set and one condition (the condition
//! axes' values), the decision setting with the best mean and every setting tied with it.
//!
//! A claimed difference is backed by replications: every point and policy runs replication k
//! on the same seed (common random numbers), so settings are compared replication by
//! replication with [`paired_best`], the rule the run report's stars follow. A setting whose
//! paired 95 % interval of the difference to the best reaches inside the metric's margin
//! ([`MetricRule`]) is tied for best; with one replication there is no interval, so every
//! setting ties. A cost that does not price failures is not ranked. Settings are ranked by their means
//! over the replications in which every candidate setting has a value (see [`paired_best`]).
//! The per-run values exist only here, at sweep time, so the result goes into `sweep.json`
//! for the charts and the report to read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::grid::{PlanInfo, Role};
use super::store::RunRecord;
use crate::metrics::catalogue::{self, Direction, Margins, Unit};
use crate::report::replicate::{RankRules, UNPRICED, answers_unranked};
use crate::stats::paired_best;

/// How one sweep metric is ranked: its practical-equivalence margin and, where it is not
/// ranked at all, why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MetricRule {
    /// The margin, in the metric's unit (the base scenario's `statistics.margins`, else the
    /// catalogue's): a setting within it of the best ties.
    pub margin: f64,
    /// Why the metric has no best settings (a cost that does not price failures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unranked: Option<String>,
}

/// The rule of each of `metrics` (as a sweep names them) under the base scenario `base`.
pub fn metric_rules(base: &crate::scenario::Scenario, metrics: &[String]) -> Vec<MetricRule> {
    let rules = RankRules::of_scenario(base);
    metrics
        .iter()
        .map(|path| {
            let bare = path.split_once(':').map_or(path.as_str(), |(_, p)| p);
            let class = bare.split_once('/').map(|(c, _)| c);
            let unpriced = match class {
                Some(c) => rules.unpriced.iter().any(|u| u == c),
                None => rules.run_unpriced,
            };
            let cost = catalogue::by_path(path).is_some_and(|m| m.unit == Unit::Cost);
            MetricRule {
                margin: rules.margins.of_path(path),
                unranked: (cost && unpriced).then(|| UNPRICED.to_string()),
            }
        })
        .collect()
}

impl PlanInfo {
    /// The margin of a metric as the sweep names it: the plan's rule where the metric is
    /// recorded, else the catalogue's (a decision axis: 0).
    pub fn margin_of(&self, path: &str) -> f64 {
        let k = self.metrics.iter().position(|m| m == path);
        k.and_then(|k| self.rules.get(k)).map_or_else(|| Margins::default().of_path(path), |r| r.margin)
    }
}

/// The best settings of one policy set on one metric in one condition: one entry of
/// `sweep.json`'s `best` list.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BestSet {
    /// The metric as the sweep names it (`class/metric`, a run-level name, a `phase:` prefix).
    pub metric: String,
    /// The policy set.
    pub policy: String,
    /// The condition axes' values; empty without condition axes.
    pub condition: BTreeMap<String, f64>,
    /// Index into `sweep.json`'s `rows` of the setting with the best mean (the first such in
    /// point order); absent where the metric is not comparable in this group (`unranked`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_row: Option<usize>,
    /// Indices into `rows` of every setting tied for best, the best included, in row order:
    /// those whose paired 95 % interval of the difference to the best reaches inside the
    /// metric's margin. Empty where `unranked`.
    pub tied_rows: Vec<usize>,
    /// The best is better than every other setting of its condition (each paired interval
    /// lies beyond the margin); false when it is the condition's only setting.
    pub significant: bool,
    /// The practical-equivalence margin the settings were compared with (metric's unit).
    #[serde(default)]
    pub margin: f64,
    /// Why no setting is best here: a latency of answers whose settings answered different
    /// numbers of requests ("not comparable: answered 4,800 vs 12"), the run report's rule
    /// (`report::replicate::answers_unranked`), since refusing the slow requests would look faster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unranked: Option<String>,
}

/// Every best set of a finished sweep, from its complete, run-ordered `records`: per metric
/// (plan order) with a better direction in the catalogue, per policy set (plan order), per
/// condition (in order of first appearance). Empty without a decision axis: a condition is
/// never a setting to choose. A setting whose metric is undefined in every replication is
/// not a candidate.
pub fn best_sets(plan: &PlanInfo, records: &[RunRecord]) -> Vec<BestSet> {
    let conditions: Vec<usize> = (0..plan.axes.len()).filter(|&i| plan.axes[i].role() == Role::Condition).collect();
    if conditions.len() == plan.axes.len() {
        return Vec::new();
    }
    // Points grouped by condition, exact values as keys, in order of first appearance.
    let mut groups: Vec<(Vec<u64>, Vec<usize>)> = Vec::new();
    for (p, point) in plan.points.iter().enumerate() {
        let key: Vec<u64> = conditions.iter().map(|&i| point[i].to_bits()).collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, points)) => points.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    let (np, r) = (plan.policies.len(), plan.replications as usize);
    let catalogue = Margins::default();
    let mut out = Vec::new();
    for (k, metric) in plan.metrics.iter().enumerate() {
        let d = catalogue::by_path(metric).map_or(Direction::Neither, |m| m.direction);
        let rule = plan
            .rules
            .get(k)
            .cloned()
            .unwrap_or_else(|| MetricRule { margin: catalogue.of_path(metric), unranked: None });
        if d == Direction::Neither || rule.unranked.is_some() {
            continue;
        }
        let answers = super::answers_metric(metric);
        for (policy, name) in plan.policies.iter().enumerate() {
            for (_, points) in &groups {
                // Row index of each setting in this condition, and its values by replication.
                let (rows, sets): (Vec<usize>, Vec<Vec<f64>>) = points
                    .iter()
                    .map(|&pt| {
                        let row = pt * np + policy;
                        let value =
                            |i: usize| records.get(row * r + i).and_then(|x| x.metrics.get(k).copied().flatten());
                        (row, (0..r).map(|i| value(i).unwrap_or(f64::NAN)).collect::<Vec<f64>>())
                    })
                    .filter(|(_, xs)| xs.iter().any(|x| !x.is_nan()))
                    .unzip();
                let Some(pb) = paired_best(d, &sets, rule.margin) else { continue };
                let unranked = answers.then(|| answers_unranked(&answered_of(records, &rows, r, k))).flatten();
                let ranked = unranked.is_none();
                out.push(BestSet {
                    metric: metric.clone(),
                    policy: name.clone(),
                    condition: conditions
                        .iter()
                        .map(|&i| (plan.axes[i].name.clone(), plan.points[points[0]][i]))
                        .collect(),
                    best_row: ranked.then(|| rows[pb.best]),
                    tied_rows: if ranked { pb.tied().into_iter().map(|i| rows[i]).collect() } else { Vec::new() },
                    significant: ranked && pb.significant(),
                    margin: rule.margin,
                    unranked,
                });
            }
        }
    }
    out
}

/// The answered counts beside metric `k` of each of `rows` (a row is a point and policy),
/// replication by replication (`r` of them): NaN where a record holds none (a journal from
/// before the counts).
pub(crate) fn answered_of(records: &[RunRecord], rows: &[usize], r: usize, k: usize) -> Vec<Vec<f64>> {
    let count =
        |run: usize| records.get(run).and_then(|x| x.answered.get(k).copied().flatten()).map_or(f64::NAN, |n| n as f64);
    rows.iter().map(|&row| (0..r).map(|i| count(row * r + i)).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::mean_ci95;
    use crate::sweep::grid::AxisInfo;

    /// One policy, one decision axis `x` with a point per entry of `values`, and a condition
    /// axis `depth` when `depth` gives each point's depth; `values[point][replication]` is the
    /// goodput (higher is better).
    fn sweep(values: &[&[f64]], depth: Option<&[f64]>) -> (PlanInfo, Vec<RunRecord>) {
        let reps = values[0].len() as u32;
        let mut axes = vec![AxisInfo {
            name: "x".into(),
            path: "policies[p].stack[0].policy.Limiter.permits".into(),
            values: (0..values.len()).map(|i| i as f64).collect(),
            role: None,
            link: None,
            unit: None,
        }];
        if depth.is_some() {
            axes.push(AxisInfo {
                name: "depth".into(),
                path: "dependency.drift".into(),
                values: vec![1.0, 2.0],
                role: None,
                link: None,
                unit: None,
            });
        }
        let points = (0..values.len())
            .map(|i| match depth {
                Some(d) => vec![i as f64, d[i]],
                None => vec![i as f64],
            })
            .collect();
        let plan = PlanInfo {
            sweep: "s".into(),
            base: "b".into(),
            seed: 1,
            replications: reps,
            axes,
            points,
            policies: vec!["p".into()],
            metrics: vec!["c/goodput_per_s".into(), "c/throughput_per_s".into()],
            decide: None,
            hash: "h".into(),
            scenario_policies: Vec::new(),
            rules: Vec::new(),
        };
        let records = values
            .iter()
            .flat_map(|xs| xs.iter())
            .enumerate()
            .map(|(run, &v)| RunRecord {
                run: run as u64,
                seed: plan.replication_seed(plan.run_id(run as u64).replication),
                events: 0,
                requests: 0,
                metrics: vec![Some(v), Some(v)],
                answered: Vec::new(),
                key: None,
            })
            .collect();
        (plan, records)
    }

    fn goodput(plan: &PlanInfo, records: &[RunRecord]) -> Vec<BestSet> {
        best_sets(plan, records).into_iter().filter(|b| b.metric == "c/goodput_per_s").collect()
    }

    // A = 10, 12, 14 (mean 12), the best.
    const A: [f64; 3] = [10.0, 12.0, 14.0];
    // B = 9, 13, 13 (mean 11.667). A - B = 1, -1, 1: mean 1/3, s^2 = (4/9 + 16/9 + 4/9) / 2 =
    // 4/3, half-width t(0.975, 2) sqrt(4/9) = 4.302653 * 0.666667 = 2.868435: [-2.535, 3.202]
    // includes zero, a tie.
    const B: [f64; 3] = [9.0, 13.0, 13.0];
    // C = 8, 9.5, 12.5 (mean 10). A - C = 2, 2.5, 1.5: mean 2, s^2 = 0.25, half-width
    // 4.302653 * 0.5 / sqrt(3) = 1.242069: [0.758, 3.242] excludes zero, not tied.
    const C: [f64; 3] = [8.0, 9.5, 12.5];

    #[test]
    fn a_setting_ties_when_its_paired_interval_includes_zero() {
        let (plan, recs) = sweep(&[&B, &A, &C], None);
        let b = goodput(&plan, &recs);
        assert_eq!(b.len(), 1);
        // Rows: B = 0, A = 1, C = 2 (one policy, so row = point).
        assert_eq!((b[0].best_row, b[0].tied_rows.clone(), b[0].significant), (Some(1), vec![0, 1], false));
        assert!(b[0].condition.is_empty());
        // Throughput is better neither high nor low: no best set.
        assert!(best_sets(&plan, &recs).iter().all(|b| b.metric == "c/goodput_per_s"));
    }

    #[test]
    fn pairing_by_seed_separates_what_overlapping_intervals_hide() {
        // A and C alone. Unpaired, their own intervals overlap: A 12 +- 4.302653 * 2 / sqrt(3)
        // = [7.032, 16.968], C 10 +- 4.302653 * sqrt(5.25 / 3) = [4.308, 15.692]. Paired by
        // seed, A - C = [0.758, 3.242] excludes zero: A alone is best, and significantly.
        let (a, c) = (mean_ci95(&A), mean_ci95(&C));
        assert!((a.ci_lo - 7.032).abs() < 1e-3 && (c.ci_hi - 15.692).abs() < 1e-3, "{a:?} {c:?}");
        assert!(a.ci_lo < c.ci_hi, "the unpaired intervals overlap");
        let (plan, recs) = sweep(&[&C, &A], None);
        let b = goodput(&plan, &recs);
        assert_eq!((b[0].best_row, b[0].tied_rows.clone(), b[0].significant), (Some(1), vec![1], true));
    }

    #[test]
    fn one_replication_shows_no_difference() {
        // One replication has no spread to judge a difference by: 6 is not shown to be worse
        // than 7, so every setting ties with the best and nothing is significant.
        let (plan, recs) = sweep(&[&[7.0], &[6.0], &[7.0]], None);
        let b = goodput(&plan, &recs);
        assert_eq!((b[0].best_row, b[0].tied_rows.clone(), b[0].significant), (Some(0), vec![0, 1, 2], false));
    }

    #[test]
    fn a_setting_missing_a_replication_is_ranked_on_the_common_ones() {
        // Point 0 has no value in replication 2; ranked over replications 0 and 1, where both
        // have one, point 0 (5, 5) beats point 1 (4, 4), though point 1's mean over all three
        // (4 + 4 + 100) / 3 = 36 is higher.
        let (plan, mut recs) = sweep(&[&[5.0, 5.0, 5.0], &[4.0, 4.0, 100.0]], None);
        recs[2].metrics[0] = None;
        let b = goodput(&plan, &recs);
        assert_eq!(b[0].best_row, Some(0), "{b:?}");
    }

    #[test]
    fn ties_are_judged_within_each_condition() {
        // depth 1: points 0 (B) and 1 (A), a tie; depth 2: points 2 (C) and 3 (A), A alone.
        let (plan, recs) = sweep(&[&B, &A, &C, &A], Some(&[1.0, 1.0, 2.0, 2.0]));
        let b = goodput(&plan, &recs);
        let got: Vec<(f64, Option<usize>, Vec<usize>, bool)> =
            b.iter().map(|b| (b.condition["depth"], b.best_row, b.tied_rows.clone(), b.significant)).collect();
        assert_eq!(got, vec![(1.0, Some(1), vec![0, 1], false), (2.0, Some(3), vec![3], true)]);
        // Every axis a condition: nothing to choose.
        let mut all = plan.clone();
        all.axes[0].role = Some(Role::Condition);
        assert!(best_sets(&all, &recs).is_empty());
    }
}
