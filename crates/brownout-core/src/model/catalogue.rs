//! Items with Zipf popularity, stock that changes as a Poisson process per item, and the
//! last-known-value cache that answers fallbacks.
//!
//! Stock change times are counter-based draws on (item, change number), so every policy run
//! sees the same true stock history.

use rand_distr::Distribution;
use rand_distr::weighted::WeightedAliasIndex;

use crate::engine::{Counter, SECOND, Time, label_hash};
use crate::scenario::Catalogue;

const CHANGES: u64 = label_hash("catalogue/changes");

/// Item popularity, shared by runs.
#[derive(Debug, Clone)]
pub(crate) struct Popularity {
    /// Walker's alias table over the Zipf weights `k^-s` (rand_distr's `WeightedAliasIndex`),
    /// built once per scenario: a draw is two uniforms and a lookup (BENCHMARKS.md).
    alias: Option<WeightedAliasIndex<f64>>,
    items: u32,
}

impl Popularity {
    /// Build from the catalogue.
    pub(crate) fn new(c: &Catalogue) -> Self {
        let alias = (c.zipf > 0.0).then(|| {
            let weights = (1..=c.items).map(|k| (k as f64).powf(-c.zipf)).collect();
            WeightedAliasIndex::new(weights).expect("validated zipf: positive finite weights")
        });
        Self { alias, items: c.items }
    }

    /// Draw an item index in `0..items`.
    pub(crate) fn draw<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        match &self.alias {
            Some(a) => a.sample(rng) as u32,
            None => (rand::RngExt::random::<f64>(rng) * self.items as f64) as u32 % self.items,
        }
    }
}

/// A cache slot that holds nothing.
const EMPTY: Time = Time::MAX;

/// The true stock history and the caches, for one run.
///
/// Times are compared as stamps, `time + 1`, with 0 for "before time began" (a prewarmed
/// value): a cached value is wrong exactly when the item's last change has a later stamp
/// than the value. That equals comparing version numbers (a value fetched at `t` includes
/// the changes at or before `t`; a prewarmed one none), in a third of the memory per cache
/// slot, which keeps the fallback's cache lookups in cache (BENCHMARKS.md).
#[derive(Debug, Clone)]
pub(crate) struct Stock {
    changes: Counter,
    mean_gap_ns: f64,
    items: Vec<Item>,
    /// Stamp of each cached value, or `EMPTY`: item-major, `ncaches` slots per item, so a
    /// fallback reads one line for the item's slot and one for its history (the catalogue
    /// does not fit in the cache; its tail is a miss either way).
    caches: Vec<Time>,
    ncaches: usize,
    ttl: Option<Time>,
}

/// One item's true stock history so far.
#[derive(Debug, Clone, Copy)]
struct Item {
    next_change: Time,
    /// Stamp of the last change so far (0: none).
    changed: Time,
    version: u32,
}

/// The answer the cache gives a fallback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Served {
    /// Age of the value.
    pub(crate) staleness: Time,
    /// The item changed since the value was cached.
    pub(crate) wrong: bool,
}

impl Stock {
    /// One cache per instance, or a single shared one.
    pub(crate) fn new(c: &Catalogue, instances: u32, seed: u64) -> Self {
        let n = c.items as usize;
        let mean_gap_ns =
            if c.changes_per_hour > 0.0 { 3600.0 * SECOND as f64 / c.changes_per_hour } else { f64::INFINITY };
        let caches = if c.shared_cache { 1 } else { instances as usize };
        let init = if c.prewarm { 0 } else { EMPTY };
        let mut s = Self {
            changes: Counter::new(seed, CHANGES),
            mean_gap_ns,
            items: vec![Item { next_change: 0, changed: 0, version: 0 }; n],
            caches: vec![init; n * caches],
            ncaches: caches,
            ttl: c.ttl.map(|d| d.ns()),
        };
        for i in 0..n {
            s.items[i].next_change = s.gap(i as u32, 0);
        }
        s
    }

    fn gap(&self, item: u32, change: u32) -> Time {
        if !self.mean_gap_ns.is_finite() {
            return Time::MAX;
        }
        let u = self.changes.f64(item as u64, change as u64);
        (-u.ln() * self.mean_gap_ns).min(1.0e18) as Time
    }

    /// The true stock version of `item` at `now` (`now` never decreases within a run).
    pub(crate) fn version(&mut self, item: u32, now: Time) -> u32 {
        let mut it = self.items[item as usize];
        while it.next_change <= now {
            it.version += 1;
            it.changed = it.next_change + 1;
            let g = self.gap(item, it.version);
            it.next_change = it.next_change.saturating_add(g.max(1));
        }
        self.items[item as usize] = it;
        it.version
    }

    fn slot(&self, instance: u32, item: u32) -> usize {
        let c = if self.ncaches == 1 { 0 } else { instance as usize };
        item as usize * self.ncaches + c
    }

    /// A successful response refreshes the cache. The item's history is not brought up to
    /// `now` here: `serve` does that before it compares, and the history at any time is the
    /// same whenever it is brought up to it (draws keyed by item and change number), so a
    /// refresh touches only its cache slot, not the item too.
    pub(crate) fn refresh(&mut self, instance: u32, item: u32, now: Time) {
        let slot = self.slot(instance, item);
        self.caches[slot] = now + 1;
    }

