//! Outcome windows shared by the rate breakers: a ring of the last N outcomes (COUNT) and
//! N time buckets aligned to multiples of a bucket width (TIME, subtract-on-evict).
//!
//! Memory is O(window size), never O(requests): a bucket holds three counters.

use std::collections::VecDeque;

use crate::engine::Time;

/// One recorded call outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// The call failed (error or timeout).
    pub failed: bool,
    /// The call was slow (its duration exceeded the slow threshold).
    pub slow: bool,
}

/// Aggregated outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Calls recorded.
    pub total: u64,
    /// Failed calls.
    pub failed: u64,
    /// Slow calls (slow successes and slow failures).
    pub slow: u64,
}

impl Counts {
    fn add(&mut self, s: Sample) {
        self.total += 1;
        self.failed += u64::from(s.failed);
        self.slow += u64::from(s.slow);
    }

    fn sub(&mut self, o: Counts) {
        self.total -= o.total;
        self.failed -= o.failed;
        self.slow -= o.slow;
    }

    /// Failed calls as a percentage of all calls (0 when empty).
    pub fn failure_pct(&self) -> f64 {
        pct(self.failed, self.total)
    }

    /// Slow calls as a percentage of all calls (0 when empty).
    pub fn slow_pct(&self) -> f64 {
        pct(self.slow, self.total)
    }
}

fn pct(part: u64, total: u64) -> f64 {
    if total == 0 { 0.0 } else { part as f64 * 100.0 / total as f64 }
}

/// A COUNT or TIME sliding window.
#[derive(Debug, Clone)]
pub enum Window {
    /// The last `size` outcomes.
    Count {
        /// Outcomes, oldest first.
        ring: VecDeque<Sample>,
        /// Capacity.
        size: usize,
        /// Sum over `ring`.
        counts: Counts,
    },
    /// `buckets.len()` buckets of `width`; bucket `k` covers `[k*width, (k+1)*width)`.
    Time {
        /// Bucket counters, indexed by bucket number modulo the bucket count.
        buckets: Vec<Counts>,
        /// Width of one bucket.
        width: Time,
        /// Number of the newest bucket.
        head: u64,
        /// Sum over `buckets`.
        counts: Counts,
    },
}

impl Window {
    /// A ring of the last `size` outcomes (at least one).
    pub fn count(size: u32) -> Self {
        let size = size.max(1) as usize;
        Window::Count { ring: VecDeque::with_capacity(size), size, counts: Counts::default() }
    }

    /// `buckets` buckets of `width` each (both at least one).
    pub fn time(buckets: u32, width: Time) -> Self {
        Window::Time {
            buckets: vec![Counts::default(); buckets.max(1) as usize],
            width: width.max(1),
            head: 0,
            counts: Counts::default(),
        }
    }

    /// Record an outcome observed at `now`.
    pub fn record(&mut self, now: Time, s: Sample) {
        self.advance(now);
        match self {
            Window::Count { ring, size, counts } => {
                if ring.len() == *size {
                    let old = ring.pop_front().expect("full ring");
                    counts.sub(Counts { total: 1, failed: u64::from(old.failed), slow: u64::from(old.slow) });
                }
                ring.push_back(s);
                counts.add(s);
            }
            Window::Time { buckets, head, counts, .. } => {
                let n = buckets.len() as u64;
                buckets[(*head % n) as usize].add(s);
                counts.add(s);
            }
        }
    }

    /// The totals over the window as seen at `now` (old buckets evicted first).
    pub fn counts(&mut self, now: Time) -> Counts {
        self.advance(now);
        match self {
            Window::Count { counts, .. } | Window::Time { counts, .. } => *counts,
        }
    }

    /// The totals over the buckets that ended at or before `now` (the current, partial
    /// bucket left out). For a COUNT window, the same as [`Window::counts`].
    pub fn completed(&mut self, now: Time) -> Counts {
        let mut c = self.counts(now);
        if let Window::Time { buckets, head, .. } = self {
            c.sub(buckets[(*head % buckets.len() as u64) as usize]);
        }
        c
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        match self {
            Window::Count { ring, counts, .. } => {
                ring.clear();
                *counts = Counts::default();
            }
            Window::Time { buckets, counts, .. } => {
                buckets.iter_mut().for_each(|b| *b = Counts::default());
                *counts = Counts::default();
            }
        }
    }

    /// Evict the buckets that slid out of a TIME window by `now`.
    fn advance(&mut self, now: Time) {
        let Window::Time { buckets, width, head, counts } = self else {
            return;
        };
        let idx = now / *width;
        if idx <= *head {
            return;
        }
        let n = buckets.len() as u64;
        // Only the buckets reused between head+1 and idx need clearing, at most n of them.
        let from = (*head + 1).max(idx.saturating_sub(n - 1));
        for k in from..=idx {
            let b = &mut buckets[(k % n) as usize];
            counts.sub(*b);
            *b = Counts::default();
        }
        *head = idx;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MILLISECOND, SECOND};

    const F: Sample = Sample { failed: true, slow: false };
    const OK: Sample = Sample { failed: false, slow: false };
    const SLOW: Sample = Sample { failed: false, slow: true };

    #[test]
    fn a_count_ring_keeps_the_last_n() {
        let mut w = Window::count(3);
        for s in [F, F, OK, SLOW] {
            w.record(0, s);
        }
        // The first F fell out: F, OK, SLOW remain.
        assert_eq!(w.counts(0), Counts { total: 3, failed: 1, slow: 1 });
    }

    #[test]
    fn time_buckets_evict_by_subtraction() {
        // Three 1 s buckets: an outcome at 0.5 s lives while the window covers bucket 0,
        // i.e. until t reaches 3 s (buckets 1, 2, 3).
        let mut w = Window::time(3, SECOND);
        w.record(500 * MILLISECOND, F);
        w.record(1_500 * MILLISECOND, OK);
        assert_eq!(w.counts(2_999 * MILLISECOND).total, 2);
        assert_eq!(w.counts(3 * SECOND), Counts { total: 1, failed: 0, slow: 0 });
        // A long gap clears everything.
        assert_eq!(w.counts(100 * SECOND).total, 0);
    }

    #[test]
    fn completed_leaves_out_the_current_bucket() {
        let mut w = Window::time(3, SECOND);
        w.record(500 * MILLISECOND, F);
        w.record(SECOND, F);
        assert_eq!(w.counts(SECOND).total, 2);
        assert_eq!(w.completed(SECOND).total, 1);
    }

    #[test]
    fn percentages() {
        let c = Counts { total: 4, failed: 1, slow: 2 };
        assert_eq!(c.failure_pct(), 25.0);
        assert_eq!(c.slow_pct(), 50.0);
        assert_eq!(Counts::default().failure_pct(), 0.0);
    }
}
