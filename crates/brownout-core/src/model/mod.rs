//! The simulated world: gateway instances with worker slots, connection pools and policy
//! stacks; request classes; the dependency; the catalogue and its caches.
//!
//! [`Model`] is the immutable part built once per scenario and shared by every policy run;
//! [`run_policy`] simulates one policy set on it. Every run draws its arrivals, items and
//! latencies from streams and counters derived from the same seed, so every policy set
//! sees the same traffic (common random numbers).

pub mod arrivals;
pub mod catalogue;
pub mod dependency;
pub mod records;
mod world;

use std::path::Path;

use crate::engine::Time;
use crate::metrics::WindowRow;
use crate::metrics::summary::RunSummary;
use crate::policy::plugin::Plugins;
use crate::policy::{BuildCtx, PolicySpec};
use crate::scenario::{PartitionMode, Scenario};

pub use world::MAX_LAYERS;

use catalogue::Popularity;
use dependency::{DependencyModel, LatencyDist};

/// The immutable part of a scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Model {
    /// The validated scenario.
    pub scenario: Scenario,
    /// Root seed.
    pub seed: u64,
    /// The dependency.
    pub dep: DependencyModel,
    /// Local work distribution per class.
    pub work: Vec<Option<LatencyDist>>,
    /// Item popularity, when there is a catalogue.
    pub popularity: Option<Popularity>,
    /// Arrival processes per class, before any draw.
    pub arrivals: Vec<arrivals::ArrivalGen>,
    /// Policy plugins registered by the program (none for the `brownout` binary).
    pub plugins: Plugins,
}

impl Model {
    /// Build from a validated scenario; `dir` resolves relative data files.
    pub fn build(scenario: &Scenario, seed: u64, dir: &Path) -> Result<Self, String> {
        Self::build_with_plugins(scenario, seed, dir, Plugins::new())
    }

    /// Build with policy plugins registered from outside brownout. Every plugin layer is
    /// built here for every instance it will run on, so an unknown name or a bad parameter
    /// is an error before any run, not a panic inside one.
    pub fn build_with_plugins(scenario: &Scenario, seed: u64, dir: &Path, plugins: Plugins) -> Result<Self, String> {
        let mut ctx = BuildCtx {
            classes: scenario.classes.iter().map(|c| c.name.clone()).collect(),
            instance: 0,
            instances: scenario.fleet.instances,
            plugins: plugins.clone(),
        };
        for p in &scenario.policies {
            for layer in &p.stack {
                if let PolicySpec::Plugin(c) = &layer.policy {
                    // A fleet-wide layer's state lives on instance 0 alone, but each instance
                    // builds its own copy, so every instance must build.
                    for instance in 0..scenario.fleet.instances {
                        ctx.instance = instance;
                        plugins
                            .build(c, &ctx)
                            .map_err(|e| format!("policy \"{}\", instance {instance}: {e}", p.name))?;
                    }
                }
            }
        }
        let dep = DependencyModel::build(&scenario.dependency, seed, dir)?;
        let work = scenario
            .classes
            .iter()
            .map(|c| c.work.as_ref().map(|w| LatencyDist::build(w, dir)).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        for p in &scenario.policies {
            if p.stack.len() > MAX_LAYERS {
                return Err(format!(
                    "policy \"{}\" has {} layers; at most {MAX_LAYERS} are supported",
                    p.name,
                    p.stack.len()
                ));
            }
        }
        Ok(Self {
            scenario: scenario.clone(),
            seed,
            dep,
            work,
            popularity: scenario.catalogue.as_ref().map(Popularity::new),
            arrivals: scenario
                .classes
                .iter()
                .map(|c| arrivals::ArrivalGen::build(&c.arrivals, dir))
                .collect::<Result<Vec<_>, _>>()?,
            plugins,
        })
    }
}

impl Model {
    /// How calls from `instance` fail at `now`, if it is cut off from the dependency.
    pub fn partition(&self, instance: u32, now: Time) -> Option<PartitionMode> {
        self.scenario
            .fleet
            .partitions
            .iter()
            .find(|p| p.start.ns() <= now && now < p.end.ns() && p.instances.contains(&instance))
            .map(|p| p.mode)
    }

    /// The latency multiplier of `replica` at `now`.
    pub fn replica_factor(&self, replica: u32, now: Time) -> f64 {
        self.scenario.dependency.replicas.as_ref().map_or(1.0, |r| {
            r.slow
                .iter()
                .filter(|s| s.replica == replica && s.start.ns() <= now && now < s.end.ns())
                .map(|s| s.factor)
                .product()
        })
    }
}

/// Options for one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Keep the time-series rows.
    pub timeseries: bool,
    /// Keep the first `trace_limit` (time, event code) pairs, to locate a divergence.
    pub trace_limit: usize,
}

/// The result of one policy run.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Summary metrics.
    pub summary: RunSummary,
    /// Time-series rows (empty unless asked for).
    pub rows: Vec<WindowRow>,
    /// Hash of the event trace (time and kind of every event), for determinism checks.
    pub trace_hash: u64,
    /// Simulated time reached.
    pub end: Time,
    /// Requests that arrived.
    pub requests: u64,
    /// Set when a guard stopped the run.
    pub aborted: Option<String>,
    /// The first events (time, code), when asked for with `trace_limit`.
    pub trace: Vec<(Time, u64)>,
}

/// Run policy set `policy` of the model.
pub fn run_policy(model: &Model, policy: usize, opts: RunOptions) -> RunResult {
    world::run(model, policy, opts, false).0
}

/// Run policy set `policy` and also keep a record of every request, dependency call and
/// attempt (see [`records`]): for tests and diagnostics, as its memory grows with the run.
pub fn run_policy_recorded(model: &Model, policy: usize, opts: RunOptions) -> (RunResult, records::Records) {
    world::run(model, policy, opts, true)
}
