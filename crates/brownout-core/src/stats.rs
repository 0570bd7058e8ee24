//! Means and 95 % Student-t confidence intervals across replications, and the paired (by
//! seed) comparison that says which of several alternatives is best and which tie with it:
//! the one rule ([`RULE`], [`rule_text`]) that the run report's stars
//! ([`crate::report::replicate`]), a sweep's best settings ([`crate::sweep::best`]), the
//! choice of `decide` and `tune` ([`crate::decide::choose`]) and `diff` all follow. Two
//! alternatives differ when the 95 % interval of their paired difference lies wholly beyond
//! the metric's practical-equivalence margin ([`crate::metrics::catalogue::Metric::margin`], or
//! the scenario's `statistics.margins`); otherwise they tie. The t quantile comes from
//! `statrs` through [`crate::verify::theory::t_quantile`], the one place brownout computes
//! it, by way of [`t95_two_sided`] and [`t95_one_sided`].

use crate::metrics::catalogue::{Direction, Unit};

/// A mean with its two-sided 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanCi {
    /// Sample mean.
    pub mean: f64,
    /// Lower end of the interval.
    pub ci_lo: f64,
    /// Upper end of the interval.
    pub ci_hi: f64,
}

impl MeanCi {
    /// This estimate with its interval kept within `[lo, hi]`, the values the figure can take:
    /// a t interval is symmetric and knows no bounds, but a ratio's lies in [0, 1].
    pub fn within(self, lo: f64, hi: f64) -> MeanCi {
        MeanCi { mean: self.mean, ci_lo: self.ci_lo.clamp(lo, hi), ci_hi: self.ci_hi.clamp(lo, hi) }
    }
}

/// Mean and 95 % Student t interval of the finite values (NaN where there are none).
///
/// With a single value there is no spread to estimate: the interval is unknown (NaN), never
/// the mean itself, so nothing compared through it is ever significant.
pub fn mean_ci95(values: &[f64]) -> MeanCi {
    let xs: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let n = xs.len();
    if n == 0 {
        return MeanCi { mean: f64::NAN, ci_lo: f64::NAN, ci_hi: f64::NAN };
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return MeanCi { mean, ci_lo: f64::NAN, ci_hi: f64::NAN };
    }
    let var = xs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t95_two_sided(n - 1) * (var / n as f64).sqrt();
    MeanCi { mean, ci_lo: mean - half, ci_hi: mean + half }
}

/// [`mean_ci95`] of a metric's values in `unit`: a fraction's interval kept within [0, 1].
pub fn metric_ci95(unit: Unit, values: &[f64]) -> MeanCi {
    let ci = mean_ci95(values);
    if unit == Unit::Fraction { ci.within(0.0, 1.0) } else { ci }
}

/// The paired difference `a[k] - b[k]` of two alternatives run on the same seed in each
/// replication k (common random numbers), with its 95 % Student-t interval, judged against a
/// practical-equivalence margin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// The mean difference and its two-sided 95 % interval.
    pub diff: MeanCi,
    /// Degrees of freedom of the interval: the pairs used minus one; `None` under two pairs
    /// (no interval).
    pub df: Option<usize>,
    /// The margin the difference was judged against (the metric's, in its unit): a
    /// difference whose interval reaches inside `[-margin, margin]` is a tie.
    pub margin: f64,
    /// The interval is known and lies wholly beyond the margin on one side
    /// (`ci_lo > margin` or `ci_hi < -margin`): a difference a reader would act on, backed by
    /// the replications. With margin 0 this is "the interval excludes zero".
    pub differs: bool,
}

impl Paired {
    /// The two are not shown to differ by more than the margin, and both have values to
    /// compare: tied. An alternative with no value on any replication the other has is not
    /// tied, but unranked.
    pub fn ties(&self) -> bool {
        !self.differs && !self.diff.mean.is_nan()
    }
}

/// Two-sided 95 % Student-t quantile, `t(0.975, df)`: the one every interval here uses.
pub fn t95_two_sided(df: usize) -> f64 {
    crate::verify::theory::t_quantile(0.975, df)
}

/// One-sided 95 % Student-t quantile, `t(0.95, df)`: a constraint's bound
/// ([`crate::decide::Bounds`]) asks whether a figure stays on one side of a target, so all
/// 5 % of its doubt sits on that side.
pub fn t95_one_sided(df: usize) -> f64 {
    crate::verify::theory::t_quantile(0.95, df)
}

