//! Feasibility before simulation: the best in-time ratio any policy set could give a class,
//! computed from the scenario alone, so a constraint no policy can meet is named as such (with
//! the bound) instead of only "no policy set meets every constraint".
//!
//! A class that must call the dependency and has no fallback is in time only when its call
//! answers in time. With one call per request and no queueing at all, a request arriving at
//! `t` does its local work `w` (fixed), starts its call at `t + w` and is answered at
//! `t + w + base * drift(t + w) + extra + hop`; it is in time when that is within the
//! deadline `d`, and never when the call fails (an error with probability `e(t + w)`, or an
//! unavailable dependency). So the best possible in-time probability of a request arriving at
//! `t` is
//!
//! ```text
//! p(t) = (1 - e(t + w)) * F_base((d - w - hop - extra(t + w)) / drift(t + w))
//! ```
//!
//! (`F_base` the base latency's distribution function, from the model's own distribution
//! object, `model::dependency`), and over a phase `[a, b)` the best in-time ratio is the
//! arrival-weighted mean `∫ λ(t) p(t) dt / ∫ λ(t) dt`. Queues, pools, capacity, timeouts and
//! refusals only lower it. Where the arrivals depend on answers (closed loop, reloads) the
//! weighting is unknown and the bound is `max p(t)` over the phase, which holds for any
//! weighting. A drawn `hop` counts at its least (0), which keeps the figure a bound.
//!
//! Retries after a timeout and hedges make further calls, which can answer in time where the
//! first did not: the bound is stated "with one call per request", and names the policy sets
//! that may call more than once. There is no bound (and it says why) for a class with a
//! fallback (which can answer at once), drawn local work, or a replica sped up (factor < 1).
//!
//! A class with a call plan (`calls`) is bounded by every dependency it cannot do without. A
//! request is in time only when each **bounding group** of its plan has a call that answers
//! in time: each required `Call` step is a group of one, so is each required call of an `All`
//! group (its failure fails the request), and a `First` or `Quorum(k)` group whose calls are
//! all required is one group (it needs at least one success). Optional calls, and groups with
//! an optional call, bound nothing (their failure degrades the answer instead). So
//!
//! ```text
//! p(t) = min over groups G of max over calls c in G of p_c(t)
//! ```
//!
//! where a call of the first step starts at `t + w`, and `p_c` is the one-call formula above
//! with its dependency's timeline; a call of a later step starts somewhere in
//! `[t + w, t + d]`, so its `p_c` takes the least drift, error rate and slow-mode time of its
//! dependency over that window, `(1 - min e) * F_base((d - w - hop - min extra) / min drift)`
//! (0 when the dependency is unavailable throughout), which is at least its in-time
//! probability wherever it starts. A minimum of upper bounds is an upper bound, whatever the
//! calls' dependence. A plan calling a browned-out dependency required is thus bounded by it.
//! A class with one call (no plan) is the formula above, with the one dependency.

use std::path::Path;

use crate::engine::Time;
use crate::metrics::decision::{Ceiling, Recommendation};
use crate::model::Model;
use crate::model::arrivals::{ArrivalGen, Rate};
use crate::model::dependency::DependencyModel;
use crate::scenario::{Arrivals, Cmp, Decide, Fallback, Join, Latency, Mode, Scenario, Step};

/// Subintervals of Simpson's rule between two knots of the integrand (where drift, modes,
/// error rate or arrival rate change slope): the integrand is smooth in between, so this is
/// far below a figure's printed precision.
const SIMPSON_STEPS: usize = 256;

/// At most this many knots are honoured (a short periodic drift over a long run has many);
/// beyond it, one uniform grid of [`UNIFORM_STEPS`].
const MAX_KNOTS: usize = 4096;

/// Steps of the uniform grid used past [`MAX_KNOTS`].
const UNIFORM_STEPS: usize = 1 << 16;

/// At most this many of a dependency's knots are read for the window of a later step's
/// call; beyond it the window takes the extremes over the whole run (still a bound).
const WINDOW_KNOTS: usize = 256;

