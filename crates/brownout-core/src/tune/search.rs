//! The search: argmin's Nelder-Mead simplex over the knobs scaled to the unit cube, restarted
//! (alternately around the best feasible candidate with a smaller simplex and at the next point
//! of a Halton sequence) until the budget of runs is spent.
//!
//! The simplex sees one number per candidate, in the order `decide::choose` ranks them: the
//! objective's mean (negated to maximise) when `decide::evaluate` finds it feasible, scaled
//! below every infeasible cost, else a cost above every feasible one that grows with the
//! worst relative shortfall, so it walks back into the feasible region. The choice
//! itself is `decide::choose` over every candidate evaluated, not the simplex's last vertex.
//!
//! Settings are rounded (integer knobs) and clamped before they are evaluated, and each
//! distinct setting is evaluated once: a repeat costs no run. Every evaluation is a pure
//! function of the spec and the setting (common-random-number seeds per replication), and the
//! simplex's moves are a pure function of those, so the trace does not depend on the thread
//! count, and replaying a journal's evaluations reproduces the search up to where it stopped.

use std::cell::RefCell;
use std::collections::BTreeMap;

use argmin::core::{CostFunction, Executor};
use argmin::solver::neldermead::NelderMead;

use super::space::Space;
use crate::decide::{Evaluated, Samples, Sense, evaluate};

/// 2^-512: feasible objectives are scaled by it, exactly (a power of two keeps every digit of
/// a normal number and its order), so every finite one lies below 2^512 in magnitude.
const FEASIBLE_SCALE: f64 = f64::from_bits((1023 - 512) << 52);
/// 2^512: a feasible candidate without an objective value, after every one with a value.
const NO_VALUE: f64 = f64::from_bits((1023 + 512) << 52);
/// 2^513: infeasible candidates cost `INFEASIBLE * (1 + violation)`, above every feasible cost.
const INFEASIBLE: f64 = f64::from_bits((1023 + 513) << 52);
/// The simplex stops when its vertices' costs spread less than this: 1e-9 of an objective's
/// units, scaled as feasible objectives are, so a simplex of feasible candidates stops where
/// it did on unscaled objectives.
const SD_TOLERANCE: f64 = 1e-9 * FEASIBLE_SCALE;
/// Simplex iterations per start (repeats are free, so a stalled simplex must be cut off).
const ITERS_PER_START: u64 = 200;
/// Starts in a row that evaluate nothing new end the search.
const STALE_STARTS: usize = 4;
/// Starts at most.
const MAX_STARTS: usize = 64;

/// One candidate evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The knob values, in knob order.
    pub values: Vec<f64>,
    /// Objective and constraints per replication.
    pub samples: Samples,
    /// Judged by `decide::evaluate`.
    pub eval: Evaluated,
    /// Runs spent up to and including this candidate.
    pub runs: u64,
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The budget of runs would be exceeded by one more candidate.
    Runs,
    /// The wall-clock budget ran out (the result then depends on the machine's speed).
    Wall,
    /// Restarts found nothing new to evaluate.
    Converged,
}

/// What the caller provides: measured figures of settings already journaled, a callback per
/// new evaluation (to journal it), and a clock check.
pub struct Hooks<'a> {
    /// Samples of settings evaluated before (a resumed search), by setting.
    pub known: BTreeMap<Vec<u64>, Samples>,
    /// Called with every evaluation, in order; `fresh` is false for one replayed from `known`.
    pub on_eval: &'a mut dyn FnMut(&Evaluation, bool) -> anyhow::Result<()>,
    /// True once the wall-clock budget is spent.
    pub out_of_time: &'a dyn Fn() -> bool,
    /// Worker threads for a candidate's replications.
    pub threads: usize,
}

/// The key of a setting in [`Hooks::known`].
pub fn key(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The error a cost function returns to end the run of the simplex.
#[derive(Debug)]
struct Halt(Stop);

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "search stopped: {:?}", self.0)
    }
}

impl std::error::Error for Halt {}

struct State<'a, 'h> {
    space: &'a Space,
    sense: Sense,
    hooks: Hooks<'h>,
    done: Vec<Evaluation>,
    seen: BTreeMap<Vec<u64>, f64>,
    runs: u64,
    pool: rayon::ThreadPool,
    /// Why the search must end ([`Halt`] or an error), once a cost could not be had.
    ended: Option<anyhow::Error>,
}

