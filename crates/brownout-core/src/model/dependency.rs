//! The dependency: latency distribution, drift over time, error rate, mode timeline and an
//! optional finite capacity. Immutable; shared by every policy run of a scenario.
//!
//! Draws are counter-based on (request class, request index, attempt), so the call made by
//! the same attempt of the same request gets the same latency under every policy.

use std::path::Path;

use rand_distr::{Distribution, Exp, LogNormal};

use crate::engine::{Counter, MILLISECOND, SECOND, Time, label_hash};
use crate::scenario::{Delay, Dependency, Drift, Latency, Mode, Profile, data};

/// A latency distribution ready to sample.
#[derive(Debug, Clone)]
pub(crate) enum LatencyDist {
    /// Fixed.
    Constant(Time),
    /// Exponential, and its mean in ns (for the CDF: `rand_distr` keeps it private).
    Exponential(Exp<f64>, f64),
    /// Log-normal, and its (mu, sigma) of ln(ns) (for the CDF).
    LogNormal(LogNormal<f64>, (f64, f64)),
    /// Sorted observed values.
    Empirical(Vec<Time>),
}

impl LatencyDist {
    /// Build from the scenario's description; `dir` resolves relative file paths.
    pub(crate) fn build(l: &Latency, dir: &Path) -> Result<Self, String> {
        Ok(match l {
            Latency::Constant(d) => LatencyDist::Constant(d.ns()),
            Latency::Exponential { mean } => LatencyDist::Exponential(
                Exp::new(1.0 / mean.ns() as f64).map_err(|e| format!("Exponential: {e}"))?,
                mean.ns() as f64,
            ),
            Latency::LogNormal { median, sigma } => {
                let mu = (median.ns() as f64).ln();
                LatencyDist::LogNormal(LogNormal::new(mu, *sigma).map_err(|e| format!("LogNormal: {e}"))?, (mu, *sigma))
            }
            Latency::Empirical { file, column } => {
                let values = data::latency_samples(&dir.join(file), column).map_err(|e| e.to_string())?;
                let mut ns: Vec<Time> = values.iter().map(|ms| (ms * MILLISECOND as f64) as Time).collect();
                ns.sort_unstable();
                LatencyDist::Empirical(ns)
            }
        })
    }

    /// Draw with a generator.
    pub(crate) fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self {
            LatencyDist::Constant(t) => *t as f64,
            LatencyDist::Exponential(e, _) => e.sample(rng),
            LatencyDist::LogNormal(l, _) => l.sample(rng),
            LatencyDist::Empirical(v) => {
                let i = (rand::RngExt::random::<f64>(rng) * v.len() as f64) as usize;
                v[i.min(v.len() - 1)] as f64
            }
        }
    }

    /// P(a draw <= `x` ns): the distribution function of what [`Self::sample`] draws (an
    /// empirical one draws each observed value with equal chance, so its CDF is the fraction
    /// of values at or below `x`).
    pub(crate) fn cdf(&self, x: f64) -> f64 {
        match self {
            LatencyDist::Constant(t) => f64::from(u8::from(x >= *t as f64)),
            LatencyDist::Exponential(_, mean) if x > 0.0 => 1.0 - (-x / mean).exp(),
            LatencyDist::Exponential(..) => 0.0,
            LatencyDist::LogNormal(_, (mu, sigma)) if x > 0.0 => {
                let z = (x.ln() - mu) / sigma;
                // sigma 0 is the constant e^mu: z is then +-inf (or NaN exactly at it: 1).
                if z.is_nan() { 1.0 } else { 0.5 * statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2) }
            }
            LatencyDist::LogNormal(..) => 0.0,
            LatencyDist::Empirical(v) => v.partition_point(|&s| s as f64 <= x) as f64 / v.len() as f64,
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
            DelayDist::Random(dist, draws) => dist.sample(&mut draws.rng(key, what)).clamp(0.0, 1.0e15) as Time,
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
        if let [(_, v)] = p[..] {
            return v; // a constant (no drift, a constant error rate): no search
        }
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
    /// How its servers take waiting calls (finite capacity only).
    pub(crate) server: super::server::ServerRules,
    /// How the calls present share a replica, when they do (`capacity.sharing` other than
    /// `Queue`): every call present is in service (`world::sharing`).
    pub(crate) sharing: Option<super::sharing::ShareRule>,
    /// Network time added to each call, drawn per call when it is a distribution.
    hop: DelayDist,
    /// When abandoned calls are cancelled: the time (ns) the cancel takes to arrive.
    pub(crate) cancel_delay: Option<Time>,
    /// The body's transfer time (ns) after the first byte (the scenario's `transfer`).
    pub(crate) transfer: Time,
    latency_draws: Counter,
    error_draws: Counter,
    /// Mixed into the labels of its draws: 0 for the one `dependency`, a hash of the name for
    /// each of `dependencies`, so two dependencies never share a draw.
    salt: u64,
}