/// Why no ceiling could be worked out: the scenario's dependency or arrivals do not build
/// (a data file they name is missing or malformed). Its `Display` is the message alone; the
/// command line adds the scenario's location.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CeilingError {
    /// The dependency's model does not build.
    Dependency(String),
    /// A class's arrivals do not build.
    Arrivals {
        /// The class.
        class: String,
        /// Why.
        reason: String,
    },
}

impl std::fmt::Display for CeilingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CeilingError::Dependency(reason) | CeilingError::Arrivals { reason, .. } => f.write_str(reason),
        }
    }
}

impl std::error::Error for CeilingError {}

/// The ceilings of `s`'s `decide` constraints, building the dependencies' models from the
/// scenario (`dir` resolves their data files, as `Model::build` does).
pub fn ceilings_at(s: &Scenario, dir: &Path) -> Result<Vec<Ceiling>, CeilingError> {
    match &s.decide {
        Some(d) => ceilings_for(s, d, dir),
        None => Ok(Vec::new()),
    }
}

/// The ceilings of `d`'s constraints (a `tune` spec's, or a scenario's) in scenario `s`.
pub fn ceilings_for(s: &Scenario, d: &Decide, dir: &Path) -> Result<Vec<Ceiling>, CeilingError> {
    if d.subject_to.is_empty() {
        return Ok(Vec::new());
    }
    let deps: Vec<DependencyModel> = (s.deps().iter())
        .map(|d| DependencyModel::build(d, s.seed, dir))
        .collect::<Result<_, _>>()
        .map_err(CeilingError::Dependency)?;
    let arrivals: Vec<ArrivalGen> = s
        .classes
        .iter()
        .map(|c| {
            ArrivalGen::build(&c.arrivals, dir)
                .map_err(|reason| CeilingError::Arrivals { class: c.name.clone(), reason })
        })
        .collect::<Result<_, _>>()?;
    Ok(ceilings(s, d, &deps, &arrivals))
}

/// `r` with the ceilings of the model's scenario (a run's recommendation).
pub fn with_ceilings(mut r: Recommendation, model: &Model) -> Recommendation {
    if let Some(d) = &model.scenario().decide {
        r.bounds = ceilings(model.scenario(), d, model.deps(), model.arrivals());
    }
    r
}

/// For each `decide` constraint on a class's `in_time_ratio` (`>=` or `>`), the best value
/// any policy set could reach (NaN where none can be computed, `why` says why), and whether
/// the target lies beyond it. Other constraints get no entry.
pub(crate) fn ceilings(s: &Scenario, d: &Decide, deps: &[DependencyModel], arrivals: &[ArrivalGen]) -> Vec<Ceiling> {
    let phases = crate::scenario::phases_of(s);
    let several = several_calls(s);
    let mut out = Vec::new();
    for (k, c) in d.subject_to.iter().enumerate() {
        let Ok(m) = super::measure_of(c) else { continue };
        let (Some(class), "in_time_ratio", Cmp::Ge | Cmp::Gt) = (m.class, m.metric.name, c.op) else { continue };
        let Some(ci) = s.classes.iter().position(|x| x.name == class) else { continue };
        let span = match m.phase {
            None => Some((s.warmup.ns(), s.horizon.ns())),
            Some(p) => phases.iter().find(|x| x.name == p).map(|x| (x.start, x.end)),
        };
        let Some((a, b)) = span else { continue };
        let (best, why) = match in_time_ceiling(s, deps, &arrivals[ci], ci, a, b) {
            Ok((best, weighting)) => {
                let mut why = format!("with one call per request and no queueing{weighting}");
                if !several.is_empty() {
                    why.push_str(&format!(
                        "; policy sets {} may call more than once (retries, hedges), which the bound does not cover",
                        several.join(", ")
                    ));
                }
                (best, why)
            }
            Err(why) => (f64::NAN, format!("no bound: {why}")),
        };
        let unreachable = match c.op {
            Cmp::Ge => best < c.value,
            Cmp::Gt => best <= c.value,
            _ => false,
        };
        out.push(Ceiling {
            constraint: k,
            metric: m.path(),
            op: super::recommendation::op_text(c.op).into(),
            value: c.value,
            best,
            unreachable,
            why,
        });
    }
    out
}

