//! Runs every policy set of a scenario on the same traffic, in parallel across policy sets,
//! and gathers the results in scenario order (so output never depends on thread count).

use rayon::prelude::*;

use crate::engine::ms_f64;
use crate::metrics::WindowRow;
use crate::metrics::summary::{ClassInfo, ScenarioSummary, Setup};
use crate::model::{Model, RunOptions, RunResult, run_policy};

/// Everything one `brownout run` produces.
#[derive(Debug, Clone)]
pub struct ScenarioResult {
    /// Summary of every policy run.
    pub summary: ScenarioSummary,
    /// Time-series rows of every policy run, policy by policy.
    pub rows: Vec<WindowRow>,
    /// Per-policy results (trace hashes, event counts).
    pub runs: Vec<RunMeta>,
}

/// Facts about one policy run that stay out of `summary.json`.
#[derive(Debug, Clone)]
pub struct RunMeta {
    /// Policy label.
    pub policy: String,
    /// Hash of the event trace.
    pub trace_hash: u64,
    /// Events processed.
    pub events: u64,
    /// Requests that arrived.
    pub requests: u64,
    /// A guard stopped the run.
    pub aborted: Option<String>,
    /// The first events, when traced.
    pub trace: Vec<(crate::engine::Time, u64)>,
}

/// Run all policy sets. `parallel` spreads them over rayon's pool.
pub fn run_all(model: &Model, opts: RunOptions, parallel: bool) -> ScenarioResult {
    let n = model.scenario.policies.len();
    let results: Vec<RunResult> = if parallel {
        (0..n).into_par_iter().map(|p| run_policy(model, p, opts)).collect()
    } else {
        (0..n).map(|p| run_policy(model, p, opts)).collect()
    };
    let s = &model.scenario;
    let measured_s = (s.horizon.ns() - s.warmup.ns()) as f64 / 1e9;
    let mut rows = Vec::new();
    let mut runs = Vec::with_capacity(n);
    let mut summaries = Vec::with_capacity(n);
    for r in results {
        runs.push(RunMeta {
            policy: r.summary.policy.clone(),
            trace_hash: r.trace_hash,
            events: r.summary.events,
            requests: r.requests,
            aborted: r.aborted,
            trace: r.trace,
        });
        rows.extend(r.rows);
        summaries.push(r.summary);
    }
    ScenarioResult {
        summary: ScenarioSummary {
            scenario: s.name.clone(),
            seed: model.seed,
            measured_s,
            setup: Setup {
                instances: s.fleet.instances,
                worker_slots: s.fleet.workers.slots,
                pool_connections: s.fleet.pool.max_connections,
                window_s: ms_f64(s.window.ns()) / 1000.0,
                warmup_s: ms_f64(s.warmup.ns()) / 1000.0,
                horizon_s: ms_f64(s.horizon.ns()) / 1000.0,
                classes: s
                    .classes
                    .iter()
                    .map(|c| ClassInfo {
                        name: c.name.clone(),
                        deadline_ms: ms_f64(c.deadline.ns()),
                        calls_dependency: c.calls_dependency,
                    })
                    .collect(),
            },
            runs: summaries,
        },
        rows,
        runs,
    }
}
