//! The policy stack: admission through the layers, waiting queues, cancellation and status.

use super::waitq::{Pos, Waiter};
use super::*;

impl<R: Record, F: Features> World<'_, R, F> {
    // ---- the policy stack ------------------------------------------------------------

    /// The row of the stack's layout request `tok` follows (`Layout::class_layers`).
    pub(super) fn route(&self, tok: Token) -> usize {
        self.route_of(self.reqs.get(tok).expect("live request").who.class as usize, tok)
    }

    /// The layout row of request `tok` of class `class`: the class's own, or with layers
    /// scoped to dependencies, the one of its class's calls to its dependency. Without such
    /// layers this reads nothing of the request's dependency.
    pub(super) fn route_of(&self, class: usize, tok: Token) -> usize {
        if self.layout.stride == 0 { class } else { class * self.layout.stride + self.dep_of(tok) as usize }
    }

    /// Some layer on route `route` has hook `hook` (never without a policy stack).
    pub(super) fn route_has(&self, route: usize, hook: Hooks) -> bool {
        F::STACK && self.layout.route_hooks[route].has(hook)
    }

    pub(super) fn attempt_of(&self, now: Time, tok: Token, layer: u8) -> Attempt {
        let r = self.reqs.get(tok).expect("live request");
        let (priority, deadline) = self.class_terms(r.who.class);
        Attempt::new(now, r.who.class, r.attempt.id)
            .number(r.attempt.number)
            .priority(priority)
            .queued(self.layer(r.who.instance, layer).waiting)
            .request(r.time.arrived, r.time.arrived.saturating_add(deadline))
    }

    pub(super) fn begin_attempt(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let id = self.gateway.next_attempt_id;
        self.gateway.next_attempt_id += 1;
        let r = self.reqs.get(tok).expect("live request");
        // A retry starts inside the retry layer; a first attempt at the outermost layer.
        let pos =
            if r.attempt.number == 0 { 0 } else { self.layout.inner_start[self.route_of(r.who.class as usize, tok)] };
        let r = self.reqs.get_mut(tok).expect("live request");
        r.attempt.number += 1;
        r.attempt.id = id;
        r.attempt.pos = pos;
        // Only layers read the first attempt's id (`id_at`).
        if F::STACK && r.attempt.number == 1 {
            let slot = tok.index as usize;
            if self.first_ids.len() <= slot {
                self.first_ids.resize(slot + 1, (0, 0));
            }
            self.first_ids[slot] = (id, now);
        }
        self.admit_from(now, q, tok);
    }

    pub(super) fn admit_from(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        if !F::STACK {
            self.acquire_connection(now, q, tok); // no layer to pass
            return;
        }
        let r = self.reqs.get(tok).expect("live request");
        let (route, inst, mut pos) = (self.route_of(r.who.class as usize, tok), r.who.instance, r.attempt.pos as usize);
        // `pos` is the request's `attempt.pos`, written back before anything that reads it.
        while let Some(&l) = self.layout.class_layers[route].get(pos) {
            let decision = if self.layout.hooks[l as usize].has(Hooks::ADMIT) {
                let att = self.attempt_of(now, tok, l);
                let decision = self.layer_mut(inst, l).policy.admit(&att);
                self.note(now, q, inst, l);
                decision
            } else {
                Admission::Admit // the policy admits everything and keeps no count of it
            };
            self.layer_offered(now, l);
            if decision == Admission::Admit {
                self.set_admitted(tok, pos, now);
                pos += 1;
                continue;
            }
            self.reqs.get_mut(tok).expect("live request").attempt.pos = pos as u8;
            match decision {
                Admission::Admit => unreachable!("admitted above"),
                Admission::Wait { max_wait } => self.park(now, q, tok, inst, l, max_wait),
                Admission::WaitEvicting { max_wait, evict } => {
                    let (pos, victim) = self.waiter_with_id(inst, l, evict).expect("a layer evicts its own waiter");
                    let parked = self.reqs.get(victim).expect("live request").time.attempt_start;
                    self.layer_waited(now, parked, l);
                    let layer = self.layer_mut(inst, l);
                    layer.queue.remove(pos);
                    dec!(layer.waiting);
                    self.bump_generation(victim);
                    let victim_class = self.reqs.get(victim).expect("live request").who.class;
                    let why = self.layer(inst, l).policy.refusal(victim_class);
                    self.refused(now, q, victim, l, why);
                    self.park(now, q, tok, inst, l, max_wait);
                }
                Admission::Refuse(why) => self.refused(now, q, tok, l, why),
            }
            return;
        }
        self.reqs.get_mut(tok).expect("live request").attempt.pos = pos as u8;
        self.acquire_connection(now, q, tok);
    }

    /// Park an attempt in layer `l`'s wait queue.
    fn park(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, inst: u32, l: u8, max_wait: Time) {
        self.layer_queued(now, l);
        let (request, _) = self.request_deadline(tok);
        let r = self.reqs.get_mut(tok).expect("live request");
        r.phase = Phase::LayerQueue;
        r.time.attempt_start = now;
        if now.saturating_add(max_wait) > request {
            // The request-level timeout fires first and ends the wait (`on_timer`).
            self.timer(q, tok, request, Timer::LayerWait);
        } else {
            self.timer_fixed(q, tok, max_wait, Timer::LayerWait);
        }
        let r = self.reqs.get(tok).expect("live request");
        let (generation, priority) = (r.generation, self.class_terms(r.who.class).0);
        let layer = self.layer_mut(inst, l);
        layer.queue.push(tok, generation, priority);
        layer.waiting += 1;
    }

    /// When the request-level timeouts the request has passed fire, the earliest, and its
    /// unwind: (`Time::MAX`, 0) when none. Each runs from when its layer admitted the first
    /// attempt (`admitted_at` keeps that: retries start inside the retry layer).
    pub(super) fn request_deadline(&self, tok: Token) -> (Time, Time) {
        let mut first = (Time::MAX, 0);
        if !F::STACK || !self.layout.request_timed {
            return first; // no layer, no timeout
        }
        let r = self.reqs.get(tok).expect("live request");
        for &(p, t, unwind) in &self.layout.request_timeouts[self.route_of(r.who.class as usize, tok)] {
            if p < r.attempt.pos || r.attempt.number > 1 {
                let at = self.admitted_at(tok, p as usize).saturating_add(t);
                if at < first.0 {
                    first = (at, unwind);
                }
            }
        }
        first
    }

    /// The waiting entry of layer `l` whose attempt has id `id`.
    fn waiter_with_id(&self, inst: u32, l: u8, id: u64) -> Option<(Pos, Token)> {
        let reqs = &self.reqs;
        let mut live = self.layer(inst, l).queue.iter().filter(|(_, w)| waiting(reqs, w));
        live.find(|(_, w)| reqs.get(w.tok).is_some_and(|r| r.attempt.id == id)).map(|(pos, w)| (pos, w.tok))
    }

    /// The next waiting entry to serve, by the layer's queue order; prunes stale ends.
    fn next_waiting(&mut self, inst: u32, l: u8) -> Option<(Pos, Token)> {
        let owner = self.owner(inst, l);
        let layer = &mut self.gateway.insts[owner as usize].layers[l as usize];
        let order = layer.policy.queue_order();
        let reqs = &self.reqs;
        layer.queue.next(order, |w| waiting(reqs, w))
    }

    /// Tell the layers this attempt passed that it was not executed.
    pub(super) fn cancel_admitted(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get(tok).expect("live request");
        let start = if r.attempt.number == 1 {
            0
        } else {
            self.layout.inner_start[self.route_of(r.who.class as usize, tok)] as usize
        };
        self.cancel_from(now, q, tok, start);
    }

    /// Tell the layers this attempt passed, from position `start` on, that it was not executed.
    pub(super) fn cancel_from(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, start: usize) {
        let r = self.reqs.get(tok).expect("live request");
        let (route, inst, pos) = (self.route_of(r.who.class as usize, tok), r.who.instance, r.attempt.pos as usize);
        for p in (start..pos).rev() {
            let l = self.layout.class_layers[route][p];
            if !self.hears(l) {
                continue;
            }
            let mut att = self.attempt_of(now, tok, l);
            att.id = self.id_at(tok, p);
            self.deliver(now, q, inst, l, Notice::Cancel(att));
        }
    }

    /// Layer `l` refused the attempt (or its wait there ended without admission). A refusal
    /// by a layer inside the retry layer is offered to it (`Retry`'s `on_refusal` decides):
    /// the layers inside that the attempt passed hear it was not executed, and the request
    /// waits out a backoff.
    pub(super) fn refused(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, l: u8, why: Refusal) {
        let r = self.reqs.get(tok).expect("live request");
        let inner = self.layout.inner_start[self.route_of(r.who.class as usize, tok)];
        let how = match why {
            Refusal::Rejected => Some(Refused::Layer429),
            // An open breaker and a limit answered as 503 (`refuse_as: Unavailable`) alike.
            Refusal::ShortCircuited | Refusal::Unavailable => Some(Refused::Layer503),
            Refusal::BadGateway => Some(Refused::Layer502),
            Refusal::Fallback => None,
        };
        if let Some(how) = how.filter(|_| r.attempt.pos > inner) {
            self.cancel_from(now, q, tok, inner as usize);
            if self.retry_after(now, q, tok, CallOutcome::Error, Failure::Refused(how)) {
                return;
            }
            // Not retried: the layers inside have heard; the request ends below.
            self.reqs.get_mut(tok).expect("live request").attempt.pos = inner;
        }
        self.cancel_admitted(now, q, tok);
        let attempt = self.reqs.get(tok).expect("live request").attempt.number;
        if attempt > 1 {
            self.complete_outer(now, q, tok, CallOutcome::Error);
        }
        let (outcome, cause) = match why {
            Refusal::Rejected | Refusal::Fallback => (Outcome::Rejected, self.layout.kinds[l as usize].refusal()),
            Refusal::ShortCircuited => (Outcome::ShortCircuited, Cause::BreakerOpen),
            Refusal::Unavailable => (Outcome::Error, self.layout.kinds[l as usize].refusal()),
            Refusal::BadGateway => (Outcome::Error, Cause::NoLiveUpstream),
        };
        self.fail_as(tok, cause);
        self.conclude(now, q, tok, outcome, Some(why));
    }

    /// Complete layers outside the retry layer with the request's final outcome.
    pub(super) fn complete_outer(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, outcome: CallOutcome) {
        let outer = self.layout.inner_start[self.route(tok)];
        self.complete_before(now, q, tok, outcome, outer as usize);
    }

    /// Complete the layers at positions below `end` with the request's final outcome.
    pub(super) fn complete_before(
        &mut self,
        now: Time,
        q: &mut EventQueue<Ev>,
        tok: Token,
        outcome: CallOutcome,
        end: usize,
    ) {
        let r = self.reqs.get(tok).expect("live request");
        let (route, inst) = (self.route_of(r.who.class as usize, tok), r.who.instance);
        for p in (0..end).rev() {
            let l = self.layout.class_layers[route][p];
            if !self.hears(l) {
                continue;
            }
            let r = self.reqs.get(tok).expect("live request");
            let done = Completed::new(now, r.who.class, self.id_at(tok, p), self.admitted_at(tok, p), outcome);
            self.deliver(now, q, inst, l, Notice::Complete(done));
        }
    }

    /// The id under which the layer at position `p` admitted the request's call: a layer
    /// outside the retry layer admitted the first attempt only, and an id-keyed layer
    /// (Envoy's `admitted`, the adaptive gate's `open`, breaker probes) must hear that id back.
    fn id_at(&self, tok: Token, p: usize) -> u64 {
        let r = self.reqs.get(tok).expect("live request");
        if p < self.layout.inner_start[self.route_of(r.who.class as usize, tok)] as usize {
            self.first_ids[tok.index as usize].0
        } else {
            r.attempt.id
        }
    }

    /// Hand a cancellation or completion to a layer: at once for per-instance state, after
    /// the propagation delay for fleet-wide state.
    #[inline]
    pub(super) fn deliver(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8, notice: Notice) {
        match self.layout.fleet[l as usize] {
            Some(delay) if delay > 0 => {
                let token = self.gateway.notices.insert((inst, l, notice));
                q.schedule_at(now.saturating_add(delay), Ev::Notice { token });
            }
            _ => self.apply_notice(now, q, inst, l, notice),
        }
    }

    /// Apply a notice now. A delayed one is re-timed so the policy never sees time go back,
    /// keeping the measured duration.
    pub(super) fn apply_notice(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8, notice: Notice) {
        if !self.layout.hooks[l as usize].has(Hooks::NOTICES) {
            // Nothing for the policy to hear, so its status cannot change; its queue is
            // still served, as after any notice.
            if self.may_queue(l) {
                self.gateway.pump.push((inst, l));
            }
            return;
        }
        let policy = &mut self.layer_mut(inst, l).policy;
        match notice {
            Notice::Cancel(mut a) => {
                a.now = now;
                policy.cancel(&a);
            }
            Notice::Complete(mut d) => {
                let duration = d.duration();
                d.now = now;
                d.admitted_at = now - duration;
                policy.complete(&d);
            }
        }
        self.note(now, q, inst, l);
        self.gateway.pump.push((inst, l));
    }

    pub(super) fn pump_layers(&mut self, now: Time, q: &mut EventQueue<Ev>) {
        while let Some((inst, l)) = self.gateway.pump.pop() {
            if self.layer(inst, l).queue.is_empty() {
                continue; // nothing to serve or prune (most layers never queue)
            }
            while let Some((pos, head)) = self.next_waiting(inst, l) {
                let mut att = self.attempt_of(now, head, l);
                att.queued = att.queued.saturating_sub(1);
                let decision = self.layer_mut(inst, l).policy.admit(&att);
                self.note(now, q, inst, l);
                if let Admission::Wait { .. } | Admission::WaitEvicting { .. } = decision {
                    break;
                }
                let parked = self.reqs.get(head).expect("live request").time.attempt_start;
                self.layer_waited(now, parked, l);
                let layer = self.layer_mut(inst, l);
                layer.queue.remove(pos);
                dec!(layer.waiting);
                self.bump_generation(head);
                self.reqs.get_mut(head).expect("live request").phase = Phase::Dequeued;
                match decision {
                    Admission::Admit => {
                        let r = self.reqs.get_mut(head).expect("live request");
                        let pos = r.attempt.pos as usize;
                        r.attempt.pos += 1;
                        self.set_admitted(head, pos, now);
                        self.admit_from(now, q, head);
                    }
                    Admission::Refuse(why) => self.refused(now, q, head, l, why),
                    Admission::Wait { .. } | Admission::WaitEvicting { .. } => unreachable!("handled above"),
                }
            }
        }
    }

    /// The instance that holds layer `l`'s state for instance `inst`.
    pub(super) fn owner(&self, inst: u32, l: u8) -> u32 {
        if self.layout.fleet[l as usize].is_some() { 0 } else { inst }
    }

    /// Layer `l` as seen from instance `inst`.
    pub(super) fn layer(&self, inst: u32, l: u8) -> &LayerRt {
        &self.gateway.insts[self.owner(inst, l) as usize].layers[l as usize]
    }

    /// Layer `l` as seen from instance `inst`, mutably.
    pub(super) fn layer_mut(&mut self, inst: u32, l: u8) -> &mut LayerRt {
        let owner = self.owner(inst, l);
        &mut self.gateway.insts[owner as usize].layers[l as usize]
    }

    /// Layer `l` may park attempts in its wait queue: only a policy asked to admit
    /// (`Hooks::ADMIT`) can answer `Wait`, so no other layer's queue ever needs serving.
    pub(super) fn may_queue(&self, l: u8) -> bool {
        self.layout.hooks[l as usize].has(Hooks::ADMIT)
    }

    /// A notice (cancellation or completion) to layer `l` does something: its policy hears
    /// it, its queue may be served after it, or it travels as an event (a fleet-wide layer's
    /// propagation delay). Otherwise `deliver` would do nothing with it, so it is not built.
    pub(super) fn hears(&self, l: u8) -> bool {
        self.layout.hooks[l as usize].has(Hooks::NOTICES)
            || self.may_queue(l)
            || self.layout.fleet[l as usize].is_some_and(|delay| delay > 0)
    }

    /// Look at a layer's status after an interaction: breaker transitions, limits, degraded
    /// flag and timer wishes. A fleet-wide layer's status applies to every instance.
    #[inline]
    pub(super) fn note(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8) {
        let layer = self.layer(inst, l);
        if !layer.watch {
            debug_assert!(layer.policy.status() == layer.last, "a layer that reports no status changed it");
            return;
        }
        self.note_status(now, q, inst, l);
    }

    /// `note` for a layer whose policy reports status changes.
    #[inline(never)]
    fn note_status(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8) {
        let owner = self.owner(inst, l);
        let layer = self.layer_mut(inst, l);
        let st = layer.policy.status();
        let last = layer.last;
        if st == last {
            return;
        }
        layer.last = st;
        if F::TRACE && self.trace.log.is_some() {
            self.log_change(now, inst, l, last, st);
        }
        let layer = self.layer_mut(inst, l);
        if st.wake_at != layer.wake {
            layer.wake = st.wake_at;
            layer.wake_generation = layer.wake_generation.wrapping_add(1);
            if let Some(t) = st.wake_at {
                q.schedule_at(t.max(now), Ev::Wake { instance: owner, layer: l, generation: layer.wake_generation });
            }
        }
        // A fleet-wide layer is the gateway's: its instances, not the services' after them.
        let affected =
            if self.layout.fleet[l as usize].is_some() { 0..self.m.scenario.fleet.instances } else { inst..inst + 1 };
        for i in affected {
            if st.degraded != last.degraded {
                let d = &mut self.gateway.insts[i as usize].degraded;
                if st.degraded { *d += 1 } else { dec!(*d) }
            }
            let gateway = !self.is_service_inst(i);
            if gateway && Some(l) == self.layout.breaker_layer && st.breaker != last.breaker {
                self.rec.breaker(now, i, st.breaker.unwrap_or(BreakerState::Closed));
            }
            if st.breaker != last.breaker && self.layout.kinds[l as usize] == LayerKind::Breaker {
                self.graph_breaker(now, l, last.breaker, st.breaker);
            }
            if gateway && Some(l) == self.layout.limit_layer && st.limit != last.limit {
                self.rec.limit(now, i, st.limit.unwrap_or(0.0));
            }
        }
    }
}

impl<R: Record, F: Features> World<'_, R, F> {
    /// In a run with a service graph, a breaker layer `l` scoped to dependencies went from
    /// `from` to `to` on one instance: each of its dependencies counts one more or one fewer
    /// open breaker (`GraphEvent::BreakerOpen`).
    fn graph_breaker(&mut self, now: Time, l: u8, from: Option<BreakerState>, to: Option<BreakerState>) {
        let open = |b: Option<BreakerState>| i8::from(b == Some(BreakerState::Open));
        let delta = open(to) - open(from);
        if delta == 0 || self.upstream.dep_in_flight.is_empty() {
            return;
        }
        let s = &self.m.scenario;
        for dep in build::scoped_deps(s, &self.m.run_stack(self.policy).layers[l as usize]) {
            self.rec.graph(crate::metrics::GraphEvent::BreakerOpen { now, dep, delta });
        }
    }
}

/// The request behind `w` still waits in the queue it was parked in.
pub(super) fn waiting(reqs: &Slab<Req>, w: &Waiter) -> bool {
    reqs.get(w.tok).is_some_and(|r| r.phase == Phase::LayerQueue && r.generation == w.generation)
}
