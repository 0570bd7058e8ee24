//! Runs every policy set of a scenario on the same traffic, in parallel across policy sets,
//! and gathers the results in scenario order (so output never depends on thread count).

use std::fmt;

use rayon::prelude::*;

use crate::engine::{Time, counter_u64, label_hash, ms_f64};
use crate::metrics::summary::{ClassInfo, PhaseSummary, Replications, RunSummary, ScenarioSummary, Setup};
use crate::metrics::{RowSink, WindowRow};
use crate::model::{Model, RunError, RunOptions, RunResult, run_policy, run_policy_observed, run_policy_streamed};
use crate::report::replicate;
use crate::scenario::{Fallback, FallbackAnswer};

/// Everything one `brownout run` produces.
#[derive(Debug, Clone)]
pub struct ScenarioResult {
    /// Summary of every policy run (replication 0's) and, with replications, their statistics.
    pub summary: ScenarioSummary,
    /// Time-series rows of every policy run of replication 0, policy by policy (empty when
    /// they went to sinks: [`run_all_streamed`]).
    pub rows: Vec<WindowRow>,
    /// Per-run results (trace hashes, event counts): replication 0's policy sets in scenario
    /// order, then replication 1's, and so on.
    pub runs: Vec<RunMeta>,
}

/// Facts about one policy run that stay out of `summary.json`.
#[derive(Debug, Clone)]
pub struct RunMeta {
    /// Policy label.
    pub policy: String,
    /// Replication number (0 for the root seed).
    pub replication: u32,
    /// The replication's seed ([`replication_seed`]).
    pub seed: u64,
    /// Hash of the event trace.
    pub trace_hash: u64,
    /// Events processed.
    pub events: u64,
    /// The most events pending at once ([`crate::model::RunResult::peak_pending`]).
    pub peak_pending: u64,
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
    /// The replication (0: the root seed).
    pub replication: u32,
    /// The replication's seed.
    pub seed: u64,
    /// Why it stopped.
    pub error: RunError,
}

impl fmt::Display for PolicyRunError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.replication {
            0 => write!(f, "policy \"{}\": {}", self.policy, self.error),
            k => write!(f, "policy \"{}\", replication {k} (seed {}): {}", self.policy, self.seed, self.error),
        }
    }
}

impl std::error::Error for PolicyRunError {}

const REPLICATION: u64 = label_hash("run/replication");

/// The seed of replication `k` of a run whose root seed is `root`: the root seed itself for
/// replication 0 (so one replication is exactly a plain run), otherwise the counter-based draw
/// `counter_u64(root, label_hash("run/replication"), k, 0)`. Every policy set runs on the
/// same seeds (common random numbers).
pub fn replication_seed(root: u64, k: u32) -> u64 {
    if k == 0 { root } else { counter_u64(root, REPLICATION, u64::from(k), 0) }
}

/// Run all policy sets, as many replications as the scenario's `replications` asks.
/// `parallel` spreads the runs over rayon's pool. Every run finishes; the error is that of the
/// first stopped run (replication by replication, in scenario order).
pub fn run_all(model: &Model, opts: RunOptions, parallel: bool) -> Result<ScenarioResult, PolicyRunError> {
    run_replicated(model, model.scenario().replications, opts, parallel)
}

/// As [`run_all`], telling `observer` (run index: replication x policy sets + policy set
/// index, simulated time) at every window tick of every run, from the thread running it: for a
/// progress display.
pub fn run_all_observed(
    model: &Model,
    opts: RunOptions,
    parallel: bool,
    observer: &(dyn Fn(usize, Time) + Sync),
) -> Result<ScenarioResult, PolicyRunError> {
    run_grid(model, model.scenario().replications, opts, parallel, Some(observer), None)
}

/// Makes the sink of policy set `p`'s replication-0 run (each run writes its own).
pub type Sinks<'a> = &'a (dyn Fn(usize) -> Box<dyn RowSink> + Sync);

/// As [`run_all_observed`] (`observer` optional), handing the time-series rows of policy set
/// `p` (replication 0) to `sinks(p)` window by window instead of keeping them: memory stays
/// flat in the horizon. [`ScenarioResult::rows`] is empty.
pub fn run_all_streamed(
    model: &Model,
    opts: RunOptions,
    parallel: bool,
    observer: Observer,
    sinks: Sinks,
) -> Result<ScenarioResult, PolicyRunError> {
    run_grid(model, model.scenario().replications, opts, parallel, observer, Some(sinks))
}

/// Run every policy set on `replications` seeds ([`replication_seed`]; 0 counts as 1).
/// Replication 0 keeps the time series and event log `opts` asks for; the others keep neither.
pub fn run_replicated(
    model: &Model,
    replications: u32,
    opts: RunOptions,
    parallel: bool,
) -> Result<ScenarioResult, PolicyRunError> {
    run_grid(model, replications, opts, parallel, None, None)
}

/// As [`run_replicated`], telling `observer` (run index: replication x policy sets + set,
/// simulated time) at every window tick of every run.
pub fn run_replicated_observed(
    model: &Model,
    replications: u32,
    opts: RunOptions,
    parallel: bool,
    observer: &(dyn Fn(usize, Time) + Sync),
) -> Result<ScenarioResult, PolicyRunError> {
    run_grid(model, replications, opts, parallel, Some(observer), None)
}

/// Told (run index, simulated time) at every window tick of every run.
pub type Observer<'a> = Option<&'a (dyn Fn(usize, Time) + Sync)>;

