//! The service graph as the reports draw it (issue 33): per policy set, the gateway's classes
//! and the dependencies they call as nodes, each call of a class's plan as an edge (the calls
//! of one parallel step marked as a group), each edge with the policy layers scoped to its
//! dependency and its figures during the incident (the key phase, or the whole run without
//! one). Built from the saved summary alone, so `brownout plot` redraws it. Empty when no run
//! has several dependencies: one-dependency reports keep their bytes.
//!
//! Services that call services are read from the scenario ([`views_with`]): a service's calls
//! are edges from its node to its callees, drawn in further columns (one per step of its plan,
//! right of the classes' steps and of the service), and its node names the stack the policy
//! set gives it (`Scenario::service_stack`: the set's `services` override, else its own).

use super::escape::md;
use crate::metrics::summary::{DependencyFigures, RunSummary, ScenarioSummary};
use crate::scenario::{Layer, Scenario, Step};

/// One policy set's graph.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphView {
    /// The policy set.
    pub policy: String,
    /// Which figures: `during incident (..)`, or `over the whole run`.
    pub when: String,
    /// The classes with a plan, in the summary's order.
    pub classes: Vec<String>,
    /// The dependencies, in the scenario's order.
    pub deps: Vec<DepNode>,
    /// One per call of each class's plan, class by class in the order written.
    pub edges: Vec<Edge>,
}

/// A dependency of the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct DepNode {
    /// Its name.
    pub name: String,
    /// Time per attempt there (queue wait plus service), p95, ms.
    pub p95_ms: f64,
    /// The policy kinds of the layers scoped to it, outermost first.
    pub layers: Vec<String>,
    /// The column it is drawn in: the step of the first call to it in a class's plan; for a
    /// dependency a service calls, right of every class step and of the service, one column
    /// per step of the service's plan.
    pub column: u32,
    /// For a service, the layers its calls pass in this policy set, outermost first, each as
    /// its policy kind (`retry`, `timeout@tax` for a layer scoped to its call to tax); None
    /// for a leaf, or when the scenario is not at hand.
    pub service: Option<Vec<String>>,
}

/// Who makes a call of the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A class of the gateway (index into `GraphView::classes`).
    Class(usize),
    /// A service (index into `GraphView::deps`), one of its plan's calls.
    Service(usize),
}

/// A call of a class's plan, or of a service's: an edge from the caller to the dependency.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// The class or service that calls.
    pub from: Caller,
    /// Index into `GraphView::deps`.
    pub dep: usize,
    /// The plan step it belongs to, from 0.
    pub step: u32,
    /// Calls in its step: more than one for a parallel group.
    pub group: usize,
    /// An optional call (its failure degrades the answer).
    pub optional: bool,
    /// Calls made (ended or cancelled); from a service, the callee's calls from all its
    /// callers (the summary keeps no figures per call of a service's plan).
    pub calls: u64,
    /// Calls that failed (an error, a timeout, a refusal or a short circuit); None for a
    /// service's call (no such figure per call of its plan).
    pub failures: Option<u64>,
    /// Attempts per call at the callee (its `amplification`); shown for a service's call.
    pub amplification: f64,
    /// The dependency's p95 time per attempt, ms (as its node).
    pub p95_ms: f64,
    /// Share of the class's time this call held the critical path (NaN: no request).
    pub critical_share: f64,
}

impl Edge {
    /// `step 0 ∥2: 400 calls, 3 failed, p95 20.0 ms, critical 40.0%` (`∥2` for a parallel
    /// group of two, `opt.` for an optional call); a service's call: `step 0: 400 calls,
    /// x3.0 attempts, p95 20.0 ms`.
    pub fn label(&self) -> String {
        let group = if self.group > 1 { format!(" ∥{}", self.group) } else { String::new() };
        let opt = if self.optional { " opt." } else { "" };
        let Some(failures) = self.failures else {
            return format!(
                "step {}{group}{opt}: {} calls, x{} attempts, p95 {} ms",
                self.step,
                self.calls,
                num(self.amplification, 1),
                num(self.p95_ms, 1)
            );
        };
        format!(
            "step {}{group}{opt}: {} calls, {} failed, p95 {} ms, critical {}",
            self.step,
            self.calls,
            failures,
            num(self.p95_ms, 1),
            if self.critical_share.is_nan() { "–".into() } else { format!("{:.1}%", self.critical_share * 100.0) }
        )
    }
}

fn num(v: f64, decimals: usize) -> String {
    if v.is_nan() { "–".into() } else { format!("{v:.decimals$}") }
}

/// Each policy set's graph, or none when no run has several dependencies.
pub fn views(s: &ScenarioSummary) -> Vec<GraphView> {
    views_with(s, None)
}

/// As [`views`], with the services of `scenario` (the scenario the summary is of) drawn: each
/// service's calls as edges in further columns and its stack in the set named on its node.
pub fn views_with(s: &ScenarioSummary, scenario: Option<&Scenario>) -> Vec<GraphView> {
    if s.runs.iter().all(|r| r.dependencies.len() < 2) {
        return Vec::new();
    }
    let (runs, when) = match s.key_phase() {
        Some(p) if p.runs.len() == s.runs.len() => (&p.runs, p.title()),
        _ => (&s.runs, "over the whole run".to_string()),
    };
    runs.iter()
        .zip(&s.runs)
        .map(|(r, whole)| {
            let mut v = view(r, whole, &when);
            if let Some(sc) = scenario.filter(|sc| sc.has_services()) {
                add_services(&mut v, r, sc);
            }
            v
        })
        .collect()
}

