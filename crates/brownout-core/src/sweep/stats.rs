//! Means and 95 % Student-t confidence intervals across replications. The t quantile
//! comes from `statrs` through [`crate::verify::theory`], the one place brownout computes it.

/// The `p` quantile of Student's t with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: u32) -> f64 {
    crate::verify::theory::t_quantile(df as usize, p)
}

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

#[cfg(test)]
mod tests {
    use super::*;
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
