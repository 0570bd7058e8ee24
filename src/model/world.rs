//! The event handler: requests flow through worker slots, the policy stack, the pool and
//! the dependency. See `model` for the overview and ARCHITECTURE.md for the invariants.

use std::collections::VecDeque;

use rand::SeedableRng;

use super::catalogue::Stock;
use super::{Model, RunOptions, RunResult};
use crate::engine::{self, EventQueue, Handler, Slab, Stream, Time, Token, counter_f64, label_hash, stream};
use crate::metrics::{OrderEffect, Outcome, Recorder, RecorderSetup};
use crate::policy::{
    Admission, Attempt, BreakerState, BuildCtx, CallOutcome, ClassId, Completed, Policy, Refusal, RetryAsk, Status,
};
use crate::scenario::Fallback;

/// Most layers one policy stack may have.
pub const MAX_LAYERS: usize = 8;

const RETRY: u64 = label_hash("policy/retry-jitter");
const ORDERS: u64 = label_hash("business/orders");
const SUBST: u64 = label_hash("business/substitution");
const WORK: u64 = label_hash("class/work");

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
    User { class: ClassId },
    Timer { req: Token, generation: u32, timer: Timer },
    DepDone { call: Token },
    Wake { instance: u32, layer: u8, generation: u32 },
    Tick,
}

