//! Means and 95 % Student-t confidence intervals across replications, and the paired (by
//! seed) comparison that says which of several alternatives is best and which tie with it:
//! the one rule the run report's stars ([`crate::report::replicate`]) and a sweep's best
//! settings ([`super::best`]) both follow. The t quantile comes from `statrs` through
//! [`crate::verify::theory::t_quantile`], the one place brownout computes it.

use crate::metrics::catalog::Direction;

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

/// Mean and 95 % Student t interval of the finite values (NaN where there are none).
///
/// With a single value there is no spread to estimate: the interval collapses to the mean.
pub fn mean_ci95(values: &[f64]) -> MeanCi {
    let xs: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let n = xs.len();
    if n == 0 {
        return MeanCi { mean: f64::NAN, ci_lo: f64::NAN, ci_hi: f64::NAN };
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return MeanCi { mean, ci_lo: mean, ci_hi: mean };
    }
    let i = crate::verify::theory::t_interval(&xs, 0.95);
    MeanCi { mean: i.mean, ci_lo: i.lo, ci_hi: i.hi }
}

/// The paired difference `a[k] - b[k]` of two alternatives run on the same seed in each
/// replication k (common random numbers), with its 95 % Student-t interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// The mean difference and its interval.
    pub diff: MeanCi,
    /// The interval excludes zero: the difference is backed by the replications. With one
    /// replication the interval is the difference itself, so only an exact equality ties.
    pub excludes_zero: bool,
}

/// [`Paired`] for `a` against `b`, replication by replication (a replication where either is
/// undefined drops out).
pub fn paired_ci95(a: &[f64], b: &[f64]) -> Paired {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let diff = mean_ci95(&diffs);
    // A NaN bound (no replication defined on both sides) excludes nothing: a tie, not a claim.
    Paired { diff, excludes_zero: diff.ci_lo > 0.0 || diff.ci_hi < 0.0 }
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
    /// includes zero.
    pub fn tied(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self.versus.iter().filter(|(_, p)| !p.excludes_zero).map(|(i, _)| *i).collect();
        out.push(self.best);
        out.sort_unstable();
        out
    }

    /// The best is better than every other alternative (each paired interval excludes zero);
    /// false when it is alone, as there is nothing it was shown to beat.
    pub fn significant(&self) -> bool {
        !self.versus.is_empty() && self.versus.iter().all(|(_, p)| p.excludes_zero)
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

/// The best of `sets` in direction `d` by mean (the first such; a set with no defined value
/// is never best unless all are undefined), and each other set's paired difference to it.
/// `sets[i][k]` is alternative i's value in replication k, every alternative having run
/// replication k on the same seed. `None` for no sets.
pub fn paired_best(d: Direction, sets: &[Vec<f64>]) -> Option<PairedBest> {
    let means: Vec<f64> = sets.iter().map(|v| mean_ci95(v).mean).collect();
    let mut best = 0;
    for p in 1..sets.len() {
        // An undefined mean (NaN) compares false both ways: a defined one replaces it.
        if better(d, means[p], means[best]) || (means[best].is_nan() && !means[p].is_nan()) {
            best = p;
        }
    }
    let base = sets.get(best)?;
    let versus = (0..sets.len()).filter(|&p| p != best).map(|p| (p, paired_ci95(base, &sets[p]))).collect();
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
        let one = mean_ci95(&[7.0, f64::NAN]);
        assert_eq!((one.mean, one.ci_lo, one.ci_hi), (7.0, 7.0, 7.0));
        assert!(mean_ci95(&[]).mean.is_nan());
    }
}