    /// Serve a fallback from the cache, if it holds a value young enough.
    pub(crate) fn serve(&mut self, instance: u32, item: u32, now: Time) -> Option<Served> {
        let stamp = self.caches[self.slot(instance, item)];
        if stamp == EMPTY {
            return None;
        }
        let staleness = now - stamp.saturating_sub(1);
        if self.ttl.is_some_and(|ttl| staleness > ttl) {
            return None;
        }
        self.version(item, now);
        let wrong = self.items[item as usize].changed > stamp;
        Some(Served { staleness, wrong })
    }

    /// Forget an instance's cache (a restart without persistence).
    pub(crate) fn clear(&mut self, instance: u32) {
        let c = self.slot(instance, 0);
        self.caches.iter_mut().skip(c).step_by(self.ncaches).for_each(|e| *e = EMPTY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Dur;

    fn cat(changes_per_hour: f64) -> Catalogue {
        Catalogue {
            items: 10,
            zipf: 1.0,
            changes_per_hour,
            ttl: Some(Dur::secs(60)),
            shared_cache: false,
            prewarm: true,
        }
    }

    #[test]
    fn popularity_follows_zipf_by_hand() {
        // Zipf(10 items, s = 1): P(item k) = (1/k) / H_10 with H_10 = 7381/2520 = 2.928968.
        // Each observed share must lie within 5 standard errors sqrt(p(1-p)/n) of it.
        let p = Popularity::new(&cat(0.0));
        let mut rng = crate::engine::stream(3, "test/popularity");
        let n = 200_000;
        let mut counts = [0u32; 10];
        for _ in 0..n {
            counts[p.draw(&mut rng) as usize] += 1;
        }
        let h10 = 7381.0 / 2520.0;
        for (k, &c) in counts.iter().enumerate() {
            let want = 1.0 / ((k + 1) as f64 * h10);
            let se = (want * (1.0 - want) / n as f64).sqrt();
            let got = c as f64 / n as f64;
            assert!((got - want).abs() < 5.0 * se, "item {k}: {got} vs {want}");
        }
        // s = 0 is uniform over the items.
        let u = Popularity::new(&Catalogue { zipf: 0.0, ..cat(0.0) });
        let mut counts = [0u32; 10];
        for _ in 0..n {
            counts[u.draw(&mut rng) as usize] += 1;
        }
        let se = (0.1 * 0.9 / n as f64).sqrt();
        assert!(counts.iter().all(|&c| (c as f64 / n as f64 - 0.1).abs() < 5.0 * se), "{counts:?}");
    }

    #[test]
    fn no_changes_means_never_wrong_and_ttl_applies() {
        let mut s = Stock::new(&cat(0.0), 2, 1);
        let served = s.serve(0, 3, 30 * SECOND).unwrap();
        assert_eq!(served, Served { staleness: 30 * SECOND, wrong: false });
        assert_eq!(s.serve(0, 3, 61 * SECOND), None, "older than the TTL");
        s.refresh(1, 3, 61 * SECOND);
        assert_eq!(s.serve(1, 3, 62 * SECOND).unwrap().staleness, SECOND);
        assert_eq!(s.serve(0, 3, 62 * SECOND), None, "caches are per instance");
    }

    #[test]
    fn wrong_means_changed_after_the_value_was_fetched() {
        // One item whose only change is at t = 100 ns (no random changes). By the version
        // rule: a value fetched at 100 already shows the change (version 1), one fetched at
        // 99 does not (version 0), and a prewarmed one (version 0) is wrong from 100 on.
        let mut s = Stock::new(&cat(0.0), 3, 1);
        s.items[0].next_change = 100;
        s.refresh(1, 0, 99);
        assert_eq!(s.serve(0, 0, 99), Some(Served { staleness: 99, wrong: false }), "prewarmed, before");
        s.refresh(2, 0, 100);
        assert_eq!(s.serve(0, 0, 100), Some(Served { staleness: 100, wrong: true }), "prewarmed, at");
        assert_eq!(s.serve(1, 0, 150), Some(Served { staleness: 51, wrong: true }));
        assert_eq!(s.serve(2, 0, 150), Some(Served { staleness: 50, wrong: false }));
        assert_eq!(s.version(0, 150), 1);
        s.clear(2);
        assert_eq!(s.serve(2, 0, 150), None, "cleared");
    }

    #[test]
    fn a_change_at_time_zero_makes_prewarmed_values_wrong() {
        // Version 0 was cached before time began; the change at 0 makes version 1. A value
        // fetched at 0 shows version 1.
        let mut s = Stock::new(&cat(0.0), 2, 1);
        s.items[0].next_change = 0;
        s.refresh(1, 0, 0);
        assert!(s.serve(0, 0, 5).unwrap().wrong);
        assert!(!s.serve(1, 0, 5).unwrap().wrong);
    }

    #[test]
    fn change_count_matches_the_poisson_rate() {
        // 3600 changes per hour = 1 per second; over 10,000 s an item sees ~10,000 changes
        // (Poisson, standard deviation 100).
        let mut s = Stock::new(&cat(3600.0), 1, 7);
        let v = s.version(0, 10_000 * SECOND) as f64;
        assert!((v - 10_000.0).abs() < 500.0, "{v}");
    }
}
