//! Time-series windows: per-window figures for `timeseries.csv`, handed to a [`RowSink`] as
//! each window closes, and the running sums of dependency calls per window that the summary's
//! throughput CV is computed from. Nothing here grows with the horizon once a sink is set.

use serde::{Deserialize, Serialize};

use super::class_acc::Tally;
use super::hist::Lat;
use super::recorder::RecorderSetup;
use crate::engine::{SECOND, Time};

/// One class's figures in the open window.
#[derive(Debug, Clone)]
pub(super) struct WindowClass {
    pub(super) offered: u64,
    /// Requests of the class arrived and not yet finished, at any time (never reset: a level,
    /// read at each window's end).
    pub(super) in_flight: u64,
    pub(super) outcomes: Tally,
    pub(super) good: u64,
    pub(super) missed: u64,
    pub(super) cost: f64,
    pub(super) latency: Lat,
    pub(super) staleness: Lat,
    pub(super) stale_wrong: u64,
}

impl WindowClass {
    fn new() -> Self {
        Self {
            offered: 0,
            in_flight: 0,
            outcomes: Tally::default(),
            good: 0,
            missed: 0,
            cost: 0.0,
            latency: Lat::new(),
            staleness: Lat::new(),
            stale_wrong: 0,
        }
    }
    /// Start the next window: every figure of the window back to zero; the level stays.
    fn reset(&mut self) {
        self.offered = 0;
        self.outcomes = Tally::default();
        self.good = 0;
        self.missed = 0;
        self.cost = 0.0;
        self.latency.reset();
        self.staleness.reset();
        self.stale_wrong = 0;
    }
}

/// One row of `timeseries.csv`: a (window, class) pair, with fleet-wide columns repeated.
/// Every column's name ends in its unit (`_count` in the window, `_per_s`, `_ms`, `_fraction`,
/// `_units` of business cost, `_mean_count` a time-weighted mean level); the old names are
/// read as aliases, so files from older versions still load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WindowRow {
    /// Policy label.
    pub policy: String,
    /// Window start, seconds.
    pub t_s: f64,
    /// Class.
    pub class: String,
    /// Arrivals.
    #[serde(rename = "offered_count", alias = "offered")]
    pub offered: u64,
    /// Outcome counts of requests that finished in the window.
    #[serde(rename = "ok_count", alias = "ok")]
    pub ok: u64,
    /// Errors.
    #[serde(rename = "error_count", alias = "error")]
    pub error: u64,
    /// Timeouts.
    #[serde(rename = "timeout_count", alias = "timeout")]
    pub timeout: u64,
    /// Rejections.
    #[serde(rename = "rejected_count", alias = "rejected")]
    pub rejected: u64,
    /// Short circuits.
    #[serde(rename = "short_circuited_count", alias = "short_circuited")]
    pub short_circuited: u64,
    /// Fallbacks.
    #[serde(rename = "fallback_count", alias = "fallback")]
    pub fallback: u64,
    /// Answered within the deadline, per second.
    pub goodput_per_s: f64,
    /// Fallbacks per second.
    pub fallback_per_s: f64,
    /// Responses after the deadline (absent in files from older versions: 0).
    #[serde(default)]
    #[serde(rename = "deadline_missed_count", alias = "deadline_missed")]
    pub deadline_missed: u64,
    /// Business cost of the requests that finished in the window.
    #[serde(default)]
    #[serde(rename = "business_cost_units", alias = "business_cost")]
    pub business_cost: f64,
    /// Gateway latency median, ms.
    #[serde(with = "no_value")]
    pub latency_p50_ms: f64,
    /// Gateway latency p95, ms.
    #[serde(with = "no_value")]
    pub latency_p95_ms: f64,
    /// Staleness p95 of fallbacks, ms.
    #[serde(with = "no_value")]
    pub staleness_p95_ms: f64,
    /// Wrong fallbacks.
    #[serde(rename = "stale_wrong_count", alias = "stale_wrong")]
    pub stale_wrong: u64,
    /// Dependency calls started, per second.
    pub dep_calls_per_s: f64,
    /// Dependency calls in flight (time-weighted mean, fleet-wide).
    #[serde(rename = "dep_in_flight_mean_count", alias = "dep_in_flight")]
    pub dep_in_flight: f64,
    /// Median service time of the dependency's calls in the window (no queue wait, no hop), ms.
    #[serde(with = "no_value")]
    pub dep_latency_p50_ms: f64,
    /// p95 service time of the dependency's calls in the window (no queue wait, no hop), ms.
    #[serde(with = "no_value")]
    pub dep_latency_p95_ms: f64,
    /// Worker slots in use per instance (time-weighted mean).
    #[serde(rename = "workers_busy_mean_count", alias = "workers_busy")]
    pub workers_busy: f64,
    /// Pool connections in use per instance (time-weighted mean).
    #[serde(rename = "pool_busy_mean_count", alias = "pool_busy")]
    pub pool_busy: f64,
    /// Fraction of instance-time the breaker was open.
    #[serde(rename = "breaker_open_fraction", alias = "breaker_open")]
    pub breaker_open: f64,
    /// Fraction of instance-time the breaker was half-open.
    #[serde(rename = "breaker_half_open_fraction", alias = "breaker_half_open")]
    pub breaker_half_open: f64,
    /// Mean limit across instances at the window's end (no value without a limiter).
    #[serde(rename = "limit_mean_count", alias = "limit", with = "no_value")]
    pub limit: f64,
    /// Requests of the class that had arrived and not finished at the window's end (queued
    /// anywhere, holding a worker, waiting for a call or a backoff), warm-up arrivals
    /// included: the class's backlog. No value in files written before it.
    #[serde(default = "no_value::none", with = "no_value")]
    pub in_flight_end_count: f64,
    /// Dependency calls not yet answered at the window's end, fleet-wide: waiting for a
    /// server, in service or on the way back, abandoned ones included (work the dependency
    /// still does for nobody). No value in files written before it.
    #[serde(default = "no_value::none", with = "no_value")]
    pub dep_in_flight_end_count: f64,
}

