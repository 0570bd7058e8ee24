//! Fixed concurrency limit: at most `permits` attempts in flight; excess waits in a FIFO
//! queue of at most `queue` entries for at most `max_wait`, or is refused at once
//! (resilience4j Bulkhead with maxWaitDuration 0, Polly QueueLimit 0, tower
//! `LoadShed(ConcurrencyLimit)`).
//!
//! With `shed_by_deadline`, a full queue sheds whichever of its waiting attempts and the
//! newcomer has the least deadline budget left (the earliest deadline; the earliest parked
//! among equals): the limiter remembers the deadline of every attempt it parked and answers
//! [`Admission::WaitEvicting`] naming the one to go, or refuses the newcomer.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::super::{
    Admission, Attempt, BuildCtx, Completed, ConfigError, Facts, FallbackRule, Policy, PolicyConfig, QueueOrder,
    Refusal, Status,
};
use super::gate::{GateConfig, rejected};
use crate::engine::Time;
use crate::units::Dur;

/// Fixed limiter configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixedConfig {
    /// Attempts in flight at once, per instance (>= 1).
    pub permits: u32,
    /// Attempts that may wait when the limit is reached (0 = refuse at once; a queue needs a
    /// `max_wait` > 0). Shared by every limiter (`policy::limiter::gate::GateConfig`).
    #[serde(default)]
    pub queue: u32,
    /// Longest wait in the queue (> 0 when `queue` > 0).
    #[serde(default)]
    pub max_wait: Dur,
    /// What a refused attempt gets (refused at once, after its wait, or shed from the
    /// queue): 429 (`Rejected`, whatever the class's `fallback`) or the class's fallback at
    /// once (`Fallback`; a 429 for a class with `fallback: None`), or 503 (`Unavailable`: an
    /// `error` whatever the class's `fallback`, as nginx's `limit_req` and HAProxy's queue answer).
    #[serde(default = "rejected")]
    pub refuse_as: RefuseAs,
    /// Order in which the queue is served: `Fifo`, `Lifo` or `Priority` (class priority).
    #[serde(default)]
    pub order: QueueOrder,
    /// Per-class longest wait, overriding `max_wait`, e.g. `[("checkout", "2s")]`; names must be classes of the scenario.
    #[serde(default)]
    pub class_max_wait: Vec<(String, Dur)>,
    /// When the queue is full, shed the waiting request least likely to meet its deadline
    /// (which may be the newcomer) instead of always refusing the newcomer.
    #[serde(default)]
    pub shed_by_deadline: bool,
}

/// How a limiter refuses.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum RefuseAs {
    /// 429 to the user, even where the class has a fallback.
    Rejected,
    /// The class's fallback answer at once (cache, fail open or closed, last answer); a 429
    /// for a class with `fallback: None`.
    Fallback,
    /// 503 to the user, counted as an `error` (with the refusing layer's cause, e.g.
    /// `limiter_refused`), even where the class has a fallback: what a proxy answers when
    /// its queue times out (HAProxy `timeout queue`) or a rate limit refuses (nginx
    /// `limit_req_status` and `limit_conn_status`, 503 by default).
    Unavailable,
    /// 502 to the user, counted as an `error` with cause `no_live_upstream` (whatever the
    /// refusing layer), even where the class has a fallback: what open-source nginx answers
    /// when every upstream server is at its `max_conns` (`ngx_http_upstream_connect` logs "no
    /// live upstreams" and `ngx_http_upstream_next` answers `NGX_HTTP_BAD_GATEWAY`).
    BadGateway,
}

impl RefuseAs {
    /// Whose fallback answers the refusal: every class's for `Fallback`, no class's else.
    pub fn fallback_rule(self) -> FallbackRule {
        FallbackRule::when(self == RefuseAs::Fallback)
    }

    /// As a [`Refusal`].
    pub fn refusal(self) -> Refusal {
        match self {
            RefuseAs::Rejected => Refusal::Rejected,
            RefuseAs::Fallback => Refusal::Fallback,
            RefuseAs::Unavailable => Refusal::Unavailable,
            RefuseAs::BadGateway => Refusal::BadGateway,
        }
    }
}

impl FixedConfig {
    /// A limiter of `permits` with a FIFO queue of `queue` waiting at most `max_wait`, its
    /// refusals answered as `refuse_as`: what a proxy's connection limit is (the HAProxy and
    /// nginx presets expand into one).
    pub fn fifo(permits: u32, queue: u32, max_wait: Dur, refuse_as: RefuseAs) -> Self {
        Self {
            permits,
            queue,
            max_wait,
            refuse_as,
            order: QueueOrder::Fifo,
            class_max_wait: Vec::new(),
            shed_by_deadline: false,
        }
    }

