//! Service graphs against order statistics and convolutions (issue 33). With uncapacitated
//! dependencies (no queue, no hop, no overhead, no policy) every call's latency is its own
//! independent draw, so a request's latency is a function of its plan's draws alone:
//!
//! ```text
//! Parallel All of n calls:       P(max <= t) = prod_i F_i(t)
//! Parallel First:                P(min > t)  = prod_i (1 - F_i(t))       (exponential: e^(-t sum l_i))
//! Quorum(k) of n iid F:          P(k-th <= t) = sum_{j=k}^{n} C(n, j) F^j (1 - F)^(n - j)
//! a sequence of Exp(a), Exp(b):  P(sum > t)  = (b e^(-a t) - a e^(-b t)) / (b - a)   (a != b)
//! ```
//!
//! (David & Nagaraja, *Order Statistics*, 3rd ed., 2003, section 2.1, for the order
//! statistics; the hypoexponential is the convolution of the two densities, Ross,
//! *Introduction to Probability Models*, 10th ed., section 5.2.4.) The means: of the maximum of
//! independent exponentials, by inclusion-exclusion over the product, sum over nonempty
//! subsets S of (-1)^(|S|+1) / sum_S l_i; of the minimum, 1 / sum l_i; of the k-th of n iid
//! Exp(l), (1/l) sum_{i=n-k+1}^{n} 1/i (Renyi's representation of the spacings); of a
//! sequence, the sum of the means. A group of n calls each slow with probability p is slow
//! with probability 1 - (1 - p)^n.
//!
//! Every call runs to its end (a cancelled loser keeps its dependency working), so the mean
//! number of calls in flight at the dependencies is, by Little's law at each dependency and
//! summed over them, the sum over every class's calls of its arrival rate times the called
//! dependency's mean latency.

use std::path::Path;

use super::suite::{Check, check, secs};
use crate::metrics::summary::RunSummary;
use crate::scenario::{self, Arrivals, Join, Latency, Scenario, Step};

/// A dependency's latency law, as far as these closed forms need it.
#[derive(Debug, Clone, PartialEq)]
enum Law {
    /// Exponential with this rate (per second).
    Exp(f64),
    /// Each value (seconds) drawn with equal chance: an empirical latency.
    Values(Vec<f64>),
}

impl Law {
    fn mean_s(&self) -> f64 {
        match self {
            Law::Exp(rate) => 1.0 / rate,
            Law::Values(v) => v.iter().sum::<f64>() / v.len() as f64,
        }
    }

    fn rate(&self) -> Result<f64, String> {
        match self {
            Law::Exp(rate) => Ok(*rate),
            Law::Values(_) => Err("this plan's closed form needs Exponential latencies".into()),
        }
    }
}

/// Relative resolution of a percentile read from the HDR histogram (3 significant digits).
const HDR: f64 = 1e-3;
const HDR_WHY: &str = "a percentile is read from an HDR histogram kept to 3 significant digits";

/// The quantile of the `all` group's latency compared with the product formula.
const QUANTILE: f64 = 0.95;

/// Empirical latency files named relative to the scenario are made absolute against `dir`, the
/// models' folder, so the checks can read the values the runs draw from.
pub(super) fn anchor_data(s: &mut Scenario, dir: &Path) {
    for d in &mut s.dependencies {
        if let Latency::Empirical { file, .. } = &mut d.latency {
            let path = dir.join(&*file);
            *file = std::path::absolute(&path).unwrap_or(path).to_string_lossy().into_owned();
        }
    }
}

