//! Checks of the service graph: `dependency` or `dependencies` (one of the two), unique
//! dependency names, and every class's call plan (known dependencies, non-empty groups, a
//! quorum its group can reach).

use std::collections::BTreeMap;

use super::{Invalid, bad};
use crate::scenario::{Join, Scenario, Step};

/// The graph's checks, before each dependency's own (`validate_dependency`).
pub(super) fn validate(s: &Scenario) -> Result<(), Invalid> {
    if !s.dependencies.is_empty() && !s.dependency.is_absent() {
        return Err(bad("dependency", "give either dependency (one) or dependencies (several), not both"));
    }
    if s.dependencies.is_empty() && s.dependency.is_absent() {
        return Err(bad("", "the scenario needs a dependency: dependency: (..) or dependencies: [(name: .., ..)]"));
    }
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, d) in s.dependencies.iter().enumerate() {
        if d.name.is_empty() {
            return Err(bad(format!("dependencies[{k}].name"), "a dependency's name must not be empty"));
        }
        if let Some(first) = names.insert(&d.name, k) {
            return Err(bad(
                format!("dependencies[{k}].name"),
                format!("duplicate dependency name \"{}\" (also dependencies[{first}])", d.name),
            ));
        }
    }
    let known: Vec<&str> = s.deps().iter().map(|d| d.name.as_str()).collect();
    for (i, c) in s.classes.iter().enumerate() {
        let at = format!("classes[{i}]");
        if c.calls.is_empty() {
            if c.calls_dependency && known.len() > 1 {
                return Err(bad(
                    format!("{at}.name"),
                    format!(
                        "class \"{}\" calls a dependency but has no calls: [..] plan, and there are {} \
                         (say which, e.g. calls: [Call(\"{}\")])",
                        c.name,
                        known.len(),
                        known[0]
                    ),
                ));
            }
            continue;
        }
        if !c.calls_dependency {
            return Err(bad(format!("{at}.calls"), "a class with calls_dependency: false has no calls plan"));
        }
        check_plan(&c.calls, &format!("{at}.calls"), &known)?;
    }
    Ok(())
}

/// A call plan (`calls` at `at`, a class's or a service's): each step a known dependency,
/// each group non-empty, flat, with a quorum it can reach.
pub(super) fn check_plan(steps: &[Step], at: &str, known: &[&str]) -> Result<(), Invalid> {
    for (j, step) in steps.iter().enumerate() {
        let here = format!("{at}[{j}]");
        match step {
            Step::Parallel { join, calls } => {
                let inner = format!("{here}.Parallel.calls");
                if calls.is_empty() {
                    return Err(bad(inner, "an empty parallel group: give it at least one call"));
                }
                if let Join::Quorum(k) = join
                    && (*k == 0 || *k as usize > calls.len())
                {
                    return Err(bad(
                        format!("{here}.Parallel.join"),
                        format!("Quorum({k}) needs 1..={} successes: its group has {} calls", calls.len(), calls.len()),
                    ));
                }
                for (n, call) in calls.iter().enumerate() {
                    check_call(call, &format!("{inner}[{n}]"), known)?;
                }
            }
            call => check_call(call, &here, known)?,
        }
    }
    Ok(())
}

/// One call of a plan names a known dependency (and is no group).
fn check_call(call: &Step, at: &str, known: &[&str]) -> Result<(), Invalid> {
    match call {
        Step::Parallel { .. } => {
            Err(bad(at, "a parallel group inside a parallel group: list its calls in the outer one"))
        }
        Step::Call(name) | Step::Optional { dependency: name, .. } if !known.contains(&name.as_str()) => {
            let at =
                if matches!(call, Step::Optional { .. }) { format!("{at}.Optional.dependency") } else { at.into() };
            Err(bad(at, format!("unknown dependency \"{name}\" (known: {})", known.join(", "))))
        }
        _ => Ok(()),
    }
}
