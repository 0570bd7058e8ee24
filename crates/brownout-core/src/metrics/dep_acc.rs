//! A recorder's figures of a service graph ([`GraphAcc`]): each dependency's accumulators,
//! each class's causes by dependency and each plan call's outcomes and critical path, fed by
//! [`GraphEvent`]s and the blame the world hands over with a finished request. What
//! `RunSummary::dependencies`, `ClassSummary::causes_by_dependency` and `ClassSummary::calls`
//! are made of. A run without a graph keeps none.

use super::cause::{Cause, CauseTally};
use super::class_acc::Tally;
use super::gauge::Gauge;
use super::hist::RunLat;
use super::recorder::Outcome;
use super::summary::{CallFigures, ClassSummary, DependencyCauses, DependencyFigures};
use super::to_f64;
use crate::engine::Time;

/// Which dependency a finished request's cause is to be put on (indexes into the scenario's
/// dependencies); `None` where no call is to blame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Blame {
    /// The dependency of the call whose failure is the request's (a required call's, or for
    /// a degraded answer the first optional call's that failed).
    pub failed: Option<u16>,
    /// The dependency of the call that decided the request's longest step (the largest part
    /// of its critical path): blamed when the answer is late.
    pub critical: Option<u16>,
}

/// What the recorder knows of one call of a class's plan.
#[derive(Debug, Clone)]
pub struct PlanCallInfo {
    /// Its step's number.
    pub step: u32,
    /// The dependency's name.
    pub dependency: String,
    /// An optional call.
    pub optional: bool,
}

/// One call of a class's plan over the measured span.
#[derive(Debug, Clone)]
pub(super) struct CallAcc {
    info: PlanCallInfo,
    outcomes: Tally,
    cancelled: u64,
    /// Nanoseconds it held the critical path.
    critical: u64,
}

impl CallAcc {
    pub(super) fn new(info: PlanCallInfo) -> Self {
        Self { info, outcomes: Tally::default(), cancelled: 0, critical: 0 }
    }

    /// A call ended with `outcome` (None: cancelled).
    pub(super) fn ended(&mut self, outcome: Option<Outcome>) {
        match outcome {
            Some(o) => self.outcomes.bump(o),
            None => self.cancelled += 1,
        }
    }

    /// It decided a step that lasted `ns`.
    pub(super) fn decided(&mut self, ns: Time) {
        self.critical += ns;
    }

    /// Its figures, `total` being the summed latency (ns) of the class's finished requests.
    pub(super) fn figures(&self, total: u64) -> CallFigures {
        let ms = self.critical as f64 / crate::engine::MILLISECOND as f64;
        CallFigures {
            step: self.info.step,
            dependency: self.info.dependency.clone(),
            optional: self.info.optional,
            outcomes: self.outcomes.outcomes(),
            cancelled: self.cancelled,
            critical_ms: ms,
            critical_share: if total == 0 { f64::NAN } else { self.critical as f64 / total as f64 },
        }
    }
}

/// One dependency's figures over the measured span.
#[derive(Debug, Clone)]
pub(super) struct DepAcc {
    /// Calls (of requests measured) that sent at least one attempt.
    calls: u64,
    /// The attempts those calls sent.
    call_attempts: u64,
    /// Attempts started after warm-up.
    attempts: u64,
    abandoned: u64,
    wait: RunLat,
    service: RunLat,
    time: RunLat,
    in_flight: Gauge,
    /// The pool its calls take connections from (index into `GraphAcc::pools`), once told.
    pool: Option<usize>,
    /// Connection waits of its attempts (granted or given up), ns, summed, and their count.
    conn_wait: (u64, u64),
    /// Breaker layers scoped to it (per instance), and how many of them are open (a level
    /// over all instances).
    breakers: u32,
    open: Gauge,
    /// The kinds of the layers scoped to it, outermost first.
    layers: Vec<&'static str>,
}

impl DepAcc {
    /// Accumulators measuring from `warmup`.
    pub(super) fn new(warmup: Time) -> Self {
        Self {
            calls: 0,
            call_attempts: 0,
            attempts: 0,
            abandoned: 0,
            wait: RunLat::empty(),
            service: RunLat::empty(),
            time: RunLat::empty(),
            in_flight: Gauge::new(0.0, warmup, f64::INFINITY),
            pool: None,
            conn_wait: (0, 0),
            breakers: 0,
            open: Gauge::new(0.0, warmup, f64::INFINITY),
            layers: Vec::new(),
        }
    }

