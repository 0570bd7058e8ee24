//! The load chart of one class (issue 34): what came in, what came back in time, and what
//! was left waiting, over time, with the phases shaded and each policy set's recovery after
//! each phase marked, so a backlog that outlives its trigger reads off one picture.

use super::*;
use crate::charts::VMark;
use crate::metrics::summary::{PhaseSummary, RecoverySummary};

/// The grey of the offered-load line (as on the goodput charts).
const OFFERED: RGBColor = RGBColor(150, 150, 150);

/// `load_<class>`: offered load and goodput, the class's requests in flight and the
/// dependency's unanswered calls at each window's end; a run without phases has no recovery
/// to mark and no load chart (its goodput chart carries the first panel).
pub(super) fn load(c: &Ctx, class: &str) -> Chart {
    let window = c.s.setup.window_s.max(1e-9);
    let mut rates = c.per_policy(|p| c.class(p, class), |r| Some(r.goodput_per_s), false);
    // Every policy sees the same arrivals (common random numbers): one offered line serves.
    let offered = segments(&c.class(0, class), |r| c.x(r), |r| Some(r.offered as f64 / window));
    rates.insert(
        0,
        Series { color: OFFERED, dashed: true, segments: offered, band: Vec::new(), dots: false, best: Vec::new() },
    );
    let panels = vec![
        LinePanel {
            title: format!("Offered load and goodput of {class} (answered within the deadline)"),
            y_label: "requests per second".into(),
            unit: Unit::PerS,
            series: rates,
            hlines: Vec::new(),
        },
        LinePanel {
            title: format!("Backlog of {class}: requests arrived and not yet finished at each window's end"),
            y_label: "requests in flight".into(),
            unit: Unit::Plain,
            series: c.per_policy(|p| c.class(p, class), |r| Some(r.in_flight_end_count), false),
            hlines: Vec::new(),
        },
        LinePanel {
            title: "Dependency calls not yet answered at each window's end (fleet-wide, abandoned ones included)"
                .into(),
            y_label: "calls at the dependency".into(),
            unit: Unit::Plain,
            series: c.per_policy(|p| c.fleet(p), |r| Some(r.dep_in_flight_end_count), false),
            hlines: Vec::new(),
        },
    ];
    let mut lines = c.lines(panels);
    lines.marks = recovery_marks(c, class);
    let mut chart = c.chart(
        &format!("load_{}", slug(class)),
        format!("{}: offered load, goodput and backlog, class {class}", c.s.scenario),
        "per window; grey dashed line = offered load; shaded = phases; a policy's dashed vertical line = its \
         recovery (the phase's end + recovery_s)",
        Kind::Lines(lines),
        3,
    );
    chart.legend.push(LegendEntry { label: "offered".into(), color: OFFERED, mark: Mark::Dashed });
    chart
}

/// One mark per policy set and phase with a recovery verdict for `class`: a line at the
/// phase's end plus `recovery_s` when it recovered, a label at the phase's end when it did
/// not; nothing without a verdict (no level before the phase, no judged window after it).
fn recovery_marks(c: &Ctx, class: &str) -> Vec<VMark> {
    let shown = brownout_core::report::recovery::phases(c.s);
    let named = shown.len() > 1;
    let mut out = Vec::new();
    for phase in shown {
        for (p, policy) in c.policies.iter().enumerate() {
            let Some(r) = recovery_of(phase, p, class) else { continue };
            let after = if named { format!(" after {}", phase.name) } else { String::new() };
            let color = c.colors.of(policy);
            match r.recovered {
                Some(true) => out.push(VMark {
                    x: (phase.end_s + r.recovery_s) / c.per_unit,
                    line: true,
                    label: format!("{policy}: recovered{after} in {} s", style::fmt_num(r.recovery_s)),
                    color,
                }),
                Some(false) => out.push(VMark {
                    x: phase.end_s / c.per_unit,
                    line: false,
                    label: format!(
                        "{policy}: did not recover{after} (in time {} at the horizon, {} before)",
                        ratio(r.end_in_time_ratio),
                        ratio(r.before_in_time_ratio)
                    ),
                    color,
                }),
                None => {}
            }
        }
    }
    out
}

/// The recovery verdict of `class` under policy set `p` after `phase`.
fn recovery_of(phase: &PhaseSummary, p: usize, class: &str) -> Option<RecoverySummary> {
    phase.runs.get(p)?.classes.iter().find(|k| k.class == class)?.recovery
}

/// An in-time ratio as a percentage, "–" for no value.
fn ratio(v: f64) -> String {
    if v.is_finite() { Unit::Fraction.fmt(v) } else { "–".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recovery(recovered: Option<bool>, recovery_s: f64) -> RecoverySummary {
        RecoverySummary { before_in_time_ratio: 0.99, recovered, recovery_s, end_in_time_ratio: 0.5 }
    }

    /// A saved summary (its policy sets and classes; the figures do not matter) with one
    /// phase from 60 s to 70 s whose verdicts for the first class cycle through recovered in
    /// 12 s, not recovered, and no verdict.
    fn summary() -> ScenarioSummary {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/golden/grocery-overload/summary.json");
        let mut s: ScenarioSummary = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let class = s.setup.classes[0].name.clone();
        let mut phase = PhaseSummary {
            name: "incident".into(),
            start_s: 60.0,
            end_s: 70.0,
            source: "scenario".into(),
            runs: s.runs.clone(),
            replications: None,
        };
        let verdicts = [recovery(Some(true), 12.0), recovery(Some(false), f64::NAN), recovery(None, f64::NAN)];
        for (run, v) in phase.runs.iter_mut().zip(verdicts.iter().cycle()) {
            run.classes.iter_mut().find(|k| k.class == class).unwrap().recovery = Some(*v);
        }
        s.phases = vec![phase];
        s
    }

    #[test]
    fn a_recovery_is_a_line_at_the_phase_end_plus_recovery_s_and_no_recovery_a_label() {
        let s = summary();
        let rows: Vec<WindowRow> = Vec::new();
        let c = Ctx::new(&s, &rows);
        let class = s.setup.classes[0].name.clone();
        let marks = recovery_marks(&c, &class);
        // Policies in order cycle through recovered (70 + 12 = 82 s), not recovered (a label
        // at 70 s) and no verdict (nothing).
        let n = s.runs.len();
        assert_eq!(marks.len(), n - n / 3);
        for (k, m) in marks.iter().enumerate() {
            let p = k + k / 2;
            let policy = &s.runs[p].policy;
            if p % 3 == 0 {
                assert!(m.line && m.x == 82.0 / c.per_unit, "{m:?}");
                assert_eq!(m.label, format!("{policy}: recovered in 12 s"));
            } else {
                assert!(!m.line && m.x == 70.0 / c.per_unit, "{m:?}");
                assert_eq!(m.label, format!("{policy}: did not recover (in time 50% at the horizon, 99% before)"));
            }
        }
    }
}