/// The graph of run `r` (the figures' span), its layers named by `whole` (the same run).
fn view(r: &RunSummary, whole: &RunSummary, when: &str) -> GraphView {
    let mut deps: Vec<DepNode> = r
        .dependencies
        .iter()
        .zip(&whole.dependencies)
        .map(|(d, w)| DepNode {
            name: d.name.clone(),
            p95_ms: d.total_ms.p95,
            layers: w.layers.clone(),
            column: u32::MAX,
            service: None,
        })
        .collect();
    let mut classes = Vec::new();
    let mut edges = Vec::new();
    for c in r.classes.iter().filter(|c| !c.calls.is_empty()) {
        let class = classes.len();
        classes.push(c.class.clone());
        for call in &c.calls {
            let Some(dep) = deps.iter().position(|d| d.name == call.dependency) else { continue };
            deps[dep].column = deps[dep].column.min(call.step);
            let o = &call.outcomes;
            edges.push(Edge {
                from: Caller::Class(class),
                dep,
                step: call.step,
                group: c.calls.iter().filter(|k| k.step == call.step).count(),
                optional: call.optional,
                calls: o.total() - o.fallback + call.cancelled,
                failures: Some(o.error + o.timeout + o.rejected + o.short_circuited),
                amplification: r.dependencies[dep].amplification,
                p95_ms: deps[dep].p95_ms,
                critical_share: call.critical_share,
            });
        }
    }
    for d in &mut deps {
        d.column = if d.column == u32::MAX { 0 } else { d.column };
    }
    GraphView { policy: r.policy.clone(), when: when.to_string(), classes, deps, edges }
}

/// Add to `v` (run `r`'s graph) the services of `sc`: each service's stack in `r`'s policy
/// set on its node, an edge per call of its plan, and its callees placed in further columns.
fn add_services(v: &mut GraphView, r: &RunSummary, sc: &Scenario) {
    let set = sc.policies.iter().position(|p| p.name == r.policy).unwrap_or(0);
    let names: Vec<String> = v.deps.iter().map(|d| d.name.clone()).collect();
    let node = |name: &str| names.iter().position(|n| n == name);
    // (service node, its plan) in the scenario's order.
    let mut plans = Vec::new();
    for (k, d) in sc.deps().iter().enumerate() {
        let (Some(svc), Some(n)) = (&d.service, node(&d.name)) else { continue };
        let stack = sc.service_stack(set, k).unwrap_or_default();
        v.deps[n].service = Some(stack.iter().map(layer_name).collect());
        plans.push((n, &svc.calls));
    }
    for &(n, steps) in &plans {
        for (step, s) in steps.iter().enumerate() {
            for call in s.calls() {
                let Some(dep) = call.dependency().and_then(node) else { continue };
                let f: Option<&DependencyFigures> = r.dependencies.get(dep);
                v.edges.push(Edge {
                    from: Caller::Service(n),
                    dep,
                    step: step as u32,
                    group: s.calls().len(),
                    optional: matches!(call, Step::Optional { .. }),
                    calls: f.map_or(0, |f| f.calls),
                    failures: None,
                    amplification: f.map_or(f64::NAN, |f| f.amplification),
                    p95_ms: v.deps[dep].p95_ms,
                    critical_share: f64::NAN,
                });
            }
        }
    }
    // The classes' steps keep their columns; a service's callee goes right of them and of
    // the service, a column per step of its plan. Services are acyclic (`check`), so the
    // columns settle within as many passes as there are dependencies.
    let class_called: Vec<bool> =
        (0..v.deps.len()).map(|d| v.edges.iter().any(|e| e.dep == d && matches!(e.from, Caller::Class(_)))).collect();
    let first_free =
        v.deps.iter().zip(&class_called).filter(|(_, c)| **c).map(|(d, _)| d.column + 1).max().unwrap_or(0);
    for (d, called) in v.deps.iter_mut().zip(&class_called) {
        if !called {
            d.column = 0;
        }
    }
    for _ in 0..v.deps.len() {
        let mut moved = false;
        for e in v.edges.clone() {
            let Caller::Service(svc) = e.from else { continue };
            let want = (v.deps[svc].column + 1).max(first_free) + e.step;
            if v.deps[e.dep].column < want {
                v.deps[e.dep].column = want;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
}

/// A layer as a service's node names it: its kind, `@` the dependencies it is scoped to.
fn layer_name(l: &Layer) -> String {
    let kind = l.policy.kind();
    if l.dependencies.is_empty() { kind.to_string() } else { format!("{kind}@{}", l.dependencies.join("+")) }
}

/// The Markdown text of the graphs (under the per-dependency table): per policy set, each
/// edge `class → dependency` with its label and the layers scoped to the dependency.
/// With the services of `scenario` ([`views_with`]), a service's calls are edges
/// `service → dependency` after its callers'.
pub fn markdown_with(s: &ScenarioSummary, scenario: Option<&Scenario>) -> String {
    let views = views_with(s, scenario);
    let Some(first) = views.first() else { return String::new() };
    let mut out = format!(
        "\nThe graph {} (class → dependency: plan step, ∥n a parallel group of n calls; calls, failed, \
         p95 time per attempt at the dependency, share of the critical path; the layers scoped to the \
         dependency):\n",
        md(&first.when)
    );
    for v in &views {
        out.push_str(&format!("\n- {}:\n", md(&v.policy)));
        for e in &v.edges {
            let d = &v.deps[e.dep];
            let layers = if d.layers.is_empty() { String::new() } else { format!(" [{}]", md(&d.layers.join(", "))) };
            let from = match e.from {
                Caller::Class(c) => &v.classes[c],
                Caller::Service(s) => &v.deps[s].name,
            };
            out.push_str(&format!("  - {} → {}: {}{layers}\n", md(from), md(&d.name), md(&e.label())));
        }
    }
    out
}
