//! `sweep_*`: charts of hand-written `sweep.json` fixtures, and the policies' colours.

use super::*;

/// One axis, two policies, three metrics. Values are made up by hand so that the best
/// settings are known: timeout goodput peaks at 500 (18.0), its p95 is lowest at 200.
const SWEEP_1: &str = r#"{
  "sweep": "timeout-sweep", "base": "charts-small", "seed": 1, "replications": 5,
  "axes": [ {"name": "timeout_ms", "path": "policies.1.stack.0.timeout", "values": [200, 500, 1000]} ],
  "rows": [
    {"point": 0, "params": {"timeout_ms": 200}, "policy": "timeout", "replications": 5, "metrics": {
      "checkout/goodput_per_s": {"mean": 10.0, "ci_lo": 9.0, "ci_hi": 11.0},
      "checkout/p95_ms": {"mean": 210.0, "ci_lo": 205.0, "ci_hi": 215.0},
      "transitions": {"mean": 0.0, "ci_lo": 0.0, "ci_hi": 0.0}}},
    {"point": 1, "params": {"timeout_ms": 500}, "policy": "timeout", "replications": 5, "metrics": {
      "checkout/goodput_per_s": {"mean": 18.0, "ci_lo": 17.0, "ci_hi": 19.0},
      "checkout/p95_ms": {"mean": 520.0, "ci_lo": 510.0, "ci_hi": 530.0},
      "transitions": {"mean": 0.0, "ci_lo": 0.0, "ci_hi": 0.0}}},
    {"point": 2, "params": {"timeout_ms": 1000}, "policy": "timeout", "replications": 5, "metrics": {
      "checkout/goodput_per_s": {"mean": 14.0, "ci_lo": 12.5, "ci_hi": 15.5},
      "checkout/p95_ms": {"mean": 1010.0, "ci_lo": 990.0, "ci_hi": 1030.0},
      "transitions": {"mean": 0.0, "ci_lo": 0.0, "ci_hi": 0.0}}},
    {"point": 0, "params": {"timeout_ms": 200}, "policy": "breaker", "replications": 5, "metrics": {
      "checkout/goodput_per_s": {"mean": 12.0, "ci_lo": 11.0, "ci_hi": 13.0},
      "checkout/p95_ms": {"mean": 230.0, "ci_lo": 220.0, "ci_hi": 240.0},
      "transitions": {"mean": 40.0, "ci_lo": 35.0, "ci_hi": 45.0}}},
    {"point": 1, "params": {"timeout_ms": 500}, "policy": "breaker", "replications": 5, "metrics": {
      "checkout/goodput_per_s": {"mean": 16.0, "ci_lo": 15.0, "ci_hi": 17.0},
      "checkout/p95_ms": {"mean": 480.0, "ci_lo": 470.0, "ci_hi": 490.0},
      "transitions": {"mean": 12.0, "ci_lo": 10.0, "ci_hi": 14.0}}},
    {"point": 2, "params": {"timeout_ms": 1000}, "policy": "breaker", "replications": 5, "metrics": {
      "checkout/goodput_per_s": {"mean": 19.0, "ci_lo": 18.0, "ci_hi": 20.0},
      "checkout/p95_ms": {"mean": 990.0, "ci_lo": 980.0, "ci_hi": 1000.0},
      "transitions": {"mean": 4.0, "ci_lo": 3.0, "ci_hi": 5.0}}}
  ]
}"#;

/// Two axes (2 x 2), one policy; the point without a row stays an empty cell.
const SWEEP_2: &str = r#"{
  "sweep": "grid", "base": "charts-small", "seed": 1, "replications": 3,
  "axes": [ {"name": "permits", "path": "policies.0.stack.0.permits", "values": [4, 8]},
            {"name": "timeout_ms", "path": "policies.0.stack.1.timeout", "values": [250, 750]} ],
  "rows": [
    {"point": 0, "params": {"permits": 4, "timeout_ms": 250}, "policy": "limit", "replications": 3,
     "metrics": {"checkout/goodput_per_s": {"mean": 5.0, "ci_lo": 4.0, "ci_hi": 6.0}}},
    {"point": 1, "params": {"permits": 4, "timeout_ms": 750}, "policy": "limit", "replications": 3,
     "metrics": {"checkout/goodput_per_s": {"mean": 7.0, "ci_lo": 6.0, "ci_hi": 8.0}}},
    {"point": 2, "params": {"permits": 8, "timeout_ms": 250}, "policy": "limit", "replications": 3,
     "metrics": {"checkout/goodput_per_s": {"mean": 9.0, "ci_lo": 8.0, "ci_hi": 10.0}}}
  ]
}"#;

