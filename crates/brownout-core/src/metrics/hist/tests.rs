//! Unit tests of `hist`, in a file of their own to keep the module short.

use super::*;
use proptest::prelude::*;

use crate::engine::SECOND;

/// The oracle: hdrhistogram's one-day histogram at full size, as the figures were first
/// defined.
fn full() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGH_US, 3).expect("valid histogram bounds")
}

#[test]
fn a_spilled_histogram_holds_counts_only_up_to_its_largest_value() {
    // Latencies up to 10 s need the buckets up to 10 s, not a day's: 120 KiB of counts
    // instead of 224 KiB. Past a day, values count as one day, as in the full histogram,
    // and the array stops at the full size.
    let mut u = UsHist::new();
    let mut h = full();
    for k in 0..=EXACT as u64 {
        let v = 1 + k * 10_000_000 / EXACT as u64;
        u.record(v);
        h.saturating_record(v);
    }
    assert!(u.hist.is_some());
    // By hand: 2,048 sub-buckets (3 digits), half of them per bucket after the first;
    // values below 2^24 us (16.8 s) take buckets 0..=13, 15 halves; a day (< 2^37) 28.
    // Each count takes 2 bytes while fewer than 65,535 values were recorded.
    assert_eq!(u.hist.as_ref().unwrap().count_bytes(), 15 * 1024 * 2);
    assert_eq!(h.distinct_values(), 28 * 1024);
    for v in [HIGH_US, HIGH_US + 1, u64::MAX / 2] {
        u.record(v);
        h.saturating_record(v);
    }
    assert!(u.hist.as_ref().unwrap().count_bytes() <= h.distinct_values() * 2);
    for q in [0.0, 0.5, 0.99, 0.9999, 1.0] {
        assert_eq!(u.value_at_quantile(q), h.value_at_quantile(q), "q {q}");
    }
}

#[test]
fn a_list_holds_four_bytes_a_value_and_spills_what_does_not_fit() {
    // 10 values take 40 bytes of list at most (the Vec's growth steps are 4, 8, 16: 64
    // bytes); a value past u32::MAX us (71.6 minutes) does not fit in 4 bytes and spills,
    // with the quantiles still the oracle's.
    let mut u = UsHist::new();
    let mut h = full();
    for v in 1..=10u64 {
        u.record(v);
        h.saturating_record(v);
    }
    assert!(u.hist.is_none());
    assert_eq!(std::mem::size_of_val(&u.few[..]), 40);
    let big = u32::MAX as u64 + 1;
    u.record(big);
    h.saturating_record(big);
    assert!(u.hist.is_some(), "a value past u32::MAX stayed in the list");
    for q in [0.0, 0.5, 0.9, 1.0] {
        assert_eq!(u.value_at_quantile(q), h.value_at_quantile(q), "q {q}");
    }
}

/// A spilled histogram of 4-byte counts holding `n` values of `v` (recorded in bulk, as
/// 4 billion single records would take minutes).
fn narrow_with(v: u64, n: u64) -> UsHist {
    let mut h: Flat<u32> = Flat::new();
    h.record_n(v, n as u32).unwrap();
    UsHist { few: Vec::new(), hist: Some(Counts::N32(h)), spare: None }
}

#[test]
fn counts_widen_from_two_to_four_bytes_at_65535_values() {
    // 65,534 values of 3 ms, one of 4 ms, then three more of 3 ms, one at a time: the
    // histogram spills at EXACT + 1 into 2-byte counts, which hold 65,535 values in all;
    // the 65,536th widens them to 4 bytes before it is recorded, so 3 ms ends with 65,537
    // (a u16 would saturate at 65,535). At every step the quantiles are the full u64
    // histogram's.
    let mut u = UsHist::new();
    let mut h = full();
    let check = |u: &mut UsHist, h: &Histogram<u64>| {
        assert_eq!(u.len(), h.len());
        for q in [0.0, 0.5, 0.9999, 1.0] {
            assert_eq!(u.value_at_quantile(q), h.value_at_quantile(q), "q {q} at {}", h.len());
        }
    };
    for _ in 0..65_534 {
        u.record(3_000);
        h.record(3_000).unwrap();
    }
    u.record(4_000);
    h.record(4_000).unwrap();
    assert!(matches!(u.hist, Some(Counts::N16(_))), "65,535 values fit 2-byte counts");
    check(&mut u, &h);
    u.record(3_000);
    h.record(3_000).unwrap();
    assert!(matches!(u.hist, Some(Counts::N32(_))), "the 65,536th value did not widen the counts");
    for _ in 0..2 {
        u.record(3_000);
        h.record(3_000).unwrap();
    }
    check(&mut u, &h);
    match &u.hist {
        Some(Counts::N32(w)) => assert_eq!(w.count_at(3_000), 65_537),
        _ => unreachable!("widened above"),
    }
    // A reset keeps the width (the array is reused), and figures stay the oracle's.
    u.reset();
    h.reset();
    for v in 0..=EXACT as u64 {
        u.record(v);
        h.record(v).unwrap();
    }
    check(&mut u, &h);
}

