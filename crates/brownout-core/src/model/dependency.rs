//! The dependency: latency distribution, drift over time, error rate, mode timeline and an
//! optional finite capacity. Immutable; shared by every policy run of a scenario.
//!
//! Draws are counter-based on (request class, request index, attempt), so the call made by
//! the same attempt of the same request gets the same latency under every policy.

use std::path::Path;

use rand::SeedableRng;
use rand_distr::{Distribution, Exp, LogNormal};

use crate::engine::{Counter, MILLISECOND, SECOND, Stream, Time, label_hash};
use crate::scenario::{Delay, Dependency, Drift, Latency, Mode, Profile, data};

/// A latency distribution ready to sample.
#[derive(Debug, Clone)]
pub(crate) enum LatencyDist {
    /// Fixed.
    Constant(Time),
    /// Exponential.
    Exponential(Exp<f64>),
    /// Log-normal.
    LogNormal(LogNormal<f64>),
    /// Sorted observed values.
    Empirical(Vec<Time>),
}

impl LatencyDist {
    /// Build from the scenario's description; `dir` resolves relative file paths.
    pub(crate) fn build(l: &Latency, dir: &Path) -> Result<Self, String> {
        Ok(match l {
            Latency::Constant(d) => LatencyDist::Constant(d.ns()),
            Latency::Exponential { mean } => {
                LatencyDist::Exponential(Exp::new(1.0 / mean.ns() as f64).map_err(|e| format!("Exponential: {e}"))?)
            }
            Latency::LogNormal { median, sigma } => LatencyDist::LogNormal(
                LogNormal::new((median.ns() as f64).ln(), *sigma).map_err(|e| format!("LogNormal: {e}"))?,
            ),
            Latency::Empirical { file, column } => {
                let values = data::latency_samples(&dir.join(file), column).map_err(|e| e.to_string())?;
                let mut ns: Vec<Time> = values.iter().map(|ms| (ms * MILLISECOND as f64) as Time).collect();
                ns.sort_unstable();
                LatencyDist::Empirical(ns)
            }
        })
    }

    /// Draw with a generator.
    pub(crate) fn sample(&self, rng: &mut Stream) -> f64 {
        match self {
            LatencyDist::Constant(t) => *t as f64,
            LatencyDist::Exponential(e) => e.sample(rng),
            LatencyDist::LogNormal(l) => l.sample(rng),
            LatencyDist::Empirical(v) => {
                let i = (rand::RngExt::random::<f64>(rng) * v.len() as f64) as usize;
                v[i.min(v.len() - 1)] as f64
            }
        }
    }
}

/// A fixed or drawn delay. Draws are counter-based on (key, what), so a request's or a
/// call's delay never depends on other requests, and a fixed delay draws nothing.
#[derive(Debug, Clone)]
pub(crate) enum DelayDist {
    /// The same every time.
    Fixed(Time),
    /// Drawn from the distribution with its own counter.
    Random(LatencyDist, Counter),
}

impl DelayDist {
    /// Build from the scenario; `label` names the draws, `dir` resolves data files.
    pub(crate) fn build(d: &Delay, seed: u64, label: u64, dir: &Path) -> Result<Self, String> {
        Ok(match d {
            Delay::Fixed(t) => DelayDist::Fixed(t.ns()),
            Delay::Random(l) => DelayDist::Random(LatencyDist::build(l, dir)?, Counter::new(seed, label)),
        })
    }

    /// The same delay with its draws derived from `seed` (a replication's); `label` as built.
    pub(crate) fn reseeded(&self, seed: u64, label: u64) -> Self {
        match self {
            DelayDist::Fixed(t) => DelayDist::Fixed(*t),
            DelayDist::Random(dist, _) => DelayDist::Random(dist.clone(), Counter::new(seed, label)),
        }
    }

    /// The delay of draw (`key`, `what`).
    pub(crate) fn at(&self, key: u64, what: u64) -> Time {
        match self {
            DelayDist::Fixed(t) => *t,
            DelayDist::Random(dist, draws) => {
                let mut rng = Stream::seed_from_u64(draws.u64(key, what));
                dist.sample(&mut rng).clamp(0.0, 1.0e15) as Time
            }
        }
    }
}

/// A piecewise-linear function of time, constant outside its points.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Piecewise {
    points: Vec<(Time, f64)>,
}

impl Piecewise {
    /// A constant.
    pub(crate) fn constant(v: f64) -> Self {
        Self { points: vec![(0, v)] }
    }

    /// Through the given (time, value) points (sorted by time, non-empty).
    pub(crate) fn new(points: Vec<(Time, f64)>) -> Self {
        assert!(!points.is_empty());
        Self { points }
    }

