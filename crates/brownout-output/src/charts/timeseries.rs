//! Time-series charts of a run: every policy overlaid on the same axes, one colour each.

use plotters::style::RGBColor;

use super::style::{self, PolicyColors, REFERENCE, Unit};
use super::{
    BandRow, BandRows, Chart, HLine, Kind, LegendEntry, LinePanel, LinePanels, Mark, Series, Shade, TARGET,
    policy_legend, slug,
};
use crate::metrics::WindowRow;
use crate::metrics::summary::ScenarioSummary;
use crate::report::table::says_something;
use brownout_core::decide::ObjectiveRef;

mod load;

const WIDTH: u32 = 1100;
const PANEL_H: u32 = 300;
/// Beyond this horizon the time axis reads in minutes.
const MINUTES_AFTER_S: f64 = 600.0;

/// What every time-series chart shares: policies in summary order and their rows.
struct Ctx<'a> {
    s: &'a ScenarioSummary,
    policies: Vec<String>,
    /// Each policy's colour, by name.
    colors: PolicyColors,
    /// Rows per policy (all classes), in file order.
    rows: Vec<Vec<&'a WindowRow>>,
    /// Seconds per x unit (1 or 60).
    per_unit: f64,
}

impl<'a> Ctx<'a> {
    fn new(s: &'a ScenarioSummary, rows: &'a [WindowRow]) -> Self {
        let policies: Vec<String> = s.runs.iter().map(|r| r.policy.clone()).collect();
        let by_policy = policies.iter().map(|p| rows.iter().filter(|r| &r.policy == p).collect()).collect();
        let per_unit = if s.setup.horizon_s > MINUTES_AFTER_S { 60.0 } else { 1.0 };
        let colors = PolicyColors::new(&policies);
        Self { s, policies, colors, rows: by_policy, per_unit }
    }

    /// Fleet-wide columns repeat on every class row; the first class's rows carry them once.
    fn fleet(&self, p: usize) -> Vec<&'a WindowRow> {
        let first = self.s.setup.classes.first().map(|c| c.name.as_str());
        self.class(p, first.unwrap_or(""))
    }

    fn class(&self, p: usize, class: &str) -> Vec<&'a WindowRow> {
        self.rows[p].iter().copied().filter(|r| r.class == class).collect()
    }

    /// A window is plotted at its midpoint.
    fn x(&self, r: &WindowRow) -> f64 {
        (r.t_s + self.s.setup.window_s / 2.0) / self.per_unit
    }

    fn lines(&self, panels: Vec<LinePanel>) -> LinePanels {
        let warm = self.s.setup.warmup_s;
        LinePanels {
            x_label: self.x_label(),
            x_unit: Unit::Plain,
            x_range: (0.0, self.s.setup.horizon_s.max(1e-9) / self.per_unit),
            shade: self.shades(warm),
            marks: Vec::new(),
            panels,
        }
    }

    /// The warm-up (grey) and every phase (light amber, alternating), each labelled.
    fn shades(&self, warm: f64) -> Vec<Shade> {
        let warmup = (warm > 0.0).then(|| Shade {
            from: 0.0,
            to: warm / self.per_unit,
            label: " warm-up".to_string(),
            color: style::SHADE,
        });
        let phases = self.s.phases.iter().enumerate().map(|(k, p)| Shade {
            from: p.start_s / self.per_unit,
            to: p.end_s / self.per_unit,
            label: format!(" {}", p.name),
            color: style::PHASE_SHADES[k % 2],
        });
        warmup.into_iter().chain(phases).collect()
    }

    fn x_label(&self) -> String {
        if self.per_unit == 60.0 { "time (min)".into() } else { "time (s)".into() }
    }

    /// One series per policy from `rows_of(p)`, `y` returning `None` to break the line.
    fn per_policy(
        &self,
        rows_of: impl Fn(usize) -> Vec<&'a WindowRow>,
        y: impl Fn(&WindowRow) -> Option<f64>,
        dashed: bool,
    ) -> Vec<Series> {
        (0..self.policies.len())
            .map(|p| Series {
                color: self.colors.of(&self.policies[p]),
                dashed,
                segments: segments(&rows_of(p), |r| self.x(r), &y),
                band: Vec::new(),
                dots: false,
                best: Vec::new(),
            })
            .collect()
    }

    /// The target lines of the `decide` section's constraints on catalogue metric `metric` of
    /// `class` (`None`: a run-level metric), for the panel that plots that same quantity per
    /// window. A constraint over a phase says so in its label: it judges the phase's figure,
    /// while the line spans the run.
    fn targets(&self, class: Option<&str>, metric: &str, unit: Unit) -> Vec<HLine> {
        let Some(d) = &self.s.decision else { return Vec::new() };
        d.constraints
            .iter()
            .filter_map(|c| {
                let Ok(ObjectiveRef::Metric(m)) = ObjectiveRef::parse(&c.metric) else { return None };
                // A dependency's figure (`dependencies[pricing]/amplification`) is not the run's.
                if m.dependency.is_some() || m.class != class || m.metric.name != metric {
                    return None;
                }
                let during = m.phase.map(|p| format!(" during {p}")).unwrap_or_default();
                let lines = super::sweep::targets_of(std::slice::from_ref(c), &c.metric, unit);
                Some(lines.into_iter().map(move |h| HLine { label: format!("{}{during}", h.label), ..h }))
            })
            .flatten()
            .collect()
    }

    fn chart(&self, stem: &str, title: String, note: &str, kind: Kind, panels: usize) -> Chart {
        let legend = policy_legend(&self.policies, &self.colors);
        let targeted = match &kind {
            Kind::Lines(l) => l.panels.iter().any(|p| p.hlines.iter().any(|h| h.color == TARGET)),
            _ => false,
        };
        let key = if targeted { "; red dashed line = a constraint's target (decide)" } else { "" };
        Chart {
            stem: stem.to_string(),
            title,
            note: format!("{note}{key}"),
            width: WIDTH,
            height: header_h(&legend) + PANEL_H * panels as u32,
            legend,
            kind,
        }
    }
}