#[test]
fn counts_widen_before_one_could_pass_u32_max() {
    // u32::MAX - 1 values of 5 ms, then two of 7 ms: the second of them would bring the
    // total to u32::MAX + 1, so the counts widen to 8 bytes first and nothing saturates. The
    // oracle is the full u64 histogram fed the same counts.
    let (v, w) = (5_000u64, 7_000u64);
    let mut u = narrow_with(v, u32::MAX as u64 - 1);
    let mut h = full();
    h.record_n(v, u32::MAX as u64 - 1).unwrap();
    for _ in 0..2 {
        u.record(w);
        h.record(w).unwrap();
    }
    assert!(matches!(u.hist, Some(Counts::N64(_))), "the counts did not widen");
    u.record(v);
    h.record(v).unwrap();
    assert_eq!(u.len(), h.len());
    assert_eq!(u.len(), u32::MAX as u64 + 2);
    for q in [0.0, 0.5, 0.999_999_999, 1.0] {
        assert_eq!(u.value_at_quantile(q), h.value_at_quantile(q), "q {q}");
    }
    // The value 5 ms holds u32::MAX counts: exactly, not saturated one short of them.
    if let Some(Counts::N64(wh)) = &u.hist {
        assert_eq!(wh.count_at(v), u32::MAX as u64);
    }
}

#[test]
fn merging_two_histograms_of_two_byte_counts_past_65535_widens() {
    // 40,000 values each (spilled, 2-byte counts): the union of 80,000 needs 4 bytes.
    let (mut a, mut b, mut h) = (UsHist::new(), UsHist::new(), full());
    for k in 0..40_000u64 {
        a.record(1_000 + k % 500);
        b.record(2_000 + k % 7);
        h.record(1_000 + k % 500).unwrap();
        h.record(2_000 + k % 7).unwrap();
    }
    assert!(matches!(a.hist, Some(Counts::N16(_))) && matches!(b.hist, Some(Counts::N16(_))));
    a.absorb(&b);
    assert!(matches!(a.hist, Some(Counts::N32(_))), "the union did not widen");
    assert_eq!(a.len(), h.len());
    for q in [0.0, 0.25, 0.5, 0.75, 0.99, 1.0] {
        assert_eq!(a.value_at_quantile(q), h.value_at_quantile(q), "q {q}");
    }
}

#[test]
fn merging_two_narrow_histograms_past_u32_max_widens() {
    // Two narrow histograms of 3 billion values each: their union holds 6 billion, more
    // than a 4-byte count holds, so the merge widens; merged in either order, and into a
    // list, the counts are the oracle's.
    let a = narrow_with(5_000, 3_000_000_000);
    let b = narrow_with(9_000, 3_000_000_000);
    let mut h = full();
    h.record_n(5_000, 3_000_000_000).unwrap();
    h.record_n(9_000, 3_000_000_000).unwrap();
    for (x, y) in [(&a, &b), (&b, &a)] {
        let mut m = x.clone();
        m.absorb(y);
        assert!(matches!(m.hist, Some(Counts::N64(_))));
        assert_eq!(m.len(), h.len());
        for q in [0.0, 0.25, 0.5, 0.75, 1.0] {
            assert_eq!(m.value_at_quantile(q), h.value_at_quantile(q), "q {q}");
        }
        // A wide histogram merged into a narrow one, and into a list.
        let mut n = narrow_with(5_000, 10);
        n.absorb(&m);
        assert_eq!(n.len(), h.len() + 10);
        let mut l = UsHist::new();
        l.record(9_000);
        l.absorb(&m);
        let mut h1 = h.clone();
        h1.record(9_000).unwrap();
        assert_eq!(l.len(), h1.len());
        // One value more than half are 9 ms: the median moves up to its bucket.
        assert_eq!(l.value_at_quantile(0.5), h1.value_at_quantile(0.5));
        assert_eq!(l.value_at_quantile(0.5), h1.highest_equivalent(9_000));
    }
}

