//! Charts and the HTML report, end to end (unit tests: they read the chart descriptions,
//! which are not part of the public API).
//!
//! Index (`sweeps`, `targets`: submodules):
//! - `run_*`: charts of a small inline run (every run chart type, determinism, PNG pixels,
//!   `plot` re-rendering from saved files, the HTML page).
//! - `sweep_*`: charts of hand-written `sweep.json` fixtures (one axis, two axes) and the
//!   best-setting choice worked by hand; an old `sweep.json` without axis units.
//! - constraint targets: payments-brownout's on its comparison bars and (moved to a quantity
//!   a panel plots) on its time series; a heatmap's boundary on a 3 x 3 grid worked by hand.

mod sweeps;
mod targets;

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
    let opts = RunOptions::new().with_timeseries(true);
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
    // limiter is fixed, a flat line (issue 18); a load chart per class, for the phases derived
    // from the slow mode at 20 s.
    let expected: BTreeSet<String> = [
        "latency",
        "goodput_checkout",
        "goodput_browse",
        "load_checkout",
        "load_browse",
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
    let a = charts::run_charts(&s, &rows, None).unwrap();
    let b = charts::run_charts(&s, &rows, None).unwrap();
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
    let paths = crate::pages::write_run(d, "described", &s, &rows).unwrap();
    // The ten charts of `run_every_chart_type_renders`.
    assert_eq!(paths.len(), 10);
    assert!(paths.iter().all(|p| d.join(p).exists()));
    let first = read_dir_files(&d.join("charts"));
    assert_eq!(first.len(), 20, "a PNG and an SVG per chart");
    std::fs::remove_dir_all(d.join("charts")).unwrap();
    // From the saved JSON and CSV only (floats round-trip), the same bytes come back.
    let again = crate::pages::plot_dir(d).unwrap();
    assert_eq!(again, paths);
    assert!(first == read_dir_files(&d.join("charts")));
}

#[test]
fn run_html_is_self_contained() {
    let (s, rows) = small_run();
    let dir = tempfile::tempdir().unwrap();
    crate::pages::write_run(dir.path(), "A <small> run.", &s, &rows).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("A &lt;small&gt; run."), "description, escaped");
    assert!(html.contains("<th>goodput/s</th>"), "comparison table");
    assert_eq!(html.matches("<svg").count(), 10, "every chart inline");
    assert!(!html.contains("<?xml"));
    // Nothing to fetch: no external references other than the SVG namespace name and the
    // inlined uPlot's banner comment (its source repository), no script or style loaded from
    // elsewhere: every script is inline.
    let (before, uplot) = html.split_once("<script id=\"uplot\">").unwrap();
    let after = &uplot[uplot.find("</script>").unwrap()..];
    let without_ns = format!("{before}{after}").replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_ns.contains("http://") && !without_ns.contains("https://"));
    assert!(!html.contains("<img") && !html.contains("<link") && !html.contains("<script src"));
    assert_eq!(html.matches("<script").count(), 3, "the series (JSON), uPlot and the panels' code");
}

#[test]
fn plot_without_results_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(crate::pages::plot_dir(dir.path()).is_err());
}
