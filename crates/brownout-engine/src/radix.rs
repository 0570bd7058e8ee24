//! A radix heap on hexadecimal digits: the same (time, insertion sequence) order and API as
//! [`EventQueue`], for large numbers of pending events.
//!
//! It relies on virtual time never running backwards: every new time is at least the time
//! last popped (`last`). An entry is filed by the highest hex digit in which its time differs
//! from `last` (the level, 0 to 15) and its own value of that digit (1 to 15 above last's):
//! every entry of a lower (level, digit) bucket is earlier than every entry of a higher one.
//! Bucket 0 holds the entries due at exactly `last`. A pop takes the front of bucket 0 or,
//! when that is empty, the lowest non-empty bucket: at level 0 its entries all share one time
//! and become bucket 0 as they are; above it they are refiled against their minimum into
//! lower levels. An entry moves at most once per level below the one it was filed at: at
//! most 8 times for a time 6 s (about 2^32.5 ns) ahead of the clock, where a binary radix heap
//! moves it up to once per bit, 33 times; so the cost per event does not grow with the number
//! pending the way a heap's log(n) does (measured in `benches/queue.rs`, see BENCHMARKS.md).
//!
//! The order uses times alone (each entry's insertion number only serves to compare with
//! events held outside the queue, in `pop_before`), and ties still pop
//! first in, first out: entries with equal times always sit in the same bucket (the bucket
//! depends on the time only), every bucket keeps equal-time entries in insertion order
//! (insertions append; a refile walks a bucket in order and appends to buckets that are
//! empty or hold only later times), and bucket 0 is only refilled once empty. So bucket 0
//! holds the entries due now in insertion order.
//!
//! [`EventQueue`]: super::EventQueue

use super::{Scheduled, Time};

#[derive(Clone, Copy)]
struct Entry<E> {
    time: Time,
    /// Insertion number: not used for the order inside the radix queue (insertion order is
    /// kept by position), only to compare with events held outside it (`pop_before`).
    seq: u64,
    event: E,
}

/// Bits per digit.
const DIGIT: u32 = 4;
/// Digits per time, and buckets per digit.
const LEVELS: usize = (Time::BITS / DIGIT) as usize;
const PER_LEVEL: usize = 1 << DIGIT;
/// Bucket 0 plus one per (level, digit value).
const BUCKETS: usize = 1 + LEVELS * PER_LEVEL;
const WORDS: usize = BUCKETS.div_ceil(64);
/// Room an emptied bucket keeps, at least: see [`RadixQueue::keep_room`].
const KEEP: usize = 128;

/// Pending events ordered by (time, insertion), stored in radix buckets. See the module docs.
pub struct RadixQueue<E> {
    /// Bucket 1 + 16 L + v holds times whose highest hex digit differing from `last` is
    /// digit L, with value v there; bucket 0 holds times equal to `last`, popped from `head` on.
    buckets: Vec<Vec<Entry<E>>>,
    /// Entries of bucket 0 before `head` were handed out already.
    head: usize,
    /// Bit b set when bucket b is non-empty: finding the lowest is a few instructions instead
    /// of a scan over up to 257 buckets on every pop.
    full: [u64; WORDS],
    /// A lower bound of every stored time: the last time popped or made minimum.
    last: Time,
    len: usize,
    seq: u64,
    now: Time,
    peak_len: usize,
}

impl<E: Copy> Default for RadixQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn bucket_of(time: Time, last: Time) -> usize {
    let x = time ^ last;
    if x == 0 {
        return 0;
    }
    let level = (Time::BITS - 1 - x.leading_zeros()) / DIGIT;
    let digit = (time >> (level * DIGIT)) as usize & (PER_LEVEL - 1);
    1 + level as usize * PER_LEVEL + digit
}