proptest! {
    /// Quantiles taken together (selections in place) equal the same quantiles taken one
    /// at a time on a copy, in list form and once spilled.
    #[test]
    fn quantiles_together_equal_one_at_a_time(
        values in prop::collection::vec(0u64..5_000_000_000, 1..300),
        mut qs in prop::collection::vec(prop_oneof![Just(0.0), Just(1.0), 0.0f64..1.0], 1..4),
        spill in any::<bool>(),
    ) {
        qs.sort_by(f64::total_cmp);
        let mut l = Lat::new();
        for &v in &values {
            l.record(v);
        }
        if spill {
            l.vals.spill();
        }
        let one: Vec<f64> = qs.iter().map(|&q| l.q_ms(q)).collect();
        let together: Vec<f64> = match qs.len() {
            1 => l.quantiles_ms([qs[0]]).to_vec(),
            2 => l.quantiles_ms([qs[0], qs[1]]).to_vec(),
            _ => l.quantiles_ms([qs[0], qs[1], qs[2]]).to_vec(),
        };
        prop_assert_eq!(&one[..together.len()], &together[..]);
    }
}

proptest! {
    /// Two merged latencies report what one latency fed all their values reports, in
    /// list form, spilled or mixed.
    #[test]
    fn merged_equals_recorded_together(
        a in prop::collection::vec(0u64..5_000_000_000, 0..300),
        b in prop::collection::vec(0u64..5_000_000_000, 0..300),
        spill_a in any::<bool>(),
        spill_b in any::<bool>(),
    ) {
        let (mut la, mut lb, mut all) = (Lat::new(), Lat::new(), full());
        for &v in &a {
            la.record(v);
            all.saturating_record(us(v));
        }
        for &v in &b {
            lb.record(v);
            all.saturating_record(us(v));
        }
        if spill_a {
            la.vals.spill();
        }
        if spill_b {
            lb.vals.spill();
        }
        let mut m = la.clone();
        m.absorb(&lb);
        prop_assert_eq!(m.len(), all.len());
        for q in [0.0, 0.5, 0.95, 0.99, 1.0] {
            prop_assert_eq!(m.q_us(q), all.value_at_quantile(q));
        }
        let n = (a.len() + b.len()) as f64;
        let sum: u128 = a.iter().chain(&b).map(|&v| v as u128).sum();
        // No value, no mean: NaN (the "no value" convention), which equals nothing.
        let mean = m.stats().mean;
        if n == 0.0 {
            prop_assert!(mean.is_nan(), "a latency over no value has a mean: {}", mean);
        } else {
            prop_assert_eq!(mean, sum as f64 / n / 1e6);
        }
        let max = a.iter().chain(&b).max().map_or(0.0, |&v| v as f64 / 1e6);
        prop_assert_eq!(m.max_ms(), max);
    }
}

#[test]
fn the_histogram_tracks_exactly_up_to_its_bound() {
    // `Lat::record` spills on values past HIGH_US rather than copy the clamping rule.
    assert_eq!(shape().high(), HIGH_US);
}

#[test]
fn list_quantiles_by_hand() {
    // 1..=10 us: the median is the 5th smallest (ceil(0.5 x 10)), p95 the 10th
    // (ceil(9.5)); below 2048 us every microsecond is its own bucket.
    let mut l = Lat::new();
    for v in (1..=10).rev() {
        l.record(v * MICROSECOND);
    }
    assert_eq!(l.q_ms(0.5), 0.005);
    assert_eq!(l.q_ms(0.95), 0.010);
    // 3000 us lies in a 2 us bucket [3000, 3001]: the histogram reports its top, clamped
    // to the observed maximum 3000.5 us.
    let mut l = Lat::new();
    l.record(3_000_500);
    assert_eq!(l.q_ms(0.5), 3.0005);
    l.record(2 * MICROSECOND);
    assert_eq!(l.q_ms(0.5), 0.002);
}

#[test]
fn a_spilled_histogram_holds_no_list() {
    // Once spilled, the list's buffer (up to EXACT values, 64 KiB) is dead weight beside
    // the histogram: a whole-run histogram that spilled must not keep it for the run.
    let mut u = UsHist::new();
    for v in 0..=EXACT as u64 {
        u.record(v);
    }
    assert!(u.hist.is_some());
    assert_eq!(u.few.capacity(), 0, "a spilled histogram kept its list's buffer");
    // After a reset the list takes values again, and quantiles still match the oracle.
    u.reset();
    let mut h = full();
    for v in [5u64, 7, 1_000] {
        u.record(v);
        h.saturating_record(v);
    }
    assert_eq!(u.value_at_quantile(0.5), h.value_at_quantile(0.5));
}