/// What the simplex calls: a handle on the state, which outlives an executor ended by [`Halt`].
struct Problem<'r, 'a, 'h> {
    state: &'r RefCell<State<'a, 'h>>,
}

/// The one number the simplex minimises for a candidate: lexicographic in (feasible,
/// violation, objective) whatever the figures' size, as `decide::choose` ranks. A feasible
/// objective, scaled by a power of two, lies below 2^512 in magnitude; one without a value
/// costs 2^512; an infeasible candidate costs 2^513 and more, growing with its violation
/// (capped below overflow), so the simplex walks back into the feasible region.
fn cost_of(sense: Sense, e: &Evaluated) -> f64 {
    let m = e.objective.mean;
    match (e.feasible, sense) {
        (true, _) if m.is_nan() => NO_VALUE,
        (true, Sense::Minimize) => m * FEASIBLE_SCALE,
        (true, Sense::Maximize) => -m * FEASIBLE_SCALE,
        (false, _) => INFEASIBLE * (1.0 + if e.violation.is_nan() { 1e150 } else { e.violation.clamp(0.0, 1e150) }),
    }
}

impl State<'_, '_> {
    fn cost(&mut self, u: &[f64]) -> anyhow::Result<f64> {
        let values = self.space.setting(u);
        let k = key(&values);
        if let Some(&c) = self.seen.get(&k) {
            return Ok(c);
        }
        let r = u64::from(self.space.spec.replications);
        if self.runs + r > self.space.spec.budget.runs {
            return Err(Halt(Stop::Runs).into());
        }
        let replay = self.hooks.known.get(&k).cloned();
        if replay.is_none() && (self.hooks.out_of_time)() {
            return Err(Halt(Stop::Wall).into());
        }
        let fresh = replay.is_none();
        let samples = match replay {
            Some(s) => s,
            None => {
                // A setting the scenario refuses (shares summing over 1) is never a candidate.
                if self.space.scenario(&values).is_err() {
                    self.seen.insert(k, f64::INFINITY);
                    return Ok(f64::INFINITY);
                }
                let space = self.space;
                self.pool.install(|| space.measure(&values)).map_err(|m| anyhow::anyhow!("setting {values:?}: {m}"))?
            }
        };
        self.runs += r;
        let eval = evaluate(&self.space.spec.decide, &samples);
        let c = cost_of(self.sense, &eval);
        let e = Evaluation { values, samples, eval, runs: self.runs };
        (self.hooks.on_eval)(&e, fresh)?;
        self.done.push(e);
        self.seen.insert(k, c);
        Ok(c)
    }
}

impl CostFunction for Problem<'_, '_, '_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, u: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        // argmin's Nelder-Mead unwraps the costs of its first simplex, so an error (the budget
        // spent as a start begins) is kept aside and every later cost is infinite; the search
        // ends with it once the executor returns.
        let mut state = self.state.borrow_mut();
        if state.ended.is_some() {
            return Ok(f64::INFINITY);
        }
        match state.cost(u) {
            Ok(c) => Ok(c),
            Err(e) => {
                state.ended = Some(e);
                Ok(f64::INFINITY)
            }
        }
    }
}

