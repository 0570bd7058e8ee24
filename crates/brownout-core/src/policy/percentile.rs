//! "Percentile of the last period", as the policies judge a window by it. Two definitions,
//! kept apart because they give different figures and each policy's results depend on its
//! own: [`nearest_rank`] is the exact ceil(p n)-th smallest duration (the hedge threshold, the
//! latency breaker), and [`DurationHist`] is an HDR histogram's answer, the top of the bucket
//! holding that value in whole microseconds (the tiered bulkhead's trip and Envoy's gradient
//! controller, which use a histogram as Envoy does).

use crate::engine::Time;
use crate::metrics::UsHist;
use crate::units::Micros;

/// Nearest-rank percentile `p` of `v`, the ceil(p n)-th smallest (at least the first),
/// reordering `v` in place by a selection; None when empty.
pub(crate) fn nearest_rank(v: &mut [Time], p: f64) -> Option<Time> {
    if v.is_empty() {
        return None;
    }
    let rank = (p * v.len() as f64).ceil() as usize;
    let (_, &mut x, _) = v.select_nth_unstable(rank.clamp(1, v.len()) - 1);
    Some(x)
}

/// Longest duration a [`DurationHist`] tells apart (one hour); longer ones count as this.
const MAX: Micros = Micros(3_600_000_000);

/// Durations of the current period in an HDR histogram (microseconds).
#[derive(Debug, Clone, Default)]
pub(crate) struct DurationHist(UsHist);

impl DurationHist {
    /// Record a duration, in whole microseconds, at most one hour.
    pub(crate) fn record(&mut self, d: Time) {
        self.0.record(Micros::from_time(d).min(MAX).0);
    }
    /// Quantile `q` (0 when empty).
    pub(crate) fn quantile(&mut self, q: f64) -> Micros {
        Micros(self.0.value_at_quantile(q))
    }
    /// Number of durations recorded since the last reset.
    pub(crate) fn len(&self) -> u64 {
        self.0.len()
    }
    /// True when nothing was recorded since the last reset.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Start a new period.
    pub(crate) fn reset(&mut self) {
        self.0.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MICROSECOND;

    #[test]
    fn nearest_rank_percentile() {
        let mut v = vec![5, 1, 4, 2, 3];
        assert_eq!(nearest_rank(&mut v, 0.5), Some(3)); // ceil(2.5) = 3rd
        assert_eq!(nearest_rank(&mut v, 0.95), Some(5)); // ceil(4.75) = 5th
        assert_eq!(nearest_rank(&mut v, 0.2), Some(1)); // ceil(1.0) = 1st
        assert_eq!(nearest_rank(&mut [], 0.5), None);
    }

    #[test]
    fn durations_are_whole_microseconds_up_to_an_hour() {
        let mut h = DurationHist::default();
        // 1,999 ns is 1 us; below 2,048 us the histogram's buckets are exact.
        h.record(1_999);
        h.record(1_000 * MICROSECOND);
        assert_eq!(h.quantile(0.5), Micros(1));
        assert_eq!(h.quantile(1.0), Micros(1_000));
        h.reset();
        assert!(h.is_empty());
        // Two hours count as one; the answer is the top of one hour's bucket, not below it.
        h.record(7_200_000_000 * MICROSECOND);
        assert!(h.quantile(1.0) >= MAX && h.quantile(1.0).0 <= MAX.0 + MAX.0 / 1000);
    }
}
