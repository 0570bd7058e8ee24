//! Arrival processes. Each class draws from its own stream, so arrivals do not depend on
//! what any policy does (except closed-loop users, whose next request follows a response).

use rand_distr::{Distribution, Exp};

use std::path::Path;

use super::dependency::Piecewise;
use crate::engine::{SECOND, Stream, Time};
use crate::scenario::Arrivals;

/// A time-varying arrival rate (per second).
#[derive(Debug, Clone)]
pub(crate) enum Rate {
    /// Piecewise linear.
    Piecewise(Piecewise),
    /// `mean * (1 + amplitude * cos(2 pi (t - peak) / period))`.
    Diurnal {
        /// Mean rate.
        mean: f64,
        /// Relative swing.
        amplitude: f64,
        /// Period, ns.
        period: Time,
        /// Peak offset, ns.
        peak: Time,
    },
}

impl Rate {
    /// The rate at `t`.
    pub(crate) fn at(&self, t: Time) -> f64 {
        match self {
            Rate::Piecewise(p) => p.at(t),
            Rate::Diurnal { mean, amplitude, period, peak } => {
                let phase = ((t as f64 - *peak as f64) / *period as f64) * std::f64::consts::TAU;
                mean * (1.0 + amplitude * phase.cos())
            }
        }
    }
}

/// A running arrival process.
#[derive(Debug, Clone)]
pub(crate) enum ArrivalGen {
    /// Homogeneous Poisson.
    Poisson {
        /// Inter-arrival distribution in nanoseconds.
        gap: Option<Exp<f64>>,
    },
    /// Non-homogeneous Poisson by thinning.
    Profile {
        /// Rate per second over time.
        rate: Rate,
        /// Upper bound of the rate.
        max_rate: f64,
    },
    /// Closed loop.
    Closed {
        /// Users.
        users: u32,
        /// Think time distribution.
        think: Option<Exp<f64>>,
    },
    /// Evenly spaced: the k-th at `phase + floor(k x num / den)` ns.
    Periodic {
        /// First arrival, ns.
        phase: Time,
        /// The spacing in ns is exactly `num / den` (a fraction in lowest terms).
        num: u128,
        /// See `num`.
        den: u128,
        /// Index of the next arrival.
        next: u64,
    },
    /// Scripted times.
    Scripted {
        /// Times.
        times: Vec<Time>,
        /// Next index.
        next: usize,
    },
}

fn exp_ns(rate_per_s: f64) -> Option<Exp<f64>> {
    (rate_per_s > 0.0).then(|| Exp::new(rate_per_s / SECOND as f64).expect("positive rate"))
}

impl ArrivalGen {
    /// Build from the scenario's description; `dir` resolves relative data files.
    pub(crate) fn build(a: &Arrivals, dir: &Path) -> Result<Self, String> {
        let profile = |points: Vec<(Time, f64)>| {
            let max_rate = points.iter().map(|p| p.1).fold(0.0, f64::max);
            ArrivalGen::Profile { rate: Rate::Piecewise(Piecewise::new(points)), max_rate }
        };
        Ok(match a {
            Arrivals::Poisson { rate_per_s } => ArrivalGen::Poisson { gap: exp_ns(*rate_per_s) },
            Arrivals::PoissonProfile { points } => profile(points.iter().map(|(t, r)| (t.ns(), *r)).collect()),
            Arrivals::Burst { base_rate_per_s: b, at, duration, multiplier } => {
                let (s, e) = (at.ns(), at.ns() + duration.ns());
                profile(vec![(0, *b), (s, *b), (s, b * multiplier), (e, b * multiplier), (e, *b)])
            }
            Arrivals::Csv { file } => {
                let rows = crate::scenario::data::rate_series(&dir.join(file)).map_err(|e| e.to_string())?;
                profile(rows.iter().map(|(t, r)| ((t * SECOND as f64) as Time, *r)).collect())
            }
            Arrivals::Diurnal { mean_rate_per_s, amplitude, period, peak_at } => ArrivalGen::Profile {
                rate: Rate::Diurnal {
                    mean: *mean_rate_per_s,
                    amplitude: *amplitude,
                    period: period.ns(),
                    peak: peak_at.ns(),
                },
                max_rate: mean_rate_per_s * (1.0 + amplitude),
            },
            Arrivals::ClosedLoop { users, think } => ArrivalGen::Closed {
                users: *users,
                think: (think.ns() > 0).then(|| Exp::new(1.0 / think.ns() as f64).expect("positive mean")),
            },
            Arrivals::Periodic { rate_per_s, phase } => {
                let (num, den) = spacing_ns(*rate_per_s).ok_or("Periodic: rate_per_s must be > 0 and finite")?;
                ArrivalGen::Periodic { phase: phase.ns(), num, den, next: 0 }
            }
            Arrivals::Scripted { times } => {
                ArrivalGen::Scripted { times: times.iter().map(|d| d.ns()).collect(), next: 0 }
            }
        })
    }

