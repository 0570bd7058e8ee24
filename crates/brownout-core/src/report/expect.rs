//! Expectations in scenario files: assertions on a run's results, so a resilience config
//! can be tested in CI (`brownout run` exits 1 naming each failed expectation).

use crate::metrics::catalogue::{self, Scope};
use crate::metrics::summary::ScenarioSummary;
use crate::scenario::{Cmp, Expectation};

/// The value of `metric` (of `class`, if given) under `policy`, over `phase` (the whole run
/// for `None`).
pub(crate) fn metric(
    s: &ScenarioSummary,
    phase: Option<&str>,
    policy: &str,
    class: Option<&str>,
    metric: &str,
) -> Option<f64> {
    let run = s.runs_of(phase)?.iter().find(|r| r.policy == policy)?;
    match class {
        Some(c) => catalogue::find(Scope::Class, metric)?.value(run, Some(run.classes.iter().find(|k| k.class == c)?)),
        None => catalogue::find(Scope::Run, metric)?.value(run, None),
    }
}

/// Look up the value an expectation is about.
pub(crate) fn value_of(s: &ScenarioSummary, e: &Expectation) -> Option<f64> {
    metric(s, e.phase.as_deref(), &e.policy, e.class.as_deref(), &e.metric)
}

/// The right-hand side of an expectation: its value, or the other policy's value x factor.
pub(crate) fn target_of(s: &ScenarioSummary, e: &Expectation) -> Option<f64> {
    match (&e.value, &e.than) {
        (Some(v), _) => Some(*v),
        (None, Some(other)) => {
            metric(s, e.phase.as_deref(), other, e.class.as_deref(), &e.metric).map(|v| v * e.factor)
        }
        (None, None) => None,
    }
}

/// Does `actual op value` hold?
pub(crate) fn holds(actual: f64, op: Cmp, value: f64) -> bool {
    match op {
        Cmp::Lt => actual < value,
        Cmp::Le => actual <= value,
        Cmp::Gt => actual > value,
        Cmp::Ge => actual >= value,
        Cmp::Eq => (actual - value).abs() <= 1e-9 * value.abs().max(1.0),
    }
}

fn op_str(op: Cmp) -> &'static str {
    match op {
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
        Cmp::Eq => "==",
    }
}

/// One checked expectation.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// Human-readable statement, e.g. `tiered/checkout ok_ratio >= 0.99`.
    pub statement: String,
    /// The measured value.
    pub actual: f64,
    /// Whether it held.
    pub passed: bool,
}

impl Checked {
    /// The measured value as reports print it: four decimals, or "–" for no value.
    pub fn measured(&self) -> String {
        shown(self.actual)
    }
}

/// A figure with four decimals, or "–" for no value.
fn shown(v: f64) -> String {
    if v.is_nan() { NO_VALUE.to_string() } else { format!("{v:.4}") }
}

/// How text shows a figure that has no value (NaN: a figure over no sample).
pub const NO_VALUE: &str = "–";

/// Check every expectation.
pub fn check(s: &ScenarioSummary, expectations: &[Expectation]) -> Vec<Checked> {
    expectations
        .iter()
        .map(|e| {
            let actual = value_of(s, e).unwrap_or(f64::NAN);
            let rhs = target_of(s, e).unwrap_or(f64::NAN);
            let mut subject = match &e.class {
                Some(c) => format!("{}/{}", e.policy, c),
                None => e.policy.clone(),
            };
            if let Some(p) = &e.phase {
                subject = format!("{subject} during {p}");
            }
            let right = match (&e.value, &e.than) {
                (Some(v), _) => format!("{v}"),
                (None, Some(t)) if e.factor != 1.0 => format!("{} x {t} ({})", e.factor, shown(rhs)),
                (None, Some(t)) => format!("{t} ({})", shown(rhs)),
                _ => "?".into(),
            };
            // A figure over no sample has no value: it never meets an expectation, and the
            // statement says why rather than leave a bare NaN to read.
            let why = if actual.is_nan() || rhs.is_nan() {
                " (no value: nothing was measured, so it cannot hold)"
            } else {
                ""
            };
            Checked {
                statement: format!("{subject} {} {} {right}{why}", e.metric, op_str(e.op)),
                actual,
                passed: holds(actual, e.op, rhs),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons() {
        assert!(holds(1.0, Cmp::Ge, 1.0));
        assert!(!holds(1.0, Cmp::Gt, 1.0));
        assert!(holds(0.5, Cmp::Lt, 1.0));
        assert!(holds(3.0, Cmp::Eq, 3.0));
        assert!(!holds(f64::NAN, Cmp::Ge, 0.0), "a missing value never passes");
    }
}
