//! A spilled histogram's counts, laid out as hdrhistogram 7.5.4 lays out the counts of
//! `Histogram::new_with_bounds(1, HIGH_US, 3)`, kept by hand.
//!
//! Why not the crate's `Histogram`: its `record` finds the index through an `Option`, checks
//! for a resize, saturates the count, tracks the minimum and maximum and saturates the total,
//! about 90 instructions a value, four values per request (the class latency and the
//! dependency's service, wait and time); none of that is needed here, where no count can
//! overflow (`Counts` widens first), the exact range is kept beside (`Lat`) and the array grows
//! only on a new largest value. The index is a shift and an add. Bucket for bucket the layout,
//! the array's growth and the quantile rule are the crate's, so every figure is the same (the
//! tests in `hist/tests.rs` compare against the crate's histogram fed the same values).

use super::{HIGH_US, bucket_value};

/// log2 of half the sub-buckets of a bucket: 3 significant digits need 2 x 10^3 values at unit
/// resolution, so 2,048 sub-buckets (hdrhistogram's `sub_bucket_half_count_magnitude`, 10).
const HALF_MAG: u32 = 10;

/// The counts an empty histogram holds: the first bucket's 2,048 (hdrhistogram's array for
/// bounds 1..2, which the spilled histograms started from).
const MIN_LEN: usize = 2 << HALF_MAG;

/// The index of `v`'s count, as hdrhistogram 7.5.4's `Histogram::index_for` computes it for
/// unit magnitude 0, sub-bucket mask 2,047 and leading-zero base 53 (64 - 0 - 10 - 1): bucket
/// `b = 53 - lz(v | 2047)`, sub-bucket `v >> b`, index `((b + 1) << 10) + (v >> b) - 1024`,
/// which is `(b << 10) + (v >> b)`.
#[inline(always)]
fn index_of(v: u64) -> usize {
    let b = 53 - (v | 2047).leading_zeros();
    ((u64::from(b) << HALF_MAG) + (v >> b)) as usize
}

/// The lowest value counted at `index` (hdrhistogram 7.5.4's `Histogram::value_for`).
fn value_of(index: usize) -> u64 {
    let bucket = (index >> HALF_MAG) as i64 - 1;
    let sub = (index as u64 & ((1 << HALF_MAG) - 1)) + (1 << HALF_MAG);
    if bucket < 0 { sub - (1 << HALF_MAG) } else { sub << bucket }
}

/// A count width: how many values a histogram of it holds without a count overflowing.
pub(super) trait Width: Copy + Default + Into<u64> + std::ops::Add<Output = Self> {
    /// Values it holds: at most this many in all, so no count passes its maximum.
    const HOLDS: u64;
    /// One value.
    const ONE: Self;
    /// `c` as a count of this width (`c` fits: see `HOLDS`).
    fn of(c: u64) -> Self;
}

impl Width for u16 {
    const HOLDS: u64 = u16::MAX as u64;
    const ONE: Self = 1;
    fn of(c: u64) -> Self {
        c as u16
    }
}

impl Width for u32 {
    const HOLDS: u64 = u32::MAX as u64;
    const ONE: Self = 1;
    fn of(c: u64) -> Self {
        c as u32
    }
}

impl Width for u64 {
    const HOLDS: u64 = u64::MAX;
    const ONE: Self = 1;
    fn of(c: u64) -> Self {
        c
    }
}

/// Counts of width `T` per HDR bucket, up to the largest value recorded, and their total.
#[derive(Debug, Clone)]
pub(super) struct Flat<T> {
    counts: Vec<T>,
    total: u64,
}

impl<T: Width> Flat<T> {
    /// No values, the first bucket's counts allocated.
    pub(super) fn new() -> Self {
        Self { counts: vec![T::default(); MIN_LEN], total: 0 }
    }

    /// Record `v` as the full one-day histogram would (past a day it counts as a day). The
    /// caller keeps the total below `T::HOLDS`, so the count cannot overflow.
    #[inline(always)]
    pub(super) fn put(&mut self, v: u64) {
        let i = index_of(v.min(HIGH_US));
        // One bounds test: the count is there, or the array grows to it (cold).
        match self.counts.get_mut(i) {
            Some(c) => *c = *c + T::ONE,
            None => self.grow_and_count(i),
        }
        self.total += 1;
    }

    /// Grow to hold `index`, then count one value there.
    #[cold]
    fn grow_and_count(&mut self, index: usize) {
        self.grow(index);
        self.counts[index] = self.counts[index] + T::ONE;
    }

    /// Hold counts up to `index`, in whole half-buckets as hdrhistogram's `resize` grows (its
    /// `counts_array_length`: (buckets needed + 1) x 1,024).
    #[cold]
    fn grow(&mut self, index: usize) {
        self.counts.resize(((index >> HALF_MAG) + 1) << HALF_MAG, T::default());
    }

    /// Number of values.
    #[inline]
    pub(super) fn len(&self) -> u64 {
        self.total
    }

    /// Counts held (the array's length, as hdrhistogram's `distinct_values`).
    #[cfg(test)]
    pub(super) fn distinct_values(&self) -> usize {
        self.counts.len()
    }

