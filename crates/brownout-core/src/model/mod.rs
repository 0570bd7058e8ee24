//! The simulated world: gateway instances with worker slots, connection pools and policy
//! stacks; request classes; the dependency; the catalogue and its caches.
//!
//! [`Model`] is the immutable part built once per scenario and shared by every policy run;
//! [`run_policy`] simulates one policy set on it. Every run draws its arrivals, items and
//! latencies from streams and counters derived from the same seed, so every policy set
//! sees the same traffic (common random numbers).

pub(crate) mod arrivals;
pub(crate) mod catalogue;
pub(crate) mod connlife;
pub(crate) mod dependency;
pub(crate) mod fallback;
pub(crate) mod graph;
pub(crate) mod health;
pub(crate) mod outlier;
pub mod records;
pub(crate) mod server;
pub(crate) mod sharing;
pub mod slo;
mod world;

use std::fmt;
use std::path::Path;

use crate::engine::{Time, fmt_time};
use crate::metrics::WindowRow;
use crate::metrics::summary::RunSummary;
use crate::policy::plugin::Plugins;
use crate::policy::{BuildCtx, PolicySpec};
use crate::scenario::{Layer, PartitionMode, Scenario};

pub use world::MAX_LAYERS;

const OVERHEAD: u64 = crate::engine::label_hash("fleet/overhead");
const UNWIND: u64 = crate::engine::label_hash("fleet/timeout_unwind");

use catalogue::Popularity;
use dependency::{DelayDist, DependencyModel, LatencyDist};

/// The immutable part of a scenario, ready to run. Built once, read by every run.
#[derive(Debug, Clone)]
pub struct Model {
    /// The validated scenario.
    scenario: Scenario,
    /// Root seed.
    seed: u64,
    /// The dependencies, by id (`Scenario::deps`): one in the one-dependency form.
    deps: Vec<DependencyModel>,
    /// The classes' call plans; None in the one-dependency form without plans.
    graph: Option<graph::Graph>,
    /// Local work distribution per class.
    work: Vec<Option<LatencyDist>>,
    /// Gateway overhead per response, drawn per request when it is a distribution.
    overhead: DelayDist,
    /// The gateway's unwind after an attempt timeout, when the scenario gives one (else each
    /// Timeout layer's own); drawn per timed-out attempt.
    unwind: Option<DelayDist>,
    /// Item popularity, when there is a catalogue.
    popularity: Option<Popularity>,
    /// Arrival processes per class, before any draw.
    arrivals: Vec<arrivals::ArrivalGen>,
    /// Policy plugins registered by the program (none for the `brownout` binary).
    plugins: Plugins,
    /// Per pool (0 the fleet's `pool`, k `fleet.pools[k - 1]`), its connection life; None
    /// where connections are ready at once and reused forever.
    conns: Vec<Vec<Option<connlife::ConnLife>>>,
    /// Per policy set, the layers a run builds on every instance: the set's stack, then each
    /// service's stack in that set (`graph::run_stack`), and whose each layer is.
    stacks: Vec<graph::RunStack>,
}

/// The scenario with every preset stack layer (`DotnetStandard`) replaced by the layers it
/// stands for, each keeping the preset layer's classes, scope and persistence.
fn expand_presets(scenario: &Scenario) -> Scenario {
    let mut s = scenario.clone();
    for p in &mut s.policies {
        p.stack = expand_layers(&p.stack);
        for own in &mut p.services {
            own.stack = expand_layers(&own.stack);
        }
    }
    for d in s.dependencies.iter_mut() {
        if let Some(svc) = &mut d.service {
            svc.stack = expand_layers(&svc.stack);
        }
    }
    s
}

/// `stack` with every preset layer replaced by the layers it stands for.
fn expand_layers(stack: &[Layer]) -> Vec<Layer> {
    (stack.iter())
        .flat_map(|layer| match layer.policy.preset_layers() {
            Some(layers) => layers.into_iter().map(|policy| Layer { policy, ..layer.clone() }).collect(),
            None => vec![layer.clone()],
        })
        .collect()
}

impl Model {
    /// Build from a validated scenario; `dir` resolves relative data files.
    pub fn build(scenario: &Scenario, seed: u64, dir: &Path) -> Result<Self, BuildError> {
        Self::build_with_plugins(scenario, seed, dir, Plugins::new())
    }

