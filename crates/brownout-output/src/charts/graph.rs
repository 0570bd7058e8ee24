//! The service graph chart (`charts/graph.png`, issue 33): one panel per policy set, the
//! classes on the left, the dependencies in one column per plan step, an arrow per call
//! labelled with its figures during the incident (`report::graph::Edge::label`) and each
//! dependency with the layers scoped to it. A parallel step's column is shaded and captioned;
//! an optional call's arrow is dashed. Only for a run with several dependencies. With the
//! scenario at hand, a service's calls are arrows from its box to further columns (depth), and
//! its box names the stack the panel's policy set gives it.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{FONT, INK, SHADE};
use super::{Chart, Kind};
use crate::metrics::summary::ScenarioSummary;
use crate::report::graph::{Caller, GraphView, views_with};
use crate::scenario::Scenario;

type Area<DB> = DrawingArea<DB, Shift>;
type Res<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Width of the chart, px, at least: more with more columns.
const WIDTH: u32 = 1200;
/// Left of the first dependency column: the classes and their arrows' labels.
const LEFT: i32 = 520;
/// Width of a dependency column beyond the third, px: room for a box and an arrow's label.
const COLUMN: u32 = 340;
/// Height of one node row, px.
const ROW: u32 = 110;

/// The graph chart, or none when no run has several dependencies; with `scenario` (the
/// scenario the summary is of), its services drawn.
pub(crate) fn charts_with(s: &ScenarioSummary, scenario: Option<&Scenario>) -> Vec<Chart> {
    let views = views_with(s, scenario);
    let Some(first) = views.first() else { return Vec::new() };
    // A graph with services gets a column per level of depth; one without keeps its width.
    let deep = views.iter().any(|v| v.edges.iter().any(|e| matches!(e.from, Caller::Service(_))));
    let most = if deep { views.iter().map(|v| columns(v).len() as u32).max().unwrap_or(1) } else { 0 };
    let height: u32 = views.iter().map(|v| 50 + rows(v) * ROW).sum();
    vec![Chart {
        stem: "graph".into(),
        title: format!("{}: the service graph", s.scenario),
        note: format!(
            "{}; arrow labels: plan step (∥n a parallel group of n), calls, failed, p95 per attempt at the \
             dependency, share of the critical path; dashed: optional; [..] the layers scoped to the dependency; \
             service: the stack of a service's calls",
            first.when
        ),
        width: WIDTH.max(LEFT as u32 + COLUMN * most),
        height: 90 + height,
        legend: Vec::new(),
        kind: Kind::Graph(views),
    }]
}

/// Node rows a view needs: its tallest column (classes, or the dependencies of one step).
fn rows(v: &GraphView) -> u32 {
    let tallest = columns(v).iter().map(Vec::len).max().unwrap_or(0);
    tallest.max(v.classes.len()).max(1) as u32
}

/// The dependencies of each column (plan step of the first call to them), in order.
fn columns(v: &GraphView) -> Vec<Vec<usize>> {
    let n = v.deps.iter().map(|d| d.column as usize + 1).max().unwrap_or(0);
    let mut cols = vec![Vec::new(); n];
    for (k, d) in v.deps.iter().enumerate() {
        cols[d.column as usize].push(k);
    }
    cols
}

fn text(size: f64, color: &RGBColor) -> TextStyle<'static> {
    (FONT, size).into_font().color(color)
}

/// Draw every policy set's panel, top to bottom.
pub(crate) fn draw<DB: DrawingBackend>(body: &Area<DB>, views: &[GraphView]) -> Res<DB> {
    let mut rest = body.clone();
    for v in views {
        let (panel, below) = rest.split_vertically(50 + rows(v) * ROW);
        draw_view(&panel, v)?;
        rest = below;
    }
    Ok(())
}

/// Centre of node `k` of `n` in a column at `x`, in a panel of `rows` rows below a caption.
fn at(x: i32, k: usize, n: usize, rows: u32) -> (i32, i32) {
    let h = (rows * ROW) as i32;
    (x, 50 + (h * (2 * k as i32 + 1)) / (2 * n.max(1) as i32))
}

