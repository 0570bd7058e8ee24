//! The event handler: requests flow through worker slots, the policy stack, the pool and
//! the dependency. See `model` for the overview and ARCHITECTURE.md for the invariants.

/// Decrement a count of live things; going below zero is a bug in the world, caught where
/// it happens in builds with debug assertions (the `ci` test profile).
macro_rules! dec {
    ($x:expr) => {{
        debug_assert!($x > 0, concat!(stringify!($x), " decremented below zero"));
        $x -= 1;
    }};
}

mod calls;
#[cfg(debug_assertions)]
mod invariants;
mod lifecycle;
mod outcome;
mod stack;
mod waitq;

use std::collections::VecDeque;

use rand::SeedableRng;

use super::catalogue::Stock;
use super::records::{AttemptRecord, CallRecord, Origin, Records, RequestRecord};
use super::{Model, RunOptions, RunResult};
use crate::engine::{self, Counter, EventQueue, Handler, Slab, Stream, Time, Token, label_hash, stream};
use crate::metrics::{OrderEffect, Outcome, Recorder, RecorderSetup};
use crate::policy::{
    Admission, Attempt, BreakerState, BuildCtx, CallOutcome, ClassId, Completed, Policy, Refusal, RetryAsk, Status,
};
use crate::scenario::{Balancing, Fallback, PartitionMode, Scope};

/// Most layers one policy stack may have (a limit of the file format, checked there).
pub use crate::scenario::MAX_LAYERS;

const RETRY: u64 = label_hash("policy/retry-jitter");
const ORDERS: u64 = label_hash("business/orders");
const SUBST: u64 = label_hash("business/substitution");
const WORK: u64 = label_hash("class/work");
const RELOAD: u64 = label_hash("class/reload");
const BALANCE: u64 = label_hash("dependency/balancing");
const ITEM: u64 = label_hash("class/item");
const THINK: u64 = label_hash("class/think");
const USER_KEY: u64 = label_hash("key/user");
const RELOAD_KEY: u64 = label_hash("key/reload");

/// The top bit marks keys derived from another identity (a closed-loop user's request, a
/// reload), so they never meet the keys 0, 1, 2, ... of open-loop arrivals.
const DERIVED: u64 = 1 << 63;

/// The world's counter-based draws, one per label, keyed once per run (see [`Counter`]).
#[derive(Debug, Clone, Copy)]
struct Draws {
    retry: Counter,
    orders: Counter,
    subst: Counter,
    work: Counter,
    reload: Counter,
    balance: Counter,
    item: Counter,
    think: Counter,
    user_key: Counter,
    reload_key: Counter,
}

