//! Per-class comparison bar charts, one bar per policy set in each panel: first the headline
//! the table and the recommendation use (in time over the whole run, then during the incident
//! phase, `ScenarioSummary::key_phase`), then goodput, latency, fallbacks, staleness and cost,
//! then one panel per constraint on the class.

use super::style::{PolicyColors, Unit};
use super::{Bar, BarPanel, BarPanels, Chart, Kind, policy_legend, slug};
use crate::metrics::summary::{ClassSummary, RunSummary, ScenarioSummary};
use crate::report::table::says_something;
use brownout_core::decide::ObjectiveRef;

/// A headline metric: caption, unit and how to read it from a class summary.
struct Metric {
    /// The catalogue name (what decides whether the panel says anything for a class).
    name: &'static str,
    title: &'static str,
    unit: Unit,
    get: fn(&ClassSummary) -> f64,
}

const METRICS: [Metric; 5] = [
    Metric { name: "goodput_per_s", title: "Goodput (higher is better)", unit: Unit::PerS, get: |c| c.goodput_per_s },
    Metric { name: "p95_ms", title: "Latency p95 (lower is better)", unit: Unit::Ms, get: |c| c.latency_ms.p95 },
    Metric { name: "fallback_ratio", title: "Served from the cache", unit: Unit::Fraction, get: |c| c.fallback_ratio },
    Metric {
        name: "staleness_p95_ms",
        title: "Staleness p95 of fallbacks",
        unit: Unit::Ms,
        get: |c| c.staleness_ms.p95,
    },
    Metric {
        name: "business_cost",
        title: "Business cost (lower is better)",
        unit: Unit::Plain,
        get: |c| c.business_cost,
    },
];

/// One comparison chart per class, in setup order.
pub fn charts(s: &ScenarioSummary) -> Vec<Chart> {
    let policies: Vec<String> = s.runs.iter().map(|r| r.policy.clone()).collect();
    if policies.is_empty() {
        return Vec::new();
    }
    let colors = PolicyColors::new(&policies);
    s.setup
        .classes
        .iter()
        .map(|k| {
            let mut panels = headline(s, &k.name, &colors);
            panels.extend(METRICS.iter().filter(|m| says_something(s, m.name, &k.name)).map(|m| BarPanel {
                title: m.title.into(),
                unit: m.unit,
                bars: bars(s, &k.name, m, &colors),
                targets: Vec::new(),
            }));
            panels.extend(constraint_panels(s, &k.name, &colors));
            let rows = panels.len().div_ceil(2) as u32;
            Chart {
                stem: format!("compare_{}", slug(&k.name)),
                title: format!("{}: policies compared, class {}", s.scenario, k.name),
                note: format!(
                    "measured after warm-up over {} s; deadline {} ms",
                    super::style::fmt_num(s.measured_s),
                    super::style::fmt_num(k.deadline_ms)
                ),
                width: 1100,
                height: 100 + rows * (70 + 30 * policies.len() as u32),
                legend: policy_legend(&policies, &colors),
                kind: Kind::Bars(BarPanels { columns: 2, panels }),
            }
        })
        .collect()
}

/// The table's headline for `class`: its in-time ratio over the whole run, then during the
/// incident phase when the scenario has one.
fn headline(s: &ScenarioSummary, class: &str, colors: &PolicyColors) -> Vec<BarPanel> {
    let in_time = |runs: &[RunSummary]| -> Vec<Bar> {
        runs.iter()
            .filter_map(|r| {
                let c = r.classes.iter().find(|c| c.class == class)?;
                Some(Bar {
                    label: r.policy.clone(),
                    color: colors.of(&r.policy),
                    value: c.in_time_ratio,
                    ci: None,
                    note: String::new(),
                })
            })
            .collect()
    };
    let panel = |title: String, runs: &[RunSummary]| BarPanel {
        title,
        unit: Unit::Fraction,
        bars: in_time(runs),
        targets: Vec::new(),
    };
    let mut out = vec![panel("In time, whole run (higher is better)".into(), &s.runs)];
    if let Some(p) = s.key_phase() {
        out.push(panel(format!("In time during {} (higher is better)", p.name), &p.runs));
    }
    out
}

/// One bar per policy that ran this class, in the policy's colour.
fn bars(s: &ScenarioSummary, class: &str, m: &Metric, colors: &PolicyColors) -> Vec<Bar> {
    s.runs
        .iter()
        .filter_map(|r| {
            let c = r.classes.iter().find(|c| c.class == class)?;
            Some(Bar {
                label: r.policy.clone(),
                color: colors.of(&r.policy),
                value: (m.get)(c),
                ci: None,
                note: String::new(),
            })
        })
        .collect()
}

/// One panel per constraint of the scenario's `decide` section on `class`: every policy set's
/// figure of the constrained metric (over its phase) with the target as a dashed line.
fn constraint_panels(s: &ScenarioSummary, class: &str, colors: &PolicyColors) -> Vec<BarPanel> {
    let Some(d) = &s.decision else { return Vec::new() };
    d.constraints
        .iter()
        .filter_map(|c| {
            let Ok(ObjectiveRef::Metric(m)) = ObjectiveRef::parse(&c.metric) else { return None };
            if m.class != Some(class) {
                return None;
            }
            let unit = super::sweep::unit_of(&c.metric);
            let bars = s
                .runs
                .iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let phase = |name: &str| s.phases.iter().find(|p| p.name == name).and_then(|p| p.runs.get(i));
                    Some(Bar {
                        label: r.policy.clone(),
                        color: colors.of(&r.policy),
                        value: m.read(r, &phase)?,
                        ci: None,
                        note: String::new(),
                    })
                })
                .collect();
            let during = m.phase.map(|p| format!(" during {p}")).unwrap_or_default();
            Some(BarPanel {
                title: format!("{}{during} (constraint)", m.metric.name),
                unit,
                bars,
                targets: super::sweep::targets_of(std::slice::from_ref(c), &c.metric, unit),
            })
        })
        .collect()
}
