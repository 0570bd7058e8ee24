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

mod backlog;
mod build;
mod calls;
mod conns;
mod events;
#[cfg(test)]
mod feature_forms;
mod features;
#[cfg(test)]
mod forms;
#[cfg(test)]
mod guards;
mod health;
mod inactivity;
#[cfg(debug_assertions)]
mod invariants;
mod lifecycle;
mod outcome;
mod plan;
mod replicas;
mod services;
mod sharing;
mod stack;
mod state;
mod waitq;

use std::collections::VecDeque;

use super::catalogue::Stock;
use super::fallback::LastAnswers;
use super::records::{AttemptRecord, CallRecord, Origin, Records, RequestRecord};
use super::{Model, RunError, RunOptions, RunResult};
use crate::engine::{self, Counter, EventQueue, Handler, Slab, Time, Token, label_hash, stream};
use crate::metrics::events::EventLog;
use crate::metrics::{Cause, LayerKind, OrderEffect, Outcome, Record, Recorder, RecorderSetup, Recorders};
use crate::policy::{
    Admission, Attempt, BreakerState, BuildCtx, CallOutcome, ClassId, Completed, Failure, Hooks, Refusal, Refused,
    RetryAsk, Status,
};
use crate::scenario::{Balancing, Fallback, PartitionMode, Scope};
use conns::Checkout;
use features::{Features, Form, General, Lean, Uses};
use state::{
    Answer, Call, Client, Gateway, Identity, Inst, LayerRt, Layout, OwnPool, Phase, Plans, Progress, Req, Trace,
    Traffic, Upstream,
};

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
    ServiceEnd { call: Token },
    Connected { call: Token },
    Shared { replica: u32, generation: u32 },
    Cancel { call: Token },
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
            Ev::Cancel { .. } => 11,
            Ev::ServiceEnd { .. } => 12,
            Ev::Shared { .. } => 13,
            Ev::Connected { .. } => 14,
            Ev::Notice { .. } => 7,
            Ev::Reload { class, .. } => 8 + ((*class as u64) << 8),
            Ev::Restart { instance, .. } => 9 + ((*instance as u64) << 8),
        }
    }
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

/// A cancellation or completion on its way to a layer.
#[derive(Debug, Clone, Copy)]
enum Notice {
    Cancel(Attempt),
    Complete(Completed),
}

/// One run of one policy set: the state the event handler owns, grouped by what owns it
/// (see `state.rs` for each field's unit, writers and readers). `R` is the recorder form,
/// `F` the features the world is compiled for (`features.rs`), both chosen once per run.
struct World<'m, R, F = General> {
    /// The scenario's immutable part, shared by every run (read only).
    m: &'m Model,
    /// The policy set this run simulates (index into `m.scenario.policies`).
    policy: usize,
    /// Requests in flight, by token: inserted by `lifecycle::arrive`, removed by
    /// `outcome::finish`.
    reqs: Slab<Req>,
    /// When each layer position admitted a request's current attempt (ns), `layout.depth`
    /// entries per slab slot of `reqs`: out of `Req`, so a request in flight spans fewer
    /// cache lines (BENCHMARKS.md, "fleets II"); zeroed at arrival.
    admitted: Vec<Time>,
    /// The id of each request's first attempt, by slab slot of `reqs` (out of `Req` for the
    /// same reason as `admitted`): the id the layers outside the retry layer admitted, and
    /// must hear back at completion (`stack::id_at`), and when it entered the stack, what a
    /// `Retry`'s `max_elapsed` counts from (`outcome::retry_after`). Written by
    /// `stack::begin_attempt`.
    first_ids: Vec<(u64, Time)>,
    /// Where requests come from: arrivals, closed-loop users, reloads.
    traffic: Traffic,
    /// The gateway instances: worker slots, pools, policy stacks.
    gateway: Gateway,
    /// The policy stack's shape, fixed for the run.
    layout: Layout,
    /// The dependency's side of the calls.
    upstream: Upstream,
    /// The call plans' state (empty without plans).
    plans: Plans,
    /// Where the services sit among instances and plan ids (`services.rs`).
    svc: services::Svc,
    /// Counter-based draws, keyed once per run.
    draws: Draws,
    /// True stock and the fallback caches, when there is a catalogue.
    stock: Option<Stock>,
    /// Each class's last answer, for `LastAnswer` fallbacks (written on a success, read by
    /// `outcome::conclude`, cleared with an instance's caches on restart).
    last_answers: Option<LastAnswers>,
    /// The metrics, whole run and per phase. Every file reports what happens to it.
    rec: R,
    /// Event hash, first events and opt-in records.
    trace: Trace,
    /// Horizon, event count and the guards' verdict.
    progress: Progress,
    /// Told the simulated time at every window tick (progress display; never read back).
    observer: Option<&'m (dyn Fn(Time) + Sync)>,
    /// The world's form (`features.rs`): no state, only the type.
    form: std::marker::PhantomData<F>,
}

