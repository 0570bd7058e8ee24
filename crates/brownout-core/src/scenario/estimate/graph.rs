//! The estimates' view of a service graph: calls multiplied by fan-out through services, and
//! attempts multiplied by the retry layers of every service on the way down.

use super::super::{Class, Layer, Scenario, Step};
use super::widest_step;

/// Calls one request of the class causes, at every depth: each call of its plan (or its one
/// call), and through a service each call of the service's plan, recursively, so fan-out
/// multiplies them (a service calling two services that call two each: 1 + 2 + 4 calls).
pub(super) fn class_calls(s: &Scenario, c: &Class) -> f64 {
    if !s.has_services() {
        // Every call is a leaf: the plan's calls (a search per name would be quadratic).
        return c.calls.iter().map(|step| step.calls().len()).sum::<usize>().max(1) as f64;
    }
    let mut memo = vec![None; s.deps().len()];
    if c.calls.is_empty() {
        return tree_calls(s, 0, &mut memo);
    }
    let deps = plan_deps(s, &c.calls);
    deps.into_iter().map(|d| tree_calls(s, d, &mut memo)).sum::<f64>().max(1.0)
}

/// The dependencies a plan calls (indices into `deps`), one entry per call, in order.
fn plan_deps(s: &Scenario, steps: &[Step]) -> Vec<usize> {
    let calls = steps.iter().flat_map(|step| step.calls().iter().filter_map(Step::dependency));
    calls.filter_map(|name| s.deps().iter().position(|d| d.name == name)).collect()
}

/// Calls one call to `dep` makes in all: itself, and when it is a service, every call of its
/// plan with theirs. Memoized per dependency (`Some(f64::INFINITY)` while being counted, so a
/// cycle, which validation refuses first, counts as unbounded rather than recursing forever).
fn tree_calls(s: &Scenario, dep: usize, memo: &mut [Option<f64>]) -> f64 {
    if let Some(n) = memo[dep] {
        return n;
    }
    let Some(svc) = &s.deps()[dep].service else { return 1.0 };
    memo[dep] = Some(f64::INFINITY);
    let n = 1.0 + plan_deps(s, &svc.calls).into_iter().map(|d| tree_calls(s, d, memo)).sum::<f64>();
    memo[dep] = Some(n);
    n
}

/// The child requests a request of the class may hold at once: its widest step without
/// services; with them, every call below it (the calls of services run while theirs wait).
pub(super) fn held_calls(s: &Scenario, c: &Class) -> f64 {
    if s.has_services() { class_calls(s, c) } else { widest_step(c) }
}

/// The most attempts below a call, and the path that gives them: each dependency on it with
/// its stack's attempts per call (1 for the leaf at the bottom).
type Deepest = (f64, Vec<(usize, f64)>);

/// Attempts per call a stack's retry layers allow (the product of their `max_attempts`).
pub(super) fn stack_attempts(stack: &[Layer]) -> f64 {
    stack.iter().map(|l| l.policy.facts().attempts_per_call).product()
}

/// The most attempts one gateway attempt can cause at the bottom of the graph in policy set
/// `set`: over every dependency a class calls, the product of the retry layers of each
/// service on the way down; with the path that gives it, each dependency on it with its
/// stack's attempts per call.
pub(super) fn deepest_attempts(s: &Scenario, set: usize) -> Deepest {
    let mut memo: Vec<Option<Deepest>> = vec![None; s.deps().len()];
    let called = (s.classes.iter())
        .filter(|c| c.calls_dependency)
        .flat_map(|c| if c.calls.is_empty() { vec![0] } else { plan_deps(s, &c.calls) });
    let mut best = (1.0, Vec::new());
    for d in called {
        let (n, path) = below(s, set, d, &mut memo);
        if n > best.0 || best.1.is_empty() {
            best = (n, path);
        }
    }
    best
}

/// [`deepest_attempts`] from one call to `dep`: memoized per dependency, a cycle (refused by
/// validation first) counted as unbounded.
fn below(s: &Scenario, set: usize, dep: usize, memo: &mut [Option<Deepest>]) -> Deepest {
    if let Some(known) = &memo[dep] {
        return known.clone();
    }
    let Some(stack) = s.service_stack(set, dep) else { return (1.0, vec![(dep, 1.0)]) };
    let own = stack_attempts(stack);
    memo[dep] = Some((f64::INFINITY, vec![(dep, own)]));
    let svc = s.deps()[dep].service.as_ref().expect("a service");
    let mut deepest = (1.0, Vec::new());
    for d in plan_deps(s, &svc.calls) {
        let (n, path) = below(s, set, d, memo);
        if n > deepest.0 || deepest.1.is_empty() {
            deepest = (n, path);
        }
    }
    let mut path = vec![(dep, own)];
    path.extend(deepest.1);
    let found = (own * deepest.0, path);
    memo[dep] = Some(found.clone());
    found
}
