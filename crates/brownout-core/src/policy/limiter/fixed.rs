//! Fixed concurrency limit: at most `permits` attempts in flight; excess waits in a FIFO
//! queue of at most `queue` entries for at most `max_wait`, or is refused at once
//! (resilience4j Bulkhead with maxWaitDuration 0, Polly QueueLimit 0, tower
//! `LoadShed(ConcurrencyLimit)`).

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BuildCtx, Completed, Policy, QueueOrder, Refusal, Status};
use crate::scenario::Dur;

/// Fixed limiter configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixedConfig {
    /// Attempts in flight at once, per instance (>= 1).
    pub permits: u32,
    /// Attempts that may wait (0 = no queue).
    #[serde(default)]
    pub queue: u32,
    /// Longest wait in the queue (> 0 when `queue` > 0).
    #[serde(default)]
    pub max_wait: Dur,
    /// What a refused attempt gets: 429 (`Rejected`) or the fallback at once (`Fallback`).
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
    /// 429.
    Rejected,
    /// Fallback now (cache), where the class allows it.
    Fallback,
}

impl RefuseAs {
    /// As a [`Refusal`].
    pub fn refusal(self) -> Refusal {
        match self {
            RefuseAs::Rejected => Refusal::Rejected,
            RefuseAs::Fallback => Refusal::Fallback,
        }
    }
}

fn rejected() -> RefuseAs {
    RefuseAs::Rejected
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct Fixed {
    permits: u32,
    queue: u32,
    max_wait: u64,
    refuse_as: RefuseAs,
    order: QueueOrder,
    class_max_wait: Vec<Option<u64>>,
    shed: bool,
    in_flight: u32,
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
            shed: cfg.shed_by_deadline,
            permits: cfg.permits,
            queue: cfg.queue,
            max_wait: cfg.max_wait.ns(),
            refuse_as: cfg.refuse_as,
            in_flight: 0,
        }
    }

    /// Attempts in flight.
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }
}

impl Policy for Fixed {
    fn admit(&mut self, a: &Attempt) -> Admission {
        if self.in_flight < self.permits {
            self.in_flight += 1;
            return Admission::Admit;
        }
        let max_wait = self.class_max_wait.get(a.class as usize).copied().flatten().unwrap_or(self.max_wait);
        if self.queue > 0 && max_wait > 0 {
            if a.queued < self.queue {
                Admission::Wait { max_wait }
            } else if self.shed {
                Admission::Shed { max_wait }
            } else {
                Admission::Refuse(self.refuse_as.refusal())
            }
        } else {
            Admission::Refuse(self.refuse_as.refusal())
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

    fn status(&self) -> Status {
        Status { limit: Some(self.permits as f64), ..Status::default() }
    }
}
