//! The end of an attempt: completions, retries, fallbacks and the final outcome.

use super::*;
use crate::model::dependency::DelayDist;
use crate::model::fallback::{Given, give};
use crate::scenario::FallbackAnswer;

impl<R: Record, F: Features> World<'_, R, F> {
    /// Record why the request failed, for the recorder's `causes`.
    pub(super) fn fail_as(&mut self, tok: Token, cause: Cause) {
        self.reqs.get_mut(tok).expect("live request").answer.cause = Some(cause);
    }

    /// The end of an attempt; a failure is a dependency error or an attempt timeout.
    pub(super) fn attempt_end(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, outcome: CallOutcome) {
        let cause = match outcome {
            CallOutcome::Timeout => Cause::AttemptTimeout,
            CallOutcome::Success | CallOutcome::Error => Cause::DependencyError,
        };
        self.attempt_end_as(now, q, tok, outcome, cause);
    }

    /// The dependency refused the attempt's call with a 503 without serving it: an error to
    /// the layers, a `Refused::Dependency503` to the retry layer.
    pub(super) fn attempt_refused_by_dependency(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let failure = Failure::Refused(Refused::Dependency503);
        self.attempt_end_with(now, q, tok, CallOutcome::Error, Cause::DependencyError, failure);
    }

    /// The attempt's call never reached the dependency, its connection `how` failed (a
    /// partition, or a set-up past the connect timeout): an error to the layers, counted under `cause`, a `Failure::Connect` to the retry
    /// layer, which alone tells it from an error answer (HAProxy's `retry-on conn-failure`).
    pub(super) fn attempt_connect_failed(
        &mut self,
        now: Time,
        q: &mut EventQueue<Ev>,
        tok: Token,
        how: crate::policy::ConnectFailure,
        cause: Cause,
    ) {
        self.attempt_end_with(now, q, tok, CallOutcome::Error, cause, Failure::Connect(how));
    }

    /// The end of an attempt; a failure that ends the request counts under `cause`.
    pub(super) fn attempt_end_as(
        &mut self,
        now: Time,
        q: &mut EventQueue<Ev>,
        tok: Token,
        outcome: CallOutcome,
        cause: Cause,
    ) {
        let failure = if outcome == CallOutcome::Timeout { Failure::Timeout } else { Failure::Error };
        self.attempt_end_with(now, q, tok, outcome, cause, failure);
    }

    /// The end of an attempt that failed as `failure` (when `outcome` is a failure); one that
    /// ends the request counts under `cause`.
    fn attempt_end_with(
        &mut self,
        now: Time,
        q: &mut EventQueue<Ev>,
        tok: Token,
        outcome: CallOutcome,
        cause: Cause,
        failure: Failure,
    ) {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst, attempt) = (r.who.class as usize, r.who.instance, r.attempt.number);
        let dependency = self.dep_of(tok);
        if F::TRACE
            && let Some(log) = &mut self.trace.records
        {
            let (key, start) = (r.who.key, r.time.attempt_start);
            log.attempts.push(AttemptRecord { class: r.who.class, key, attempt, dependency, start, end: now, outcome });
        }
        // Layers from the retry layer inward see each attempt; with no retry layer that is all.
        let route = self.route_of(class, tok);
        let start = self.layout.inner_start[route] as usize;
        let layers = if F::STACK { self.layout.class_layers[route].len() } else { 0 };
        let id = r.attempt.id;
        for p in (start..layers).rev() {
            let l = self.layout.class_layers[route][p];
            if self.hears(l) {
                let done = Completed::new(now, class as ClassId, id, self.admitted_at(tok, p), outcome);
                self.deliver(now, q, inst, l, Notice::Complete(done));
            }
        }
        // Without a layer no retry layer answers: nothing to offer the failure to.
        if F::STACK && outcome.is_failure() && self.retry_after(now, q, tok, outcome, failure) {
            return;
        }
        if self.layout.inner_start[route] > 0 {
            self.complete_outer(now, q, tok, outcome);
        }
        if outcome.is_failure() {
            self.fail_as(tok, cause);
        }
        match outcome {
            CallOutcome::Success => {
                // A call of a plan answers its request, which refreshes when its plan succeeds.
                if !self.is_child(tok) {
                    self.refresh_caches(now, tok);
                }
                self.respond(now, q, tok, Outcome::Ok, None);
            }
            CallOutcome::Error => self.conclude(now, q, tok, Outcome::Error, None),
            CallOutcome::Timeout => self.timed_out(now, q, tok),
        }
    }

    /// Offer a failed attempt (`outcome` to the layers, `failure` to the retry predicates)
    /// to the retry layers; the first that answers with a delay decides, then every budget
    /// must allow it. True when a retry is scheduled: the request waits out its backoff.
    pub(super) fn retry_after(
        &mut self,
        now: Time,
        q: &mut EventQueue<Ev>,
        tok: Token,
        outcome: CallOutcome,
        failure: Failure,
    ) -> bool {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst, attempt) = (r.who.class as usize, r.who.instance, r.attempt.number);
        let route = self.route_of(class, tok);
        if !self.route_has(route, Hooks::RETRY_DELAY) {
            return false; // no layer asks for a retry
        }
        // No retry starts once the request-level timeout has fired (Polly's retry returns the
        // outcome when its cancellation token is cancelled).
        let (request, _) = self.request_deadline(tok);
        if now >= request {
            return false;
        }
        let r = self.reqs.get(tok).expect("live request");
        let since = self.first_ids[tok.index as usize].1;
        // Keyed by the dependency too: a plan's first calls to two dependencies share the
        // request's key, and must not share their jitter.
        let key = ((class as u64) << 48) ^ r.who.key ^ self.m.dep(self.dep_of(tok)).salt();
        let uniform = self.draws.retry.f64(key, u64::from(attempt));
        // The give-up draw: the same counter at indices no jitter draw uses.
        let patience = self.draws.retry.f64(key, (1 << 32) | u64::from(attempt));
        let ask = RetryAsk::new(now, class as ClassId, attempt, outcome, uniform)
            .failure(failure)
            .patience(patience)
            .since(since);
        let mut delay = None;
        for li in 0..self.layout.class_layers[route].len() {
            let l = self.layout.class_layers[route][li];
            if !self.layout.hooks[l as usize].has(Hooks::RETRY_DELAY) {
                continue;
            }
            delay = self.layer_mut(inst, l).policy.retry_delay(&ask);
            if delay.is_some() {
                break;
            }
        }
        // Every retry source counts against `limits.max_attempts`: validation refuses a stack
        // whose retry layers multiply past it, and no request makes more attempts here.
        let spent = u64::from(attempt) >= self.m.scenario.limits.max_attempts;
        let Some(d) = delay.filter(|_| !spent) else { return false };
        let mut allowed = true;
        for li in 0..self.layout.class_layers[route].len() {
            let l = self.layout.class_layers[route][li];
            if self.layout.hooks[l as usize].has(Hooks::ALLOW_RETRY) {
                allowed &= self.layer_mut(inst, l).policy.allow_retry(&ask);
            }
            self.note(now, q, inst, l);
            if !allowed {
                return false;
            }
        }
        self.reqs.get_mut(tok).expect("live request").phase = Phase::Backoff;
        // A backoff past the request-level timeout is cut there (`after_backoff`).
        self.timer(q, tok, now.saturating_add(d).min(request), Timer::Backoff);
        true
    }

    /// A request succeeded: the caches and last answers take the true value.
    pub(super) fn refresh_caches(&mut self, now: Time, tok: Token) {
        if !F::EXTRAS {
            return; // no cache, no last answer
        }
        let r = self.reqs.get(tok).expect("live request");
        if self.is_service_class(r.who.class) {
            return; // the caches are the gateway's, per class and instance
        }
        let (class, inst, item) = (r.who.class as usize, r.who.instance, r.who.item);
        if let Some(stock) = &mut self.stock {
            stock.refresh(inst, item, now);
        }
        if let Some(last) = &mut self.last_answers {
            last.refresh(class, inst, now);
        }
    }

    /// The request ends timed out: the 504 (or the class's fallback) after the unwind of
    /// the timeout that fired, if any.
    fn timed_out(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let unwind = self.reqs.get(tok).expect("live request").time.unwind;
        if unwind > 0 {
            self.reqs.get_mut(tok).expect("live request").phase = Phase::Unwinding;
            if matches!(self.m.unwind, Some(DelayDist::Random(..))) {
                self.timer(q, tok, now.saturating_add(unwind), Timer::Unwind);
            } else {
                self.timer_fixed(q, tok, unwind, Timer::Unwind);
            }
        } else {
            self.conclude(now, q, tok, Outcome::Timeout, None);
        }
    }

    /// A backoff ended: the next attempt starts, unless the request-level timeout cut the
    /// backoff (Polly's retry delay runs under the outer timeout's token).
    pub(super) fn after_backoff(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        if now < self.request_deadline(tok).0 {
            self.begin_attempt(now, q, tok);
        } else {
            // The last attempt's layers inside the retry have heard its end already.
            self.complete_outer(now, q, tok, CallOutcome::Timeout);
            self.request_timed_out(now, q, tok);
        }
    }

    /// The request-level timeout fired before the current attempt made its call (while it
    /// waited in a layer's queue, or as it was admitted): the layers inside the retry layer
    /// that admitted the attempt hear it was not executed (as after a refusal), those outside
    /// it that the request passed, that it timed out (as Polly's outer strategies see the
    /// `TimeoutRejectedException`), and the request ends timed out.
    pub(super) fn cut_before_call(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get(tok).expect("live request");
        let (inner, pos) =
            (self.layout.inner_start[self.route_of(r.who.class as usize, tok)] as usize, r.attempt.pos as usize);
        self.cancel_from(now, q, tok, inner);
        self.complete_before(now, q, tok, CallOutcome::Timeout, pos.min(inner));
        self.request_timed_out(now, q, tok);
    }

    /// End the request timed out by its request-level timeout, with that timeout's unwind.
    fn request_timed_out(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let (_, unwind) = self.request_deadline(tok);
        let unwind = self.unwind_of(tok, Some(unwind));
        self.reqs.get_mut(tok).expect("live request").time.unwind = unwind;
        self.fail_as(tok, Cause::AttemptTimeout);
        self.timed_out(now, q, tok);
    }

    /// The unwind after a timeout whose own unwind is `own` (None: no timeout applies):
    /// the fleet's `timeout_unwind`, when given, replaces it, one draw per attempt (a hedge
    /// shares its attempt's).
    pub(super) fn unwind_of(&self, tok: Token, own: Option<Time>) -> Time {
        match (&self.m.unwind, own) {
            (Some(d), Some(_)) => {
                let r = self.reqs.get(tok).expect("live request");
                d.at(((r.who.class as u64) << 48) ^ r.who.key, u64::from(r.attempt.number))
            }
            (_, own) => own.unwrap_or(0),
        }
    }

    /// A refused (`refusal` says how the policy refused) or failed (`None`) request: answer
    /// with the class's fallback where the refusal asks for it or the class allows it. A
    /// `Rejected` refusal is the 429 the policy chose, whatever the class's setting.
    pub(super) fn conclude(
        &mut self,
        now: Time,
        q: &mut EventQueue<Ev>,
        tok: Token,
        outcome: Outcome,
        refusal: Option<Refusal>,
    ) {
        if self.is_child(tok) {
            // A call of a plan answers its request, which falls back (or not) as a whole.
            self.plans.links[tok.index as usize].refusal = refusal;
            self.respond(now, q, tok, outcome, None);
            return;
        }
        if self.is_service_class(self.reqs.get(tok).expect("live request").who.class) {
            // A service has no fallback of its own: its caller's layers decide.
            self.respond(now, q, tok, outcome, None);
            return;
        }
        let r = self.reqs.get(tok).expect("live request");
        let class = &self.m.scenario.classes[r.who.class as usize];
        let allowed = match (refusal, class.fallback) {
            (Some(Refusal::Rejected | Refusal::Unavailable | Refusal::BadGateway), _) | (_, Fallback::None) => false,
            (Some(Refusal::Fallback | Refusal::ShortCircuited), _) => true,
            (None, Fallback::OnRefusal) => false,
            (None, Fallback::OnRefusalOrFailure) => true,
        };
        let (inst, item) = (r.who.instance, r.who.item);
        if !allowed {
            self.respond(now, q, tok, outcome, None);
            return;
        }
        if class.fallback_answer.is_catalogue() {
            if let Some(served) = self.stock.as_mut().and_then(|s| s.serve(inst, item, now)) {
                self.respond(now, q, tok, Outcome::Fallback, Some((served.staleness, served.wrong)));
                return;
            }
        } else if let Some(given) =
            give(class.fallback_answer, self.last_answers.as_ref(), r.who.class as usize, inst, now)
        {
            // A cached answer reports its age; a default answer has none. Neither can be wrong:
            // without a catalogue there is no true value to compare with.
            let staleness = match given {
                Given::Cached(age) => Some((age, false)),
                Given::Open | Given::Closed => None,
            };
            self.respond(now, q, tok, Outcome::Fallback, staleness);
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
        let r = self.reqs.get_mut(tok).expect("live request");
        r.answer.outcome = outcome;
        r.answer.staleness = staleness;
        if F::GRAPH && self.m.graph.is_some() && self.plans.links[tok.index as usize].parent.is_some() {
            self.child_responds(now, q, tok);
            return;
        }
        if self.is_service_class(self.reqs.get(tok).expect("live request").who.class) {
            // A service's answer has no response overhead of the gateway's: it travels back.
            self.service_answers(now, q, tok);
            return;
        }
        let r = self.reqs.get_mut(tok).expect("live request");
        let (fixed, overhead) = match &self.m.overhead {
            DelayDist::Fixed(t) => (true, *t),
            // One draw per request: a request responds once.
            random => (false, random.at(((r.who.class as u64) << 48) ^ r.who.key, 0)),
        };
        if overhead > 0 {
            r.phase = Phase::Responding;
            if fixed {
                self.timer_fixed(q, tok, overhead, Timer::Respond);
            } else {
                self.timer(q, tok, now.saturating_add(overhead), Timer::Respond);
            }
        } else {
            self.finish(now, q, tok);
        }
    }

    pub(super) fn finish(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        if self.is_child(tok) {
            self.child_done(now, q, tok);
            return;
        }
        // Copy out what is needed rather than move the whole request out of the slab.
        let r = self.reqs.get(tok).expect("live request");
        let r = Done { worker: r.worker, who: r.who, arrived: r.time.arrived, answer: r.answer, calls: r.calls };
        let blame = (F::GRAPH && self.m.graph.is_some())
            .then(|| self.blame_of(tok, r.who.class, r.arrived, r.answer.cause, r.calls));
        self.reqs.discard(tok);
        if r.worker {
            self.release_worker(now, q, r.who.instance);
        }
        let class = &self.m.scenario.classes[r.who.class as usize];
        let key = ((r.who.class as u64) << 48) ^ r.who.key;
        let mut order = OrderEffect::default();
        if F::EXTRAS
            && let Some(b) = &self.m.scenario.business
            && self.draws.orders.f64(key, 0) < class.order_fraction
        {
            order.order = true;
            let in_time = now - r.arrived <= class.deadline.ns();
            // A fail-closed answer refused the order; every other in-time fallback carried it.
            let closed = matches!(class.fallback_answer, FallbackAnswer::FailClosed { .. });
            match (r.answer.outcome, r.answer.staleness) {
                (Outcome::Ok, _) if in_time => {}
                (Outcome::Fallback, None) if in_time && !closed => {}
                (Outcome::Fallback, Some((_, wrong))) if in_time => {
                    if wrong {
                        let allowance = if self.gateway.insts[r.who.instance as usize].degraded > 0 {
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
        let f = crate::metrics::Finished {
            now,
            instance: r.who.instance,
            class: r.who.class as usize,
            arrived: r.arrived,
            outcome: r.answer.outcome,
            staleness: r.answer.staleness,
            cause: r.answer.cause,
            order,
            dependency_calls: r.calls,
        };
        match blame {
            Some(blame) => self.rec.finish_blamed(f, blame),
            None => self.rec.finish(f),
        }
        if F::EXTRAS
            && let Some(reload) = &class.reload
        {
            // An impatient or failed user presses reload: more load exactly when it hurts.
            let bad =
                !matches!(r.answer.outcome, Outcome::Ok | Outcome::Fallback) || now - r.arrived > reload.patience.ns();
            if bad && r.who.reloads < reload.max_reloads && self.draws.reload.f64(key, 0) < reload.probability {
                // The user asks again for the item they were looking at.
                let pending = PendingReload { origin: r.who.origin, number: r.who.reloads + 1, item: r.who.item };
                let token = self.traffic.pending_reloads.insert(pending);
                q.schedule_at(now.saturating_add(reload.delay.ns()), Ev::Reload { class: r.who.class, token });
            }
        }
        if F::EXTRAS
            && let Some((user, k)) = r.who.user
        {
            let k = k.wrapping_add(1);
            let think = self.think(r.who.class, user, k);
            q.schedule_at(now.saturating_add(think), Ev::User { class: r.who.class, user, k });
        }
    }
}

/// What `finish` needs of a request once it leaves the slab.
struct Done {
    worker: bool,
    who: Identity,
    arrived: Time,
    answer: Answer,
    calls: u32,
}
