//! M/G/1 processor sharing (`capacity.sharing: ProcessorSharing` on one server): with
//! Poisson arrivals at rate lambda and service requirements of mean E[S], the load is
//! rho = lambda E[S] and the mean time in system is
//!
//! ```text
//! W = E[S] / (1 - rho)
//! ```
//!
//! whatever the service distribution beyond its mean (insensitivity: Kleinrock, *Queueing
//! Systems* vol. 2, 1976, section 4.4; Harchol-Balter, *Performance Modeling and Design of
//! Computer Systems*, 2013, section 22.2). The models run it with exponential and log-normal
//! service of the same mean, where a FIFO queue would differ (Pollaczek-Khinchine): at rho =
//! 0.8 and a 10 ms mean, M/M/1 gives 50 ms either way, but a log-normal with sigma = 1 gives
//! 64.4 ms under FIFO and still 50 ms under sharing.
//!
//! The model's room, `servers + queue` = K calls, must make a loss negligible: M/G/1-PS with
//! room for K is a symmetric queue whose number present is geometric cut at K (Kelly,
//! *Reversibility and Stochastic Networks*, 1979, section 3.3), so a call is refused with
//! probability (1 - rho) rho^K / (1 - rho^(K+1)) < rho^K, held here below 1e-9.

use super::suite::{Check, check, latency_mean_s, no_extra_delay, single_class};
use crate::metrics::summary::RunSummary;
use crate::scenario::{Scenario, Sharing};

/// The largest refusal probability (bounded by rho^K) the model may neglect.
const NEGLIGIBLE: f64 = 1e-9;

/// The M/G/1-PS model: the dependency's mean time in system against E[S] / (1 - rho).
pub(super) fn ps_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    let lambda = single_class(s)?;
    let mean_s = latency_mean_s(&s.dependency.latency)?;
    no_extra_delay(s)?;
    let d = &s.dependency;
    if !d.modes.is_empty()
        || d.replicas.is_some()
        || d.error_rate != Default::default()
        || d.drift != Default::default()
    {
        return Err("the M/G/1-PS model's dependency has no modes, replicas, drift or error rate".into());
    }
    let room = match &d.capacity {
        Some(c) if c.sharing == Sharing::ProcessorSharing && c.servers == 1 => c.servers.saturating_add(c.queue),
        _ => return Err("dependency.capacity must be one server with sharing: ProcessorSharing".into()),
    };
    let rho = lambda * mean_s;
    if rho >= 1.0 {
        return Err(format!("load rho = {rho} >= 1: unstable"));
    }
    if rho.powf(f64::from(room)) > NEGLIGIBLE {
        return Err(format!(
            "room for {room} calls refuses up to rho^K = {:e} of them: raise queue",
            rho.powf(f64::from(room))
        ));
    }
    let w_ms = mean_s / (1.0 - rho) * 1e3;
    Ok(vec![check(
        &format!("M/G/1-PS mean time in system, rho {rho:.2} (ms)"),
        w_ms,
        Box::new(|r: &RunSummary| r.dependency.time_ms.mean),
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model `mg1-ps-*.ron` reads, with `latency` and `rate` requests per second.
    fn model(latency: &str, rate: f64, queue: u32) -> Scenario {
        let text = format!(
            r#"Scenario(name: "ps", seed: 1, horizon: "100s",
            fleet: (workers: (slots: 100000), pool: (max_connections: 100000, acquire_timeout: "1h")),
            classes: [(name: "api", arrivals: Poisson(rate_per_s: {rate}), deadline: "1h")],
            dependency: (latency: {latency}, capacity: (servers: 1, queue: {queue}, sharing: ProcessorSharing)),
            policies: [(name: "none", stack: [])])"#
        );
        crate::scenario::load_text(std::path::Path::new("ps.ron"), &text).expect("a valid model")
    }

    #[test]
    fn the_closed_form_by_hand() {
        // E[S] = 10 ms at 80/s: rho = 0.8, W = 10 / 0.2 = 50 ms, for any distribution.
        for latency in [r#"Exponential(mean: "10ms")"#, r#"Constant("10ms")"#] {
            let c = ps_checks(&model(latency, 80.0, 1000)).expect("fits");
            assert!((c[0].expected - 50.0).abs() < 1e-9, "{}", c[0].expected);
        }
        // Log-normal with median 10 / e^0.5 ms and sigma = 1 has mean 10 ms (within the ns
        // the median rounds to): rho = 0.5 at 50/s, W = 20 ms.
        let c = ps_checks(&model(r#"LogNormal(median: "6065307ns", sigma: 1.0)"#, 50.0, 1000)).expect("fits");
        assert!((c[0].expected - 20.0).abs() < 1e-5, "{}", c[0].expected);
    }

    #[test]
    fn a_model_that_does_not_fit_is_refused() {
        // 0.8^50 = 1.4e-5: too many refused to neglect.
        let refused =
            |rate, queue| ps_checks(&model(r#"Exponential(mean: "10ms")"#, rate, queue)).err().expect("refused");
        assert!(refused(80.0, 49).contains("raise queue"));
        assert!(refused(100.0, 1000).contains("unstable"));
    }
}
