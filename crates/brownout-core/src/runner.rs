//! Runs every policy set of a scenario on the same traffic, in parallel across policy sets,
//! and gathers the results in scenario order (so output never depends on thread count).

use std::fmt;

use rayon::prelude::*;

use crate::engine::Time;
use crate::engine::ms_f64;
use crate::metrics::WindowRow;
use crate::metrics::summary::{ClassInfo, ScenarioSummary, Setup};
use crate::model::{Model, RunError, RunOptions, RunResult, run_policy, run_policy_observed};

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
    /// The first events, when traced.
    pub trace: Vec<(crate::engine::Time, u64)>,
    /// The layers' state changes, when kept (`RunOptions::events`).
    pub log: crate::metrics::events::EventLog,
}

/// A policy run that a guard stopped: which policy set, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyRunError {
    /// The policy set's name.
    pub policy: String,
    /// Why it stopped.
    pub error: RunError,
}

impl fmt::Display for PolicyRunError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "policy \"{}\": {}", self.policy, self.error)
    }
}

impl std::error::Error for PolicyRunError {}

/// Run all policy sets. `parallel` spreads them over rayon's pool. Every run finishes;
/// the error is that of the first stopped run in scenario order.
pub fn run_all(model: &Model, opts: RunOptions, parallel: bool) -> Result<ScenarioResult, PolicyRunError> {
    let s = model.scenario();
    let n = s.policies.len();
    let runs: Vec<Result<RunResult, RunError>> = if parallel {
        (0..n).into_par_iter().map(|p| run_policy(model, p, opts)).collect()
    } else {
        (0..n).map(|p| run_policy(model, p, opts)).collect()
    };
    assemble(model, runs)
}

/// As [`run_all`], telling `observer` (policy set index, simulated time) at every window tick
/// of every run, from the thread running it: for a progress display.
pub fn run_all_observed(
    model: &Model,
    opts: RunOptions,
    parallel: bool,
    observer: &(dyn Fn(usize, Time) + Sync),
) -> Result<ScenarioResult, PolicyRunError> {
    let n = model.scenario().policies.len();
    let one = |p: usize| run_policy_observed(model, p, opts, &|t| observer(p, t));
    let runs: Vec<Result<RunResult, RunError>> =
        if parallel { (0..n).into_par_iter().map(one).collect() } else { (0..n).map(one).collect() };
    assemble(model, runs)
}

/// Gather the runs' results in scenario order; the error is that of the first stopped run.
fn assemble(model: &Model, runs: Vec<Result<RunResult, RunError>>) -> Result<ScenarioResult, PolicyRunError> {
    let s = model.scenario();
    let n = runs.len();
    let results = runs
        .into_iter()
        .enumerate()
        .map(|(p, r)| r.map_err(|error| PolicyRunError { policy: s.policies[p].name.clone(), error }))
        .collect::<Result<Vec<_>, _>>()?;
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
            trace: r.trace,
            log: r.log,
        });
        rows.extend(r.rows);
        summaries.push(r.summary);
    }
    Ok(ScenarioResult {
        summary: ScenarioSummary {
            scenario: s.name.clone(),
            seed: model.seed(),
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
    })
}
