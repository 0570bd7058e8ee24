//! Call plans compiled for the world: each class's steps with dependency ids, join rules as
//! counts, and each call's occurrence (its draws' key). A class that makes one required call
//! has no plan: the request makes that call itself, as in the one-dependency form, so a
//! scenario without plans pays nothing for them.

use crate::engine::Time;
use crate::scenario::{Join, Layer, Scenario, Step};

/// One call of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlanCall {
    /// The dependency called (index into `Scenario::deps`).
    pub dep: u16,
    /// Its failure degrades the answer instead of failing it.
    pub optional: bool,
    /// The fallback's cost (ns) when an optional call fails.
    pub cost: Time,
    /// How many calls to the same dependency come before it in the plan: its draws are keyed
    /// by (request, dependency, occurrence), so adding a call to another dependency leaves
    /// them alone.
    pub occurrence: u32,
}

/// One step: its calls and how many must succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanStep {
    /// `None`: all (a required failure fails it at once); `Some(k)`: k successes.
    pub need: Option<u16>,
    /// Its calls, in the order written.
    pub calls: Vec<PlanCall>,
}

/// The call plans of a scenario's classes, and of its services after them: service `k`
/// (the k-th dependency with a `service`) plans as class `classes + k` would, so its calls
/// go through the one plan machinery (`world/plan.rs`) as a class's do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Graph {
    /// Per class, then per service, the dependency of its one call (the first call's when it
    /// has a plan).
    pub direct: Vec<u16>,
    /// Per class, then per service, its plan when it has more than one required call.
    pub plans: Vec<Option<Vec<PlanStep>>>,
    /// The scenario's classes (count): the first service's plan follows them.
    pub classes: usize,
    /// The dependencies that are services, by service number (ids into `Scenario::deps`).
    pub services: Vec<u16>,
    /// Per dependency, its service number when it is a service.
    pub service_of: Vec<Option<u16>>,
}

impl Graph {
    /// The plan id (class, or `classes + service`) of dependency `dep`'s service, if it is one.
    pub(crate) fn service_class(&self, dep: u16) -> Option<usize> {
        self.service_of.get(dep as usize).copied().flatten().map(|k| self.classes + k as usize)
    }

    /// The service whose plan id is `class`, if it is a service's (its dependency id).
    pub(crate) fn service_dep(&self, class: usize) -> Option<u16> {
        class.checked_sub(self.classes).map(|k| self.services[k])
    }
}

impl Graph {
    /// The plans of `s` (validated: every name known); None when there is one dependency and
    /// no class writes a plan, which is the one-dependency world of before.
    pub(crate) fn build(s: &Scenario) -> Option<Graph> {
        if s.dependencies.is_empty() && s.classes.iter().all(|c| c.calls.is_empty()) {
            return None;
        }
        let deps = s.deps();
        let id = |name: &str| deps.iter().position(|d| d.name == name).unwrap_or(0) as u16;
        let mut direct = Vec::new();
        let mut plans = Vec::new();
        let services: Vec<u16> = (0..deps.len()).filter(|&k| deps[k].service.is_some()).map(|k| k as u16).collect();
        let own = services.iter().map(|&k| &deps[k as usize].service.as_ref().expect("a service").calls);
        for calls in s.classes.iter().map(|c| &c.calls).chain(own) {
            let mut seen = vec![0u32; deps.len()];
            let mut call = |step: &Step| {
                let dep = id(step.dependency().expect("a call"));
                let occurrence = seen[dep as usize];
                seen[dep as usize] += 1;
                let (optional, cost) = match step {
                    Step::Optional { cost, .. } => (true, cost.ns()),
                    _ => (false, 0),
                };
                PlanCall { dep, optional, cost, occurrence }
            };
            let steps: Vec<PlanStep> = calls
                .iter()
                .map(|step| {
                    let calls: Vec<PlanCall> = step.calls().iter().map(&mut call).collect();
                    let need = match step {
                        Step::Parallel { join: Join::First, .. } => Some(1),
                        Step::Parallel { join: Join::Quorum(k), .. } => Some(*k as u16),
                        _ => None,
                    };
                    PlanStep { need, calls }
                })
                .collect();
            let single = matches!(steps.as_slice(), [one] if one.calls.len() == 1 && !one.calls[0].optional);
            direct.push(steps.first().map_or(0, |s| s.calls[0].dep));
            plans.push((!steps.is_empty() && !single).then_some(steps));
        }
        let mut service_of = vec![None; deps.len()];
        for (k, &d) in services.iter().enumerate() {
            service_of[d as usize] = Some(k as u16);
        }
        Some(Graph { direct, plans, classes: s.classes.len(), services, service_of })
    }
}

/// The key of a call's draws: the request's own for the first call to a dependency (so a
/// one-call plan draws as the request did), mixed with the occurrence for later ones.
pub(crate) fn call_key(key: u64, occurrence: u32) -> u64 {
    if occurrence == 0 { key } else { key ^ (u64::from(occurrence).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1) }
}

/// The layers one policy set's runs build on every instance, the gateway's and the
/// services' in one row, so layers are numbered one way (`u8`) in every part of the world.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunStack {
    /// The set's stack (outermost first), then each service's stack in this set, by service.
    pub layers: Vec<Layer>,
    /// Per layer, the service it belongs to (its number in `Graph::services`), None for the
    /// gateway's.
    pub owner: Vec<Option<u16>>,
    /// The gateway's layers (count): those before the services'.
    pub gateway: usize,
}

/// [`RunStack`] of policy set `set` of `s` (presets expanded).
pub(crate) fn run_stack(s: &Scenario, set: usize) -> RunStack {
    let mut layers = s.policies[set].stack.clone();
    let gateway = layers.len();
    let mut owner = vec![None; gateway];
    let services = (0..s.deps().len()).filter(|&k| s.deps()[k].service.is_some());
    for (n, dep) in services.enumerate() {
        let own = s.service_stack(set, dep).expect("a service");
        layers.extend(own.iter().cloned());
        owner.extend(std::iter::repeat_n(Some(n as u16), own.len()));
    }
    RunStack { layers, owner, gateway }
}