    /// Quantile `q` by hdrhistogram 7.5.4's `Histogram::value_at_quantile`: the first index at
    /// which the running count reaches ceil(q n) (at least 1; q above 1 counts as 1), reported
    /// as its bucket's top (its bottom for q = 0); 0 when empty.
    pub(super) fn value_at_quantile(&self, q: f64) -> u64 {
        let q = if q > 1.0 { 1.0 } else { q };
        let at = ((q * self.total as f64).ceil() as u64).max(1);
        let mut run = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            run += c.into();
            if run >= at {
                return bucket_value(q, value_of(i));
            }
        }
        0
    }

    /// Quantiles `qs` (ascending) at once, each exactly as [`Flat::value_at_quantile`] gives
    /// it: one walk over the counts, each quantile's running count taken up from where the
    /// previous one stopped.
    pub(super) fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [u64; N] {
        let mut out = [0; N];
        let (mut next, mut run) = (0usize, 0u64);
        for (o, &q) in out.iter_mut().zip(&qs) {
            let q = if q > 1.0 { 1.0 } else { q };
            let at = ((q * self.total as f64).ceil() as u64).max(1);
            while run < at && next < self.counts.len() {
                run += self.counts[next].into();
                next += 1;
            }
            if run >= at {
                *o = bucket_value(q, value_of(next - 1));
            }
        }
        out
    }

    /// Empty, with counts allocated up to `v`'s.
    pub(super) fn up_to(v: u64) -> Self {
        let mut f = Self::new();
        let i = index_of(v.min(HIGH_US));
        if i >= f.counts.len() {
            f.grow(i);
        }
        f
    }

    /// The counts of listed values, none above `top`: the array is sized once for `top`, and
    /// no value needs the clamp at a day (a list holds values up to `u32::MAX` us, 71
    /// minutes) nor a count of its own to the total.
    pub(super) fn of_list(few: &[u32], top: u64) -> Self {
        let mut f = Self::up_to(top);
        for &v in few {
            let i = index_of(u64::from(v));
            f.counts[i] = f.counts[i] + T::ONE;
        }
        f.total = few.len() as u64;
        f
    }

    /// The number of counts a walk up to `v`'s passes.
    pub(super) fn walk_to(v: u64) -> usize {
        index_of(v.min(HIGH_US)) + 1
    }

    /// Forget every value, keeping the array.
    pub(super) fn reset(&mut self) {
        self.counts.fill(T::default());
        self.total = 0;
    }

    /// Add every count of `o` (the caller made this width hold the sum).
    pub(super) fn add<U: Width>(&mut self, o: &Flat<U>) {
        if o.counts.len() > self.counts.len() {
            self.counts.resize(o.counts.len(), T::default());
        }
        for (c, &x) in self.counts.iter_mut().zip(&o.counts) {
            *c = *c + T::of(x.into());
        }
        self.total += o.total;
    }

    /// The same counts in a wider width.
    pub(super) fn widened<U: Width>(&self) -> Flat<U> {
        Flat { counts: self.counts.iter().map(|&c| U::of(c.into())).collect(), total: self.total }
    }

    /// Record `n` values of `v` at once (tests that need billions of values).
    #[cfg(test)]
    pub(super) fn record_n(&mut self, v: u64, n: T) -> Result<(), std::convert::Infallible> {
        let i = index_of(v.min(HIGH_US));
        if i >= self.counts.len() {
            self.grow(i);
        }
        self.counts[i] = self.counts[i] + n;
        self.total += n.into();
        Ok(())
    }

    /// The count of `v`'s bucket.
    #[cfg(test)]
    pub(super) fn count_at(&self, v: u64) -> T {
        self.counts.get(index_of(v.min(HIGH_US))).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;

    #[test]
    fn index_and_value_are_the_crates() {
        // The oracle is hdrhistogram's own one-day histogram: a value lands at the index whose
        // lowest value is the crate's lowest equivalent, and indexes are dense in value order.
        let h = Histogram::<u64>::new_with_bounds(1, HIGH_US, 3).expect("valid bounds");
        // The crate's array ends with the half-bucket that holds its highest value.
        assert_eq!(((index_of(HIGH_US) >> HALF_MAG) + 1) << HALF_MAG, h.distinct_values());
        let mut probe = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 1 << 20, HIGH_US - 1, HIGH_US];
        probe.extend((0..37).flat_map(|k| [(1u64 << k) - 1, 1 << k, (1 << k) + 1, 3 << k]));
        for v in probe.into_iter().filter(|&v| v <= HIGH_US) {
            assert_eq!(value_of(index_of(v)), h.lowest_equivalent(v), "v {v}");
            let mut one = Histogram::<u64>::new_with_bounds(1, HIGH_US, 3).expect("valid bounds");
            one.record(v).expect("in range");
            let at = one.iter_recorded().next().expect("one value").value_iterated_to();
            assert_eq!(at, h.highest_equivalent(v), "v {v}");
            assert_eq!(index_of(at), index_of(v), "v {v}: its bucket's top lands in its bucket");
        }
    }

    #[test]
    fn grows_as_the_crates_auto_resizing_histogram() {
        // hdrhistogram grows an auto-resizing histogram to (buckets needed + 1) x 1,024 counts.
        let mut h = Histogram::<u16>::new_with_bounds(1, 2, 3).expect("valid bounds");
        h.auto(true);
        let mut f = Flat::<u16>::new();
        assert_eq!(f.distinct_values(), h.distinct_values());
        for v in [5, 2047, 2048, 9_999, 70_000, 1 << 30, HIGH_US] {
            h.record(v).expect("grows");
            f.put(v);
            assert_eq!(f.distinct_values(), h.distinct_values(), "v {v}");
        }
    }
}