pub(super) fn run<'m>(
    m: &'m Model,
    policy: usize,
    opts: RunOptions,
    record: bool,
    observer: Option<&'m (dyn Fn(Time) + Sync)>,
    sink: Option<Box<dyn crate::metrics::RowSink>>,
) -> Result<(RunResult, Records), RunError> {
    let input = RunInput { m, policy, opts, record, observer, sink };
    // Chosen once per run rather than branched on per call: a world without phases records
    // straight into the whole run's recorder, so phases cost nothing when off (BENCHMARKS.md,
    // "phases' cost when off").
    // The features are chosen the same way (`features.rs`), and apart from the recorder: the
    // leanest compiled form that keeps every feature the run uses, with or without phases.
    let form = Form::leanest(input.uses());
    if crate::scenario::phases_of(&m.scenario).is_empty() {
        run_form::<Recorder>(form, input)
    } else {
        run_form::<Recorders>(form, input)
    }
}

/// What one run is asked to do: `run`'s arguments, handed on whole to the form that runs it.
struct RunInput<'m> {
    m: &'m Model,
    policy: usize,
    opts: RunOptions,
    /// Keep per-request records (`run_policy_recorded`).
    record: bool,
    observer: Option<&'m (dyn Fn(Time) + Sync)>,
    sink: Option<Box<dyn crate::metrics::RowSink>>,
}

impl<'m> RunInput<'m> {
    /// Run `policy` of `m` with `opts`, keeping nothing beyond the summary (tests).
    #[cfg(test)]
    fn plain(m: &'m Model, policy: usize, opts: RunOptions) -> Self {
        Self { m, policy, opts, record: false, observer: None, sink: None }
    }

    /// The features this run uses (`features.rs`).
    fn uses(&self) -> Uses {
        Uses::of(self.m, self.policy, &self.opts, self.record)
    }
}

/// Runs in recorder form `R` and the compiled form `form` stands for: the one place a
/// [`Form`] becomes its type.
fn run_form<R: Record>(form: Form, input: RunInput<'_>) -> Result<(RunResult, Records), RunError> {
    match form {
        Form::Lean => run_as::<R, Lean<false, false>>(input),
        Form::LeanStack => run_as::<R, Lean<true, false>>(input),
        Form::LeanStackExtras => run_as::<R, Lean<true, true>>(input),
        Form::General => run_as::<R, General>(input),
    }
}

