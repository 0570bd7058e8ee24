//! Constraint targets on comparison bars, time series and heatmaps; the comparison chart's headline.

use super::*;

/// The comparison chart leads with the table's headline: in time over the whole run, then in
/// time during the incident phase (`key_phase`), each bar the summary's own figure.
#[test]
fn run_compare_charts_lead_with_the_tables_headline() {
    let (s, _) = small_run();
    let key = s.key_phase().expect("the slow mode at 20 s makes a degraded phase");
    let list = charts::compare::charts(&s);
    for class in ["checkout", "browse"] {
        let chart = list.iter().find(|c| c.stem == format!("compare_{class}")).unwrap();
        let Kind::Bars(b) = &chart.kind else { panic!("bars") };
        let titles: Vec<&str> = b.panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(titles[0], "In time, whole run (higher is better)", "{titles:?}");
        assert_eq!(titles[1], format!("In time during {} (higher is better)", key.name), "{titles:?}");
        for (p, run) in s.runs.iter().enumerate() {
            let whole = run.classes.iter().find(|c| c.class == class).unwrap().in_time_ratio;
            let during = key.runs[p].classes.iter().find(|c| c.class == class).unwrap().in_time_ratio;
            let (a, d) = (&b.panels[0].bars[p], &b.panels[1].bars[p]);
            assert_eq!((a.label.as_str(), a.value.to_bits()), (run.policy.as_str(), whole.to_bits()));
            assert_eq!((d.label.as_str(), d.value.to_bits()), (run.policy.as_str(), during.to_bits()));
        }
    }
}

/// payments-brownout constrains authorize's in-time ratio during the brownout: its comparison
/// chart has that metric's panel with the target line at the constraint's value, read from
/// the scenario file (issue 18).
#[test]
fn payments_brownout_draws_the_constraint_target() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/payments-brownout.ron");
    let s = scenario::load(&path).unwrap();
    let want = &s.decide.as_ref().expect("a decide section").subject_to[0];
    let model = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    let opts = RunOptions::new();
    let summary = runner::run_all(&model, opts, false).expect("runs").summary;
    let list = charts::compare::charts(&summary);
    let chart = list.iter().find(|c| c.stem == format!("compare_{}", want.class.as_deref().unwrap())).unwrap();
    let Kind::Bars(b) = &chart.kind else { panic!("bars") };
    let panel = b.panels.iter().find(|p| p.title.contains("in_time_ratio during brownout")).expect("the panel");
    assert_eq!(panel.targets.len(), 1);
    assert_eq!(panel.targets[0].y, want.value);
    assert_eq!(panel.targets[0].label, format!("target ≥ {}%", want.value * 100.0));
    assert_eq!(panel.bars.len(), s.policies.len());
    check_svg_sizes(&charts::render(chart).unwrap());
}

/// The time-series panels that carry constraint targets, as (chart stem, panel title, line).
fn time_series_targets(list: &[Chart]) -> Vec<(String, String, charts::HLine)> {
    let mut out = Vec::new();
    for c in list {
        let Kind::Lines(l) = &c.kind else { continue };
        for p in &l.panels {
            for h in p.hlines.iter().filter(|h| h.color == TARGET) {
                out.push((c.stem.clone(), p.title.clone(), h.clone()));
            }
        }
    }
    out
}

/// payments-brownout constrains authorize's in-time ratio during the brownout. No time-series
/// panel plots an in-time ratio, so none gets a target (no panel is invented for it). The same
/// constraint on authorize's goodput, which the goodput panel plots per window, is drawn there
/// and nowhere else, at the value read from the scenario file.
#[test]
fn payments_brownout_time_series_draw_a_constraint_where_a_panel_plots_it() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/payments-brownout.ron");
    let s = scenario::load(&path).unwrap();
    let want = &s.decide.as_ref().expect("a decide section").subject_to[0];
    let (class, phase) = (want.class.as_deref().unwrap(), want.phase.as_deref().unwrap());
    let model = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    let opts = RunOptions::new().with_timeseries(true);
    let r = runner::run_all(&model, opts, false).expect("runs");
    let constraints = &r.summary.decision.as_ref().expect("a decision").constraints;
    assert_eq!(constraints.len(), 1);
    assert_eq!(constraints[0].metric, format!("{phase}:{class}/{}", want.metric));
    let list = charts::timeseries::charts(&r.summary, &r.rows);
    assert!(time_series_targets(&list).is_empty(), "{:?}", time_series_targets(&list));
    assert!(list.iter().all(|c| !c.note.contains("target")));
    // The constraint moved to the goodput the panel plots.
    let mut moved = r.summary.clone();
    let c = &mut moved.decision.as_mut().unwrap().constraints[0];
    c.metric = format!("{phase}:{class}/goodput_per_s");
    let list = charts::timeseries::charts(&moved, &r.rows);
    let drawn = time_series_targets(&list);
    assert_eq!(drawn.len(), 1, "{drawn:?}");
    let (stem, panel, line) = &drawn[0];
    assert_eq!(
        (stem.as_str(), panel.as_str()),
        ("goodput_authorize", "Goodput of authorize (answered within the deadline)")
    );
    assert_eq!(line.y, want.value);
    let label = format!("target ≥ {}/s during {phase}", want.value);
    assert_eq!(line.label, label);
    let chart = list.iter().find(|c| &c.stem == stem).unwrap();
    assert!(chart.note.contains("red dashed line = a constraint's target"), "{}", chart.note);
    let rendered = charts::render(chart).unwrap();
    check_svg_sizes(&rendered);
    assert!(rendered.svg.lines().any(|l| l == label), "the label in the SVG");
    let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", TARGET.0, TARGET.1, TARGET.2);
    assert!(rendered.svg.contains(&stroke), "the line in the target colour");
}

