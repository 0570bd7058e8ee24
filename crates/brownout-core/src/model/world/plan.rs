//! Call plans: a request with a plan holds its worker slot while each step's calls run as
//! child requests (`Link::parent`), each passing the class's policy stack as a request's
//! attempts do, then joins them by its step's rule. A class with one required call has no
//! plan and never comes here.

use super::*;
use crate::metrics::{Blame, GraphEvent};
use crate::model::graph::{PlanStep, call_key};
use state::{Link, PlanRun};

impl<R: Record, F: Features> World<'_, R, F> {
    /// The dependency request `tok`'s calls go to (0 in the one-dependency form).
    pub(super) fn dep_of(&self, tok: Token) -> u16 {
        if !F::GRAPH || self.m.graph.is_none() { 0 } else { self.plans.links[tok.index as usize].dep }
    }

    /// Request `tok` is a call of another request's plan.
    pub(super) fn is_child(&self, tok: Token) -> bool {
        F::GRAPH && self.m.graph.is_some() && self.plans.links[tok.index as usize].parent.is_some()
    }

    /// Its class's plan (or its service's), if the request has one.
    pub(super) fn plan_of(&self, class: ClassId) -> Option<&'_ [PlanStep]> {
        self.m.graph.as_ref().and_then(|g| g.plans[class as usize].as_deref())
    }

    /// A new request's link: no parent, its class's one dependency.
    pub(super) fn link_arrival(&mut self, tok: Token, class: ClassId) {
        if F::GRAPH
            && let Some(g) = &self.m.graph
        {
            let link = Link { parent: None, dep: g.direct[class as usize], ..Link::default() };
            self.set_link(tok, link);
        }
    }

    pub(super) fn set_link(&mut self, tok: Token, link: Link) {
        let slot = tok.index as usize;
        if self.plans.links.len() <= slot {
            self.plans.links.resize(slot + 1, Link::default());
        }
        self.plans.links[slot] = link;
    }

    /// After its local work: the request makes its one call, or starts its plan.
    pub(super) fn begin_calls(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let class = self.reqs.get(tok).expect("live request").who.class;
        if !F::GRAPH || self.plan_of(class).is_none() {
            self.begin_attempt(now, q, tok);
            return;
        }
        let slot = tok.index as usize;
        if self.plans.runs.len() <= slot {
            self.plans.runs.resize_with(slot + 1, PlanRun::default);
        }
        let run = &mut self.plans.runs[slot];
        run.step = 0;
        run.degraded = false;
        run.failure = None;
        run.soft_cause = None;
        (run.failure_dep, run.soft_dep) = (None, None);
        self.bump_generation(tok); // no timer of the request is pending while its calls run
        self.reqs.get_mut(tok).expect("live request").phase = Phase::Plan;
        self.start_step(now, q, tok);
    }

    /// Send every call of the request's current step. The children are made first and
    /// started after, so one that ends at once (refused) cannot start a later step while
    /// this one still sends.
    fn start_step(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get(tok).expect("live request");
        let (who, arrived) = (r.who, r.time.arrived);
        let slot = tok.index as usize;
        let step = self.plans.runs[slot].step as usize;
        let plan = self.plan_of(who.class).expect("a plan");
        let calls = plan[step].calls.clone();
        let first = plan[..step].iter().map(|s| s.calls.len()).sum::<usize>();
        let mut kids = std::mem::take(&mut self.plans.runs[slot].kids);
        kids.clear();
        for (j, call) in calls.iter().enumerate() {
            let child = Identity { key: call_key(who.key, call.occurrence), ..who };
            let kid = self.insert_req(Req::fresh(child, arrived, now, Phase::Started));
            self.set_link(
                kid,
                Link { parent: Some(tok), dep: call.dep, call: j as u16, flat: (first + j) as u16, ..Link::default() },
            );
            self.plans.children += 1;
            kids.push(kid);
        }
        let run = &mut self.plans.runs[slot];
        run.generation = run.generation.wrapping_add(1);
        run.step_start = now;
        (run.ok, run.soft, run.hard) = (0, 0, 0);
        let generation = run.generation;
        run.kids = kids;
        for j in 0..calls.len() {
            // The step may have ended already (a call refused at once failed it, and the plan
            // may have moved on to a step with fewer calls): look before reading its calls.
            if self.plans.runs[slot].generation != generation || self.reqs.get(tok).is_none() {
                break;
            }
            let kid = self.plans.runs[slot].kids[j];
            if self.reqs.get(kid).is_some_and(|k| k.phase == Phase::Started) {
                self.hear_call(now, q, kid);
                self.begin_attempt(now, q, kid);
            }
        }
    }

    /// Call `kid` is sent: the layers it passes that hear of requests hear of it
    /// (`Layout::call_layers`).
    fn hear_call(&mut self, now: Time, q: &mut EventQueue<Ev>, kid: Token) {
        if self.layout.call_layers.is_empty() {
            return;
        }
        let who = self.reqs.get(kid).expect("live request").who;
        let route = self.route_of(who.class as usize, kid);
        for li in 0..self.layout.call_layers[route].len() {
            let l = self.layout.call_layers[route][li];
            self.tell_request(now, q, who.instance, who.class, l);
        }
    }

    /// A call of a plan concludes (from `finish`): the parent counts it and, when its step is
    /// decided, moves on or fails.
    pub(super) fn child_done(&mut self, now: Time, q: &mut EventQueue<Ev>, kid: Token) {
        let r = self.reqs.get(kid).expect("live request");
        let (answer, calls, arrived, kid_class) = (r.answer, r.calls, r.time.arrived, r.who.class as usize);
        let link = self.plans.links[kid.index as usize];
        self.reqs.discard(kid);
        self.rec.graph(GraphEvent::Call { arrived, dep: link.dep, attempts: calls });
        let gateway = !self.is_service_class(kid_class as ClassId);
        if gateway {
            let outcome = Some(answer.outcome);
            self.rec.graph(GraphEvent::CallEnded { arrived, class: kid_class, call: link.flat, outcome });
        }
        dec!(self.plans.children);
        let parent = link.parent.expect("a child");
        let Some(p) = self.reqs.get_mut(parent).filter(|p| p.phase == Phase::Plan) else { return };
        p.calls += calls;
        let class = p.who.class;
        let slot = parent.index as usize;
        let step = &self.plan_of(class).expect("a plan")[self.plans.runs[slot].step as usize];
        let (n, need) = (step.calls.len() as u16, step.need);
        let optional = step.calls[link.call as usize].optional;
        let run = &mut self.plans.runs[slot];
        if answer.outcome == Outcome::Ok {
            run.ok += 1;
        } else if optional {
            run.soft += 1;
            // A degraded answer that a closed fallback makes a failure counts under this.
            if run.soft_cause.is_none() {
                (run.soft_cause, run.soft_dep) = (answer.cause, Some(link.dep));
            }
        } else {
            run.hard += 1;
            if run.failure.is_none() {
                run.failure = Some((answer.outcome, answer.cause, link.refusal));
                run.failure_dep = Some(link.dep);
            }
        }
        // (passed, degraded) once the step is decided.
        let decided = match need {
            None if run.hard > 0 => Some((false, false)),
            None => (run.ok + run.soft == n).then_some((true, run.soft > 0)),
            Some(k) if run.ok >= k => Some((true, false)),
            // k can no longer be reached: degraded if only optional calls failed.
            Some(k) if run.ok + (n - run.ok - run.soft - run.hard) < k => Some((run.hard == 0, true)),
            Some(_) => None,
        };
        let Some((passed, degraded)) = decided else { return };
        run.degraded |= passed && degraded;
        run.generation = run.generation.wrapping_add(1);
        // The call that decided the step ended it: the critical path runs through it.
        let (failure_dep, soft_dep, took) = (run.failure_dep, run.soft_dep, now - run.step_start);
        if gateway {
            self.rec.graph(GraphEvent::StepDecided { arrived, class: kid_class, call: link.flat, ns: took });
        }
        let pl = &mut self.plans.links[slot];
        // A late answer is blamed on the call that held the critical path longest: with a slow
        // pricing step and then a fast payment, "late because pricing was slow".
        if pl.critical.is_none() || took > pl.critical_ns {
            (pl.critical, pl.critical_ns) = (Some(link.dep), took);
        }
        pl.failed = if passed { soft_dep } else { failure_dep };
        self.drop_kids(now, q, parent);
        if !passed {
            let (outcome, cause, refusal) = self.plans.runs[slot].failure.expect("a failure");
            if let Some(cause) = cause {
                self.fail_as(parent, cause);
            }
            self.conclude(now, q, parent, outcome, refusal);
            return;
        }
        let run = &mut self.plans.runs[slot];
        run.step += 1;
        if (run.step as usize) < self.plan_of(class).expect("a plan").len() {
            self.start_step(now, q, parent);
        } else if self.plans.runs[slot].degraded {
            if let Some(cause) = self.plans.runs[slot].soft_cause {
                self.fail_as(parent, cause);
            }
            self.respond(now, q, parent, Outcome::Fallback, None);
        } else {
            self.refresh_caches(now, parent);
            self.respond(now, q, parent, Outcome::Ok, None);
        }
    }

    /// Cancel the calls of the parent's step that are still out: the caller no longer waits.
    pub(super) fn drop_kids(&mut self, now: Time, q: &mut EventQueue<Ev>, parent: Token) {
        let kids = std::mem::take(&mut self.plans.runs[parent.index as usize].kids);
        for &kid in &kids {
            if self.reqs.get(kid).is_some() && self.plans.links[kid.index as usize].parent == Some(parent) {
                self.drop_child(now, q, kid);
            }
        }
        self.plans.runs[parent.index as usize].kids = kids;
    }

    /// A call of a plan is cancelled wherever it is: its calls are abandoned (cancelled at
    /// the dependency when cancellation propagates), its connections and queue places freed,
    /// and the layers it passed hear it was not executed.
    pub(super) fn drop_child(&mut self, now: Time, q: &mut EventQueue<Ev>, kid: Token) {
        self.unhook(now, q, kid);
        let r = self.reqs.get(kid).expect("live request");
        let (calls, arrived, kid_class) = (r.calls, r.time.arrived, r.who.class as usize);
        let link = self.plans.links[kid.index as usize];
        self.rec.graph(GraphEvent::Call { arrived, dep: link.dep, attempts: calls });
        if !self.is_service_class(kid_class as ClassId) {
            self.rec.graph(GraphEvent::CallEnded { arrived, class: kid_class, call: link.flat, outcome: None });
        }
        if let Some(p) = link.parent.and_then(|p| self.reqs.get_mut(p)) {
            p.calls += calls;
        }
        self.reqs.discard(kid);
        dec!(self.plans.children);
    }

    /// Take request `kid` out of wherever it is before it is dropped: its calls abandoned
    /// (cancelled at the dependency when cancellation propagates), its connections and queue
    /// places freed, and the layers it passed told it was not executed.
    pub(super) fn unhook(&mut self, now: Time, q: &mut EventQueue<Ev>, kid: Token) {
        let r = self.reqs.get(kid).expect("live request");
        let (route, inst, pos, phase) =
            (self.route_of(r.who.class as usize, kid), r.who.instance, r.attempt.pos as usize, r.phase);
        let inner = self.layout.inner_start[route] as usize;
        match phase {
            Phase::Calling => {
                let r = self.reqs.get_mut(kid).expect("live request");
                let calls = [r.attempt.call.take(), r.hedge.call.take()];
                for call in calls.into_iter().flatten() {
                    self.abandon(q, call);
                    self.release_connection(now, q, kid, inst);
                }
                self.cancel_from(now, q, kid, 0);
            }
            Phase::LayerQueue => {
                let l = self.layout.class_layers[route][pos];
                let parked = self.reqs.get(kid).expect("live request").time.attempt_start;
                self.layer_waited(now, parked, l);
                dec!(self.layer_mut(inst, l).waiting);
                let att = self.attempt_of(now, kid, l);
                self.layer_mut(inst, l).policy.left_queue(&att);
                self.note(now, q, inst, l);
                self.cancel_from(now, q, kid, 0);
            }
            Phase::PoolQueue => {
                let i = &mut self.gateway.insts[inst as usize];
                dec!(i.pool_waiting);
                let waiting = i.pool_waiting;
                if !self.is_service_inst(inst) {
                    self.rec_pool_waiting(now, inst, waiting);
                }
                self.cancel_from(now, q, kid, 0);
            }
            Phase::Backoff if inner > 0 => {
                // Only the layers outside the retry layer still wait for its end.
                for p in (0..inner).rev() {
                    let l = self.layout.class_layers[route][p];
                    let mut att = self.attempt_of(now, kid, l);
                    att.id = self.first_ids[kid.index as usize].0;
                    self.deliver(now, q, inst, l, Notice::Cancel(att));
                }
            }
            _ => {}
        }
    }
}

