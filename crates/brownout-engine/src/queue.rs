//! The event queue: an implicit d-ary min-heap keyed by (time, insertion sequence), with
//! pop-and-push fusion.
//!
//! Ties in time pop in insertion order (FIFO), which makes runs deterministic without
//! any reliance on the payload. Keys are compared as one `u128` (time in the high half).
//!
//! Why hand-written rather than `std::collections::BinaryHeap`: most handlers schedule one
//! follow-up per event, so a pop leaves the root vacant (a "hole") and the next push fills it
//! and sifts down once, instead of a full pop (sift to the bottom and back up) followed by a
//! full push (sift up). Events are `Copy`, so moving them costs a plain copy and nothing is
//! allocated per event once the vector has grown. The heap is binary: it never holds more
//! than [`RADIX_AT`] events (8 KiB, in L1), where the depth a 4-ary layout saves costs more
//! than it saves (a tournament of three comparisons per level against one; BENCHMARKS.md,
//! issue 38's last step, has the counts).
//!
//! Past [`RADIX_AT`] pending events the queue moves, once and for good, to a
//! [`RadixQueue`], whose cost per event does not grow with size. Beside either, events
//! scheduled a recurring fixed delay ahead ([`EventQueue::schedule_fixed`]) wait in a
//! first-in-first-out line per delay, already in time order. Every pop takes the smallest
//! (time, sequence) among the heap or radix queue and the heads of those lines, so neither
//! the switch nor the lines ever change a result.

use std::collections::VecDeque;

use super::{RadixQueue, Time};

/// Pending events beyond which the radix queue beats the heap (hold model: the heap wins at
/// 10 pending, the radix queue from a few hundred; BENCHMARKS.md).
pub const RADIX_AT: usize = 256;

/// An event popped from the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheduled<E> {
    /// When it fires.
    pub time: Time,
    /// What fires.
    pub event: E,
}

#[derive(Clone, Copy)]
struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

/// Pending events ordered by (time, sequence). See the module docs.
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    /// The root was handed out by the last pop but is still stored: the next push
    /// overwrites it (fusion), the next pop removes it first.
    hole: bool,
    /// Set once more than [`RADIX_AT`] events were pending; from then on it holds them all.
    radix: Option<RadixQueue<E>>,
    seq: u64,
    now: Time,
    peak_len: usize,
    /// First-in-first-out lines of events scheduled a fixed delay ahead
    /// ([`EventQueue::schedule_fixed`]), one per distinct delay.
    fifos: Vec<Fifo<E>>,
    /// Events waiting in the `fifos`.
    fifo_len: usize,
    /// Above this many events in the `fifos`, [`EventQueue::wants_compaction`] says a sweep
    /// for stale ones pays: twice what the last sweep kept, at least `compaction_floor`.
    compact_at: usize,
    compaction_floor: usize,
}

/// The default floor of [`EventQueue::compact_at`]: below it stale timers cost little memory.
const COMPACTION_FLOOR: usize = 1 << 16;

/// Events scheduled `delay` after the then current time: in time order by construction.
struct Fifo<E> {
    delay: Time,
    line: VecDeque<Entry<E>>,
}

/// Distinct fixed delays that get their own line; further ones go to the heap.
const FIFOS: usize = 8;

/// The next event due, located but not yet taken: what [`EventQueue::next_until`] answers and
/// [`EventQueue::take`] consumes. Two steps hand the event over as a plain value: inside an
/// `Option` it cost a store-to-load stall per event (BENCHMARKS.md).
#[derive(Debug)]
pub(super) struct Due {
    /// When it fires.
    pub(super) time: Time,
    from: Source,
}

