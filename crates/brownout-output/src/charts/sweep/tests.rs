//! The sweep charts' choices, read from their descriptions.

use super::super::{Bar, Kind};
use super::*;

/// One policy over one axis with `metric` at `values`.
fn sweep(metric: &str, values: &[f64]) -> SweepResult {
    let rows = values
        .iter()
        .enumerate()
        .map(|(i, &v)| SweepRow {
            point: i,
            params: BTreeMap::from([("x".to_string(), i as f64)]),
            policy: "p".into(),
            replications: 1,
            metrics: BTreeMap::from([(metric.to_string(), Estimate { mean: v, ci_lo: v, ci_hi: v })]),
        })
        .collect();
    let axes = vec![SweepAxis {
        name: "x".into(),
        path: "policies.0.stack.0.timeout".into(),
        values: (0..values.len()).map(|i| i as f64).collect(),
        role: None,
        link: None,
        unit: None,
    }];
    SweepResult {
        sweep: "s".into(),
        base: "b".into(),
        seed: 1,
        replications: 1,
        axes,
        scenario_policies: Vec::new(),
        rows,
        best: None,
        sensitivity: Vec::new(),
    }
}

#[test]
fn an_even_load_on_the_dependency_ranks_best() {
    // The name contains "throughput", yet lower (an even load) is better: the direction
    // comes from the catalogue, never from the name (issue 15 defect 4).
    let s = sweep("dependency_throughput_cv", &[0.3, 0.1, 0.2]);
    let b = best(&s, "p", "dependency_throughput_cv");
    assert_eq!(b.len(), 1);
    assert_eq!(settings_text(&s, &b[0]), "x=1");
}

#[test]
fn a_metric_with_no_better_direction_has_no_best_setting() {
    // Requests finished per second, failures included: set by the traffic.
    let s = sweep("c/throughput_per_s", &[10.0, 30.0, 20.0]);
    assert!(best(&s, "p", "c/throughput_per_s").is_empty());
    let list = charts(&s);
    assert!(list.iter().all(|c| c.stem != "sweep_best"), "nothing to rank");
    assert!(list[0].note.contains("no best setting"), "{}", list[0].note);
}

#[test]
fn settings_with_identical_results_all_rank_best() {
    // x=0 and x=2 give the same goodput: both are best, neither is "the first one".
    let s = sweep("c/goodput_per_s", &[7.0, 3.0, 7.0]);
    let b = best(&s, "p", "c/goodput_per_s");
    assert_eq!(b.len(), 1);
    assert_eq!(settings_text(&s, &b[0]), "x=0 | x=2");
    let list = charts(&s);
    let chart = list.iter().find(|c| c.stem == "sweep_best").expect("a best chart");
    let Kind::Bars(bars) = &chart.kind else { panic!("bars") };
    assert!(bars.panels[0].bars[0].note.contains("x=0 | x=2 (tie)"), "{:?}", bars.panels[0].bars[0]);
    let Kind::Lines(l) = &list[0].kind else { panic!("lines") };
    assert_eq!(l.panels[0].series[0].best, vec![(0.0, 7.0), (2.0, 7.0)]);
}