    /// The value at `t`.
    pub(crate) fn at(&self, t: Time) -> f64 {
        let p = &self.points;
        let i = p.partition_point(|&(pt, _)| pt <= t);
        if i == 0 {
            return p[0].1;
        }
        if i == p.len() {
            return p[p.len() - 1].1;
        }
        let (t0, v0) = p[i - 1];
        let (t1, v1) = p[i];
        if t1 == t0 {
            return v1;
        }
        v0 + (v1 - v0) * ((t - t0) as f64 / (t1 - t0) as f64)
    }
}

/// The dependency's behaviour, immutable during runs.
#[derive(Debug, Clone)]
pub struct DependencyModel {
    base: LatencyDist,
    drift: Piecewise,
    /// `Drift::Periodic` as (period, duration, factor): one remainder instead of a search.
    periodic: Option<(Time, Time, f64)>,
    error_rate: Piecewise,
    /// The error rate is never above 0, so the error draw (always in (0, 1)) can be skipped
    /// without changing any result: a hot-path saving of one counter hash per call.
    never_errors: bool,
    modes: Vec<(Time, Mode)>,
    /// (servers, queue) when capacity is finite.
    pub(crate) capacity: Option<(u32, u32)>,
    /// Network time added to each call, drawn per call when it is a distribution.
    hop: DelayDist,
    /// When abandoned calls are cancelled: the time (ns) the cancel takes to arrive.
    pub(crate) cancel_delay: Option<Time>,
    latency_draws: Counter,
    error_draws: Counter,
}

/// What the dependency does with one call, decided when it starts service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPlan {
    /// Time from service start to the answer reaching the caller.
    pub latency: Time,
    /// The answer is an error (503).
    pub error: bool,
}

const LATENCY: u64 = label_hash("dependency/latency");
const ERRORS: u64 = label_hash("dependency/errors");
const HOP: u64 = label_hash("dependency/hop");

