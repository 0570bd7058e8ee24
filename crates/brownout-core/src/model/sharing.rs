//! Load-dependent service at a dependency replica: every call present is in service at once
//! and they share the replica's speed, so each call's service slows as more calls arrive.
//!
//! A call's service requirement is its drawn latency (work at full speed). With `n` calls
//! present each attains service at `rate(n)` per unit of time:
//!
//! - egalitarian processor sharing over `c` servers: `min(1, c / n)` (Kleinrock, *Queueing
//!   Systems* vol. 2, section 4.4), so `n <= c` calls run at full speed;
//! - the universal scalability law (Gunther, *Guerrilla Capacity Planning*, 2007, ch. 4):
//!   `X(n) / n = 1 / (1 + sigma (n - 1) + kappa n (n - 1))`, where `X(n) = n / (1 + sigma
//!   (n - 1) + kappa n (n - 1))` is the throughput at concurrency `n` in calls of one
//!   call's speed; with `sigma = kappa = 0` it is processor sharing with unlimited servers.
//!
//! Pure logic over one replica, in the classic virtual-clock form: `virtual_now` is the
//! service every call present has attained since the replica last fell idle (all present
//! calls attain the same amount), so a call that joins at virtual time `v` with requirement
//! `s` finishes when `virtual_now` reaches `v + s`, whatever joins or leaves meanwhile. The
//! calls wait in a heap by that virtual finish: a join, a departure or a completion costs
//! O(log n), never a pass over the others.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::engine::Time;
use crate::scenario::{Capacity, Sharing};

/// How calls present at a replica share it (from `capacity.sharing`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ShareRule {
    /// Egalitarian processor sharing over this many servers: rate `min(1, c / n)`.
    Processors(u32),
    /// The universal scalability law with (sigma, kappa): rate `X(n) / n`.
    Usl(f64, f64),
}

impl ShareRule {
    /// The rule a capacity states; None for servers and a queue.
    pub(crate) fn of(c: &Capacity) -> Option<Self> {
        match c.sharing {
            Sharing::Queue => None,
            Sharing::ProcessorSharing => Some(ShareRule::Processors(c.servers)),
            Sharing::Usl { sigma, kappa } => Some(ShareRule::Usl(sigma, kappa)),
        }
    }

    /// The service each of `n >= 1` calls present attains per unit of time.
    pub(crate) fn rate(&self, n: u32) -> f64 {
        let n = f64::from(n.max(1));
        match *self {
            ShareRule::Processors(c) => (f64::from(c) / n).min(1.0),
            ShareRule::Usl(sigma, kappa) => 1.0 / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)),
        }
    }
}

/// One call present, ordered by virtual finish, then by joining order (so equal finishes
/// complete first come, first served).
#[derive(Debug, Clone, Copy)]
struct Entry<T> {
    /// Virtual time at which it has attained its requirement (>= 0, so the bits of the f64
    /// order as the number does).
    finish: u64,
    /// Joining order.
    seq: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.finish, self.seq) == (other.finish, other.seq)
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    // Reversed: `BinaryHeap` is a max-heap and the earliest finish must come out first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.finish, other.seq).cmp(&(self.finish, self.seq))
    }
}

/// One replica's shared service: its virtual clock and the calls present.
#[derive(Debug, Clone)]
pub(crate) struct Shared<T> {
    /// Service (ns at full speed) each call present has attained since the replica was last
    /// idle.
    virtual_now: f64,
    /// When `virtual_now` was last brought up to date (ns).
    at: Time,
    /// Calls present (count), not counting entries of calls that left early.
    present: u32,
    /// The calls present by virtual finish; a call that left before finishing (cancelled)
    /// keeps its entry until it reaches the top, where `live` tells it apart.
    calls: BinaryHeap<Entry<T>>,
    /// Calls that ever joined (the next `seq`).
    joined: u64,
    /// Bumped whenever the next completion may have moved: a completion event that carries
    /// an older generation is stale.
    pub(crate) generation: u32,
}

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Self { virtual_now: 0.0, at: 0, present: 0, calls: BinaryHeap::new(), joined: 0, generation: 0 }
    }
}

impl<T: Copy> Shared<T> {
    /// Calls present (read by the world's invariants, which debug builds check).
    #[cfg_attr(not(any(debug_assertions, test)), allow(dead_code))]
    pub(crate) fn present(&self) -> u32 {
        self.present
    }

    /// Bring the virtual clock to `now` at the rate of the calls present since the last change.
    fn advance(&mut self, now: Time, rule: &ShareRule) {
        if self.present > 0 {
            self.virtual_now += rule.rate(self.present) * now.saturating_sub(self.at) as f64;
        }
        self.at = now;
    }

    /// The replica fell idle: its clock starts again from 0 (every entry left is a call that
    /// left early), which keeps the clock's numbers small and so exact to well below a ns.
    fn idle(&mut self) {
        if self.present == 0 {
            self.virtual_now = 0.0;
            self.calls.clear();
        }
    }

    /// `item` arrives at `now` needing `work` ns of service at full speed.
    pub(crate) fn join(&mut self, now: Time, rule: &ShareRule, work: Time, item: T) {
        self.advance(now, rule);
        let finish = self.virtual_now + work as f64;
        self.calls.push(Entry { finish: finish.to_bits(), seq: self.joined, item });
        self.joined += 1;
        self.present += 1;
        self.generation = self.generation.wrapping_add(1);
    }

    /// A call present leaves at `now` before finishing (the caller made it not `live`).
    pub(crate) fn leave(&mut self, now: Time, rule: &ShareRule) {
        self.advance(now, rule);
        debug_assert!(self.present > 0, "a call left a replica that held none");
        self.present = self.present.saturating_sub(1);
        self.idle();
        self.generation = self.generation.wrapping_add(1);
    }