fn run_as<R: Record, F: Features>(input: RunInput<'_>) -> Result<(RunResult, Records), RunError> {
    let RunInput { m, policy, opts, record, observer, sink } = input;
    // A form that drops a feature the run uses would report another run: refuse it.
    assert!(F::covers(Uses::of(m, policy, &opts, record)), "a world form without a feature the run uses");
    let mut q: EventQueue<Ev> = EventQueue::new();
    let mut w = World::<R, F>::new(m, policy, opts.timeseries);
    w.observer = observer;
    if let Some(sink) = sink.filter(|_| opts.timeseries) {
        w.rec.set_sink(sink);
    }
    w.trace.limit = opts.trace_limit;
    w.trace.records = record.then(Box::default);
    w.trace.log = (opts.events > 0).then(|| Box::new(EventLog::new(opts.events)));
    w.schedule_start(&mut q);
    let horizon = w.progress.horizon;
    let stats = engine::run(&mut w, &mut q, horizon);
    let window = m.scenario.window.ns();
    if w.progress.abort.is_none() && stats.end < horizon {
        // The queue ran dry before the horizon; close the remaining windows.
        let mut t = (stats.end / window + 1).saturating_mul(window);
        while t < horizon {
            w.rec.tick(t);
            t = t.saturating_add(window);
        }
        w.rec.tick(horizon);
    }
    #[cfg(debug_assertions)]
    w.check_invariants();
    if let Some(e) = w.progress.abort {
        return Err(e);
    }
    // Calls of plans and services' requests are no requests of the gateway's.
    let in_flight = w.reqs.len() as u64 - w.plans.children - w.svc.live;
    w.judge_unfinished(horizon);
    let (mut summary, mut phases) = w.rec.summaries(horizon, stats.events, in_flight);
    crate::model::slo::annotate(&m.scenario, horizon, &mut summary, &mut phases);
    summary.backlog_at_end = w.backlog();
    for p in &mut phases {
        p.backlog_at_end = summary.backlog_at_end;
    }
    summary.policy = m.scenario.policies[policy].name.clone();
    let result = RunResult {
        summary,
        phases,
        rows: if opts.timeseries { w.rec.take_rows() } else { Vec::new() },
        trace_hash: w.trace.hash,
        peak_pending: q.peak_len() as u64,
        end: horizon,
        requests: w.traffic.arrived,
        trace: w.trace.events,
        log: w.trace.log.map(|l| *l).unwrap_or_default(),
    };
    Ok((result, w.trace.records.map(|l| *l).unwrap_or_default()))
}

