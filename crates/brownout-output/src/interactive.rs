//! `report.html`'s interactive time-series panels: the run's series (the numbers of
//! `timeseries.csv`, as the charts read them back) embedded as JSON, drawn by uPlot (MIT,
//! inlined from `assets/uplot/`, see its README for version, source and checksums) and
//! `assets/panels.js`. Hover shows values, dragging zooms, a policy set can be hidden; the
//! page stays one file that needs no network, and without JavaScript the static charts carry
//! the same series (a `<noscript>` note says so).

use serde::Serialize;

use crate::charts::style::PolicyColors;
use crate::metrics::WindowRow;
use crate::metrics::summary::ScenarioSummary;
use crate::report::escape::visible;

const UPLOT_JS: &str = include_str!("../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/uplot/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("../assets/uplot/LICENSE");
const PANELS_JS: &str = include_str!("../assets/panels.js");

/// The page's own rules for the panels (uPlot's stylesheet comes first).
const CSS: &str = ".policy-toggles label{margin-right:1.2em;white-space:nowrap}.policy-toggles .swatch{display:inline-block;\
width:.9em;height:.9em;margin:0 .3em;vertical-align:-.1em}figure.panel{margin:1em 0}.panel-help{color:#666;font-size:.9em}";

/// One column of `timeseries.csv` drawn as panels: its CSV header, title, unit, whether it
/// is fleet-wide (the same on every class's row: drawn once), and its value in a row.
struct Column {
    name: &'static str,
    title: &'static str,
    unit: &'static str,
    fleet: bool,
    get: fn(&WindowRow) -> f64,
}

/// The columns drawn, per class first, then fleet-wide; names as in `timeseries.csv`'s header.
const COLUMNS: [Column; 11] = [
    Column { name: "offered_count", title: "arrivals", unit: "per window", fleet: false, get: |r| r.offered as f64 },
    Column { name: "goodput_per_s", title: "answered in time", unit: "per s", fleet: false, get: |r| r.goodput_per_s },
    Column { name: "latency_p95_ms", title: "latency p95", unit: "ms", fleet: false, get: |r| r.latency_p95_ms },
    Column { name: "timeout_count", title: "timeouts", unit: "per window", fleet: false, get: |r| r.timeout as f64 },
    Column { name: "fallback_per_s", title: "fallbacks", unit: "per s", fleet: false, get: |r| r.fallback_per_s },
    Column {
        name: "in_flight_end_count",
        title: "backlog: requests in flight at the window's end",
        unit: "requests",
        fleet: false,
        get: |r| r.in_flight_end_count,
    },
    Column {
        name: "dep_calls_per_s",
        title: "dependency calls",
        unit: "per s",
        fleet: true,
        get: |r| r.dep_calls_per_s,
    },
    Column {
        name: "dep_latency_p95_ms",
        title: "dependency service time p95",
        unit: "ms",
        fleet: true,
        get: |r| r.dep_latency_p95_ms,
    },
    Column {
        name: "dep_in_flight_end_count",
        title: "dependency calls not yet answered at the window's end",
        unit: "calls",
        fleet: true,
        get: |r| r.dep_in_flight_end_count,
    },
    Column {
        name: "workers_busy_mean_count",
        title: "busy worker slots (mean)",
        unit: "slots",
        fleet: true,
        get: |r| r.workers_busy,
    },
    Column {
        name: "pool_busy_mean_count",
        title: "busy pool connections (mean)",
        unit: "connections",
        fleet: true,
        get: |r| r.pool_busy,
    },
];

/// What `panels.js` reads.
#[derive(Serialize)]
struct Data {
    x_label: &'static str,
    /// Window starts, seconds: a point stands for the window `(t, t + window]`.
    t: Vec<f64>,
    policies: Vec<String>,
    /// `#rrggbb` per policy set, the static charts' colours.
    colors: Vec<String>,
    /// Warm-up and phases, seconds.
    bands: Vec<Band>,
    panels: Vec<Panel>,
}

#[derive(Serialize)]
struct Band {
    from: f64,
    to: f64,
    warmup: bool,
}

#[derive(Serialize)]
struct Panel {
    /// The heading the panel is shown under (its class, or the fleet).
    group: String,
    /// The class whose rows it draws (the first class for a fleet-wide column).
    class: String,
    column: &'static str,
    title: String,
    unit: &'static str,
    /// Per policy set, a value per window start (`null`: no row, or no value in the window).
    series: Vec<Vec<Option<f64>>>,
}

/// The panels' section of `report.html`, or nothing when the run kept no time series.
/// `factor` is how many saved windows each row merges (1: the rows are `timeseries.csv`'s).
pub(crate) fn section(summary: &ScenarioSummary, rows: &[WindowRow], factor: u64) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let data = data(summary, rows);
    let merged = if factor > 1 {
        format!(
            " This run has more windows than a panel draws: each point merges {factor} saved windows (counts summed, \
             rates averaged, percentiles the largest); <code>timeseries.csv</code> has every window."
        )
    } else {
        " Each point is one window of <code>timeseries.csv</code>, at the window's start.".to_string()
    };
    format!(
        "<section id=\"interactive\">\n<h2>Time series (interactive)</h2>\n\
         <p>The run's time series, every policy set a line.{merged}</p>\n\
         <noscript><p>These panels need JavaScript; the charts below show the same series.</p></noscript>\n\
         <div id=\"brownout-panels\"></div>\n\
         <script type=\"application/json\" id=\"brownout-series\">{json}</script>\n\
         <style id=\"uplot-css\">{UPLOT_CSS}{CSS}</style>\n\
         <script id=\"uplot\">/* uPlot, inlined from the npm package uplot@1.6.32 under its MIT licence:\n{licence}*/\n{js}</script>\n\
         <script id=\"brownout-panels-js\">{panels}</script>\n</section>\n",
        json = script_json(&data),
        licence = UPLOT_LICENSE.replace("*/", "* /"),
        js = script_text(UPLOT_JS),
        panels = script_text(PANELS_JS),
    )
}

