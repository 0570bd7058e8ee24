//! Arrival processes. Each class draws from its own stream, so arrivals do not depend on
//! what any policy does (except closed-loop users, whose next request follows a response).

use rand_distr::{Distribution, Exp};

use super::dependency::Piecewise;
use crate::engine::{SECOND, Stream, Time};
use crate::scenario::Arrivals;

/// A running arrival process.
#[derive(Debug, Clone)]
pub enum ArrivalGen {
    /// Homogeneous Poisson.
    Poisson {
        /// Inter-arrival distribution in nanoseconds.
        gap: Option<Exp<f64>>,
    },
    /// Non-homogeneous Poisson by thinning.
    Profile {
        /// Rate per second over time.
        rate: Piecewise,
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
    /// Build from the scenario's description.
    pub fn build(a: &Arrivals) -> Self {
        match a {
            Arrivals::Poisson { rate_per_s } => ArrivalGen::Poisson {
                gap: exp_ns(*rate_per_s),
            },
            Arrivals::PoissonProfile { points } => {
                let max_rate = points.iter().map(|p| p.1).fold(0.0, f64::max);
                ArrivalGen::Profile {
                    rate: Piecewise::new(points.iter().map(|(t, r)| (t.ns(), *r)).collect()),
                    max_rate,
                }
            }
            Arrivals::ClosedLoop { users, think } => ArrivalGen::Closed {
                users: *users,
                think: (think.ns() > 0)
                    .then(|| Exp::new(1.0 / think.ns() as f64).expect("positive mean")),
            },
            Arrivals::Scripted { times } => ArrivalGen::Scripted {
                times: times.iter().map(|d| d.ns()).collect(),
                next: 0,
            },
        }
    }

    /// The next open-loop arrival strictly after (or, for scripts, at or after) `now`;
    /// None when there is none. Closed loops start their users through [`Self::initial_users`].
    pub fn next(&mut self, now: Time, rng: &mut Stream) -> Option<Time> {
        match self {
            ArrivalGen::Poisson { gap } => {
                gap.as_ref().map(|g| now + g.sample(rng).max(1.0) as Time)
            }
            ArrivalGen::Profile { rate, max_rate } => {
                let bound = exp_ns(*max_rate)?;
                let mut t = now;
                // Thinning (Lewis & Shedler): candidates at the maximum rate, kept with
                // probability rate(t) / max_rate. Bounded so that a zero tail cannot spin.
                for _ in 0..1_000_000 {
                    t += bound.sample(rng).max(1.0) as Time;
                    let u: f64 = rand::RngExt::random(rng);
                    if u * *max_rate < rate.at(t) {
                        return Some(t);
                    }
                }
                None
            }
            ArrivalGen::Closed { .. } => None,
            ArrivalGen::Scripted { times, next } => {
                let t = times.get(*next).copied();
                *next += 1;
                t
            }
        }
    }

    /// For closed loops: how many users start at time zero.
    pub fn initial_users(&self) -> u32 {
        match self {
            ArrivalGen::Closed { users, .. } => *users,
            _ => 0,
        }
    }

    /// For closed loops: the think time before a user's next request.
    pub fn think(&self, rng: &mut Stream) -> Time {
        match self {
            ArrivalGen::Closed { think: Some(t), .. } => t.sample(rng) as Time,
            _ => 0,
        }
    }
}