/// Run every (replication, policy set), run index `k * sets + p`, and assemble the results.
fn run_grid(
    model: &Model,
    replications: u32,
    opts: RunOptions,
    parallel: bool,
    observer: Observer,
    sinks: Option<Sinks>,
) -> Result<ScenarioResult, PolicyRunError> {
    let n = model.scenario().policies.len();
    let reps = replications.max(1);
    let seeds: Vec<u64> = (0..reps).map(|k| replication_seed(model.seed(), k)).collect();
    let others: Vec<Model> = seeds[1..].iter().map(|&seed| model.with_seed(seed)).collect();
    let one = |i: usize| {
        let (k, p) = (i / n.max(1), i % n.max(1));
        let (m, o) =
            if k == 0 { (model, opts) } else { (&others[k - 1], RunOptions { timeseries: false, events: 0, ..opts }) };
        let tell = |t: Time| observer.map_or((), |f| f(i, t));
        match (observer, sinks.filter(|_| k == 0)) {
            (_, Some(sinks)) => run_policy_streamed(m, p, o, observer.map(|_| &tell as _), sinks(p)),
            (Some(_), None) => run_policy_observed(m, p, o, &tell),
            (None, None) => run_policy(m, p, o),
        }
    };
    let total = n * reps as usize;
    let runs: Vec<Result<RunResult, RunError>> =
        if parallel { (0..total).into_par_iter().map(one).collect() } else { (0..total).map(one).collect() };
    assemble(model, &seeds, runs)
}

/// The replication statistics of `summaries` (run index `k * sets + p`), with two or more seeds.
fn replicated(seeds: &[u64], n: usize, summaries: &[RunSummary], rules: &replicate::RankRules) -> Option<Replications> {
    (seeds.len() > 1).then(|| {
        let sets: Vec<Vec<&RunSummary>> = (0..n).map(|p| summaries.iter().skip(p).step_by(n).collect()).collect();
        replicate::replications(seeds, &sets, rules)
    })
}

/// Gather the runs' results (run index `k * sets + p`) in scenario order; the error is that of
/// the first stopped run.
fn assemble(
    model: &Model,
    seeds: &[u64],
    runs: Vec<Result<RunResult, RunError>>,
) -> Result<ScenarioResult, PolicyRunError> {
    let s = model.scenario();
    let n = s.policies.len().max(1);
    let results = runs
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let k = (i / n) as u32;
            r.map_err(|error| PolicyRunError {
                policy: s.policies[i % n].name.clone(),
                replication: k,
                seed: seeds[k as usize],
                error,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let measured_s = (s.horizon.ns() - s.warmup.ns()) as f64 / 1e9;
    let mut rows = Vec::new();
    let mut runs = Vec::with_capacity(results.len());
    let mut summaries = Vec::with_capacity(results.len());
    let resolved = crate::scenario::phases_of(s);
    let mut per_phase: Vec<Vec<RunSummary>> = vec![Vec::with_capacity(results.len()); resolved.len()];
    for (i, r) in results.into_iter().enumerate() {
        let k = (i / n) as u32;
        for (ph, p) in r.phases.into_iter().enumerate() {
            per_phase[ph].push(p);
        }
        runs.push(RunMeta {
            policy: r.summary.policy.clone(),
            replication: k,
            seed: seeds[k as usize],
            trace_hash: r.trace_hash,
            events: r.summary.events,
            peak_pending: r.peak_pending,
            requests: r.requests,
            trace: r.trace,
            log: r.log,
        });
        rows.extend(r.rows);
        summaries.push(r.summary);
    }
    let rules = replicate::RankRules::of_scenario(s);
    let replications = replicated(seeds, n, &summaries, &rules);
    let names: Vec<String> = resolved.iter().map(|p| p.name.clone()).collect();
    let decision = crate::report::decision::decide_run(
        s,
        &crate::report::decision::Replicated { names: &names, whole: &summaries, phases: &per_phase },
    )
    .map(|r| crate::decide::feasible::with_ceilings(r, model));
    summaries.truncate(n);
    Ok(ScenarioResult {
        summary: ScenarioSummary {
            scenario: s.name.clone(),
            seed: model.seed(),
            measured_s,
            setup: Setup {
                instances: s.fleet.instances,
                worker_slots: s.fleet.workers.slots,
                pool_connections: s.pool_connections(),
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
                        fallback: c.fallback != Fallback::None,
                        staleness: c.fallback != Fallback::None
                            && matches!(
                                c.fallback_answer,
                                FallbackAnswer::Catalogue | FallbackAnswer::LastAnswer { .. }
                            ),
                        cost: (s.business.is_some() && c.order_fraction > 0.0)
                            || (c.fallback != Fallback::None && c.fallback_answer.cost_per_use() > 0.0),
                        slo: crate::model::slo::setup(c),
                    })
                    .collect(),
            },
            runs: summaries,
            phases: resolved
                .into_iter()
                .zip(per_phase)
                .map(|(p, mut runs)| {
                    let replications = replicated(seeds, n, &runs, &rules);
                    runs.truncate(n);
                    PhaseSummary {
                        start_s: ms_f64(p.start) / 1000.0,
                        end_s: ms_f64(p.end) / 1000.0,
                        source: p.source.as_str().into(),
                        name: p.name,
                        runs,
                        replications,
                    }
                })
                .collect(),
            replications,
            decision,
        },
        rows,
        runs,
    })
}
