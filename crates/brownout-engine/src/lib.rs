//! The generic discrete-event engine: integer virtual time, a FIFO-stable event queue,
//! cheap cancellation by generation tokens, named PRNG streams and the run loop.
//!
//! Architecture invariant: nothing in this module knows about requests, policies,
//! scenarios or output. It is generic over the event type.

#![warn(missing_docs)]

mod queue;
mod radix;
mod rng;
mod slab;
mod time;

pub use queue::{EventQueue, Scheduled};
pub use radix::RadixQueue;
pub use rng::{Counter, CounterRng, Stream, counter_f64, counter_u64, label_hash, stream};
pub use slab::{Slab, Token};
pub use time::{MICROSECOND, MILLISECOND, MINUTE, SECOND, Time, fmt_time, ms_f64};

/// A world that reacts to events. It is handed the queue so it can schedule follow-ups.
pub trait Handler<E> {
    /// Handle one event that fires at `now`.
    fn handle(&mut self, now: Time, event: E, queue: &mut EventQueue<E>);

    /// True when the handler wants the run to stop early (a guard tripped).
    fn halted(&self) -> bool {
        false
    }

    /// True when `event` is a tombstone: handling it would do nothing now or later (a timer
    /// whose generation no longer matches). The run loop drops such fixed-delay events in
    /// bulk once they pile up, so lazily cancelled long timers keep memory O(in flight).
    /// Must stay true once true. The default keeps every event.
    fn is_stale(&self, _event: &E) -> bool {
        false
    }

    /// Told, at `now`, of `due` stale events the run loop just dropped (see
    /// [`Handler::is_stale`]) that would have been popped by the horizon. [`RunStats::events`]
    /// counts them as handled, so a handler that holds its events to a limit counts them too;
    /// it may halt here. The default ignores them.
    fn swept(&mut self, _now: Time, _due: u64) {}
}

/// What a run loop did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Events popped and handed to the handler, plus the stale ones (see
    /// [`Handler::is_stale`]) dropped early that would have been popped by the horizon.
    pub events: u64,
    /// Virtual time of the last event popped, or of the last dropped stale one due by the
    /// horizon if later.
    pub end: Time,
}

/// Run until the queue is empty or the next event lies strictly after `horizon`.
///
/// Events at exactly `horizon` still run. Events left in the queue are not handled.
pub fn run<E: Copy, H: Handler<E>>(handler: &mut H, queue: &mut EventQueue<E>, horizon: Time) -> RunStats {
    let mut stats = RunStats::default();
    let mut dropped_until: Option<Time> = None;
    // `next_until` and `take` rather than `pop_until`: see `queue::Due`.
    while let Some(due) = queue.next_until(horizon) {
        let now = due.time;
        let event = queue.take(due);
        stats.events += 1;
        stats.end = now;
        handler.handle(now, event, queue);
        if handler.halted() {
            // A halted run stops here: tombstones dropped ahead of time still count, which
            // only a run that reports an error rather than its figures can see.
            break;
        }
        if queue.wants_compaction() {
            let (due, latest) = queue.compact_fixed(|e| handler.is_stale(e), horizon);
            stats.events += due;
            dropped_until = dropped_until.max(latest);
            if due > 0 {
                handler.swept(now, due);
                if handler.halted() {
                    break;
                }
            }
        }
    }
    // A dropped tombstone due after the last popped event would have been the last popped.
    stats.end = stats.end.max(dropped_until.unwrap_or(0));
    stats
}
