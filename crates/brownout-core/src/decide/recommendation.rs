//! `recommendation.json`: what `run`, `sweep` and `tune` recommend, in one shape.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Bounds, Choice, Evaluated, Judged, Lost, Sense, Verdict};
use crate::scenario::{Cmp, Decide};

/// The file's contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// `"run"`, `"sweep"` or `"tune"`.
    pub source: String,
    /// Minimise or maximise.
    pub sense: Sense,
    /// The objective as written.
    pub objective: String,
    /// The chosen candidate; `None` only when there was nothing to choose from.
    pub recommended: Option<Candidate>,
    /// Whether the recommended candidate meets every constraint (if not, it is the one with
    /// the least worst-case violation).
    pub feasible: bool,
    /// The recommended candidate's constraints, each with its interval and verdict (the same
    /// as `recommended.constraints`, at the top for readers).
    pub constraints: Vec<ConstraintOut>,
    /// The runner-up, if any.
    pub runner_up: Option<Candidate>,
    /// Why the runner-up lost.
    pub lost: Option<Lost>,
    /// Replications behind each candidate's figures.
    pub replications: usize,
    /// Candidates evaluated (policy sets, settings, or points `tune` tried).
    pub candidates: usize,
}

/// One candidate: a policy set, with the decision settings that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The policy set's name.
    pub policy: String,
    /// Decision axis values (name to value in the axis's unit); empty in a run.
    pub setting: BTreeMap<String, f64>,
    /// The policy stack with the setting applied, as RON ready to paste into a scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// The objective's mean and one-sided 95 % bounds.
    pub objective: Bounds,
    /// Each constraint judged.
    pub constraints: Vec<ConstraintOut>,
    /// Every constraint holds.
    pub feasible: bool,
    /// Worst relative shortfall (0 when feasible).
    pub violation: f64,
}

/// One constraint, as written and as judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConstraintOut {
    /// `[phase:][class/]metric`.
    pub metric: String,
    /// `>=`, `>`, `<=` or `<`.
    pub op: String,
    /// The target.
    pub value: f64,
    /// Replications.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// One-sided 95 % lower bound.
    pub lo: f64,
    /// One-sided 95 % upper bound.
    pub hi: f64,
    /// Verdict.
    pub verdict: Verdict,
    /// Slack of the conservative bound (negative: short by that much).
    pub margin: f64,
    /// One replication: no interval was estimated.
    pub untested: bool,
}

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
            let m = super::Measure::of_constraint(c).map(|m| m.path()).unwrap_or_else(|_| c.metric.clone());
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
    }
}
