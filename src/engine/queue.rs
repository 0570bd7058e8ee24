//! The event queue: a binary min-heap keyed by (time, insertion sequence).
//!
//! Ties in time pop in insertion order (FIFO), which makes runs deterministic without
//! any reliance on the payload. Keys are packed into one `u128` so a comparison is a
//! single integer compare.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Time;

/// An event popped from the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduled<E> {
    /// When it fires.
    pub time: Time,
    /// What fires.
    pub event: E,
}

struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// Pending events ordered by (time, sequence). See the module docs.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
    now: Time,
    peak_len: usize,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self { heap: BinaryHeap::new(), seq: 0, now: 0, peak_len: 0 }
    }

    /// The time of the event most recently popped (the current virtual time).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The largest number of events that were pending at once.
    pub fn peak_len(&self) -> usize {
        self.peak_len
    }

    /// Schedule `event` at absolute time `time`.
    ///
    /// # Panics
    /// If `time` lies before the current time: virtual time never runs backwards.
    pub fn schedule_at(&mut self, time: Time, event: E) {
        assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Reverse(Entry { key, event }));
        if self.heap.len() > self.peak_len {
            self.peak_len = self.heap.len();
        }
    }

    /// Schedule `event` after `delay` from now.
    pub fn schedule_in(&mut self, delay: Time, event: E) {
        self.schedule_at(self.now.saturating_add(delay), event);
    }

    /// Pop the earliest event if it fires at or before `horizon`.
    pub fn pop_until(&mut self, horizon: Time) -> Option<Scheduled<E>> {
        let top = self.heap.peek()?;
        let time = (top.0.key >> 64) as Time;
        if time > horizon {
            return None;
        }
        let Reverse(entry) = self.heap.pop()?;
        self.now = time;
        Some(Scheduled { time, event: entry.event })
    }

    /// Pop the earliest event.
    pub fn pop(&mut self) -> Option<Scheduled<E>> {
        self.pop_until(Time::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.schedule_at(5, i);
        }
        q.schedule_at(1, 1000);
        assert_eq!(q.pop().unwrap().event, 1000);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop().map(|s| s.event)).collect();
        assert_eq!(order, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn pops_in_time_order_and_respects_horizon() {
        let mut q = EventQueue::new();
        for t in [30u64, 10, 20, 40] {
            q.schedule_at(t, t);
        }
        let mut seen = vec![];
        while let Some(s) = q.pop_until(30) {
            seen.push(s.time);
        }
        assert_eq!(seen, vec![10, 20, 30]);
        assert_eq!(q.len(), 1);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_panics() {
        let mut q = EventQueue::new();
        q.schedule_at(10, ());
        q.pop();
        q.schedule_at(5, ());
    }
}