/// Names of the policy sets with a layer that may make more than one call per request.
fn several_calls(s: &Scenario) -> Vec<String> {
    s.policies
        .iter()
        .filter(|p| p.stack.iter().any(|l| l.policy.facts().may_call_again))
        .map(|p| format!("\"{}\"", p.name))
        .collect()
}

/// How requests are weighted over time.
enum Weights {
    /// By a known arrival rate.
    Rate(Box<dyn Fn(Time) -> f64>),
    /// At scripted times, each once.
    Times(Vec<Time>),
    /// Unknown (arrivals follow answers): the bound is the largest `p(t)`.
    Unknown,
}

/// The best in-time ratio of class `ci` over arrivals in `[a, b)`, and how it was weighted
/// (text to append to the bound's description); `Err` says why there is none.
pub(crate) fn in_time_ceiling(
    s: &Scenario,
    deps: &[DependencyModel],
    arrivals: &ArrivalGen,
    ci: usize,
    a: Time,
    b: Time,
) -> Result<(f64, &'static str), String> {
    let c = &s.classes[ci];
    if !c.calls_dependency {
        return Err(format!("class \"{}\" does not call the dependency", c.name));
    }
    if c.fallback != Fallback::None {
        return Err(format!("class \"{}\" has a fallback, which can answer without the dependency", c.name));
    }
    let work = match &c.work {
        None => 0,
        Some(Latency::Constant(w)) => w.ns(),
        Some(_) => return Err(format!("class \"{}\" draws its local work", c.name)),
    };
    let groups = bounding_groups(s, ci)?;
    // The dependencies that bound, each once, in id order.
    let mut used: Vec<usize> = groups.iter().flatten().map(|&(d, _)| d).collect();
    used.sort_unstable();
    used.dedup();
    if used.iter().any(|&d| s.deps()[d].replicas.as_ref().is_some_and(|r| r.slow.iter().any(|x| x.factor < 1.0))) {
        return Err("a replica is sped up (factor < 1)".into());
    }
    let deadline = c.deadline.ns() as f64;
    let windows: Vec<Option<Window>> = (0..deps.len())
        .map(|d| groups.iter().flatten().any(|&(x, first)| x == d && !first).then(|| Window::of(&deps[d])))
        .collect();
    let call = |d: usize, first: bool, t: Time| -> f64 {
        let dep = &deps[d];
        let hop = dep.least_hop() as f64;
        let at = t.saturating_add(work);
        let (extra, error, drift) = if first {
            let extra = match dep.mode(at) {
                Mode::Unavailable => return 0.0,
                Mode::Slow(x) => x.ns() as f64,
                Mode::Healthy => 0.0,
            };
            (extra, dep.error_rate(at), dep.drift(at))
        } else {
            let w = windows[d].as_ref().expect("a window for each later call");
            match w.least(dep, at, t.saturating_add(c.deadline.ns())) {
                Some(least) => least,
                None => return 0.0,
            }
        };
        let room = deadline - work as f64 - hop - extra;
        if room < 0.0 {
            return 0.0;
        }
        (1.0 - error).clamp(0.0, 1.0) * dep.base_cdf(room / drift)
    };
    let p = |t: Time| -> f64 {
        groups.iter().map(|g| g.iter().map(|&(d, first)| call(d, first, t)).fold(0.0, f64::max)).fold(1.0, f64::min)
    };
    let weights = if c.reload.is_some() {
        Weights::Unknown
    } else {
        match &c.arrivals {
            Arrivals::ClosedLoop { .. } => Weights::Unknown,
            Arrivals::Scripted { times } => Weights::Times(times.iter().map(|t| t.ns()).collect()),
            Arrivals::Poisson { rate_per_s } => {
                let r = *rate_per_s;
                Weights::Rate(Box::new(move |_| r))
            }
            Arrivals::Periodic { rate_per_s, phase } => {
                let (r, from) = (*rate_per_s, phase.ns());
                Weights::Rate(Box::new(move |t| if t >= from { r } else { 0.0 }))
            }
            _ => match arrivals {
                ArrivalGen::Profile { rate, .. } => {
                    let rate = rate.clone();
                    Weights::Rate(Box::new(move |t| Rate::at(&rate, t).max(0.0)))
                }
                _ => Weights::Unknown,
            },
        }
    };
    if b <= a {
        return Err("the span is empty".into());
    }
    // Knots of the integrand, shifted back by the work (the call starts `work` after arrival)
    // and, for a later step's call, by the deadline too (where its window's end meets one).
    let mut knots: Vec<Time> = Vec::new();
    for &d in &used {
        let dep = &deps[d];
        let late = groups.iter().flatten().any(|&(x, first)| x == d && !first);
        let reach = if late { c.deadline.ns() } else { 0 };
        let mut own: Vec<Time> = dep.drift_knots();
        own.extend(dep.other_knots());
        if let Some((period, duration)) = dep.periodic_edges()
            && period > 0
        {
            let mut k = a / period * period;
            while k < b.saturating_add(work).saturating_add(reach) && own.len() <= MAX_KNOTS {
                own.extend([k, k.saturating_add(duration)]);
                k = k.saturating_add(period);
            }
        }
        knots.extend(own.iter().map(|k| k.saturating_sub(work)));
        if late {
            knots.extend(own.iter().map(|k| k.saturating_sub(work).saturating_sub(c.deadline.ns())));
        }
    }
    if let Arrivals::PoissonProfile { points } = &c.arrivals {
        knots.extend(points.iter().map(|p| p.0.ns()));
    }
    if let Arrivals::Burst { at, duration, .. } = &c.arrivals {
        knots.extend([at.ns(), at.ns().saturating_add(duration.ns())]);
    }
    knots.retain(|&k| k > a && k < b);
    knots.extend([a, b]);
    knots.sort_unstable();
    knots.dedup();
    let edges: Vec<Time> = if knots.len() > MAX_KNOTS {
        (0..=UNIFORM_STEPS).map(|i| a + ((b - a) as f64 * i as f64 / UNIFORM_STEPS as f64) as Time).collect()
    } else {
        knots
    };
    match weights {
        Weights::Times(times) => {
            let inside: Vec<Time> = times.into_iter().filter(|&t| t >= a && t < b).collect();
            if inside.is_empty() {
                return Err("no request arrives in the span".into());
            }
            Ok((inside.iter().map(|&t| p(t)).sum::<f64>() / inside.len() as f64, ""))
        }
        Weights::Unknown => {
            // The largest p(t) on a fine grid between knots, and at each side of every knot.
            let mut best: f64 = 0.0;
            for w in edges.windows(2) {
                let (x, y) = (w[0], w[1]);
                for i in 0..=SIMPSON_STEPS {
                    let t = x + ((y - x) as f64 * i as f64 / SIMPSON_STEPS as f64) as Time;
                    best = best.max(p(t.min(b - 1)));
                }
            }
            Ok((best, ", at the best moment of the span (arrivals follow answers, so they are not weighted)"))
        }
        Weights::Rate(rate) => {
            let (mut num, mut den) = (0.0, 0.0);
            for w in edges.windows(2) {
                let (n, d) = simpson(w[0], w[1], |t| {
                    let r = rate(t);
                    (r * p(t), r)
                });
                num += n;
                den += d;
            }
            if den <= 0.0 {
                return Err("no request arrives in the span".into());
            }
            Ok((num / den, ""))
        }
    }
}