/// A 3 x 3 grid of in-time ratios, one policy, `cells[a][b]`, with the target >= 99 %:
///
/// ```text
///  b=30 | 99.5 M | 99.9 M | 99.9 M
///  b=20 | 98.0 F | 99.2 M | 99.9 M
///  b=10 | 95.0 F | 97.0 F | 99.1 M
///       +  a=1      a=2      a=3
/// ```
fn target_grid() -> (sweep::SweepResult, brownout_core::decide::recommendation::ConstraintOut) {
    let values = [[0.95, 0.98, 0.995], [0.97, 0.992, 0.999], [0.991, 0.999, 0.999]];
    let mut rows = Vec::new();
    for (i, a) in [1.0, 2.0, 3.0].into_iter().enumerate() {
        for (j, b) in [10.0, 20.0, 30.0].into_iter().enumerate() {
            let v = values[i][j];
            rows.push(sweep::SweepRow {
                point: i * 3 + j,
                params: [("a".to_string(), a), ("b".to_string(), b)].into(),
                policy: "p".into(),
                replications: 1,
                metrics: [("c/in_time_ratio".to_string(), sweep::Estimate { mean: v, ci_lo: v, ci_hi: v })].into(),
            });
        }
    }
    let axis = |name: &str, values: Vec<f64>| sweep::SweepAxis {
        name: name.into(),
        path: format!("policies.0.stack.0.{name}"),
        values,
        role: None,
        link: None,
        unit: None,
    };
    let s = sweep::SweepResult {
        sweep: "grid".into(),
        base: "b".into(),
        seed: 1,
        replications: 1,
        axes: vec![axis("a", vec![1.0, 2.0, 3.0]), axis("b", vec![10.0, 20.0, 30.0])],
        scenario_policies: Vec::new(),
        rows,
        best: None,
        sensitivity: Vec::new(),
    };
    let target = sweep::target_at_least("c/in_time_ratio", 0.99);
    (s, target)
}

/// The target's boundary on a heatmap, worked by hand on [`target_grid`] (corners (a, b),
/// cell (i, j) spanning i..i+1 by j..j+1):
/// - side by side: b=10 has F F | M, an edge at a=2 from b 0 to 1: ((2,0),(2,1)); b=20 has
///   F | M M, ((1,1),(1,2)); b=30 is all M.
/// - one above the other: a=1 has F F | M, an edge at b=2: ((0,2),(1,2)); a=2 has F | M M,
///   ((1,1),(2,1)); a=3 is all M.
///
/// Four edges, a staircase; the SVG draws exactly these, dashed in the target colour.
#[test]
fn heatmap_draws_the_targets_boundary_along_cell_edges() {
    let (s, target) = target_grid();
    let list = sweep::charts_with(&s, std::slice::from_ref(&target));
    let heat = list.iter().find(|c| c.stem == "heatmap_c_in_time_ratio").unwrap();
    let Kind::Heatmap(h) = &heat.kind else { panic!("a heatmap") };
    let want = vec![((0, 2), (1, 2)), ((1, 1), (1, 2)), ((1, 1), (2, 1)), ((2, 0), (2, 1))];
    assert_eq!(h.panels[0].target_edges, want);
    assert!(heat.note.contains("dashed line = target ≥ 99%"), "{}", heat.note);
    // An empty cell neither meets nor misses: without a row at (a=3, b=10), the edge
    // between it and (a=2, b=10) goes.
    let mut holed = s.clone();
    holed.rows.retain(|r| !(r.params["a"] == 3.0 && r.params["b"] == 10.0));
    let list = sweep::charts_with(&holed, std::slice::from_ref(&target));
    let Kind::Heatmap(hh) = &list[0].kind else { panic!("a heatmap") };
    assert_eq!(hh.panels[0].target_edges, want[..3]);
    // Without the constraint, no edge.
    let Kind::Heatmap(none) = &sweep::charts(&s)[0].kind else { panic!("a heatmap") };
    assert!(none.panels[0].target_edges.is_empty());
    let r = charts::render(heat).unwrap();
    check_svg_sizes(&r);
    let drawn = svg_edges(&r.svg);
    assert_eq!(drawn.keys().copied().collect::<Vec<_>>(), want, "{}", r.svg);
    // Dashed, yet drawn along most of each edge (8 px dashes, 5 px gaps).
    for (edge, (dashes, length, span)) in drawn {
        assert!(dashes > 1 && length > span * 0.5, "{edge:?}: {dashes} dashes, {length} of {span} px");
    }
}

