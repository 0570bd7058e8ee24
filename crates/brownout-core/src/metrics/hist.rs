//! Histograms: microsecond values for quantiles ([`UsHist`]) and latencies with their exact
//! mean and range ([`Lat`]), both as a mergeable HDR histogram gives them.

use hdrhistogram::Histogram;

use super::summary::LatencyMs;
use crate::engine::{MICROSECOND, MILLISECOND, Time};
use flat::{Flat, Width};

/// Values a `UsHist` keeps as a plain list before it spills into its HDR histogram: 64 KiB,
/// against the 24-30 KiB (2-byte counts) or 48-60 KiB (4-byte) a spilled histogram of
/// latencies up to seconds holds, and more than a 10 s window holds at 1,000/s: a window,
/// reset every few seconds, stays a list (a push per value, a short clear per reset) where a
/// shorter list would send busy windows into histogram records and array resets.
const EXACT: usize = 16384;

/// The list length of the whole run's (and each phase's) latency accumulators, [`RunLat`]:
/// they only grow, so a list saves nothing past the size of the histogram it spills into
/// (24-30 KiB of 2-byte counts for latencies up to seconds: 4,096 values take 16 KiB), and
/// recording into the histogram costs them only a few instructions more per value. Windows
/// and policy windows, reset every window, keep `EXACT`.
const RUN_EXACT: usize = 4096;

/// A latency accumulator of the whole run or a phase (see [`RUN_EXACT`]).
pub(super) type RunLat = Lat<RUN_EXACT>;

/// Microsecond values as an HDR histogram (1 us to one day, 3 significant digits) holds them.
///
/// Up to `EXACT` values are kept as a list and the histogram is only filled past that: a value
/// then costs a push instead of a cache miss in a histogram's array, and a reset (a window's
/// end) clears a short list instead of the whole array. Quantiles of the list are the
/// histogram's own (`value_at_quantile` picks the bucket holding the k-th smallest value), so
/// which form holds the values never changes a figure. Policies that judge a window by a
/// percentile use it directly; [`Lat`] adds the exact mean and range.
#[derive(Debug, Clone, Default)]
pub struct UsHist<const E: usize = EXACT> {
    /// The listed values: 4 bytes each, so values past `u32::MAX` us (71 minutes) spill.
    few: Vec<u32>,
    /// The values' histogram, once the list overflowed (since the last reset): one test of
    /// its tag per value finds both the form and the width the values are kept in.
    hist: Option<Counts>,
    /// A spilled histogram cleared by a reset, kept for the next overflow.
    spare: Option<Counts>,
}

#[cfg(test)]
impl UsHist {
    /// Empty, listing up to `EXACT` values (the crate builds them by `Default`).
    fn new() -> Self {
        Self::default()
    }
}

impl<const E: usize> UsHist<E> {
    /// Record one value in microseconds (past one day it counts as one day, as the histogram
    /// clamps it). Always inlined: a call per value costs more than the list push it makes.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        match &mut self.hist {
            Some(h) => h.put(v),
            // A value past the list's width spills, and the histogram clamps it past a day.
            None if self.few.len() < E && v <= u32::MAX as u64 => self.few.push(v as u32),
            None => self.spill_and_record(v),
        }
    }
    #[cold]
    fn spill_and_record(&mut self, v: u64) {
        self.spill();
        self.hist.as_mut().expect("spilled").put(v);
    }
    /// Move the listed values into the histogram, which takes every value from now on.
    fn spill(&mut self) {
        let spare = &mut self.spare;
        let h = self.hist.get_or_insert_with(|| spare.take().unwrap_or_else(Counts::new));
        for &v in &self.few {
            h.put(v as u64);
        }
        // Free the buffer, not just the values: a whole-run histogram would otherwise carry
        // up to 64 KiB of dead list beside its own array for the rest of the run (a window's
        // histogram regrows its list after a reset, a few doublings per window).
        self.few = Vec::new();
    }
    /// Number of values.
    pub fn len(&self) -> u64 {
        match &self.hist {
            Some(h) => h.len(),
            None => self.few.len() as u64,
        }
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Quantile `q` as `Histogram::value_at_quantile` gives it (0 when empty). The listed
    /// values are reordered in place.
    pub fn value_at_quantile(&mut self, q: f64) -> u64 {
        match &self.hist {
            Some(h) => h.value_at_quantile(q),
            None => list_quantile(&mut self.few, q),
        }
    }
    /// Add every value of `other`, as if each had been recorded here.
    fn absorb(&mut self, other: &UsHist<E>) {
        match &other.hist {
            Some(h) => {
                if self.hist.is_none() {
                    self.spill();
                }
                self.hist.as_mut().expect("spilled").add(h);
            }
            None => other.few.iter().for_each(|&v| self.record(v as u64)),
        }
    }
    /// Forget every value (a spilled histogram is kept, cleared, for the next overflow).
    pub fn reset(&mut self) {
        if let Some(mut h) = self.hist.take() {
            h.reset();
            self.spare = Some(h);
        }
        self.few.clear();
    }
}

