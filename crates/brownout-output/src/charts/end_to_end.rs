//! Charts and the HTML report, end to end (unit tests: they read the chart descriptions,
//! which are not part of the public API).
//!
//! Index:
//! - `run_*`: charts of a small inline run (every run chart type, determinism, PNG pixels,
//!   `plot` re-rendering from saved files, the HTML page).
//! - `sweep_*`: charts of hand-written `sweep.json` fixtures (one axis, two axes) and the
//!   best-setting choice worked by hand; an old `sweep.json` without axis units.
//! - constraint targets: payments-brownout's on its comparison bars and (moved to a quantity
//!   a panel plots) on its time series; a heatmap's boundary on a 3 x 3 grid worked by hand.

use std::collections::BTreeSet;
use std::path::Path;

use crate::charts::{self, Chart, Kind, Rendered, TARGET, sweep};
use crate::metrics::WindowRow;
use crate::metrics::summary::ScenarioSummary;
use crate::model::{Model, RunOptions};
use crate::{runner, scenario};

/// One minute of traffic; the dependency turns slow at 20 s. Three policies: no protection,
/// a breaker (with a timeout feeding it failures) and a fixed limit. The class falls back to
/// the cache, so fallbacks and their staleness exist.
const SCENARIO: &str = r#"Scenario(
    name: "charts-small",
    description: "Small run for chart tests: the dependency turns slow at 20 s.",
    seed: 3,
    horizon: "60s",
    warmup: "10s",
    window: "5s",
    fleet: (instances: 1, workers: (slots: 30), pool: (max_connections: 12, acquire_timeout: "500ms")),
    classes: [
        (name: "checkout", arrivals: Poisson(rate_per_s: 15.0), deadline: "1s", fallback: OnRefusalOrFailure),
        (name: "browse", arrivals: Poisson(rate_per_s: 10.0), deadline: "2s", fallback: OnRefusalOrFailure),
    ],
    dependency: (latency: Constant("100ms"), modes: [(at: "20s", mode: Slow("2s"))]),
    catalogue: Some((items: 50, changes_per_hour: 60.0)),
    policies: [
        (name: "direct", stack: []),
        (name: "breaker", stack: [
            (policy: ConsecutiveBreaker((failures: 3, break_duration: "2s", probes: 1))),
            (policy: Timeout((timeout: "500ms"))),
        ]),
        (name: "limit-4", stack: [(policy: Limiter((permits: 4, queue: 0)))]),
    ],
)"#;

fn small_run() -> (ScenarioSummary, Vec<WindowRow>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.ron");
    std::fs::write(&path, SCENARIO).unwrap();
    let s = scenario::load(&path).unwrap();
    let model = Model::build(&s, s.seed, dir.path()).unwrap();
    let opts = RunOptions { timeseries: true, trace_limit: 0, events: 0 };
    let r = runner::run_all(&model, opts, false).expect("runs");
    (r.summary, r.rows)
}

fn stems(charts: &[Chart]) -> BTreeSet<String> {
    charts.iter().map(|c| c.stem.clone()).collect()
}

/// Decode a PNG; check its size and that it is a picture, not a blank page.
fn check_png(r: &Rendered, width: u32, height: u32) {
    let img = image::load_from_memory_with_format(&r.png, image::ImageFormat::Png)
        .unwrap_or_else(|e| panic!("{}.png does not decode: {e}", r.stem))
        .to_rgb8();
    assert_eq!(img.dimensions(), (width, height), "{}.png size", r.stem);
    let colours: BTreeSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    assert!(colours.len() > 2, "{}.png has {} colour(s)", r.stem, colours.len());
    let inked = img.pixels().filter(|p| p.0 != [255, 255, 255]).count();
    let total = (width * height) as usize;
    // Axes, text and data cover far more than 1% of any chart; a blank one covers 0%.
    assert!(inked * 100 > total, "{}.png: only {inked} of {total} pixels drawn", r.stem);
}

/// Browsers draw nothing for a rectangle with a negative width or height: no emitted SVG may
/// have one.
fn check_svg_sizes(r: &Rendered) {
    for attr in ["width=\"-", "height=\"-"] {
        assert!(!r.svg.contains(attr), "{}.svg has a rectangle with {attr}...", r.stem);
    }
}