#[test]
fn a_condition_axis_is_never_offered_as_the_best_setting() {
    // One condition axis alone: nothing to choose.
    let mut s = sweep("c/goodput_per_s", &[7.0, 3.0, 5.0]);
    s.axes[0].path = "dependency.drift".into();
    assert!(best(&s, "p", "c/goodput_per_s").is_empty());
    assert!(charts(&s).iter().all(|c| c.stem != "sweep_best"));
    // A decision axis `d` and a condition axis `depth` (written as one, though under
    // `policies`): the best `d` per depth, and the setting names `d` only.
    let row = |point: usize, d: f64, depth: f64, v: f64| SweepRow {
        point,
        params: BTreeMap::from([("d".to_string(), d), ("depth".to_string(), depth)]),
        policy: "p".into(),
        replications: 1,
        metrics: BTreeMap::from([("c/goodput_per_s".to_string(), Estimate { mean: v, ci_lo: v, ci_hi: v })]),
    };
    let axis = |name: &str, role| SweepAxis {
        name: name.into(),
        path: format!("policies.0.stack.0.{name}"),
        values: vec![1.0, 2.0],
        role,
        link: None,
        unit: None,
    };
    s.axes = vec![axis("d", None), axis("depth", Some(Role::Condition))];
    // depth 1: d=2 best (9 > 4); depth 2: d=1 best (8 > 6).
    s.rows = vec![row(0, 1.0, 1.0, 4.0), row(1, 1.0, 2.0, 8.0), row(2, 2.0, 1.0, 9.0), row(3, 2.0, 2.0, 6.0)];
    let b = best(&s, "p", "c/goodput_per_s");
    let got: Vec<(String, String)> = b.iter().map(|b| (b.condition.clone(), settings_text(&s, b))).collect();
    assert_eq!(got, vec![("depth=1".to_string(), "d=2".to_string()), ("depth=2".to_string(), "d=1".to_string())]);
    let html = crate::html::sweep_section(&s);
    assert!(html.contains("<td>depth=1</td><td>9</td><td>9 .. 9</td><td>d=2</td>"), "{html}");
}

/// The best bar chart's panel for the first metric, and the chart's note.
fn best_bars(s: &SweepResult) -> (Vec<Bar>, String) {
    let list = charts(s);
    let chart = list.into_iter().find(|c| c.stem == "sweep_best").expect("a best chart");
    let Kind::Bars(bars) = chart.kind else { panic!("bars") };
    (bars.panels[0].bars.clone(), chart.note)
}

#[test]
fn ties_come_from_the_sweeps_paired_comparison() {
    // Goodput 9, 8, 3 over three replications. Means alone make x=0 the one best; the
    // sweep's paired intervals (sweep::best, at sweep time) found x=1 tied with it. The
    // charts and the report draw what the file says, and say how it was decided.
    let mut s = sweep("c/goodput_per_s", &[9.0, 8.0, 3.0]);
    s.replications = 3;
    s.best = Some(vec![BestSet {
        metric: "c/goodput_per_s".into(),
        policy: "p".into(),
        condition: BTreeMap::new(),
        best_row: Some(0),
        tied_rows: vec![0, 1],
        significant: false,
        margin: 0.1,
        unranked: None,
    }]);
    let b = best(&s, "p", "c/goodput_per_s");
    assert_eq!((b.len(), b[0].top.point, settings_text(&s, &b[0])), (1, 0, "x=0 | x=1".to_string()));
    let (bars, note) = best_bars(&s);
    assert_eq!((bars[0].value, bars[0].note.as_str()), (9.0, " at x=0 | x=1 (tie)"));
    let rule =
        "tied: paired by seed, Student-t 95 % (df = n−1), a difference within the metric's margin, 3 replications";
    assert!(note.contains(rule), "{note}");
    let Kind::Lines(l) = &charts(&s)[0].kind else { panic!("lines") };
    assert_eq!(l.panels[0].series[0].best, vec![(0.0, 9.0), (1.0, 8.0)]);
    // The report states the rule with the metric's margin.
    let stated = "rule: paired by seed, Student-t 95 % (df = n−1), a difference within its margin is a tie \
                  (c/goodput_per_s ±0.1/s)";
    assert!(crate::html::sweep_section(&s).contains(stated), "{}", crate::html::sweep_section(&s));
    // A set whose row index points nowhere (a hand-edited file) is dropped, not a panic.
    s.best.as_mut().unwrap()[0].tied_rows.push(7);
    assert!(best(&s, "p", "c/goodput_per_s").is_empty());
}