fn sweep_of(text: &str) -> sweep::SweepResult {
    serde_json::from_str(text).unwrap()
}

#[test]
fn sweep_best_setting_follows_the_metric_direction() {
    let s = sweep_of(SWEEP_1);
    let best = |p: &str, m: &str| sweep::settings_text(&s, &sweep::best(&s, p, m)[0]);
    assert_eq!(best("timeout", "checkout/goodput_per_s"), "timeout_ms=500");
    assert_eq!(best("timeout", "checkout/p95_ms"), "timeout_ms=200");
    assert_eq!(best("breaker", "checkout/goodput_per_s"), "timeout_ms=1000");
    assert_eq!(best("breaker", "transitions"), "timeout_ms=1000");
    // All-equal values: every setting ties for best (issue 18), none is "the first one".
    assert_eq!(best("timeout", "transitions"), "timeout_ms=200 | timeout_ms=500 | timeout_ms=1000");
}

#[test]
fn sweep_one_axis_charts_render() {
    let s = sweep_of(SWEEP_1);
    let list = sweep::charts(&s);
    let expected: BTreeSet<String> =
        ["sweep_checkout_goodput_per_s", "sweep_checkout_p95_ms", "sweep_transitions", "sweep_best"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    assert_eq!(stems(&list), expected);
    let goodput = list.iter().find(|c| c.stem == "sweep_checkout_goodput_per_s").unwrap();
    let Kind::Lines(l) = &goodput.kind else {
        panic!("a line chart");
    };
    let timeout = &l.panels[0].series[0];
    assert_eq!(timeout.best, vec![(500.0, 18.0)]);
    assert_eq!(timeout.band, vec![(200.0, 9.0, 11.0), (500.0, 17.0, 19.0), (1000.0, 12.5, 15.5)]);
    for c in &list {
        let r = charts::render(c).unwrap();
        check_png(&r, c.width, c.height);
        check_svg_sizes(&r);
    }
}

#[test]
fn sweep_two_axes_give_heatmaps_with_the_best_cell() {
    let s = sweep_of(SWEEP_2);
    let list = sweep::charts(&s);
    let heat = list.iter().find(|c| c.stem == "heatmap_checkout_goodput_per_s").unwrap();
    let Kind::Heatmap(h) = &heat.kind else {
        panic!("a heatmap");
    };
    // cells[permits][timeout]: (8, 750) has no row.
    assert_eq!(h.panels[0].cells, vec![vec![Some(5.0), Some(7.0)], vec![Some(9.0), None]]);
    assert_eq!(h.panels[0].best, vec![(1, 0)]);
    assert_eq!(h.scale, (5.0, 9.0));
    for c in &list {
        let r = charts::render(c).unwrap();
        check_png(&r, c.width, c.height);
        check_svg_sizes(&r);
    }
}

/// A `sweep.json` written before axes carried their unit still loads, its axes titled by name
/// alone; the same file with a unit on the duration axis titles it "timeout_ms (ms)".
#[test]
fn sweep_json_without_axis_units_loads() {
    let old = sweep_of(SWEEP_2);
    assert!(old.axes.iter().all(|a| a.unit.is_none()));
    let titles = |s: &sweep::SweepResult| {
        let list = sweep::charts(s);
        let Kind::Heatmap(h) = &list[0].kind else { panic!("a heatmap") };
        (h.x_label.clone(), h.y_label.clone())
    };
    assert_eq!(titles(&old), ("permits".to_string(), "timeout_ms".to_string()));
    let new = sweep_of(&SWEEP_2.replace("\"values\": [250, 750]}", "\"values\": [250, 750], \"unit\": \"ms\"}"));
    assert_eq!(new.axes[1].unit.as_deref(), Some("ms"));
    assert_eq!(titles(&new), ("permits".to_string(), "timeout_ms (ms)".to_string()));
}

/// A single-policy sweep's best-setting chart has one bar per panel: each must be drawn with
/// a positive height (it was `height="-10"`, which browsers do not draw).
#[test]
fn sweep_single_policy_best_bars_are_visible() {
    let mut s = sweep_of(SWEEP_1);
    s.rows.retain(|r| r.policy == "timeout");
    let list = sweep::charts(&s);
    let best = list.iter().find(|c| c.stem == "sweep_best").unwrap();
    let r = charts::render(best).unwrap();
    check_svg_sizes(&r);
    // One filled bar per panel in the policy's colour (3 metrics).
    let c0 = sweep::colors(&s).of("timeout");
    let colour = format!("fill=\"#{:02X}{:02X}{:02X}\"", c0.0, c0.1, c0.2);
    let bars = r.svg.lines().filter(|l| l.contains("<rect") && l.contains(&colour)).count();
    assert!(bars >= 3, "{bars} bars of {colour} in:\n{}", r.svg);
}

#[test]
fn sweep_plot_writes_charts_and_html() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sweep.json"), SWEEP_1).unwrap();
    let paths = crate::pages::plot_dir(dir.path()).unwrap();
    assert_eq!(paths.len(), 4);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("Sweep timeout-sweep"));
    assert_eq!(html.matches("<svg").count(), 4);
    // The best-setting table row for timeout goodput, worked by hand above.
    assert!(html.contains(
        "<tr><td>checkout/goodput_per_s</td><td>timeout</td><td>18</td><td>17 .. 19</td><td>timeout_ms=500</td></tr>"
    ));
}

