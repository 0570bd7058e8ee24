//! The service graph as the reports draw it (issue 33): per policy set, the gateway's classes
//! and the dependencies they call as nodes, each call of a class's plan as an edge (the calls
//! of one parallel step marked as a group), each edge with the policy layers scoped to its
//! dependency and its figures during the incident (the key phase, or the whole run without
//! one). Built from the saved summary alone, so `brownout plot` redraws it. Empty when no run
//! has several dependencies: one-dependency reports keep their bytes.

use super::escape::md;
use crate::metrics::summary::{RunSummary, ScenarioSummary};

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
    /// The step of the first call to it in any plan: the column it is drawn in.
    pub column: u32,
}

/// A call of a class's plan: an edge from the class to the dependency.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// Index into `GraphView::classes`.
    pub class: usize,
    /// Index into `GraphView::deps`.
    pub dep: usize,
    /// The plan step it belongs to, from 0.
    pub step: u32,
    /// Calls in its step: more than one for a parallel group.
    pub group: usize,
    /// An optional call (its failure degrades the answer).
    pub optional: bool,
    /// Calls made (ended or cancelled).
    pub calls: u64,
    /// Calls that failed (an error, a timeout, a refusal or a short circuit).
    pub failures: u64,
    /// The dependency's p95 time per attempt, ms (as its node).
    pub p95_ms: f64,
    /// Share of the class's time this call held the critical path (NaN: no request).
    pub critical_share: f64,
}

impl Edge {
    /// `step 0 ∥2: 400 calls, 3 failed, p95 20.0 ms, critical 40.0%` (`∥2` for a parallel
    /// group of two, `opt.` for an optional call).
    pub fn label(&self) -> String {
        let group = if self.group > 1 { format!(" ∥{}", self.group) } else { String::new() };
        let opt = if self.optional { " opt." } else { "" };
        format!(
            "step {}{group}{opt}: {} calls, {} failed, p95 {} ms, critical {}",
            self.step,
            self.calls,
            self.failures,
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
    if s.runs.iter().all(|r| r.dependencies.len() < 2) {
        return Vec::new();
    }
    let (runs, when) = match s.key_phase() {
        Some(p) if p.runs.len() == s.runs.len() => (&p.runs, p.title()),
        _ => (&s.runs, "over the whole run".to_string()),
    };
    runs.iter().zip(&s.runs).map(|(r, whole)| view(r, whole, &when)).collect()
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
                class,
                dep,
                step: call.step,
                group: c.calls.iter().filter(|k| k.step == call.step).count(),
                optional: call.optional,
                calls: o.total() - o.fallback + call.cancelled,
                failures: o.error + o.timeout + o.rejected + o.short_circuited,
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

/// The Markdown text of the graphs (under the per-dependency table): per policy set, each
/// edge `class → dependency` with its label and the layers scoped to the dependency.
pub fn markdown(s: &ScenarioSummary) -> String {
    let views = views(s);
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
            out.push_str(&format!("  - {} → {}: {}{layers}\n", md(&v.classes[e.class]), md(&d.name), md(&e.label())));
        }
    }
    out
}