/// The graph model: for each class, the closed forms of its plan; then Little's law summed
/// over the dependencies.
pub(super) fn graph_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    if s.dependencies.is_empty() || !s.fleet.overhead.is_zero() || !s.policies[0].stack.is_empty() {
        return Err("the graph model has `dependencies`, zero fleet.overhead and an empty stack".into());
    }
    let mut laws = Vec::new();
    for d in &s.dependencies {
        if d.capacity.is_some() || !d.hop.is_zero() || !d.modes.is_empty() || d.error_rate != Default::default() {
            return Err(format!("dependency {}: no capacity, hop, modes or error rate in the graph model", d.name));
        }
        laws.push(match &d.latency {
            Latency::Exponential { mean } => Law::Exp(1.0 / secs(mean.ns())),
            Latency::Empirical { file, column } => Law::Values(
                scenario::data::latency_samples(Path::new(file), column)
                    .map_err(|e| e.to_string())?
                    .iter()
                    .map(|ms| ms / 1e3)
                    .collect(),
            ),
            _ => return Err(format!("dependency {}: Exponential or Empirical latency", d.name)),
        });
    }
    let law = |name: &str| -> Result<&Law, String> {
        s.dependencies.iter().position(|d| d.name == name).map(|i| &laws[i]).ok_or(format!("no dependency {name}"))
    };
    let mut checks = Vec::new();
    let mut in_flight = 0.0;
    for (i, c) in s.classes.iter().enumerate() {
        let lambda = match c.arrivals {
            Arrivals::Poisson { rate_per_s } if rate_per_s > 0.0 => rate_per_s,
            _ => return Err(format!("class {}: Poisson arrivals with a positive rate", c.name)),
        };
        if c.work.is_some() {
            return Err(format!("class {}: no work in the graph model", c.name));
        }
        let mut calls = Vec::new();
        for step in &c.calls {
            for call in step.calls() {
                calls.push(law(call.dependency().expect("a call"))?);
            }
        }
        in_flight += lambda * calls.iter().map(|l| l.mean_s()).sum::<f64>();
        let t = secs(c.deadline.ns());
        let name = &c.name;
        match c.calls.as_slice() {
            [Step::Parallel { join: Join::All, .. }] if calls.iter().all(|l| matches!(l, Law::Exp(_))) => {
                let rates: Vec<f64> = calls.iter().map(|l| l.rate()).collect::<Result<_, _>>()?;
                let q = max_quantile(&rates, QUANTILE);
                checks.push(check(&format!("{name}: All, mean = E max (ms)"), max_mean(&rates) * 1e3, mean_ms(i)));
                checks.push(Check {
                    tolerance: HDR,
                    why: HDR_WHY,
                    ..check(&format!("{name}: All, p95 from prod F_i (ms)"), q * 1e3, p95_ms(i))
                });
            }
            [Step::Parallel { join: Join::All, .. }] => {
                // Each call slow (past the deadline) with its own p: P(slow) = 1 - prod (1 - p_i).
                let mut fast = 1.0;
                for l in &calls {
                    let Law::Values(v) = l else { return Err(format!("class {name}: one kind of latency")) };
                    if v.contains(&t) {
                        return Err(format!("class {name}: no latency value equal to the deadline"));
                    }
                    fast *= v.iter().filter(|&&x| x < t).count() as f64 / v.len() as f64;
                }
                let n = calls.len();
                checks.push(check(&format!("{name}: {n} calls, P(slow) = 1 - (1-p)^{n}"), 1.0 - fast, late(i)));
            }
            [Step::Parallel { join: Join::First, .. }] => {
                let total: f64 = calls.iter().map(|l| l.rate()).sum::<Result<f64, _>>()?;
                checks.push(check(&format!("{name}: First, mean = 1 / sum l (ms)"), 1e3 / total, mean_ms(i)));
                checks.push(check(&format!("{name}: First, P(min > {})", ms(t)), (-total * t).exp(), late(i)));
            }
            [Step::Parallel { join: Join::Quorum(k), .. }] => {
                let rate = calls[0].rate()?;
                if calls.iter().any(|l| **l != Law::Exp(rate)) {
                    return Err(format!("class {name}: a quorum's calls must be iid"));
                }
                let (n, k) = (calls.len() as u32, *k);
                let mean = (n - k + 1..=n).map(|i| 1.0 / i as f64).sum::<f64>() / rate;
                let f = 1.0 - (-rate * t).exp();
                checks.push(check(&format!("{name}: Quorum({k}) of {n}, mean (ms)"), mean * 1e3, mean_ms(i)));
                checks.push(check(
                    &format!("{name}: Quorum({k}) of {n}, P(> {})", ms(t)),
                    1.0 - at_least(k, n, f),
                    late(i),
                ));
            }
            [Step::Call(_), Step::Call(_)] => {
                let (a, b) = (calls[0].rate()?, calls[1].rate()?);
                if a == b {
                    return Err(format!("class {name}: a sequence of two different rates"));
                }
                let tail = (b * (-a * t).exp() - a * (-b * t).exp()) / (b - a);
                checks.push(check(
                    &format!("{name}: sequence, mean 1/a + 1/b (ms)"),
                    (1.0 / a + 1.0 / b) * 1e3,
                    mean_ms(i),
                ));
                checks.push(check(&format!("{name}: sequence, hypoexp. P(> {})", ms(t)), tail, late(i)));
            }
            _ => return Err(format!("class {name}: a plan the graph model has no closed form for")),
        }
    }
    checks.push(check(
        "Little, all dependencies: mean in flight",
        in_flight,
        Box::new(|r: &RunSummary| r.dependency.mean_in_flight),
    ));
    Ok(checks)
}

