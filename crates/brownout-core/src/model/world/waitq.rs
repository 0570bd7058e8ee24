//! A layer's wait queue: attempts parked by `Admission::Wait`, one line per class priority.
//!
//! Entries are (request, generation, arrival number). An entry whose request left the queue
//! some other way (its wait limit fired, it was shed, its instance restarted) stays behind as a
//! tombstone until it reaches the end of its line, where [`WaitQueue::next`] prunes it; the
//! caller says which entries are still live.
//!
//! Lines are kept highest priority first and each is in arrival order, so every order is served
//! from the end of a line in O(levels): FIFO takes the earliest-arrived line head, LIFO the
//! latest-arrived line tail, priority the head of the highest non-empty line (first in, first
//! out among equals). One line per level rather than one list scanned at each dequeue keeps a
//! priority queue of hundreds of waiters from costing hundreds of steps per admission.

use std::collections::VecDeque;

use crate::engine::Token;
use crate::policy::QueueOrder;

/// A parked attempt: the request, its timer generation when parked, its arrival number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Waiter {
    pub tok: Token,
    pub generation: u32,
    seq: u64,
}

impl Waiter {
    /// Arrival number: smaller is earlier.
    #[cfg(test)]
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// Where a waiter sits: (line, index in the line).
pub(super) type Pos = (usize, usize);

#[derive(Debug, Default)]
pub(super) struct WaitQueue {
    /// (priority, waiters in arrival order), highest priority first.
    lines: Vec<(u32, VecDeque<Waiter>)>,
    next_seq: u64,
}

impl WaitQueue {
    /// Park `tok` (at timer generation `generation`) with its class's `priority`.
    pub fn push(&mut self, tok: Token, generation: u32, priority: u32) {
        let w = Waiter { tok, generation, seq: self.next_seq };
        self.next_seq += 1;
        let i = match self.lines.iter().position(|(p, _)| *p <= priority) {
            Some(i) if self.lines[i].0 == priority => i,
            Some(i) => {
                self.lines.insert(i, (priority, VecDeque::new()));
                i
            }
            None => {
                self.lines.push((priority, VecDeque::new()));
                self.lines.len() - 1
            }
        };
        self.lines[i].1.push_back(w);
    }

    /// The next waiter to serve in `order`, after pruning tombstones (entries for which `live`
    /// is false) from both ends of every line.
    pub fn next(&mut self, order: QueueOrder, live: impl Fn(&Waiter) -> bool) -> Option<(Pos, Token)> {
        for (_, line) in &mut self.lines {
            while line.front().is_some_and(|w| !live(w)) {
                line.pop_front();
            }
            while line.back().is_some_and(|w| !live(w)) {
                line.pop_back();
            }
        }
        let ends = self.lines.iter().enumerate().filter(|(_, (_, l))| !l.is_empty());
        match order {
            QueueOrder::Fifo => ends.min_by_key(|(_, (_, l))| l[0].seq).map(|(i, (_, l))| ((i, 0), l[0].tok)),
            QueueOrder::Lifo => ends
                .max_by_key(|(_, (_, l))| l[l.len() - 1].seq)
                .map(|(i, (_, l))| ((i, l.len() - 1), l[l.len() - 1].tok)),
            QueueOrder::Priority => ends.map(|(i, (_, l))| ((i, 0), l[0].tok)).next(),
        }
    }

    /// No entry at all, live or tombstone ([`WaitQueue::next`] would find and prune nothing).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.lines.iter().all(|(_, l)| l.is_empty())
    }

    /// Every entry (tombstones included) with its position, in arrival order within a line.
    pub fn iter(&self) -> impl Iterator<Item = (Pos, &Waiter)> {
        self.lines.iter().enumerate().flat_map(|(i, (_, l))| l.iter().enumerate().map(move |(j, w)| ((i, j), w)))
    }