/// The small run with grocery's policy names: timeout-only and limiter-fallback both prefer
/// slot 1 (CRC-32 mod 10), no-protection slot 2. Sorted, limiter-fallback keeps 1,
/// no-protection keeps 2 and timeout-only moves on to 3 (#CC79A7).
fn grocery_named_run() -> (ScenarioSummary, Vec<WindowRow>) {
    let text = SCENARIO
        .replace("\"direct\"", "\"no-protection\"")
        .replace("\"breaker\"", "\"timeout-only\"")
        .replace("\"limit-4\"", "\"limiter-fallback\"");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.ron");
    std::fs::write(&path, text).unwrap();
    let s = scenario::load(&path).unwrap();
    let model = Model::build(&s, s.seed, dir.path()).unwrap();
    let r = runner::run_all(&model, RunOptions::new().with_timeseries(true), false).expect("runs");
    (r.summary, r.rows)
}

/// How a colour is written in the SVG.
fn fill(c: plotters::style::RGBColor) -> String {
    format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)
}

const TIMEOUT_ONLY: plotters::style::RGBColor = plotters::style::RGBColor(204, 121, 167);

#[test]
fn colours_follow_the_policy_name_in_a_run_and_a_sweep_over_some_of_its_policies() {
    let (s, rows) = grocery_named_run();
    let names: Vec<String> = s.runs.iter().map(|r| r.policy.clone()).collect();
    assert_eq!(names, ["no-protection", "timeout-only", "limiter-fallback"]);
    // Run: the comparison bars, the time-series lines and the legends.
    let compare = charts::compare::charts(&s);
    let Kind::Bars(b) = &compare[0].kind else { panic!("bars") };
    let bar = b.panels[0].bars.iter().find(|b| b.label == "timeout-only").unwrap();
    assert_eq!(bar.color, TIMEOUT_ONLY);
    let series = charts::timeseries::charts(&s, &rows);
    let Kind::Lines(l) = &series[0].kind else { panic!("lines") };
    assert_eq!(l.panels[0].series[1].color, TIMEOUT_ONLY, "second policy's p95 line");
    assert_eq!(series[0].legend[1].color, TIMEOUT_ONLY);
    assert!(charts::render(&compare[0]).unwrap().svg.contains(&fill(TIMEOUT_ONLY)));
    // Sweep over timeout-only alone, whose file lists the base scenario's policy sets.
    let mut sw = sweep_of(&SWEEP_1.replace("\"policy\": \"timeout\"", "\"policy\": \"timeout-only\""));
    sw.rows.retain(|r| r.policy == "timeout-only");
    sw.scenario_policies = names.clone();
    for c in sweep::charts(&sw) {
        assert_eq!(c.legend[0].color, TIMEOUT_ONLY, "{}", c.stem);
        let r = charts::render(&c).unwrap();
        assert!(r.svg.contains(&fill(TIMEOUT_ONLY)), "{} has no {}", c.stem, fill(TIMEOUT_ONLY));
    }
    // A re-rendered sweep.json keeps the roster, so `plot` colours the same way.
    let back: sweep::SweepResult = serde_json::from_str(&serde_json::to_string(&sw).unwrap()).unwrap();
    assert_eq!(sweep::colors(&back).of("timeout-only"), TIMEOUT_ONLY);
}