/// The series as `panels.js` reads it: policies in the summary's order, classes in the
/// scenario's, window starts in time order.
fn data(summary: &ScenarioSummary, rows: &[WindowRow]) -> Data {
    let policies: Vec<String> = summary.runs.iter().map(|r| r.policy.clone()).collect();
    let colors = PolicyColors::new(&policies);
    let mut t: Vec<f64> = rows.iter().map(|r| r.t_s).collect();
    t.sort_by(f64::total_cmp);
    t.dedup();
    let classes: Vec<&str> = summary.setup.classes.iter().map(|c| c.name.as_str()).collect();
    let mut panels = Vec::new();
    for (class, fleet) in classes.iter().map(|c| (*c, false)).chain(classes.first().map(|c| (*c, true))) {
        let group = if fleet { "Fleet".to_string() } else { format!("Class {}", visible(class)) };
        for col in COLUMNS.iter().filter(|c| c.fleet == fleet) {
            let mut series = vec![vec![None; t.len()]; policies.len()];
            for r in rows.iter().filter(|r| r.class == class) {
                let (Some(p), Ok(k)) =
                    (policies.iter().position(|p| *p == r.policy), t.binary_search_by(|x| x.total_cmp(&r.t_s)))
                else {
                    continue;
                };
                let v = (col.get)(r);
                series[p][k] = v.is_finite().then_some(v);
            }
            let title = if fleet { col.title.to_string() } else { format!("{}: {}", visible(class), col.title) };
            panels.push(Panel {
                group: group.clone(),
                class: visible(class),
                column: col.name,
                title,
                unit: col.unit,
                series,
            });
        }
    }
    let u = &summary.setup;
    let warm = (u.warmup_s > 0.0).then_some(Band { from: 0.0, to: u.warmup_s, warmup: true });
    let phases = summary.phases.iter().map(|p| Band { from: p.start_s, to: p.end_s, warmup: false });
    Data {
        x_label: "time (s)",
        t,
        colors: policies
            .iter()
            .map(|p| {
                let c = colors.of(p);
                format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
            })
            .collect(),
        policies: policies.iter().map(|p| visible(p)).collect(),
        bands: warm.into_iter().chain(phases).collect(),
        panels,
    }
}

/// JSON for a `<script type="application/json">` element: `<`, `>` and `&` written as JSON
/// `\u` escapes (they can only occur inside strings), so no name can close the element or
/// open a comment, and the line separators JavaScript once read as line ends likewise.
fn script_json(value: &impl Serialize) -> String {
    let json = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// Script text inlined in a `<script>` element: a `</script` inside it would end the element
/// early (none is in the shipped files; the unit test checks), so it is split.
fn script_text(js: &str) -> String {
    js.replace("</script", "<\\/script")
}

#[cfg(test)]
mod tests;
