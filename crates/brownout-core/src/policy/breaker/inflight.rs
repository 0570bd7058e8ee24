//! Start times of admitted calls still in flight, ordered by start, for in-flight ageing:
//! a call running longer than a threshold can count as slow before it completes.
//!
//! Memory is O(in-flight): entries leave when the call completes, is cancelled or ages out.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::Time;

/// Admitted calls in flight: (start, id) in start order plus id -> start.
#[derive(Debug, Clone, Default)]
pub struct InFlight {
    by_start: BTreeSet<(Time, u64)>,
    start_of: BTreeMap<u64, Time>,
}

impl InFlight {
    /// Track call `id` admitted at `now`.
    pub fn admit(&mut self, id: u64, now: Time) {
        if let Some(old) = self.start_of.insert(id, now) {
            self.by_start.remove(&(old, id));
        }
        self.by_start.insert((now, id));
    }

    /// Stop tracking `id`; true if it was tracked (it had not aged out).
    pub fn remove(&mut self, id: u64) -> bool {
        match self.start_of.remove(&id) {
            Some(start) => self.by_start.remove(&(start, id)),
            None => false,
        }
    }

    /// Remove the calls whose age at `now` exceeds `threshold` (`now - start > threshold`),
    /// returning their start times, oldest first.
    pub fn age_out(&mut self, now: Time, threshold: Time) -> Vec<Time> {
        let mut aged = Vec::new();
        while let Some(&(start, id)) = self.by_start.first() {
            if now.saturating_sub(start) <= threshold {
                break;
            }
            self.by_start.pop_first();
            self.start_of.remove(&id);
            aged.push(start);
        }
        aged
    }

    /// The first time a tracked call will exceed `threshold`: oldest start + threshold + 1 ns
    /// (slow is strictly longer than the threshold).
    pub fn next_due(&self, threshold: Time) -> Option<Time> {
        self.by_start.first().map(|&(start, _)| start.saturating_add(threshold).saturating_add(1))
    }

    /// The ages at `now` of the calls in flight.
    pub fn ages(&self, now: Time) -> impl Iterator<Item = Time> + '_ {
        self.by_start.iter().map(move |&(start, _)| now.saturating_sub(start))
    }

    /// The start time of `id`, if tracked.
    pub fn start(&self, id: u64) -> Option<Time> {
        self.start_of.get(&id).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_out_strictly_after_the_threshold_oldest_first() {
        let mut f = InFlight::default();
        f.admit(7, 10);
        f.admit(3, 20);
        assert_eq!(f.next_due(100), Some(111));
        assert!(f.age_out(110, 100).is_empty(), "age 100 is not > 100");
        assert_eq!(f.age_out(121, 100), vec![10, 20]);
        assert!(f.start_of.is_empty() && f.by_start.is_empty());
        assert!(!f.remove(7), "an aged call is no longer tracked");
    }

    #[test]
    fn remove_reports_whether_tracked() {
        let mut f = InFlight::default();
        f.admit(1, 5);
        assert_eq!(f.start(1), Some(5));
        assert_eq!(f.ages(8).collect::<Vec<_>>(), vec![3]);
        assert!(f.remove(1));
        assert!(!f.remove(1));
        assert!(f.start_of.is_empty() && f.by_start.is_empty());
    }
}
