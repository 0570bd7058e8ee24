//! Checks of a `decide` section shared by scenarios, sweeps and `tune`: the shape (one
//! objective, inequalities, finite targets) and, through the caller's `resolve`, the names.

use super::{Cmp, Constraint, Decide};
use crate::metrics::catalog::{self, Scope};
use crate::metrics::measure::{Measure, ObjectiveRef};

/// Checks a measure against its context: `Err((field, message))`, the field being `.class`,
/// `.phase` or `.metric` of the constraint at fault.
pub type Resolve<'a> = dyn Fn(&ObjectiveRef) -> Result<(), (&'static str, String)> + 'a;

/// The measure a constraint names; `Err((field, message))` for an unknown metric.
pub fn measure_of(c: &Constraint) -> Result<Measure<'_>, (&'static str, String)> {
    let scope = if c.class.is_some() { Scope::Class } else { Scope::Run };
    let metric = catalog::find(scope, &c.metric).ok_or_else(|| {
        let hint = match (scope, catalog::find(Scope::Class, &c.metric)) {
            (Scope::Run, Some(_)) => format!("\"{}\" is a per-class metric: give `class`", c.metric),
            _ => format!("unknown metric \"{}\" (expected one of: {})", c.metric, catalog::names(scope)),
        };
        (".metric", hint)
    })?;
    Ok(Measure { phase: c.phase.as_deref(), class: c.class.as_deref(), metric })
}

/// Check a `decide` section's shape and names: exactly one objective, constraint ops other
/// than `Eq`, finite targets, known metrics, classes and phases. `resolve` checks an objective
/// or constraint measure against the context (scenario classes and phases, sweep axes) and
/// returns the offending field (`.class`, `.phase`, `.metric`) and a message on failure.
/// Errors are `(path relative to the section, message)`.
pub fn validate_decide(d: &Decide, resolve: &Resolve) -> Result<(), (String, String)> {
    let objective = match (&d.minimize, &d.maximize) {
        (Some(_), Some(_)) => {
            return Err((".maximize".into(), "decide: give one of `minimize` or `maximize`, not both".into()));
        }
        (None, None) => return Err((String::new(), "decide: give an objective, `minimize` or `maximize`".into())),
        (Some(m), None) => (".minimize", m),
        (None, Some(m)) => (".maximize", m),
    };
    let r = ObjectiveRef::parse(objective.1).map_err(|m| (objective.0.to_string(), format!("decide: {m}")))?;
    resolve(&r).map_err(|(_, m)| (objective.0.to_string(), format!("decide: {m}")))?;
    for (k, c) in d.subject_to.iter().enumerate() {
        let at = |f: &str| format!(".subject_to[{k}]{f}");
        if c.op == Cmp::Eq {
            return Err((
                at(".op"),
                "decide: a constraint needs Ge, Gt, Le or Lt (an equality cannot be shown by an interval)".into(),
            ));
        }
        if !c.value.is_finite() {
            return Err((at(".value"), format!("decide: constraint value must be a finite number, got {}", c.value)));
        }
        let m = measure_of(c).map_err(|(f, m)| (at(f), format!("decide: {m}")))?;
        resolve(&ObjectiveRef::Metric(m)).map_err(|(f, msg)| (at(f), format!("decide: {msg}")))?;
    }
    Ok(())
}