fn ms(t: f64) -> String {
    format!("{} ms", t * 1e3)
}

fn mean_ms(class: usize) -> super::suite::Estimator {
    Box::new(move |r: &RunSummary| r.classes[class].latency_ms.mean)
}

fn p95_ms(class: usize) -> super::suite::Estimator {
    Box::new(move |r: &RunSummary| r.classes[class].latency_ms.p95)
}

/// The fraction of the class's requests that finished after their deadline.
fn late(class: usize) -> super::suite::Estimator {
    Box::new(move |r: &RunSummary| {
        let c = &r.classes[class];
        c.deadline_missed as f64 / c.requests.max(1) as f64
    })
}

/// E max of independent exponentials with `rates`: inclusion-exclusion over the subsets.
fn max_mean(rates: &[f64]) -> f64 {
    let n = rates.len();
    let mut mean = 0.0;
    for set in 1u32..(1 << n) {
        let sum: f64 = (0..n).filter(|i| set & (1 << i) != 0).map(|i| rates[i]).sum();
        let sign = if set.count_ones() % 2 == 1 { 1.0 } else { -1.0 };
        mean += sign / sum;
    }
    mean
}

/// The `q` quantile of the maximum: the t where prod (1 - e^(-l_i t)) = q, by bisection
/// (the product rises from 0 to 1).
fn max_quantile(rates: &[f64], q: f64) -> f64 {
    let cdf = |t: f64| rates.iter().map(|l| 1.0 - (-l * t).exp()).product::<f64>();
    let (mut lo, mut hi) = (0.0, 1.0);
    while cdf(hi) < q {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < q { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

/// P(at least k of n independent trials succeed), each with probability `f`.
fn at_least(k: u32, n: u32, f: f64) -> f64 {
    (k..=n).map(|j| binomial(n, j) * f.powi(j as i32) * (1.0 - f).powi((n - j) as i32)).sum()
}

fn binomial(n: u32, k: u32) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_forms_by_hand() {
        // Two exponentials, rates 1 and 2: E max = 1 + 1/2 - 1/3 = 7/6.
        assert!((max_mean(&[1.0, 2.0]) - 7.0 / 6.0).abs() < 1e-12);
        // One exponential: its own mean and quantile -ln(1 - q) / l.
        assert!((max_mean(&[4.0]) - 0.25).abs() < 1e-12);
        assert!((max_quantile(&[4.0], 0.95) - 20f64.ln() / 4.0).abs() < 1e-12);
        // Two iid Exp(1): P(max <= t) = (1 - e^-t)^2 = 0.95 at t = -ln(1 - sqrt(0.95)).
        assert!((max_quantile(&[1.0, 1.0], 0.95) + (1.0 - 0.95f64.sqrt()).ln()).abs() < 1e-12);
        // At least 2 of 3 at f = 1/2: (3 + 1) / 8.
        assert!((at_least(2, 3, 0.5) - 0.5).abs() < 1e-12);
        assert!((at_least(1, 3, 0.1) - (1.0 - 0.9f64.powi(3))).abs() < 1e-12);
        assert_eq!(binomial(5, 2), 10.0);
    }
}
