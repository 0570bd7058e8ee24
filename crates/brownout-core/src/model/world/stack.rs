//! The policy stack: admission through the layers, waiting queues, cancellation and status.

use super::waitq::{Pos, Waiter};
use super::*;

impl World<'_> {
    // ---- the policy stack ------------------------------------------------------------

    pub(super) fn attempt_of(&self, now: Time, tok: Token, layer: u8) -> Attempt {
        let r = self.reqs.get(tok).expect("live request");
        let class = &self.m.scenario.classes[r.class as usize];
        Attempt {
            now,
            class: r.class,
            number: r.attempt,
            id: r.attempt_id,
            priority: class.priority,
            queued: self.layer(r.instance, layer).waiting,
        }
    }

    pub(super) fn begin_attempt(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let id = self.next_attempt_id;
        self.next_attempt_id += 1;
        let r = self.reqs.get_mut(tok).expect("live request");
        r.attempt += 1;
        r.attempt_id = id;
        r.pos = if r.attempt == 1 { 0 } else { self.inner_start[r.class as usize] };
        self.admit_from(now, q, tok);
    }

    pub(super) fn admit_from(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
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
            let decision = self.layer_mut(inst, l).policy.admit(&att);
            self.note(now, q, inst, l);
            match decision {
                Admission::Admit => {
                    let r = self.reqs.get_mut(tok).expect("live request");
                    r.admitted_at[pos] = now;
                    r.pos += 1;
                }
                Admission::Wait { max_wait } => {
                    self.park(now, q, tok, inst, l, max_wait);
                    return;
                }
                Admission::Shed { max_wait } => {
                    // The queue is full: whoever has the least deadline budget left goes.
                    let mine = self.deadline_at(tok);
                    match self.most_doomed(inst, l) {
                        Some((pos, victim)) if self.deadline_at(victim) < mine => {
                            let layer = self.layer_mut(inst, l);
                            layer.queue.remove(pos);
                            dec!(layer.waiting);
                            self.bump_generation(victim);
                            self.refused(now, q, victim, Refusal::Rejected);
                            self.park(now, q, tok, inst, l, max_wait);
                        }
                        _ => self.refused(now, q, tok, Refusal::Rejected),
                    }
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

    /// Park an attempt in layer `l`'s wait queue.
    fn park(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, inst: u32, l: u8, max_wait: Time) {
        let r = self.reqs.get_mut(tok).expect("live request");
        r.phase = Phase::LayerQueue;
        r.wait_since = now;
        self.timer_fixed(q, tok, max_wait, Timer::LayerWait);
        let r = self.reqs.get(tok).expect("live request");
        let (generation, priority) = (r.generation, self.m.scenario.classes[r.class as usize].priority);
        let layer = self.layer_mut(inst, l);
        layer.queue.push(tok, generation, priority);
        layer.waiting += 1;
    }

    fn deadline_at(&self, tok: Token) -> Time {
        let r = self.reqs.get(tok).expect("live request");
        r.arrived + self.m.scenario.classes[r.class as usize].deadline.ns()
    }

    /// The waiting entry with the least deadline budget left (ties: the earliest queued).
    fn most_doomed(&self, inst: u32, l: u8) -> Option<(Pos, Token)> {
        let mut best: Option<(Pos, Token, (Time, u64))> = None;
        for (pos, w) in self.layer(inst, l).queue.iter() {
            if waiting(&self.reqs, w) {
                let key = (self.deadline_at(w.tok), w.seq());
                if best.is_none_or(|b| key < b.2) {
                    best = Some((pos, w.tok, key));
                }
            }
        }
        best.map(|(pos, t, _)| (pos, t))
    }

    /// The next waiting entry to serve, by the layer's queue order; prunes stale ends.
    fn next_waiting(&mut self, inst: u32, l: u8) -> Option<(Pos, Token)> {
        let owner = self.owner(inst, l);
        let layer = &mut self.insts[owner as usize].layers[l as usize];
        let order = layer.policy.queue_order();
        let reqs = &self.reqs;
        layer.queue.next(order, |w| waiting(reqs, w))
    }

    /// Tell the layers this attempt passed that it was not executed.
    pub(super) fn cancel_admitted(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst, pos) = (r.class as usize, r.instance, r.pos as usize);
        let start = if r.attempt == 1 { 0 } else { self.inner_start[class] as usize };
        for p in (start..pos).rev() {
            let l = self.class_layers[class][p];
            let att = self.attempt_of(now, tok, l);
            self.deliver(now, q, inst, l, Notice::Cancel(att));
        }
    }

    pub(super) fn refused(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, why: Refusal) {
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
    pub(super) fn complete_outer(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, outcome: CallOutcome) {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst) = (r.class as usize, r.instance);
        let outer = self.inner_start[class] as usize;
        for p in (0..outer).rev() {
            let l = self.class_layers[class][p];
            let r = self.reqs.get(tok).expect("live request");
            let done = Completed { now, class: r.class, id: r.attempt_id, admitted_at: r.admitted_at[p], outcome };
            self.deliver(now, q, inst, l, Notice::Complete(done));
        }
    }

    /// Hand a cancellation or completion to a layer: at once for per-instance state, after
    /// the propagation delay for fleet-wide state.
    pub(super) fn deliver(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8, notice: Notice) {
        match self.fleet[l as usize] {
            Some(delay) if delay > 0 => {
                let token = self.notices.insert((inst, l, notice));
                q.schedule_at(now.saturating_add(delay), Ev::Notice { token });
            }
            _ => self.apply_notice(now, q, inst, l, notice),
        }
    }

    /// Apply a notice now. A delayed one is re-timed so the policy never sees time go back,
    /// keeping the measured duration.
    pub(super) fn apply_notice(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8, notice: Notice) {
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
        self.pump.push((inst, l));
    }

    pub(super) fn pump_layers(&mut self, now: Time, q: &mut EventQueue<Ev>) {
        while let Some((inst, l)) = self.pump.pop() {
            while let Some((pos, head)) = self.next_waiting(inst, l) {
                let mut att = self.attempt_of(now, head, l);
                att.queued = att.queued.saturating_sub(1);
                let decision = self.layer_mut(inst, l).policy.admit(&att);
                self.note(now, q, inst, l);
                if let Admission::Wait { .. } | Admission::Shed { .. } = decision {
                    break;
                }
                let layer = self.layer_mut(inst, l);
                layer.queue.remove(pos);
                dec!(layer.waiting);
                self.bump_generation(head);
                match decision {
                    Admission::Admit => {
                        let r = self.reqs.get_mut(head).expect("live request");
                        r.admitted_at[r.pos as usize] = now;
                        r.pos += 1;
                        self.admit_from(now, q, head);
                    }
                    Admission::Refuse(why) => self.refused(now, q, head, why),
                    Admission::Wait { .. } | Admission::Shed { .. } => unreachable!("handled above"),
                }
            }
        }
    }

    /// The instance that holds layer `l`'s state for instance `inst`.
    pub(super) fn owner(&self, inst: u32, l: u8) -> u32 {
        if self.fleet[l as usize].is_some() { 0 } else { inst }
    }

    /// Layer `l` as seen from instance `inst`.
    pub(super) fn layer(&self, inst: u32, l: u8) -> &LayerRt {
        &self.insts[self.owner(inst, l) as usize].layers[l as usize]
    }

    /// Layer `l` as seen from instance `inst`, mutably.
    pub(super) fn layer_mut(&mut self, inst: u32, l: u8) -> &mut LayerRt {
        let owner = self.owner(inst, l);
        &mut self.insts[owner as usize].layers[l as usize]
    }

    /// Look at a layer's status after an interaction: breaker transitions, limits, degraded
    /// flag and timer wishes. A fleet-wide layer's status applies to every instance.
    pub(super) fn note(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8) {
        let owner = self.owner(inst, l);
        let layer = self.layer_mut(inst, l);
        if !layer.watch {
            debug_assert!(layer.policy.status() == layer.last, "a layer that reports no status changed it");
            return;
        }
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
                q.schedule_at(t.max(now), Ev::Wake { instance: owner, layer: l, generation: layer.wake_generation });
            }
        }
        let affected = if self.fleet[l as usize].is_some() { 0..self.insts.len() as u32 } else { inst..inst + 1 };
        for i in affected {
            if st.degraded != last.degraded {
                let d = &mut self.insts[i as usize].degraded;
                if st.degraded { *d += 1 } else { dec!(*d) }
            }
            if Some(l) == self.breaker_layer && st.breaker != last.breaker {
                self.rec.breaker(now, i, st.breaker.unwrap_or(BreakerState::Closed));
            }
            if Some(l) == self.limit_layer && st.limit != last.limit {
                self.rec.limit(now, i, st.limit.unwrap_or(0.0));
            }
        }
    }
}

/// The request behind `w` still waits in the queue it was parked in.
pub(super) fn waiting(reqs: &Slab<Req>, w: &Waiter) -> bool {
    reqs.get(w.tok).is_some_and(|r| r.phase == Phase::LayerQueue && r.generation == w.generation)
}