/// The calls that bound class `ci`'s in-time ratio, as groups of (dependency id, whether
/// the call is in the first step): a request is in time only if each group has a call that
/// answers in time (the module docs give the rule). `Err` when no call bounds it.
fn bounding_groups(s: &Scenario, ci: usize) -> Result<Vec<Vec<(usize, bool)>>, String> {
    let c = &s.classes[ci];
    if c.calls.is_empty() {
        return Ok(vec![vec![(0, true)]]);
    }
    let id = |name: &str| s.deps().iter().position(|d| d.name == name);
    let mut groups = Vec::new();
    for (k, step) in c.calls.iter().enumerate() {
        let first = k == 0;
        match step {
            Step::Call(d) => groups.extend(id(d).map(|d| vec![(d, first)])),
            Step::Optional { .. } => {}
            Step::Parallel { join: Join::All, calls } => {
                let required = calls.iter().filter_map(|x| match x {
                    Step::Call(d) => id(d),
                    _ => None,
                });
                groups.extend(required.map(|d| vec![(d, first)]));
            }
            Step::Parallel { calls, .. } => {
                let required: Option<Vec<usize>> = calls
                    .iter()
                    .map(|x| match x {
                        Step::Call(d) => id(d),
                        _ => None,
                    })
                    .collect();
                groups.extend(required.map(|ds| ds.into_iter().map(|d| (d, first)).collect()));
            }
        }
    }
    if groups.is_empty() {
        return Err(format!(
            "class \"{}\" has no required call (an optional call's failure degrades the answer)",
            c.name
        ));
    }
    Ok(groups)
}

