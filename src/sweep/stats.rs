//! Replication statistics: the mean and its Student t 95 % confidence interval.
//!
//! The t quantile inverts the exact t distribution function for integer degrees of freedom
//! (Abramowitz & Stegun 26.7.3 and 26.7.4: a finite trigonometric series) by bisection, so it
//! needs no special functions and no crate.

use std::f64::consts::PI;

/// `A(t | df) = P(|T| <= t)` for Student's t with `df >= 1` degrees of freedom (A&S 26.7.3/4).
pub fn t_abs_cdf(t: f64, df: u32) -> f64 {
    assert!(df >= 1, "Student t needs at least one degree of freedom");
    if t <= 0.0 {
        return 0.0;
    }
    let theta = (t / f64::from(df).sqrt()).atan();
    let (s, c2) = (theta.sin(), theta.cos().powi(2));
    if df % 2 == 1 {
        // Odd df: 2/pi * [theta + sin(theta) * (cos + 2/3 cos^3 + 2*4/(3*5) cos^5 + ...)],
        // the series running to cos^(df-2).
        let mut term = theta.cos();
        let mut sum = 0.0;
        let mut k = 1;
        while k + 2 <= df {
            sum += term;
            term *= c2 * f64::from(k + 1) / f64::from(k + 2);
            k += 2;
        }
        2.0 / PI * (theta + s * sum)
    } else {
        // Even df: sin(theta) * [1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...] to cos^(df-2).
        let mut term = 1.0;
        let mut sum = 0.0;
        let mut k = 0;
        while k + 2 <= df {
            sum += term;
            term *= c2 * f64::from(k + 1) / f64::from(k + 2);
            k += 2;
        }
        s * sum
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom, for `p` in (0.5, 1).
///
/// Bisection on [`t_abs_cdf`]: `P(T <= t) = (1 + A(t)) / 2` is monotone, so 200 halvings of
/// a bracket reach the last bit of an f64.
pub fn t_quantile(p: f64, df: u32) -> f64 {
    assert!(p > 0.5 && p < 1.0, "t_quantile takes p in (0.5, 1), got {p}");
    let target = 2.0 * p - 1.0;
    let mut hi = 1.0;
    while t_abs_cdf(hi, df) < target {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_abs_cdf(mid, df) < target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= f64::EPSILON * hi {
            break;
        }
    }
    0.5 * (lo + hi)
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
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t_quantile(0.975, (n - 1) as u32) * (var / n as f64).sqrt();
    MeanCi { mean, ci_lo: mean - half, ci_hi: mean + half }
}

#[cfg(test)]
mod tests {
    use super::*;

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