/// A figure over no sample (a percentile of a window without an answer, the limit of a run
/// without a limiter) is NaN in memory and an empty cell in `timeseries.csv`, as in
/// `summary.csv`; an empty cell reads back as NaN. A 0 there would read as the fastest window
/// of the run.
/// Equality as written, as the summary's types compare: a figure of no value equals itself, so
/// a rerun's rows equal the first run's.
impl PartialEq for WindowRow {
    fn eq(&self, other: &Self) -> bool {
        serde_json::to_value(self).ok() == serde_json::to_value(other).ok()
    }
}

mod no_value {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_nan() { s.serialize_none() } else { s.serialize_some(v) }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }

    /// A column missing from an older file: no value.
    pub fn none() -> f64 {
        f64::NAN
    }
}

/// Charts draw at most this many windows per series: a longer run's windows are coalesced by
/// an integer factor ([`chart_factor`]). Every shipped scenario has fewer windows (at most
/// 270), so their charts show every window.
pub const MAX_CHART_WINDOWS: u64 = 500;

/// The factor by which charts coalesce the windows of a run of `windows` windows: the
/// smallest that leaves at most [`MAX_CHART_WINDOWS`] points per series (1 for shorter runs).
pub fn chart_factor(windows: u64) -> u64 {
    windows.div_ceil(MAX_CHART_WINDOWS).max(1)
}

/// Where closed windows' rows go as the run goes: a file being written, a counter, anything.
/// Errors are the sink's to keep and report: the run cannot act on them.
pub trait RowSink: Send {
    /// The rows of one closed window, one per class in scenario order.
    fn window(&mut self, rows: &[WindowRow]);
}

/// Gauge readings at a window's end: integrals (level x ns, after warm-up) and current levels
/// of the dependency's calls in flight, busy workers, busy connections, open and half-open
/// breakers (all fleet-wide), and the mean limit across instances.
pub(super) struct Readings {
    pub(super) integrals: [f64; 5],
    pub(super) levels: [f64; 5],
    pub(super) limit: f64,
}

/// Running sums of the dependency calls per full window after warm-up: enough for their
/// sample variance, exactly (integer sums), in constant memory.
#[derive(Debug, Clone, Copy, Default)]
struct CallStats {
    n: u64,
    sum: u128,
    squares: u128,
}

impl CallStats {
    fn add(&mut self, calls: u64) {
        self.n += 1;
        self.sum += u128::from(calls);
        self.squares += u128::from(calls) * u128::from(calls);
    }

    /// Sample standard deviation over mean; no value (NaN) with fewer than two windows, which
    /// have no spread to measure, or no calls, which have no mean to divide by.
    fn cv(&self) -> f64 {
        if self.n < 2 || self.sum == 0 {
            return f64::NAN;
        }
        let n = u128::from(self.n);
        // n * sum(c^2) - (sum c)^2 = n * sum((c - mean)^2), exact in integers.
        let spread = (n * self.squares).saturating_sub(self.sum * self.sum);
        let m = self.sum as f64 / self.n as f64;
        let var = spread as f64 / (n * (n - 1)) as f64;
        var.sqrt() / m
    }
}