impl<R: Record, F: Features> World<'_, R, F> {
    /// At the horizon, hand the recorder every request still in flight, so none vanishes from
    /// the figures: the recorder judges those past their deadline and counts the others apart
    /// (slab order: deterministic, and the counts do not depend on it anyway).
    fn judge_unfinished(&mut self, horizon: Time) {
        for tok in self.reqs.tokens() {
            if self.is_child(tok) {
                continue; // a call of a plan: its request is judged
            }
            let r = self.reqs.get(tok).expect("a listed token is live");
            if self.is_service_class(r.who.class) {
                continue; // a service's: the request behind its call is judged
            }
            let (class, arrived) = (r.who.class as usize, r.time.arrived);
            self.rec.at_horizon(horizon, class, arrived);
        }
    }

    /// Count `n` events handled at `now` against `limits.max_events`; true (and the run
    /// aborted) once past it.
    fn count_events(&mut self, now: Time, n: u64) -> bool {
        self.progress.handled += n;
        let limit = self.progress.max_events;
        let past = self.progress.handled > limit;
        if past {
            self.progress.abort = Some(RunError::TooManyEvents { limit, at: now });
        }
        past
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

    /// When layer position `p` admitted the current attempt of request `tok`.
    fn admitted_at(&self, tok: Token, p: usize) -> Time {
        debug_assert!(p < self.layout.depth && self.reqs.get(tok).is_some());
        self.admitted[tok.index as usize * self.layout.depth + p]
    }

    /// Layer position `p` admits the current attempt of request `tok` at `now`.
    fn set_admitted(&mut self, tok: Token, p: usize, now: Time) {
        debug_assert!(p < self.layout.depth && self.reqs.get(tok).is_some());
        self.admitted[tok.index as usize * self.layout.depth + p] = now;
    }

    /// Take in a new request (an arrival or a call of a plan), admitted by no layer yet.
    fn insert_req(&mut self, req: Req) -> Token {
        let tok = self.reqs.insert(req);
        if F::STACK {
            self.clear_admitted(tok); // `admitted` has no column without a layer
        }
        tok
    }

    /// A new request `tok` has been admitted by no layer yet: its row of `admitted`, zeroed.
    fn clear_admitted(&mut self, tok: Token) {
        let depth = self.layout.depth;
        let start = tok.index as usize * depth;
        if self.admitted.len() < start + depth {
            self.admitted.resize(start + depth, 0);
        }
        self.admitted[start..start + depth].fill(0);
    }

    /// Supersede the request's pending timer (it becomes a tombstone); the new generation.
    fn bump_generation(&mut self, tok: Token) -> u32 {
        let r = self.reqs.get_mut(tok).expect("live request");
        r.generation = r.generation.wrapping_add(1);
        r.generation
    }

    /// A request timer still counts: its request lives and has not moved on to another
    /// generation. False stays false (generations only grow), which lets the run loop drop
    /// such tombstones early (`is_stale`).
    fn timer_live(&self, tok: Token, generation: u32) -> bool {
        self.reqs.get(tok).is_some_and(|r| r.generation == generation)
    }

    fn on_timer(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, generation: u32, timer: Timer) {
        if !self.timer_live(tok, generation) {
            return; // a tombstone: the timer was superseded
        }
        match timer {
            Timer::SlotWait => {
                let r = self.reqs.get_mut(tok).expect("live request");
                r.phase = Phase::Responding;
                let (inst, class, arrived) = (r.who.instance, r.who.class, r.time.arrived);
                dec!(self.gateway.insts[inst as usize].worker_waiting);
                self.rec_slot_wait(arrived, class, now - arrived);
                self.fail_as(tok, Cause::WorkerSlotsFull);
                self.respond(now, q, tok, Outcome::Rejected, None);
            }
            Timer::LocalWork => self.after_local(now, q, tok),
            Timer::LayerWait => {
                let r = self.reqs.get_mut(tok).expect("live request");
                let (class, inst, pos) = (r.who.class as usize, r.who.instance, r.attempt.pos as usize);
                r.phase = Phase::Dequeued; // its queue entry is now a tombstone
                let parked = r.time.attempt_start;
                let l = self.layout.class_layers[self.route_of(class, tok)][pos];
                self.layer_waited(now, parked, l);
                dec!(self.layer_mut(inst, l).waiting);
                let att = self.attempt_of(now, tok, l);
                self.layer_mut(inst, l).policy.left_queue(&att);
                self.note(now, q, inst, l);
                if now >= self.request_deadline(tok).0 {
                    self.cut_before_call(now, q, tok);
                } else {
                    let why = self.layer(inst, l).policy.refusal(class as ClassId);
                    self.refused(now, q, tok, l, why);
                }
            }
            Timer::Attempt => self.attempt_timer(now, q, tok),
            Timer::Backoff => self.after_backoff(now, q, tok),
            Timer::Unwind => self.conclude(now, q, tok, Outcome::Timeout, None),
            Timer::Respond => self.finish(now, q, tok),
        }
    }
}

/// Most events that may be pending after an event before the run stops as runaway
/// ([`RunError::TooManyPending`]): four per request in flight allowed, plus room for the
/// fixed ones (arrival streams, users, ticks).
fn max_pending(max_in_flight: u64) -> u64 {
    max_in_flight.saturating_mul(4).saturating_add(1024)
}