impl Ev {
    fn code(&self) -> u64 {
        match self {
            Ev::Arrival { class } => 1 + ((*class as u64) << 8),
            Ev::User { class } => 2 + ((*class as u64) << 8),
            Ev::Timer { timer, .. } => 3 + ((*timer as u64) << 8),
            Ev::DepDone { .. } => 4,
            Ev::Wake { layer, .. } => 5 + ((*layer as u64) << 8),
            Ev::Tick => 6,
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

#[derive(Debug, Clone)]
struct Req {
    class: ClassId,
    instance: u32,
    index: u64,
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
    call: Option<Token>,
    conn: bool,
    worker: bool,
    calls: u32,
    closed_loop: bool,
    outcome: Outcome,
    staleness: Option<(Time, bool)>,
}

#[derive(Debug, Clone, Copy)]
struct Call {
    req: Option<Token>,
    served_at: Time,
    error: bool,
    holds_server: bool,
    class: ClassId,
    index: u64,
    attempt: u32,
}

struct LayerRt {
    policy: Box<dyn Policy>,
    queue: VecDeque<Token>,
    waiting: u32,
    wake: Option<Time>,
    wake_generation: u32,
    last: Status,
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
    think_rng: Vec<Stream>,
    next_index: Vec<u64>,
    next_attempt_id: u64,
    dep_busy: u32,
    dep_q: VecDeque<Token>,
    dep_in_flight: u64,
    stock: Option<Stock>,
    rec: Recorder,
    pump: Vec<(u32, u8)>,
    breaker_layer: Option<u8>,
    limit_layer: Option<u8>,
    trace: u64,
    trace_log: Vec<(Time, u64)>,
    trace_limit: usize,
    requests: u64,
    horizon: Time,
    abort: Option<String>,
}

pub(super) fn run(m: &Model, policy: usize, opts: RunOptions) -> RunResult {
    let s = &m.scenario;
    let set = &s.policies[policy];
    let mut q: EventQueue<Ev> = EventQueue::new();
    let mut w = World::new(m, policy);
    w.trace_limit = opts.trace_limit;
    for (c, arrivals) in w.arrivals.iter_mut().enumerate() {
        let users = arrivals.initial_users();
        for _ in 0..users {
            let think = arrivals.think(&mut w.think_rng[c]);
            q.schedule_at(think, Ev::User { class: c as ClassId });
        }
        if let Some(t) = arrivals.next(0, &mut w.arrival_rng[c]) {
            // Scripted times may start at 0; Poisson starts after one gap.
            q.schedule_at(t, Ev::Arrival { class: c as ClassId });
        }
    }
    q.schedule_at(s.window.ns().min(w.horizon), Ev::Tick);
    let horizon = w.horizon;
    let stats = engine::run(&mut w, &mut q, horizon);
    let end = if w.abort.is_some() { stats.end } else { w.horizon };
    if w.abort.is_none() && stats.end < w.horizon {
        // The queue ran dry before the horizon; close the remaining windows.
        let mut t = (stats.end / s.window.ns() + 1) * s.window.ns();
        while t < w.horizon {
            w.rec.tick(t);
            t += s.window.ns();
        }
        w.rec.tick(w.horizon);
    }
    let in_flight = w.reqs.len() as u64;
    let mut summary = w.rec.summary(end, stats.events, in_flight);
    summary.policy = set.name.clone();
    RunResult {
        summary,
        rows: if opts.timeseries { w.rec.take_rows() } else { Vec::new() },
        trace_hash: w.trace,
        end,
        requests: w.requests,
        aborted: w.abort,
        trace: w.trace_log,
    }
}

impl<'m> World<'m> {
    fn new(m: &'m Model, policy: usize) -> Self {
        let s = &m.scenario;
        let set = &s.policies[policy];
        let n = s.fleet.instances;
        let class_names: Vec<String> = s.classes.iter().map(|c| c.name.clone()).collect();
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
                        let ctx = BuildCtx { classes: class_names.clone(), instance, instances: n };
                        let policy = l.policy.build(&ctx);
                        let last = policy.status();
                        LayerRt { policy, queue: VecDeque::new(), waiting: 0, wake: None, wake_generation: 0, last }
                    })
                    .collect(),
                degraded: 0,
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
            think_rng: s.classes.iter().map(|c| stream(m.seed, &format!("think/{}", c.name))).collect(),
            next_index: vec![0; s.classes.len()],
            next_attempt_id: 0,
            dep_busy: 0,
            dep_q: VecDeque::new(),
            dep_in_flight: 0,
            stock: s.catalogue.as_ref().map(|c| Stock::new(c, n, m.seed)),
            rec,
            pump: Vec::new(),
            breaker_layer,
            limit_layer,
            trace: 0xcbf2_9ce4_8422_2325,
            trace_log: Vec::new(),
            trace_limit: 0,
            requests: 0,
            horizon: s.horizon.ns(),
            abort: None,
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
        let r = self.reqs.get_mut(tok).expect("live request");
        r.generation = r.generation.wrapping_add(1);
        q.schedule_at(at, Ev::Timer { req: tok, generation: r.generation, timer });
    }

    fn bump_generation(&mut self, tok: Token) {
        let r = self.reqs.get_mut(tok).expect("live request");
        r.generation = r.generation.wrapping_add(1);
    }

    // ---- arrivals and worker slots -------------------------------------------------

    fn arrive(&mut self, now: Time, q: &mut EventQueue<Ev>, class: ClassId, closed_loop: bool) {
        let c = class as usize;
        let index = self.next_index[c];
        self.next_index[c] += 1;
        self.requests += 1;
        let instance = (index % self.m.scenario.fleet.instances as u64) as u32;
        let item = match &self.m.popularity {
            Some(p) => p.draw(&mut self.item_rng[c]),
            None => 0,
        };
        if self.reqs.len() as u64 >= self.m.scenario.limits.max_in_flight {
            self.abort = Some(format!(
                "runaway scenario: more than {} requests in flight at t={} (limits.max_in_flight); \
                 arrivals exceed what the fleet can finish. Reduce the arrival rate, bound the queues, or raise the limit",
                self.m.scenario.limits.max_in_flight,
                engine::fmt_time(now)
            ));
            return;
        }
        let tok = self.reqs.insert(Req {
            class,
            instance,
            index,
            arrived: now,
            item,
            generation: 0,
            phase: Phase::SlotQueue,
            attempt: 0,
            attempt_id: 0,
            pos: 0,
            admitted_at: [0; MAX_LAYERS],
            attempt_deadline: Time::MAX,
            unwind: 0,
            wait_since: now,
            call: None,
            conn: false,
            worker: false,
            calls: 0,
            closed_loop,
            outcome: Outcome::Ok,
            staleness: None,
        });
        self.rec.arrival(now, c);
        for li in 0..self.class_layers[c].len() {
            let l = self.class_layers[c][li];
            self.insts[instance as usize].layers[l as usize].policy.on_request(now, class);
            self.note(now, q, instance, l);
        }
        let inst = &mut self.insts[instance as usize];
        let w = &self.m.scenario.fleet.workers;
        if inst.workers < w.slots {
            self.take_worker(now, q, tok);
        } else if inst.worker_waiting < w.queue && w.max_wait.is_some_and(|d| d.ns() > 0) {
            inst.worker_waiting += 1;
            inst.worker_q.push_back(tok);
            let at = now + w.max_wait.map_or(0, |d| d.ns());
            self.timer(q, tok, at, Timer::SlotWait);
        } else {
            self.rec.slot_wait(now, c, 0);
            self.respond(now, q, tok, Outcome::Rejected, None);
        }
    }

    fn take_worker(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get_mut(tok).expect("live request");
        let (inst, class, waited, arrived) = (r.instance, r.class, now - r.arrived, r.arrived);
        r.worker = true;
        let i = &mut self.insts[inst as usize];
        i.workers += 1;
        let busy = i.workers;
        self.rec.workers(now, inst, busy);
        self.rec.slot_wait(arrived, class as usize, waited);
        match &self.m.work[class as usize] {
            Some(dist) => {
                let r = self.reqs.get(tok).expect("live request");
                let key = ((class as u64) << 48) ^ r.index;
                let mut rng = Stream::seed_from_u64(crate::engine::counter_u64(self.m.seed, WORK, key, 0));
                let d = dist.sample(&mut rng).max(0.0) as Time;
                self.reqs.get_mut(tok).expect("live request").phase = Phase::Local;
                self.timer(q, tok, now + d, Timer::LocalWork);
            }
            None => self.after_local(now, q, tok),
        }
    }

    fn release_worker(&mut self, now: Time, q: &mut EventQueue<Ev>, instance: u32) {
        let i = &mut self.insts[instance as usize];
        i.workers -= 1;
        let busy = i.workers;
        self.rec.workers(now, instance, busy);
        while let Some(next) = self.insts[instance as usize].worker_q.pop_front() {
            if self.reqs.get(next).is_some_and(|r| r.phase == Phase::SlotQueue && !r.worker) {
                self.insts[instance as usize].worker_waiting -= 1;
                self.bump_generation(next);
                self.take_worker(now, q, next);
                break;
            }
        }
    }

    fn after_local(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let class = self.reqs.get(tok).expect("live request").class;
        if self.m.scenario.classes[class as usize].calls_dependency {
            self.begin_attempt(now, q, tok);
        } else {
            self.respond(now, q, tok, Outcome::Ok, None);
        }
    }

    // ---- the policy stack ------------------------------------------------------------

    fn attempt_of(&self, now: Time, tok: Token, layer: u8) -> Attempt {
        let r = self.reqs.get(tok).expect("live request");
        let class = &self.m.scenario.classes[r.class as usize];
        Attempt {
            now,
            class: r.class,
            number: r.attempt,
            id: r.attempt_id,
            priority: class.priority,
            queued: self.insts[r.instance as usize].layers[layer as usize].waiting,
        }
    }

    fn begin_attempt(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let id = self.next_attempt_id;
        self.next_attempt_id += 1;
        let r = self.reqs.get_mut(tok).expect("live request");
        r.attempt += 1;
        r.attempt_id = id;
        r.pos = if r.attempt == 1 { 0 } else { self.inner_start[r.class as usize] };
        self.admit_from(now, q, tok);
    }

    fn admit_from(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let (class, inst) = {
            let r = self.reqs.get(tok).expect("live request");
            (r.class as usize, r.instance)
        };
        loop {
            let pos = self.reqs.get(tok).expect("live request").pos as usize;
            let Some(&l) = self.class_layers[class].get(pos) else {
                break;
            };
            let att = self.attempt_of(now, tok, l);
            let decision = self.insts[inst as usize].layers[l as usize].policy.admit(&att);
            self.note(now, q, inst, l);
            match decision {
                Admission::Admit => {
                    let r = self.reqs.get_mut(tok).expect("live request");
                    r.admitted_at[pos] = now;
                    r.pos += 1;
                }
                Admission::Wait { max_wait } => {
                    let layer = &mut self.insts[inst as usize].layers[l as usize];
                    layer.queue.push_back(tok);
                    layer.waiting += 1;
                    let r = self.reqs.get_mut(tok).expect("live request");
                    r.phase = Phase::LayerQueue;
                    r.wait_since = now;
                    self.timer(q, tok, now + max_wait, Timer::LayerWait);
                    return;
                }
                Admission::Refuse(why) => {
                    self.refused(now, q, tok, why);
                    return;
                }
            }
        }
        self.acquire_connection(now, q, tok);
    }

    /// Tell the layers this attempt passed that it was not executed.
    fn cancel_admitted(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst, pos) = (r.class as usize, r.instance, r.pos as usize);
        let start = if r.attempt == 1 { 0 } else { self.inner_start[class] as usize };
        for p in (start..pos).rev() {
            let l = self.class_layers[class][p];
            let att = self.attempt_of(now, tok, l);
            self.insts[inst as usize].layers[l as usize].policy.cancel(&att);
            self.note(now, q, inst, l);
            self.pump.push((inst, l));
        }
    }