    /// Build with policy plugins registered from outside brownout. Every plugin layer is
    /// built here for every instance it will run on, so an unknown name or a bad parameter
    /// is an error before any run, not a panic inside one.
    pub fn build_with_plugins(
        scenario: &Scenario,
        seed: u64,
        dir: &Path,
        plugins: Plugins,
    ) -> Result<Self, BuildError> {
        let mut ctx = BuildCtx::new(scenario.classes.iter().map(|c| c.name.clone()).collect())
            .on_instance(0, scenario.fleet.instances)
            .with_plugins(plugins.clone());
        for p in &scenario.policies {
            for layer in &p.stack {
                if let PolicySpec::Plugin(c) = &layer.policy {
                    // A fleet-wide layer's state lives on instance 0 alone, but each instance
                    // builds its own copy, so every instance must build.
                    for instance in 0..scenario.fleet.instances {
                        ctx.instance = instance;
                        plugins.build(c, &ctx).map_err(|e| BuildError::Plugin {
                            policy: p.name.clone(),
                            instance,
                            message: e.to_string(),
                        })?;
                    }
                }
            }
        }
        let deps = (scenario.deps().iter())
            .map(|d| {
                // Each of `dependencies` draws apart (its name salts its labels); the one
                // `dependency` draws as it always did.
                let salt = if scenario.dependencies.is_empty() { 0 } else { crate::engine::label_hash(&d.name) };
                DependencyModel::build_salted(d, seed, dir, salt)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(BuildError::Input)?;
        let work = scenario
            .classes
            .iter()
            .map(|c| c.work.as_ref().map(|w| LatencyDist::build(w, dir)).transpose())
            .collect::<Result<Vec<_>, _>>()
            .map_err(BuildError::Input)?;
        // Before the presets are expanded: a proxy preset's rules for its pools are its own.
        let base = connlife::ConnLife::build_all(scenario, seed, dir).map_err(BuildError::Input)?;
        let conns = scenario.policies.iter().map(|set| connlife::ConnLife::for_set(&base, scenario, set)).collect();
        let scenario = &expand_presets(scenario);
        for p in &scenario.policies {
            if p.stack.len() > MAX_LAYERS {
                return Err(BuildError::TooManyLayers { policy: p.name.clone(), layers: p.stack.len() });
            }
        }
        let stacks: Vec<graph::RunStack> =
            (0..scenario.policies.len()).map(|i| graph::run_stack(scenario, i)).collect();
        for (p, st) in scenario.policies.iter().zip(&stacks) {
            // Layers are numbered by a byte in the world: the gateway's and every service's.
            if st.layers.len() > u8::MAX as usize {
                return Err(BuildError::TooManyLayers { policy: p.name.clone(), layers: st.layers.len() });
            }
        }
        Ok(Self {
            scenario: scenario.clone(),
            seed,
            deps,
            graph: graph::Graph::build(scenario),
            work,
            overhead: DelayDist::build(&scenario.fleet.overhead, seed, OVERHEAD, dir).map_err(BuildError::Input)?,
            unwind: match &scenario.fleet.timeout_unwind {
                Some(u) => Some(DelayDist::build(u, seed, UNWIND, dir).map_err(BuildError::Input)?),
                None => None,
            },
            popularity: scenario.catalogue.as_ref().map(Popularity::new),
            arrivals: scenario
                .classes
                .iter()
                .map(|c| arrivals::ArrivalGen::build(&c.arrivals, dir))
                .collect::<Result<Vec<_>, _>>()
                .map_err(BuildError::Input)?,
            plugins,
            conns,
            stacks,
        })
    }
}

impl Model {
    /// The validated scenario the model was built from.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The root seed every run's streams and counters derive from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The same model with root seed `seed` (a replication): nothing is read or built again.
    pub fn with_seed(&self, seed: u64) -> Self {
        Self {
            seed,
            deps: self.deps.iter().map(|d| d.reseeded(seed)).collect(),
            overhead: self.overhead.reseeded(seed, OVERHEAD),
            unwind: self.unwind.as_ref().map(|u| u.reseeded(seed, UNWIND)),
            conns: (self.conns.iter())
                .map(|set| set.iter().map(|c| c.as_ref().map(|c| c.reseeded(seed))).collect())
                .collect(),
            ..self.clone()
        }
    }

    /// Each class's arrival process, before any draw (for `decide::feasible`'s weighting).
    pub(crate) fn arrivals(&self) -> &[arrivals::ArrivalGen] {
        &self.arrivals
    }

    /// The (first) dependency's behaviour (latency, errors, modes, capacity).
    pub fn dependency(&self) -> &DependencyModel {
        &self.deps[0]
    }

    /// Every dependency's behaviour, in `Scenario::deps` order.
    pub(crate) fn deps(&self) -> &[DependencyModel] {
        &self.deps
    }

    /// Pool `p`'s connection life (0 the fleet's `pool`, k `fleet.pools[k - 1]`) in the runs
    /// of policy set `set`, if it has one.
    pub(crate) fn conn_life(&self, set: usize, p: usize) -> Option<&connlife::ConnLife> {
        self.conns.get(set).and_then(|s| s.get(p)).and_then(Option::as_ref)
    }

    /// The layers policy set `set`'s runs build: its stack, then its services' stacks.
    pub(crate) fn run_stack(&self, set: usize) -> &graph::RunStack {
        &self.stacks[set]
    }

    /// Dependency `d`'s behaviour (an id: index into `Scenario::deps`).
    pub(crate) fn dep(&self, d: u16) -> &DependencyModel {
        &self.deps[d as usize]
    }

    /// How calls from `instance` to dependency `dep` fail at `now`, if a partition cuts them
    /// (one naming no dependency cuts every one).
    pub(crate) fn partition(&self, instance: u32, dep: u16, now: Time) -> Option<PartitionMode> {
        let cuts = |p: &crate::scenario::Partition| {
            p.dependencies.is_empty() || p.dependencies.iter().any(|d| *d == self.scenario.deps()[dep as usize].name)
        };
        self.scenario
            .fleet
            .partitions
            .iter()
            .find(|p| p.start.ns() <= now && now < p.end.ns() && p.instances.contains(&instance) && cuts(p))
            .map(|p| p.mode)
    }

    /// The latency multiplier of dependency `dep`'s `replica` at `now`.
    pub(crate) fn replica_factor(&self, dep: u16, replica: u32, now: Time) -> f64 {
        self.scenario.deps()[dep as usize].replicas.as_ref().map_or(1.0, |r| {
            r.slow
                .iter()
                .filter(|s| s.replica == replica && s.start.ns() <= now && now < s.end.ns())
                .map(|s| s.factor)
                .product()
        })
    }
}

/// Why a validated scenario could not be built into a [`Model`]. Its `Display` is the message
/// the command line prints (after the scenario's file name).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A `Plugin` layer's factory refused to build (or no plugin has its name).
    Plugin {
        /// The policy set holding the layer.
        policy: String,
        /// The instance it was built for.
        instance: u32,
        /// The factory's message.
        message: String,
    },
    /// A policy set has more layers, presets expanded, than the world supports ([`MAX_LAYERS`]).
    TooManyLayers {
        /// The policy set.
        policy: String,
        /// Its layers, presets expanded.
        layers: usize,
    },
    /// A distribution or data file of the dependency, local work, overhead, unwind or
    /// arrivals could not be built (e.g. a CSV file that cannot be read).
    Input(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            BuildError::Plugin { policy, instance, message } => {
                write!(f, "policy \"{policy}\", instance {instance}: {message}")
            }
            BuildError::TooManyLayers { policy, layers } => {
                write!(f, "policy \"{policy}\" has {layers} layers; at most {MAX_LAYERS} are supported")
            }
            BuildError::Input(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for BuildError {}

/// Options for one run: [`RunOptions::new`] keeps nothing beyond the summary, and each
/// `with_` method asks for one more thing. Non-exhaustive, so a new option breaks no caller:
/// build it with the constructor and the methods, read its fields.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct RunOptions {
    /// Keep the time-series rows.
    pub timeseries: bool,
    /// Keep the first `trace_limit` (time, event code) pairs, to locate a divergence.
    pub trace_limit: usize,
    /// Keep the first `events` state changes of the policy layers, with their reasons
    /// ([`RunResult::log`]); 0 keeps none and costs nothing.
    pub events: usize,
}

impl RunOptions {
    /// No time series, no trace, no event log: the summary alone (the cheapest run).
    pub const fn new() -> Self {
        Self { timeseries: false, trace_limit: 0, events: 0 }
    }

    /// Keep the time-series rows (`true`) or not.
    pub const fn with_timeseries(self, timeseries: bool) -> Self {
        Self { timeseries, ..self }
    }

    /// Keep the first `trace_limit` (time, event code) pairs.
    pub const fn with_trace_limit(self, trace_limit: usize) -> Self {
        Self { trace_limit, ..self }
    }

    /// Keep the first `events` state changes of the policy layers.
    pub const fn with_events(self, events: usize) -> Self {
        Self { events, ..self }
    }
}

/// The result of one policy run.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Summary metrics.
    pub summary: RunSummary,
    /// The same figures per phase, in the order of `scenario::phases_of` (empty without phases).
    pub phases: Vec<RunSummary>,
    /// Time-series rows (empty unless asked for, and empty when they went to a sink:
    /// [`run_policy_streamed`]).
    pub rows: Vec<WindowRow>,
    /// The most events pending in the queue at once: memory follows it, and it stays
    /// O(in flight) because lazily cancelled timers are swept out (`Handler::is_stale`).
    pub peak_pending: u64,
    /// Hash of the event trace (time and kind of every event handled), for determinism
    /// checks. Stale timers swept out early are not handled, so they are not in it.
    pub trace_hash: u64,
    /// Simulated time reached (the horizon: a run that stops early is a [`RunError`]).
    pub end: Time,
    /// Requests that arrived.
    pub requests: u64,
    /// The first events (time, code), when asked for with `trace_limit`.
    pub trace: Vec<(Time, u64)>,
    /// The layers' state changes, when asked for with `events` (else empty).
    pub log: crate::metrics::events::EventLog,
}

/// Why a run stopped before its horizon: one of the scenario's `limits` guards tripped
/// (validation's budget estimate let the scenario through, but the run outgrew it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunError {
    /// More events than `limits.max_events`; `at` is the virtual time (ns) it happened.
    TooManyEvents {
        /// The limit.
        limit: u64,
        /// When (ns).
        at: Time,
    },
    /// More pending events than four times `limits.max_in_flight` (plus 1,024).
    TooManyPending {
        /// Events pending at that moment.
        pending: u64,
        /// When (ns).
        at: Time,
    },
    /// More requests in flight, users waiting to reload counted, than `limits.max_in_flight`.
    TooManyInFlight {
        /// The limit.
        limit: u64,
        /// When (ns).
        at: Time,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            RunError::TooManyEvents { limit, at } => {
                write!(f, "runaway scenario: more than {limit} events at t={} (limits.max_events)", fmt_time(at))
            }
            RunError::TooManyPending { pending, at } => write!(
                f,
                "runaway scenario: more than {pending} pending events at t={} (limits.max_in_flight x 4)",
                fmt_time(at)
            ),
            RunError::TooManyInFlight { limit, at } => write!(
                f,
                "runaway scenario: more than {limit} requests in flight or waiting to reload at t={} \
                 (limits.max_in_flight); \
                 arrivals exceed what the fleet can finish. Reduce the arrival rate, bound the queues, or raise the limit",
                fmt_time(at)
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// Run policy set `policy` of the model; an error when a guard stopped the run.
pub fn run_policy(model: &Model, policy: usize, opts: RunOptions) -> Result<RunResult, RunError> {
    world::run(model, policy, opts, false, None, None).map(|(r, _)| r)
}

/// As [`run_policy`], telling `observer` the simulated time at every window tick (for a
/// progress display; what it does cannot change the run).
pub fn run_policy_observed(
    model: &Model,
    policy: usize,
    opts: RunOptions,
    observer: &(dyn Fn(Time) + Sync),
) -> Result<RunResult, RunError> {
    world::run(model, policy, opts, false, Some(observer), None).map(|(r, _)| r)
}

/// As [`run_policy_observed`] (`observer` optional), handing each closed window's time-series
/// rows to `sink` as the run goes instead of keeping them ([`RunResult::rows`] stays empty), so
/// memory does not grow with the horizon. The sink is dropped before this returns.
pub fn run_policy_streamed(
    model: &Model,
    policy: usize,
    opts: RunOptions,
    observer: Option<&(dyn Fn(Time) + Sync)>,
    sink: Box<dyn crate::metrics::RowSink>,
) -> Result<RunResult, RunError> {
    world::run(model, policy, opts, false, observer, Some(sink)).map(|(r, _)| r)
}

/// Run policy set `policy` and also keep a record of every request, dependency call and
/// attempt (see [`records`]): for tests and diagnostics, as its memory grows with the run.
pub fn run_policy_recorded(
    model: &Model,
    policy: usize,
    opts: RunOptions,
) -> Result<(RunResult, records::Records), RunError> {
    world::run(model, policy, opts, true, None, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SECOND;

    const TEXT: &str = r#"Scenario(
        name: "t", horizon: "10s",
        fleet: (workers: (slots: 2), pool: (max_connections: 2, acquire_timeout: "1s")),
        classes: [(name: "a", arrivals: Poisson(rate_per_s: 100), deadline: "1s")],
        dependency: (latency: Constant("1ms")),
        policies: [(name: "p")],
    )"#;

    /// A scenario whose limits the run outgrows (validation would refuse it; the model does
    /// not validate, so the run's own guard must stop it).
    fn outgrown(text: &str, change: impl Fn(&mut Scenario)) -> Result<RunResult, RunError> {
        let mut s = crate::scenario::parse(Path::new("t.ron"), text).unwrap();
        change(&mut s);
        run_policy(&Model::build(&s, 1, Path::new(".")).unwrap(), 0, RunOptions::default())
    }

    #[test]
    fn a_run_past_max_events_is_an_error_not_a_result() {
        // 100 arrivals a second for 10 s are about 4,000 events: 50 cannot hold them.
        let e = outgrown(TEXT, |s| s.limits.max_events = 50).expect_err("the guard stops it");
        assert!(matches!(e, RunError::TooManyEvents { limit: 50, .. }), "{e:?}");
        assert!(e.to_string().starts_with("runaway scenario: more than 50 events at t="), "{e}");
    }

    #[test]
    fn swept_tombstones_count_against_max_events_as_they_count_in_events() {
        // One slot at 90 % load with a 20 s limit on the wait for it: most requests queue and
        // take the slot long before their wait timer fires, so ~8,100 stale timers a second
        // pile up in the 20 s line, past the 65,536 at which the run loop sweeps them. The
        // summary counts those due by the horizon as events; the guard must count the same
        // events, so a limit one below the summary's count stops the run.
        let text = TEXT
            .replace("slots: 2", r#"slots: 1, queue: 1000000, max_wait: "20s""#)
            .replace("rate_per_s: 100", "rate_per_s: 9000")
            .replace(r#""1ms""#, r#""100us""#)
            .replace(r#"horizon: "10s""#, r#"horizon: "40s""#)
            .replace(r#"deadline: "1s""#, r#"deadline: "30s""#);
        let r = outgrown(&text, |s| s.limits.max_events = u64::MAX).expect("within its limits");
        let events = r.summary.events;
        assert!(events > 500_000, "{events}");
        let e = outgrown(&text, |s| s.limits.max_events = events - 1).expect_err("one event too many");
        assert!(matches!(e, RunError::TooManyEvents { .. }), "{e:?}");
        assert!(outgrown(&text, |s| s.limits.max_events = events).is_ok());
    }

    #[test]
    fn a_run_past_max_in_flight_is_an_error() {
        // One slot held for a second per request, the rest queue behind it: at 100 arrivals
        // a second the fourth request in flight arrives within the first 100 ms or so.
        let slow = TEXT.replace("slots: 2", "slots: 1, queue: 1000").replace(r#"Constant("1ms")"#, r#"Constant("1s")"#);
        let e = outgrown(&slow, |s| s.limits.max_in_flight = 3).expect_err("the guard stops it");
        assert!(matches!(e, RunError::TooManyInFlight { limit: 3, .. }), "{e:?}");
        assert!(e.to_string().contains("(limits.max_in_flight); arrivals exceed"), "{e}");
    }

    #[test]
    fn pending_reloads_count_against_max_in_flight() {
        // Answers take 1 ms, so about 0.1 requests are in service at once; but every answer
        // is slower than a 1 ns patience and reloads 5 s later, so by Little's law 100/s x 5 s
        // = 500 users wait to reload at once. They are in flight as the limit means it (each
        // holds a slab entry and an event), so 50 stops the run within its first second; the
        // 4 x 50 + 1,024 pending-event guard alone would not.
        let text = TEXT.replace(
            r#"deadline: "1s")"#,
            r#"deadline: "1s", reload: (patience: "1ns", probability: 1.0, delay: "5s", max_reloads: 1))"#,
        );
        let e = outgrown(&text, |s| s.limits.max_in_flight = 50).expect_err("the guard stops it");
        assert!(matches!(e, RunError::TooManyInFlight { limit: 50, at } if at < SECOND), "{e:?}");
        assert!(e.to_string().contains("waiting to reload"), "{e}");
        // Within the limit it runs to the horizon.
        assert!(outgrown(&text, |s| s.limits.max_in_flight = 2_000).is_ok());
    }

    #[test]
    fn a_run_within_its_limits_reaches_the_horizon() {
        let r = outgrown(TEXT, |_| {}).expect("within the limits");
        assert_eq!(r.end, 10 * SECOND);
    }
}