    /// A measured call concluded after sending `attempts` attempts (none: not counted).
    pub(super) fn call(&mut self, attempts: u32) {
        if attempts > 0 {
            self.calls += 1;
            self.call_attempts += u64::from(attempts);
        }
    }

    /// An attempt started (`measured`: after warm-up); `in_flight` at this dependency after it.
    pub(super) fn start(&mut self, now: Time, measured: bool, in_flight: u64) {
        self.attempts += measured as u64;
        self.in_flight.set(now, to_f64(in_flight));
    }

    /// An attempt ended (see `Recorder::dep_end`).
    pub(super) fn end(
        &mut self,
        now: Time,
        measured: bool,
        timing: Option<(Time, Time)>,
        abandoned: bool,
        in_flight: u64,
    ) {
        if measured {
            if let Some((wait, service)) = timing {
                self.service.record(service);
                self.wait.record(wait);
                self.time.record(wait.saturating_add(service));
            }
            self.abandoned += abandoned as u64;
        }
        self.in_flight.set(now, to_f64(in_flight));
    }

    /// An abandoned attempt was cancelled at the dependency before its answer.
    pub(super) fn cancelled(&mut self, now: Time, measured: bool, in_flight: u64) {
        self.abandoned += measured as u64;
        self.in_flight.set(now, to_f64(in_flight));
    }

    /// The figures at `now` over `span` measured nanoseconds (`inst_span` instance-ns), the
    /// pools' gauges being `pools`.
    fn figures(
        &mut self,
        name: &str,
        now: Time,
        span: f64,
        inst_span: f64,
        pools: &mut [PoolAcc],
    ) -> DependencyFigures {
        let (wait_ns, waits) = self.conn_wait;
        DependencyFigures {
            name: name.to_string(),
            calls: self.calls,
            attempts: self.attempts,
            amplification: if self.calls == 0 { f64::NAN } else { self.call_attempts as f64 / self.calls as f64 },
            queue_wait_ms: self.wait.stats(),
            service_ms: self.service.stats(),
            total_ms: self.time.stats(),
            peak_in_flight: self.in_flight.peak(now) as u64,
            mean_in_flight: self.in_flight.integral(now) / span,
            abandoned: self.abandoned,
            pool_saturated_fraction: self.pool.map_or(f64::NAN, |p| pools[p].saturated(now) / inst_span),
            pool_wait_ms_mean: if waits == 0 {
                f64::NAN
            } else {
                wait_ns as f64 / waits as f64 / crate::engine::MILLISECOND as f64
            },
            layers: self.layers.iter().map(|k| k.to_string()).collect(),
            breaker_open_fraction: if self.breakers == 0 {
                f64::NAN
            } else {
                self.open.integral(now) / (inst_span * f64::from(self.breakers))
            },
        }
    }
}

/// One connection pool (the fleet's, or a dependency's own from `fleet.pools`): its
/// connections out on each instance, saturated at its size.
#[derive(Debug, Clone)]
struct PoolAcc {
    size: u32,
    per_instance: Vec<Gauge>,
}

impl PoolAcc {
    /// Instance-nanoseconds with every connection out, up to `now`.
    fn saturated(&mut self, now: Time) -> f64 {
        self.per_instance.iter_mut().map(|g| g.saturated(now) as f64).sum()
    }
}

