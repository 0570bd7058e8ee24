//! Services that call services. A service's instances follow the gateway's (`Svc::base`),
//! each with its own worker slots, pool and layers, and
//! its own plan id after the classes' (`Graph::service_class`). A call that reaches a service
//! becomes a request of that instance and plan: it waits for a slot, does the service's own
//! work (its `latency`), then runs its plan through the one plan machinery (`plan.rs`), its
//! calls passing the service's layers as a class's calls pass the gateway's. Its answer ends
//! the call (`service_answers`): the caller's attempt then ends as a leaf's would. So every
//! rule (timeouts, retries, hedges, breakers, pools, cancellation) runs once, at every layer.
//!
//! A service's requests are not the gateway's: the recorder's per-class and per-instance
//! figures never see them (`is_service_class`, `is_service_inst`); its calls and their
//! attempts count in the per-dependency figures, as every call does.

use super::*;
use state::Link;

/// Where the services sit among instances and plan ids; no service: `classes` and
/// `first_inst` are past any real one, so the checks cost a compare.
pub(super) struct Svc {
    /// The first service's plan id (the scenario's classes, count); `usize::MAX` without.
    pub classes: usize,
    /// The first service's instance (the gateway's instances, count); `u32::MAX` without.
    pub first_inst: u32,
    /// Per service, its first instance; and how many it has.
    pub base: Vec<u32>,
    /// See `base`.
    pub count: Vec<u32>,
    /// Per slot of the calls slab, the service request answering that call (checked against
    /// its `Link::answers`, so a stale entry is never followed).
    pub by_call: Vec<Token>,
    /// Service requests alive (count): in `reqs` but no request of the gateway's.
    pub live: u64,
}

impl Svc {
    /// The services' placement in a run of `m`.
    pub(super) fn new(m: &Model) -> Svc {
        let none = Svc {
            classes: usize::MAX,
            first_inst: u32::MAX,
            base: Vec::new(),
            count: Vec::new(),
            by_call: Vec::new(),
            live: 0,
        };
        let Some(g) = m.graph.as_ref().filter(|g| !g.services.is_empty()) else { return none };
        let count: Vec<u32> = g.services.iter().map(|&d| service_of(m, d).instances).collect();
        let first = m.scenario.fleet.instances;
        let base = count.iter().scan(first, |at, &n| Some(std::mem::replace(at, *at + n))).collect();
        Svc { classes: g.classes, first_inst: first, base, count, ..none }
    }

    /// The instances of every service (count).
    pub(super) fn instances(m: &Model) -> u32 {
        m.graph.as_ref().map_or(0, |g| g.services.iter().map(|&d| service_of(m, d).instances).sum())
    }

    /// Service instance `inst`: (its service's number, its number among that service's, how
    /// many that service has).
    pub(super) fn locate(&self, inst: u32) -> (usize, u32, u32) {
        let k = self.base.partition_point(|&b| b <= inst) - 1;
        (k, inst - self.base[k], self.count[k])
    }
}

/// The `service` of dependency `dep`.
fn service_of(m: &Model, dep: u16) -> &crate::scenario::Service {
    m.scenario.deps()[dep as usize].service.as_ref().expect("a service")
}

/// Instance `instance` of a run of `m` as a layer is built for it: (its number, its fleet's
/// size), the gateway's or its service's.
pub(super) fn layer_instance(m: &Model, instance: u32) -> (u32, u32) {
    let n = m.scenario.fleet.instances;
    if instance < n {
        return (instance, n);
    }
    let (_, at, count) = Svc::new(m).locate(instance);
    (at, count)
}

/// The key of the draws of the service request answering a call: the call's own draws'
/// key mixed with its attempt and the service, so each (request, call, attempt) of the
/// caller has its own, and no other request's draws move it.
fn service_key(key: u64, class: ClassId, attempt: u32, dep: u16) -> u64 {
    let mix = (u64::from(class) << 48) ^ (u64::from(dep) << 32) ^ u64::from(attempt);
    // SplitMix64's finalizer: every bit of the result depends on every bit of the input, so
    // the low bits that choose an instance (`key % instances`) are spread evenly too.
    let mut z = key ^ mix.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    DERIVED | (z ^ (z >> 31)) >> 1
}

