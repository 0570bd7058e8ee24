//! The policy stack: admission through the layers, waiting queues, cancellation and status.

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
            queued: self.insts[r.instance as usize].layers[layer as usize].waiting,
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
    pub(super) fn cancel_admitted(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
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
            self.insts[inst as usize].layers[l as usize].policy.complete(&done);
            self.note(now, q, inst, l);
            self.pump.push((inst, l));
        }
    }

    pub(super) fn pump_layers(&mut self, now: Time, q: &mut EventQueue<Ev>) {
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
    pub(super) fn note(&mut self, now: Time, q: &mut EventQueue<Ev>, inst: u32, l: u8) {
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
}
