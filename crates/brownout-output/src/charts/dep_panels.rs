//! Per-dependency panels (`charts/dependencies.png`, issue 33): for each dependency, its time
//! per attempt (queue wait plus service, p50 and p95) under each policy set, over the whole
//! run and during the incident phase when the scenario has one, and its pool's saturation.
//! Only for a run with several dependencies.

use super::style::{PolicyColors, Unit};
use super::{Bar, BarPanel, BarPanels, Chart, Kind, policy_legend};
use crate::metrics::summary::{DependencyFigures, RunSummary, ScenarioSummary};

/// One figure of a dependency a panel shows.
struct Figure {
    title: &'static str,
    unit: Unit,
    get: fn(&DependencyFigures) -> f64,
}

const FIGURES: [Figure; 3] = [
    Figure { title: "p50 ms per attempt", unit: Unit::Ms, get: |d| d.total_ms.p50 },
    Figure { title: "p95 ms per attempt", unit: Unit::Ms, get: |d| d.total_ms.p95 },
    Figure { title: "pool saturated", unit: Unit::Fraction, get: |d| d.pool_saturated_fraction },
];

/// The chart, or none when no run has several dependencies.
pub(crate) fn charts(s: &ScenarioSummary) -> Vec<Chart> {
    let Some(first) = s.runs.iter().find(|r| r.dependencies.len() >= 2) else { return Vec::new() };
    let policies: Vec<String> = s.runs.iter().map(|r| r.policy.clone()).collect();
    let colors = PolicyColors::new(&policies);
    let names: Vec<String> = first.dependencies.iter().map(|d| d.name.clone()).collect();
    let incident = s.key_phase().filter(|p| p.runs.len() == s.runs.len());
    let mut panels = Vec::new();
    for name in &names {
        for f in &FIGURES {
            panels.push(panel(format!("{name}: {}, whole run", f.title), &s.runs, name, f, &colors));
            if let Some(p) = incident {
                panels.push(panel(format!("{name}: {}, during {}", f.title, p.name), &p.runs, name, f, &colors));
            }
        }
    }
    let columns = if incident.is_some() { 2 } else { 3 };
    let rows = panels.len().div_ceil(columns) as u32;
    vec![Chart {
        stem: "dependencies".into(),
        title: format!("{}: per dependency", s.scenario),
        note: "time per attempt at each dependency (queue wait plus service) and the share of instance-time its \
               connection pool had every connection out"
            .into(),
        width: 1100,
        height: 100 + rows * (70 + 30 * policies.len() as u32),
        legend: policy_legend(&policies, &colors),
        kind: Kind::Bars(BarPanels { columns, panels }),
    }]
}

/// One panel: each policy set's figure `f` of dependency `name` in `runs`.
fn panel(title: String, runs: &[RunSummary], name: &str, f: &Figure, colors: &PolicyColors) -> BarPanel {
    let bars = runs
        .iter()
        .filter_map(|r| {
            let d = r.dependencies.iter().find(|d| d.name == name)?;
            Some(Bar {
                label: r.policy.clone(),
                color: colors.of(&r.policy),
                value: (f.get)(d),
                ci: None,
                note: String::new(),
            })
        })
        .collect();
    BarPanel { title, unit: f.unit, bars, targets: Vec::new() }
}
