//! From figures to a decision: an objective, constraints judged by one-sided 95 % bounds over
//! replications, and the choice among candidates (policy sets in a run, settings in a sweep or
//! a `tune` search).
//!
//! The module knows nothing of how candidates were run: callers hand it, per candidate, the
//! objective's value and each constraint's value in every replication (the same seeds for
//! every candidate: common random numbers), and get back verdicts and a choice. `run`, `sweep`
//! and `tune` all decide through here, so a constraint means the same thing everywhere.

pub mod feasible;
pub mod recommendation;

pub use crate::metrics::decision::{Bounds, Lost, Sense, Verdict};
pub use crate::metrics::measure::{Measure, ObjectiveError, ObjectiveRef};
pub use crate::scenario::{Resolve, measure_of, validate_decide as validate};

use crate::metrics::catalogue::Margins;
use crate::scenario::{Cmp, Constraint, Decide};
use crate::stats::{paired_ci95, t95_one_sided};

impl Sense {
    /// The sense and the objective as written; `None` unless exactly one is given.
    pub fn of(d: &Decide) -> Option<(Sense, &str)> {
        match (&d.minimize, &d.maximize) {
            (Some(m), None) => Some((Sense::Minimize, m)),
            (None, Some(m)) => Some((Sense::Maximize, m)),
            _ => None,
        }
    }

    /// Is `a` strictly better than `b`?
    pub fn better(self, a: f64, b: f64) -> bool {
        match self {
            Sense::Minimize => a < b,
            Sense::Maximize => a > b,
        }
    }
}

impl Bounds {
    /// Bounds of the finite values (NaN figures where there are none).
    ///
    /// One-sided, unlike the two-sided interval every comparison uses
    /// ([`crate::stats::paired_ci95`]): a constraint asks one question, "does the figure stay
    /// on the right side of its target?", so all 5 % of the doubt is put on the side that
    /// could break it; either bound answers it at 95 %. The t quantile comes from the same
    /// place as the comparisons' ([`crate::stats::t95_one_sided`]).
    pub fn of(values: &[f64]) -> Bounds {
        let xs: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let n = xs.len();
        if n == 0 {
            return Bounds { n, mean: f64::NAN, lo: f64::NAN, hi: f64::NAN };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Bounds { n, mean, lo: mean, hi: mean };
        }
        let var = xs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = t95_one_sided(n - 1) * (var / n as f64).sqrt();
        Bounds { n, mean, lo: mean - half, hi: mean + half }
    }
}

/// One constraint judged on one candidate.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Judged {
    /// The values' mean and bounds.
    pub bounds: Bounds,
    /// The verdict.
    pub verdict: Verdict,
    /// Slack of the conservative bound: how far it lies on the right side of the target
    /// (negative: short by that much). For `Ge`/`Gt` it is `lo - value`, for `Le`/`Lt`
    /// `value - hi`.
    pub margin: f64,
    /// True with fewer than two replications: no interval could be estimated, the verdict is
    /// the single value's.
    pub untested: bool,
}

/// Judge `values` (one per replication) against `c`. `Eq` is treated as unsatisfiable by an
/// interval (validation refuses it); a constraint without finite values fails.
pub fn judge(c: &Constraint, values: &[f64]) -> Judged {
    let b = Bounds::of(values);
    let (conservative, hopeful, wants_high) = match c.op {
        Cmp::Ge | Cmp::Gt => (b.lo, b.hi, true),
        Cmp::Le | Cmp::Lt | Cmp::Eq => (b.hi, b.lo, false),
    };
    let meets = |x: f64| match c.op {
        Cmp::Ge => x >= c.value,
        Cmp::Gt => x > c.value,
        Cmp::Le => x <= c.value,
        Cmp::Lt => x < c.value,
        Cmp::Eq => false,
    };
    let verdict = if b.n == 0 {
        Verdict::Fails
    } else if meets(conservative) {
        Verdict::Holds
    } else if !meets(hopeful) {
        Verdict::Fails
    } else {
        Verdict::Unsure
    };
    let margin = if wants_high { conservative - c.value } else { c.value - conservative };
    Judged { bounds: b, verdict, margin: if b.n == 0 { f64::NEG_INFINITY } else { margin }, untested: b.n < 2 }
}

/// One candidate's replicated figures: the objective's value and each constraint's value in
/// every replication, replication `r` in position `r` (the same seeds for every candidate).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Samples {
    /// Objective per replication.
    pub objective: Vec<f64>,
    /// Per constraint (in `subject_to` order), its values per replication.
    pub constraints: Vec<Vec<f64>>,
}

/// One candidate evaluated.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Evaluated {
    /// The objective's mean and bounds.
    pub objective: Bounds,
    /// Each constraint's judgement, in `subject_to` order.
    pub constraints: Vec<Judged>,
    /// Every constraint holds.
    pub feasible: bool,
    /// The worst relative shortfall of a constraint that does not hold: `-margin / |value|`
    /// (absolute where the target is 0); 0 when feasible.
    pub violation: f64,
}