/// [`Paired`] for `a` against `b`, replication by replication: a replication where either is
/// undefined (NaN) drops out. `differs` iff the 95 % interval of the mean difference is known
/// and lies wholly beyond `margin` on one side: a minimum-effect rule, so a true difference
/// at the margin does not flip between "differs" and "ties" from one set of seeds to the next
/// as a zero-based test would, and a difference too small to act on is never reported.
pub fn paired_ci95(a: &[f64], b: &[f64], margin: f64) -> Paired {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).filter(|d| d.is_finite()).collect();
    let diff = mean_ci95(&diffs);
    let df = (diffs.len() >= 2).then(|| diffs.len() - 1);
    let margin = if margin.is_finite() { margin.abs() } else { 0.0 };
    // A NaN bound (fewer than two pairs) is beyond nothing: a tie, not a claim.
    Paired { diff, df, margin, differs: diff.ci_lo > margin || diff.ci_hi < -margin }
}

/// A margin as a reader reads it in `unit`: `0.1 pt` for a fraction (percentage points),
/// `5 ms`, `0.1/s`, `1` for a count or a cost.
pub fn margin_text(margin: f64, unit: Unit) -> String {
    let num = |v: f64| {
        let t = format!("{v:.6}");
        let t = t.trim_end_matches('0').trim_end_matches('.');
        if t.is_empty() { "0".to_string() } else { t.to_string() }
    };
    match unit {
        Unit::Fraction => format!("{} pt", num(margin * 100.0)),
        Unit::Ms => format!("{} ms", num(margin)),
        Unit::S => format!("{} s", num(margin)),
        Unit::PerS => format!("{}/s", num(margin)),
        Unit::PerMin => format!("{}/min", num(margin)),
        Unit::Count | Unit::Number | Unit::Cost => num(margin),
    }
}

/// The rule every command states beside its stars, bests and ties, for a metric whose margin
/// is `margin` in `unit`.
pub fn rule_text(margin: f64, unit: Unit) -> String {
    format!("{RULE}, a difference within ±{} is a tie", margin_text(margin, unit))
}

/// The part of [`rule_text`] that is the same for every metric.
pub const RULE: &str = "paired by seed, Student-t 95 % (df = n−1)";

/// The best of several alternatives and how each other one compares with it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedBest {
    /// Index of the alternative with the best mean (the first such).
    pub best: usize,
    /// Every other alternative, in order, with the paired difference best minus it.
    pub versus: Vec<(usize, Paired)>,
}

impl PairedBest {
    /// The alternatives tied for best, in order: the best and every one whose paired interval
    /// reaches inside the margin or is unknown ([`Paired::ties`]).
    pub fn tied(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self.versus.iter().filter(|(_, p)| p.ties()).map(|(i, _)| *i).collect();
        out.push(self.best);
        out.sort_unstable();
        out
    }

    /// The best is better than every other alternative with a value (each paired interval
    /// lies beyond the margin, [`Paired::differs`]); false when it is alone, as there is
    /// nothing it was shown to beat.
    pub fn significant(&self) -> bool {
        let mut ranked = self.versus.iter().filter(|(_, p)| !p.diff.mean.is_nan()).peekable();
        ranked.peek().is_some() && ranked.all(|(_, p)| p.differs)
    }
}

/// Whether `a` is better than `b` in direction `d`.
fn better(d: Direction, a: f64, b: f64) -> bool {
    match d {
        Direction::Higher => a > b,
        Direction::Lower => a < b,
        Direction::Neither => false,
    }
}

/// The ranking rule of every best, star and tie: an alternative with no defined value is
/// unranked (NaN here); the others are ranked by their means over the replications in which
/// every one of them has a value, so each mean is over the same seeds (a set missing one
/// replication does not win or lose by the seeds it lacks). All NaN when no replication has
/// a value for every ranked alternative.
pub fn common_means(sets: &[&[f64]]) -> Vec<f64> {
    let ranked: Vec<usize> = (0..sets.len()).filter(|&p| sets[p].iter().any(|v| v.is_finite())).collect();
    let reps = sets.iter().map(|s| s.len()).max().unwrap_or(0);
    let common: Vec<usize> =
        (0..reps).filter(|&k| ranked.iter().all(|&p| sets[p].get(k).is_some_and(|v| v.is_finite()))).collect();
    let mut out = vec![f64::NAN; sets.len()];
    if !common.is_empty() {
        for &p in &ranked {
            out[p] = common.iter().map(|&k| sets[p][k]).sum::<f64>() / common.len() as f64;
        }
    }
    out
}