fn draw_view<DB: DrawingBackend>(a: &Area<DB>, v: &GraphView) -> Res<DB> {
    a.draw(&Text::new(v.policy.clone(), (14, 12), (FONT, 16.0).into_font().style(FontStyle::Bold).color(&INK)))?;
    let rows = rows(v);
    let cols = columns(v);
    let class_x = 110;
    // Dependency columns share the width right of the classes, leaving room for the arrows'
    // labels between the classes and the first column.
    let width = a.dim_in_pixel().0 as i32;
    let span = (width - LEFT) / cols.len().max(1) as i32;
    let col_x = |c: usize| LEFT + span * c as i32 + span / 2;
    for c in 0..cols.len() {
        // The classes' parallel steps (a service's calls are columns of their own).
        let group = v
            .edges
            .iter()
            .filter(|e| e.step as usize == c && matches!(e.from, Caller::Class(_)))
            .map(|e| e.group)
            .max()
            .unwrap_or(1);
        if group > 1 {
            let x = col_x(c);
            a.draw(&Rectangle::new([(x - 95, 40), (x + 95, 48 + (rows * ROW) as i32)], SHADE.filled()))?;
            a.draw(&Text::new(format!("step {c}: parallel"), (x - 90, 42), text(11.0, &INK)))?;
        }
    }
    let class_at = |k: usize| at(class_x, k, v.classes.len(), rows);
    let dep_at = |d: usize| {
        let c = v.deps[d].column as usize;
        let k = cols[c].iter().position(|&x| x == d).unwrap_or(0);
        at(col_x(c), k, cols[c].len(), rows)
    };
    for e in &v.edges {
        let from = match e.from {
            Caller::Class(k) => class_at(k),
            Caller::Service(d) => dep_at(d),
        };
        let to = dep_at(e.dep);
        let (from, to) = ((from.0 + 80, from.1), (to.0 - 80, to.1));
        let color = if e.failures.unwrap_or(0) > 0 { RGBColor(192, 57, 43) } else { RGBColor(52, 101, 164) };
        if e.optional {
            a.draw(&DashedPathElement::new(vec![from, to], 7, 4, color.stroke_width(2)))?;
        } else {
            a.draw(&PathElement::new(vec![from, to], color.stroke_width(2)))?;
        }
        a.draw(&Circle::new(to, 4, color.filled()))?;
        // The label halfway, above the line: the arrows of one class fan out, so do they.
        let t = 0.5;
        let lx = from.0 + ((to.0 - from.0) as f64 * t) as i32;
        let ly = from.1 + ((to.1 - from.1) as f64 * t) as i32 - 4;
        a.draw(&Text::new(e.label(), (lx, ly), text(11.0, &color).pos(Pos::new(HPos::Center, VPos::Bottom))))?;
    }
    for (k, name) in v.classes.iter().enumerate() {
        node(a, class_at(k), name, &[], RGBColor(230, 240, 250))?;
    }
    for (d, dep) in v.deps.iter().enumerate() {
        node(a, dep_at(d), &dep.name, &subtitles(dep), RGBColor(245, 245, 235))?;
    }
    Ok(())
}

/// The lines under a dependency's name: the layers scoped to it, `[..]`, and for a service
/// the stack its calls pass, `service: ..` (`service: none` for an empty one).
fn subtitles(dep: &crate::report::graph::DepNode) -> Vec<String> {
    let mut lines = Vec::new();
    if !dep.layers.is_empty() {
        lines.push(format!("[{}]", dep.layers.join(", ")));
    }
    if let Some(stack) = &dep.service {
        lines.push(format!("service: {}", if stack.is_empty() { "none".to_string() } else { stack.join(", ") }));
    }
    lines
}

