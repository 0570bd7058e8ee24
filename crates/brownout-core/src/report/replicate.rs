//! Statistics over replications: every catalogue metric's mean and 95 % Student-t interval
//! per policy set, and the paired (by seed) comparisons that decide stars and the verdict.
//!
//! Everything is read through [`metrics::catalogue`](crate::metrics::catalogue), so a new metric,
//! or a list of summaries for one phase instead of the whole run, gets intervals with no code
//! here. The t quantile is [`crate::verify::theory::t_quantile`]'s, through
//! [`metric_ci95`] (a ratio's interval is clamped to [0, 1], the values it can take). Stars
//! and ties follow [`paired_best`]'s rule: a policy set without a value is unranked, the
//! others are ranked over the seeds where all of them have one.

use crate::metrics::catalogue::{self, CATALOGUE, Direction, Margins, Metric, Population, Scope, Unit};
use crate::metrics::summary::{Comparison, MetricInterval, PairedDifference, ReplicatedRun, Replications, RunSummary};
use crate::scenario::Scenario;
use crate::stats::{metric_ci95, paired_best};

/// What ranking needs beside the figures: each metric's margin, and whose cost prices what
/// failed (cost is ranked only there).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankRules {
    /// The margins (the catalogue's, with the scenario's `statistics.margins` over them).
    pub margins: Margins,
    /// Classes whose cost does not price a failed or late answer.
    pub unpriced: Vec<String>,
    /// The run's total cost does not price every class's failures: some class can cost
    /// something (a fallback's cost per use) while its failures cost nothing.
    pub run_unpriced: bool,
}

/// Why cost is not ranked where failures cost nothing.
pub const UNPRICED: &str = "not ranked: late and failed answers cost nothing without an order_fraction and a \
                            business lost_order_cost, so failing more would look cheaper";

impl RankRules {
    /// The scenario's rules: its margins, and which classes price failures (a `business`
    /// section with `lost_order_cost` > 0 and the class's `order_fraction` > 0).
    pub fn of_scenario(s: &Scenario) -> RankRules {
        let lost = s.business.as_ref().is_some_and(|b| b.lost_order_cost > 0.0);
        let priced = |c: &crate::scenario::Class| lost && c.order_fraction > 0.0;
        // A class whose answers can cost something (orders on wrong values, a fallback's cost
        // per use) without its failures costing anything makes the total reward failing.
        let costs = |c: &crate::scenario::Class| {
            (s.business.is_some() && c.order_fraction > 0.0)
                || (c.fallback != crate::scenario::Fallback::None && c.fallback_answer.cost_per_use() > 0.0)
        };
        RankRules {
            margins: s.margins(),
            unpriced: s.classes.iter().filter(|c| !priced(c)).map(|c| c.name.clone()).collect(),
            run_unpriced: s.classes.iter().any(|c| costs(c) && !priced(c)) || !s.classes.iter().any(priced),
        }
    }

    /// Why metric `m` of `class` is not ranked on cost grounds; `None` where it is ranked.
    fn cost_unranked(&self, m: &Metric, class: Option<&str>) -> Option<String> {
        if m.unit != Unit::Cost {
            return None;
        }
        let unpriced = match class {
            Some(c) => self.unpriced.iter().any(|u| u == c),
            None => self.run_unpriced,
        };
        unpriced.then(|| UNPRICED.to_string())
    }
}