/// The open window, the rows of the closing one and where they go.
pub(super) struct Windows {
    /// Per class.
    pub(super) classes: Vec<WindowClass>,
    /// Dependency-produced latency in the open window.
    pub(super) dep_latency: Lat,
    /// Dependency calls started in the open window.
    pub(super) dep_calls: u64,
    start: Time,
    /// The closing window's rows (one per class), emptied as soon as they are handed on.
    closing: Vec<WindowRow>,
    /// Where rows go; without a sink they are kept in `kept` (small runs, tests).
    sink: Option<Box<dyn RowSink>>,
    kept: Vec<WindowRow>,
    calls: CallStats,
    /// The gauge integrals at the open window's start.
    integrals: [f64; 5],
}

impl Windows {
    /// No window closed yet; the first starts at 0.
    pub(super) fn new(classes: usize) -> Self {
        Self {
            classes: (0..classes).map(|_| WindowClass::new()).collect(),
            dep_latency: Lat::new(),
            dep_calls: 0,
            start: 0,
            closing: Vec::with_capacity(classes),
            sink: None,
            kept: Vec::new(),
            calls: CallStats::default(),
            integrals: [0.0; 5],
        }
    }

    /// Close the window ending at `now` and start the next.
    pub(super) fn close(&mut self, now: Time, s: &RecorderSetup, g: Readings) {
        // Gauges integrate only after warm-up; windows inside warm-up use instantaneous values.
        let vals: [f64; 5] = std::array::from_fn(|k| {
            if now <= s.warmup {
                g.levels[k]
            } else {
                let from = self.start.max(s.warmup);
                (g.integrals[k] - self.integrals[k]) / (now - from).max(1) as f64
            }
        });
        // The gauges are integrated at every tick either way: splitting an integral at the
        // window edges changes its last bits, and the summary must not depend on the rows.
        self.integrals = g.integrals;
        if s.timeseries {
            self.push_rows(now, s, &vals, &g);
            match &mut self.sink {
                Some(sink) => sink.window(&self.closing),
                None => self.kept.extend_from_slice(&self.closing),
            }
            self.closing.clear();
        }
        // A short last window (a horizon that is not a multiple of the window) would count as
        // a dip in the load: only full windows after warm-up enter the throughput CV.
        if self.start >= s.warmup && now - self.start == s.window {
            self.calls.add(self.dep_calls);
        }
        for w in &mut self.classes {
            w.reset();
        }
        self.dep_latency.reset();
        self.dep_calls = 0;
        self.start = now;
    }

    /// One row per class for the window ending at `now`; `vals` are the gauge means.
    fn push_rows(&mut self, now: Time, s: &RecorderSetup, vals: &[f64; 5], g: &Readings) {
        let width = (now - self.start).max(1) as f64;
        let secs = width / SECOND as f64;
        let n = s.instances as f64;
        let [dep_p50, dep_p95] = self.dep_latency.quantiles_ms([0.5, 0.95]);
        for (ci, name) in s.classes.iter().enumerate() {
            let w = &mut self.classes[ci];
            let [latency_p50_ms, latency_p95_ms] = w.latency.quantiles_ms([0.5, 0.95]);
            let [staleness_p95_ms] = w.staleness.quantiles_ms([0.95]);
            let o = w.outcomes.outcomes();
            self.closing.push(WindowRow {
                policy: s.policy.clone(),
                t_s: self.start as f64 / SECOND as f64,
                class: name.clone(),
                offered: w.offered,
                ok: o.ok,
                error: o.error,
                timeout: o.timeout,
                rejected: o.rejected,
                short_circuited: o.short_circuited,
                fallback: o.fallback,
                goodput_per_s: w.good as f64 / secs,
                fallback_per_s: o.fallback as f64 / secs,
                deadline_missed: w.missed,
                business_cost: w.cost,
                latency_p50_ms,
                latency_p95_ms,
                staleness_p95_ms,
                stale_wrong: w.stale_wrong,
                dep_calls_per_s: self.dep_calls as f64 / secs,
                dep_in_flight: vals[0],
                dep_latency_p50_ms: dep_p50,
                dep_latency_p95_ms: dep_p95,
                workers_busy: vals[1] / n,
                pool_busy: vals[2] / n,
                breaker_open: vals[3] / n,
                breaker_half_open: vals[4] / n,
                limit: if s.has_limit { g.limit } else { f64::NAN },
                in_flight_end_count: w.in_flight as f64,
                dep_in_flight_end_count: g.levels[0],
            });
        }
    }