/// Evaluate a candidate's samples against `d`'s constraints.
pub fn evaluate(d: &Decide, s: &Samples) -> Evaluated {
    let constraints: Vec<Judged> = d.subject_to.iter().zip(&s.constraints).map(|(c, v)| judge(c, v)).collect();
    let feasible = constraints.len() == d.subject_to.len() && constraints.iter().all(|j| j.verdict == Verdict::Holds);
    let violation = d
        .subject_to
        .iter()
        .zip(&constraints)
        .filter(|(_, j)| j.verdict != Verdict::Holds)
        .map(|(c, j)| relative_shortfall(c, j))
        .fold(0.0, f64::max);
    Evaluated { objective: Bounds::of(&s.objective), constraints, feasible, violation }
}

fn relative_shortfall(c: &Constraint, j: &Judged) -> f64 {
    let short = (-j.margin).max(0.0);
    // An unsure constraint whose bound touches the target still is not shown to hold: count a
    // tiny shortfall so it ranks behind the feasible ones but ahead of clear failures.
    let short = if short == 0.0 { f64::MIN_POSITIVE } else { short };
    if c.value == 0.0 { short } else { short / c.value.abs() }
}

/// A decision setting evaluated in several conditions (environment points) combined into one
/// worst-case evaluation: feasible only if feasible in every condition; violation, objective
/// and every constraint's figures are the worst condition's (the objective's worst by `sense`).
pub fn worst_case(sense: Sense, per_condition: &[Evaluated]) -> Evaluated {
    let mut it = per_condition.iter();
    let Some(first) = it.next() else {
        return Evaluated {
            objective: Bounds::of(&[]),
            constraints: Vec::new(),
            feasible: false,
            violation: f64::INFINITY,
        };
    };
    let mut out = first.clone();
    for e in it {
        if sense.better(out.objective.mean, e.objective.mean) || e.objective.mean.is_nan() {
            out.objective = e.objective;
        }
        for (o, j) in out.constraints.iter_mut().zip(&e.constraints) {
            if j.margin < o.margin || (j.verdict != Verdict::Holds && o.verdict == Verdict::Holds) {
                *o = *j;
            }
        }
        out.feasible &= e.feasible;
        out.violation = out.violation.max(e.violation);
    }
    out
}

/// The margins a decision compares by ([`crate::stats`]'s rule): the objective's, and each
/// constraint's relative to its target (the unit of [`Evaluated::violation`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rule {
    /// The objective's margin in its unit; 0 for a decision axis (a setting has no noise).
    pub objective: f64,
    /// Per constraint (in `subject_to` order), its metric's margin divided by `|target|` (the
    /// margin itself where the target is 0), as violations are measured.
    pub violation: Vec<f64>,
}

impl Rule {
    /// The rule of `d` with the margin of each metric path (`[phase:][class/]metric`) given
    /// by `margin_of`.
    pub fn new(d: &Decide, margin_of: &dyn Fn(&str) -> f64) -> Rule {
        let objective = Sense::of(d).map_or(0.0, |(_, o)| margin_of(o));
        let violation = d
            .subject_to
            .iter()
            .map(|c| {
                let m = measure_of(c).map_or(0.0, |m| margin_of(&m.path()));
                if c.value == 0.0 { m } else { m / c.value.abs() }
            })
            .collect();
        Rule { objective, violation }
    }

    /// The rule of `d` under `margins` (a scenario's, or the catalogue's).
    pub fn of(d: &Decide, margins: &Margins) -> Rule {
        Rule::new(d, &|p| margins.of_path(p))
    }

    /// Constraint `i`'s margin in its metric's unit, for a target of `value` (violations are
    /// relative to the target, so the relative margin is scaled back).
    pub fn constraint_margin(&self, i: usize, value: f64) -> f64 {
        let m = self.violation.get(i).copied().unwrap_or(0.0);
        if value == 0.0 { m } else { m * value.abs() }
    }

    /// The violation two candidates may differ by and still tie: the largest relative margin
    /// among the constraints `e` does not meet.
    fn violation_margin(&self, e: &Evaluated) -> f64 {
        e.constraints
            .iter()
            .zip(&self.violation)
            .filter(|(j, _)| j.verdict != Verdict::Holds)
            .map(|(_, &m)| m)
            .fold(0.0, f64::max)
    }
}

/// The choice among candidates.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Choice {
    /// Index of the recommended candidate (`None` only when there are no candidates).
    pub recommended: Option<usize>,
    /// Whether the recommended candidate meets every constraint. When none does, the
    /// recommendation is the one with the least worst-case violation.
    pub feasible: bool,
    /// Index of the runner-up, if any.
    pub runner_up: Option<usize>,
    /// Why the runner-up lost.
    pub lost: Option<Lost>,
    /// The objective's margin the choice was made with ([`Rule::objective`]).
    #[serde(default)]
    pub margin: f64,
}