/// A box at `c` with `name` and, under it, each of `subs`.
fn node<DB: DrawingBackend>(a: &Area<DB>, c: (i32, i32), name: &str, subs: &[String], fill: RGBColor) -> Res<DB> {
    let half = 22 + 6 * subs.len().saturating_sub(1) as i32;
    a.draw(&Rectangle::new([(c.0 - 80, c.1 - half), (c.0 + 80, c.1 + half)], fill.filled()))?;
    a.draw(&Rectangle::new([(c.0 - 80, c.1 - half), (c.0 + 80, c.1 + half)], INK.stroke_width(1)))?;
    let centre = Pos::new(HPos::Center, VPos::Center);
    let y = c.1 - 8 * subs.len() as i32;
    a.draw(&Text::new(name.to_string(), (c.0, y), text(14.0, &INK).pos(centre)))?;
    for (k, sub) in subs.iter().enumerate() {
        a.draw(&Text::new(sub.clone(), (c.0, y + 18 + 12 * k as i32), text(10.0, &INK).pos(centre)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::summary::{CallFigures, DependencyFigures, Outcomes};

    /// The worked example of docs/graphs.md on a saved summary (grocery's, its figures
    /// replaced): inventory and pricing in parallel, then payment; pricing with a breaker
    /// scoped to it.
    fn summary() -> ScenarioSummary {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/golden/grocery-overload/summary.json");
        let mut s: ScenarioSummary = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        s.phases.clear();
        s.runs.truncate(1);
        let call = |step, dependency: &str, ok, share| CallFigures {
            step,
            dependency: dependency.into(),
            optional: false,
            outcomes: Outcomes { ok, ..Outcomes::default() },
            cancelled: 0,
            critical_ms: 0.0,
            critical_share: share,
        };
        let dep = |name: &str, layers: &[&str]| DependencyFigures {
            name: name.into(),
            layers: layers.iter().map(|l| l.to_string()).collect(),
            ..DependencyFigures::default()
        };
        let run = &mut s.runs[0];
        run.policy = "per-edge".into();
        run.classes.truncate(1);
        run.classes[0].calls =
            vec![call(0, "inventory", 10, 0.0), call(0, "pricing", 10, 0.4), call(1, "payment", 10, 0.6)];
        run.dependencies = vec![dep("inventory", &[]), dep("pricing", &["consecutive-breaker"]), dep("payment", &[])];
        s
    }

    #[test]
    fn the_graph_has_a_column_per_step_and_an_arrow_per_call() {
        let c = charts_with(&summary(), None);
        assert_eq!(c.len(), 1);
        let Kind::Graph(views) = &c[0].kind else { panic!("a graph chart") };
        let v = &views[0];
        assert_eq!(columns(v), vec![vec![0, 1], vec![2]], "inventory and pricing in step 0, payment in 1");
        let groups: Vec<(usize, usize)> = v.edges.iter().map(|e| (e.dep, e.group)).collect();
        assert_eq!(groups, [(0, 2), (1, 2), (2, 1)], "the parallel step's two calls are one group");
        assert_eq!(v.deps[1].layers, ["consecutive-breaker"]);
        assert!(v.edges[1].label().starts_with("step 0 ∥2: 10 calls, 0 failed"), "{}", v.edges[1].label());
        assert!(v.edges[2].label().ends_with("critical 60.0%"), "{}", v.edges[2].label());
        super::super::render(&c[0]).expect("draws");
    }

    /// The worked example with pricing a service that calls tax, which calls rates: the
    /// scenario gives the services' plans and stacks, a hand-made summary the figures.
    fn with_services() -> (ScenarioSummary, Scenario) {
        let text = r#"Scenario(
            name: "services", horizon: "10s",
            fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
            classes: [(name: "checkout", arrivals: Poisson(rate_per_s: 10), deadline: "1s",
                calls: [Parallel(join: All, calls: [Call("inventory"), Call("pricing")]), Call("payment")])],
            dependencies: [
                (name: "inventory", latency: Constant("10ms")),
                (name: "pricing", latency: Constant("2ms"),
                 service: (workers: (slots: 20), stack: [(policy: Timeout((timeout: "50ms")))],
                           calls: [Call("tax")])),
                (name: "payment", latency: Constant("30ms")),
                (name: "tax", latency: Constant("2ms"),
                 service: (workers: (slots: 5), calls: [Parallel(calls: [Call("rates"), Optional(dependency: "rates")])])),
                (name: "rates", latency: Constant("3ms")),
            ],
            policies: [(name: "per-edge"),
                       (name: "retries", services: [(service: "pricing", stack: [
                           (policy: Retry((max_attempts: 3))), (policy: Timeout((timeout: "20ms")), dependencies: ["tax"])])])],
        )"#;
        let scenario =
            crate::scenario::load_text(std::path::Path::new("services.ron"), text).unwrap_or_else(|e| panic!("{e}"));
        let mut s = summary();
        let dep = |name: &str, calls, amplification| DependencyFigures {
            name: name.into(),
            calls,
            amplification,
            ..DependencyFigures::default()
        };
        let run = &mut s.runs[0];
        run.dependencies = vec![
            dep("inventory", 10, 1.0),
            dep("pricing", 10, 1.0),
            dep("payment", 10, 1.0),
            dep("tax", 10, 3.0),
            dep("rates", 20, 1.0),
        ];
        let mut other = run.clone();
        other.policy = "retries".into();
        s.runs.push(other);
        (s, scenario)
    }

    #[test]
    fn a_service_s_calls_are_further_columns_and_its_box_names_its_stack_per_set() {
        let (s, scenario) = with_services();
        let c = charts_with(&s, Some(&scenario));
        let Kind::Graph(views) = &c[0].kind else { panic!("a graph chart") };
        let v = &views[0];
        // The classes' two steps, then pricing's call to tax (pricing is in column 0, but
        // its callee goes right of the classes' steps), then tax's call to rates.
        assert_eq!(columns(v), vec![vec![0, 1], vec![2], vec![3], vec![4]]);
        let services: Vec<(Caller, usize, usize, bool)> = v
            .edges
            .iter()
            .filter(|e| matches!(e.from, Caller::Service(_)))
            .map(|e| (e.from, e.dep, e.group, e.optional))
            .collect();
        assert_eq!(
            services,
            [(Caller::Service(1), 3, 1, false), (Caller::Service(3), 4, 2, false), (Caller::Service(3), 4, 2, true)]
        );
        // The callee's own figures: tax's calls and amplification; no failure figure.
        let tax = v.edges.iter().find(|e| e.dep == 3).unwrap();
        assert_eq!(tax.label(), "step 0: 10 calls, x3.0 attempts, p95 0.0 ms");
        // Each set's stack for pricing: its own (the service's default), then the override.
        assert_eq!(v.deps[1].service, Some(vec!["timeout".to_string()]));
        assert_eq!(views[1].deps[1].service, Some(vec!["retry".to_string(), "timeout@tax".to_string()]));
        assert_eq!(v.deps[3].service, Some(Vec::new()), "tax is a service with no stack");
        assert_eq!(v.deps[4].service, None, "rates is a leaf");
        assert_eq!(subtitles(&views[1].deps[1]), ["service: retry, timeout@tax"]);
        assert_eq!(subtitles(&v.deps[3]), ["service: none"]);
        // Four columns need more than the classes' width.
        assert_eq!(c[0].width, LEFT as u32 + 4 * COLUMN);
        super::super::render(&c[0]).expect("draws");
        // Without the scenario, the graph is the classes' alone, as before.
        let plain = charts_with(&s, None);
        let Kind::Graph(views) = &plain[0].kind else { panic!("a graph chart") };
        assert!(views[0].edges.iter().all(|e| matches!(e.from, Caller::Class(_))));
        assert_eq!(plain[0].width, WIDTH);
    }

    #[test]
    fn one_dependency_draws_no_graph() {
        let mut s = summary();
        s.runs[0].dependencies.truncate(1);
        assert!(charts_with(&s, None).is_empty());
    }
}
