//! `recommendation.json`: what `run`, `sweep` and `tune` recommend, in one shape.

use std::collections::BTreeMap;

use super::{Choice, Evaluated, Judged, Sense};
pub use crate::metrics::decision::{Candidate, ConstraintOut, Recommendation};
use crate::scenario::{Cmp, Decide};

/// What the caller knows of a candidate beyond its evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// Policy set name.
    pub policy: String,
    /// Decision settings.
    pub setting: BTreeMap<String, f64>,
    /// Ready-to-paste stack.
    pub stack: Option<String>,
}

/// The operator as people write it.
pub fn op_text(op: Cmp) -> &'static str {
    match op {
        Cmp::Ge => ">=",
        Cmp::Gt => ">",
        Cmp::Le => "<=",
        Cmp::Lt => "<",
        Cmp::Eq => "==",
    }
}

/// `d`'s constraints with their judgements, as written to the file.
pub fn constraints_out(d: &Decide, judged: &[Judged]) -> Vec<ConstraintOut> {
    d.subject_to
        .iter()
        .zip(judged)
        .map(|(c, j)| {
            let m = super::measure_of(c).map(|m| m.path()).unwrap_or_else(|_| c.metric.clone());
            ConstraintOut {
                metric: m,
                op: op_text(c.op).into(),
                value: c.value,
                n: j.bounds.n,
                mean: j.bounds.mean,
                lo: j.bounds.lo,
                hi: j.bounds.hi,
                verdict: j.verdict,
                margin: j.margin,
                untested: j.untested,
            }
        })
        .collect()
}

fn candidate(d: &Decide, label: &Label, e: &Evaluated) -> Candidate {
    Candidate {
        policy: label.policy.clone(),
        setting: label.setting.clone(),
        stack: label.stack.clone(),
        objective: e.objective,
        constraints: constraints_out(d, &e.constraints),
        feasible: e.feasible,
        violation: e.violation,
    }
}

/// The rule a decision followed, in words: the objective compared by the shared rule
/// ([`crate::stats::rule_text`]) with its margin, constraints by one-sided bounds.
pub fn rule_text(d: &Decide, margin: f64) -> String {
    use crate::metrics::catalog::{Unit, by_path};
    let unit = Sense::of(d).and_then(|(_, o)| by_path(o)).map_or(Unit::Number, |m| m.unit);
    format!(
        "{}; constraints by one-sided 95 % bounds",
        crate::stats::rule_text(margin, unit).replacen("a difference", "an objective difference", 1)
    )
}

/// Assemble the file from a choice over `evals` labelled by `labels` (same order).
pub fn build(source: &str, d: &Decide, labels: &[Label], evals: &[Evaluated], choice: &Choice) -> Recommendation {
    let (sense, objective) = Sense::of(d).map(|(s, o)| (s, o.to_string())).unwrap_or((Sense::Minimize, String::new()));
    let recommended = choice.recommended.map(|k| candidate(d, &labels[k], &evals[k]));
    Recommendation {
        source: source.into(),
        sense,
        objective,
        constraints: recommended.as_ref().map(|c| c.constraints.clone()).unwrap_or_default(),
        recommended,
        feasible: choice.feasible,
        runner_up: choice.runner_up.map(|k| candidate(d, &labels[k], &evals[k])),
        lost: choice.lost.clone(),
        replications: evals.iter().map(|e| e.objective.n).max().unwrap_or(0),
        candidates: evals.len(),
        rule: rule_text(d, choice.margin),
    }
}