    /// Send every later window's rows to `sink` instead of keeping them.
    pub(super) fn set_sink(&mut self, sink: Box<dyn RowSink>) {
        self.sink = Some(sink);
    }

    /// The time-series rows kept so far (none with a sink).
    pub(super) fn rows(&self) -> &[WindowRow] {
        &self.kept
    }

    /// Rows held in memory: the kept ones and any of a closing window not yet handed on.
    pub(super) fn held(&self) -> usize {
        self.kept.len() + self.closing.len()
    }
    /// Take the kept time-series rows and drop the sink (so a file sink is flushed).
    pub(super) fn take_rows(&mut self) -> Vec<WindowRow> {
        self.sink = None;
        std::mem::take(&mut self.kept)
    }

    /// Coefficient of variation (sample standard deviation over mean) of the dependency calls
    /// per full window after warm-up; no value (NaN) with fewer than two such windows or no calls.
    pub(super) fn throughput_cv(&self) -> f64 {
        self.calls.cv()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::metrics::Record;
    use crate::metrics::Recorder;

    /// Counts the rows and windows it is handed.
    struct Counting(Arc<[AtomicUsize; 2]>);

    impl RowSink for Counting {
        fn window(&mut self, rows: &[WindowRow]) {
            self.0[0].fetch_add(rows.len(), Ordering::Relaxed);
            self.0[1].fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn with_a_sink_the_recorder_holds_no_row_after_a_window_closes() {
        let window = SECOND;
        let n = 10_000;
        let setup = RecorderSetup {
            classes: vec!["a".into(), "b".into(), "c".into()],
            deadlines: vec![SECOND; 3],
            timeseries: true,
            ..RecorderSetup::one_class(n * window, window)
        };
        let mut r = Recorder::new(setup);
        let seen = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        r.set_sink(Box::new(Counting(seen.clone())));
        for k in 1..=n {
            r.dep_start(k * window - 1, 1);
            r.dep_end(k * window - 1, Some((0, 0)), false, 0);
            r.tick(k * window);
            assert_eq!(r.rows_held(), 0, "after window {k}");
        }
        // Every window reached the sink, one row per class, and nothing was kept.
        assert_eq!(seen[1].load(Ordering::Relaxed), n as usize);
        assert_eq!(seen[0].load(Ordering::Relaxed), 3 * n as usize);
        assert!(r.take_rows().is_empty());
    }

    #[test]
    fn without_a_sink_the_rows_are_kept_as_before() {
        let mut r = Recorder::new(RecorderSetup { timeseries: true, ..RecorderSetup::one_class(5 * SECOND, SECOND) });
        for k in 1..=5 {
            r.tick(k * SECOND);
        }
        let t: Vec<f64> = r.take_rows().iter().map(|w| w.t_s).collect();
        assert_eq!(t, [0.0, 1.0, 2.0, 3.0, 4.0]);
    }

    fn cv_of(calls: &[u64]) -> f64 {
        let mut s = CallStats::default();
        calls.iter().for_each(|&c| s.add(c));
        s.cv()
    }

    #[test]
    fn the_running_throughput_cv_is_the_sample_cv() {
        // Mean 5, squared deviations 9+1+1+1+0+0+4+16 = 32, sample variance 32/7.
        assert_eq!(cv_of(&[2, 4, 4, 4, 5, 5, 7, 9]), (32.0f64 / 7.0).sqrt() / 5.0);
        // Issue 15's example: nine windows of 1,000 calls and one of 100: mean 910, sample
        // variance (9 x 90^2 + 810^2) / 9 = 81,000.
        let mut calls = vec![1000; 9];
        calls.push(100);
        assert!((cv_of(&calls) - 81_000f64.sqrt() / 910.0).abs() < 1e-15);
        // Equal windows vary by nothing: 0 is a measured value here.
        assert_eq!(cv_of(&[1000; 50]), 0.0);
        // One window has no spread to measure, and no calls have no mean to divide by: no
        // value, not a perfectly steady load that would win a "lowest oscillation" ranking.
        assert!(cv_of(&[7]).is_nan());
        assert!(cv_of(&[0, 0, 0]).is_nan());
        assert!(cv_of(&[]).is_nan());
    }
}