#[test]
fn a_sweep_json_without_the_best_list_still_loads() {
    // Written before paired ties: no `best`. It loads, and ties fall back to equal means.
    let text = r#"{"sweep": "s", "base": "b", "seed": 1, "replications": 3,
        "axes": [{"name": "x", "path": "policies.0.stack.0.timeout", "values": [0, 1, 2]}],
        "rows": [
          {"point": 0, "params": {"x": 0}, "policy": "p", "replications": 3,
           "metrics": {"c/goodput_per_s": {"mean": 7.0, "ci_lo": 6.0, "ci_hi": 8.0}}},
          {"point": 1, "params": {"x": 1}, "policy": "p", "replications": 3,
           "metrics": {"c/goodput_per_s": {"mean": 6.5, "ci_lo": 5.0, "ci_hi": 8.0}}},
          {"point": 2, "params": {"x": 2}, "policy": "p", "replications": 3,
           "metrics": {"c/goodput_per_s": {"mean": 7.0, "ci_lo": 6.5, "ci_hi": 7.5}}}]}"#;
    let s: SweepResult = serde_json::from_str(text).unwrap();
    assert_eq!(s.best, None);
    let b = best(&s, "p", "c/goodput_per_s");
    assert_eq!(settings_text(&s, &b[0]), "x=0 | x=2");
    let (_, note) = best_bars(&s);
    assert!(note.contains("tied: equal means"), "{note}");
    assert!(!note.contains("interval of the difference"), "{note}");
}

#[test]
fn a_constrained_metric_draws_its_target() {
    let s = sweep("c/in_time_ratio", &[0.95, 0.99, 0.995]);
    let target = target_at_least("c/in_time_ratio", 0.99);
    let list = charts_with(&s, std::slice::from_ref(&target));
    let Kind::Lines(l) = &list[0].kind else { panic!("lines") };
    let h = &l.panels[0].hlines;
    assert_eq!((h.len(), h[0].y, h[0].label.as_str()), (1, 0.99, "target ≥ 99%"));
    let best = list.iter().find(|c| c.stem == "sweep_best").unwrap();
    let Kind::Bars(b) = &best.kind else { panic!("bars") };
    assert_eq!(b.panels[0].targets[0].y, 0.99);
    // A constraint on another metric draws nothing here.
    let other = charts_with(&sweep("c/goodput_per_s", &[1.0, 2.0]), &[target]);
    let Kind::Lines(l) = &other[0].kind else { panic!("lines") };
    assert!(l.panels[0].hlines.is_empty());
}

/// Rows over decision axis `d` (1, 2, 3) and condition axis `depth` (1, 2) for one policy, the
/// in-time ratio `0.5 + 0.1 d - 0.1 depth`: all below the 99 % target.
fn decision_by_condition() -> SweepResult {
    let mut s = sweep("c/in_time_ratio", &[]);
    let axis = |name: &str, path: &str, values: Vec<f64>| SweepAxis {
        name: name.into(),
        path: path.into(),
        values,
        role: None,
        link: None,
        unit: None,
    };
    s.axes =
        vec![axis("d", "policies.0.stack.0.x", vec![1.0, 2.0, 3.0]), axis("depth", "dependency.drift", vec![1.0, 2.0])];
    for (i, (d, depth)) in [1.0, 2.0, 3.0].iter().flat_map(|d| [(*d, 1.0), (*d, 2.0)]).enumerate() {
        let v = 0.5 + 0.1 * d - 0.1 * depth;
        s.rows.push(SweepRow {
            point: i,
            params: BTreeMap::from([("d".to_string(), d), ("depth".to_string(), depth)]),
            policy: "p".into(),
            replications: 1,
            metrics: BTreeMap::from([("c/in_time_ratio".to_string(), Estimate { mean: v, ci_lo: v, ci_hi: v })]),
        });
    }
    s
}