#[test]
fn colours_of_a_sweep_come_from_its_base_scenarios_policy_sets() {
    // The grocery timeout sweep runs three of grocery's six policy sets.
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/sweeps/grocery-timeout.ron");
    let plan = brownout_core::sweep::grid::load(&spec).unwrap().info;
    assert_eq!(plan.policies, ["timeout-only", "limiter-fallback", "tiered"]);
    let all = ["no-protection", "timeout-only", "error-breaker", "latency-breaker", "limiter-fallback", "tiered"];
    assert_eq!(plan.scenario_policies, all);
    // Among all six (sorted: error-breaker 1, latency-breaker 7, limiter-fallback 1 -> 2,
    // no-protection 2 -> 3, tiered 2 -> 4, timeout-only 1 -> 5), timeout-only is sky blue,
    // tiered orange; among the three run alone it would be 3 and 2.
    let c = charts::style::PolicyColors::new(&plan.scenario_policies);
    assert_eq!(c.of("timeout-only"), plotters::style::RGBColor(86, 180, 233));
    assert_eq!(c.of("tiered"), plotters::style::RGBColor(230, 159, 0));
}

/// One axis, one policy, a ratio at 93, 96 and 99 % (intervals half a point either side).
/// A sweep of one replication has no interval: `sweep.json` holds `null` ends, which read
/// back as unknown (NaN), and the report says the interval is unknown instead of a range.
#[test]
fn sweep_of_one_replication_reads_and_reports_an_unknown_interval() {
    let text = SWEEP_1.replace("\"replications\": 5", "\"replications\": 1").replace(
        r#""checkout/goodput_per_s": {"mean": 18.0, "ci_lo": 17.0, "ci_hi": 19.0}"#,
        r#""checkout/goodput_per_s": {"mean": 18.0, "ci_lo": null, "ci_hi": null}"#,
    );
    let s = sweep_of(&text);
    let e = s.rows[1].metrics["checkout/goodput_per_s"];
    assert_eq!(e.mean, 18.0);
    assert!(e.ci_lo.is_nan() && e.ci_hi.is_nan(), "{e:?}");
    let html = crate::html::sweep_section(&s);
    let row = html.lines().find(|l| l.contains("checkout/goodput_per_s") && l.contains("<td>timeout</td>")).unwrap();
    assert!(row.contains("<td>unknown (one replication)</td>"), "{row}");
    assert!(!html.contains("NaN"), "{html}");
    let mut judged = sweep_of(&text);
    judged.best = Some(Vec::new());
    assert!(sweep::tie_rule(&judged).starts_with("one replication: no interval, so no setting is shown to differ"));
    // The charts draw the mean without a band where the interval is unknown.
    for c in sweep::charts(&s) {
        charts::render(&c).unwrap();
    }
}

fn ratio_sweep() -> sweep::SweepResult {
    let mut s = sweep_of(SWEEP_1);
    s.rows.retain(|r| r.policy == "timeout");
    for (r, v) in s.rows.iter_mut().zip([0.93, 0.96, 0.99]) {
        r.metrics =
            [("checkout/goodput_ratio".to_string(), sweep::Estimate { mean: v, ci_lo: v - 0.005, ci_hi: v + 0.005 })]
                .into();
    }
    s
}