/// A spilled histogram's counts, in the narrowest width that holds them: 2 bytes each while
/// fewer than 65,535 values are in it, 4 while fewer than `u32::MAX`, 8 from then on (no count
/// can exceed the number of values, so none ever saturates). Every width holds the same
/// buckets, so the width never changes a figure; a narrow one takes a quarter or half the
/// memory and cache lines of a run's dozens of spilled histograms.
#[derive(Debug, Clone)]
enum Counts {
    N16(Flat<u16>),
    N32(Flat<u32>),
    N64(Flat<u64>),
}

impl Counts {
    fn new() -> Self {
        Counts::N16(Flat::new())
    }
    /// Record `v` as the full one-day histogram would.
    #[inline(always)]
    fn put(&mut self, v: u64) {
        match self {
            // Fewer than HOLDS values before this one: no count can pass the maximum.
            Counts::N16(h) if h.len() < u16::HOLDS => h.put(v),
            Counts::N32(h) if h.len() < u32::HOLDS => h.put(v),
            Counts::N64(h) => h.put(v),
            _ => self.put_widened(v),
        }
    }
    /// Widen, then record (cold: at 65,535 and at 4 billion values).
    #[cold]
    fn put_widened(&mut self, v: u64) {
        self.widen_to_hold(self.len() + 1);
        self.put(v);
    }
    /// The values a histogram of this width holds.
    fn holds(&self) -> u64 {
        match self {
            Counts::N16(_) => u16::HOLDS,
            Counts::N32(_) => u32::HOLDS,
            Counts::N64(_) => u64::HOLDS,
        }
    }
    /// Widen until `total` values fit, copying the counts.
    fn widen_to_hold(&mut self, total: u64) {
        while total > self.holds() {
            let wider = match &*self {
                Counts::N16(h) => Counts::N32(h.widened()),
                Counts::N32(h) => Counts::N64(h.widened()),
                Counts::N64(_) => unreachable!("a u64 count holds every value"),
            };
            *self = wider;
        }
    }
    fn len(&self) -> u64 {
        match self {
            Counts::N16(h) => h.len(),
            Counts::N32(h) => h.len(),
            Counts::N64(h) => h.len(),
        }
    }
    fn value_at_quantile(&self, q: f64) -> u64 {
        match self {
            Counts::N16(h) => h.value_at_quantile(q),
            Counts::N32(h) => h.value_at_quantile(q),
            Counts::N64(h) => h.value_at_quantile(q),
        }
    }
    fn reset(&mut self) {
        match self {
            Counts::N16(h) => h.reset(),
            Counts::N32(h) => h.reset(),
            Counts::N64(h) => h.reset(),
        }
    }
    /// Add every count of `other`, widened first so that the union fits.
    fn add(&mut self, other: &Counts) {
        self.widen_to_hold(self.len() + other.len());
        match other {
            Counts::N16(o) => self.add_from(o),
            Counts::N32(o) => self.add_from(o),
            Counts::N64(o) => self.add_from(o),
        }
    }
    fn add_from<T: Width>(&mut self, o: &Flat<T>) {
        match self {
            Counts::N16(h) => h.add(o),
            Counts::N32(h) => h.add(o),
            Counts::N64(h) => h.add(o),
        }
    }
    /// Bytes of counts held (for the memory tests).
    #[cfg(test)]
    fn count_bytes(&self) -> usize {
        match self {
            Counts::N16(h) => h.distinct_values() * 2,
            Counts::N32(h) => h.distinct_values() * 4,
            Counts::N64(h) => h.distinct_values() * 8,
        }
    }
}

