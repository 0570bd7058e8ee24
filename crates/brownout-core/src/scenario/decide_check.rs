//! Checks of a `decide` section shared by scenarios, sweeps and `tune`: the shape (one
//! objective, inequalities, finite targets) and, through the caller's `resolve`, the names.

use super::{Cmp, Constraint, Decide, Scenario};
use crate::metrics::catalogue::{self, Metric, Scope, Unit};
use crate::metrics::measure::{Measure, ObjectiveRef};

/// Checks a measure against its context: `Err((field, message))`, the field being `.class`,
/// `.phase` or `.metric` of the constraint at fault.
pub type Resolve<'a> = dyn Fn(&ObjectiveRef) -> Result<(), (&'static str, String)> + 'a;

/// The measure a constraint names; `Err((field, message))` for an unknown metric.
pub fn measure_of(c: &Constraint) -> Result<Measure<'_>, (&'static str, String)> {
    if let Some(d) = c.dependency.as_deref() {
        if c.class.is_some() {
            return Err((
                ".dependency",
                "give `class` or `dependency`, not both: a dependency's figures are over every class".into(),
            ));
        }
        let metric = catalogue::find(Scope::Dependency, &c.metric).ok_or_else(|| {
            let names = catalogue::names(Scope::Dependency);
            (".metric", format!("unknown per-dependency metric \"{}\" (expected one of: {names})", c.metric))
        })?;
        return Ok(Measure { phase: c.phase.as_deref(), class: None, dependency: Some(d), metric });
    }
    let scope = if c.class.is_some() { Scope::Class } else { Scope::Run };
    let metric = catalogue::find(scope, &c.metric).ok_or_else(|| {
        let hint = match (scope, catalogue::find(Scope::Class, &c.metric), catalogue::find(Scope::Run, &c.metric)) {
            (Scope::Run, Some(_), _) => format!("\"{}\" is a per-class metric: give `class`", c.metric),
            (Scope::Class, _, Some(_)) => {
                format!("\"{}\" is a run-level metric and takes no class: remove `class`", c.metric)
            }
            _ => format!("unknown metric \"{}\" (expected one of: {})", c.metric, catalogue::names(scope)),
        };
        (".metric", hint)
    })?;
    Ok(Measure { phase: c.phase.as_deref(), class: c.class.as_deref(), dependency: None, metric })
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
        check_fraction(m.metric, c.value).map_err(|msg| (at(".value"), format!("decide: {msg}")))?;
        resolve(&ObjectiveRef::Metric(m)).map_err(|(f, msg)| (at(f), format!("decide: {msg}")))?;
    }
    Ok(())
}

/// A bound on a fraction (a ratio of counts, a share of time) outside [0, 1] is met by every
/// choice or by none, so it is refused rather than judged.
pub fn check_fraction(metric: &Metric, value: f64) -> Result<(), String> {
    if metric.unit == Unit::Fraction && !(0.0..=1.0).contains(&value) {
        return Err(format!(
            "\"{}\" is a fraction between 0 and 1, so a bound of {value} is met always or never: give a value in [0, 1]",
            metric.name
        ));
    }
    Ok(())
}

/// The metrics only a `business` section gives a value (orders and their consequences):
/// without one they read 0 for every policy, so every choice would tie and pass.
const BUSINESS_METRICS: [&str; 5] = ["business_cost", "orders", "substitutions", "refunds", "lost_orders"];

/// Refuses a business metric in a scenario without a `business` section.
pub fn check_business(s: &Scenario, metric: &Metric) -> Result<(), String> {
    if s.business.is_none() && BUSINESS_METRICS.contains(&metric.name) {
        let hint = if metric.name == "business_cost" {
            " (for the fallback answers' cost alone, use CLASS/fallback_cost)"
        } else {
            ""
        };
        return Err(format!(
            "\"{}\" needs a `business` section in the scenario: without one it is 0 for every policy, \
             so every choice would tie{hint}",
            metric.name
        ));
    }
    Ok(())
}

/// A per-dependency figure names one of the scenario's `dependencies`: a scenario without a
/// graph has no such figures.
pub fn check_dependency_name(s: &Scenario, name: &str) -> Result<(), String> {
    if s.dependencies.iter().any(|d| d.name == name) {
        return Ok(());
    }
    if s.dependencies.is_empty() {
        return Err(format!(
            "unknown dependency \"{name}\": the scenario has one `dependency`, and per-dependency figures need a `dependencies` list"
        ));
    }
    let names: Vec<&str> = s.dependencies.iter().map(|d| d.name.as_str()).collect();
    Err(format!("unknown dependency \"{name}\" (dependencies: {})", crate::text::listing(&names)))
}

/// Checks a measure against its base scenario: a known class (`has_class`), a known dependency,
/// a known phase, and a business metric only with a `business` section.
pub fn check_measure(
    s: &Scenario,
    m: &Measure,
    has_class: &dyn Fn(&str) -> bool,
) -> Result<(), (&'static str, String)> {
    if let Some(c) = m.class.filter(|c| !has_class(c)) {
        return Err((".class", format!("unknown class \"{c}\"")));
    }
    if let Some(d) = m.dependency {
        check_dependency_name(s, d).map_err(|e| (".dependency", e))?;
    }
    if let Some(p) = m.phase {
        super::check_phase_name(s, p).map_err(|e| (".phase", e))?;
    }
    check_business(s, m.metric).map_err(|e| (".metric", e))
}
