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
    use crate::metrics::catalogue::{Unit, by_path};
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
        bounds: Vec::new(),
        flags: Vec::new(),
        rule: rule_text(d, choice.margin),
    }
}

/// Everything the recommendation warns about, in reading order: each constraint no candidate
/// can meet whatever the policy (its bound, `decide::feasible`), then the flags about the
/// question as asked. Every printer (terminal, Markdown, HTML) shows these lines.
pub fn warnings(r: &Recommendation) -> Vec<String> {
    let bounds = r.bounds.iter().filter_map(super::feasible::unreachable_text);
    bounds.chain(r.flags.iter().cloned()).collect()
}

/// Each free decision setting's range (name to lowest and highest value it could take): a
/// sweep's axis values, a `tune` knob's `range`. Linked axes follow another and are left out.
pub type Ranges = BTreeMap<String, (f64, f64)>;

/// Warnings about the question as asked, for `Recommendation::flags`: the recommended value
/// at the edge of its range (the best may lie beyond it), a constraint every candidate meets
/// (it never bound the choice), and a constraint the decision settings do not move (its means
/// over the candidates all within the replications' noise). `evals` in `labels`' order.
pub fn flags(
    d: &Decide,
    labels: &[Label],
    evals: &[Evaluated],
    choice: &Choice,
    ranges: &Ranges,
    rule: &super::Rule,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(k) = choice.recommended {
        for (name, &v) in &labels[k].setting {
            let Some(&(lo, hi)) = ranges.get(name) else { continue };
            let eps = 1e-9 * (hi - lo).abs().max(f64::MIN_POSITIVE);
            if lo < hi && ((v - lo).abs() <= eps || (hi - v).abs() <= eps) {
                out.push(format!(
                    "the recommended value {name} = {v} is at the edge of the range [{lo}, {hi}]: widen the range"
                ));
            }
        }
    }
    if evals.len() < 2 {
        return out;
    }
    let knob = match ranges.keys().collect::<Vec<_>>()[..] {
        [one] => format!("the knob {one}"),
        _ => "the decision settings".to_string(),
    };
    for (i, c) in d.subject_to.iter().enumerate() {
        let what = format!(
            "{} {} {}",
            super::measure_of(c).map(|m| m.path()).unwrap_or_else(|_| c.metric.clone()),
            op_text(c.op),
            c.value
        );
        let judged: Vec<&Judged> = evals.iter().filter_map(|e| e.constraints.get(i)).collect();
        if judged.len() == evals.len() && judged.iter().all(|j| j.verdict == super::Verdict::Holds) {
            out.push(format!("the constraint {what} never bound: every candidate meets it; widen the range"));
        }
        let means: Vec<f64> = judged.iter().map(|j| j.bounds.mean).filter(|m| m.is_finite()).collect();
        if means.len() < 2 {
            continue;
        }
        let spread = means.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            - means.iter().copied().fold(f64::INFINITY, f64::min);
        // The knob moves the constraint only if its means differ by more than the metric's
        // practical-equivalence margin (the rule every comparison follows) and by more than the
        // replications' noise (the widest one-sided interval of the candidates' means).
        let margin = rule.constraint_margin(i, c.value);
        let width = judged
            .iter()
            .filter(|j| j.bounds.n >= 2)
            .map(|j| j.bounds.hi - j.bounds.lo)
            .filter(|w| w.is_finite())
            .fold(f64::NAN, f64::max);
        if spread == 0.0 || spread <= margin || spread <= width {
            out.push(format!(
                "{knob} does not move the constraint {what}: its means over the candidates differ by at most {spread:.4}, within its margin ({margin}) or the replications' noise"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Samples, choose, evaluate};
    use super::*;
    use crate::scenario::Constraint;

    fn decide(value: f64) -> Decide {
        let c = Constraint {
            class: Some("a".into()),
            dependency: None,
            metric: "in_time_ratio".into(),
            phase: None,
            op: Cmp::Ge,
            value,
        };
        Decide { minimize: Some("share".into()), maximize: None, subject_to: vec![c] }
    }

    /// Candidates `share` = 0.5, 0.7, 0.9 (objective: the share, minimised) with the given
    /// constraint values over three replications each.
    fn flagged(d: &Decide, values: [[f64; 3]; 3]) -> Vec<String> {
        let shares = [0.5, 0.7, 0.9];
        let samples: Vec<Samples> = shares
            .iter()
            .zip(values)
            .map(|(&s, v)| Samples { objective: vec![s; 3], constraints: vec![v.to_vec()] })
            .collect();
        let evals: Vec<Evaluated> = samples.iter().map(|s| evaluate(d, s)).collect();
        let rule = crate::decide::Rule::of(d, &Default::default());
        let choice = choose(Sense::Minimize, &evals, &samples, &rule);
        let labels: Vec<Label> = shares
            .iter()
            .map(|&s| Label { policy: "p".into(), setting: [("share".to_string(), s)].into(), stack: None })
            .collect();
        let ranges: Ranges = [("share".to_string(), (0.5, 0.9))].into();
        flags(d, &labels, &evals, &choice, &ranges, &rule)
    }

    #[test]
    fn a_choice_inside_the_range_that_the_constraint_decides_raises_no_flag() {
        // 0.5 fails 0.9 clearly, 0.7 and 0.9 hold: 0.7 is chosen, inside the range, and the
        // means (0.6 .. 0.99) move far beyond their intervals (each a few thousandths wide).
        let f = flagged(&decide(0.9), [[0.6, 0.61, 0.59], [0.95, 0.951, 0.949], [0.99, 0.991, 0.989]]);
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn a_choice_at_the_edge_and_a_constraint_that_never_bound_are_flagged() {
        // Every share holds 0.5: the smallest, 0.5, is chosen at the range's lower edge.
        let f = flagged(&decide(0.5), [[0.6, 0.61, 0.59], [0.95, 0.951, 0.949], [0.99, 0.991, 0.989]]);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0], "the recommended value share = 0.5 is at the edge of the range [0.5, 0.9]: widen the range");
        assert_eq!(
            f[1],
            "the constraint a/in_time_ratio >= 0.5 never bound: every candidate meets it; widen the range"
        );
    }

    #[test]
    fn a_constraint_the_knob_does_not_move_is_flagged() {
        // Means 0.80, 0.81, 0.80 with spreads of 0.05 per candidate: t(0.95, 2) = 2.919986
        // (t table), s = 0.05, half-width 2.919986 * 0.05 / sqrt(3) = 0.0843 one-sided, so an
        // interval 0.169 wide; the means differ by 0.01, inside it. 0.9 is unmet by all: the
        // least violation is the middle one (mean 0.81), inside the range.
        let f = flagged(&decide(0.9), [[0.75, 0.80, 0.85], [0.76, 0.81, 0.86], [0.75, 0.80, 0.85]]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].starts_with("the knob share does not move the constraint a/in_time_ratio >= 0.9"), "{f:?}");
    }
}
