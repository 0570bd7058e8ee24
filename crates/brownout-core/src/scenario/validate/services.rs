//! Checks of services that call services (`dependencies[k].service`, `policies[i].services`):
//! a service's workers, pool, plan and stack, each at the value that is wrong, and no
//! service that reaches itself through its calls (the path named). After the graph's checks
//! (dependency names known to be unique) and the policy sets' (class names known).

use std::collections::BTreeMap;

use super::graph::check_plan;
use super::{Invalid, bad, validate_layers};
use crate::policy::PolicySpec;
use crate::scenario::{Layer, Profile, Scenario, Step};

/// Every service and every policy set's stack for one.
pub(super) fn validate(s: &Scenario, classes: &BTreeMap<&str, usize>) -> Result<(), Invalid> {
    if !s.has_services() {
        for (i, p) in s.policies.iter().enumerate() {
            if let Some(first) = p.services.first() {
                return Err(bad(
                    format!("policies[{i}].services[0].service"),
                    format!(
                        "policy \"{}\" gives a stack to \"{}\", but no dependency is a service",
                        p.name, first.service
                    ),
                ));
            }
        }
        return Ok(());
    }
    let deps = s.deps();
    let known: Vec<&str> = deps.iter().map(|d| d.name.as_str()).collect();
    let class_names: Vec<&str> = s.classes.iter().map(|c| c.name.as_str()).collect();
    for (k, d) in deps.iter().enumerate() {
        let Some(svc) = &d.service else { continue };
        let dep = s.dep_path(k);
        let at = format!("{dep}.service");
        let leaf_only = [
            ("capacity", d.capacity.is_some()),
            ("replicas", d.replicas.is_some()),
            ("modes", !d.modes.is_empty()),
            ("error_rate", d.error_rate != Profile::default()),
        ];
        if let Some((field, _)) = leaf_only.iter().find(|(_, given)| *given) {
            return Err(bad(
                format!("{dep}.{field}"),
                format!(
                    "dependency \"{}\" is a service: {field} belongs to a leaf dependency (a service is served by \
                     its workers and fails through its calls; give {field} to the dependencies it calls)",
                    d.name
                ),
            ));
        }
        if svc.instances == 0 || svc.instances > 10_000 {
            return Err(bad(
                format!("{at}.instances"),
                format!("service \"{}\": instances must be between 1 and 10000", d.name),
            ));
        }
        if svc.workers.slots == 0 {
            return Err(bad(
                format!("{at}.workers.slots"),
                format!("service \"{}\": workers.slots must be >= 1", d.name),
            ));
        }
        if svc.pool.as_ref().is_some_and(|p| p.max_connections == 0) {
            return Err(bad(
                format!("{at}.pool.max_connections"),
                format!("service \"{}\": pool.max_connections must be >= 1 (a zero pool serves nothing)", d.name),
            ));
        }
        if svc.calls.is_empty() {
            return Err(bad(
                format!("{at}.calls"),
                format!(
                    "service \"{}\" has an empty plan: give it at least one call, or drop `service` to make it a \
                     leaf dependency",
                    d.name
                ),
            ));
        }
        check_plan(&svc.calls, &format!("{at}.calls"), &known)?;
    }
    // A cycle before the stacks: a layer scoped to a call that closes one is not the error.
    check_cycles(s)?;
    for (k, d) in deps.iter().enumerate() {
        let Some(svc) = &d.service else { continue };
        let who = format!("service \"{}\"", d.name);
        check_stack(&svc.stack, &format!("{}.service.stack", s.dep_path(k)), &who, d, classes, &class_names)?;
    }
    for (i, p) in s.policies.iter().enumerate() {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (j, own) in p.services.iter().enumerate() {
            let at = format!("policies[{i}].services[{j}]");
            let Some(d) = deps.iter().find(|d| d.name == own.service) else {
                return Err(bad(
                    format!("{at}.service"),
                    format!(
                        "policy \"{}\" names unknown service \"{}\" (services: {})",
                        p.name,
                        own.service,
                        services(s)
                    ),
                ));
            };
            if d.service.is_none() {
                return Err(bad(
                    format!("{at}.service"),
                    format!(
                        "policy \"{}\": dependency \"{}\" is no service (services: {}); scope a layer of the stack \
                         to it instead, with dependencies: [\"{}\"]",
                        p.name,
                        own.service,
                        services(s),
                        own.service
                    ),
                ));
            }
            if let Some(first) = seen.insert(&own.service, j) {
                return Err(bad(
                    format!("{at}.service"),
                    format!(
                        "policy \"{}\" gives service \"{}\" two stacks (also policies[{i}].services[{first}])",
                        p.name, own.service
                    ),
                ));
            }
            let who = format!("policy \"{}\", service \"{}\"", p.name, own.service);
            check_stack(&own.stack, &format!("{at}.stack"), &who, d, classes, &class_names)?;
        }
    }
    Ok(())
}