impl Draws {
    fn new(seed: u64) -> Self {
        Self {
            retry: Counter::new(seed, RETRY),
            orders: Counter::new(seed, ORDERS),
            subst: Counter::new(seed, SUBST),
            work: Counter::new(seed, WORK),
            reload: Counter::new(seed, RELOAD),
            balance: Counter::new(seed, BALANCE),
            item: Counter::new(seed, ITEM),
            think: Counter::new(seed, THINK),
            user_key: Counter::new(seed, USER_KEY),
            reload_key: Counter::new(seed, RELOAD_KEY),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    SlotWait,
    LocalWork,
    LayerWait,
    Attempt,
    Backoff,
    Unwind,
    Respond,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    Arrival { class: ClassId },
    User { class: ClassId, user: u32, k: u32 },
    Timer { req: Token, generation: u32, timer: Timer },
    DepDone { call: Token },
    Hedge { req: Token, generation: u32 },
    Notice { token: Token },
    Reload { class: ClassId, token: Token },
    Restart { instance: u32, policies: bool, cache: bool },
    Wake { instance: u32, layer: u8, generation: u32 },
    Tick,
}

// Events are copied through the queue on every push and pop: keep them two words.
const _: () = assert!(std::mem::size_of::<Ev>() == 16);

impl Ev {
    fn code(&self) -> u64 {
        match self {
            Ev::Arrival { class } => 1 + ((*class as u64) << 8),
            Ev::User { class, .. } => 2 + ((*class as u64) << 8),
            Ev::Timer { timer, .. } => 3 + ((*timer as u64) << 8),
            Ev::DepDone { .. } => 4,
            Ev::Wake { layer, .. } => 5 + ((*layer as u64) << 8),
            Ev::Tick => 6,
            Ev::Hedge { .. } => 10,
            Ev::Notice { .. } => 7,
            Ev::Reload { class, .. } => 8 + ((*class as u64) << 8),
            Ev::Restart { instance, .. } => 9 + ((*instance as u64) << 8),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    SlotQueue,
    Local,
    LayerQueue,
    PoolQueue,
    Calling,
    Backoff,
    Unwinding,
    Responding,
}

/// Why a request arrives; it decides the request's key, so that a request's draws never
/// depend on what other requests did (common random numbers across policy sets).
#[derive(Debug, Clone, Copy)]
enum Source {
    /// The next open-loop arrival of its class: keyed by its number in the class.
    Arrival,
    /// Closed-loop user `user`'s `k`-th request: keyed by (class, user, k).
    User { user: u32, k: u32 },
    /// Reload `number` of the request keyed `origin`, for the same item: keyed by (origin, number).
    Reload { origin: u64, number: u32, item: u32 },
}

/// A reload on its way (kept beside the queue so that events stay small).
#[derive(Debug, Clone, Copy)]
struct PendingReload {
    origin: u64,
    number: u32,
    item: u32,
}

#[derive(Debug, Clone)]
struct Req {
    class: ClassId,
    instance: u32,
    /// The key of every counter-based draw for this request (see [`Source`]).
    key: u64,
    /// The key of the request this one reloads (its own key if it is no reload).
    origin: u64,
    arrived: Time,
    item: u32,
    generation: u32,
    phase: Phase,
    attempt: u32,
    attempt_id: u64,
    pos: u8,
    admitted_at: [Time; MAX_LAYERS],
    attempt_deadline: Time,
    unwind: Time,
    wait_since: Time,
    /// An attempt timer is pending for the current call (none when the answer was due first).
    timed: bool,
    call: Option<Token>,
    hedge: Option<Token>,
    hedge_generation: u32,
    conns: u8,
    worker: bool,
    calls: u32,
    /// Closed-loop (user, request number).
    user: Option<(u32, u32)>,
    outcome: Outcome,
    staleness: Option<(Time, bool)>,
    reloads: u32,
}

/// A cancellation or completion on its way to a layer.
#[derive(Debug, Clone, Copy)]
enum Notice {
    Cancel(Attempt),
    Complete(Completed),
}

#[derive(Debug, Clone, Copy)]
struct Call {
    req: Option<Token>,
    served_at: Time,
    /// When the answer reaches the caller, once service has started (MAX while queued).
    done_at: Time,
    error: bool,
    holds_server: bool,
    reached: bool,
    counted: bool,
    replica: u32,
    instance: u32,
    class: ClassId,
    key: u64,
    attempt: u32,
}

struct LayerRt {
    policy: Box<dyn Policy>,
    queue: waitq::WaitQueue,
    waiting: u32,
    wake: Option<Time>,
    wake_generation: u32,
    last: Status,
    /// The policy reports status changes (`Policy::reports_status`); `note` skips it if not.
    watch: bool,
}

struct Inst {
    workers: u32,
    worker_q: VecDeque<Token>,
    worker_waiting: u32,
    conns: u32,
    pool_q: VecDeque<Token>,
    pool_waiting: u32,
    layers: Vec<LayerRt>,
    degraded: u32,
    outstanding: Vec<u32>,
    rr: u32,
}

struct World<'m> {
    m: &'m Model,
    reqs: Slab<Req>,
    calls: Slab<Call>,
    insts: Vec<Inst>,
    class_layers: Vec<Vec<u8>>,
    inner_start: Vec<u8>,
    arrivals: Vec<super::arrivals::ArrivalGen>,
    arrival_rng: Vec<Stream>,
    item_rng: Vec<Stream>,
    draws: Draws,
    next_index: Vec<u64>,
    next_attempt_id: u64,
    dep_busy: Vec<u32>,
    dep_q: Vec<VecDeque<Token>>,
    dep_in_flight: u64,
    stock: Option<Stock>,
    rec: Recorder,
    pump: Vec<(u32, u8)>,
    fleet: Vec<Option<Time>>,
    notices: Slab<(u32, u8, Notice)>,
    pending_reloads: Slab<PendingReload>,
    /// Per-request and per-attempt records, when asked for (`run_policy_recorded`).
    log: Option<Box<Records>>,
    breaker_layer: Option<u8>,
    limit_layer: Option<u8>,
    trace: u64,
    trace_log: Vec<(Time, u64)>,
    trace_limit: usize,
    requests: u64,
    horizon: Time,
    abort: Option<String>,
    policy: usize,
    handled: u64,
}

pub(super) fn run(m: &Model, policy: usize, opts: RunOptions, record: bool) -> (RunResult, Records) {
    let s = &m.scenario;
    let set = &s.policies[policy];
    let mut q: EventQueue<Ev> = EventQueue::new();
    let mut w = World::new(m, policy, opts.timeseries);
    w.trace_limit = opts.trace_limit;
    w.log = record.then(Box::default);
    for c in 0..w.arrivals.len() {
        let class = c as ClassId;
        for user in 0..w.arrivals[c].initial_users() {
            let think = w.think(class, user, 0);
            q.schedule_at(think, Ev::User { class, user, k: 0 });
        }
        if let Some(t) = w.arrivals[c].next(0, &mut w.arrival_rng[c]) {
            // Scripted times may start at 0; Poisson starts after one gap.
            q.schedule_at(t, Ev::Arrival { class: c as ClassId });
        }
    }
    q.schedule_at(s.window.ns().min(w.horizon), Ev::Tick);
    // Timers that policies ask for when they are built.
    for (i, inst) in w.insts.iter_mut().enumerate() {
        for (l, layer) in inst.layers.iter_mut().enumerate() {
            if let Some(t) = layer.last.wake_at {
                layer.wake = Some(t);
                layer.wake_generation = layer.wake_generation.wrapping_add(1);
                let generation = layer.wake_generation;
                q.schedule_at(t, Ev::Wake { instance: i as u32, layer: l as u8, generation });
            }
        }
    }
    for r in &s.fleet.restarts {
        for (k, &instance) in r.instances.iter().enumerate() {
            let at = r.at.ns().saturating_add((k as Time).saturating_mul(r.interval.ns()));
            q.schedule_at(at, Ev::Restart { instance, policies: r.persistent_policies, cache: r.persistent_cache });
        }
    }
    let horizon = w.horizon;
    let stats = engine::run(&mut w, &mut q, horizon);
    let end = if w.abort.is_some() { stats.end } else { w.horizon };
    if w.abort.is_none() && stats.end < w.horizon {
        // The queue ran dry before the horizon; close the remaining windows.
        let mut t = (stats.end / s.window.ns() + 1).saturating_mul(s.window.ns());
        while t < w.horizon {
            w.rec.tick(t);
            t = t.saturating_add(s.window.ns());
        }
        w.rec.tick(w.horizon);
    }
    #[cfg(debug_assertions)]
    w.check_invariants();
    let in_flight = w.reqs.len() as u64;
    let mut summary = w.rec.summary(end, stats.events, in_flight);
    summary.policy = set.name.clone();
    let result = RunResult {
        summary,
        rows: if opts.timeseries { w.rec.take_rows() } else { Vec::new() },
        trace_hash: w.trace,
        end,
        requests: w.requests,
        aborted: w.abort,
        trace: w.trace_log,
    };
    (result, w.log.map(|l| *l).unwrap_or_default())
}

impl<'m> World<'m> {
    fn new(m: &'m Model, policy: usize, timeseries: bool) -> Self {
        let s = &m.scenario;
        let set = &s.policies[policy];
        let n = s.fleet.instances;
        let class_names: Vec<String> = s.classes.iter().map(|c| c.name.clone()).collect();
        let replicas = s.dependency.replicas.as_ref().map_or(1, |r| r.count as usize);
        let insts: Vec<Inst> = (0..n)
            .map(|instance| Inst {
                workers: 0,
                worker_q: VecDeque::new(),
                worker_waiting: 0,
                conns: 0,
                pool_q: VecDeque::new(),
                pool_waiting: 0,
                layers: set
                    .stack
                    .iter()
                    .map(|l| {
                        let ctx = BuildCtx {
                            classes: class_names.clone(),
                            instance,
                            instances: n,
                            plugins: m.plugins.clone(),
                        };
                        let policy = l.policy.build(&ctx);
                        let last = policy.status();
                        let watch = policy.reports_status();
                        LayerRt {
                            policy,
                            queue: waitq::WaitQueue::default(),
                            waiting: 0,
                            wake: None,
                            wake_generation: 0,
                            last,
                            watch,
                        }
                    })
                    .collect(),
                degraded: 0,
                outstanding: vec![0; replicas],
                rr: instance,
            })
            .collect();
        let class_layers: Vec<Vec<u8>> = s
            .classes
            .iter()
            .map(|c| {
                set.stack
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.classes.is_empty() || l.classes.contains(&c.name))
                    .map(|(i, _)| i as u8)
                    .collect()
            })
            .collect();
        let inner_start = class_layers
            .iter()
            .map(|ls| ls.iter().position(|&l| insts[0].layers[l as usize].policy.is_retry()).unwrap_or(0) as u8)
            .collect();
        let first = |f: &dyn Fn(&Status) -> bool| insts[0].layers.iter().position(|l| f(&l.last)).map(|i| i as u8);
        let breaker_layer = first(&|st| st.breaker.is_some());
        let limit_layer = first(&|st| st.limit.is_some());
        let b = s.business.as_ref();
        let rec = Recorder::new(RecorderSetup {
            policy: set.name.clone(),
            classes: s.classes.iter().map(|c| c.name.clone()).collect(),
            deadlines: s.classes.iter().map(|c| c.deadline.ns()).collect(),
            instances: n,
            slots: s.fleet.workers.slots,
            connections: s.fleet.pool.max_connections,
            warmup: s.warmup.ns(),
            horizon: s.horizon.ns(),
            window: s.window.ns(),
            has_breaker: breaker_layer.is_some(),
            has_limit: limit_layer.is_some(),
            costs: b.map_or((0.0, 0.0, 0.0), |b| (b.substitution_cost, b.refund_cost, b.lost_order_cost)),
            timeseries,
        });
        let mut w = Self {
            m,
            reqs: Slab::new(),
            calls: Slab::new(),
            insts,
            class_layers,
            inner_start,
            arrivals: m.arrivals.clone(),
            arrival_rng: s.classes.iter().map(|c| stream(m.seed, &format!("arrivals/{}", c.name))).collect(),
            item_rng: s.classes.iter().map(|c| stream(m.seed, &format!("items/{}", c.name))).collect(),
            draws: Draws::new(m.seed),
            next_index: vec![0; s.classes.len()],
            next_attempt_id: 0,
            dep_busy: vec![0; replicas],
            dep_q: vec![VecDeque::new(); replicas],
            dep_in_flight: 0,
            stock: s.catalogue.as_ref().map(|c| Stock::new(c, n, m.seed)),
            rec,
            pump: Vec::new(),
            fleet: set
                .stack
                .iter()
                .map(|l| match l.scope {
                    Scope::Instance => None,
                    Scope::Fleet { propagation } => Some(propagation.ns()),
                })
                .collect(),
            notices: Slab::new(),
            pending_reloads: Slab::new(),
            log: None,
            breaker_layer,
            limit_layer,
            trace: 0xcbf2_9ce4_8422_2325,
            trace_log: Vec::new(),
            trace_limit: 0,
            requests: 0,
            horizon: s.horizon.ns(),
            abort: None,
            policy,
            handled: 0,
        };
        for i in 0..n {
            if let Some(l) = w.limit_layer {
                let v = w.insts[i as usize].layers[l as usize].last.limit.unwrap_or(0.0);
                w.rec.limit(0, i, v);
            }
        }
        w
    }

    fn timer(&mut self, q: &mut EventQueue<Ev>, tok: Token, at: Time, timer: Timer) {
        let generation = self.bump_generation(tok);
        q.schedule_at(at, Ev::Timer { req: tok, generation, timer });
    }

    /// A timer `delay` from now for a delay that recurs (overhead, a configured wait limit):
    /// the queue keeps such timers in a first-in-first-out line per delay.
    fn timer_fixed(&mut self, q: &mut EventQueue<Ev>, tok: Token, delay: Time, timer: Timer) {
        let generation = self.bump_generation(tok);
        q.schedule_fixed(delay, Ev::Timer { req: tok, generation, timer });
    }

    /// Supersede the request's pending timer (it becomes a tombstone); the new generation.
    fn bump_generation(&mut self, tok: Token) -> u32 {
        let r = self.reqs.get_mut(tok).expect("live request");
        r.generation = r.generation.wrapping_add(1);
        r.generation
    }

    fn on_timer(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, generation: u32, timer: Timer) {
        match self.reqs.get(tok) {
            Some(r) if r.generation == generation => {}
            _ => return, // a tombstone: the timer was superseded
        }
        match timer {
            Timer::SlotWait => {
                let r = self.reqs.get_mut(tok).expect("live request");
                r.phase = Phase::Responding;
                let (inst, class, arrived) = (r.instance, r.class, r.arrived);
                dec!(self.insts[inst as usize].worker_waiting);
                self.rec.slot_wait(arrived, class as usize, now - arrived);
                self.respond(now, q, tok, Outcome::Rejected, None);
            }
            Timer::LocalWork => self.after_local(now, q, tok),
            Timer::LayerWait => {
                let r = self.reqs.get_mut(tok).expect("live request");
                let (class, inst, pos) = (r.class as usize, r.instance, r.pos as usize);
                r.phase = Phase::Backoff; // out of the queue (lazily removed)
                let l = self.class_layers[class][pos];
                dec!(self.layer_mut(inst, l).waiting);
                self.refused(now, q, tok, Refusal::Rejected);
            }
            Timer::Attempt => self.attempt_timer(now, q, tok),
            Timer::Backoff => self.begin_attempt(now, q, tok),
            Timer::Unwind => self.conclude(now, q, tok, Outcome::Timeout, false),
            Timer::Respond => self.finish(now, q, tok),
        }
    }
}

impl Handler<Ev> for World<'_> {
    fn handle(&mut self, now: Time, ev: Ev, q: &mut EventQueue<Ev>) {
        self.handled += 1;
        if self.handled > self.m.scenario.limits.max_events {
            self.abort = Some(format!(
                "runaway scenario: more than {} events at t={} (limits.max_events)",
                self.m.scenario.limits.max_events,
                engine::fmt_time(now)
            ));
            return;
        }
        let code = ev.code();
        self.trace = (self.trace ^ now ^ code.rotate_left(32)).wrapping_mul(0x0000_0100_0000_01b3);
        if self.trace_log.len() < self.trace_limit {
            self.trace_log.push((now, code));
        }
        match ev {
            Ev::Arrival { class } => {
                let c = class as usize;
                if let Some(t) = self.arrivals[c].next(now, &mut self.arrival_rng[c])
                    && t <= self.horizon
                {
                    q.schedule_at(t.max(now), Ev::Arrival { class });
                }
                self.arrive(now, q, class, Source::Arrival);
            }
            Ev::User { class, user, k } => self.arrive(now, q, class, Source::User { user, k }),
            Ev::Reload { class, token } => {
                let p = self.pending_reloads.remove(token).expect("live reload");
                self.arrive(now, q, class, Source::Reload { origin: p.origin, number: p.number, item: p.item });
            }
            Ev::Notice { token } => {
                let (inst, l, notice) = self.notices.remove(token).expect("live notice");
                self.apply_notice(now, q, inst, l, notice);
            }
            Ev::Restart { instance, policies, cache } => self.restart(now, q, instance, policies, cache),
            Ev::Timer { req, generation, timer } => self.on_timer(now, q, req, generation, timer),
            Ev::DepDone { call } => self.dep_done(now, q, call),
            Ev::Hedge { req, generation } => self.hedge(now, q, req, generation),
            Ev::Wake { instance, layer, generation } => {
                let lr = self.layer_mut(instance, layer);
                if lr.wake_generation == generation {
                    lr.wake = None;
                    lr.last.wake_at = None;
                    lr.policy.on_wakeup(now);
                    self.note(now, q, instance, layer);
                    self.pump.push((instance, layer));
                }
            }
            Ev::Tick => {
                #[cfg(debug_assertions)]
                self.check_invariants();
                self.rec.tick(now);
                let next = now.saturating_add(self.m.scenario.window.ns());
                if now < self.horizon {
                    q.schedule_at(next.min(self.horizon), Ev::Tick);
                }
            }
        }
        if !self.pump.is_empty() {
            self.pump_layers(now, q);
        }
        if q.len() as u64 > self.m.scenario.limits.max_in_flight.saturating_mul(4).saturating_add(1024) {
            self.abort = Some(format!(
                "runaway scenario: more than {} pending events at t={} (limits.max_in_flight x 4)",
                q.len(),
                engine::fmt_time(now)
            ));
        }
    }

    fn halted(&self) -> bool {
        self.abort.is_some()
    }
}
