//! Time-series windows: per-window figures for `timeseries.csv`, and the dependency calls of
//! each window, which the summary's throughput CV is computed from.

use serde::{Deserialize, Serialize};

use super::class_acc::Tally;
use super::hist::Lat;
use super::recorder::RecorderSetup;
use crate::engine::{SECOND, Time};

/// One class's figures in the open window.
#[derive(Debug, Clone)]
pub(super) struct WindowClass {
    pub(super) offered: u64,
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
            outcomes: Tally::default(),
            good: 0,
            missed: 0,
            cost: 0.0,
            latency: Lat::new(),
            staleness: Lat::new(),
            stale_wrong: 0,
        }
    }
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
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
    pub latency_p50_ms: f64,
    /// Gateway latency p95, ms.
    pub latency_p95_ms: f64,
    /// Staleness p95 of fallbacks, ms.
    pub staleness_p95_ms: f64,
    /// Wrong fallbacks.
    #[serde(rename = "stale_wrong_count", alias = "stale_wrong")]
    pub stale_wrong: u64,
    /// Dependency calls started, per second.
    pub dep_calls_per_s: f64,
    /// Dependency calls in flight (time-weighted mean, fleet-wide).
    #[serde(rename = "dep_in_flight_mean_count", alias = "dep_in_flight")]
    pub dep_in_flight: f64,
    /// Dependency-produced latency median, ms.
    pub dep_latency_p50_ms: f64,
    /// Dependency-produced latency p95, ms.
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
    /// Mean limit across instances at the window's end (0 = no limiter).
    #[serde(rename = "limit_mean_count", alias = "limit")]
    pub limit: f64,
}

/// Gauge readings at a window's end: integrals (level x ns, after warm-up) and current levels
/// of the dependency's calls in flight, busy workers, busy connections, open and half-open
/// breakers (all fleet-wide), and the mean limit across instances.
pub(super) struct Readings {
    pub(super) integrals: [f64; 5],
    pub(super) levels: [f64; 5],
    pub(super) limit: f64,
}

/// The open window and the closed ones.
pub(super) struct Windows {
    /// Per class.
    pub(super) classes: Vec<WindowClass>,
    /// Dependency-produced latency in the open window.
    pub(super) dep_latency: Lat,
    /// Dependency calls started in the open window.
    pub(super) dep_calls: u64,
    start: Time,
    rows: Vec<WindowRow>,
    /// Dependency calls of each full window after warm-up.
    calls: Vec<u64>,
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
            rows: Vec::new(),
            calls: Vec::new(),
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
            self.push_rows(now, s, &vals, g.limit);
        }
        // A short last window (a horizon that is not a multiple of the window) would count as
        // a dip in the load: only full windows after warm-up enter the throughput CV.
        if self.start >= s.warmup && now - self.start == s.window {
            self.calls.push(self.dep_calls);
        }
        for w in &mut self.classes {
            w.reset();
        }
        self.dep_latency.reset();
        self.dep_calls = 0;
        self.start = now;
    }

    /// One row per class for the window ending at `now`; `vals` are the gauge means.
    fn push_rows(&mut self, now: Time, s: &RecorderSetup, vals: &[f64; 5], limit: f64) {
        let width = (now - self.start).max(1) as f64;
        let secs = width / SECOND as f64;
        let n = s.instances as f64;
        let [dep_p50, dep_p95] = self.dep_latency.quantiles_ms([0.5, 0.95]);
        for (ci, name) in s.classes.iter().enumerate() {
            let w = &mut self.classes[ci];
            let [latency_p50_ms, latency_p95_ms] = w.latency.quantiles_ms([0.5, 0.95]);
            let [staleness_p95_ms] = w.staleness.quantiles_ms([0.95]);
            let o = w.outcomes.outcomes();
            self.rows.push(WindowRow {
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
                limit: if s.has_limit { limit } else { 0.0 },
            });
        }
    }

    /// The time-series rows so far.
    pub(super) fn rows(&self) -> &[WindowRow] {
        &self.rows
    }

    /// Take the time-series rows.
    pub(super) fn take_rows(&mut self) -> Vec<WindowRow> {
        std::mem::take(&mut self.rows)
    }

    /// Coefficient of variation (sample standard deviation over mean) of the dependency calls
    /// per full window after warm-up; 0 with fewer than two such windows or no calls.
    pub(super) fn throughput_cv(&self) -> f64 {
        let calls = &self.calls;
        if calls.len() < 2 {
            return 0.0;
        }
        let m = calls.iter().sum::<u64>() as f64 / calls.len() as f64;
        let var = calls.iter().map(|&c| (c as f64 - m).powi(2)).sum::<f64>() / (calls.len() - 1) as f64;
        if m > 0.0 { var.sqrt() / m } else { 0.0 }
    }
}