/// For a gateway layer scoped to a dependency only services call: where such a layer goes.
pub(super) fn caller_hint(s: &Scenario, dep: &str) -> String {
    let caller = s.deps().iter().find(|d| {
        d.service
            .as_ref()
            .is_some_and(|svc| svc.calls.iter().any(|step| step.calls().iter().any(|c| c.dependency() == Some(dep))))
    });
    match caller {
        Some(c) => format!(
            " (service \"{}\" calls it: put the layer in its stack, service.stack or the policy set's \
             services: [(service: \"{}\", stack: [..])])",
            c.name, c.name
        ),
        None => String::new(),
    }
}

/// The names of the scenario's services, for messages.
fn services(s: &Scenario) -> String {
    let names: Vec<&str> = s.deps().iter().filter(|d| d.service.is_some()).map(|d| d.name.as_str()).collect();
    names.join(", ")
}

/// A service's stack: the layers' own checks, no `classes` (a service's layers see every
/// caller's calls), no `Import` (its layers are written out), and `dependencies` naming calls
/// of the service's own plan.
fn check_stack(
    stack: &[Layer],
    at: &str,
    who: &str,
    d: &crate::scenario::Dependency,
    classes: &BTreeMap<&str, usize>,
    class_names: &[&str],
) -> Result<(), Invalid> {
    let plan = d.service.as_ref().map_or(&[][..], |svc| svc.calls.as_slice());
    let called: Vec<&str> = plan.iter().flat_map(|step| step.calls().iter().filter_map(Step::dependency)).collect();
    for (j, layer) in stack.iter().enumerate() {
        let here = format!("{at}[{j}]");
        if !layer.classes.is_empty() {
            return Err(bad(
                format!("{here}.classes"),
                format!(
                    "{who}: a service's layer sees every caller's calls; `classes` belongs to a policy set's stack"
                ),
            ));
        }
        if matches!(layer.policy, PolicySpec::Import(_)) {
            return Err(bad(
                format!("{here}.policy"),
                format!("{who}: Import layers are read into a policy set's stack only; write the layers out here"),
            ));
        }
        for (k, name) in layer.dependencies.iter().enumerate() {
            if !called.contains(&name.as_str()) {
                return Err(bad(
                    format!("{here}.dependencies[{k}]"),
                    format!(
                        "{who} scopes a layer to \"{name}\", which the service does not call (it calls: {}): it \
                         would never act",
                        called.join(", ")
                    ),
                ));
            }
        }
    }
    validate_layers(stack, at, who, classes, class_names)
}

/// The calls of a plan with the path of each call's dependency name in the file.
fn plan_calls<'a>(steps: &'a [Step], at: &str) -> Vec<(String, &'a str)> {
    let mut out = Vec::new();
    for (j, step) in steps.iter().enumerate() {
        let here = format!("{at}[{j}]");
        let calls: Vec<(String, &Step)> = match step {
            Step::Parallel { calls, .. } => {
                calls.iter().enumerate().map(|(n, c)| (format!("{here}.Parallel.calls[{n}]"), c)).collect()
            }
            call => vec![(here, call)],
        };
        for (path, call) in calls {
            match call {
                Step::Call(name) => out.push((path, name.as_str())),
                Step::Optional { dependency, .. } => out.push((format!("{path}.Optional.dependency"), dependency)),
                Step::Parallel { .. } => {}
            }
        }
    }
    out
}

/// No service reaches itself through its calls: a depth-first walk over the services in the
/// file's order (no recursion, so a long chain cannot overflow the stack); the call that
/// closes a cycle is refused, naming the cycle's path.
fn check_cycles(s: &Scenario) -> Result<(), Invalid> {
    let deps = s.deps();
    let index: BTreeMap<&str, usize> = deps.iter().enumerate().map(|(k, d)| (d.name.as_str(), k)).collect();
    // Per dependency, its calls: (path of the name, callee).
    let edges: Vec<Vec<(String, usize)>> = (deps.iter().enumerate())
        .map(|(k, d)| match &d.service {
            Some(svc) => plan_calls(&svc.calls, &format!("{}.service.calls", s.dep_path(k)))
                .into_iter()
                .filter_map(|(path, name)| index.get(name).map(|&to| (path, to)))
                .collect(),
            None => Vec::new(),
        })
        .collect();
    // 0: not seen, 1: on the current path, 2: done (reaches no cycle).
    let mut state = vec![0u8; deps.len()];
    for root in 0..deps.len() {
        if state[root] != 0 || edges[root].is_empty() {
            continue;
        }
        // The current path: (dependency, next edge to follow).
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&(node, next)) = path.last() {
            let Some((at, to)) = edges[node].get(next) else {
                state[node] = 2;
                path.pop();
                continue;
            };
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            match state[*to] {
                0 => {
                    state[*to] = 1;
                    path.push((*to, 0));
                }
                1 => {
                    let start = path.iter().position(|&(n, _)| n == *to).expect("on the path");
                    let names: Vec<&str> = (path[start..].iter().map(|&(n, _)| deps[n].name.as_str()))
                        .chain(std::iter::once(deps[*to].name.as_str()))
                        .collect();
                    return Err(bad(
                        at.clone(),
                        format!(
                            "service \"{}\" reaches itself through its calls: {} (a call graph must have no cycle)",
                            deps[*to].name,
                            names.join(" -> ")
                        ),
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}
