//! The reports' "Recovery and backlog" section (issue 34, docs/metastable.md): per phase and
//! class, whether each policy set came back after the phase and how fast, against the level
//! before it, and how long it spent degraded; then, when anything still waits at the horizon,
//! the work left per policy set layer by layer, so "did not recover" and "the queue never
//! drained" are read as words and figures, not as a blank cell.

use super::escape;
use super::slo::percent;
use crate::metrics::summary::{Backlog, PhaseSummary, ScenarioSummary};

/// The phases whose recovery the reports and the load chart show: the phase that matters
/// most (`ScenarioSummary::key_phase`, the one the reports show beside the whole run) when
/// there is one, else every phase; a scenario with many phases and policy sets would
/// otherwise list every pair (summary.json and summary.csv keep them all).
pub fn phases(s: &ScenarioSummary) -> Vec<&PhaseSummary> {
    match s.key_phase() {
        Some(p) => vec![p],
        None => s.phases.iter().collect(),
    }
}

/// The section as Markdown (a heading per table); empty when no phase has a recovery verdict
/// and nothing is queued at the horizon in any set.
pub fn markdown(s: &ScenarioSummary) -> String {
    let mut out = recovery(s);
    if s.runs.iter().any(|r| r.backlog_at_end.queued > 0) {
        out.push_str(&backlog(s));
    }
    out
}

/// One row per shown phase, class and policy set with a recovery verdict.
fn recovery(s: &ScenarioSummary) -> String {
    let mut rows = String::new();
    for phase in phases(s) {
        for run in &phase.runs {
            for c in &run.classes {
                let Some(r) = c.recovery else { continue };
                let (back, after) = match r.recovered {
                    Some(true) => ("yes", super::slo::span(r.recovery_s)),
                    Some(false) => ("**no**", "–".to_string()),
                    None => continue,
                };
                rows.push_str(&format!(
                    "| {} | {} | {} | {back} | {after} | {} | {} | {} | {} |\n",
                    escape::md(&phase.name),
                    escape::md(&c.class),
                    escape::md(&run.policy),
                    percent(r.before_in_time_ratio),
                    percent(r.end_in_time_ratio),
                    percent(c.degraded_fraction),
                    c.degraded_entries,
                ));
            }
        }
    }
    if rows.is_empty() {
        return rows;
    }
    format!(
        "\n### Recovery after each phase\n\nRecovered: `hold` consecutive windows after the phase's end with an in-time \
         ratio within `tolerance` of the level before it; recovery time from the phase's end to the first of them \
         (docs/metastable.md). Time degraded and entries count the phase's windows below `degraded_below`. Shown for \
         the incident phase (the first whose name holds brownout, incident, outage or degraded) when there is one, \
         else for every phase; summary.json has every phase.\n\n\
         | phase | class | policy | recovered | recovery time | in time before | in time at the horizon | time degraded | \
         entries |\n|---|---|---|---|---|---|---|---|---|\n{rows}"
    )
}

/// The work left at the horizon per policy set, one column per layer.
fn backlog(s: &ScenarioSummary) -> String {
    let mut out = String::from(
        "\n### Backlog at the horizon\n\nRequests and calls still waiting or held when the run ended (fleet-wide \
         counts; `backlog_at_end` in summary.json).\n\n\
         | policy | requests in flight | waiting for a worker | holding a worker | in layer queues | of which \
         limiters | waiting for a connection | connections in use | in backoff | dependency queue | out at the \
         dependency |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for run in &s.runs {
        let Backlog {
            worker_queue,
            workers_busy,
            layer_queue,
            limiter_queue,
            pool_queue,
            pool_busy,
            backoff,
            dependency_queue,
            dependency_out,
            queued: _,
        } = run.backlog_at_end;
        out.push_str(&format!(
            "| {} | {} | {worker_queue} | {workers_busy} | {layer_queue} | {limiter_queue} | {pool_queue} | \
             {pool_busy} | {backoff} | {dependency_queue} | {dependency_out} |\n",
            escape::md(&run.policy),
            run.in_flight_at_end,
        ));
    }
    out
}