/// A whole number with thousands separators, as a reader counts requests.
fn count_text(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

/// Why a latency of answers is not ranked: the sets answered different numbers of requests
/// (mean answered counts further apart than [`catalogue::ANSWERED_MARGIN`]), so a set could
/// look faster by answering only the fast requests. A point estimate, not an interval: doubt
/// about whether fewer answers bought a lower latency must not earn a star. `answered[p]`
/// holds set p's answered counts, replication by replication; a set with no finite mean
/// (counts unknown) is left out. The one rule of the run report, a sweep's best settings and
/// a sweep's recommendation.
pub(crate) fn answers_unranked(answered: &[Vec<f64>]) -> Option<String> {
    let means: Vec<f64> =
        answered.iter().map(|xs| xs.iter().sum::<f64>() / xs.len().max(1) as f64).filter(|m| m.is_finite()).collect();
    let hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
    (hi - lo > catalogue::ANSWERED_MARGIN)
        .then(|| format!("not comparable: answered {} vs {}", count_text(hi), count_text(lo)))
}

/// The value of metric `m` (of `class`, at index `at` in the first run) in `run`, as tables
/// and expectations compare it. Runs list their classes in scenario order, so the index finds
/// it at once; a search by name is the fallback (a search per figure made thousands of
/// classes quadratic).
fn value(m: &Metric, run: &RunSummary, class: Option<(usize, &str)>) -> Option<f64> {
    match class {
        Some((at, name)) => {
            let c = run.classes.get(at).filter(|c| c.class == name);
            m.value(run, Some(c.or_else(|| run.classes.iter().find(|c| c.class == name))?))
        }
        None => m.value(run, None),
    }
}

/// Each (metric, class) of the catalogue that `first` has: per-class metrics once per class,
/// with the class's index in `first`.
fn figures(first: &RunSummary) -> Vec<(&'static Metric, Option<(usize, String)>)> {
    CATALOGUE
        .iter()
        .flat_map(|m| match m.scope() {
            Scope::Class => {
                first.classes.iter().enumerate().map(|(i, c)| (m, Some((i, c.class.clone())))).collect::<Vec<_>>()
            }
            Scope::Run => vec![(m, None)],
            Scope::Dependency => Vec::new(),
        })
        .collect()
}

/// The order `interval` and `comparison` search in: by metric name, then class (a per-run
/// metric first).
fn key_order(metric: &str, class: Option<&str>, m: &str, c: Option<&str>) -> std::cmp::Ordering {
    metric.cmp(m).then_with(|| class.cmp(&c))
}

/// Mean and 95 % interval of every catalogue metric over `reps`, the replications of one
/// policy set (or of one phase of it), classes as in the first.
pub fn aggregate(reps: &[&RunSummary]) -> Vec<MetricInterval> {
    let Some(first) = reps.first() else { return Vec::new() };
    let mut out: Vec<MetricInterval> = figures(first)
        .into_iter()
        .filter_map(|(m, class)| {
            let at = class.as_ref().map(|(i, c)| (*i, c.as_str()));
            // One value per replication, in seed order (NaN where a replication has none), so
            // that the k-th value is always the k-th seed's.
            let per_seed: Vec<Option<f64>> = reps.iter().map(|r| value(m, r, at)).collect();
            if per_seed.iter().all(Option::is_none) {
                return None;
            }
            let values: Vec<f64> = per_seed.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect();
            let ci = metric_ci95(m.unit, &values);
            let class = class.map(|c| c.1);
            Some(MetricInterval {
                metric: m.name.to_string(),
                class,
                mean: ci.mean,
                ci95: [ci.ci_lo, ci.ci_hi],
                values,
            })
        })
        .collect();
    // Sorted so that `interval` finds a figure by binary search.
    out.sort_by(|a, b| key_order(&a.metric, a.class.as_deref(), &b.metric, b.class.as_deref()));
    out
}

/// The paired comparison of one metric: `sets[p][k]` is set p's value in replication k. The
/// best and its ties follow [`paired_best`] with the metric's margin, the rule a sweep's best
/// settings and `decide` follow too. `unranked` says why the metric is not ranked at all:
/// then no set is best, starred or tied (`best` still names the best mean, for reference).
fn compare_one(
    m: &Metric,
    class: Option<String>,
    names: &[&str],
    sets: &[Vec<f64>],
    margin: f64,
    unranked: Option<String>,
) -> Option<Comparison> {
    let pb = paired_best(m.direction, sets, margin)?;
    let versus: Vec<PairedDifference> = pb
        .versus
        .iter()
        .map(|&(p, d)| PairedDifference {
            policy: names[p].to_string(),
            mean: d.diff.mean,
            ci95: [d.diff.ci_lo, d.diff.ci_hi],
            df: d.df,
            differs: d.differs,
        })
        .collect();
    Some(Comparison {
        metric: m.name.to_string(),
        class,
        best: names.get(pb.best)?.to_string(),
        significant: unranked.is_none() && pb.significant(),
        margin,
        unranked,
        versus,
    })
}

/// For every metric with a direction, the best policy set and its paired differences to the
/// others. `sets[p]` holds policy set p's runs, replication by replication (same seeds).
/// Differences within a metric's margin tie; a latency of answers between sets that
/// answered different numbers, and a cost that does not price failures, are not ranked.
pub fn compare(sets: &[Vec<&RunSummary>], rules: &RankRules) -> Vec<Comparison> {
    let Some(first) = sets.first().and_then(|s| s.first()) else { return Vec::new() };
    let names: Vec<&str> = sets.iter().map(|s| s.first().map_or("", |r| r.policy.as_str())).collect();
    let mut out: Vec<Comparison> = figures(first)
        .into_iter()
        .filter(|(m, _)| m.direction != Direction::Neither)
        .filter_map(|(m, class)| {
            let at = class.as_ref().map(|(i, c)| (*i, c.as_str()));
            let values: Vec<Vec<f64>> = sets
                .iter()
                .map(|reps| reps.iter().map(|r| value(m, r, at)).collect::<Option<Vec<f64>>>())
                .collect::<Option<_>>()?;
            let name = class.as_ref().map(|c| c.1.as_str());
            let unranked = rules.cost_unranked(m, name).or_else(|| match (m.population(), at) {
                (Population::Answers, Some(at)) => answers_unranked(&answered(sets, at)),
                _ => None,
            });
            compare_one(m, class.clone().map(|c| c.1), &names, &values, rules.margins.of(m, name), unranked)
        })
        .collect();
    // Sorted so that `comparison` finds a metric by binary search.
    out.sort_by(|a, b| key_order(&a.metric, a.class.as_deref(), &b.metric, b.class.as_deref()));
    out
}

/// Each set's answered count of class `at` ([`catalogue::answered`]), replication by
/// replication (NaN where the class is missing).
fn answered(sets: &[Vec<&RunSummary>], (index, name): (usize, &str)) -> Vec<Vec<f64>> {
    let class = |r: &RunSummary| {
        let c = r.classes.get(index).filter(|c| c.class == name);
        c.or_else(|| r.classes.iter().find(|c| c.class == name)).map_or(f64::NAN, catalogue::answered)
    };
    sets.iter().map(|reps| reps.iter().map(|r| class(r)).collect()).collect()
}

/// The `replications` block of `summary.json`: `sets[p][k]` is policy set p's run in
/// replication k, whose seed is `seeds[k]`.
pub fn replications(seeds: &[u64], sets: &[Vec<&RunSummary>], rules: &RankRules) -> Replications {
    Replications {
        count: seeds.len() as u32,
        seeds: seeds.to_vec(),
        runs: sets
            .iter()
            .filter_map(|reps| Some(ReplicatedRun { policy: reps.first()?.policy.clone(), metrics: aggregate(reps) }))
            .collect(),
        comparisons: compare(sets, rules),
        rule: crate::stats::RULE.to_string(),
    }
}

/// The interval of `metric` (of `class`) in `run`.
/// Found by binary search in the order [`aggregate`] writes (a summary read back from a file
/// is put in that order by [`sort_for_lookup`]): a search through every figure per table cell
/// made thousands of classes quadratic.
pub fn interval<'a>(run: &'a ReplicatedRun, metric: &str, class: Option<&str>) -> Option<&'a MetricInterval> {
    let k = run.metrics.binary_search_by(|i| key_order(&i.metric, i.class.as_deref(), metric, class)).ok()?;
    run.metrics.get(k)
}

