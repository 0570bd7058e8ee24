//! Parameter sweeps: run a scenario over a grid (or seeded sample) of parameter values,
//! every policy at every point, R replications each, and aggregate metrics into means with
//! 95 % Student t confidence intervals.
//!
//! - `spec`: the sweep file (RON).
//! - `path`: `policies[tiered].stack[0].policy.Limiter.permits` on a JSON scenario.
//! - [`grid`]: spec to [`grid::Plan`]: axis values, points, validated scenarios, run numbering,
//!   common-random-number seeds. All errors surface here, before any run.
//! - [`stats`]: means and their Student-t intervals; the paired comparison by seed.
//! - [`best`]: the best settings per metric, ties decided by paired intervals.
//! - [`decide`]: the recommendation (decision vs condition axes); `link`: linked axes.
//! - `store`: the journal's records ([`RunRecord`]) and checksummed lines (`output::journal`
//!   writes them; reached outside the crate as [`crate::unstable::store`]).
//! - [`reuse`]: each run's content key; runs with equal keys are run once.
//! - [`sensitivity`]: how much each axis moves each metric around the recommended setting.
//!
//! Architecture invariant: result files are a pure function of the plan and the set of
//! finished runs, rendered in run order. Thread count, completion order, interruption and
//! sharding therefore cannot change a byte of them.

pub mod best;
pub mod decide;
pub mod grid;
pub(crate) mod link;
pub(crate) mod path;
pub mod reuse;
pub mod sensitivity;
pub(crate) mod spec;
/// The one statistics rule, kept at the top of the crate so `decide` and `report` use it without going through sweeps.
pub use crate::stats;
pub(crate) mod store;

use std::fmt;
use std::str::FromStr;

pub use spec::SpecError;
pub use store::RunRecord;

use anyhow::{Result, anyhow};
use rayon::prelude::*;

use crate::metrics::catalogue;
use crate::model::{Model, RunOptions, run_policy};
use grid::Plan;

/// A deterministic slice of the runs: run `i` belongs to shard `i mod count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, from 0.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
}

impl Shard {
    /// Every run.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Does run `run` belong to this shard? Round robin spreads slow points evenly.
    pub fn owns(self, run: u64) -> bool {
        run % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("shard \"{s}\" must be K/N with 0 <= K < N, e.g. 0/3");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Run one run of the plan: build the point's model with the replication's seed, simulate
/// the policy, keep only the metric values (the record's key is the caller's to set).
pub fn run_one(plan: &Plan, run: u64) -> Result<RunRecord> {
    let id = plan.info.run_id(run);
    let seed = plan.info.replication_seed(id.replication);
    let model = Model::build(&plan.scenarios[id.point], seed, &plan.dir).map_err(|e| anyhow!("run {run}: {e}"))?;
    let result = run_policy(&model, plan.policy_index[id.policy], RunOptions::default()).map_err(|why| {
        anyhow!(
            "run {run} (point {}, policy \"{}\", replication {}, seed {seed}): {why}",
            id.point,
            plan.info.policies[id.policy],
            id.replication
        )
    })?;
    let phases = crate::scenario::phases_of(model.scenario());
    let run_of = |phase: Option<&str>| match phase {
        None => Some(&result.summary),
        Some(p) => phases.iter().position(|x| x.name == p).and_then(|k| result.phases.get(k)),
    };
    let metrics = plan
        .info
        .metrics
        .iter()
        .map(|written| {
            let (phase, m) = spec::split_phase(written);
            run_of(phase).and_then(|r| catalogue::value_of(r, m)).filter(|x| !x.is_nan())
        })
        .collect();
    let answered = if plan.info.metrics.iter().any(|m| answers_metric(m)) {
        plan.info
            .metrics
            .iter()
            .map(|written| {
                let (phase, m) = spec::split_phase(written);
                let run = run_of(phase);
                let class = m.split_once('/').map(|(c, _)| c).filter(|_| answers_metric(written))?;
                let c = run?.classes.iter().find(|c| c.class == class)?;
                Some(catalogue::answered(c) as u64)
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(RunRecord { run, seed, events: result.summary.events, requests: result.requests, metrics, answered, key: None })
}

/// Is `path` (as a sweep names it) a latency of answers, ranked only between settings that
/// answered about as many ([`catalogue::Population::Answers`])?
pub fn answers_metric(path: &str) -> bool {
    catalogue::by_path(path).is_some_and(|m| m.population() == catalogue::Population::Answers)
}

/// Run `todo` on a local pool of `threads` threads, handing each record to `keep` (the
/// caller's journal) the moment it finishes and then telling `on_done`. Stops at the first
/// failed run. The journal is the caller's, so the sweep itself writes no file.
pub fn execute(
    plan: &Plan,
    todo: &[u64],
    threads: usize,
    keep: &(dyn Fn(&RunRecord) -> Result<()> + Sync),
    on_done: &(dyn Fn(&RunRecord) + Sync),
) -> Result<()> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build()?;
    pool.install(|| {
        todo.par_iter().with_max_len(1).try_for_each(|&run| {
            let rec = run_one(plan, run)?;
            keep(&rec)?;
            on_done(&rec);
            Ok(())
        })
    })
}

/// The runs of `shard` not yet in `done`, in run order.
pub fn pending(plan: &Plan, shard: Shard, done: &[RunRecord]) -> Vec<u64> {
    let finished: std::collections::BTreeSet<u64> = done.iter().map(|r| r.run).collect();
    (0..plan.info.runs()).filter(|&r| shard.owns(r) && !finished.contains(&r)).collect()
}
