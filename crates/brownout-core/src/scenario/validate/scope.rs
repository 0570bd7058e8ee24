//! Checks of what is scoped to dependencies: the gateway's pools of their own
//! (`fleet.pools`), policy layers scoped to dependencies (`Layer::dependencies`) and
//! partitions cutting some dependencies (`Partition::dependencies`), each at the name that is
//! wrong.

use std::collections::BTreeMap;

use super::{Invalid, bad};
use crate::scenario::Scenario;

/// Each of `fleet.pools` names a dependency of the scenario, at most once, with a pool that
/// can serve. After the graph's checks (names known to be unique).
pub(super) fn validate_pools(s: &Scenario) -> Result<(), Invalid> {
    let known: Vec<&str> = s.deps().iter().map(|d| d.name.as_str()).collect();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, p) in s.fleet.pools.iter().enumerate() {
        let at = format!("fleet.pools[{k}]");
        if !known.contains(&p.dependency.as_str()) {
            return Err(bad(
                format!("{at}.dependency"),
                format!("a pool for unknown dependency \"{}\" (known: {})", p.dependency, known.join(", ")),
            ));
        }
        if let Some(first) = seen.insert(&p.dependency, k) {
            return Err(bad(
                format!("{at}.dependency"),
                format!("dependency \"{}\" has two pools (also fleet.pools[{first}])", p.dependency),
            ));
        }
        if p.max_connections == 0 {
            return Err(bad(
                format!("{at}.max_connections"),
                format!("{at}.max_connections must be >= 1 (a zero pool serves nothing)"),
            ));
        }
    }
    if s.fleet.pools.len() > usize::from(u8::MAX) - 1 {
        return Err(bad("fleet.pools", format!("at most {} pools of their own", u8::MAX - 1)));
    }
    Ok(())
}

/// Every name in a partition's `dependencies` is a dependency of the scenario.
pub(super) fn validate_partitions(s: &Scenario) -> Result<(), Invalid> {
    let known: Vec<&str> = s.deps().iter().map(|d| d.name.as_str()).collect();
    for (k, p) in s.fleet.partitions.iter().enumerate() {
        for (m, d) in p.dependencies.iter().enumerate() {
            if d.is_empty() || !known.contains(&d.as_str()) {
                return Err(bad(
                    format!("fleet.partitions[{k}].dependencies[{m}]"),
                    format!("a partition of unknown dependency \"{d}\" (known: {})", known.join(", ")),
                ));
            }
        }
    }
    Ok(())
}

/// Every name in a layer's `dependencies` is a dependency that one of the layer's classes
/// calls: a layer scoped to an unknown one, or to one none of its classes calls, would never
/// act.
pub(super) fn validate_scoped_layers(s: &Scenario) -> Result<(), Invalid> {
    let known: Vec<&str> = s.deps().iter().map(|d| d.name.as_str()).collect();
    for (i, set) in s.policies.iter().enumerate() {
        for (j, layer) in set.stack.iter().enumerate() {
            let classes = s.classes.iter().filter(|c| layer.classes.is_empty() || layer.classes.contains(&c.name));
            let called: Vec<&str> = classes.flat_map(|c| s.dependencies_called(c)).collect();
            for (k, d) in layer.dependencies.iter().enumerate() {
                let at = format!("policies[{i}].stack[{j}].dependencies[{k}]");
                if !known.contains(&d.as_str()) {
                    return Err(bad(
                        at,
                        format!(
                            "policy \"{}\" names unknown dependency \"{d}\" (known: {})",
                            set.name,
                            known.join(", ")
                        ),
                    ));
                }
                if !called.contains(&d.as_str()) {
                    let whose = if layer.classes.is_empty() { "no class" } else { "none of its classes" };
                    return Err(bad(
                        at,
                        format!(
                            "policy \"{}\" scopes a layer to dependency \"{d}\", which {whose} calls: it would never act{}",
                            set.name,
                            super::services::caller_hint(s, d)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}