impl<R: Record, F: Features> World<'_, R, F> {
    /// Plan id `class` is a service's, not a class of the scenario.
    pub(super) fn is_service_class(&self, class: ClassId) -> bool {
        F::GRAPH && class as usize >= self.svc.classes
    }

    /// Instance `inst` is a service's, not a gateway instance.
    pub(super) fn is_service_inst(&self, inst: u32) -> bool {
        F::GRAPH && inst >= self.svc.first_inst
    }

    /// Layer `l` is one of the gateway's stack (the recorder's layer figures are the gateway's).
    pub(super) fn is_gateway_layer(&self, l: u8) -> bool {
        !F::GRAPH || (l as usize) < self.layout.gateway_layers
    }

    // ---- the recorder hears of the gateway only ------------------------------------

    pub(super) fn layer_waited(&mut self, now: Time, parked: Time, l: u8) {
        if self.is_gateway_layer(l) {
            self.rec.layer_waited(now, parked, self.layout.kinds[l as usize]);
        }
    }

    pub(super) fn layer_offered(&mut self, now: Time, l: u8) {
        if self.is_gateway_layer(l) {
            self.rec.layer_offered(now, self.layout.kinds[l as usize]);
        }
    }

    pub(super) fn layer_queued(&mut self, now: Time, l: u8) {
        if self.is_gateway_layer(l) {
            self.rec.layer_queued(now, self.layout.kinds[l as usize]);
        }
    }

    pub(super) fn rec_pool_waiting(&mut self, now: Time, inst: u32, waiting: u32) {
        if !self.is_service_inst(inst) {
            self.rec.pool_waiting(now, inst, waiting);
        }
    }

    pub(super) fn rec_pool(&mut self, now: Time, inst: u32, conns: u32) {
        if !self.is_service_inst(inst) {
            self.rec.pool(now, inst, conns);
        }
    }

    pub(super) fn rec_workers(&mut self, now: Time, inst: u32, busy: u32) {
        if !self.is_service_inst(inst) {
            self.rec.workers(now, inst, busy);
        }
    }

    pub(super) fn rec_conn_wait(&mut self, arrived: Time, class: ClassId, waited: Time) {
        if !self.is_service_class(class) {
            self.rec.conn_wait(arrived, class as usize, waited);
        }
    }

    pub(super) fn rec_slot_wait(&mut self, arrived: Time, class: ClassId, waited: Time) {
        if !self.is_service_class(class) {
            self.rec.slot_wait(arrived, class as usize, waited);
        }
    }

    /// The priority and deadline (ns after arrival) of plan id `class`: its class's, or for a
    /// service's request, which knows neither, the lowest priority and no deadline.
    pub(super) fn class_terms(&self, class: ClassId) -> (u32, Time) {
        if self.is_service_class(class) {
            return (0, Time::MAX);
        }
        let c = &self.m.scenario.classes[class as usize];
        (c.priority, c.deadline.ns())
    }

    /// The worker slots of instance `inst`: the fleet's, or its service's own.
    pub(super) fn workers_of(&self, inst: u32) -> &crate::scenario::Workers {
        if self.is_service_inst(inst) { &self.service_spec(inst).workers } else { &self.m.scenario.fleet.workers }
    }

    /// The service that instance `inst` (a service's) is.
    fn service_spec(&self, inst: u32) -> &crate::scenario::Service {
        let g = self.m.graph.as_ref().expect("services have a graph");
        service_of(self.m, g.services[self.svc.locate(inst).0])
    }

    /// Pool `p`'s size and acquire timeout (ns) on instance `inst`: a service's one pool
    /// (unbounded without `pool`: each worker slot holds its own connection), or the
    /// gateway's (`build::pool_spec`).
    pub(super) fn pool_limits(&self, inst: u32, p: usize) -> (u32, Time) {
        if !self.is_service_inst(inst) {
            return build::pool_spec(&self.m.scenario, p);
        }
        match &self.service_spec(inst).pool {
            Some(pool) => (pool.max_connections, pool.acquire_timeout.ns()),
            None => (u32::MAX, Time::MAX),
        }
    }

    /// Call `call` reaches dependency `dep`, a service whose plan id is `class`: a request of
    /// the service's instance answers it. It hears the service's layers as an arrival hears
    /// the gateway's, then takes a worker slot, waits for one, or is refused with a 503.
    pub(super) fn service_call(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token, class: usize) {
        let c = *self.upstream.calls.get(call).expect("live call");
        let key = service_key(c.key, c.class, c.attempt, c.dep);
        // One of the service's instances by the call's key, as a gateway instance is chosen.
        let k = class - self.svc.classes;
        let inst = self.svc.base[k] + (key % u64::from(self.svc.count[k])) as u32;
        let class = class as ClassId;
        let who = Identity { class, instance: inst, key, origin: key, item: 0, user: None, reloads: 0 };
        let tok = self.insert_req(Req::fresh(who, now, now, Phase::SlotQueue));
        self.svc.live += 1;
        // The round trip to the service, counted on the answer's way back as a leaf's.
        let hop = self.m.dep(c.dep).hop(c.class as u64, c.key, c.attempt as u64);
        let direct = self.m.graph.as_ref().expect("a graph").direct[class as usize];
        self.set_link(tok, Link { dep: direct, answers: Some(call), hop, ..Link::default() });
        let slot = call.index as usize;
        if self.svc.by_call.len() <= slot {
            self.svc.by_call.resize(slot + 1, tok);
        }
        self.svc.by_call[slot] = tok;
        for li in 0..self.layout.arrival_layers[class as usize].len() {
            let l = self.layout.arrival_layers[class as usize][li];
            self.tell_request(now, q, inst, class, l);
        }
        let w = self.workers_of(inst);
        let (slots, queue, max_wait) = (w.slots, w.queue, w.max_wait);
        let i = &mut self.gateway.insts[inst as usize];
        if i.workers < slots {
            self.take_worker(now, q, tok);
        } else if i.worker_waiting < queue && max_wait.is_none_or(|d| d.ns() > 0) {
            i.worker_waiting += 1;
            i.worker_q.push_back(tok);
            match max_wait {
                Some(d) => self.timer_fixed(q, tok, d.ns(), Timer::SlotWait),
                None => {
                    self.bump_generation(tok);
                }
            }
        } else {
            self.fail_as(tok, Cause::WorkerSlotsFull);
            self.respond(now, q, tok, Outcome::Rejected, None);
        }
    }

    /// Service request `tok` has a worker slot: its call counts as served from now (its wait
    /// for a slot is the call's queue wait), and its own work is drawn as a leaf's service
    /// time is, from the calling attempt's key.
    pub(super) fn service_work(&mut self, now: Time, tok: Token) -> Time {
        let call = self.plans.links[tok.index as usize].answers.expect("a service request");
        let Some(c) = self.upstream.calls.get_mut(call) else { return 0 };
        c.served_at = now;
        let plan = self.m.dep(c.dep).plan(now, c.class as u64, c.key, c.attempt as u64, 1.0);
        plan.service
    }

    /// Service request `tok` has its answer: it leaves its slot, and the call it answers
    /// travels back (its `hop`), a success when the plan succeeded (a degraded answer is
    /// one), else an error; a refusal for want of a slot is the service's 503 without
    /// service, as a leaf's full queue is.
    pub(super) fn service_answers(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get(tok).expect("live request");
        let (outcome, worker, inst) = (r.answer.outcome, r.worker, r.who.instance);
        let link = self.plans.links[tok.index as usize];
        self.count_own_call(tok);
        self.reqs.discard(tok);
        dec!(self.svc.live);
        if worker {
            self.release_worker(now, q, inst);
        }
        let call = link.answers.expect("a service request");
        let Some(c) = self.upstream.calls.get_mut(call) else { return };
        c.error = !matches!(outcome, Outcome::Ok | Outcome::Fallback);
        if worker {
            c.service = now - c.served_at;
        } else {
            // Never served: no queue wait or service time to report.
            c.refused = outcome == Outcome::Rejected;
            c.served_at = Time::MAX;
        }
        c.done_at = now.saturating_add(link.hop);
        q.schedule_at(c.done_at, Ev::DepDone { call });
    }

    /// The cancel of call `call` reached its service: the request answering it stops where
    /// it is (its own calls cancelled as each of their dependencies says), and frees its slot.
    pub(super) fn cancel_service(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let Some(&tok) = self.svc.by_call.get(call.index as usize) else { return };
        if self.reqs.get(tok).is_none() || self.plans.links[tok.index as usize].answers != Some(call) {
            return;
        }
        let r = self.reqs.get(tok).expect("live request");
        let (phase, worker, inst) = (r.phase, r.worker, r.who.instance);
        match phase {
            Phase::SlotQueue => dec!(self.gateway.insts[inst as usize].worker_waiting),
            Phase::Plan => self.drop_kids(now, q, tok),
            _ => self.unhook(now, q, tok),
        }
        self.count_own_call(tok);
        self.reqs.discard(tok);
        dec!(self.svc.live);
        if worker {
            self.release_worker(now, q, inst);
        }
    }

    /// A service request that made its one call itself (no plan) counts it as a call of its
    /// dependency, as a gateway request without a plan does (`plan::blame_of`); a plan's
    /// calls count themselves.
    fn count_own_call(&mut self, tok: Token) {
        let r = self.reqs.get(tok).expect("live request");
        if r.phase != Phase::SlotQueue && self.plan_of(r.who.class).is_none() && r.attempt.number > 0 {
            let (arrived, attempts, dep) = (r.time.arrived, r.calls, self.plans.links[tok.index as usize].dep);
            self.rec.graph(crate::metrics::GraphEvent::Call { arrived, dep, attempts });
        }
    }
}