/// The value of attribute `name` in an SVG element line.
fn attr<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.split(&format!(" {name}=\"")).nth(1)?.split('"').next()
}

/// The heatmap cell edges the target-coloured dashes of a one-panel SVG lie on, each with its
/// number of dashes, their total length and the edge's length in pixels. The cells' corners
/// are read from the cell rectangles (drawn 1 px inside them); a dash on no edge panics.
fn svg_edges(svg: &str) -> std::collections::BTreeMap<charts::Edge, (usize, f64, f64)> {
    let num = |l: &str, n: &str| attr(l, n).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    // Cells: filled, unstroked, larger than the colour bar's slices, smaller than the page.
    let cells: Vec<(f64, f64, f64, f64)> = svg
        .lines()
        .filter(|l| l.starts_with("<rect") && l.contains("stroke=\"none\""))
        .map(|l| (num(l, "x"), num(l, "y"), num(l, "width"), num(l, "height")))
        .filter(|&(_, _, w, h)| w > 50.0 && h > 50.0 && w < 1000.0)
        .collect();
    let mut xs: Vec<f64> = cells.iter().map(|c| c.0 - 1.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let last = cells.iter().map(|c| c.0 + c.2 + 1.0).fold(f64::MIN, f64::max);
    xs.push(last);
    // Rows bottom to top: corner j is the bottom of row j, so y falls as j grows.
    let mut ys: Vec<f64> = cells.iter().map(|c| c.1 + c.3 + 1.0).collect();
    ys.sort_by(|a, b| b.total_cmp(a));
    ys.dedup();
    let top = cells.iter().map(|c| c.1 - 1.0).fold(f64::MAX, f64::min);
    ys.push(top);
    let at = |v: f64, grid: &[f64]| grid.iter().position(|g| (g - v).abs() <= 1.0);
    let within =
        |v: f64, grid: &[f64]| grid.windows(2).position(|w| v >= w[0].min(w[1]) - 1.0 && v <= w[0].max(w[1]) + 1.0);
    let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\"", TARGET.0, TARGET.1, TARGET.2);
    let mut out = std::collections::BTreeMap::new();
    for l in svg.lines().filter(|l| l.starts_with("<polyline") && l.contains(&stroke)) {
        let pts: Vec<(f64, f64)> = attr(l, "points")
            .unwrap()
            .split_whitespace()
            .map(|p| p.split_once(',').map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap())).unwrap())
            .collect();
        let ((x0, y0), (x1, y1)) = (pts[0], pts[pts.len() - 1]);
        let (edge, span) = if (y0 - y1).abs() < 0.5 {
            // Horizontal: on corner row j, within column i.
            let (j, i) = (at(y0, &ys), within((x0 + x1) / 2.0, &xs));
            let (Some(j), Some(i)) = (j, i) else { panic!("a dash on no edge: {l}") };
            (((i, j), (i + 1, j)), xs[i + 1] - xs[i])
        } else if (x0 - x1).abs() < 0.5 {
            let (i, j) = (at(x0, &xs), within((y0 + y1) / 2.0, &ys));
            let (Some(i), Some(j)) = (i, j) else { panic!("a dash on no edge: {l}") };
            (((i, j), (i, j + 1)), ys[j] - ys[j + 1])
        } else {
            panic!("a slanted dash: {l}");
        };
        let e = out.entry(edge).or_insert((0, 0.0, span));
        e.0 += 1;
        e.1 += (x1 - x0).abs() + (y1 - y0).abs();
    }
    out
}