    /// The next open-loop arrival strictly after (or, for scripts, at or after) `now`;
    /// None when there is none. Closed loops start their users through [`Self::initial_users`].
    pub(crate) fn next(&mut self, now: Time, rng: &mut Stream) -> Option<Time> {
        match self {
            ArrivalGen::Poisson { gap } => gap.as_ref().map(|g| now.saturating_add(g.sample(rng).max(1.0) as Time)),
            ArrivalGen::Profile { rate, max_rate } => {
                let bound = exp_ns(*max_rate)?;
                let mut t = now;
                // Thinning (Lewis & Shedler): candidates at the maximum rate, kept with
                // probability rate(t) / max_rate. Bounded so that a zero tail cannot spin.
                for _ in 0..1_000_000 {
                    t = t.saturating_add(bound.sample(rng).max(1.0) as Time);
                    let u: f64 = rand::RngExt::random(rng);
                    if u * *max_rate < rate.at(t) {
                        return Some(t);
                    }
                }
                None
            }
            ArrivalGen::Closed { .. } => None,
            ArrivalGen::Periodic { phase, num, den, next } => {
                // Exact: the k-th time from k alone, so no rounding error accumulates. Past
                // u128 (beyond any horizon for a rate above 1e-9/s) there is no next.
                let offset = u128::from(*next).checked_mul(*num)? / *den;
                *next += 1;
                Some(phase.saturating_add(Time::try_from(offset).unwrap_or(Time::MAX)))
            }
            ArrivalGen::Scripted { times, next } => {
                let t = times.get(*next).copied();
                *next += 1;
                t
            }
        }
    }

    /// For closed loops: how many users start at time zero.
    pub(crate) fn initial_users(&self) -> u32 {
        match self {
            ArrivalGen::Closed { users, .. } => *users,
            _ => 0,
        }
    }

    /// For closed loops: the think time before a user's next request.
    pub(crate) fn think<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Time {
        match self {
            ArrivalGen::Closed { think: Some(t), .. } => t.sample(rng) as Time,
            _ => 0,
        }
    }
}