impl<R: Record, F: Features> World<'_, R, F> {
    /// A call of a plan has its answer: an optional call that failed pays its fallback's
    /// cost first; the response overhead is the request's, not its calls'.
    pub(super) fn child_responds(&mut self, now: Time, q: &mut EventQueue<Ev>, kid: Token) {
        let r = self.reqs.get(kid).expect("live request");
        let link = self.plans.links[kid.index as usize];
        let parent = link.parent.expect("a child");
        let cost = match (r.answer.outcome, self.reqs.get(parent)) {
            (Outcome::Ok, _) | (_, None) => 0,
            (_, Some(p)) => {
                let step = self.plans.runs[parent.index as usize].step as usize;
                let call = self.plan_of(p.who.class).expect("a plan")[step].calls[link.call as usize];
                if call.optional { call.cost } else { 0 }
            }
        };
        if cost > 0 {
            self.reqs.get_mut(kid).expect("live request").phase = Phase::Responding;
            self.timer(q, kid, now.saturating_add(cost), Timer::Respond);
        } else {
            self.finish(now, q, kid);
        }
    }
}

impl<R: Record, F: Features> World<'_, R, F> {
    /// Which dependency a finished request's cause goes to (see `metrics::Blame`), in a run
    /// with a service graph; a request without a plan counts as its one call here. A worker
    /// slot refused or a restart is no call's doing.
    pub(super) fn blame_of(
        &mut self,
        tok: Token,
        class: ClassId,
        arrived: Time,
        cause: Option<Cause>,
        calls: u32,
    ) -> Blame {
        let link = self.plans.links[tok.index as usize];
        let own = !matches!(cause, Some(Cause::WorkerSlotsFull | Cause::CrashRestart));
        if self.plan_of(class).is_none() {
            self.rec.graph(GraphEvent::Call { arrived, dep: link.dep, attempts: calls });
            let dep = own.then_some(link.dep);
            Blame { failed: dep, critical: dep }
        } else {
            Blame { failed: link.failed.filter(|_| own), critical: link.critical }
        }
    }
}