impl<E: Copy> RadixQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            head: 0,
            full: [0; WORDS],
            last: 0,
            len: 0,
            seq: 0,
            now: 0,
            peak_len: 0,
        }
    }

    /// File `entry` in its bucket relative to `last`.
    #[inline]
    fn file(&mut self, entry: Entry<E>) {
        let b = bucket_of(entry.time, self.last);
        self.buckets[b].push(entry);
        self.full[b / 64] |= 1 << (b % 64);
    }

    /// The room an emptied bucket keeps for its next filling: at most a sixteenth of what is
    /// pending (at least `KEEP` entries), so the queue's memory follows the events pending
    /// now. Each bucket keeping the most it ever held would let the memory grow with the
    /// run's length: up to 257 times the peak, as the buckets' peaks come at different times.
    #[inline]
    fn keep_room(&self) -> usize {
        (self.len / 16).max(KEEP)
    }

    /// Empty bucket `b`, keeping room for its next filling (see [`Self::keep_room`]).
    #[inline]
    fn empty_bucket(&mut self, b: usize) {
        let keep = self.keep_room();
        let v = &mut self.buckets[b];
        v.clear();
        if v.capacity() > keep {
            v.shrink_to(keep);
        }
    }

    /// Room held by the buckets, in entries (for the memory tests).
    #[cfg(test)]
    fn room(&self) -> usize {
        self.buckets.iter().map(Vec::capacity).sum()
    }

    /// The lowest non-empty bucket above bucket 0.
    #[inline]
    fn lowest_above_zero(&self) -> Option<usize> {
        let low = self.full[0] & !1;
        if low != 0 {
            return Some(low.trailing_zeros() as usize);
        }
        let w = (1..WORDS).find(|&w| self.full[w] != 0)?;
        Some(w * 64 + self.full[w].trailing_zeros() as usize)
    }

    /// An empty radix queue that continues a queue stopped at `now`.
    pub(super) fn resume(now: Time) -> Self {
        Self { last: now, now, ..Self::new() }
    }

    /// File entries moved from another queue, given in (time, insertion) order.
    pub(super) fn insert_sorted(&mut self, entries: impl Iterator<Item = (Time, u64, E)>) {
        for (time, seq, event) in entries {
            debug_assert!(time >= self.last, "moved entry lies before the queue's time");
            self.file(Entry { time, seq, event });
            self.len += 1;
        }
        self.peak_len = self.peak_len.max(self.len);
    }

    /// Schedule with an insertion number given by the caller, who numbers all its events
    /// in the order it schedules them.
    #[inline]
    pub(super) fn schedule_keyed(&mut self, time: Time, seq: u64, event: E) {
        assert!(time >= self.now, "event scheduled in the past: {time} < {}", self.now);
        self.file(Entry { time, seq, event });
        self.len += 1;
        self.peak_len = self.peak_len.max(self.len);
    }

    /// The time of the event most recently popped (the current virtual time).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The largest number of events that were pending at once.
    pub fn peak_len(&self) -> usize {
        self.peak_len
    }

    /// Schedule `event` at absolute time `time`.
    ///
    /// # Panics
    /// If `time` lies before the current time: virtual time never runs backwards.
    #[inline]
    pub fn schedule_at(&mut self, time: Time, event: E) {
        let seq = self.seq;
        self.seq += 1;
        self.schedule_keyed(time, seq, event);
    }

    /// Schedule `event` after `delay` from now.
    pub fn schedule_in(&mut self, delay: Time, event: E) {
        self.schedule_at(self.now.saturating_add(delay), event);
    }

    /// Pop the earliest event if it fires at or before `horizon`.
    #[inline]
    pub fn pop_until(&mut self, horizon: Time) -> Option<Scheduled<E>> {
        self.pop_before(horizon, (Time::MAX, u64::MAX))
    }

    /// Pop the earliest event if it fires at or before `horizon` and its (time, insertion
    /// number) lies before `bound` (the next event held elsewhere). The lower bound of the
    /// stored times never passes `bound`'s time, so that event may still be handed out and
    /// schedule events at its own time.
    #[inline]
    pub(super) fn pop_before(&mut self, horizon: Time, bound: (Time, u64)) -> Option<Scheduled<E>> {
        let time = self.next_before(horizon, bound)?;
        Some(Scheduled { time, event: self.take_next() })
    }

    /// Locate the event [`pop_before`](Self::pop_before) would pop and return its time,
    /// leaving it in place for [`take_next`](Self::take_next). Always inlined, as
    /// `EventQueue::next_until` is.
    #[inline(always)]
    pub(super) fn next_before(&mut self, horizon: Time, bound: (Time, u64)) -> Option<Time> {
        let horizon = horizon.min(bound.0);
        if self.head == self.buckets[0].len() {
            // Bucket 0 is used up: refill it from the lowest non-empty bucket.
            self.empty_bucket(0);
            self.head = 0;
            self.full[0] &= !1;
            let b = self.lowest_above_zero()?;
            if b <= PER_LEVEL {
                // Level 0: the bucket's entries share one time; they become bucket 0 as they are.
                let time = self.buckets[b][0].time;
                if time > horizon {
                    return None;
                }
                self.last = time;
                self.buckets.swap(0, b);
                self.full[0] = (self.full[0] | 1) & !(1 << b);
            } else {
                let min = self.buckets[b].iter().map(|e| e.time).min()?;
                if min > horizon {
                    // Leave `last` alone: events may still be scheduled before `min`.
                    return None;
                }
                self.last = min;
                let moved = std::mem::take(&mut self.buckets[b]);
                self.full[b / 64] &= !(1 << (b % 64));
                for e in &moved {
                    self.file(*e);
                }
                // The emptied vector serves the next filling of bucket b.
                self.buckets[b] = moved;
                self.empty_bucket(b);
            }
        }
        let top = &self.buckets[0][self.head];
        if top.time > horizon || (top.time, top.seq) >= bound {
            return None;
        }
        Some(top.time)
    }

    /// Take the event [`next_before`](Self::next_before) located; time moves to it. Always
    /// inlined, as `EventQueue::next_until` is.
    #[inline(always)]
    pub(super) fn take_next(&mut self) -> E {
        let top = &self.buckets[0][self.head];
        self.head += 1;
        self.len -= 1;
        self.now = top.time;
        top.event
    }

    /// Pop the earliest event.
    pub fn pop(&mut self) -> Option<Scheduled<E>> {
        self.pop_until(Time::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventQueue;
    use proptest::prelude::*;

    /// The oracle: a plain list; a pop scans for the smallest (time, insertion number).
    #[derive(Default)]
    struct Oracle {
        pending: Vec<(Time, u64, u32)>,
        seq: u64,
        now: Time,
    }

    impl Oracle {
        fn push(&mut self, time: Time, ev: u32) {
            self.pending.push((time, self.seq, ev));
            self.seq += 1;
        }
        fn pop_until(&mut self, horizon: Time) -> Option<(Time, u32)> {
            let i = (0..self.pending.len()).min_by_key(|&i| (self.pending[i].0, self.pending[i].1))?;
            if self.pending[i].0 > horizon {
                return None;
            }
            let (t, _, ev) = self.pending.swap_remove(i);
            self.now = t;
            Some((t, ev))
        }
    }

    #[test]
    fn the_room_kept_follows_the_events_pending_not_the_runs_length() {
        // Bursts of 4,000 events, each burst at times that fall in other buckets than the
        // last (one burst per hex digit value at levels 3 to 6: 60 bursts), popped in full
        // before the next: never more than 4,000 pending, but over the run nearly every
        // bucket holds thousands at some point. An emptied bucket keeps room for at most a
        // sixteenth of what is pending then (at least KEEP): with never more than 4,000
        // pending, at most 250 entries per bucket, 257 x 250 = 64,250 in all, against the
        // 60 x 4,000 = 240,000 that buckets keeping their peaks would hold from the bursts
        // alone (211,500 measured before the rule).
        let mut q: RadixQueue<u32> = RadixQueue::new();
        let mut popped = 0u64;
        for level in 3..=6u32 {
            for digit in 1..16u64 {
                let base = q.now() + (digit << (4 * level));
                for k in 0..4_000u64 {
                    q.schedule_at(base + k * 7, k as u32);
                }
                let mut last = 0;
                while let Some(s) = q.pop() {
                    assert!(s.time >= last, "popped out of order");
                    last = s.time;
                    popped += 1;
                }
            }
        }
        assert_eq!(popped, 60 * 4_000);
        assert_eq!(q.peak_len(), 4_000);
        assert!(q.room() <= BUCKETS * (4_000 / 16).max(KEEP), "the buckets keep room for {} entries", q.room());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push(Time),
        /// `EventQueue::schedule_fixed`: one of ten recurring delays (more than it has lines).
        PushFixed(Time),
        Pop,
        PopUntil(Time),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            // Many zero and small delays make ties and equal-time bursts common.
            3 => prop_oneof![Just(0u64), 0u64..4, 0u64..1_000_000, 0u64..1 << 40].prop_map(Op::Push),
            2 => (0u64..10).prop_map(|i| Op::PushFixed([0, 1, 3, 7, 50, 999, 1000, 7919, 1 << 20, 1 << 33][i as usize])),
            3 => Just(Op::Pop),
            1 => (0u64..2_000).prop_map(Op::PopUntil),
        ]
    }

    proptest! {
        #[test]
        fn both_queues_pop_exactly_like_the_oracle(
            prefill in 0u32..600,
            ops in prop::collection::vec(op(), 0..400),
        ) {
            let (mut o, mut h, mut r) = (Oracle::default(), EventQueue::new(), RadixQueue::new());
            // A prefill past RADIX_AT makes EventQueue switch to its radix representation.
            for i in 0..prefill {
                let t = (i as Time * 7919) % 1000;
                o.push(t, u32::MAX - i);
                h.schedule_at(t, u32::MAX - i);
                r.schedule_at(t, u32::MAX - i);
            }
            for (n, op) in ops.into_iter().enumerate() {
                let n = n as u32;
                match op {
                    Op::Push(d) => {
                        let t = o.now + d;
                        o.push(t, n);
                        h.schedule_at(t, n);
                        r.schedule_at(t, n);
                    }
                    Op::PushFixed(d) => {
                        let t = o.now + d;
                        o.push(t, n);
                        h.schedule_fixed(d, n);
                        r.schedule_at(t, n);
                    }
                    Op::Pop | Op::PopUntil(_) => {
                        let horizon = match op { Op::PopUntil(d) => o.now + d, _ => Time::MAX };
                        let want = o.pop_until(horizon);
                        prop_assert_eq!(h.pop_until(horizon).map(|s| (s.time, s.event)), want);
                        prop_assert_eq!(r.pop_until(horizon).map(|s| (s.time, s.event)), want);
                    }
                }
                prop_assert_eq!(h.len(), o.pending.len());
                prop_assert_eq!(r.len(), o.pending.len());
            }
        }
    }

    #[test]
    fn an_event_before_a_refused_horizon_can_still_be_scheduled() {
        // pop_until must not advance its lower bound past events it did not hand out.
        let mut r = RadixQueue::new();
        r.schedule_at(100, 'b');
        assert!(r.pop_until(50).is_none());
        r.schedule_at(60, 'a');
        assert_eq!(r.pop().map(|s| s.event), Some('a'));
        assert_eq!(r.pop().map(|s| s.event), Some('b'));
        assert!(r.pop().is_none());
    }
}
