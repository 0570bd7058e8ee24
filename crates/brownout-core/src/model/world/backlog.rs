//! The work left at the horizon, layer by layer, read from the world's state after its last
//! event (summary.json's `backlog_at_end`).

use super::state::Phase;
use super::{Features, World};
use crate::engine::Time;
use crate::metrics::summary::Backlog;
use crate::metrics::{LayerKind, Record};

impl<R: Record, F: Features> World<'_, R, F> {
    /// Where the work left now waits (see [`Backlog`]). Counted from the live entries the
    /// world keeps per instance and layer and from the calls slab, so stale queue entries
    /// (requests that left, calls removed) do not count.
    pub(super) fn backlog(&self) -> Backlog {
        let mut b = Backlog::default();
        for inst in &self.gateway.insts {
            b.worker_queue += u64::from(inst.worker_waiting);
            b.workers_busy += u64::from(inst.workers);
            b.pool_queue += u64::from(inst.pool_waiting);
            b.pool_busy += u64::from(inst.conns);
            for (l, layer) in inst.layers.iter().enumerate() {
                b.layer_queue += u64::from(layer.waiting);
                if self.layout.kinds.get(l) == Some(&LayerKind::Limiter) {
                    b.limiter_queue += u64::from(layer.waiting);
                }
            }
        }
        for tok in self.reqs.tokens() {
            b.backoff += self.reqs.get(tok).is_some_and(|r| r.phase == Phase::Backoff) as u64;
        }
        // A queued call holds no server and has no answer time yet (`calls::send`).
        let queued = |t: &crate::engine::Token| {
            self.upstream.calls.get(*t).is_some_and(|c| c.reached && !c.holds_server && c.done_at == Time::MAX)
        };
        b.dependency_queue = self.upstream.queue.iter().flatten().filter(|t| queued(t)).count() as u64;
        b.dependency_out = self.upstream.in_flight;
        b.queued = b.worker_queue + b.layer_queue + b.pool_queue + b.dependency_queue;
        b
    }
}
