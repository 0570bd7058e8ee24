//! Means and 95 % Student-t confidence intervals across replications, and the paired (by
//! seed) comparison that says which of several alternatives is best and which tie with it:
//! the one rule the run report's stars ([`crate::report::replicate`]) and a sweep's best
//! settings ([`crate::sweep::best`]) both follow. The t quantile comes from `statrs` through
//! [`crate::verify::theory::t_quantile`], the one place brownout computes it.

use crate::metrics::catalog::{Direction, Unit};

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
    let i = crate::verify::theory::t_interval(&xs, 0.95);
    MeanCi { mean: i.mean, ci_lo: i.lo, ci_hi: i.hi }
}

/// [`mean_ci95`] of a metric's values in `unit`: a fraction's interval kept within [0, 1].
pub fn metric_ci95(unit: Unit, values: &[f64]) -> MeanCi {
    let ci = mean_ci95(values);
    if unit == Unit::Fraction { ci.within(0.0, 1.0) } else { ci }
}

/// The paired difference `a[k] - b[k]` of two alternatives run on the same seed in each
/// replication k (common random numbers), with its 95 % Student-t interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// The mean difference and its interval.
    pub diff: MeanCi,
    /// Degrees of freedom of the t interval (pairs defined on both sides, minus one); `None`
    /// with fewer than two such pairs, when the interval is unknown.
    pub df: Option<usize>,
    /// The practical-equivalence margin: a difference whose interval lies within
    /// `[-margin, margin]` or overlaps it is a tie.
    pub margin: f64,
    /// The interval is known and lies wholly beyond the margin (`ci_lo > margin` or
    /// `ci_hi < -margin`): the difference is backed by the replications and matters.
    pub differs: bool,
}

impl Paired {
    /// The two are not shown to differ, and both have values to compare: tied. An
    /// alternative with no value on any replication the other has is not tied, but unranked.
    pub fn ties(&self) -> bool {
        !self.differs && !self.diff.mean.is_nan()
    }
}

/// [`Paired`] for `a` against `b`, replication by replication (a replication where either is
/// undefined drops out), with the practical-equivalence `margin` (0: any interval that
/// excludes zero differs).
pub fn paired_ci95(a: &[f64], b: &[f64], margin: f64) -> Paired {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).filter(|d| d.is_finite()).collect();
    let diff = mean_ci95(&diffs);
    let df = (diffs.len() >= 2).then(|| diffs.len() - 1);
    // A NaN bound (fewer than two pairs) lies beyond nothing: a tie, not a claim.
    Paired { diff, df, margin, differs: diff.ci_lo > margin || diff.ci_hi < -margin }
}

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
    /// includes zero or is unknown ([`Paired::ties`]).
    pub fn tied(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self.versus.iter().filter(|(_, p)| p.ties()).map(|(i, _)| *i).collect();
        out.push(self.best);
        out.sort_unstable();
        out
    }

    /// The best is better than every other alternative with a value (each paired interval
    /// excludes zero); false when it is alone, as there is nothing it was shown to beat.
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
/// replication in which all of those with a value have one.
pub fn paired_best(d: Direction, sets: &[Vec<f64>]) -> Option<PairedBest> {
    let means = common_means(&sets.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let mut best: Option<usize> = None;
    for (p, &m) in means.iter().enumerate() {
        if !m.is_nan() && best.is_none_or(|b| better(d, m, means[b])) {
            best = Some(p);
        }
    }
    let best = best?;
    let base = &sets[best];
    let versus = (0..sets.len()).filter(|&p| p != best).map(|p| (p, paired_ci95(base, &sets[p], 0.0))).collect();
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
    fn paired_differences_by_hand_against_a_margin() {
        // Differences 1, 2, 3, 4, 5 (and a pair dropped for its NaN): mean 3, half-width
        // t(0.975, 4) 2.776445 * sqrt(2.5 / 5) = 1.963243, so [1.036757, 4.963243] with 4 df.
        let a = [11.0, 12.0, 13.0, 14.0, 15.0, f64::NAN];
        let b = [10.0; 6];
        let p = paired_ci95(&a, &b, 1.0);
        assert_eq!((p.diff.mean, p.df, p.margin), (3.0, Some(4), 1.0));
        assert!((p.diff.ci_lo - 1.036_757).abs() < 1e-5, "{p:?}");
        assert!(p.differs, "the interval lies beyond a margin of 1");
        assert!(!paired_ci95(&a, &b, 1.1).differs, "1.0368 is inside a margin of 1.1: a tie");
        assert!(paired_ci95(&a, &b, 1.1).ties());
        // The other way round the interval is [-4.96, -1.04]: below -1.
        assert!(paired_ci95(&b, &a, 1.0).differs);
        // One pair: no interval, no degrees of freedom, no claim.
        let one = paired_ci95(&[5.0], &[1.0], 0.0);
        assert_eq!((one.df, one.differs), (None, false));
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
        let pb = paired_best(Direction::Higher, &[vec![7.0], vec![6.0]]).unwrap();
        assert_eq!(pb.best, 0);
        assert!(!pb.significant());
        assert_eq!(pb.tied(), vec![0, 1]);
        // Two seeds, but one of them undefined for b: still a single pair.
        let pb = paired_best(Direction::Higher, &[vec![7.0, 9.0], vec![6.0, f64::NAN]]).unwrap();
        assert!(!pb.significant());
    }

    #[test]
    fn best_is_ranked_over_the_seeds_every_candidate_has() {
        // a has no value on seed 2. Over its own seeds a averages 5, b over all three
        // (4 + 4 + 100) / 3 = 36: unequal populations. On the common seeds 0 and 1, a is 5 and
        // b is 4, so a is best.
        let a = vec![5.0, 5.0, f64::NAN];
        let b = vec![4.0, 4.0, 100.0];
        assert_eq!(paired_best(Direction::Higher, &[a.clone(), b.clone()]).unwrap().best, 0);
        assert_eq!(paired_best(Direction::Higher, &[b, a]).unwrap().best, 1);
        // A candidate with no value at all is unranked and does not shrink the common seeds.
        let c = vec![f64::NAN; 3];
        let pb = paired_best(Direction::Lower, &[c.clone(), vec![3.0, 1.0, 2.0], vec![2.0, 2.0, 9.0]]).unwrap();
        assert_eq!(pb.best, 1);
        // No seed on which both have a value: nothing to rank.
        assert!(paired_best(Direction::Higher, &[vec![1.0, f64::NAN], vec![f64::NAN, 2.0]]).is_none());
        assert!(paired_best(Direction::Higher, &[c]).is_none());
    }
}
