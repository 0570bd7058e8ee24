//! Per-class comparison bar charts: one bar per policy for each headline metric.

use super::style::{PolicyColors, Unit};
use super::{Bar, BarPanel, BarPanels, Chart, Kind, policy_legend, slug};
use crate::metrics::summary::{ClassSummary, ScenarioSummary};

/// A headline metric: caption, unit and how to read it from a class summary.
struct Metric {
    title: &'static str,
    unit: Unit,
    get: fn(&ClassSummary) -> f64,
}

const METRICS: [Metric; 5] = [
    Metric { title: "Goodput (higher is better)", unit: Unit::PerS, get: |c| c.goodput_per_s },
    Metric { title: "Latency p95 (lower is better)", unit: Unit::Ms, get: |c| c.latency_ms.p95 },
    Metric { title: "Served from the cache", unit: Unit::Fraction, get: |c| c.fallback_ratio },
    Metric { title: "Staleness p95 of fallbacks", unit: Unit::Ms, get: |c| c.staleness_ms.p95 },
    Metric { title: "Business cost (lower is better)", unit: Unit::Plain, get: |c| c.business_cost },
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
            let panels = METRICS
                .iter()
                .map(|m| BarPanel { title: m.title.into(), unit: m.unit, bars: bars(s, &k.name, m, &colors) })
                .collect();
            let rows = METRICS.len().div_ceil(2) as u32;
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