/// Quantile `q` of listed microsecond values as the histogram would give it: the same rank
/// rule as hdrhistogram 7.5 (the ceil(q n)-th smallest, at least the first), reported as the
/// top of its bucket (the bottom for q = 0); 0 when empty.
fn list_quantile(v: &mut [u32], q: f64) -> u64 {
    if v.is_empty() {
        return 0; // as the histogram answers when empty
    }
    let (_, &mut x, _) = v.select_nth_unstable(rank(q, v.len()));
    bucket_value(q, x as u64)
}

/// The 0-based rank of quantile `q` among `n` values: the ceil(q n)-th smallest, at least the
/// first (hdrhistogram 7.5's rule; q above 1 counts as 1).
fn rank(q: f64, n: usize) -> usize {
    ((q.min(1.0) * n as f64).ceil() as u64).max(1) as usize - 1
}

/// How the histogram reports the value `x` found at quantile `q`: the top of its bucket, the
/// bottom for q = 0.
fn bucket_value(q: f64, x: u64) -> u64 {
    if q == 0.0 { shape().lowest_equivalent(x) } else { shape().highest_equivalent(x) }
}

/// Latencies: a [`UsHist`] (microseconds) plus the exact mean, minimum and maximum, so that
/// reported percentiles never lie outside the observed range.
#[derive(Debug, Clone)]
pub struct Lat<const E: usize = EXACT> {
    vals: UsHist<E>,
    /// An integer sum: exact, so merged latencies have the same mean in any order.
    sum_ns: u128,
    min_ns: Time,
    max_ns: Time,
}

impl Lat {
    /// Empty, listing up to `EXACT` values (a window's).
    pub fn new() -> Self {
        Self::empty()
    }
}

