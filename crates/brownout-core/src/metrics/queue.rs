//! Waiting in the queues of admission layers (limiters, bulkheads): how many attempts were
//! offered, how many waited and for how long.

use super::hist::RunLat;
use super::summary::QueueSummary;
use crate::engine::Time;

/// One kind of layer's queues over the measured span.
#[derive(Debug, Clone, Default)]
pub(super) struct QueueAcc {
    offered: u64,
    queued: u64,
    waits: RunLat,
}

impl QueueAcc {
    /// An attempt reached a layer of this kind.
    pub(super) fn offer(&mut self) {
        self.offered += 1;
    }

    /// An attempt was parked in the queue.
    pub(super) fn queue(&mut self) {
        self.queued += 1;
    }

    /// A parked attempt left the queue after `waited`.
    pub(super) fn waited(&mut self, waited: Time) {
        self.waits.record(waited);
    }

    pub(super) fn summary(&mut self) -> QueueSummary {
        QueueSummary {
            offered: self.offered,
            queued: self.queued,
            wait_probability: if self.offered == 0 { f64::NAN } else { self.queued as f64 / self.offered as f64 },
            wait_ms_mean: if self.waits.is_empty() { f64::NAN } else { self.waits.mean_ms() },
            wait_ms_p95: if self.waits.is_empty() { f64::NAN } else { self.waits.q_ms(0.95) },
        }
    }
}