/// A rough header height: title, note and legend rows of about six entries.
fn header_h(legend: &[LegendEntry]) -> u32 {
    80 + 20 * (legend.len() as u32).div_ceil(6)
}

/// Split rows into connected runs of points; `None` (or a non-finite value) from `y` ends a run.
pub fn segments(
    rows: &[&WindowRow],
    x: impl Fn(&WindowRow) -> f64,
    y: impl Fn(&WindowRow) -> Option<f64>,
) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur = Vec::new();
    for r in rows {
        // A non-finite value cannot be drawn; it breaks the line like a missing one.
        match y(r).filter(|v| v.is_finite()) {
            Some(v) => cur.push((x(r), v)),
            None if !cur.is_empty() => out.push(std::mem::take(&mut cur)),
            None => {}
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Every time-series chart that applies to this run.
pub fn charts(s: &ScenarioSummary, rows: &[WindowRow]) -> Vec<Chart> {
    if rows.is_empty() || s.runs.is_empty() {
        return Vec::new();
    }
    let c = Ctx::new(s, rows);
    let mut out = vec![latency(&c)];
    out.extend(s.setup.classes.iter().map(|k| goodput(&c, &k.name)));
    // The load chart marks recovery after a phase: without phases there is none to mark.
    if !s.phases.is_empty() {
        out.extend(s.setup.classes.iter().map(|k| load::load(&c, &k.name)));
    }
    out.push(resources(&c));
    out.extend(breaker(&c));
    out.extend(limit(&c));
    out.extend(staleness(&c));
    out
}

fn latency(c: &Ctx) -> Chart {
    // Zero quantiles and no call started means no call in the window: a gap, not a fast
    // window. (A zero-latency dependency that was called still draws at zero.)
    let has = |r: &WindowRow| r.dep_latency_p50_ms > 0.0 || r.dep_latency_p95_ms > 0.0 || r.dep_calls_per_s > 0.0;
    let mut series = c.per_policy(|p| c.fleet(p), |r| has(r).then_some(r.dep_latency_p95_ms), false);
    series.extend(c.per_policy(|p| c.fleet(p), |r| has(r).then_some(r.dep_latency_p50_ms), true));
    let mut hlines: Vec<HLine> =
        c.s.setup
            .classes
            .iter()
            .map(|k| HLine {
                y: k.deadline_ms,
                label: format!("{} deadline {}", k.name, style::fmt_ms(k.deadline_ms)),
                color: REFERENCE,
            })
            .collect();
    // The panel's lines are the dependency's p95 and p50, the run-level metrics' per window.
    hlines.extend(c.targets(None, "dependency_p95_ms", Unit::Ms));
    hlines.extend(c.targets(None, "dependency_p50_ms", Unit::Ms));
    let panel = LinePanel {
        title: "Dependency service time (per call, without its queue wait or the network hop)".into(),
        y_label: "service time".into(),
        unit: Unit::Ms,
        series,
        hlines,
    };
    c.chart(
        "latency",
        format!("{}: dependency service time", c.s.scenario),
        "solid = p95, dashed = p50 per window; grey dashed lines = class deadlines",
        Kind::Lines(c.lines(vec![panel])),
        1,
    )
}

fn goodput(c: &Ctx, class: &str) -> Chart {
    let mut good = c.per_policy(|p| c.class(p, class), |r| Some(r.goodput_per_s), false);
    let window = c.s.setup.window_s.max(1e-9);
    // Every policy sees the same arrivals (common random numbers), so one offered line serves.
    let offered = segments(&c.class(0, class), |r| c.x(r), |r| Some(r.offered as f64 / window));
    // Drawn first so the policies' lines stay on top of it.
    good.insert(
        0,
        Series {
            color: RGBColor(150, 150, 150),
            dashed: true,
            segments: offered,
            band: Vec::new(),
            dots: false,
            best: Vec::new(),
        },
    );
    let mut panels = vec![LinePanel {
        title: format!("Goodput of {class} (answered within the deadline)"),
        y_label: "requests per second".into(),
        unit: Unit::PerS,
        series: good,
        hlines: c.targets(Some(class), "goodput_per_s", Unit::PerS),
    }];
    // A class without a fallback has no fallback panel: it would say nothing.
    let fallback = says_something(c.s, "fallback_ratio", class);
    if fallback {
        panels.push(LinePanel {
            title: format!("Fallbacks served to {class} (answers from the cache)"),
            y_label: "fallbacks per second".into(),
            unit: Unit::PerS,
            series: c.per_policy(|p| c.class(p, class), |r| Some(r.fallback_per_s), false),
            hlines: Vec::new(),
        });
    }
    let n = panels.len();
    let mut chart = c.chart(
        &format!("goodput_{}", slug(class)),
        if fallback {
            format!("{}: goodput and fallbacks, class {class}", c.s.scenario)
        } else {
            format!("{}: goodput, class {class}", c.s.scenario)
        },
        "per window; grey dashed line = offered load",
        Kind::Lines(c.lines(panels)),
        n,
    );
    chart.legend.push(LegendEntry { label: "offered".into(), color: RGBColor(150, 150, 150), mark: Mark::Dashed });
    chart
}

fn resources(c: &Ctx) -> Chart {
    let setup = &c.s.setup;
    let panel = |title: &str, y: fn(&WindowRow) -> f64, cap: u32, what: &str| LinePanel {
        title: title.into(),
        y_label: format!("{what} in use per instance"),
        unit: Unit::Plain,
        series: c.per_policy(|p| c.fleet(p), |r| Some(y(r)), false),
        hlines: vec![HLine { y: cap as f64, label: format!("limit {cap} {what}"), color: REFERENCE }],
    };
    let panels = vec![
        panel("Worker slots in use", |r| r.workers_busy, setup.worker_slots, "slots"),
        panel("Pool connections in use", |r| r.pool_busy, setup.pool_connections, "connections"),
    ];
    c.chart(
        "resources",
        format!("{}: caller resources", c.s.scenario),
        "time-weighted mean per window and instance; grey dashed lines = capacity",
        Kind::Lines(c.lines(panels)),
        2,
    )
}

fn breaker(c: &Ctx) -> Option<Chart> {
    let window = c.s.setup.window_s / c.per_unit;
    let rows: Vec<BandRow> = (0..c.policies.len())
        .filter(|&p| c.s.runs[p].breaker.is_some())
        .map(|p| BandRow {
            label: c.policies[p].clone(),
            color: c.colors.of(&c.policies[p]),
            cells: c
                .fleet(p)
                .iter()
                .map(|r| {
                    let x0 = r.t_s / c.per_unit;
                    (x0, x0 + window, r.breaker_open, r.breaker_half_open)
                })
                .collect(),
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let n = rows.len() as u32;
    let legend = vec![
        state_entry("closed", style::CLOSED),
        state_entry("half-open", style::HALF_OPEN),
        state_entry("open", style::OPEN),
    ];
    Some(Chart {
        stem: "breaker".into(),
        title: format!("{}: breaker state", c.s.scenario),
        note: "share of instance-time per window in each state, one band per policy with a breaker".into(),
        width: WIDTH,
        height: header_h(&legend) + 42 + 110 * n,
        legend,
        kind: Kind::Bands(BandRows {
            x_label: c.x_label(),
            x_range: (0.0, c.s.setup.horizon_s.max(1e-9) / c.per_unit),
            rows,
        }),
    })
}

fn state_entry(label: &str, color: RGBColor) -> LegendEntry {
    LegendEntry { label: label.into(), color, mark: Mark::Box }
}

fn limit(c: &Ctx) -> Option<Chart> {
    // A limit that never moved (a fixed limiter) is a flat line the setup already states.
    let moved = |p: usize| c.s.runs[p].limit.as_ref().is_some_and(|l| l.min < l.max);
    let limited: Vec<usize> = (0..c.policies.len()).filter(|&p| moved(p)).collect();
    if limited.is_empty() {
        return None;
    }
    let series = c
        .per_policy(|p| c.fleet(p), |r| (r.limit > 0.0).then_some(r.limit), false)
        .into_iter()
        .enumerate()
        .filter(|(p, _)| limited.contains(p))
        .map(|(_, s)| s)
        .collect();
    let panel = LinePanel {
        title: "Concurrency limit (mean over instances at each window's end)".into(),
        y_label: "limit (permits)".into(),
        unit: Unit::Plain,
        series,
        hlines: Vec::new(),
    };
    let mut chart = c.chart(
        "limit",
        format!("{}: limit over time", c.s.scenario),
        "policies with a limiter only",
        Kind::Lines(c.lines(vec![panel])),
        1,
    );
    // Keep each policy's colour, but list only the policies drawn.
    chart.legend = limited.iter().map(|&p| chart.legend[p].clone()).collect();
    Some(chart)
}

fn staleness(c: &Ctx) -> Option<Chart> {
    let panels: Vec<LinePanel> =
        c.s.setup
            .classes
            .iter()
            .filter(|k| says_something(c.s, "staleness_p95_ms", &k.name))
            .map(|k| LinePanel {
                title: format!("Staleness p95 of fallbacks served to {}", k.name),
                y_label: "age of the cached value".into(),
                unit: Unit::Ms,
                series: c.per_policy(
                    |p| c.class(p, &k.name),
                    // No fallback in the window means no staleness to show, not zero.
                    |r| (r.fallback > 0).then_some(r.staleness_p95_ms),
                    false,
                ),
                hlines: c.targets(Some(&k.name), "staleness_p95_ms", Unit::Ms),
            })
            .collect();
    if panels.is_empty() {
        return None;
    }
    let n = panels.len();
    Some(c.chart(
        "staleness",
        format!("{}: staleness of served fallbacks", c.s.scenario),
        "p95 age per window; gaps = no fallback served",
        Kind::Lines(c.lines(panels)),
        n,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t_s: f64, y: f64) -> WindowRow {
        let mut r: WindowRow = serde_json::from_value(serde_json::json!({
            "policy": "p", "t_s": t_s, "class": "c", "offered": 0, "ok": 0, "error": 0,
            "timeout": 0, "rejected": 0, "short_circuited": 0, "fallback": 0,
            "goodput_per_s": 0.0, "fallback_per_s": 0.0, "latency_p50_ms": 0.0,
            "latency_p95_ms": 0.0, "staleness_p95_ms": 0.0, "stale_wrong": 0,
            "dep_calls_per_s": 0.0, "dep_in_flight": 0.0, "dep_latency_p50_ms": 0.0,
            "dep_latency_p95_ms": 0.0, "workers_busy": 0.0, "pool_busy": 0.0,
            "breaker_open": 0.0, "breaker_half_open": 0.0, "limit": 0.0
        }))
        .unwrap();
        r.goodput_per_s = y;
        r
    }

    #[test]
    fn segments_break_where_values_are_missing_or_not_finite() {
        // -1 stands for "missing" (y gives None); NaN arrives as Some(NaN).
        let rows = [row(0.0, 1.0), row(1.0, -1.0), row(2.0, 3.0), row(3.0, 4.0), row(4.0, f64::NAN), row(5.0, 6.0)];
        let refs: Vec<&WindowRow> = rows.iter().collect();
        let segs = segments(&refs, |r| r.t_s, |r| (r.goodput_per_s != -1.0).then_some(r.goodput_per_s));
        assert_eq!(segs, vec![vec![(0.0, 1.0)], vec![(2.0, 3.0), (3.0, 4.0)], vec![(5.0, 6.0)]]);
    }
}