    fn refused(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, why: Refusal) {
        self.cancel_admitted(now, q, tok);
        let attempt = self.reqs.get(tok).expect("live request").attempt;
        if attempt > 1 {
            self.complete_outer(now, q, tok, CallOutcome::Error);
        }
        let outcome = match why {
            Refusal::Rejected | Refusal::Fallback => Outcome::Rejected,
            Refusal::ShortCircuited => Outcome::ShortCircuited,
        };
        self.conclude(now, q, tok, outcome, true);
    }

    /// Complete layers outside the retry layer with the request's final outcome.
    fn complete_outer(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, outcome: CallOutcome) {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst) = (r.class as usize, r.instance);
        let outer = self.inner_start[class] as usize;
        for p in (0..outer).rev() {
            let l = self.class_layers[class][p];
            let r = self.reqs.get(tok).expect("live request");
            let done = Completed { now, class: r.class, id: r.attempt_id, admitted_at: r.admitted_at[p], outcome };
            self.insts[inst as usize].layers[l as usize].policy.complete(&done);
            self.note(now, q, inst, l);
            self.pump.push((inst, l));
        }
    }

    fn pump_layers(&mut self, now: Time, q: &mut EventQueue<Ev>) {
        while let Some((inst, l)) = self.pump.pop() {
            loop {
                let layer = &mut self.insts[inst as usize].layers[l as usize];
                let Some(&head) = layer.queue.front() else {
                    break;
                };
                let live = self.reqs.get(head).is_some_and(|r| {
                    r.phase == Phase::LayerQueue && self.class_layers[r.class as usize].get(r.pos as usize) == Some(&l)
                });
                if !live {
                    layer.queue.pop_front();
                    continue;
                }
                let mut att = self.attempt_of(now, head, l);
                att.queued = att.queued.saturating_sub(1);
                let decision = self.insts[inst as usize].layers[l as usize].policy.admit(&att);
                self.note(now, q, inst, l);
                if let Admission::Wait { .. } = decision {
                    break;
                }
                let layer = &mut self.insts[inst as usize].layers[l as usize];
                layer.queue.pop_front();
                layer.waiting -= 1;
                self.bump_generation(head);
                match decision {
                    Admission::Admit => {
                        let r = self.reqs.get_mut(head).expect("live request");
                        r.admitted_at[r.pos as usize] = now;
                        r.pos += 1;
                        self.admit_from(now, q, head);
                    }
                    Admission::Refuse(why) => self.refused(now, q, head, why),
                    Admission::Wait { .. } => unreachable!("handled above"),
                }
            }
        }
    }

    /// Look at a layer's status after an interaction: breaker transitions, limits, degraded
    /// flag and timer wishes.
    fn note(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8) {
        let layer = &mut self.insts[inst as usize].layers[l as usize];
        let st = layer.policy.status();
        let last = layer.last;
        if st == last {
            return;
        }
        layer.last = st;
        if st.wake_at != layer.wake {
            layer.wake = st.wake_at;
            layer.wake_generation = layer.wake_generation.wrapping_add(1);
            if let Some(t) = st.wake_at {
                q.schedule_at(t.max(now), Ev::Wake { instance: inst, layer: l, generation: layer.wake_generation });
            }
        }
        if st.degraded != last.degraded {
            let i = &mut self.insts[inst as usize];
            if st.degraded { i.degraded += 1 } else { i.degraded -= 1 }
        }
        if Some(l) == self.breaker_layer && st.breaker != last.breaker {
            self.rec.breaker(now, inst, st.breaker.unwrap_or(BreakerState::Closed));
        }
        if Some(l) == self.limit_layer && st.limit != last.limit {
            self.rec.limit(now, inst, st.limit.unwrap_or(0.0));
        }
    }

    // ---- connection pool and dependency ------------------------------------------

    fn acquire_connection(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let (class, inst) = {
            let r = self.reqs.get(tok).expect("live request");
            (r.class as usize, r.instance)
        };
        let mut timeout: Option<(Time, Time)> = None;
        for &l in &self.class_layers[class] {
            if let Some(t) = self.insts[inst as usize].layers[l as usize].policy.attempt_timeout(class as ClassId) {
                if timeout.is_none_or(|cur| t.0 < cur.0) {
                    timeout = Some(t);
                }
            }
        }
        let r = self.reqs.get_mut(tok).expect("live request");
        r.attempt_deadline = timeout.map_or(Time::MAX, |t| now + t.0);
        r.unwind = timeout.map_or(0, |t| t.1);
        r.wait_since = now;
        let pool = &self.m.scenario.fleet.pool;
        let i = &mut self.insts[inst as usize];
        if i.conns < pool.max_connections {
            self.take_connection(now, q, tok);
        } else {
            i.pool_waiting += 1;
            i.pool_q.push_back(tok);
            r.phase = Phase::PoolQueue;
            let at = (now + pool.acquire_timeout.ns()).min(r.attempt_deadline);
            self.timer(q, tok, at, Timer::Attempt);
        }
    }

    fn take_connection(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get_mut(tok).expect("live request");
        r.conn = true;
        r.phase = Phase::Calling;
        r.calls += 1;
        let (inst, class, index, attempt, arrived, waited) =
            (r.instance, r.class, r.index, r.attempt, r.arrived, now - r.wait_since);
        let deadline = r.attempt_deadline;
        self.rec.conn_wait(arrived, class as usize, waited);
        let i = &mut self.insts[inst as usize];
        i.conns += 1;
        let conns = i.conns;
        self.rec.pool(now, inst, conns);
        let call = self.calls.insert(Call {
            req: Some(tok),
            served_at: now,
            error: false,
            holds_server: false,
            class,
            index,
            attempt,
        });
        self.reqs.get_mut(tok).expect("live request").call = Some(call);
        self.dep_in_flight += 1;
        self.rec.dep_start(now, self.dep_in_flight);
        match self.m.dep.capacity {
            Some((servers, queue)) if self.dep_busy >= servers => {
                if (self.dep_q.len() as u32) < queue {
                    self.dep_q.push_back(call);
                } else {
                    // Queue full: the dependency sheds the call with a fast 503.
                    let c = self.calls.get_mut(call).expect("live call");
                    c.error = true;
                    q.schedule_at(now + self.m.dep.hop, Ev::DepDone { call });
                }
            }
            cap => {
                if cap.is_some() {
                    self.dep_busy += 1;
                    self.calls.get_mut(call).expect("live call").holds_server = true;
                }
                self.serve_call(now, q, call);
            }
        }
        if deadline != Time::MAX {
            self.timer(q, tok, deadline, Timer::Attempt);
        } else {
            self.bump_generation(tok);
        }
    }

    fn serve_call(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let c = self.calls.get_mut(call).expect("live call");
        let plan = self.m.dep.plan(now, c.class as u64, c.index, c.attempt as u64);
        c.served_at = now;
        c.error = plan.error;
        q.schedule_at(now + plan.latency, Ev::DepDone { call });
    }

    fn dep_done(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let c = self.calls.remove(call).expect("live call");
        self.dep_in_flight -= 1;
        self.rec.dep_end(now, now - c.served_at, c.req.is_none(), self.dep_in_flight);
        if c.holds_server {
            // Finished service frees a server for the next queued call.
            self.dep_busy -= 1;
            while let Some(next) = self.dep_q.pop_front() {
                if let Some(n) = self.calls.get_mut(next) {
                    n.holds_server = true;
                    self.dep_busy += 1;
                    self.serve_call(now, q, next);
                    break;
                }
            }
        }
        let Some(tok) = c.req else { return };
        let outcome = if c.error { CallOutcome::Error } else { CallOutcome::Success };
        self.release_connection(now, q, tok);
        self.attempt_end(now, q, tok, outcome);
    }

    fn release_connection(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get_mut(tok).expect("live request");
        if !r.conn {
            return;
        }
        r.conn = false;
        r.call = None;
        let inst = r.instance;
        let i = &mut self.insts[inst as usize];
        i.conns -= 1;
        let conns = i.conns;
        self.rec.pool(now, inst, conns);
        while let Some(next) = self.insts[inst as usize].pool_q.pop_front() {
            if self.reqs.get(next).is_some_and(|r| r.phase == Phase::PoolQueue) {
                self.insts[inst as usize].pool_waiting -= 1;
                self.take_connection(now, q, next);
                break;
            }
        }
    }

    fn attempt_timer(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get_mut(tok).expect("live request");
        match r.phase {
            Phase::PoolQueue => {
                let (inst, class, arrived, waited) = (r.instance, r.class, r.arrived, now - r.wait_since);
                let outcome = if now >= r.attempt_deadline { CallOutcome::Timeout } else { CallOutcome::Error };
                r.phase = Phase::Backoff; // leaves the pool queue (lazily removed)
                self.insts[inst as usize].pool_waiting -= 1;
                self.rec.conn_wait(arrived, class as usize, waited);
                self.attempt_end(now, q, tok, outcome);
            }
            Phase::Calling => {
                if let Some(call) = r.call {
                    if let Some(c) = self.calls.get_mut(call) {
                        c.req = None; // abandoned: the dependency keeps working on it
                    }
                }
                self.release_connection(now, q, tok);
                self.attempt_end(now, q, tok, CallOutcome::Timeout);
            }
            _ => {}
        }
    }

    fn attempt_end(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, outcome: CallOutcome) {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst, attempt) = (r.class as usize, r.instance, r.attempt);
        // Layers from the retry layer inward see each attempt; with no retry layer that is all.
        let start = self.inner_start[class] as usize;
        let layers = self.class_layers[class].len();
        for p in (start..layers).rev() {
            let l = self.class_layers[class][p];
            let r = self.reqs.get(tok).expect("live request");
            let done = Completed { now, class: r.class, id: r.attempt_id, admitted_at: r.admitted_at[p], outcome };
            self.insts[inst as usize].layers[l as usize].policy.complete(&done);
            self.note(now, q, inst, l);
            self.pump.push((inst, l));
        }
        if outcome.is_failure() {
            let r = self.reqs.get(tok).expect("live request");
            let ask = RetryAsk {
                now,
                class: class as ClassId,
                attempt,
                outcome,
                uniform: counter_f64(self.m.seed, RETRY, ((class as u64) << 48) ^ r.index, attempt as u64),
            };
            let mut delay = None;
            for &l in &self.class_layers[class] {
                delay = self.insts[inst as usize].layers[l as usize].policy.retry_delay(&ask);
                if delay.is_some() {
                    break;
                }
            }
            if let Some(d) = delay {
                let mut allowed = true;
                for li in 0..layers {
                    let l = self.class_layers[class][li];
                    allowed &= self.insts[inst as usize].layers[l as usize].policy.allow_retry(&ask);
                    self.note(now, q, inst, l);
                    if !allowed {
                        break;
                    }
                }
                if allowed {
                    self.reqs.get_mut(tok).expect("live request").phase = Phase::Backoff;
                    self.timer(q, tok, now + d, Timer::Backoff);
                    return;
                }
            }
        }
        if self.inner_start[class] > 0 {
            self.complete_outer(now, q, tok, outcome);
        }
        match outcome {
            CallOutcome::Success => {
                let r = self.reqs.get(tok).expect("live request");
                let (inst, item) = (r.instance, r.item);
                if let Some(stock) = &mut self.stock {
                    stock.refresh(inst, item, now);
                }
                self.respond(now, q, tok, Outcome::Ok, None);
            }
            CallOutcome::Error => self.conclude(now, q, tok, Outcome::Error, false),
            CallOutcome::Timeout => {
                let unwind = self.reqs.get(tok).expect("live request").unwind;
                if unwind > 0 {
                    self.reqs.get_mut(tok).expect("live request").phase = Phase::Unwinding;
                    self.timer(q, tok, now + unwind, Timer::Unwind);
                } else {
                    self.conclude(now, q, tok, Outcome::Timeout, false);
                }
            }
        }
    }

    /// A refused or failed request: answer from the cache if the class allows it.
    fn conclude(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, outcome: Outcome, refusal: bool) {
        let r = self.reqs.get(tok).expect("live request");
        let allowed = match self.m.scenario.classes[r.class as usize].fallback {
            Fallback::None => false,
            Fallback::OnRefusal => refusal,
            Fallback::OnRefusalOrFailure => true,
        };
        let (inst, item) = (r.instance, r.item);
        if allowed {
            if let Some(served) = self.stock.as_mut().and_then(|s| s.serve(inst, item, now)) {
                self.respond(now, q, tok, Outcome::Fallback, Some((served.staleness, served.wrong)));
                return;
            }
        }
        self.respond(now, q, tok, outcome, None);
    }

    fn respond(
        &mut self,
        now: Time,
        q: &mut EventQueue<Ev>,
        tok: Token,
        outcome: Outcome,
        staleness: Option<(Time, bool)>,
    ) {
        let overhead = self.m.scenario.fleet.overhead.ns();
        let r = self.reqs.get_mut(tok).expect("live request");
        r.outcome = outcome;
        r.staleness = staleness;
        if overhead > 0 {
            r.phase = Phase::Responding;
            self.timer(q, tok, now + overhead, Timer::Respond);
        } else {
            self.finish(now, q, tok);
        }
    }

    fn finish(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.remove(tok).expect("live request");
        if r.worker {
            self.release_worker(now, q, r.instance);
        }
        let class = &self.m.scenario.classes[r.class as usize];
        let key = ((r.class as u64) << 48) ^ r.index;
        let mut order = OrderEffect::default();
        if let Some(b) = &self.m.scenario.business {
            if counter_f64(self.m.seed, ORDERS, key, 0) < class.order_fraction {
                order.order = true;
                let in_time = now - r.arrived <= class.deadline.ns();
                match (r.outcome, r.staleness) {
                    (Outcome::Ok, _) if in_time => {}
                    (Outcome::Fallback, Some((_, wrong))) if in_time => {
                        if wrong {
                            let allowance = if self.insts[r.instance as usize].degraded > 0 {
                                b.degraded_substitution_allowance
                            } else {
                                b.substitution_allowance
                            };
                            if counter_f64(self.m.seed, SUBST, key, 0) < allowance {
                                order.substitution = true;
                            } else {
                                order.refund = true;
                            }
                        }
                    }
                    _ => order.lost = true,
                }
            }
        }
        self.rec.finish(now, r.class as usize, r.arrived, r.outcome, r.staleness, order, r.calls);
        if r.closed_loop {
            let c = r.class as usize;
            let think = self.arrivals[c].think(&mut self.think_rng[c]);
            q.schedule_at(now + think, Ev::User { class: r.class });
        }
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
                self.insts[inst as usize].worker_waiting -= 1;
                self.rec.slot_wait(arrived, class as usize, now - arrived);
                self.respond(now, q, tok, Outcome::Rejected, None);
            }
            Timer::LocalWork => self.after_local(now, q, tok),
            Timer::LayerWait => {
                let r = self.reqs.get_mut(tok).expect("live request");
                let (class, inst, pos) = (r.class as usize, r.instance, r.pos as usize);
                r.phase = Phase::Backoff; // out of the queue (lazily removed)
                let l = self.class_layers[class][pos];
                self.insts[inst as usize].layers[l as usize].waiting -= 1;
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
        let code = ev.code();
        self.trace = (self.trace ^ now ^ code.rotate_left(32)).wrapping_mul(0x0000_0100_0000_01b3);
        if self.trace_log.len() < self.trace_limit {
            self.trace_log.push((now, code));
        }
        match ev {
            Ev::Arrival { class } => {
                let c = class as usize;
                if let Some(t) = self.arrivals[c].next(now, &mut self.arrival_rng[c]) {
                    if t <= self.horizon {
                        q.schedule_at(t.max(now), Ev::Arrival { class });
                    }
                }
                self.arrive(now, q, class, false);
            }
            Ev::User { class } => self.arrive(now, q, class, true),
            Ev::Timer { req, generation, timer } => self.on_timer(now, q, req, generation, timer),
            Ev::DepDone { call } => self.dep_done(now, q, call),
            Ev::Wake { instance, layer, generation } => {
                let lr = &mut self.insts[instance as usize].layers[layer as usize];
                if lr.wake_generation == generation {
                    lr.wake = None;
                    lr.last.wake_at = None;
                    lr.policy.on_wakeup(now);
                    self.note(now, q, instance, layer);
                    self.pump.push((instance, layer));
                }
            }
            Ev::Tick => {
                self.rec.tick(now);
                let next = now + self.m.scenario.window.ns();
                if now < self.horizon {
                    q.schedule_at(next.min(self.horizon), Ev::Tick);
                }
            }
        }
        if !self.pump.is_empty() {
            self.pump_layers(now, q);
        }
        if q.len() as u64 > 4 * self.m.scenario.limits.max_in_flight + 1024 {
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