/// Choose among `evals` (candidate `k`'s samples in `samples[k]`, for paired comparisons):
/// the feasible candidate with the best objective mean; a runner-up whose paired difference
/// cannot be shown beyond the objective's margin (`rule`, [`crate::stats::paired_ci95`]) is
/// reported as a tie (`Lost::Objective { significant: false }`), the earlier candidate kept
/// on equal means. Without a feasible one, the least violation; candidates whose violations
/// are equal within the violated metric's margin ([`Rule`]) are ranked by the objective, and
/// reported as tied when that too is within its margin. Feasible candidates' means are taken
/// over the replications in which every one of them has an objective value
/// ([`crate::stats::common_means`], the rule of every best and star): one without a value
/// ranks after those with one.
pub fn choose(sense: Sense, evals: &[Evaluated], samples: &[Samples], rule: &Rule) -> Choice {
    let means = ranking_means(evals, samples);
    let mut order: Vec<usize> = (0..evals.len()).collect();
    order.sort_by(|&a, &b| rank(sense, (&evals[a], means[a]), (&evals[b], means[b])).then(a.cmp(&b)));
    let equal = |a: usize, b: usize| equal_violation(rule, &evals[a], &evals[b]);
    if let Some(&first) = order.first().filter(|&&k| !evals[k].feasible) {
        // The least violators, equal within the margin: the objective decides among them.
        let n = order.iter().take_while(|&&k| equal(first, k)).count();
        order[..n].sort_by(|&a, &b| by_objective(sense, means[a], means[b]).then(a.cmp(&b)));
    }
    let recommended = order.first().copied();
    let runner_up = order.get(1).copied();
    let lost = match (recommended, runner_up) {
        (Some(r), Some(u)) => Some(why_lost(sense, r, u, evals, samples, &means, rule)),
        _ => None,
    };
    Choice {
        recommended,
        feasible: recommended.is_some_and(|r| evals[r].feasible),
        runner_up,
        lost,
        margin: rule.objective,
    }
}

/// Two infeasible candidates' violations differ by no more than the margin of a metric
/// either fails.
fn equal_violation(rule: &Rule, a: &Evaluated, b: &Evaluated) -> bool {
    let tol = rule.violation_margin(a).max(rule.violation_margin(b));
    !a.feasible && !b.feasible && (a.violation - b.violation).abs() <= tol
}

/// Better objective mean first; one without a value last.
fn by_objective(sense: Sense, x: f64, y: f64) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Equal,
        (true, false) => Greater,
        (false, true) => Less,
        _ if sense.better(x, y) => Less,
        _ if sense.better(y, x) => Greater,
        _ => Equal,
    }
}

/// The objective mean each candidate is ranked by: a feasible one's over the replications
/// every feasible candidate has a value in; an infeasible one's own (it ranks by violation).
fn ranking_means(evals: &[Evaluated], samples: &[Samples]) -> Vec<f64> {
    let feasible: Vec<usize> = (0..evals.len()).filter(|&k| evals[k].feasible).collect();
    let sets: Vec<&[f64]> = feasible.iter().map(|&k| samples.get(k).map_or(&[][..], |s| &s.objective[..])).collect();
    let common = crate::stats::common_means(&sets);
    let mut means: Vec<f64> = evals.iter().map(|e| e.objective.mean).collect();
    for (&k, m) in feasible.iter().zip(common) {
        means[k] = m;
    }
    means
}

fn rank(sense: Sense, (a, am): (&Evaluated, f64), (b, bm): (&Evaluated, f64)) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (a.feasible, b.feasible) {
        (true, false) => Less,
        (false, true) => Greater,
        (false, false) => a.violation.total_cmp(&b.violation),
        (true, true) => by_objective(sense, am, bm),
    }
}

fn why_lost(
    sense: Sense,
    r: usize,
    u: usize,
    evals: &[Evaluated],
    samples: &[Samples],
    means: &[f64],
    rule: &Rule,
) -> Lost {
    let (er, eu) = (&evals[r], &evals[u]);
    if er.feasible && !eu.feasible {
        let (k, j) = eu
            .constraints
            .iter()
            .enumerate()
            .filter(|(_, j)| j.verdict != Verdict::Holds)
            .min_by(|a, b| a.1.margin.total_cmp(&b.1.margin))
            .expect("an infeasible candidate has a constraint that does not hold");
        return Lost::Infeasible { constraint: k, by: (-j.margin).max(0.0) };
    }
    if !er.feasible && !equal_violation(rule, er, eu) {
        return Lost::MoreViolation { by: eu.violation - er.violation };
    }
    // Both feasible, or equally infeasible: the objective decided, by the shared rule.
    let sign = if sense == Sense::Minimize { 1.0 } else { -1.0 };
    let by = sign * (means[u] - means[r]);
    let (ou, or) = (&samples[u].objective, &samples[r].objective);
    let (worse, better) = if sense == Sense::Minimize { (ou, or) } else { (or, ou) };
    let significant = paired_ci95(worse, better, rule.objective).differs;
    Lost::Objective { by, significant }
}

#[cfg(test)]
mod tests;