/// What the world reports about a service graph, beside the summed dependency calls.
#[derive(Debug, Clone, Copy)]
pub enum GraphEvent {
    /// An attempt to `dep` started; `in_flight` is that dependency's fleet-wide count after it.
    Start {
        /// When.
        now: Time,
        /// The dependency.
        dep: u16,
        /// Its attempts in flight after it.
        in_flight: u64,
    },
    /// An attempt to `dep` ended; `timing` is its (queue wait, service time), None when shed.
    End {
        /// When.
        now: Time,
        /// The dependency.
        dep: u16,
        /// (queue wait, service time).
        timing: Option<(Time, Time)>,
        /// The caller had abandoned it.
        abandoned: bool,
        /// Its attempts in flight after it.
        in_flight: u64,
    },
    /// An abandoned attempt to `dep` was cancelled there before its answer.
    Cancelled {
        /// When.
        now: Time,
        /// The dependency.
        dep: u16,
        /// Its attempts in flight after it.
        in_flight: u64,
    },
    /// A call to `dep` of a request that arrived at `arrived` concluded, or was cancelled,
    /// after sending `attempts` attempts.
    Call {
        /// Its request's arrival.
        arrived: Time,
        /// The dependency.
        dep: u16,
        /// Attempts it sent.
        attempts: u32,
    },
    /// Call `call` (numbered through its class's plan) ended with `outcome` (None: cancelled).
    CallEnded {
        /// Its request's arrival.
        arrived: Time,
        /// Its class.
        class: usize,
        /// Its number in the plan.
        call: u16,
        /// How it ended.
        outcome: Option<Outcome>,
    },
    /// Call `call` decided a step of its request's plan that lasted `ns`.
    StepDecided {
        /// Its request's arrival.
        arrived: Time,
        /// Its class.
        class: usize,
        /// Its number in the plan.
        call: u16,
        /// The step's duration.
        ns: Time,
    },
    /// Before any other: the calls to `dep` take connections from pool `pool` (0 the fleet's,
    /// k `fleet.pools[k - 1]`) of `size` connections per instance.
    UsesPool {
        /// The dependency.
        dep: u16,
        /// The pool.
        pool: u8,
        /// Its connections per instance.
        size: u32,
    },
    /// Pool `pool` on `instance` has `in_use` connections out after a change.
    Pool {
        /// When.
        now: Time,
        /// The gateway instance.
        instance: u32,
        /// The pool (as in `UsesPool`).
        pool: u8,
        /// Its connections out on the instance.
        in_use: u32,
    },
    /// An attempt to `dep` of a request that arrived at `arrived` waited `waited` for a
    /// connection (granted or given up).
    ConnWait {
        /// Its request's arrival.
        arrived: Time,
        /// The dependency.
        dep: u16,
        /// How long.
        waited: Time,
    },
    /// Before any other: a policy layer of kind `kind` is scoped to `dep` (once per layer,
    /// outermost first); `breaker`: a breaker, whose open time is counted.
    LayerScoped {
        /// The dependency.
        dep: u16,
        /// The layer's policy kind.
        kind: &'static str,
        /// The layer is a breaker.
        breaker: bool,
    },
    /// On one instance, a breaker scoped to `dep` opened (`delta` 1) or stopped being open
    /// (-1).
    BreakerOpen {
        /// When.
        now: Time,
        /// The dependency.
        dep: u16,
        /// +1 or -1.
        delta: i8,
    },
}

impl GraphEvent {
    /// The time that decides where it counts: its own for a happening at a dependency (a
    /// phase's recorder takes those up to its end), its request's arrival for a call.
    pub fn at(&self) -> Time {
        match *self {
            GraphEvent::Start { now, .. }
            | GraphEvent::End { now, .. }
            | GraphEvent::Cancelled { now, .. }
            | GraphEvent::Pool { now, .. }
            | GraphEvent::BreakerOpen { now, .. } => now,
            GraphEvent::Call { arrived, .. }
            | GraphEvent::CallEnded { arrived, .. }
            | GraphEvent::StepDecided { arrived, .. }
            | GraphEvent::ConnWait { arrived, .. } => arrived,
            GraphEvent::UsesPool { .. } | GraphEvent::LayerScoped { .. } => 0,
        }
    }
}

/// A recorder's figures of a service graph: per dependency, per class the causes by
/// dependency, and per call of each plan. Empty (every call a no-op) without a graph.
#[derive(Debug, Clone, Default)]
pub(super) struct GraphAcc {
    names: Vec<String>,
    deps: Vec<DepAcc>,
    /// Per class, the causes by dependency blamed (the last entry: no call to blame).
    causes: Vec<Vec<CauseTally>>,
    /// Per class, its plan's calls (none for a class without a plan).
    calls: Vec<Vec<CallAcc>>,
    /// Per class, the summed latency (ns) of its measured finished requests.
    time: Vec<u64>,
    /// The connection pools the dependencies use, by pool number (`GraphEvent::UsesPool`).
    pools: Vec<PoolAcc>,
    warmup: Time,
}

impl GraphAcc {
    /// The accumulators of a graph with dependencies `names`, the classes' `plans` (call by
    /// call) and measuring from `warmup`.
    pub(super) fn new(names: &[String], plans: &[Vec<PlanCallInfo>], warmup: Time) -> Self {
        Self {
            names: names.to_vec(),
            deps: vec![DepAcc::new(warmup); names.len()],
            causes: vec![vec![CauseTally::default(); names.len() + 1]; plans.len()],
            calls: plans.iter().map(|p| p.iter().cloned().map(CallAcc::new).collect()).collect(),
            time: vec![0; plans.len()],
            pools: Vec::new(),
            warmup,
        }
    }