#[test]
fn ratio_axes_zoom_to_the_data() {
    let list = sweep::charts(&ratio_sweep());
    let curve = list.iter().find(|c| c.stem == "sweep_checkout_goodput_ratio").unwrap();
    let Kind::Lines(l) = &curve.kind else { panic!("lines") };
    // Data 0.925..0.995 (bands); a tenth of the span each side: 0.918..1.002, clamped to 1;
    // step 0.082 / 5 -> 0.02: 0.90..1.00.
    let (lo, hi) = charts::draw::line_y_range(&l.panels[0]);
    assert!((lo - 0.9).abs() < 1e-9 && (hi - 1.0).abs() < 1e-9, "{lo}..{hi}");
    let svg = charts::render(curve).unwrap().svg;
    // Text is written on a line of its own.
    let has = |t: &str| svg.lines().any(|l| l == t);
    assert!(has("92%") && has("98%") && !has("0%") && !has("50%"), "ticks of a zoomed axis:\n{svg}");
    // Best bar 0.99 (0.985..0.995): span 0.01, margin at least a point: 0.975..1.0, step
    // 0.005; the end leaves room for the label past 100 %.
    let best = list.iter().find(|c| c.stem == "sweep_best").unwrap();
    let Kind::Bars(b) = &best.kind else { panic!("bars") };
    let (lo, hi) = charts::draw::bar_x_range(&b.panels[0], 500.0);
    assert!((lo - 0.975).abs() < 1e-9 && hi > 1.0, "{lo}..{hi}");
    check_svg_sizes(&charts::render(best).unwrap());
    // A flat ratio still gets a visible range: a point either side, on 0.5-point steps.
    let (lo, hi) = charts::style::value_range(charts::style::Unit::Fraction, 0.5, 0.5);
    assert!((lo - 0.49).abs() < 1e-9 && (hi - 0.51).abs() < 1e-9, "{lo}..{hi}");
    // Latencies and counts still start at 0.
    let p95 = sweep::charts(&sweep_of(SWEEP_1)).into_iter().find(|c| c.stem == "sweep_checkout_p95_ms").unwrap();
    let Kind::Lines(l) = &p95.kind else { panic!("lines") };
    assert_eq!(charts::draw::line_y_range(&l.panels[0]).0, 0.0);
}

#[test]
fn heatmaps_have_a_colour_bar_in_the_metrics_unit() {
    let list = sweep::charts(&sweep_of(SWEEP_2));
    let heat = list.iter().find(|c| c.stem == "heatmap_checkout_goodput_per_s").unwrap();
    assert!(heat.note.contains("colour = checkout/goodput_per_s in /s from 5/s to 9/s"), "{}", heat.note);
    let Kind::Heatmap(h) = &heat.kind else { panic!("a heatmap") };
    let ticks: Vec<String> = h.bar_ticks().into_iter().map(|t| t.1).collect();
    assert_eq!(ticks, ["5/s", "7/s", "9/s"]);
    assert_eq!(h.bar_title, "/s");
    let svg = charts::render(heat).unwrap().svg;
    // 5/s and 9/s label a cell and the bar; 7/s labels a cell and the bar's middle.
    for label in ["5/s", "7/s", "9/s"] {
        assert_eq!(svg.lines().filter(|l| *l == label).count(), 2, "{label} in:\n{svg}");
    }
    assert!(svg.lines().any(|l| l == "/s"), "the bar's unit");
}

/// A 95 % target beside bars at 5 to 7 % lies inside the axis, not clamped to its end and
/// drawn where 7 % is.
#[test]
fn a_ratio_target_beyond_the_bars_widens_the_axis() {
    let bar = |v: f64| charts::Bar {
        label: "p".into(),
        color: TARGET,
        value: v,
        ci: Some((v - 0.01, v + 0.01)),
        note: String::new(),
    };
    let target = charts::HLine { y: 0.95, label: "target ≥ 95%".into(), color: TARGET };
    let p = charts::BarPanel {
        title: "in_time_ratio (constraint)".into(),
        unit: charts::style::Unit::Fraction,
        bars: vec![bar(0.05), bar(0.07)],
        targets: vec![target.clone()],
    };
    let (lo, hi) = charts::draw::bar_x_range(&p, 500.0);
    assert!(lo <= 0.04 && hi > 0.95, "{lo}..{hi} leaves out the 95 % target");
    // A target below the bars widens the axis downwards.
    let low =
        charts::BarPanel { bars: vec![bar(0.9), bar(0.95)], targets: vec![charts::HLine { y: 0.2, ..target }], ..p };
    let (lo, hi) = charts::draw::bar_x_range(&low, 500.0);
    assert!(lo < 0.2 && hi > 0.96, "{lo}..{hi}");
}