/// The comparison of `metric` (of `class`), found as [`interval`] finds one.
pub fn comparison<'a>(r: &'a Replications, metric: &str, class: Option<&str>) -> Option<&'a Comparison> {
    let k = r.comparisons.binary_search_by(|c| key_order(&c.metric, c.class.as_deref(), metric, class)).ok()?;
    r.comparisons.get(k)
}

/// Put a summary's replication figures read from a file (perhaps written in another order)
/// in the order [`interval`] and [`comparison`] search.
pub fn sort_for_lookup(r: &mut Replications) {
    for run in &mut r.runs {
        run.metrics.sort_by(|a, b| key_order(&a.metric, a.class.as_deref(), &b.metric, b.class.as_deref()));
    }
    r.comparisons.sort_by(|a, b| key_order(&a.metric, a.class.as_deref(), &b.metric, b.class.as_deref()));
}

/// How a policy set stands on one compared metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Best, and better than every other set (paired intervals beyond the margin).
    Best,
    /// Not shown to differ from the best by more than the margin (the best itself, when it
    /// is not better than all).
    TiedBest,
    /// Worse than the best.
    Behind,
    /// The metric is not ranked ([`Comparison::unranked`]): no set is best, tied or behind.
    Unranked,
}

/// How `policy` stands in comparison `c`.
pub fn standing(c: &Comparison, policy: &str) -> Standing {
    if c.unranked.is_some() {
        return Standing::Unranked;
    }
    if c.best == policy {
        return if c.significant { Standing::Best } else { Standing::TiedBest };
    }
    match c.versus.iter().find(|d| d.policy == policy) {
        // Not shown to differ, and with a value to compare: a set without one is unranked.
        Some(d) if !d.differs && !d.mean.is_nan() => Standing::TiedBest,
        _ => Standing::Behind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SECOND;
    use crate::metrics::{Recorder, RecorderSetup};

    /// A run of policy set `policy` whose one class has goodput `goodput`.
    fn run(policy: &str, goodput: f64) -> RunSummary {
        let mut r = Recorder::new(RecorderSetup::one_class(SECOND, SECOND)).summary(SECOND, 0, 0);
        r.policy = policy.to_string();
        r.classes[0].goodput_per_s = goodput;
        r
    }

    fn goodput(reps: &[&RunSummary]) -> MetricInterval {
        let class = reps[0].classes[0].class.clone();
        aggregate(reps).into_iter().find(|i| i.metric == "goodput_per_s" && i.class.as_deref() == Some(&class)).unwrap()
    }

    #[test]
    fn interval_of_ten_replications_by_hand() {
        // 1..=10: mean 5.5, s^2 = 82.5 / 9 = 9.1667, s / sqrt(10) = 0.957427; t(0.975, 9) = 2.262157
        // (tables: 2.262), so the half-width is 2.165852.
        let runs: Vec<RunSummary> = (1..=10).map(|k| run("a", f64::from(k))).collect();
        let i = goodput(&runs.iter().collect::<Vec<_>>());
        assert_eq!(i.mean, 5.5);
        assert!((i.ci95[1] - 5.5 - 2.165_852).abs() < 1e-5, "{i:?}");
        assert!((5.5 - i.ci95[0] - 2.165_852).abs() < 1e-5, "{i:?}");
    }

    #[test]
    fn each_replications_value_is_kept_in_seed_order_and_survives_json() {
        // Three replications whose ratio is 0.5, none (no request: NaN) and 0.7, in that order:
        // the values keep the order and the gap, and the mean is over the two defined ones.
        let runs: Vec<RunSummary> = [0.5, f64::NAN, 0.7]
            .into_iter()
            .map(|v| {
                let mut r = run("a", 1.0);
                r.classes[0].in_time_ratio = v;
                r
            })
            .collect();
        let all = aggregate(&runs.iter().collect::<Vec<_>>());
        let ratio = all.iter().find(|i| i.metric == "in_time_ratio").unwrap();
        assert_eq!((ratio.values[0], ratio.values[2]), (0.5, 0.7));
        assert!(ratio.values[1].is_nan() && ratio.values.len() == 3, "{ratio:?}");
        assert!((ratio.mean - 0.6).abs() < 1e-12);
        // Written as null, read back as NaN; a summary written before `values` reads as empty.
        let text = serde_json::to_string(ratio).unwrap();
        assert!(text.contains(r#""values":[0.5,null,0.7]"#), "{text}");
        let back: MetricInterval = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, ratio);
        let old: MetricInterval =
            serde_json::from_str(r#"{"metric":"in_time_ratio","mean":0.6,"ci95":[0.5,0.7]}"#).unwrap();
        assert!(old.values.is_empty());
    }

    #[test]
    fn a_ratios_interval_stays_within_zero_and_one() {
        // 0, 0, 0.3: mean 0.1, s = sqrt(0.03) = 0.173205, half-width t(0.975, 2) 4.302653 *
        // 0.173205 / sqrt(3) = 0.430265: [-0.330, 0.530] as a t interval, but a ratio is never
        // below 0, so the interval is clamped to [0, 0.530]. Goodput (a rate) is not a ratio.
        let runs: Vec<RunSummary> = [0.0, 0.0, 0.3]
            .into_iter()
            .map(|v| {
                let mut r = run("a", v - 0.2);
                r.classes[0].in_time_ratio = v;
                r
            })
            .collect();
        let all = aggregate(&runs.iter().collect::<Vec<_>>());
        let ratio = all.iter().find(|i| i.metric == "in_time_ratio").unwrap();
        assert!((ratio.mean - 0.1).abs() < 1e-12);
        assert_eq!(ratio.ci95[0], 0.0, "{ratio:?}");
        assert!((ratio.ci95[1] - 0.530_265).abs() < 1e-5, "{ratio:?}");
        let rate = all.iter().find(|i| i.metric == "goodput_per_s").unwrap();
        assert!((rate.ci95[0] - (-0.1 - 0.430_265)).abs() < 1e-5, "{rate:?}");
        // Near 1 the upper end is clamped the same way.
        let high: Vec<RunSummary> = [1.0, 1.0, 0.7]
            .into_iter()
            .map(|v| {
                let mut r = run("a", 0.0);
                r.classes[0].in_time_ratio = v;
                r
            })
            .collect();
        let all = aggregate(&high.iter().collect::<Vec<_>>());
        let ratio = all.iter().find(|i| i.metric == "in_time_ratio").unwrap();
        assert_eq!(ratio.ci95[1], 1.0, "{ratio:?}");
    }

    #[test]
    fn pairing_by_seed_separates_what_the_spread_across_seeds_hides() {
        // Set a: 1..=10 across seeds; b is a minus 0.5 or 1.5 alternately: differences 0.5, 1.5, ...
        // mean 1, s^2 = 10 * 0.25 / 9, half-width 2.262157 * sqrt(0.27778 / 10) = 0.377026: [0.623, 1.377],
        // though the two sets' own intervals (half-width 2.17) overlap almost whole.
        let a: Vec<RunSummary> = (1..=10).map(|k| run("a", f64::from(k))).collect();
        let b: Vec<RunSummary> =
            (1..=10).map(|k| run("b", f64::from(k) - if k % 2 == 0 { 0.5 } else { 1.5 })).collect();
        let sets = vec![a.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>()];
        let c = compare(&sets, &RankRules::default()).into_iter().find(|c| c.metric == "goodput_per_s").unwrap();
        assert_eq!((c.best.as_str(), c.significant), ("a", true));
        let d = &c.versus[0];
        assert_eq!(d.policy, "b");
        assert!((d.mean - 1.0).abs() < 1e-12);
        assert!((d.ci95[0] - (1.0 - 0.377_026)).abs() < 1e-5 && (d.ci95[1] - 1.377_026).abs() < 1e-5, "{d:?}");
        assert_eq!(standing(&c, "a"), Standing::Best);
        assert_eq!(standing(&c, "b"), Standing::Behind);
    }

    #[test]
    fn differences_that_average_zero_tie() {
        // b is a plus 1 or minus 1 alternately: paired mean 0, an interval around 0.
        let a: Vec<RunSummary> = (1..=10).map(|k| run("a", f64::from(k))).collect();
        let b: Vec<RunSummary> =
            (1..=10).map(|k| run("b", f64::from(k) + if k % 2 == 0 { 1.0 } else { -1.0 })).collect();
        let sets = vec![a.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>()];
        let c = compare(&sets, &RankRules::default()).into_iter().find(|c| c.metric == "goodput_per_s").unwrap();
        assert!(!c.significant);
        assert_eq!(standing(&c, "a"), Standing::TiedBest);
        assert_eq!(standing(&c, "b"), Standing::TiedBest);
        // Metrics without a better direction are not compared.
        assert!(compare(&sets, &RankRules::default()).iter().all(|c| c.metric != "requests"));
    }
}