#[test]
fn run_every_chart_type_renders() {
    let (s, rows) = small_run();
    let list = [charts::timeseries::charts(&s, &rows), charts::compare::charts(&s)].concat();
    // One of each: latency, goodput and comparison per class, resources; breaker for the
    // one breaker policy, staleness because the classes fall back; no limit chart: the one
    // limiter is fixed, a flat line (issue 18).
    let expected: BTreeSet<String> = [
        "latency",
        "goodput_checkout",
        "goodput_browse",
        "resources",
        "breaker",
        "staleness",
        "compare_checkout",
        "compare_browse",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(stems(&list), expected);
    for c in &list {
        let r = charts::render(c).unwrap();
        check_png(&r, c.width, c.height);
        check_svg_sizes(&r);
        assert!(r.svg.starts_with("<svg"), "{}.svg", c.stem);
    }
}

#[test]
fn run_breaker_band_holds_only_breaker_policies() {
    let (s, rows) = small_run();
    let list = charts::timeseries::charts(&s, &rows);
    let band = list.iter().find(|c| c.stem == "breaker").unwrap();
    let Kind::Bands(b) = &band.kind else {
        panic!("breaker chart is not a band chart");
    };
    let labels: Vec<&str> = b.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["breaker"]);
    // 60 s in 5 s windows: 12 windows, each cell 5 s wide, fractions within 0..1.
    assert_eq!(b.rows[0].cells.len(), 12);
    for &(x0, x1, open, half) in &b.rows[0].cells {
        assert!((x1 - x0 - 5.0).abs() < 1e-9);
        assert!((0.0..=1.0).contains(&(open + half)));
    }
    // The breaker must have opened at some point after the dependency turned slow at 20 s.
    assert!(b.rows[0].cells.iter().any(|c| c.0 >= 20.0 && c.2 > 0.0));
}

#[test]
fn run_time_axis_reads_minutes_beyond_ten_minutes() {
    let (mut s, rows) = small_run();
    let seconds = charts::timeseries::charts(&s, &rows);
    let Kind::Lines(l) = &seconds[0].kind else {
        panic!("latency is a line chart");
    };
    assert_eq!(l.x_label, "time (s)");
    assert_eq!(l.x_range, (0.0, 60.0));
    // Pretend the horizon was 20 minutes: same windows, axis in minutes.
    s.setup.horizon_s = 1200.0;
    let minutes = charts::timeseries::charts(&s, &rows);
    let Kind::Lines(l) = &minutes[0].kind else {
        panic!("latency is a line chart");
    };
    assert_eq!(l.x_label, "time (min)");
    assert_eq!(l.x_range, (0.0, 20.0));
    // The first window [0 s, 5 s) is drawn at its midpoint, 2.5 s = 2.5/60 min.
    let first = l.panels[0].series[0].segments[0][0].0;
    assert!((first - 2.5 / 60.0).abs() < 1e-12, "{first}");
}

#[test]
fn run_rendering_is_deterministic() {
    let (s, rows) = small_run();
    let a = charts::run_charts(&s, &rows).unwrap();
    let b = charts::run_charts(&s, &rows).unwrap();
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert!(x.svg == y.svg, "{}.svg differs between renders", x.stem);
        assert!(x.png == y.png, "{}.png differs between renders", x.stem);
    }
}

fn read_dir_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn run_plot_rerenders_the_same_files_from_saved_results() {
    let (s, rows) = small_run();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::write_atomic(&d.join("summary.json"), &crate::summary_json(&s).unwrap()).unwrap();
    crate::write_atomic(&d.join("timeseries.csv"), &crate::timeseries_csv(&rows).unwrap()).unwrap();
    let paths = charts::write_run(d, "described", &s, &rows).unwrap();
    assert_eq!(paths.len(), 8);
    assert!(paths.iter().all(|p| d.join(p).exists()));
    let first = read_dir_files(&d.join("charts"));
    assert_eq!(first.len(), 16, "a PNG and an SVG per chart");
    std::fs::remove_dir_all(d.join("charts")).unwrap();
    // From the saved JSON and CSV only (floats round-trip), the same bytes come back.
    let again = charts::plot_dir(d).unwrap();
    assert_eq!(again, paths);
    assert!(first == read_dir_files(&d.join("charts")));
}

#[test]
fn run_html_is_self_contained() {
    let (s, rows) = small_run();
    let dir = tempfile::tempdir().unwrap();
    charts::write_run(dir.path(), "A <small> run.", &s, &rows).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("A &lt;small&gt; run."), "description, escaped");
    assert!(html.contains("<th>goodput/s</th>"), "comparison table");
    assert_eq!(html.matches("<svg").count(), 8, "every chart inline");
    assert!(!html.contains("<?xml"));
    // Nothing to fetch: no external references other than the SVG namespace name.
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_ns.contains("http://") && !without_ns.contains("https://"));
    assert!(!html.contains("<script") && !html.contains("<img"));
}

#[test]
fn plot_without_results_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(charts::plot_dir(dir.path()).is_err());
}

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
    let paths = charts::plot_dir(dir.path()).unwrap();
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
    let r = runner::run_all(&model, RunOptions { timeseries: true, trace_limit: 0, events: 0 }, false).expect("runs");
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
    let opts = RunOptions { timeseries: false, trace_limit: 0, events: 0 };
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
    let opts = RunOptions { timeseries: true, trace_limit: 0, events: 0 };
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
