//! Unit tests of `recorder`, in a file of their own to keep the module short.

use super::*;

#[test]
fn dependency_occupancy_by_hand() {
    let mut r = Recorder::new(RecorderSetup { timeseries: true, ..RecorderSetup::one_class(40, 40) });
    // Calls start at 0 and 10 and end at 20 and 30: one call on [0,10), two on [10,20),
    // one on [20,30), none on [30,40): mean (10 + 20 + 10) / 40 = 1.
    r.dep_start(0, 1);
    r.dep_start(10, 2);
    r.dep_end(20, Some((0, 20)), false, 1);
    r.dep_end(30, Some((0, 20)), false, 0);
    let d = r.summary(40, 0, 0).dependency;
    assert_eq!(d.mean_in_flight, 1.0);
    // The first found no other call, the second found one.
    assert_eq!(&d.found_in_flight[..3], &[1, 1, 0]);
    assert_eq!(d.found_in_flight.len(), FOUND_BUCKETS);
}

#[test]
fn figures_over_no_sample_have_no_value() {
    // Issue 30 item 2. Nothing happened: no request, no call, no connection. Every mean,
    // ratio and latency over them is NaN ("no value"), never 0; counts stay 0.
    let s = Recorder::new(RecorderSetup::one_class(SECOND, SECOND)).summary(SECOND, 0, 0);
    assert!(s.amplification.is_nan());
    assert!(s.resources.pool_hold_ms_mean.is_nan());
    assert!(s.dependency.latency_ms.p95.is_nan());
    let c = &s.classes[0];
    assert!(c.in_time_ratio.is_nan() && c.ok_ratio.is_nan() && c.stale_wrong_fraction.is_nan());
    assert!(c.latency_ms.mean.is_nan() && c.staleness_ms.p95.is_nan() && c.conn_wait_ms_mean.is_nan());
    assert_eq!((c.requests, c.in_time, s.dependency.calls), (0, 0, 0));
}

/// One dependency call every 10 ms, each over at once, 10 s windows, no warm-up.
fn cv_of_calls_every_10ms(horizon: Time) -> f64 {
    let window = 10 * SECOND;
    let mut r = Recorder::new(RecorderSetup::one_class(horizon, window));
    let step = 10 * MILLISECOND;
    for k in 1..=horizon / step {
        let t = k * step;
        r.dep_start(t, 1);
        r.dep_end(t, Some((0, 0)), false, 0);
        // A call at a window's end counts in the window that closes, as in the world.
        if t.is_multiple_of(window) || t == horizon {
            r.tick(t);
        }
    }
    r.summary(horizon, 0, 0).dependency.throughput_cv
}

#[test]
fn a_short_last_window_does_not_inflate_the_throughput_cv() {
    // Issue 15 defect 3. Every full window holds exactly 1,000 calls, so the load is even
    // and the CV is 0 at both horizons. Counting the 1 s window (90, 91] as a window of
    // 100 calls gave mean 910, sample variance (9 x 90^2 + 810^2) / 9 = 81,000 and CV
    // sqrt(81,000) / 910 = 0.313 at 91 s.
    assert_eq!(cv_of_calls_every_10ms(90 * SECOND), 0.0);
    assert_eq!(cv_of_calls_every_10ms(91 * SECOND), 0.0);
}

impl RecorderSetup {
    /// One class "c" with a 1 s deadline, one instance, slot and connection, no warm-up, no
    /// costs, no breaker or limiter: the setup unit tests start from.
    pub(crate) fn one_class(horizon: Time, window: Time) -> Self {
        RecorderSetup {
            policy: "p".into(),
            classes: vec!["c".into()],
            deadlines: vec![crate::engine::SECOND],
            instances: 1,
            slots: 1,
            connections: 1,
            warmup: 0,
            horizon,
            window,
            has_breaker: false,
            has_limit: false,
            has_limiter: false,
            has_bulkhead: false,
            costs: (0.0, 0.0, 0.0),
            fallbacks: vec![crate::metrics::FallbackUse::Catalogue],
            timeseries: false,
            recovery: None,
        }
    }
}