/// A dependency's knots, sorted, for the least drift, error rate and slow-mode time over a
/// later call's window of start times.
struct Window {
    knots: Vec<Time>,
}

impl Window {
    fn of(dep: &DependencyModel) -> Self {
        let mut knots = dep.drift_knots();
        knots.extend(dep.other_knots());
        knots.sort_unstable();
        knots.dedup();
        Self { knots }
    }

    /// The least (slow-mode time, error rate, drift) over starts in `[x, y]` (ns), `None` when
    /// the dependency is unavailable throughout. Between knots drift and error rate are
    /// linear and the mode constant, so the extremes lie at the window's ends, its knots and
    /// just before them; a periodic drift is at its least value in any window that meets a
    /// period's quiet part or its burst (both are read). Past [`WINDOW_KNOTS`] knots in the
    /// window, the whole run's knots are read instead (a smaller least, still a bound).
    fn least(&self, dep: &DependencyModel, x: Time, y: Time) -> Option<(f64, f64, f64)> {
        let (i, j) = (self.knots.partition_point(|&k| k <= x), self.knots.partition_point(|&k| k <= y));
        let inside: &[Time] = if j - i > WINDOW_KNOTS { &self.knots } else { &self.knots[i..j] };
        let mut at: Vec<Time> = vec![x, y];
        at.extend(inside.iter().flat_map(|&k| [k.saturating_sub(1), k]).map(|k| k.clamp(x, y)));
        if j - i > WINDOW_KNOTS {
            at.extend(inside.iter().copied());
        }
        if let Some((period, duration)) = dep.periodic_edges()
            && period > 0
        {
            // The part `x` is in, and the next edges if the window reaches them.
            let first = x / period * period;
            for k in [first, first.saturating_add(duration), first.saturating_add(period)] {
                at.push(k.clamp(x, y));
            }
        }
        let extra = at
            .iter()
            .filter_map(|&t| match dep.mode(t) {
                Mode::Unavailable => None,
                Mode::Slow(e) => Some(e.ns() as f64),
                Mode::Healthy => Some(0.0),
            })
            .fold(f64::INFINITY, f64::min);
        if extra.is_infinite() {
            return None;
        }
        let error = at.iter().map(|&t| dep.error_rate(t)).fold(f64::INFINITY, f64::min);
        let drift = at.iter().map(|&t| dep.drift(t)).fold(f64::INFINITY, f64::min);
        Some((extra, error, drift))
    }
}

/// Simpson's rule for the two integrals of `f` over `[x, y]` (ns), in [`SIMPSON_STEPS`]
/// subintervals; the value at `y` is taken just before it (the span is half-open, and a
/// step's new value starts at its knot).
fn simpson(x: Time, y: Time, f: impl Fn(Time) -> (f64, f64)) -> (f64, f64) {
    let n = SIMPSON_STEPS;
    let h = (y - x) as f64 / n as f64;
    let (mut a, mut b) = (0.0, 0.0);
    for i in 0..=n {
        let t = if i == n { y - 1 } else { x + (h * i as f64) as Time };
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let (u, v) = f(t.max(x));
        a += w * u;
        b += w * v;
    }
    (a * h / 3.0, b * h / 3.0)
}

/// The sentence for a constraint beyond its ceiling: `no policy can meet
/// incident:query/in_time_ratio >= 0.5: the best possible is 4.76 % (with one call per
/// request and no queueing)`; `None` when the target is within reach or there is no bound.
pub fn unreachable_text(c: &Ceiling) -> Option<String> {
    c.unreachable.then(|| {
        format!(
            "no policy can meet {} {} {}: the best possible is {:.2} % ({})",
            c.metric,
            c.op,
            c.value,
            c.best * 100.0,
            c.why
        )
    })
}
