//! Fixed concurrency limit: at most `permits` attempts in flight; excess waits in a FIFO
//! queue of at most `queue` entries for at most `max_wait`, or is refused at once
//! (resilience4j Bulkhead with maxWaitDuration 0, Polly QueueLimit 0, tower
//! `LoadShed(ConcurrencyLimit)`).

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, Completed, Policy, Refusal, Status};
use crate::scenario::Dur;

/// Fixed limiter configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FixedConfig {
    /// Attempts in flight at once.
    pub permits: u32,
    /// Attempts that may wait (0 = no queue).
    #[serde(default)]
    pub queue: u32,
    /// Longest wait in the queue.
    #[serde(default)]
    pub max_wait: Dur,
    /// What a refused attempt gets: 429 (`Rejected`) or the fallback at once (`Fallback`).
    #[serde(default = "rejected")]
    pub refuse_as: RefuseAs,
}

/// How a limiter refuses.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
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
    in_flight: u32,
}

impl Fixed {
    /// Build from config.
    pub fn new(cfg: &FixedConfig) -> Self {
        Self {
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
        if a.queued < self.queue && self.max_wait > 0 {
            Admission::Wait { max_wait: self.max_wait }
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

    fn status(&self) -> Status {
        Status { limit: Some(self.permits as f64), ..Status::default() }
    }
}