impl<R: Record, F: Features> Handler<Ev> for World<'_, R, F> {
    #[inline(always)]
    fn handle(&mut self, now: Time, ev: Ev, q: &mut EventQueue<Ev>) {
        if self.count_events(now, 1) {
            return;
        }
        let code = ev.code();
        self.trace.hash = (self.trace.hash ^ now ^ code.rotate_left(32)).wrapping_mul(0x0000_0100_0000_01b3);
        if F::TRACE && self.trace.events.len() < self.trace.limit {
            self.trace.events.push((now, code));
        }
        match ev {
            Ev::Arrival { class } => {
                let c = class as usize;
                if let Some(t) = self.traffic.arrivals[c].next(now, &mut self.traffic.arrival_rng[c])
                    && t <= self.progress.horizon
                {
                    q.schedule_at(t.max(now), Ev::Arrival { class });
                }
                self.arrive(now, q, class, Source::Arrival);
            }
            Ev::User { class, user, k } => self.arrive(now, q, class, Source::User { user, k }),
            Ev::Reload { class, token } => {
                let p = self.traffic.pending_reloads.remove(token).expect("live reload");
                self.arrive(now, q, class, Source::Reload { origin: p.origin, number: p.number, item: p.item });
            }
            Ev::Notice { token } => {
                let (inst, l, notice) = self.gateway.notices.remove(token).expect("live notice");
                self.apply_notice(now, q, inst, l, notice);
            }
            Ev::Restart { instance, policies, cache } => self.restart(now, q, instance, policies, cache),
            Ev::Timer { req, generation, timer } => self.on_timer(now, q, req, generation, timer),
            Ev::DepDone { call } => self.dep_done(now, q, call),
            Ev::ServiceEnd { call } => self.service_end(now, q, call),
            Ev::Connected { call } => self.connected(now, q, call),
            Ev::Shared { replica, generation } => self.shared_done(now, q, replica as usize, generation),
            Ev::Cancel { call } => self.cancel_call(now, q, call),
            Ev::Hedge { req, generation } => self.hedge(now, q, req, generation),
            Ev::Wake { instance, layer, generation } => {
                let lr = self.layer_mut(instance, layer);
                if lr.wake_generation == generation {
                    lr.wake = None;
                    lr.last.wake_at = None;
                    lr.policy.on_wakeup(now);
                    self.note(now, q, instance, layer);
                    self.gateway.pump.push((instance, layer));
                }
            }
            Ev::Tick => {
                #[cfg(debug_assertions)]
                self.check_invariants();
                self.rec.tick(now);
                if let Some(observe) = self.observer {
                    observe(now);
                }
                let next = now.saturating_add(self.m.scenario.window.ns());
                if now < self.progress.horizon {
                    q.schedule_at(next.min(self.progress.horizon), Ev::Tick);
                }
            }
        }
        if F::STACK && !self.gateway.pump.is_empty() {
            self.pump_layers(now, q);
        }
        if q.len() as u64 > self.progress.max_pending {
            self.progress.abort = Some(RunError::TooManyPending { pending: q.len() as u64, at: now });
        }
    }

    fn swept(&mut self, now: Time, due: u64) {
        // The summary's `events` counts swept tombstones due by the horizon as handled (a run
        // that never swept would have popped them): the guard counts the same events.
        self.count_events(now, due);
    }

    fn halted(&self) -> bool {
        self.progress.abort.is_some()
    }

    /// A request timer whose request ended or whose generation moved on: `on_timer` would
    /// ignore it, now and later (a request's generation only grows). Long wait timers
    /// (one-hour slot and queue waits) are cancelled this way, so dropping them early keeps
    /// the queue O(in flight) rather than O(rate x wait).
    fn is_stale(&self, ev: &Ev) -> bool {
        match *ev {
            Ev::Timer { req, generation, .. } => !self.timer_live(req, generation),
            _ => false,
        }
    }
}

// Hundreds of thousands of requests are in flight in a large fleet, each touched at random:
// keep a request within three cache lines (BENCHMARKS.md, "fleets II").
const _: () = assert!(std::mem::size_of::<Req>() <= 168);