    /// Its queue settings, as every limiter has them.
    pub fn gate(&self) -> GateConfig {
        GateConfig { queue: self.queue, max_wait: self.max_wait, refuse_as: self.refuse_as }
    }
}

impl PolicyConfig for FixedConfig {
    const KIND: &'static str = "limiter";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Limiter).fallback(self.refuse_as.fallback_rule())
    }

    fn validate(&self, classes: &[&str]) -> Result<(), ConfigError> {
        if self.permits == 0 {
            return Err("Limiter.permits must be >= 1".into());
        }
        self.gate().validate("Limiter")?;
        // A set, not the slice: the list may name every one of 100,000 classes.
        let known: std::collections::BTreeSet<&str> = classes.iter().copied().collect();
        if let Some((n, _)) = self.class_max_wait.iter().find(|(n, _)| !known.contains(n.as_str())) {
            return Err(format!(
                "Limiter.class_max_wait: unknown class \"{n}\" (classes are: {})",
                crate::text::listing(classes)
            )
            .into());
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Fixed::new(self, ctx))
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Fixed {
    permits: u32,
    queue: u32,
    max_wait: u64,
    refuse_as: RefuseAs,
    order: QueueOrder,
    class_max_wait: Vec<Option<u64>>,
    in_flight: u32,
    /// The attempts parked in this layer's queue, when shedding by deadline.
    shed: Option<Parked>,
}

/// The attempts a limiter parked, by deadline, as a queue that sheds by deadline needs them.
#[derive(Debug, Clone, Default)]
struct Parked {
    /// (deadline, parking order, id), least deadline budget first.
    by_deadline: BTreeSet<(Time, u64, u64)>,
    /// id -> (deadline, parking order).
    by_id: BTreeMap<u64, (Time, u64)>,
    next_seq: u64,
}

impl Parked {
    /// Park `a` behind every attempt parked so far.
    fn park(&mut self, a: &Attempt) {
        self.put(a.id, (a.deadline, self.next_seq));
        self.next_seq += 1;
    }
    fn put(&mut self, id: u64, key: (Time, u64)) {
        self.by_deadline.insert((key.0, key.1, id));
        self.by_id.insert(id, key);
    }
    /// Forget `id`; its key if it was parked.
    fn remove(&mut self, id: u64) -> Option<(Time, u64)> {
        let key = self.by_id.remove(&id)?;
        self.by_deadline.remove(&(key.0, key.1, id));
        Some(key)
    }
    /// The parked attempt with the least deadline budget left (ties: the earliest parked).
    fn most_doomed(&self) -> Option<(Time, u64)> {
        self.by_deadline.first().map(|&(deadline, _, id)| (deadline, id))
    }
}

impl Fixed {
    /// Build from config; `ctx` maps class names to ids.
    pub fn new(cfg: &FixedConfig, ctx: &BuildCtx) -> Self {
        let mut class_max_wait = vec![None; ctx.classes.len()];
        for (name, d) in &cfg.class_max_wait {
            if let Some(id) = ctx.class_id(name) {
                class_max_wait[id as usize] = Some(d.ns());
            }
        }
        Self {
            order: cfg.order,
            class_max_wait,
            shed: cfg.shed_by_deadline.then(Parked::default),
            permits: cfg.permits,
            queue: cfg.queue,
            max_wait: cfg.max_wait.ns(),
            refuse_as: cfg.refuse_as,
            in_flight: 0,
        }
    }

    /// The answer for an attempt the limits do not admit now; `parked_as` is its place in
    /// the queue if it was parked before (it keeps that place when it waits on).
    fn over_limit(&mut self, a: &Attempt, parked_as: Option<(Time, u64)>) -> Admission {
        let max_wait = self.class_max_wait.get(a.class as usize).copied().flatten().unwrap_or(self.max_wait);
        if self.queue == 0 || max_wait == 0 {
            return Admission::Refuse(self.refuse_as.refusal());
        }
        if a.queued < self.queue {
            match (&mut self.shed, parked_as) {
                (Some(parked), Some(key)) => parked.put(a.id, key),
                (Some(parked), None) => parked.park(a),
                (None, _) => {}
            }
            return Admission::Wait { max_wait };
        }
        let Some(parked) = &mut self.shed else {
            return Admission::Refuse(self.refuse_as.refusal());
        };
        match parked.most_doomed() {
            Some((deadline, evict)) if deadline < a.deadline => {
                parked.remove(evict);
                parked.park(a);
                Admission::WaitEvicting { max_wait, evict }
            }
            _ => Admission::Refuse(Refusal::Rejected),
        }
    }
}

impl Policy for Fixed {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        // An attempt asked again from the queue leaves it unless it has to wait on.
        let parked_as = self.shed.as_mut().and_then(|p| p.remove(a.id));
        if self.in_flight < self.permits {
            self.in_flight += 1;
            return Admission::Admit;
        }
        self.over_limit(a, parked_as)
    }

    fn refusal(&self, _class: crate::policy::ClassId) -> Refusal {
        self.refuse_as.refusal()
    }

    fn left_queue(&mut self, a: &Attempt) {
        if let Some(parked) = &mut self.shed {
            parked.remove(a.id);
        }
    }

    fn cancel(&mut self, _a: &Attempt) {
        self.in_flight -= 1;
    }

    fn complete(&mut self, _d: &Completed) {
        self.in_flight -= 1;
    }

    fn queue_order(&self) -> QueueOrder {
        self.order
    }

    fn reports_status(&self) -> bool {
        false // `status` is the configured limit, always
    }

    fn status(&self) -> Status {
        Status { limit: Some(self.permits as f64), ..Status::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND as MS;

    /// Attempt `id` at 0 of a request with the absolute deadline `deadline_ms`, with `queued`
    /// attempts already waiting.
    fn att(id: u64, deadline_ms: u64, queued: u32) -> Attempt {
        Attempt::new(0, 0, id).queued(queued).request(0, deadline_ms * MS)
    }

    fn shedding() -> Fixed {
        let cfg = FixedConfig {
            permits: 1,
            queue: 2,
            max_wait: Dur::secs(5),
            refuse_as: RefuseAs::Fallback,
            order: QueueOrder::Fifo,
            class_max_wait: Vec::new(),
            shed_by_deadline: true,
        };
        Fixed::new(&cfg, &BuildCtx::new(vec!["api".into()]))
    }

    #[test]
    fn a_full_queue_evicts_the_earliest_deadline_or_refuses_the_newcomer() {
        let wait = Admission::Wait { max_wait: 5_000 * MS };
        let mut f = shedding();
        assert_eq!(f.admit(&att(1, 1_000, 0)), Admission::Admit);
        assert_eq!(f.admit(&att(2, 500, 0)), wait);
        assert_eq!(f.admit(&att(3, 800, 1)), wait);
        // Full: 2 (500 ms) has less left than the newcomer (900 ms): 2 goes, 4 waits.
        assert_eq!(f.admit(&att(4, 900, 2)), Admission::WaitEvicting { max_wait: 5_000 * MS, evict: 2 });
        // Waiting: 3 (800 ms), 4 (900 ms). A newcomer with 700 ms is the most doomed: refused
        // as 429 (not as the configured fallback: shedding is not a limit refusal).
        assert_eq!(f.admit(&att(5, 700, 2)), Admission::Refuse(Refusal::Rejected));
        // 3 gives up waiting; a newcomer with 950 ms evicts 4 (900 ms).
        f.left_queue(&att(3, 800, 1));
        assert_eq!(f.admit(&att(6, 950, 1)), wait);
        assert_eq!(f.admit(&att(7, 990, 2)), Admission::WaitEvicting { max_wait: 5_000 * MS, evict: 4 });
    }

    #[test]
    fn equal_deadlines_evict_the_earliest_parked_and_a_reasked_waiter_keeps_its_place() {
        let mut f = shedding();
        assert_eq!(f.admit(&att(1, 1_000, 0)), Admission::Admit);
        f.admit(&att(2, 600, 0));
        f.admit(&att(3, 600, 1));
        // 2 is asked again from the queue while the permit is still taken: it waits on, and
        // keeps being the earlier of the two equal deadlines.
        assert_eq!(f.admit(&att(2, 600, 1)), Admission::Wait { max_wait: 5_000 * MS });
        assert_eq!(f.admit(&att(4, 700, 2)), Admission::WaitEvicting { max_wait: 5_000 * MS, evict: 2 });
        // A waiter admitted from the queue leaves it: only 4 is left to evict.
        f.complete(&Completed::new(MS, 0, 1, 0, crate::policy::CallOutcome::Success));
        assert_eq!(f.admit(&att(3, 600, 1)), Admission::Admit);
        assert_eq!(f.admit(&att(5, 800, 1)), Admission::Wait { max_wait: 5_000 * MS });
        assert_eq!(f.admit(&att(6, 900, 2)), Admission::WaitEvicting { max_wait: 5_000 * MS, evict: 4 });
    }

    #[test]
    fn without_shedding_a_full_queue_refuses_as_configured() {
        let cfg = FixedConfig {
            permits: 1,
            queue: 1,
            max_wait: Dur::secs(5),
            refuse_as: RefuseAs::Fallback,
            order: QueueOrder::Fifo,
            class_max_wait: Vec::new(),
            shed_by_deadline: false,
        };
        let mut f = Fixed::new(&cfg, &BuildCtx::new(vec!["api".into()]));
        f.admit(&att(1, 1_000, 0));
        f.admit(&att(2, 500, 0));
        assert_eq!(f.admit(&att(3, 900, 1)), Admission::Refuse(Refusal::Fallback));
    }
}