#[test]
fn list_and_spilled_forms_match_the_hdr_histogram() {
    // The oracle is hdrhistogram itself, fed the same values; sizes on both sides of the
    // spill threshold, then a reset and a smaller batch.
    let mut rng = crate::engine::stream(5, "test/lat");
    for n in [1usize, 2, 7, 100, EXACT, EXACT + 1, 3 * EXACT] {
        let mut l = Lat::new();
        let mut h = full();
        for round in 0..2 {
            for _ in 0..n / (round + 1) {
                // Up to 20 s, shifted down by 0-29 bits: every scale from 1 us up.
                let ns = (rand::Rng::next_u64(&mut rng) % (20 * SECOND)) >> (rand::Rng::next_u32(&mut rng) % 30);
                l.record(ns);
                h.saturating_record(us(ns));
            }
            assert_eq!(l.len(), h.len());
            for q in [0.0, 0.001, 0.25, 0.5, 0.95, 0.99, 0.999, 1.0, 1.5] {
                assert_eq!(l.q_us(q), h.value_at_quantile(q), "n {n} round {round} q {q}");
            }
            l.reset();
            h.reset();
            assert!(l.is_empty());
        }
    }
}

#[test]
fn the_whole_runs_shorter_list_changes_no_figure() {
    // A RunLat spills at RUN_EXACT values, a window's Lat at EXACT: fed the same values,
    // on every side of both thresholds, they report the same figures as the oracle.
    let mut rng = crate::engine::stream(11, "test/run-lat");
    let (mut run, mut win, mut h) = (RunLat::empty(), Lat::new(), full());
    for n in [RUN_EXACT - 1, 1, 1, EXACT - RUN_EXACT, 1, 2 * EXACT] {
        for _ in 0..n {
            let ns = (rand::Rng::next_u64(&mut rng) % (30 * SECOND)) >> (rand::Rng::next_u32(&mut rng) % 25);
            run.record(ns);
            win.record(ns);
            h.saturating_record(us(ns));
        }
        assert_eq!(run.len(), h.len());
        for q in [0.0, 0.5, 0.95, 0.99, 1.0] {
            assert_eq!(run.q_us(q), h.value_at_quantile(q), "q {q} at {}", h.len());
            assert_eq!(run.q_ms(q), win.q_ms(q), "q {q} at {}", h.len());
        }
        assert_eq!(run.stats(), win.stats());
    }
    assert!(run.vals.hist.is_some());
}

#[test]
fn us_hist_matches_the_one_hour_histogram_policies_used() {
    // The tiered bulkhead and Envoy's gradient record whole microseconds, 0 included, up to
    // one hour; the oracle is the one-hour HDR histogram they kept before, fed the same
    // values, on both sides of the spill threshold.
    let mut rng = crate::engine::stream(9, "test/us-hist");
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds");
    let mut u = UsHist::new();
    for n in [1usize, 5, 1000, EXACT + 3, 40] {
        for _ in 0..n {
            let v = (rand::Rng::next_u64(&mut rng) % 3_600_000_001) >> (rand::Rng::next_u32(&mut rng) % 33);
            h.saturating_record(v);
            u.record(v);
        }
        assert_eq!(u.len(), h.len());
        for q in [0.0, 0.05, 0.5, 0.95, 0.99, 1.0] {
            assert_eq!(u.value_at_quantile(q), h.value_at_quantile(q), "n {n} q {q}");
        }
        u.reset();
        h.reset();
        assert!(u.is_empty());
    }
}

#[test]
fn counted_quantiles_of_a_busy_window_are_the_selections() {
    // A busy window: thousands of values in a narrow range take the counting path of
    // `quantiles_ms` (5 N n >= 2 x the counts walked); a few values in a wide range take
    // the selections. Both equal one selection per quantile (`q_ms` on a copy) and the
    // oracle's quantiles, clamped to the observed range.
    let mut rng = crate::engine::stream(13, "test/busy-window");
    for (n, spread) in [(9_000u64, 50 * MILLISECOND), (5_000, 3 * SECOND), (40, 20 * SECOND), (2, 1)] {
        let (mut l, mut h) = (Lat::new(), full());
        for _ in 0..n {
            let ns = 1 + rand::Rng::next_u64(&mut rng) % spread;
            l.record(ns);
            h.saturating_record(us(ns));
        }
        let qs = [0.0, 0.5, 0.95, 0.99, 1.0];
        let one: Vec<f64> = qs.iter().map(|&q| l.q_ms(q)).collect();
        let oracle: Vec<f64> = qs.iter().map(|&q| l.clamp_ms(h.value_at_quantile(q))).collect();
        assert_eq!(one, oracle, "n {n}");
        assert_eq!(l.quantiles_ms(qs).to_vec(), one, "n {n}");
        assert_eq!(l.quantiles_ms([0.95]).to_vec(), vec![one[2]], "n {n}");
    }
}