    /// Drop the entries of calls that left early from the top of the heap.
    fn skip_dead(&mut self, live: &impl Fn(T) -> bool) {
        while self.calls.peek().is_some_and(|e| !live(e.item)) {
            self.calls.pop();
        }
    }

    /// When the next call present finishes if nothing joins or leaves before (None when
    /// none is present). Call it right after a change, with the clock at that change.
    pub(crate) fn next_due(&mut self, rule: &ShareRule, live: impl Fn(T) -> bool) -> Option<Time> {
        if self.present == 0 {
            return None;
        }
        self.skip_dead(&live);
        let top = self.calls.peek()?;
        let left = (f64::from_bits(top.finish) - self.virtual_now).max(0.0);
        // Rounded up to a whole ns, so the call has attained its whole requirement then.
        let wait = (left / rule.rate(self.present)).ceil().min(1.0e15) as Time;
        Some(self.at.saturating_add(wait))
    }

    /// The call whose completion `next_due` announced finishes at `now`: it leaves and is
    /// returned.
    pub(crate) fn complete(&mut self, now: Time, rule: &ShareRule, live: impl Fn(T) -> bool) -> Option<T> {
        self.advance(now, rule);
        self.skip_dead(&live);
        let top = self.calls.pop()?;
        // Rounding the wait up may leave the clock a hair past the finish, or a float error a
        // hair short of it: the finishing call has attained its requirement either way.
        self.virtual_now = self.virtual_now.max(f64::from_bits(top.finish));
        self.present = self.present.saturating_sub(1);
        self.idle();
        self.generation = self.generation.wrapping_add(1);
        Some(top.item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run `jobs` (arrival ns, work ns) through one replica by `rule`; each job's finish ns.
    fn finishes(rule: ShareRule, jobs: &[(Time, Time)]) -> Vec<Time> {
        let mut s: Shared<usize> = Shared::default();
        let mut done = vec![None; jobs.len()];
        let mut next = 0;
        loop {
            let due = s.next_due(&rule, |i| done[i].is_none());
            match (jobs.get(next), due) {
                (Some(&(at, work)), d) if d.is_none_or(|d| at < d) => {
                    s.join(at, &rule, work, next);
                    next += 1;
                }
                (_, Some(d)) => {
                    let i = s.complete(d, &rule, |i| done[i].is_none()).expect("a call present");
                    done[i] = Some(d);
                }
                (None, None) => break,
                (Some(_), None) => unreachable!("an arrival is taken when nothing is due"),
            }
        }
        done.into_iter().map(|d| d.expect("finished")).collect()
    }

    #[test]
    fn one_processor_shares_equally() {
        // Works 10 and 20 from time 0: both run at 1/2, the first attains 10 at 20; the
        // second has 10 left, alone at full speed: 30.
        assert_eq!(finishes(ShareRule::Processors(1), &[(0, 10), (0, 20)]), [20, 30]);
        // A third call of 5 joins at 12: by then each attained 6; three at 1/3 each. Call 0
        // needs 4 more (12 ns), call 2 needs 5 (15 ns): call 0 at 24 (call 2 attained 4,
        // call 1 attained 10); two left at 1/2: call 2 needs 1 (2 ns): 26, call 1 has 9
        // left alone: 35.
        assert_eq!(finishes(ShareRule::Processors(1), &[(0, 10), (0, 20), (12, 5)]), [24, 35, 26]);
    }

    #[test]
    fn calls_within_the_servers_run_at_full_speed() {
        assert_eq!(finishes(ShareRule::Processors(2), &[(0, 10), (0, 20)]), [10, 20]);
        // Three calls on two servers: each at 2/3 until the first attains 9 at 13.5 -> 14
        // (rounded up to the ns); then two at full speed.
        let f = finishes(ShareRule::Processors(2), &[(0, 9), (0, 20), (0, 30)]);
        assert_eq!(f[0], 14);
        // By 14 each attained 9 1/3 (the first a third of a ns past its 9): the second has
        // 20 - 9.33 = 10.67 left at full speed: 24.67 -> 25.
        assert_eq!(f[1], 25);
    }

    #[test]
    fn usl_slows_every_call_with_contention() {
        // sigma = kappa = 0 is processor sharing with unlimited servers.
        let jobs = [(0, 10), (0, 20), (3, 7), (5, 40)];
        assert_eq!(finishes(ShareRule::Usl(0.0, 0.0), &jobs), finishes(ShareRule::Processors(100), &jobs));
        // sigma = 0.5, two calls: each at 1 / 1.5; works 10 and 20: the first at 15, the
        // second attained 10 and has 10 left alone: 25.
        assert_eq!(finishes(ShareRule::Usl(0.5, 0.0), &[(0, 10), (0, 20)]), [15, 25]);
        // kappa = 0.25, three calls: 1 / (1 + 0.25 x 6) = 0.4 each; works 4 each: 10.
        assert_eq!(finishes(ShareRule::Usl(0.0, 0.25), &[(0, 4), (0, 4), (0, 4)]), [10, 10, 10]);
    }

    #[test]
    fn a_call_that_leaves_early_gives_its_share_back() {
        let rule = ShareRule::Processors(1);
        let mut s: Shared<u8> = Shared::default();
        s.join(0, &rule, 10, 0);
        s.join(0, &rule, 100, 1);
        // At 4 call 1 is cancelled: each attained 2; call 0 alone needs 8 more: 12.
        s.leave(4, &rule);
        assert_eq!(s.next_due(&rule, |i| i == 0), Some(12));
        assert_eq!(s.complete(12, &rule, |i| i == 0), Some(0));
        assert_eq!((s.present(), s.next_due(&rule, |_| false)), (0, None));
    }
}
