//! The token bucket's bound (`RateLimit`, issue 34): a bucket of `burst` tokens refilled at
//! `rate` admits at most `burst + rate x t` attempts in any window of length `t`. The bucket's
//! level (whole tokens plus the part toward the next) never exceeds `burst` and grows by at
//! most `t / period` over `t` (one token per `period` = `ceil(1e9 / rate_per_s)` ns, never
//! faster than `rate`), and each admission takes a whole token, so the admissions in any
//! window of length `t` are at most `burst + t / period <= burst + rate t` (Le Boudec and
//! Thiran, *Network Calculus*, 2001, section 1.2.2: a (rate, burst) arrival curve).
//!
//! A bound is a property of every sample path, not a mean: the model `token-bucket.ron`
//! sends bursts far above the rate between quiet spells that refill the bucket, so the bound
//! is nearly reached, and each row passes only when no replication's busiest window of
//! length `t` admits more than the bound. The admission times are the calls' starts (the
//! bucket is the only layer, the dependency has no queue and the fleet adds no time).

use std::path::Path;

use rayon::prelude::*;

use super::suite::{CheckResult, LEVEL, Options, SuiteError, replication_seed};
use super::theory;
use crate::engine::Time;
use crate::model::{Model, RunOptions, run_policy_recorded};
use crate::policy::PolicySpec;
use crate::scenario::{self, Scenario};

/// The model file's stem.
const STEM: &str = "token-bucket";

/// The window lengths checked (ns): from a few tokens' time to most of a burst.
const WINDOWS: [Time; 4] = [10_000_000, 100_000_000, 1_000_000_000, 5_000_000_000];

const WHY: &str = "a bound on every sample path: passes when no replication's busiest window exceeds it";

/// The bucket's (burst, tokens per second) from the model's only layer.
fn bucket(s: &Scenario) -> Result<(u32, f64), String> {
    if s.fleet.instances != 1 || s.dependency.capacity.is_some() || !s.fleet.overhead.is_zero() {
        return Err("the token-bucket model has one instance, an infinite dependency and no overhead".into());
    }
    match s.policies[0].stack.as_slice() {
        [layer] => match &layer.policy {
            PolicySpec::RateLimit(c) if !c.per_class => Ok((c.burst, c.rate_per_s)),
            _ => Err("the token-bucket model's only layer is a RateLimit shared by its classes".into()),
        },
        _ => Err("the token-bucket model's stack is exactly one RateLimit".into()),
    }
}

/// The most of the sorted `times` that fall in any closed window [a, a + t]: the bound holds
/// for closed windows too (the level grows by at most t / period over any span of length t),
/// and a bucket that starts a burst full reaches it exactly there (its token due at a + t
/// counts), so an extra admission anywhere fails the row.
pub(crate) fn busiest(times: &[Time], t: Time) -> usize {
    let mut most = 0;
    let mut end = 0;
    for (i, &a) in times.iter().enumerate() {
        while end < times.len() && times[end] <= a.saturating_add(t) {
            end += 1;
        }
        most = most.max(end - i);
    }
    most
}

/// Run the token-bucket model once per replication and judge its busiest windows against
/// the bound, with a last row for the worst slack (bound minus admissions) over every
/// window length and replication. `tick` is called as each run ends.
pub(super) fn bucket_rows(opts: &Options, tick: &(dyn Fn() + Sync)) -> Result<Vec<CheckResult>, SuiteError> {
    let path = opts.dir.join(format!("{STEM}.ron"));
    let s = scenario::load(&path).map_err(SuiteError::Load)?;
    let model_err = |reason| SuiteError::Model { path: path.clone(), reason };
    let (burst, rate) = bucket(&s).map_err(model_err)?;
    let replications = opts.replications.unwrap_or(if opts.quick { 5 } else { 10 });
    // Per replication, the busiest window of each length.
    let most: Vec<Vec<f64>> = (0..replications)
        .into_par_iter()
        .map(|r| {
            let out = busiest_of_run(&s, &opts.dir, replication_seed(opts.seed, r));
            tick();
            out.map_err(|why| format!("replication {r}: {why}"))
        })
        .collect::<Result<_, _>>()
        .map_err(model_err)?;
    let bound = |t: Time| f64::from(burst) + rate * t as f64 / 1e9;
    let interval = |values: &[f64]| theory::t_interval(values, LEVEL);
    let mut rows = Vec::new();
    let mut slack = vec![f64::INFINITY; replications];
    for (w, &t) in WINDOWS.iter().enumerate() {
        let values: Vec<f64> = most.iter().map(|m| m[w]).collect();
        for (s, v) in slack.iter_mut().zip(&values) {
            *s = s.min(bound(t) - v);
        }
        let ci = interval(&values);
        rows.push(CheckResult {
            model: STEM.into(),
            quantity: format!("most admitted in {} ms <= burst + rate t", t / 1_000_000),
            expected: bound(t),
            ci,
            family: ci,
            tolerance: 0.0,
            why: WHY,
            passed: values.iter().all(|&v| v <= bound(t)),
        });
    }
    let ci = interval(&slack);
    rows.push(CheckResult {
        model: STEM.into(),
        quantity: "worst slack: bound - most admitted >= 0".into(),
        expected: 0.0,
        ci,
        family: ci,
        tolerance: 0.0,
        why: WHY,
        passed: slack.iter().all(|&s| s >= 0.0),
    });
    Ok(rows)
}

/// The busiest window of each of `WINDOWS` in one run of `s` with `seed`.
fn busiest_of_run(s: &Scenario, dir: &Path, seed: u64) -> Result<Vec<f64>, String> {
    let model = Model::build(s, seed, dir).map_err(|e| e.to_string())?;
    let (_, records) = run_policy_recorded(&model, 0, RunOptions::default()).map_err(|e| e.to_string())?;
    // Calls are recorded as they start, in time order: each is one admitted attempt.
    let times: Vec<Time> = records.calls.iter().map(|c| c.start).collect();
    debug_assert!(times.is_sorted(), "calls are recorded in time order");
    Ok(WINDOWS.iter().map(|&t| busiest(&times, t) as f64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busiest_window_by_hand() {
        let times = [0, 1, 2, 10, 11, 20];
        assert_eq!(busiest(&times, 0), 1);
        assert_eq!(busiest(&times, 1), 2); // [0, 1]
        assert_eq!(busiest(&times, 2), 3); // [0, 2]
        assert_eq!(busiest(&times, 9), 3); // [0, 9], [1, 10], [2, 11]: three each
        assert_eq!(busiest(&times, 10), 4); // [0, 10]: 0, 1, 2, 10; [1, 11]: 1, 2, 10, 11
        assert_eq!(busiest(&times, 11), 5); // [0, 11]
        assert_eq!(busiest(&[], 5), 0);
    }
}