/// The `i`-th point of the Halton sequence in `dims` dimensions (bases 2, 3, 5, ...).
fn halton(i: usize, dims: usize) -> Vec<f64> {
    const PRIMES: [usize; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    (0..dims)
        .map(|d| {
            let b = PRIMES[d % PRIMES.len()];
            let (mut f, mut r, mut n) = (1.0, 0.0, i);
            while n > 0 {
                f /= b as f64;
                r += f * (n % b) as f64;
                n /= b;
            }
            r
        })
        .collect()
}

/// A start simplex: `center` and one vertex `step` away along each axis (inward at an edge).
fn simplex(center: &[f64], step: f64) -> Vec<Vec<f64>> {
    let mut out = vec![center.to_vec()];
    for i in 0..center.len() {
        let mut v = center.to_vec();
        v[i] = if center[i] + step <= 1.0 { center[i] + step } else { center[i] - step };
        out.push(v);
    }
    out
}

/// Where start `k` begins: the cube's centre, then alternately around the best candidate so
/// far (its simplex shrinking with each return) and at Halton points.
fn start(k: usize, best: Option<Vec<f64>>, dims: usize) -> (Vec<f64>, f64) {
    match (k, best) {
        (0, _) => (vec![0.5; dims], 0.35),
        (k, Some(b)) if k % 2 == 1 => (b, 0.15 / (1.0 + (k / 2) as f64)),
        (k, _) => (halton(k / 2 + 1, dims), 0.25),
    }
}

/// The unit-cube point of the best candidate so far (by `decide::choose`'s order).
fn best_unit(space: &Space, state: &State) -> Option<Vec<f64>> {
    let evals: Vec<Evaluated> = state.done.iter().map(|e| e.eval.clone()).collect();
    let samples: Vec<Samples> = state.done.iter().map(|e| e.samples.clone()).collect();
    let k = crate::decide::choose(
        state.sense,
        &evals,
        &samples,
        &crate::decide::Rule::of(&space.spec.decide, &space.base.margins()),
    )
    .recommended?;
    Some(space.dims.iter().zip(&state.done[k].values).map(|(d, &x)| d.unit(x)).collect())
}

/// Search the space; returns every candidate evaluated, in order, and why it stopped.
pub fn search(space: &Space, hooks: Hooks) -> anyhow::Result<(Vec<Evaluation>, Stop)> {
    let (sense, _) = Sense::of(&space.spec.decide).ok_or_else(|| anyhow::anyhow!("decide: no objective"))?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(hooks.threads.max(1)).build()?;
    let state = RefCell::new(State {
        space,
        sense,
        hooks,
        done: Vec::new(),
        seen: BTreeMap::new(),
        runs: 0,
        pool,
        ended: None,
    });
    let dims = space.dims.len();
    let (mut stale, mut stop) = (0, Stop::Converged);
    for k in 0..MAX_STARTS {
        let before = state.borrow().done.len();
        let best = best_unit(space, &state.borrow());
        let (center, step) = start(k, best, dims);
        let solver = NelderMead::new(simplex(&center, step)).with_sd_tolerance(SD_TOLERANCE)?;
        let problem = Problem { state: &state };
        let run = Executor::new(problem, solver).configure(|s| s.max_iters(ITERS_PER_START)).timer(false).run();
        let ended = state.borrow_mut().ended.take().or(run.err());
        if let Some(e) = ended {
            match e.downcast_ref::<Halt>() {
                Some(Halt(s)) => {
                    stop = *s;
                    break;
                }
                None => return Err(e),
            }
        }
        let after = state.borrow().done.len();
        stale = if after == before { stale + 1 } else { 0 };
        if stale >= STALE_STARTS {
            break;
        }
    }
    Ok((state.into_inner().done, stop))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::Bounds;

    fn eval(feasible: bool, mean: f64, violation: f64) -> Evaluated {
        Evaluated { objective: Bounds::of(&[mean]), constraints: Vec::new(), feasible, violation }
    }

    #[test]
    fn every_infeasible_candidate_costs_more_than_every_feasible_one() {
        // A business cost of 2e12 over a long horizon is a feasible objective above the old
        // finite penalty (1e12 * (1 + 0.5)): the simplex must still prefer it to any candidate
        // that breaks a constraint, whatever either figure's size.
        for sense in [Sense::Minimize, Sense::Maximize] {
            let feasible = [0.0, 1.0, -1.0, 2e12, -2e12, 1e300, -1e300, f64::MAX, -f64::MAX, f64::NAN];
            let infeasible = [0.0, f64::MIN_POSITIVE, 0.5, 1.0, 1e6, 1e300, f64::INFINITY];
            for &m in &feasible {
                for &v in &infeasible {
                    for &im in &[0.0, 5.0, -5.0, 1e300, f64::NAN] {
                        let (f, i) = (cost_of(sense, &eval(true, m, 0.0)), cost_of(sense, &eval(false, im, v)));
                        assert!(f < i, "{sense:?}: feasible {m} costs {f}, infeasible by {v} costs {i}");
                    }
                }
            }
            // Feasible candidates keep their order, an undefined objective after every defined one.
            let c = |m| cost_of(sense, &eval(true, m, 0.0));
            let (better, worse) = if sense == Sense::Minimize { (1e12, 2e12) } else { (2e12, 1e12) };
            assert!(c(better) < c(worse) && c(worse) < c(f64::NAN));
            assert!(c(if sense == Sense::Minimize { f64::MAX } else { -f64::MAX }) < c(f64::NAN));
            // Infeasible ones rank by violation: a smaller shortfall costs less.
            let v = |x| cost_of(sense, &eval(false, 0.0, x));
            assert!(v(0.1) < v(0.2) && v(0.2) < v(1e9));
        }
    }
}