impl<const E: usize> Lat<E> {
    /// Empty, listing up to `E` values.
    pub fn empty() -> Self {
        Self { vals: UsHist::default(), sum_ns: 0, min_ns: Time::MAX, max_ns: 0 }
    }
    /// Record one value in nanoseconds (always inlined, as [`UsHist::record`]).
    #[inline(always)]
    pub fn record(&mut self, ns: Time) {
        self.vals.record(us(ns));
        self.sum_ns += ns as u128;
        // A test each rather than `min`/`max`: the range seldom changes, and a store only
        // when it does saves the two unconditional ones.
        if ns < self.min_ns {
            self.min_ns = ns;
        }
        if ns > self.max_ns {
            self.max_ns = ns;
        }
    }
    /// Add the values of `other`, as if each had been recorded here: a latency that is the
    /// union of others kept anyway costs nothing per request.
    pub fn absorb(&mut self, other: &Lat<E>) {
        self.vals.absorb(&other.vals);
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }
    /// Number of values.
    pub fn len(&self) -> u64 {
        self.vals.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Quantile in microseconds, as `Histogram::value_at_quantile` gives it.
    fn q_us(&self, q: f64) -> u64 {
        match &self.vals.hist {
            Some(h) => h.value_at_quantile(q),
            None => list_quantile(&mut self.vals.few.clone(), q),
        }
    }
    /// Quantile in milliseconds (0 when empty), clamped to the exact observed range.
    pub fn q_ms(&self, q: f64) -> f64 {
        if self.is_empty() {
            return f64::NAN;
        }
        self.clamp_ms(self.q_us(q))
    }
    fn clamp_ms(&self, us: u64) -> f64 {
        let v_ns = us as f64 * MICROSECOND as f64;
        v_ns.clamp(self.min_ns as f64, self.max_ns as f64) / MILLISECOND as f64
    }
    /// Several quantiles at once, each exactly as [`Lat::q_ms`] gives it, for `qs` in
    /// ascending order. The listed values are reordered in place: one selection per quantile
    /// in what is left above the previous one, instead of a copy of the list per quantile
    /// (the window ticks ask for two or three quantiles of up to 16,384 values).
    pub fn quantiles_ms<const N: usize>(&mut self, qs: [f64; N]) -> [f64; N] {
        let mut out = [f64::NAN; N];
        if self.is_empty() {
            return out;
        }
        if self.vals.hist.is_some() {
            for (o, &q) in out.iter_mut().zip(&qs) {
                *o = self.q_ms(q);
            }
            return out;
        }
        let n = self.vals.few.len();
        // Many values in a narrow range (a busy window): counting them into HDR buckets and
        // walking the counts once (about 20 instructions a value and 7 a count walked, ci
        // build) costs less than the selections (about 35 a value for one quantile, 65 for
        // two, measured on M/M/c's windows), and gives the same figures: a quantile is
        // reported as its bucket's top (or bottom), which the bucket's counts determine. A
        // wide range with few values keeps the selections: counting takes over from 0.4 values
        // per count for one quantile (about where the two cost the same) and 0.2 for two.
        let top = us(self.max_ns);
        if 5 * N * n >= 2 * Flat::<u32>::walk_to(top) {
            return Flat::<u32>::of_list(&self.vals.few, top).quantiles(qs).map(|u| self.clamp_ms(u));
        }
        let mut from = 0;
        for (i, &q) in qs.iter().enumerate() {
            debug_assert!(i == 0 || q >= qs[i - 1], "quantiles in ascending order");
            let k = rank(q, n).max(from);
            let (_, &mut x, _) = self.vals.few[from..].select_nth_unstable(k - from);
            from = k;
            out[i] = self.clamp_ms(bucket_value(q, x as u64));
        }
        out
    }
    /// Exact maximum in milliseconds.
    pub fn max_ms(&self) -> f64 {
        if self.is_empty() { 0.0 } else { self.max_ns as f64 / MILLISECOND as f64 }
    }
    /// Exact mean in milliseconds.
    pub fn mean_ms(&self) -> f64 {
        if self.is_empty() { 0.0 } else { self.sum_ns as f64 / self.len() as f64 / MILLISECOND as f64 }
    }
    /// Forget everything (a spilled histogram is kept, cleared, for the next overflow).
    pub fn reset(&mut self) {
        self.vals.reset();
        self.sum_ns = 0;
        self.min_ns = Time::MAX;
        self.max_ns = 0;
    }
    /// Latency statistics; every figure NaN ("no value") when nothing was recorded.
    pub fn stats(&mut self) -> LatencyMs {
        if self.is_empty() {
            return LatencyMs::NONE;
        }
        let [p50, p95, p99] = self.quantiles_ms([0.5, 0.95, 0.99]);
        LatencyMs { mean: self.mean_ms(), p50, p95, p99, max: self.max_ms() }
    }
}

impl<const E: usize> Default for Lat<E> {
    fn default() -> Self {
        Self::empty()
    }
}

/// The histograms' highest trackable value: one day in microseconds. Larger values count as
/// one day.
const HIGH_US: u64 = 86_400_000_000;

/// The full one-day histogram, empty: its bucket boundaries (immutable, built once).
fn shape() -> &'static Histogram<u64> {
    static SHAPE: std::sync::OnceLock<Histogram<u64>> = std::sync::OnceLock::new();
    SHAPE.get_or_init(|| Histogram::new_with_bounds(1, HIGH_US, 3).expect("valid histogram bounds"))
}

fn us(t: Time) -> u64 {
    (t / MICROSECOND).max(1)
}

mod flat;

#[cfg(test)]
mod tests;