/// The best of `sets` in direction `d` by [`common_means`] (the first such; an alternative
/// with no value is never best), and each other set's paired difference to it. `sets[i][k]`
/// is alternative i's value in replication k, every alternative having run replication k on
/// the same seed. `None` when nothing can be ranked: no sets, none with a value, or no
/// replication in which all of those with a value have one. `margin` is the metric's
/// ([`paired_ci95`]): a set within it of the best ties with the best.
pub fn paired_best(d: Direction, sets: &[Vec<f64>], margin: f64) -> Option<PairedBest> {
    let means = common_means(&sets.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let mut best: Option<usize> = None;
    for (p, &m) in means.iter().enumerate() {
        if !m.is_nan() && best.is_none_or(|b| better(d, m, means[b])) {
            best = Some(p);
        }
    }
    let best = best?;
    let base = &sets[best];
    let versus = (0..sets.len()).filter(|&p| p != best).map(|p| (p, paired_ci95(base, &sets[p], margin))).collect();
    Some(PairedBest { best, versus })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::theory::t_quantile;
    use std::f64::consts::PI;

    #[test]
    fn closed_forms_for_one_and_two_df() {
        // df = 1 is Cauchy: t_p = tan(pi (p - 1/2)); df = 2: t_p = (2p-1)/sqrt(2p(1-p)).
        for p in [0.6, 0.9, 0.975, 0.995] {
            let cauchy = (PI * (p - 0.5)).tan();
            assert!((t_quantile(p, 1) - cauchy).abs() < 1e-9 * cauchy, "{p}");
            let two = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
            assert!((t_quantile(p, 2) - two).abs() < 1e-9 * two, "{p}");
        }
    }

    #[test]
    fn large_df_tends_to_the_normal() {
        // z_{0.975} = 1.959964 (standard normal table).
        assert!((t_quantile(0.975, 100_000) - 1.959_964).abs() < 1e-4);
    }

    #[test]
    fn interval_by_hand() {
        // 1, 2, 3, 4, 5: mean 3, s^2 = 10/4 = 2.5, half = 2.776445 * sqrt(2.5 / 5).
        let m = mean_ci95(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let half = 2.776_445 * 0.5f64.sqrt();
        assert_eq!(m.mean, 3.0);
        assert!((m.ci_hi - 3.0 - half).abs() < 1e-5);
        assert!((3.0 - m.ci_lo - half).abs() < 1e-5);
        assert!(mean_ci95(&[]).mean.is_nan());
    }

    #[test]
    fn one_value_has_an_unknown_interval() {
        // One value has no spread to estimate: the mean is the value, the interval unknown.
        let one = mean_ci95(&[7.0, f64::NAN]);
        assert_eq!(one.mean, 7.0);
        assert!(one.ci_lo.is_nan() && one.ci_hi.is_nan(), "{one:?}");
    }

    #[test]
    fn one_paired_value_claims_no_difference() {
        // 7 against 6 on one seed: a difference of 1 with no interval, so nothing is
        // significant and both stay tied with the best.
        let pb = paired_best(Direction::Higher, &[vec![7.0], vec![6.0]], 0.0).unwrap();
        assert_eq!(pb.best, 0);
        assert!(!pb.significant());
        assert_eq!(pb.tied(), vec![0, 1]);
        // Two seeds, but one of them undefined for b: still a single pair.
        let pb = paired_best(Direction::Higher, &[vec![7.0, 9.0], vec![6.0, f64::NAN]], 0.0).unwrap();
        assert!(!pb.significant());
    }

    #[test]
    fn best_is_ranked_over_the_seeds_every_candidate_has() {
        // a has no value on seed 2. Over its own seeds a averages 5, b over all three
        // (4 + 4 + 100) / 3 = 36: unequal populations. On the common seeds 0 and 1, a is 5 and
        // b is 4, so a is best.
        let a = vec![5.0, 5.0, f64::NAN];
        let b = vec![4.0, 4.0, 100.0];
        assert_eq!(paired_best(Direction::Higher, &[a.clone(), b.clone()], 0.0).unwrap().best, 0);
        assert_eq!(paired_best(Direction::Higher, &[b, a], 0.0).unwrap().best, 1);
        // A candidate with no value at all is unranked and does not shrink the common seeds.
        let c = vec![f64::NAN; 3];
        let pb = paired_best(Direction::Lower, &[c.clone(), vec![3.0, 1.0, 2.0], vec![2.0, 2.0, 9.0]], 0.0).unwrap();
        assert_eq!(pb.best, 1);
        // No seed on which both have a value: nothing to rank.
        assert!(paired_best(Direction::Higher, &[vec![1.0, f64::NAN], vec![f64::NAN, 2.0]], 0.0).is_none());
        assert!(paired_best(Direction::Higher, &[c], 0.0).is_none());
    }

    #[test]
    fn a_difference_inside_the_margin_ties_even_when_its_interval_excludes_zero() {
        // The repro: 76.6 % against 76.5 %. Paired differences 0.0010, 0.0011,
        // 0.0009, 0.0010: mean 0.001, s^2 = (0 + 1e-8 + 1e-8 + 0) / 3, s = 8.1650e-5,
        // s / sqrt(4) = 4.0825e-5, t(0.975, 3) = 3.182446 (tables: 3.182), half-width
        // 1.2992e-4: [0.000870, 0.001130]. It excludes zero, so a zero-based test stars it;
        // it reaches inside the 0.1-point margin (0.001), so the rule calls it a tie.
        let a = [0.7661, 0.7659, 0.7662, 0.7658];
        let d = [0.0010, 0.0011, 0.0009, 0.0010];
        let b: Vec<f64> = a.iter().zip(d).map(|(x, y)| x - y).collect();
        let p = paired_ci95(&a, &b, 0.001);
        assert!((p.diff.mean - 0.001).abs() < 1e-12, "{p:?}");
        assert!((p.diff.ci_lo - (0.001 - 1.2992e-4)).abs() < 1e-8, "{p:?}");
        assert!((p.diff.ci_hi - (0.001 + 1.2992e-4)).abs() < 1e-8, "{p:?}");
        assert_eq!((p.df, p.margin, p.differs), (Some(3), 0.001, false));
        assert!(p.ties());
        // Margin 0 is the old rule: the interval excludes zero.
        assert!(paired_ci95(&a, &b, 0.0).differs);
        // A 0.5-point difference with the same spread lies wholly beyond the margin.
        let c: Vec<f64> = a.iter().zip(d).map(|(x, y)| x - y - 0.004).collect();
        assert!(paired_ci95(&a, &c, 0.001).differs);
        // And so does the same difference the other way round (ci_hi < -margin).
        assert!(paired_ci95(&c, &a, 0.001).differs);
        // The loss "by 0.0026 points" (2.6e-5 as a fraction) with no spread at all: the
        // interval is the point -2.6e-5, well inside the margin.
        let e: Vec<f64> = a.iter().map(|x| x + 2.6e-5).collect();
        assert!(paired_ci95(&a, &e, 0.001).ties());
    }

    #[test]
    fn degrees_of_freedom_count_the_pairs_used() {
        // Three seeds, one undefined on one side: two pairs, df 1.
        let p = paired_ci95(&[1.0, 2.0, f64::NAN], &[0.0, 0.5, 1.0], 0.0);
        assert_eq!(p.df, Some(1));
        // One pair: no interval, no df, no claim.
        let p = paired_ci95(&[1.0, f64::NAN], &[0.0, 0.5], 0.0);
        assert_eq!((p.df, p.differs), (None, false));
        assert!(p.ties());
    }

    #[test]
    fn paired_best_ties_within_the_margin() {
        // b trails a by exactly 1 on every seed: no spread, the interval is the point 1. With
        // margin 0 it excludes zero and a is significantly best; with margin 1 it is not
        // beyond the margin, so a and b tie.
        let (a, b) = (vec![5.0, 6.0, 7.0], vec![4.0, 5.0, 6.0]);
        let strict = paired_best(Direction::Higher, &[a.clone(), b.clone()], 0.0).unwrap();
        assert!(strict.significant());
        let loose = paired_best(Direction::Higher, &[a, b], 1.0).unwrap();
        assert!(!loose.significant());
        assert_eq!(loose.tied(), vec![0, 1]);
    }

    #[test]
    fn the_rule_states_the_margin_in_the_metrics_unit() {
        assert_eq!(
            rule_text(0.001, Unit::Fraction),
            "paired by seed, Student-t 95 % (df = n−1), a difference within ±0.1 pt is a tie"
        );
        assert_eq!(margin_text(5.0, Unit::Ms), "5 ms");
        assert_eq!(margin_text(0.1, Unit::PerS), "0.1/s");
        assert_eq!(margin_text(1.0, Unit::Count), "1");
    }
}
