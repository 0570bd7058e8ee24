//! Closed-form results of queueing theory and the confidence intervals the verification
//! suite compares simulations with. Pure functions of their arguments; no simulation here.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Erlang B: the probability that an arrival finds all `servers` busy in an M/G/c/c loss
/// system offered `erlangs` = arrival rate x mean service time. Insensitive to the service
/// distribution beyond its mean.
///
/// Uses the stable recursion B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1)).
pub fn erlang_b(servers: u32, erlangs: f64) -> f64 {
    (1..=servers).fold(1.0, |b, k| erlangs * b / (k as f64 + erlangs * b))
}

/// Erlang C: the probability that an arrival must wait in an M/M/c queue with unlimited
/// waiting room. Requires `erlangs < servers` (a stable queue); returns 1 otherwise.
pub fn erlang_c(servers: u32, erlangs: f64) -> f64 {
    let c = servers as f64;
    if erlangs >= c {
        return 1.0;
    }
    let b = erlang_b(servers, erlangs);
    c * b / (c - erlangs * (1.0 - b))
}

/// Mean waiting time in queue of an M/M/c queue, in the unit of `mean_service`:
/// Wq = C(c, a) x mean_service / (c - a), with a = arrival rate x mean service.
pub fn mmc_mean_wait(servers: u32, arrival_rate: f64, mean_service: f64) -> f64 {
    let a = arrival_rate * mean_service;
    erlang_c(servers, a) * mean_service / (servers as f64 - a)
}

/// P(X > t) for an exponential X with the given mean.
pub fn exponential_tail(t: f64, mean: f64) -> f64 {
    (-t / mean).exp()
}

/// P(X > t) for a log-normal X with median `median` (= e^mu) and log-scale sigma:
/// 1 - Phi((ln t - mu) / sigma).
pub fn lognormal_tail(t: f64, median: f64, sigma: f64) -> f64 {
    if sigma == 0.0 {
        return if t < median { 1.0 } else { 0.0 };
    }
    let z = (t.ln() - median.ln()) / sigma;
    1.0 - Normal::standard().cdf(z)
}

/// Mean of a log-normal with median `median` and log-scale sigma: median x e^(sigma^2 / 2).
pub fn lognormal_mean(median: f64, sigma: f64) -> f64 {
    median * (sigma * sigma / 2.0).exp()
}

/// A two-sided confidence interval for a mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Sample mean of the replications.
    pub mean: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

impl Interval {
    /// Does the interval contain `x`?
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// The Student-t confidence interval at `level` (e.g. 0.95) for the mean of independent
/// replications. With fewer than two values the interval is the single point (no spread
/// can be estimated), so it contains only that value.
pub fn t_interval(values: &[f64], level: f64) -> Interval {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 {
        return Interval { mean, lo: mean, hi: mean };
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t_quantile(n - 1, 0.5 + level / 2.0) * (var / n as f64).sqrt();
    Interval { mean, lo: mean - half, hi: mean + half }
}

/// The `p` quantile of Student's t with `df` degrees of freedom.
pub fn t_quantile(df: usize, p: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df as f64).expect("df >= 1 gives a valid Student-t").inverse_cdf(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn erlang_b_by_hand() {
        // One server: B = a / (1 + a). Two servers, a = 2: (a^2/2) / (1 + a + a^2/2) = 2/5.
        assert!(close(erlang_b(1, 1.0), 0.5, 1e-12));
        assert!(close(erlang_b(2, 2.0), 0.4, 1e-12));
        // c = 5, a = 4 from the textbook sum: (4^5/120) / sum_{k=0..5} 4^k/k!
        // = 8.5333 / (1 + 4 + 8 + 10.6667 + 10.6667 + 8.5333) = 8.5333 / 42.8667.
        assert!(close(erlang_b(5, 4.0), 8.533_333 / 42.866_667, 1e-6));
        assert_eq!(erlang_b(0, 3.0), 1.0, "no server: every call is lost");
    }

    #[test]
    fn erlang_c_by_hand() {
        // M/M/1: the probability of waiting is the utilisation.
        assert!(close(erlang_c(1, 0.75), 0.75, 1e-12));
        // M/M/2, a = 1: C = (a^2/2 * 2/(2-a)) / (1 + a + a^2/2 * 2/(2-a)) = 1 / 3.
        assert!(close(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12));
        assert_eq!(erlang_c(2, 2.0), 1.0, "unstable queue");
    }

    #[test]
    fn mm1_wait_by_hand() {
        // M/M/1, lambda = 75/s, mu = 100/s: Wq = rho / (mu - lambda) = 0.75 / 25 s = 30 ms.
        assert!(close(mmc_mean_wait(1, 75.0, 0.01), 0.03, 1e-12));
        // M/M/2, lambda = 1, mu = 1: Wq = C / (c mu - lambda) = (1/3) / 1.
        assert!(close(mmc_mean_wait(2, 1.0, 1.0), 1.0 / 3.0, 1e-12));
    }

    #[test]
    fn tails_by_hand() {
        assert!(close(exponential_tail(20.0, 10.0), (-2.0f64).exp(), 1e-15));
        // At the median the log-normal tail is one half; one sigma above, 1 - Phi(1) = 0.158655.
        assert!(close(lognormal_tail(10.0, 10.0, 0.5), 0.5, 1e-12));
        let one_sigma_up = 10.0 * 0.5f64.exp();
        assert!(close(lognormal_tail(one_sigma_up, 10.0, 0.5), 0.158_655, 1e-6));
        assert!(close(lognormal_mean(1.0, 1.0), 0.5f64.exp(), 1e-15));
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 % critical values from standard t tables.
        assert!(close(t_quantile(1, 0.975), 12.706, 1e-3));
        assert!(close(t_quantile(4, 0.975), 2.776, 1e-3));
        assert!(close(t_quantile(9, 0.975), 2.262, 1e-3));
        assert!(close(t_quantile(30, 0.975), 2.042, 1e-3));
    }

    #[test]
    fn interval_by_hand() {
        // Values 1, 2, 3: mean 2, s = 1, half-width t(2, .975) / sqrt 3 = 4.303 / 1.732.
        let i = t_interval(&[1.0, 2.0, 3.0], 0.95);
        assert!(close(i.mean, 2.0, 1e-12));
        assert!(close(i.hi - i.mean, 4.302_653 / 3f64.sqrt(), 1e-5));
        assert!(i.contains(0.0) && !i.contains(4.5));
    }
}
