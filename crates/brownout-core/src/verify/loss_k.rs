//! M/M/c/K: the dependency's own finite queue as a loss system. With `c` servers and room for
//! `queue` waiting calls, at most K = c + queue calls are at the dependency; a call that finds
//! K there is answered 503 at once (never served). The closed form is the birth-death chain of
//! Gross & Harris, *Fundamentals of Queueing Theory* (4th ed., 2008), section 2.5 ("Finite
//! buffer M/M/c/K"), with a = lambda / mu and rho = a / c:
//!
//! ```text
//! p_n = p_0 a^n / n!                  for 0 <= n <= c
//! p_n = p_0 a^c / c! x rho^(n - c)    for c <= n <= K,    p_0 = 1 / sum of the above
//! ```
//!
//! An arrival is blocked with probability p_K (Poisson arrivals see time averages). The admitted
//! rate is lambda_eff = lambda (1 - p_K), the mean number at the dependency L = sum n p_n, and by
//! Little's law the mean time in system of an admitted call W = L / lambda_eff (queue wait plus
//! service). Unlike M/M/c, the chain is stable at any load, so the model may run at rho >= 1.

use super::suite::{Check, check, class0, exponential_mean_s, no_extra_delay, single_class};
use crate::metrics::summary::RunSummary;
use crate::scenario::Scenario;

/// Most calls the model may hold (K): the chain is summed term by term.
const MOST: u32 = 100_000;

/// (blocking probability p_K, mean number in system L) of M/M/c/K with offered load
/// `erlangs` = lambda / mu, `servers` = c >= 1 and `capacity` = K >= c.
pub(crate) fn mmck(servers: u32, capacity: u32, erlangs: f64) -> (f64, f64) {
    // Unnormalised terms t_n = p_n / p_0, built by t_n = t_(n-1) a / min(n, c), rescaled
    // together when they grow large, so a long chain at rho > 1 does not overflow.
    let (mut term, mut sum, mut weighted) = (1.0f64, 1.0f64, 0.0f64);
    for n in 1..=capacity {
        term *= erlangs / n.min(servers) as f64;
        sum += term;
        weighted += n as f64 * term;
        if term > 1e250 {
            term *= 1e-250;
            sum *= 1e-250;
            weighted *= 1e-250;
        }
    }
    (term / sum, weighted / sum)
}

/// The M/M/c/K model: blocking probability and the admitted calls' mean time in system.
pub(super) fn mmck_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    let lambda = single_class(s)?;
    let mean_s = exponential_mean_s(&s.dependency.latency)?;
    no_extra_delay(s)?;
    let d = &s.dependency;
    if !d.modes.is_empty() || d.replicas.is_some() || d.error_rate != Default::default() {
        return Err("the M/M/c/K model's dependency has no modes, replicas or error rate".into());
    }
    let (servers, queue) = match &d.capacity {
        Some(c) if c.servers.saturating_add(c.queue) <= MOST => (c.servers, c.queue),
        _ => return Err(format!("dependency.capacity must be given with servers + queue <= {MOST}")),
    };
    let k = servers + queue;
    let (blocked, l) = mmck(servers, k, lambda * mean_s);
    let w_ms = l / (lambda * (1.0 - blocked)) * 1e3;
    // With no error rate, no mode and no policy, every error is a call the full queue shed.
    let shed = |r: &RunSummary| {
        let c = class0(r);
        c.outcomes.error as f64 / c.requests.max(1) as f64
    };
    Ok(vec![
        check(&format!("M/M/{servers}/{k} P(blocked) = p_K"), blocked, Box::new(shed)),
        check(
            &format!("M/M/{servers}/{k} mean time in system (ms)"),
            w_ms,
            Box::new(|r: &RunSummary| r.dependency.time_ms.mean),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmck_by_hand() {
        // c = 2, K = 5, a = 2 (rho = 1): t = 1, 2, 2, 2, 2, 2, sum 11. p_K = 2/11,
        // L = (2 + 4 + 6 + 8 + 10) / 11 = 30/11.
        let (b, l) = mmck(2, 5, 2.0);
        assert!((b - 2.0 / 11.0).abs() < 1e-12, "{b}");
        assert!((l - 30.0 / 11.0).abs() < 1e-12, "{l}");
        // M/M/1/1 is Erlang B with one server: a / (1 + a); L = the same.
        let (b, l) = mmck(1, 1, 0.5);
        assert!((b - 1.0 / 3.0).abs() < 1e-12 && (l - 1.0 / 3.0).abs() < 1e-12);
        // M/M/c/c is Erlang B: c = 5, a = 4 gives 8.5333 / 42.8667 (theory::erlang_b's test).
        assert!((mmck(5, 5, 4.0).0 - super::super::theory::erlang_b(5, 4.0)).abs() < 1e-12);
        // M/M/1/K at rho = 0.5: p_K = (1 - rho) rho^K / (1 - rho^(K+1)) (Gross & Harris
        // eq. 2.41); K = 3: 0.5 x 0.125 / 0.9375 = 1/15.
        assert!((mmck(1, 3, 0.5).0 - 1.0 / 15.0).abs() < 1e-12);
    }

    #[test]
    fn a_long_chain_above_capacity_does_not_overflow() {
        // rho = 2 over 10,000 places: nearly every place is at the top, p_K -> 1 - 1/rho.
        let (b, l) = mmck(1, 10_000, 2.0);
        assert!((b - 0.5).abs() < 1e-9, "{b}");
        assert!(l.is_finite() && l > 9_990.0, "{l}");
    }
}
