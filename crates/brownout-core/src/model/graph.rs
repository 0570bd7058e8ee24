//! Call plans compiled for the world: each class's steps with dependency ids, join rules as
//! counts, and each call's occurrence (its draws' key). A class that makes one required call
//! has no plan: the request makes that call itself, as in the one-dependency form, so a
//! scenario without plans pays nothing for them.

use crate::engine::Time;
use crate::scenario::{Join, Scenario, Step};

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

/// The call plans of a scenario's classes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Graph {
    /// Per class, the dependency of its one call (the first call's when it has a plan).
    pub direct: Vec<u16>,
    /// Per class, its plan when it has more than one required call.
    pub plans: Vec<Option<Vec<PlanStep>>>,
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
        for c in &s.classes {
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
            let steps: Vec<PlanStep> = c
                .calls
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
        Some(Graph { direct, plans })
    }
}

/// The key of a call's draws: the request's own for the first call to a dependency (so a
/// one-call plan draws as the request did), mixed with the occurrence for later ones.
pub(crate) fn call_key(key: u64, occurrence: u32) -> u64 {
    if occurrence == 0 { key } else { key ^ (u64::from(occurrence).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1) }
}