    /// Pool `pool`'s gauge on `instance` (grown as instances appear).
    fn pool_gauge(&mut self, pool: u8, instance: u32) -> &mut Gauge {
        let p = &mut self.pools[pool as usize];
        if p.per_instance.len() <= instance as usize {
            let g = Gauge::new(0.0, self.warmup, f64::from(p.size));
            p.per_instance.resize(instance as usize + 1, g);
        }
        &mut p.per_instance[instance as usize]
    }

    /// Count `e`, measured from `warmup`.
    pub(super) fn apply(&mut self, e: GraphEvent, warmup: Time) {
        let measured = e.at() >= warmup;
        match e {
            GraphEvent::Start { now, dep, in_flight } => self.deps[dep as usize].start(now, measured, in_flight),
            GraphEvent::End { now, dep, timing, abandoned, in_flight } => {
                self.deps[dep as usize].end(now, measured, timing, abandoned, in_flight)
            }
            GraphEvent::Cancelled { now, dep, in_flight } => {
                self.deps[dep as usize].cancelled(now, measured, in_flight)
            }
            GraphEvent::UsesPool { dep, pool, size } => {
                if self.pools.len() <= pool as usize {
                    self.pools.resize(pool as usize + 1, PoolAcc { size: 0, per_instance: Vec::new() });
                }
                self.pools[pool as usize].size = size;
                self.deps[dep as usize].pool = Some(pool as usize);
            }
            GraphEvent::Pool { now, instance, pool, in_use } => {
                self.pool_gauge(pool, instance).set(now, f64::from(in_use))
            }
            GraphEvent::LayerScoped { dep, kind, breaker } => {
                let d = &mut self.deps[dep as usize];
                d.layers.push(kind);
                d.breakers += u32::from(breaker);
            }
            GraphEvent::BreakerOpen { now, dep, delta } => self.deps[dep as usize].open.add(now, f64::from(delta)),
            _ if !measured => {}
            GraphEvent::ConnWait { dep, waited, .. } => {
                let w = &mut self.deps[dep as usize].conn_wait;
                *w = (w.0 + waited, w.1 + 1);
            }
            GraphEvent::Call { dep, attempts, .. } => self.deps[dep as usize].call(attempts),
            GraphEvent::CallEnded { class, call, outcome, .. } => self.calls[class][call as usize].ended(outcome),
            GraphEvent::StepDecided { class, call, ns, .. } => self.calls[class][call as usize].decided(ns),
        }
    }

    /// A measured request of `class` finished after `latency` (ns), not in time for `cause`
    /// (None: in time), which goes to `blame`'s dependency: the critical path's when it is
    /// late, the failed call's otherwise.
    pub(super) fn finished(&mut self, class: usize, latency: Time, cause: Option<Cause>, blame: Blame) {
        if self.causes.is_empty() {
            return;
        }
        self.time[class] += latency;
        if let Some(c) = cause {
            self.blame(class, if c == Cause::Late { blame.critical } else { blame.failed }, c);
        }
    }

    /// Count one measured cause against the dependency `dep` (None: no call is to blame).
    pub(super) fn blame(&mut self, class: usize, dep: Option<u16>, cause: Cause) {
        if let Some(row) = self.causes.get_mut(class) {
            let k = dep.map_or(row.len() - 1, usize::from);
            row[k].bump(cause);
        }
    }

    /// Each dependency's figures, with each class's causes by dependency and per-call figures
    /// written into `classes`, at `now` over `span` measured nanoseconds (`inst_span`
    /// instance-nanoseconds).
    pub(super) fn figures(
        &mut self,
        now: Time,
        span: f64,
        inst_span: f64,
        classes: &mut [ClassSummary],
    ) -> Vec<DependencyFigures> {
        for (k, c) in classes.iter_mut().enumerate().filter(|(k, _)| *k < self.causes.len()) {
            let names = self.names.iter().map(|n| Some(n.clone())).chain([None]);
            c.causes_by_dependency = names
                .zip(&self.causes[k])
                .map(|(dependency, t)| DependencyCauses { dependency, causes: t.causes() })
                .filter(|d| d.causes.total() > 0)
                .collect();
            c.calls = self.calls[k].iter().map(|call| call.figures(self.time[k])).collect();
        }
        let pools = &mut self.pools;
        self.deps.iter_mut().zip(&self.names).map(|(d, name)| d.figures(name, now, span, inst_span, pools)).collect()
    }
}
