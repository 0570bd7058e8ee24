//! The scenario's SLOs applied to a run's summaries (the arithmetic is `metrics::slo`).

use crate::engine::{SECOND, Time};
use crate::metrics::slo::{AlertRule, figures};
use crate::metrics::summary::{RunSummary, SloSetup};
use crate::scenario::{Class, Scenario, Slo};

/// A class's SLO as the summary's setup states it.
pub fn setup(c: &Class) -> Option<SloSetup> {
    c.slo.as_ref().map(|s| SloSetup {
        target: s.target,
        window_s: s.window.ns() as f64 / SECOND as f64,
        alerts: rules(s),
    })
}

/// Its alert rules in seconds.
pub fn rules(s: &Slo) -> Vec<AlertRule> {
    let secs = |t: Time| t as f64 / SECOND as f64;
    s.alerts
        .iter()
        .map(|a| AlertRule {
            name: a.name.clone(),
            burn: a.burn,
            long_s: secs(a.long.ns()),
            short_s: secs(a.short.ns()),
        })
        .collect()
}

/// Fill in the SLO figures of every class with an SLO, in the run's summary and each phase's
/// (phases in the order of `scenario::phases_of`). A period's span is what its recorder
/// measured: from warm-up (a phase: its start) to the horizon (its end), as `Recorder::summary`.
pub fn annotate(s: &Scenario, horizon: Time, run: &mut RunSummary, phases: &mut [RunSummary]) {
    if s.classes.iter().all(|c| c.slo.is_none()) {
        return;
    }
    let span = |from: Time, to: Time| (to.max(from + 1) - from) as f64 / SECOND as f64;
    let spans = crate::scenario::phases_of(s);
    let periods = std::iter::once((run, span(s.warmup.ns(), horizon)))
        .chain(phases.iter_mut().zip(&spans).map(|(r, p)| (r, span(p.start, p.end.min(horizon)))));
    for (summary, secs) in periods {
        for (c, class) in summary.classes.iter_mut().zip(&s.classes) {
            if let Some(slo) = setup(class) {
                c.slo = Some(figures(c, slo.target, slo.window_s, secs));
            }
        }
    }
}