impl DependencyModel {
    /// Build from the scenario.
    // `!(x > 0.0)` is deliberate: it also rejects NaN.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub(crate) fn build(d: &Dependency, seed: u64, dir: &Path) -> Result<Self, String> {
        let base = LatencyDist::build(&d.latency, dir)?;
        let base_median = match &d.latency {
            Latency::Constant(t) => t.ns() as f64,
            Latency::Exponential { mean } => mean.ns() as f64 * std::f64::consts::LN_2,
            Latency::LogNormal { median, .. } => median.ns() as f64,
            Latency::Empirical { .. } => match &base {
                LatencyDist::Empirical(v) => v[v.len() / 2] as f64,
                _ => unreachable!("empirical latency builds an empirical distribution"),
            },
        };
        let drift = match &d.drift {
            Drift::None => Piecewise::constant(1.0),
            Drift::Step { at, factor } => Piecewise::new(vec![(0, 1.0), (at.ns(), 1.0), (at.ns(), *factor)]),
            Drift::Ramp { start, end, from, to } => Piecewise::new(vec![(start.ns(), *from), (end.ns(), *to)]),
            Drift::Points(p) => Piecewise::new(p.iter().map(|(t, v)| (t.ns(), *v)).collect()),
            Drift::Brownout { start, ramp, hold, peak } => {
                let (s, r, h) = (start.ns(), ramp.ns(), hold.ns());
                let up = s.saturating_add(r);
                let down = up.saturating_add(h);
                Piecewise::new(vec![(s, 1.0), (up, *peak), (down, *peak), (down.saturating_add(r), 1.0)])
            }
            Drift::Periodic { .. } => Piecewise::constant(1.0), // see `periodic`
            Drift::Csv { file } => {
                let rows = data::latency_series(&dir.join(file)).map_err(|e| e.to_string())?;
                if base_median.is_nan() || base_median <= 0.0 {
                    return Err("drift Csv needs a base latency with a median > 0".into());
                }
                Piecewise::new(
                    rows.iter()
                        .map(|(t, l)| ((t * SECOND as f64) as Time, l * MILLISECOND as f64 / base_median))
                        .collect(),
                )
            }
        };
        let error_rate = match &d.error_rate {
            Profile::Constant(v) => Piecewise::constant(*v),
            Profile::Points(p) => Piecewise::new(p.iter().map(|(t, v)| (t.ns(), *v)).collect()),
        };
        let never_errors = error_rate.points.iter().all(|&(_, v)| v <= 0.0);
        let periodic = match &d.drift {
            Drift::Periodic { period, duration, factor } => Some((period.ns(), duration.ns(), *factor)),
            _ => None,
        };
        Ok(Self {
            base,
            drift,
            periodic,
            error_rate,
            never_errors,
            modes: d.modes.iter().map(|m| (m.at.ns(), m.mode)).collect(),
            capacity: d.capacity.as_ref().map(|c| (c.servers, c.queue)),
            hop: DelayDist::build(&d.hop, seed, HOP, dir)?,
            cancel_delay: d.cancellation.delay(),
            latency_draws: Counter::new(seed, LATENCY),
            error_draws: Counter::new(seed, ERRORS),
        })
    }

    /// The same dependency drawing from `seed`'s counters (another replication).
    pub(crate) fn reseeded(&self, seed: u64) -> Self {
        Self {
            latency_draws: Counter::new(seed, LATENCY),
            error_draws: Counter::new(seed, ERRORS),
            hop: self.hop.reseeded(seed, HOP),
            ..self.clone()
        }
    }

    /// The mode at time `t`.
    pub(crate) fn mode(&self, t: Time) -> Mode {
        let i = self.modes.partition_point(|&(at, _)| at <= t);
        if i == 0 { Mode::Healthy } else { self.modes[i - 1].1 }
    }

    /// The drift factor at time `t`.
    pub(crate) fn drift(&self, t: Time) -> f64 {
        match self.periodic {
            Some((period, duration, factor)) if t % period < duration => factor,
            Some(_) => 1.0,
            None => self.drift.at(t),
        }
    }

    /// The network time of the call identified by (`class`, `index`, `attempt`), the same
    /// draw as its plan's.
    pub(crate) fn hop(&self, class: u64, index: u64, attempt: u64) -> Time {
        self.hop.at((class << 48) ^ index, attempt)
    }

    /// Plan the call identified by (`class`, `index`, `attempt`) starting service at `now`.
    /// `factor` multiplies the service time (a slowed replica).
    pub fn plan(&self, now: Time, class: u64, index: u64, attempt: u64, factor: f64) -> CallPlan {
        let key = (class << 48) ^ index;
        let hop = self.hop.at(key, attempt);
        match self.mode(now) {
            Mode::Unavailable => CallPlan { latency: hop, error: true },
            mode => {
                let mut rng = Stream::seed_from_u64(self.latency_draws.u64(key, attempt));
                let base = self.base.sample(&mut rng) * self.drift(now) * factor;
                let extra = if let Mode::Slow(d) = mode { d.ns() } else { 0 };
                let error = !self.never_errors && self.error_draws.f64(key, attempt) < self.error_rate.at(now);
                let latency = (base.clamp(0.0, 1.0e15) as Time).saturating_add(extra).saturating_add(hop);
                CallPlan { latency, error }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piecewise_interpolates_and_holds() {
        let p = Piecewise::new(vec![(10, 1.0), (20, 3.0)]);
        assert_eq!(p.at(0), 1.0);
        assert_eq!(p.at(15), 2.0);
        assert_eq!(p.at(20), 3.0);
        assert_eq!(p.at(99), 3.0);
    }

    #[test]
    fn periodic_drift_applies_at_the_start_of_each_cycle() {
        let d = Dependency {
            name: "d".into(),
            latency: Latency::Constant(crate::scenario::Dur::ms(10)),
            drift: Drift::Periodic {
                period: crate::scenario::Dur::secs(10),
                duration: crate::scenario::Dur::secs(2),
                factor: 5.0,
            },
            error_rate: Profile::default(),
            modes: vec![],
            capacity: None,
            hop: Delay::default(),
            replicas: None,
            cancellation: Default::default(),
        };
        let m = DependencyModel::build(&d, 1, Path::new(".")).expect("builds");
        // [0, 2 s) of every 10 s is slow; 2 s itself and 9.999 s are not; 10 s starts a cycle.
        for (t, f) in [(0, 5.0), (1_999_999_999, 5.0), (2 * SECOND, 1.0)] {
            assert_eq!(m.drift(t), f, "at {t}");
        }
        for (t, f) in [(9_999_999_999, 1.0), (10 * SECOND, 5.0), (22 * SECOND, 1.0)] {
            assert_eq!(m.drift(t), f, "at {t}");
        }
        // A 10 ms constant call started at 11 s takes 50 ms.
        assert_eq!(m.plan(11 * SECOND, 0, 0, 1, 1.0).latency, 50 * MILLISECOND);
    }

    #[test]
    fn step_jumps_at_its_time() {
        let p = Piecewise::new(vec![(0, 1.0), (10, 1.0), (10, 30.0)]);
        assert_eq!(p.at(9), 1.0);
        assert_eq!(p.at(10), 30.0);
    }
}