    /// Remove the entry at `pos` (at an end of its line when it came from [`WaitQueue::next`]).
    pub fn remove(&mut self, pos: Pos) {
        self.lines[pos.0].1.remove(pos.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(i: u32) -> Token {
        Token { index: i, generation: 0 }
    }

    /// A queue with (request, priority) pairs pushed in order.
    fn queue(entries: &[(u32, u32)]) -> WaitQueue {
        let mut q = WaitQueue::default();
        for &(i, p) in entries {
            q.push(tok(i), 0, p);
        }
        q
    }

    /// Serve everything in `order`; requests listed in `dead` are tombstones.
    fn drain(q: &mut WaitQueue, order: QueueOrder, dead: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        while let Some((pos, t)) = q.next(order, |w| !dead.contains(&w.tok.index)) {
            out.push(t.index);
            q.remove(pos);
        }
        out
    }

    #[test]
    fn fifo_and_lifo_follow_arrival_across_priorities() {
        let entries = [(1, 1), (2, 3), (3, 1), (4, 2), (5, 3)];
        assert_eq!(drain(&mut queue(&entries), QueueOrder::Fifo, &[]), vec![1, 2, 3, 4, 5]);
        assert_eq!(drain(&mut queue(&entries), QueueOrder::Lifo, &[]), vec![5, 4, 3, 2, 1]);
    }

    #[test]
    fn priority_serves_highest_first_and_first_in_among_equals() {
        let entries = [(1, 1), (2, 3), (3, 1), (4, 2), (5, 3), (6, 0)];
        assert_eq!(drain(&mut queue(&entries), QueueOrder::Priority, &[]), vec![2, 5, 4, 1, 3, 6]);
    }

    #[test]
    fn tombstones_are_skipped_wherever_they_sit() {
        let entries = [(1, 1), (2, 3), (3, 1), (4, 2), (5, 3), (6, 1)];
        // 3 sits in the middle of its line until 1 is served; 2 heads the top line.
        assert_eq!(drain(&mut queue(&entries), QueueOrder::Priority, &[2, 3]), vec![5, 4, 1, 6]);
        assert_eq!(drain(&mut queue(&entries), QueueOrder::Fifo, &[3, 6]), vec![1, 2, 4, 5]);
        assert_eq!(drain(&mut queue(&entries), QueueOrder::Lifo, &[6, 1]), vec![5, 4, 3, 2]);
    }

    use proptest::prelude::*;

    proptest! {
        /// Against the list the queue replaced: one list in arrival order, scanned at every
        /// dequeue (FIFO: the first live entry; LIFO: the last; priority: the first live entry
        /// of the highest priority). Steps push, kill a waiting entry (it becomes a tombstone)
        /// or serve one, in any mix and order.
        #[test]
        fn serves_as_a_scanned_list_would(
            steps in proptest::collection::vec((0u8..3, 0u32..4, any::<u16>()), 1..200),
            order in prop_oneof![Just(QueueOrder::Fifo), Just(QueueOrder::Lifo), Just(QueueOrder::Priority)],
        ) {
            let mut q = WaitQueue::default();
            let mut list: Vec<(u32, u32)> = Vec::new(); // (request, priority), arrival order
            let mut dead: Vec<u32> = Vec::new();
            let mut next_id = 0;
            for (kind, priority, pick) in steps {
                match kind {
                    0 => {
                        q.push(tok(next_id), 0, priority);
                        list.push((next_id, priority));
                        next_id += 1;
                    }
                    1 if !list.is_empty() => {
                        let (id, _) = list.remove(pick as usize % list.len());
                        dead.push(id);
                    }
                    _ => {
                        let expected = match order {
                            QueueOrder::Fifo => list.first().map(|e| e.0),
                            QueueOrder::Lifo => list.last().map(|e| e.0),
                            QueueOrder::Priority => {
                                let top = list.iter().map(|e| e.1).max();
                                list.iter().find(|e| Some(e.1) == top).map(|e| e.0)
                            }
                        };
                        let got = q.next(order, |w| !dead.contains(&w.tok.index));
                        prop_assert_eq!(got.map(|(_, t)| t.index), expected);
                        if let Some((pos, t)) = got {
                            q.remove(pos);
                            list.retain(|e| e.0 != t.index);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn iter_and_remove_in_the_middle() {
        let mut q = queue(&[(1, 1), (2, 3), (3, 1), (4, 1)]);
        let (pos, w) = q.iter().find(|(_, w)| w.tok.index == 3).expect("present");
        assert_eq!(w.seq(), 2);
        q.remove(pos);
        assert_eq!(drain(&mut q, QueueOrder::Fifo, &[]), vec![1, 2, 4]);
        assert!(q.iter().next().is_none());
    }
}