#[test]
fn a_decision_against_a_condition_draws_one_curve_per_condition_with_the_target() {
    let s = decision_by_condition();
    let target = target_at_least("c/in_time_ratio", 0.99);
    let list = charts_with(&s, std::slice::from_ref(&target));
    assert!(list.iter().all(|c| !c.stem.starts_with("heatmap_")), "no heatmap for a decision by a condition");
    let chart = list.iter().find(|c| c.stem == "decision_c_in_time_ratio").expect("the decision chart");
    let Kind::Lines(l) = &chart.kind else { panic!("lines") };
    let p = &l.panels[0];
    // depth 1: 0.5, 0.6, 0.7 over d = 1, 2, 3; depth 2: 0.1 lower.
    let curves: Vec<Vec<(f64, f64)>> = p.series.iter().map(|x| x.segments[0].clone()).collect();
    let near =
        |a: &[(f64, f64)], b: &[(f64, f64)]| a.iter().zip(b).all(|(x, y)| x.0 == y.0 && (x.1 - y.1).abs() < 1e-12);
    assert!(
        near(&curves[0], &[(1.0, 0.5), (2.0, 0.6), (3.0, 0.7)])
            && near(&curves[1], &[(1.0, 0.4), (2.0, 0.5), (3.0, 0.6)]),
        "{curves:?}"
    );
    assert_eq!((p.hlines.len(), p.hlines[0].y), (1, 0.99));
    // The data end at 70 %; the axis is widened to show the 99 % target.
    let (_, top) = crate::charts::draw::line_y_range(p);
    assert!(top >= 0.99, "{top}");
    assert_eq!(chart.legend.iter().map(|e| e.label.as_str()).collect::<Vec<_>>(), ["depth = 1", "depth = 2"]);
}

#[test]
fn a_linked_axis_is_drawn_as_one_axis_with_the_one_it_follows() {
    // a and b = 1 - a move together: the points lie on a diagonal, so a heatmap would be
    // empty but for it. One line chart over a, its title naming the link.
    let mut s = sweep("c/goodput_per_s", &[1.0, 2.0, 3.0]);
    s.axes[0].name = "a".into();
    s.axes.push(SweepAxis {
        name: "b".into(),
        path: "policies.0.stack.0.y".into(),
        values: vec![1.0, 0.0, -1.0],
        role: None,
        link: Some("1 - a".into()),
        unit: None,
    });
    for r in &mut s.rows {
        let a = r.params.remove("x").unwrap();
        r.params.insert("a".into(), a);
        r.params.insert("b".into(), 1.0 - a);
    }
    let list = charts(&s);
    assert!(list.iter().all(|c| !c.stem.starts_with("heatmap_")));
    let Kind::Lines(l) = &list[0].kind else { panic!("a line chart") };
    assert!(l.x_label.starts_with("a (b = 1 - a)"), "{}", l.x_label);
    assert_eq!(l.panels[0].series[0].segments[0].len(), 3);
}

#[test]
fn best_setting_notes_stay_inside_their_panel() {
    // Twelve tied settings of a long-named axis: listed whole, the note is wider than the
    // panel and ran into the next one. Each value label's box, from the font's metrics, must
    // end inside its panel's plot (plus the right margin), the labels inside their column.
    let mut s = sweep("c/goodput_per_s", &[7.0; 12]);
    s.axes[0].name = "a_rather_long_axis_name".into();
    for r in &mut s.rows {
        let x = r.params.remove("x").unwrap();
        r.params.insert("a_rather_long_axis_name".into(), x);
    }
    let list = charts(&s);
    let chart = list.iter().find(|c| c.stem == "sweep_best").expect("a best chart");
    let Kind::Bars(b) = &chart.kind else { panic!("bars") };
    // The drawing's grid: panels side by side up to `columns`.
    let panel_w = chart.width / b.columns.min(b.panels.len()) as u32;
    for p in &b.panels {
        let (y_area, plot_w) = crate::charts::draw::bar_columns(p, panel_w);
        let (lo, hi) = crate::charts::draw::bar_x_range(p, plot_w);
        for bar in &p.bars {
            let end = bar.ci.map_or(bar.value, |c| c.1.max(bar.value));
            let at = (end - lo) / (hi - lo) * plot_w;
            let w = crate::charts::style::text_width(&crate::charts::draw::value_label(p, bar), 12.0);
            assert!(at + f64::from(w) <= plot_w + 16.0, "{} ends at {} of {plot_w}", bar.note, at + f64::from(w));
            assert!(crate::charts::style::text_width(&bar.label, 12.0) < y_area);
        }
        assert!(p.bars[0].note.contains("tied"), "{}", p.bars[0].note);
    }
}