#[derive(Debug, Clone, Copy)]
enum Source {
    Heap,
    Radix,
    Fifo(usize),
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::with_compaction_floor(COMPACTION_FLOOR)
    }

    /// An empty queue whose fixed-delay lines are swept for stale events only once more than
    /// `floor` events wait in them (tests pick 1 to sweep at every chance, `usize::MAX` never).
    pub fn with_compaction_floor(floor: usize) -> Self {
        Self {
            heap: Vec::new(),
            hole: false,
            radix: None,
            seq: 0,
            now: 0,
            peak_len: 0,
            fifos: Vec::new(),
            fifo_len: 0,
            compact_at: floor,
            compaction_floor: floor,
        }
    }

    /// True when the fixed-delay lines grew past the point where sweeping out stale events
    /// pays (amortised O(1) per event: each sweep at least doubles the next threshold).
    #[inline]
    pub fn wants_compaction(&self) -> bool {
        self.fifo_len > self.compact_at
    }

    /// Drop the fixed-delay events `stale` picks, keeping the others in order (their
    /// insertion numbers, so ties still pop FIFO). Returns how many of the dropped events fire
    /// at or before `horizon` and the latest such time: a run counts them as if it had popped
    /// and ignored them.
    pub fn compact_fixed(&mut self, mut stale: impl FnMut(&E) -> bool, horizon: Time) -> (u64, Option<Time>) {
        let mut due = 0;
        let mut latest = None;
        for f in &mut self.fifos {
            f.line.retain(|e| {
                let drop = stale(&e.event);
                if drop && e.time <= horizon {
                    due += 1;
                    latest = latest.max(Some(e.time));
                }
                !drop
            });
            if f.line.len() < f.line.capacity() / 4 {
                f.line.shrink_to(f.line.len() * 2);
            }
        }
        self.fifo_len = self.fifos.iter().map(|f| f.line.len()).sum();
        self.compact_at = self.fifo_len.saturating_mul(2).max(self.compaction_floor);
        (due, latest)
    }

    /// The time of the event most recently popped (the current virtual time).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        let main = match &self.radix {
            Some(r) => r.len(),
            None => self.heap.len() - self.hole as usize,
        };
        main + self.fifo_len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest number of events that were pending at once.
    pub fn peak_len(&self) -> usize {
        self.peak_len.max(self.radix.as_ref().map_or(0, |r| r.peak_len()))
    }

    /// Schedule `event` at absolute time `time`.
    ///
    /// Always inlined: the common case (a handler's first follow-up fills the root it was
    /// popped from) is a short sift with no call frame; growing the heap, moving to or filing
    /// in the radix queue are out of line (`push`).
    ///
    /// # Panics
    /// If `time` lies before the current time: virtual time never runs backwards.
    #[inline(always)]
    pub fn schedule_at(&mut self, time: Time, event: E) {
        if time < self.now {
            in_the_past(time, self.now);
        }
        let seq = self.seq;
        self.seq += 1;
        let entry = Entry { time, seq, event };
        // Only the heap leaves a hole (`take`), so this is the heap form.
        if self.hole {
            // Fusion: the vacated root takes the new entry and sifts down once.
            self.hole = false;
            self.replace_root(entry);
        } else {
            self.push(entry);
        }
    }

    /// Schedule an entry when there is no hole to fill: at the heap's end, or in the radix
    /// queue ([`Self::push_radix`], out of line so that this path saves fewer registers).
    #[inline(never)]
    fn push(&mut self, entry: Entry<E>) {
        if self.radix.is_some() {
            return self.push_radix(entry);
        }
        self.heap.push(entry);
        let last = self.heap.len() - 1;
        self.sift_up(last, entry);
        self.peak_len = self.peak_len.max(self.heap.len());
        if self.heap.len() > RADIX_AT {
            self.move_to_radix();
        }
    }

    /// File an entry in the radix queue.
    #[inline(never)]
    fn push_radix(&mut self, entry: Entry<E>) {
        let r = self.radix.as_mut().expect("the radix form");
        r.schedule_keyed(entry.time, entry.seq, entry.event);
    }

    /// Hand every pending entry, in (time, insertion) order, to a radix queue.
    #[cold]
    fn move_to_radix(&mut self) {
        let mut r = RadixQueue::resume(self.now);
        debug_assert!(!self.hole, "moved on a push that did not fill a hole");
        // The radix queue keys on time alone and keeps ties in the order they arrive.
        self.heap.sort_unstable_by_key(|e| e.key());
        r.insert_sorted(self.heap.drain(..).map(|e| (e.time, e.seq, e.event)));
        self.radix = Some(r);
    }

    /// Schedule `event` after `delay` from now.
    #[inline]
    pub fn schedule_in(&mut self, delay: Time, event: E) {
        self.schedule_at(self.now.saturating_add(delay), event);
    }

    /// Schedule `event` `delay` after now, for a delay that recurs (a fixed overhead, a
    /// configured wait limit). Events of one delay are due in the order they are scheduled, so
    /// each distinct delay (up to eight) gets a first-in-first-out line beside the heap, and
    /// such an event costs a push and a pop at the ends of a line instead of a trip through
    /// the heap. It pops in exactly the same (time, insertion) order as with `schedule_in`.
    #[inline]
    pub fn schedule_fixed(&mut self, delay: Time, event: E) {
        let i = match self.fifos.iter().position(|f| f.delay == delay) {
            Some(i) => i,
            None if self.fifos.len() < FIFOS => {
                self.fifos.push(Fifo { delay, line: VecDeque::new() });
                self.fifos.len() - 1
            }
            None => return self.schedule_in(delay, event),
        };
        let time = self.now.saturating_add(delay);
        self.fifos[i].line.push_back(Entry { time, seq: self.seq, event });
        self.seq += 1;
        self.fifo_len += 1;
        self.peak_len = self.peak_len.max(self.len());
    }

    /// The line whose first event is due first, with that event's (time, insertion number).
    #[inline]
    fn first_fifo(&self) -> Option<(usize, (Time, u64))> {
        if self.fifo_len == 0 {
            return None;
        }
        let mut best: Option<(usize, (Time, u64))> = None;
        for (i, f) in self.fifos.iter().enumerate() {
            if let Some(e) = f.line.front()
                && best.is_none_or(|(_, k)| (e.time, e.seq) < k)
            {
                best = Some((i, (e.time, e.seq)));
            }
        }
        best
    }

    /// Pop the earliest event if it fires at or before `horizon`.
    #[inline]
    pub fn pop_until(&mut self, horizon: Time) -> Option<Scheduled<E>> {
        let due = self.next_until(horizon)?;
        let time = due.time;
        Some(Scheduled { time, event: self.take(due) })
    }

    /// Locate the earliest event if it fires at or before `horizon`, without taking it.
    /// The caller must [`take`](Self::take) it before anything else touches the queue.
    /// Always inlined, with what it calls per event: a run loop instantiated for more than one
    /// handler (the world with and without phase recorders) otherwise calls them out of line,
    /// 40-140 instructions per request (BENCHMARKS.md, "phases cost nothing when off").
    #[inline(always)]
    pub(super) fn next_until(&mut self, horizon: Time) -> Option<Due> {
        let fifo = self.first_fifo();
        let bound = fifo.map_or((Time::MAX, u64::MAX), |(_, k)| k);
        if let Some(r) = &mut self.radix {
            if let Some(time) = r.next_before(horizon, bound) {
                return Some(Due { time, from: Source::Radix });
            }
        } else {
            if self.hole {
                self.hole = false;
                self.remove_root();
            }
            if let Some(top) = self.heap.first()
                && (top.time, top.seq) < bound
            {
                if top.time > horizon {
                    return None;
                }
                return Some(Due { time: top.time, from: Source::Heap });
            }
        }
        let (i, (time, _)) = fifo?;
        if time > horizon {
            return None;
        }
        Some(Due { time, from: Source::Fifo(i) })
    }

    /// Take the event [`next_until`](Self::next_until) located; time moves to it. Always
    /// inlined, as `next_until` is.
    #[inline(always)]
    pub(super) fn take(&mut self, due: Due) -> E {
        self.now = due.time;
        match due.from {
            Source::Heap => {
                debug_assert!(!self.hole && self.heap[0].time == due.time, "take right after next_until");
                // The root stays stored as a hole: the next push overwrites it (fusion).
                self.hole = true;
                self.heap[0].event
            }
            Source::Radix => self.radix.as_mut().expect("located in the radix queue").take_next(),
            Source::Fifo(i) => {
                self.fifo_len -= 1;
                let e = self.fifos[i].line.pop_front().expect("a first event");
                debug_assert_eq!(e.time, due.time, "take right after next_until");
                e.event
            }
        }
    }

    /// Pop the earliest event.
    pub fn pop(&mut self) -> Option<Scheduled<E>> {
        self.pop_until(Time::MAX)
    }

    /// Drop the root for good: the last entry takes its place. Always inlined, as
    /// `next_until` is.
    #[inline(always)]
    fn remove_root(&mut self) {
        let last = self.heap.pop().expect("a hole implies a root");
        if !self.heap.is_empty() {
            self.sift_down_from_root(last);
        }
    }

    /// Place `entry` at the root and restore the heap order. Like std's `pop`, it first
    /// walks the hole to the bottom along the smaller children (one comparison per level
    /// instead of two), then sifts `entry` up: the last entry usually belongs near the bottom.
    fn sift_down_from_root(&mut self, entry: Entry<E>) {
        let h = &mut self.heap;
        let len = h.len();
        let mut pos = 0;
        let mut child = 1;
        // Both children exist.
        while child + 1 < len {
            child += (h[child + 1].key() < h[child].key()) as usize;
            h[pos] = h[child];
            pos = child;
            child = 2 * pos + 1;
        }
        if child + 1 == len {
            h[pos] = h[child];
            pos = child;
        }
        self.sift_up(pos, entry);
    }

    /// Place `entry` at the root and sift it down top-down, stopping as soon as it is no
    /// larger than its smaller child. Used for fusion: the follow-up a handler schedules
    /// first is often the next arrival, which belongs near the top.
    #[inline(always)]
    fn replace_root(&mut self, entry: Entry<E>) {
        let h = &mut self.heap;
        let len = h.len();
        let key = entry.key();
        let mut pos = 0;
        let mut child = 1;
        while child + 1 < len {
            let (a, b) = (h[child].key(), h[child + 1].key());
            let least = if b < a { b } else { a };
            if key <= least {
                break;
            }
            child += (b < a) as usize;
            h[pos] = h[child];
            pos = child;
            child = 2 * pos + 1;
        }
        if child + 1 == len && h[child].key() < key {
            h[pos] = h[child];
            pos = child;
        }
        h[pos] = entry;
    }

    /// Move `entry`, destined for slot `pos`, up while it is smaller than its parent.
    #[inline]
    fn sift_up(&mut self, mut pos: usize, entry: Entry<E>) {
        let h = &mut self.heap;
        let key = entry.key();
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if h[parent].key() <= key {
                break;
            }
            h[pos] = h[parent];
            pos = parent;
        }
        h[pos] = entry;
    }
}

/// The panic of a schedule before the current time, out of line so that the inlined
/// `schedule_at` stays small.
#[cold]
#[inline(never)]
fn in_the_past(time: Time, now: Time) -> ! {
    panic!("event scheduled in the past: {time} < {now}")
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