/// What the dependency does with one call, decided when it starts service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPlan {
    /// Service time: how long the call holds a server, from service start to its answer
    /// (base latency x drift x replica factor, plus a `Slow` mode's extra time).
    pub service: Time,
    /// Network time of the call's round trip (`hop`): it delays the caller and holds no
    /// server.
    pub hop: Time,
    /// The answer is an error (503).
    pub error: bool,
    /// The body's transfer after the first byte: it delays the caller and holds no server.
    pub transfer: Time,
}

impl CallPlan {
    /// Time from service start to the answer's last byte reaching the caller: service, the
    /// hop and the body's transfer.
    pub fn latency(&self) -> Time {
        self.service.saturating_add(self.hop).saturating_add(self.transfer)
    }
}

const LATENCY: u64 = label_hash("dependency/latency");
const ERRORS: u64 = label_hash("dependency/errors");
const HOP: u64 = label_hash("dependency/hop");

impl DependencyModel {
    /// Build from the scenario.
    pub(crate) fn build(d: &Dependency, seed: u64, dir: &Path) -> Result<Self, String> {
        Self::build_salted(d, seed, dir, 0)
    }

    /// Build one of several dependencies: `salt` (a hash of its name) keeps its draws apart
    /// from every other dependency's.
    // `!(x > 0.0)` is deliberate: it also rejects NaN.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub(crate) fn build_salted(d: &Dependency, seed: u64, dir: &Path, salt: u64) -> Result<Self, String> {
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
            server: d.capacity.as_ref().map(super::server::ServerRules::of).unwrap_or_default(),
            sharing: d.capacity.as_ref().and_then(super::sharing::ShareRule::of),
            hop: DelayDist::build(&d.hop, seed, HOP ^ salt, dir)?,
            cancel_delay: d.cancellation.delay(),
            transfer: d.transfer.ns(),
            latency_draws: Counter::new(seed, LATENCY ^ salt),
            error_draws: Counter::new(seed, ERRORS ^ salt),
            salt,
        })
    }

    /// The same dependency drawing from `seed`'s counters (another replication).
    pub(crate) fn reseeded(&self, seed: u64) -> Self {
        Self {
            latency_draws: Counter::new(seed, LATENCY ^ self.salt),
            error_draws: Counter::new(seed, ERRORS ^ self.salt),
            hop: self.hop.reseeded(seed, HOP ^ self.salt),
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

    /// P(base latency <= `x` ns), before drift and replica factors.
    pub(crate) fn base_cdf(&self, x: f64) -> f64 {
        self.base.cdf(x)
    }

    /// The error rate at time `t`.
    pub(crate) fn error_rate(&self, t: Time) -> f64 {
        if self.never_errors { 0.0 } else { self.error_rate.at(t) }
    }

    /// The least network time a call can take: the fixed hop, or 0 for a drawn one (a bound,
    /// never more than any draw).
    pub(crate) fn least_hop(&self) -> Time {
        match &self.hop {
            DelayDist::Fixed(t) | DelayDist::Random(LatencyDist::Constant(t), _) => *t,
            DelayDist::Random(..) => 0,
        }
    }

    /// Times at which the drift changes slope or jumps (none for a periodic drift, whose
    /// edges [`Self::periodic_edges`] gives).
    pub(crate) fn drift_knots(&self) -> Vec<Time> {
        if self.periodic.is_some() { Vec::new() } else { self.drift.points.iter().map(|p| p.0).collect() }
    }

    /// A periodic drift's (period, duration), ns.
    pub(crate) fn periodic_edges(&self) -> Option<(Time, Time)> {
        self.periodic.map(|(p, d, _)| (p, d))
    }

    /// Times at which the mode or the error rate changes.
    pub(crate) fn other_knots(&self) -> Vec<Time> {
        self.modes.iter().map(|m| m.0).chain(self.error_rate.points.iter().map(|p| p.0)).collect()
    }

    /// The network time of the call identified by (`class`, `index`, `attempt`), the same
    /// draw as its plan's.
    pub(crate) fn hop(&self, class: u64, index: u64, attempt: u64) -> Time {
        self.hop.at((class << 48) ^ index, attempt)
    }

    /// What its name mixes into the labels of its draws (0 for the one `dependency`): also
    /// mixed into the keys of the draws the gateway makes for a call to it (retry jitter and
    /// patience, replica choice), so calls to two dependencies in one request draw apart.
    pub(crate) fn salt(&self) -> u64 {
        self.salt
    }

    /// Plan the call identified by (`class`, `index`, `attempt`) starting service at `now`.
    /// `factor` multiplies the service time (a slowed replica).
    pub fn plan(&self, now: Time, class: u64, index: u64, attempt: u64, factor: f64) -> CallPlan {
        let key = (class << 48) ^ index;
        let hop = self.hop.at(key, attempt);
        match self.mode(now) {
            Mode::Unavailable => CallPlan { service: 0, hop, error: true, transfer: 0 },
            mode => {
                let base = self.base.sample(&mut self.latency_draws.rng(key, attempt)) * self.drift(now) * factor;
                // A slow mode slows the server: its extra time is service time.
                let extra = if let Mode::Slow(d) = mode { d.ns() } else { 0 };
                let error = !self.never_errors && self.error_draws.f64(key, attempt) < self.error_rate.at(now);
                let service = (base.clamp(0.0, 1.0e15) as Time).saturating_add(extra);
                CallPlan { service, hop, error, transfer: self.transfer }
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
            service: None,
            transfer: Default::default(),
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
        assert_eq!(m.plan(11 * SECOND, 0, 0, 1, 1.0).latency(), 50 * MILLISECOND);
    }

    /// A dependency with latency `latency`, a drawn hop and a 10 % error rate.
    fn drawn(latency: Latency) -> DependencyModel {
        let d = Dependency {
            name: "d".into(),
            latency,
            drift: Drift::None,
            error_rate: Profile::Constant(0.1),
            modes: vec![],
            capacity: None,
            hop: Delay::Random(Latency::Exponential { mean: crate::scenario::Dur::ms(1) }),
            replicas: None,
            cancellation: Default::default(),
            service: None,
            transfer: Default::default(),
        };
        DependencyModel::build(&d, 7, Path::new(".")).expect("builds")
    }

    /// Kolmogorov-Smirnov statistic of `xs` against `cdf`.
    fn ks(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
        xs.sort_by(f64::total_cmp);
        let n = xs.len() as f64;
        xs.iter().enumerate().fold(0.0, |d, (i, &x)| {
            let f = cdf(x);
            d.max((f - i as f64 / n).abs()).max(((i + 1) as f64 / n - f).abs())
        })
    }

    /// `n` latencies of attempt 0 of distinct requests of class 3, without the hop.
    fn latencies(m: &DependencyModel, n: u64) -> Vec<f64> {
        (0..n).map(|i| (m.plan(0, 3, i, 0, 1.0).latency() - m.hop(3, i, 0)) as f64).collect()
    }

    #[test]
    fn exponential_draws_match_the_closed_form() {
        let mean = 10.0e6;
        let n = 200_000;
        let xs = latencies(&drawn(Latency::Exponential { mean: crate::scenario::Dur::ms(10) }), n);
        let m = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        // Exp(mean): variance mean^2; the sample mean's standard error is mean/sqrt(n), the
        // sample variance's sqrt(8/n) mean^2 (fourth central moment 9 mean^4).
        let se_m = mean / (n as f64).sqrt();
        let se_v = (8.0 / n as f64).sqrt() * mean * mean;
        assert!((m - mean).abs() < 4.0 * se_m, "mean {m}");
        assert!((var - mean * mean).abs() < 4.0 * se_v, "variance {var}");
        // KS critical value at the 0.1 % level: 1.95 / sqrt(n).
        let d = ks(xs, |x| 1.0 - (-x / mean).exp());
        assert!(d < 1.95 / (n as f64).sqrt(), "KS D = {d}");
    }

    #[test]
    fn lognormal_draws_match_the_closed_form() {
        use statrs::distribution::{ContinuousCDF, LogNormal as Ln};
        let n = 100_000;
        let l = Latency::LogNormal { median: crate::scenario::Dur::ms(20), sigma: 0.5 };
        let xs = latencies(&drawn(l), n);
        let cdf = Ln::new((20.0e6f64).ln(), 0.5).expect("valid");
        // The far tail: P(X > median e^(2 sigma)) = 1 - Phi(2) = 0.02275.
        let tail = xs.iter().filter(|&&x| x > 20.0e6 * 1.0f64.exp()).count() as f64 / n as f64;
        assert!((tail - 0.02275).abs() < 4.0 * (0.02275f64 * 0.97725 / n as f64).sqrt(), "tail {tail}");
        let d = ks(xs, |x| cdf.cdf(x));
        assert!(d < 1.95 / (n as f64).sqrt(), "KS D = {d}");
    }

    proptest::proptest! {
        /// Common random numbers: a call's plan is a function of its own (class, request,
        /// attempt) alone, whatever other calls were drawn before it.
        #[test]
        fn a_draw_does_not_depend_on_other_draws(
            class in 0u64..8,
            index in 0u64..1_000_000,
            attempt in 0u64..4,
            others in proptest::collection::vec((0u64..8, 0u64..1_000_000, 0u64..4), 0..20),
        ) {
            let alone = drawn(Latency::LogNormal { median: crate::scenario::Dur::ms(20), sigma: 0.5 });
            let first = alone.plan(0, class, index, attempt, 1.0);
            let busy = drawn(Latency::LogNormal { median: crate::scenario::Dur::ms(20), sigma: 0.5 });
            for &(c, i, a) in &others {
                busy.plan(0, c, i, a, 1.0);
            }
            let after = busy.plan(0, class, index, attempt, 1.0);
            proptest::prop_assert_eq!((first.latency(), first.error), (after.latency(), after.error));
            proptest::prop_assert_eq!(alone.hop(class, index, attempt), busy.hop(class, index, attempt));
        }
    }

    #[test]
    fn step_jumps_at_its_time() {
        let p = Piecewise::new(vec![(0, 1.0), (10, 1.0), (10, 30.0)]);
        assert_eq!(p.at(9), 1.0);
        assert_eq!(p.at(10), 30.0);
    }
}