/// The spacing of `rate_per_s` evenly spaced arrivals, 1e9 / rate ns, as an exact fraction
/// (num, den) in lowest terms. The rate is taken as the decimal Rust prints for it (the
/// shortest that reads back as the same f64, so `0.1` is one tenth, not the binary value
/// just above it). None for a rate that is not positive and finite.
pub(crate) fn spacing_ns(rate_per_s: f64) -> Option<(u128, u128)> {
    if !(rate_per_s > 0.0 && rate_per_s.is_finite()) {
        return None;
    }
    // `Display` for f64 never uses an exponent: digits, maybe a point and more digits.
    let text = rate_per_s.to_string();
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits: u128 = format!("{whole}{frac}").trim_start_matches('0').parse().ok()?;
    // rate = digits / 10^d, so 1e9 / rate = 1e9 x 10^d / digits.
    let mut num = 10u128.checked_pow(9 + frac.len() as u32)?;
    let mut den = digits;
    let g = gcd(num, den);
    num /= g;
    den /= g;
    Some((num, den))
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;
    use crate::scenario::Dur;

    fn count(a: &Arrivals, from: Time, to: Time) -> usize {
        let mut g = ArrivalGen::build(a, Path::new(".")).unwrap();
        let mut rng = stream(5, "t");
        let mut t = 0;
        let mut n = 0;
        while let Some(next) = g.next(t, &mut rng) {
            if next > to {
                break;
            }
            if next >= from {
                n += 1;
            }
            t = next;
        }
        n
    }

    /// The first `n` times of a periodic process.
    fn periodic(rate_per_s: f64, phase: Time, n: usize) -> Vec<Time> {
        let a = Arrivals::Periodic { rate_per_s, phase: Dur(phase) };
        let mut g = ArrivalGen::build(&a, Path::new(".")).unwrap();
        let mut rng = stream(5, "t");
        (0..n).map(|_| g.next(0, &mut rng).unwrap()).collect()
    }

    #[test]
    fn periodic_times_are_exact_and_do_not_drift() {
        // 3/s: floor(k x 1e9 / 3) = 0, 333333333, 666666666, 1e9 (exact, no drift).
        assert_eq!(periodic(3.0, 0, 4), [0, 333_333_333, 666_666_666, SECOND]);
        // After 3 million arrivals (a million seconds) still exactly on the second.
        let mut g = ArrivalGen::Periodic { phase: 0, num: 1_000_000_000, den: 3, next: 3_000_000 };
        assert_eq!(g.next(0, &mut stream(5, "t")), Some(1_000_000 * SECOND));
        // 0.1/s is every 10 s exactly (the decimal 0.1, not its binary neighbour).
        assert_eq!(periodic(0.1, 7, 3), [7, 10 * SECOND + 7, 20 * SECOND + 7]);
        // 7/s from a phase of 5 ns: floor(k x 1e9 / 7) = 142857142, 285714285.
        assert_eq!(periodic(7.0, 5, 3), [5, 142_857_147, 285_714_290]);
        assert_eq!(spacing_ns(2.5), Some((400_000_000, 1)));
        assert_eq!(spacing_ns(0.0), None);
        assert_eq!(spacing_ns(f64::NAN), None);
    }

    #[test]
    fn periodic_counts_are_exactly_floor() {
        // [0, 10 s] at 3/s from a phase of 100 ms: floor(9.9 x 3) + 1 = 30 arrivals.
        assert_eq!(count(&Arrivals::Periodic { rate_per_s: 3.0, phase: Dur::ms(100) }, 0, 10 * SECOND), 30);
        // At 2.5/s from 0 over [0, 4 s]: 0, 0.4, ..., 4.0: floor(4 x 2.5) + 1 = 11.
        assert_eq!(count(&Arrivals::Periodic { rate_per_s: 2.5, phase: Dur(0) }, 0, 4 * SECOND), 11);
    }

    #[test]
    fn burst_multiplies_the_rate_inside_its_window() {
        // 100/s base, x5 for 10 s from 10 s: ~5,000 inside, ~1,000 in the 10 s before.
        let a = Arrivals::Burst { base_rate_per_s: 100.0, at: Dur::secs(10), duration: Dur::secs(10), multiplier: 5.0 };
        let inside = count(&a, 10 * SECOND, 20 * SECOND) as f64;
        let before = count(&a, 0, 10 * SECOND) as f64;
        // Poisson standard deviations: ~71 and ~32.
        assert!((inside - 5000.0).abs() < 300.0, "{inside}");
        assert!((before - 1000.0).abs() < 150.0, "{before}");
    }

    #[test]
    fn diurnal_peaks_at_its_peak_time() {
        // Mean 100/s, amplitude 0.5, period 100 s, peak at 25 s. Expected counts over
        // [15, 35] and [65, 85] are the integral of the rate: 20*100 +/- 50*(100/(2 pi))*2*sin(pi/5),
        // about 2000 +/- 935 (Poisson standard deviations ~54 and ~33).
        let a = Arrivals::Diurnal {
            mean_rate_per_s: 100.0,
            amplitude: 0.5,
            period: Dur::secs(100),
            peak_at: Dur::secs(25),
        };
        let swing = 50.0 * (100.0 / std::f64::consts::TAU) * 2.0 * (std::f64::consts::PI / 5.0).sin();
        let peak = count(&a, 15 * SECOND, 35 * SECOND) as f64;
        let trough = count(&a, 65 * SECOND, 85 * SECOND) as f64;
        assert!((peak - (2000.0 + swing)).abs() < 200.0, "{peak} vs {}", 2000.0 + swing);
        assert!((trough - (2000.0 - swing)).abs() < 200.0, "{trough} vs {}", 2000.0 - swing);
    }
}
