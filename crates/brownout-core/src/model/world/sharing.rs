//! Load-dependent service at the dependency (`capacity.sharing`): every call present at a
//! replica is in service and shares the replica's speed (`model::sharing` keeps the virtual
//! clock). A call holds a share (`Call::holds_server`, counted in `Upstream::busy`) from
//! its arrival until it has attained its drawn service requirement; its answer then travels
//! back for the `hop`. Only the replica's next completion is scheduled, as `Ev::Shared`
//! with the replica's generation: a join, a cancel or a completion moves it, and the event
//! it replaces is ignored when it pops.

use super::*;

impl<R: Record, F: Features> World<'_, R, F> {
    /// A call reaches replica `r` (the caller checked there is room): it starts its share
    /// at once. A call that needs no service (an unavailable dependency's 503) is answered
    /// as under servers and a queue, taking no share.
    pub(super) fn share(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token, r: usize) {
        let c = *self.upstream.calls.get(call).expect("live call");
        let factor = self.m.replica_factor(c.dep, c.replica, now);
        let dep = self.m.dep(c.dep);
        // The same draw as `serve_call`'s: the requirement is the latency drawn for this
        // request and attempt, at full speed.
        let plan = dep.plan(now, c.class as u64, c.key, c.attempt as u64, factor);
        let rule = dep.sharing.expect("a shared replica");
        if plan.service == 0 {
            self.serve_call(now, q, call);
            return;
        }
        let cm = self.upstream.calls.get_mut(call).expect("live call");
        cm.served_at = now;
        cm.error = plan.error;
        cm.holds_server = true;
        self.upstream.busy[r] += 1;
        self.upstream.shared[r].join(now, &rule, plan.service, call);
        self.shared_next(q, r);
    }

    /// A call present at replica `r` left before finishing (its cancel arrived; the caller
    /// removed it): the others share what it held.
    pub(super) fn unshare(&mut self, now: Time, q: &mut EventQueue<Ev>, r: usize) {
        dec!(self.upstream.busy[r]);
        let rule = self.rule_of(r);
        self.upstream.shared[r].leave(now, &rule);
        self.shared_next(q, r);
    }

    /// Replica `r`'s announced completion is due: the call finishing leaves its share and
    /// its answer goes back after the hop. A superseded announcement does nothing.
    pub(super) fn shared_done(&mut self, now: Time, q: &mut EventQueue<Ev>, r: usize, generation: u32) {
        if self.upstream.shared[r].generation != generation {
            return;
        }
        let rule = self.rule_of(r);
        let calls = &self.upstream.calls;
        let Some(call) = self.upstream.shared[r].complete(now, &rule, |t| calls.get(t).is_some()) else {
            return;
        };
        dec!(self.upstream.busy[r]);
        let c = self.upstream.calls.get_mut(call).expect("a live call finishing");
        c.holds_server = false;
        // Its time in service: what the summary reports as the dependency's service time
        // (`dependency.latency_ms`); it waited for nothing (`served_at` = `sent_at`).
        c.service = now - c.served_at;
        let hop = self.m.dep(c.dep).hop(c.class as u64, c.key, c.attempt as u64);
        c.done_at = now.saturating_add(hop);
        q.schedule_at(c.done_at, Ev::DepDone { call });
        if F::TRACE
            && let Some(log) = &mut self.trace.records
        {
            let (class, key, attempt, dependency, error) = (c.class, c.key, c.attempt, c.dep, c.error);
            let (start, latency) = (c.served_at, c.done_at - c.served_at);
            log.calls.push(CallRecord { class, key, attempt, dependency, start, latency, error });
        }
        self.shared_next(q, r);
    }

    /// Announce replica `r`'s next completion, if a call is present (after any change).
    fn shared_next(&mut self, q: &mut EventQueue<Ev>, r: usize) {
        let rule = self.rule_of(r);
        let calls = &self.upstream.calls;
        let shared = &mut self.upstream.shared[r];
        if let Some(at) = shared.next_due(&rule, |t| calls.get(t).is_some()) {
            q.schedule_at(at, Ev::Shared { replica: r as u32, generation: shared.generation });
        }
    }

    /// The sharing rule of the dependency whose replicas' row holds `r`.
    fn rule_of(&self, r: usize) -> crate::model::sharing::ShareRule {
        let dep = self.upstream.base.partition_point(|&b| b <= r) - 1;
        self.m.dep(dep as u16).sharing.expect("a shared replica")
    }
}
