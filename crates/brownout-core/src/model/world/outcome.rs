//! The end of an attempt: completions, retries, fallbacks and the final outcome.

use super::*;

impl World<'_> {
    pub(super) fn attempt_end(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, outcome: CallOutcome) {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst, attempt) = (r.class as usize, r.instance, r.attempt);
        if let Some(log) = &mut self.log {
            let (key, start) = (r.key, r.wait_since);
            log.attempts.push(AttemptRecord { class: r.class, key, attempt, start, end: now, outcome });
        }
        // Layers from the retry layer inward see each attempt; with no retry layer that is all.
        let start = self.inner_start[class] as usize;
        let layers = self.class_layers[class].len();
        for p in (start..layers).rev() {
            let l = self.class_layers[class][p];
            let r = self.reqs.get(tok).expect("live request");
            let done = Completed { now, class: r.class, id: r.attempt_id, admitted_at: r.admitted_at[p], outcome };
            self.deliver(now, q, inst, l, Notice::Complete(done));
        }
        if outcome.is_failure() {
            let r = self.reqs.get(tok).expect("live request");
            let ask = RetryAsk {
                now,
                class: class as ClassId,
                attempt,
                outcome,
                uniform: self.draws.retry.f64(((class as u64) << 48) ^ r.key, attempt as u64),
            };
            let mut delay = None;
            for li in 0..self.class_layers[class].len() {
                let l = self.class_layers[class][li];
                delay = self.layer_mut(inst, l).policy.retry_delay(&ask);
                if delay.is_some() {
                    break;
                }
            }
            if let Some(d) = delay {
                let mut allowed = true;
                for li in 0..layers {
                    let l = self.class_layers[class][li];
                    allowed &= self.layer_mut(inst, l).policy.allow_retry(&ask);
                    self.note(now, q, inst, l);
                    if !allowed {
                        break;
                    }
                }
                if allowed {
                    self.reqs.get_mut(tok).expect("live request").phase = Phase::Backoff;
                    self.timer(q, tok, now.saturating_add(d), Timer::Backoff);
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
                    self.timer_fixed(q, tok, unwind, Timer::Unwind);
                } else {
                    self.conclude(now, q, tok, Outcome::Timeout, false);
                }
            }
        }
    }

    /// A refused or failed request: answer from the cache if the class allows it.
    pub(super) fn conclude(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, outcome: Outcome, refusal: bool) {
        let r = self.reqs.get(tok).expect("live request");
        let allowed = match self.m.scenario.classes[r.class as usize].fallback {
            Fallback::None => false,
            Fallback::OnRefusal => refusal,
            Fallback::OnRefusalOrFailure => true,
        };
        let (inst, item) = (r.instance, r.item);
        if allowed && let Some(served) = self.stock.as_mut().and_then(|s| s.serve(inst, item, now)) {
            self.respond(now, q, tok, Outcome::Fallback, Some((served.staleness, served.wrong)));
            return;
        }
        self.respond(now, q, tok, outcome, None);
    }

    pub(super) fn respond(
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
            self.timer_fixed(q, tok, overhead, Timer::Respond);
        } else {
            self.finish(now, q, tok);
        }
    }

    pub(super) fn finish(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        // Copy out what is needed rather than move the whole request out of the slab.
        let r = self.reqs.get(tok).expect("live request");
        let r = Done {
            worker: r.worker,
            instance: r.instance,
            class: r.class,
            key: r.key,
            origin: r.origin,
            item: r.item,
            arrived: r.arrived,
            outcome: r.outcome,
            staleness: r.staleness,
            calls: r.calls,
            reloads: r.reloads,
            user: r.user,
        };
        self.reqs.discard(tok);
        if r.worker {
            self.release_worker(now, q, r.instance);
        }
        let class = &self.m.scenario.classes[r.class as usize];
        let key = ((r.class as u64) << 48) ^ r.key;
        let mut order = OrderEffect::default();
        if let Some(b) = &self.m.scenario.business
            && self.draws.orders.f64(key, 0) < class.order_fraction
        {
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
                        if self.draws.subst.f64(key, 0) < allowance {
                            order.substitution = true;
                        } else {
                            order.refund = true;
                        }
                    }
                }
                _ => order.lost = true,
            }
        }
        self.rec.finish(now, r.instance, r.class as usize, r.arrived, r.outcome, r.staleness, order, r.calls);
        if let Some(reload) = &class.reload {
            // An impatient or failed user presses reload: more load exactly when it hurts.
            let bad = !matches!(r.outcome, Outcome::Ok | Outcome::Fallback) || now - r.arrived > reload.patience.ns();
            if bad && r.reloads < reload.max_reloads && self.draws.reload.f64(key, 0) < reload.probability {
                // The user asks again for the item they were looking at.
                let pending = PendingReload { origin: r.origin, number: r.reloads + 1, item: r.item };
                let token = self.pending_reloads.insert(pending);
                q.schedule_at(now.saturating_add(reload.delay.ns()), Ev::Reload { class: r.class, token });
            }
        }
        if let Some((user, k)) = r.user {
            let k = k.wrapping_add(1);
            let think = self.think(r.class, user, k);
            q.schedule_at(now.saturating_add(think), Ev::User { class: r.class, user, k });
        }
    }
}

/// What `finish` needs of a request once it leaves the slab.
struct Done {
    worker: bool,
    instance: u32,
    class: ClassId,
    key: u64,
    origin: u64,
    item: u32,
    arrived: Time,
    outcome: Outcome,
    staleness: Option<(Time, bool)>,
    calls: u32,
    reloads: u32,
    user: Option<(u32, u32)>,
}
