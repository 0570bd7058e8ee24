//! Metrics: what a run measures, excluding warm-up, in O(classes x windows) memory.
//!
//! The world calls the `Recorder` at each happening (arrival, finish, dependency call,
//! gauge change, breaker transition, window tick); `Recorder::summary` turns it into the
//! serializable [`summary`] types. Latencies go into mergeable HDR histograms (microseconds).

mod gauge;
pub mod summary;

pub use gauge::Gauge;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::engine::{MICROSECOND, MILLISECOND, SECOND, Time};
use crate::policy::BreakerState;
use summary::*;

/// How a user request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// 200.
    Ok,
    /// 503 from the dependency or the pool.
    Error,
    /// 504 from a timeout.
    Timeout,
    /// 429 from a limiter or full worker slots.
    Rejected,
    /// Breaker open.
    ShortCircuited,
    /// Served from the cache.
    Fallback,
}

/// What the business model concluded about one finished request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OrderEffect {
    /// The request became an order.
    pub order: bool,
    /// Substituted.
    pub substitution: bool,
    /// Refunded.
    pub refund: bool,
    /// Lost.
    pub lost: bool,
}

/// Values a `UsHist` keeps as a plain list before it spills into its HDR histogram: 128 KiB,
/// against ~216 KiB of histogram counts, and more than a 10 s window holds at 1,000/s.
const EXACT: usize = 16384;

/// Microsecond values as an HDR histogram (1 us to one day, 3 significant digits) holds them.
///
/// Up to `EXACT` values are kept as a list and the histogram is only filled past that: a value
/// then costs a push instead of a cache miss in a 216 KiB array, and a reset (a window's end)
/// clears a short list instead of the whole array. Quantiles of the list are the histogram's
/// own (`value_at_quantile` picks the bucket holding the k-th smallest value), so which form
/// holds the values never changes a figure. Policies that judge a window by a percentile use
/// it directly; [`Lat`] adds the exact mean and range.
#[derive(Debug, Clone, Default)]
pub struct UsHist {
    few: Vec<u64>,
    hist: Option<Histogram<u64>>,
    /// The values are in `hist` (the list overflowed since the last reset).
    spilled: bool,
}

impl UsHist {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }
    /// Record one value in microseconds (past one day it counts as one day, as the histogram
    /// clamps it).
    #[inline]
    pub fn record(&mut self, v: u64) {
        match &mut self.hist {
            Some(h) if self.spilled => h.saturating_record(v),
            // A value past the histogram's range is clamped by it: spill rather than copy that rule.
            _ if self.few.len() < EXACT && v <= HIGH_US => self.few.push(v),
            _ => self.spill_and_record(v),
        }
    }
    #[cold]
    fn spill_and_record(&mut self, v: u64) {
        self.spill();
        self.hist.as_mut().expect("spilled").saturating_record(v);
    }
    /// Move the listed values into the histogram, which takes every value from now on.
    fn spill(&mut self) {
        let h = self.hist.get_or_insert_with(hist);
        for &v in &self.few {
            h.saturating_record(v);
        }
        self.few.clear();
        self.spilled = true;
    }
    /// Number of values.
    pub fn len(&self) -> u64 {
        match &self.hist {
            Some(h) if self.spilled => h.len(),
            _ => self.few.len() as u64,
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
            Some(h) if self.spilled => h.value_at_quantile(q),
            _ => list_quantile(&mut self.few, q),
        }
    }
    /// Forget every value (a spilled histogram is kept, cleared, for the next overflow).
    pub fn reset(&mut self) {
        if self.spilled {
            if let Some(h) = &mut self.hist {
                h.reset();
            }
        }
        self.spilled = false;
        self.few.clear();
    }
}

/// Quantile `q` of listed microsecond values as the histogram would give it: the same rank
/// rule as hdrhistogram 7.5 (the ceil(q n)-th smallest, at least the first), reported as the
/// top of its bucket (the bottom for q = 0); 0 when empty.
fn list_quantile(v: &mut [u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0; // as the histogram answers when empty
    }
    let (_, &mut x, _) = v.select_nth_unstable(rank(q, v.len()));
    bucket_value(q, x)
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
pub struct Lat {
    vals: UsHist,
    sum_ns: f64,
    min_ns: Time,
    max_ns: Time,
}

impl Lat {
    /// Empty.
    pub fn new() -> Self {
        Self { vals: UsHist::new(), sum_ns: 0.0, min_ns: Time::MAX, max_ns: 0 }
    }
    /// Record one value in nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: Time) {
        self.vals.record(us(ns));
        self.sum_ns += to_f64(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
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
            Some(h) if self.vals.spilled => h.value_at_quantile(q),
            _ => list_quantile(&mut self.vals.few.clone(), q),
        }
    }
    /// Quantile in milliseconds (0 when empty), clamped to the exact observed range.
    pub fn q_ms(&self, q: f64) -> f64 {
        if self.is_empty() {
            return 0.0;
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
        let mut out = [0.0; N];
        if self.is_empty() {
            return out;
        }
        if self.vals.spilled {
            for (o, &q) in out.iter_mut().zip(&qs) {
                *o = self.q_ms(q);
            }
            return out;
        }
        let n = self.vals.few.len();
        let mut from = 0;
        for (i, &q) in qs.iter().enumerate() {
            debug_assert!(i == 0 || q >= qs[i - 1], "quantiles in ascending order");
            let k = rank(q, n).max(from);
            let (_, &mut x, _) = self.vals.few[from..].select_nth_unstable(k - from);
            from = k;
            out[i] = self.clamp_ms(bucket_value(q, x));
        }
        out
    }
    /// Exact maximum in milliseconds.
    pub fn max_ms(&self) -> f64 {
        if self.is_empty() { 0.0 } else { self.max_ns as f64 / MILLISECOND as f64 }
    }
    /// Exact mean in milliseconds.
    pub fn mean_ms(&self) -> f64 {
        if self.is_empty() { 0.0 } else { self.sum_ns / self.len() as f64 / MILLISECOND as f64 }
    }
    /// Forget everything (a spilled histogram is kept, cleared, for the next overflow).
    pub fn reset(&mut self) {
        self.vals.reset();
        self.sum_ns = 0.0;
        self.min_ns = Time::MAX;
        self.max_ns = 0;
    }
    /// Latency statistics.
    pub fn stats(&mut self) -> LatencyMs {
        let [p50, p95, p99] = self.quantiles_ms([0.5, 0.95, 0.99]);
        LatencyMs { mean: self.mean_ms(), p50, p95, p99, max: self.max_ms() }
    }
}

impl Default for Lat {
    fn default() -> Self {
        Self::new()
    }
}

/// The histograms' highest trackable value: one day in microseconds.
const HIGH_US: u64 = 86_400_000_000;

fn hist() -> Histogram<u64> {
    // 1 us .. 1 day at 3 significant digits.
    Histogram::new_with_bounds(1, HIGH_US, 3).expect("valid histogram bounds")
}

/// An empty histogram of the same shape, for its bucket boundaries (immutable, built once).
fn shape() -> &'static Histogram<u64> {
    static SHAPE: std::sync::OnceLock<Histogram<u64>> = std::sync::OnceLock::new();
    SHAPE.get_or_init(hist)
}

/// A time or count as `f64`, exactly as `t as f64` rounds it for every value below 2^63 (292
/// years): one signed conversion instruction instead of the unsigned sequence.
#[inline(always)]
pub(crate) fn to_f64(t: Time) -> f64 {
    debug_assert!(t < 1 << 63);
    t as i64 as f64
}

fn us(t: Time) -> u64 {
    (t / MICROSECOND).max(1)
}

#[derive(Debug, Clone)]
struct ClassAcc {
    outcomes: Tally,
    latency: Lat,
    good: u64,
    fresh_good: u64,
    missed: u64,
    staleness: Lat,
    stale_wrong: u64,
    orders: u64,
    substitutions: u64,
    refunds: u64,
    lost: u64,
    slot_wait_ns: f64,
    slot_waits: u64,
    conn_wait_ns: f64,
    conn_waits: u64,
}

impl ClassAcc {
    fn new() -> Self {
        Self {
            outcomes: Tally::default(),
            latency: Lat::new(),
            good: 0,
            fresh_good: 0,
            missed: 0,
            staleness: Lat::new(),
            stale_wrong: 0,
            orders: 0,
            substitutions: 0,
            refunds: 0,
            lost: 0,
            slot_wait_ns: 0.0,
            slot_waits: 0,
            conn_wait_ns: 0.0,
            conn_waits: 0,
        }
    }
}

#[derive(Debug, Clone)]
struct WindowClass {
    offered: u64,
    outcomes: Tally,
    good: u64,
    missed: u64,
    cost: f64,
    latency: Lat,
    staleness: Lat,
    stale_wrong: u64,
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WindowRow {
    /// Policy label.
    pub policy: String,
    /// Window start, seconds.
    pub t_s: f64,
    /// Class.
    pub class: String,
    /// Arrivals.
    pub offered: u64,
    /// Outcome counts of requests that finished in the window.
    pub ok: u64,
    /// Errors.
    pub error: u64,
    /// Timeouts.
    pub timeout: u64,
    /// Rejections.
    pub rejected: u64,
    /// Short circuits.
    pub short_circuited: u64,
    /// Fallbacks.
    pub fallback: u64,
    /// Answered within the deadline, per second.
    pub goodput_per_s: f64,
    /// Fallbacks per second.
    pub fallback_per_s: f64,
    /// Responses after the deadline (absent in files from older versions: 0).
    #[serde(default)]
    pub deadline_missed: u64,
    /// Business cost of the requests that finished in the window.
    #[serde(default)]
    pub business_cost: f64,
    /// Gateway latency median, ms.
    pub latency_p50_ms: f64,
    /// Gateway latency p95, ms.
    pub latency_p95_ms: f64,
    /// Staleness p95 of fallbacks, ms.
    pub staleness_p95_ms: f64,
    /// Wrong fallbacks.
    pub stale_wrong: u64,
    /// Dependency calls started, per second.
    pub dep_calls_per_s: f64,
    /// Dependency calls in flight (time-weighted mean, fleet-wide).
    pub dep_in_flight: f64,
    /// Dependency-produced latency median, ms.
    pub dep_latency_p50_ms: f64,
    /// Dependency-produced latency p95, ms.
    pub dep_latency_p95_ms: f64,
    /// Worker slots in use per instance (time-weighted mean).
    pub workers_busy: f64,
    /// Pool connections in use per instance (time-weighted mean).
    pub pool_busy: f64,
    /// Fraction of instance-time the breaker was open.
    pub breaker_open: f64,
    /// Fraction of instance-time the breaker was half-open.
    pub breaker_half_open: f64,
    /// Mean limit across instances at the window's end (0 = no limiter).
    pub limit: f64,
}

/// Static facts the recorder needs.
#[derive(Debug, Clone)]
pub struct RecorderSetup {
    /// Policy label.
    pub policy: String,
    /// Class names.
    pub classes: Vec<String>,
    /// Class deadlines.
    pub deadlines: Vec<Time>,
    /// Gateway instances.
    pub instances: u32,
    /// Worker slots per instance.
    pub slots: u32,
    /// Pool connections per instance.
    pub connections: u32,
    /// Warm-up end.
    pub warmup: Time,
    /// Horizon.
    pub horizon: Time,
    /// Window width.
    pub window: Time,
    /// The stack has a breaker layer.
    pub has_breaker: bool,
    /// The stack has a limiter layer.
    pub has_limit: bool,
    /// Business costs (substitution, refund, lost order).
    pub costs: (f64, f64, f64),
    /// Keep per-window figures for the time series. Without them the recorder still counts
    /// dependency calls per window (the summary's throughput CV needs them) but skips the
    /// window latency and outcome records and builds no rows; the summary is the same.
    pub timeseries: bool,
}

/// See the module docs.
pub struct Recorder {
    s: RecorderSetup,
    classes: Vec<ClassAcc>,
    win: Vec<WindowClass>,
    win_dep_latency: Lat,
    win_dep_calls: u64,
    window_start: Time,
    rows: Vec<WindowRow>,
    window_calls: Vec<u64>,
    dep_calls: u64,
    dep_abandoned: u64,
    dep_latency: Lat,
    dep_in_flight: Gauge,
    workers: Vec<Gauge>,
    pool: Vec<Gauge>,
    open: Gauge,
    half_open: Gauge,
    limit_sum: Gauge,
    limits: Vec<f64>,
    breaker_states: Vec<BreakerState>,
    reopened_after_close: Vec<bool>,
    transitions: u64,
    cycles: u64,
    win_integrals: [f64; 5],
    calls_by_requests: u64,
    requests_calling: u64,
    found_in_flight: Vec<u64>,
    per_instance: Vec<Tally>,
}

impl Recorder {
    /// A recorder for one run.
    pub fn new(s: RecorderSetup) -> Self {
        let n = s.instances as usize;
        let warm = s.warmup;
        Self {
            classes: (0..s.classes.len()).map(|_| ClassAcc::new()).collect(),
            win: (0..s.classes.len()).map(|_| WindowClass::new()).collect(),
            win_dep_latency: Lat::new(),
            win_dep_calls: 0,
            window_start: 0,
            rows: Vec::new(),
            window_calls: Vec::new(),
            dep_calls: 0,
            dep_abandoned: 0,
            dep_latency: Lat::new(),
            dep_in_flight: Gauge::new(0.0, warm, f64::INFINITY),
            workers: vec![Gauge::new(0.0, warm, s.slots as f64); n],
            pool: vec![Gauge::new(0.0, warm, s.connections as f64); n],
            open: Gauge::new(0.0, warm, f64::INFINITY),
            half_open: Gauge::new(0.0, warm, f64::INFINITY),
            limit_sum: Gauge::new(0.0, warm, f64::INFINITY),
            limits: vec![0.0; n],
            breaker_states: vec![BreakerState::Closed; n],
            reopened_after_close: vec![true; n],
            transitions: 0,
            cycles: 0,
            win_integrals: [0.0; 5],
            calls_by_requests: 0,
            requests_calling: 0,
            found_in_flight: vec![0; FOUND_BUCKETS],
            per_instance: vec![Tally::default(); n],
            s,
        }
    }

    fn measured(&self, arrived: Time) -> bool {
        arrived >= self.s.warmup
    }

    /// A request arrived.
    pub fn arrival(&mut self, _now: Time, class: usize) {
        // Counted with or without a time series: only the rows read it, and one increment is
        // all skipping it would save.
        self.win[class].offered += 1;
    }

    /// A worker-slot wait ended (granted or not).
    pub fn slot_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        if self.measured(arrived) {
            let c = &mut self.classes[class];
            c.slot_wait_ns += to_f64(waited);
            c.slot_waits += 1;
        }
    }

    /// A connection wait ended (granted or not).
    pub fn conn_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        if self.measured(arrived) {
            let c = &mut self.classes[class];
            c.conn_wait_ns += to_f64(waited);
            c.conn_waits += 1;
        }
    }

    /// A request finished.
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        &mut self,
        now: Time,
        instance: u32,
        class: usize,
        arrived: Time,
        outcome: Outcome,
        staleness: Option<(Time, bool)>,
        order: OrderEffect,
        dependency_calls: u32,
    ) {
        let latency = now - arrived;
        let answered = matches!(outcome, Outcome::Ok | Outcome::Fallback);
        let in_time = latency <= self.s.deadlines[class];
        if self.s.timeseries {
            let w = &mut self.win[class];
            w.outcomes.bump(outcome);
            w.latency.record(latency);
            if answered && in_time {
                w.good += 1;
            }
            w.missed += !in_time as u64;
            let (cs, cr, cl) = self.s.costs;
            // At most one of the three holds; adding nothing leaves the (non-negative) sum as is.
            if order.substitution {
                w.cost += cs;
            } else if order.refund {
                w.cost += cr;
            } else if order.lost {
                w.cost += cl;
            }
            if let Some((age, wrong)) = staleness {
                w.staleness.record(age);
                w.stale_wrong += wrong as u64;
            }
        }
        if !self.measured(arrived) {
            return;
        }
        self.per_instance[instance as usize].bump(outcome);
        if dependency_calls > 0 {
            self.calls_by_requests += dependency_calls as u64;
            self.requests_calling += 1;
        }
        let c = &mut self.classes[class];
        c.outcomes.bump(outcome);
        c.latency.record(latency);
        if answered && in_time {
            c.good += 1;
        }
        if outcome == Outcome::Ok && in_time {
            c.fresh_good += 1;
        }
        if !in_time {
            c.missed += 1;
        }
        if let Some((age, wrong)) = staleness {
            c.staleness.record(age);
            c.stale_wrong += wrong as u64;
        }
        c.orders += order.order as u64;
        c.substitutions += order.substitution as u64;
        c.refunds += order.refund as u64;
        c.lost += order.lost as u64;
    }

    /// A dependency call started; `in_flight` is the fleet-wide count after it.
    pub fn dep_start(&mut self, now: Time, in_flight: u64) {
        self.win_dep_calls += 1;
        if now >= self.s.warmup {
            self.dep_calls += 1;
            // The calls this one found there: the count after it, minus itself.
            let found = (in_flight.saturating_sub(1) as usize).min(FOUND_BUCKETS - 1);
            self.found_in_flight[found] += 1;
        }
        self.dep_in_flight.set(now, to_f64(in_flight));
    }

    /// A dependency call ended after `latency` of the dependency's own time.
    pub fn dep_end(&mut self, now: Time, latency: Time, abandoned: bool, in_flight: u64) {
        if self.s.timeseries {
            self.win_dep_latency.record(latency);
        }
        if now >= self.s.warmup {
            self.dep_latency.record(latency);
            self.dep_abandoned += abandoned as u64;
        }
        self.dep_in_flight.set(now, to_f64(in_flight));
    }

    /// Worker slots in use on an instance changed.
    pub fn workers(&mut self, now: Time, instance: u32, in_use: u32) {
        self.workers[instance as usize].set(now, in_use as f64);
    }

    /// Pool connections in use on an instance changed.
    pub fn pool(&mut self, now: Time, instance: u32, in_use: u32) {
        self.pool[instance as usize].set(now, in_use as f64);
    }

    /// An instance's (first) breaker changed state.
    pub fn breaker(&mut self, now: Time, instance: u32, to: BreakerState) {
        let i = instance as usize;
        let from = self.breaker_states[i];
        if from == to {
            return;
        }
        self.breaker_states[i] = to;
        let count = |s: BreakerState| if s == BreakerState::Open { 1.0 } else { 0.0 };
        let half = |s: BreakerState| {
            if s == BreakerState::HalfOpen { 1.0 } else { 0.0 }
        };
        self.open.add(now, count(to) - count(from));
        self.half_open.add(now, half(to) - half(from));
        let measured = now >= self.s.warmup;
        if measured {
            self.transitions += 1;
        }
        match to {
            BreakerState::Open => {
                if !self.reopened_after_close[i] && measured {
                    self.cycles += 1;
                }
                self.reopened_after_close[i] = true;
            }
            BreakerState::Closed => self.reopened_after_close[i] = false,
            BreakerState::HalfOpen => {}
        }
    }

    /// An instance's (first) limiter changed its limit.
    pub fn limit(&mut self, now: Time, instance: u32, limit: f64) {
        let i = instance as usize;
        let delta = limit - self.limits[i];
        self.limits[i] = limit;
        if delta != 0.0 {
            self.limit_sum.add(now, delta);
        }
    }

    fn fleet_integral(gauges: &mut [Gauge], now: Time) -> f64 {
        gauges.iter_mut().map(|g| g.integral(now)).sum()
    }

    /// Close the window ending at `now` and start the next.
    pub fn tick(&mut self, now: Time) {
        let width = (now - self.window_start).max(1) as f64;
        let secs = width / SECOND as f64;
        let n = self.s.instances as f64;
        let ints = [
            self.dep_in_flight.integral(now),
            Self::fleet_integral(&mut self.workers, now),
            Self::fleet_integral(&mut self.pool, now),
            self.open.integral(now),
            self.half_open.integral(now),
        ];
        // Gauges integrate only after warm-up; windows inside warm-up use instantaneous values.
        let mean = |k: usize, s: &Self| -> f64 {
            if now <= s.s.warmup {
                match k {
                    0 => s.dep_in_flight.value,
                    1 => s.workers.iter().map(|g| g.value).sum::<f64>(),
                    2 => s.pool.iter().map(|g| g.value).sum::<f64>(),
                    3 => s.open.value,
                    _ => s.half_open.value,
                }
            } else {
                let from = s.window_start.max(s.s.warmup);
                (ints[k] - s.win_integrals[k]) / (now - from).max(1) as f64
            }
        };
        let vals: Vec<f64> = (0..5).map(|k| mean(k, self)).collect();
        // The gauges are integrated at every tick either way: splitting an integral at the
        // window edges changes its last bits, and the summary must not depend on the rows.
        self.win_integrals = ints;
        let limit = self.limits.iter().sum::<f64>() / n;
        let [dep_p50, dep_p95] =
            if self.s.timeseries { self.win_dep_latency.quantiles_ms([0.5, 0.95]) } else { [0.0; 2] };
        let classes = if self.s.timeseries { self.s.classes.as_slice() } else { &[] };
        for (ci, name) in classes.iter().enumerate() {
            let w = &mut self.win[ci];
            let [latency_p50_ms, latency_p95_ms] = w.latency.quantiles_ms([0.5, 0.95]);
            let [staleness_p95_ms] = w.staleness.quantiles_ms([0.95]);
            let o = w.outcomes.outcomes();
            self.rows.push(WindowRow {
                policy: self.s.policy.clone(),
                t_s: self.window_start as f64 / SECOND as f64,
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
                dep_calls_per_s: self.win_dep_calls as f64 / secs,
                dep_in_flight: vals[0],
                dep_latency_p50_ms: dep_p50,
                dep_latency_p95_ms: dep_p95,
                workers_busy: vals[1] / n,
                pool_busy: vals[2] / n,
                breaker_open: vals[3] / n,
                breaker_half_open: vals[4] / n,
                limit: if self.s.has_limit { limit } else { 0.0 },
            });
        }
        if self.window_start >= self.s.warmup {
            self.window_calls.push(self.win_dep_calls);
        }
        for w in &mut self.win {
            w.reset();
        }
        self.win_dep_latency.reset();
        self.win_dep_calls = 0;
        self.window_start = now;
    }

    /// The time-series rows so far.
    pub fn rows(&self) -> &[WindowRow] {
        &self.rows
    }

    /// Take the time-series rows.
    pub fn take_rows(&mut self) -> Vec<WindowRow> {
        std::mem::take(&mut self.rows)
    }

    /// Summarise at the horizon.
    pub fn summary(&mut self, now: Time, events: u64, in_flight_at_end: u64) -> RunSummary {
        let span = (now.max(self.s.warmup + 1) - self.s.warmup) as f64;
        let secs = span / SECOND as f64;
        let (cs, cr, cl) = self.s.costs;
        let classes: Vec<ClassSummary> = self
            .classes
            .iter_mut()
            .zip(&self.s.classes)
            .map(|(c, name)| {
                let outcomes = c.outcomes.outcomes();
                let n = outcomes.total();
                let ratio = |x: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
                let cost = c.substitutions as f64 * cs + c.refunds as f64 * cr + c.lost as f64 * cl;
                ClassSummary {
                    class: name.clone(),
                    requests: n,
                    outcomes,
                    latency_ms: c.latency.stats(),
                    throughput_per_s: n as f64 / secs,
                    goodput_per_s: c.good as f64 / secs,
                    fresh_goodput_per_s: c.fresh_good as f64 / secs,
                    deadline_missed: c.missed,
                    ok_ratio: ratio(outcomes.ok),
                    fallback_ratio: ratio(outcomes.fallback),
                    goodput_ratio: ratio(c.good),
                    staleness_ms: StalenessMs {
                        p50: c.staleness.q_ms(0.5),
                        p95: c.staleness.q_ms(0.95),
                        max: c.staleness.max_ms(),
                    },
                    stale_wrong: c.stale_wrong,
                    stale_wrong_fraction: if outcomes.fallback == 0 {
                        0.0
                    } else {
                        c.stale_wrong as f64 / outcomes.fallback as f64
                    },
                    orders: c.orders,
                    substitutions: c.substitutions,
                    refunds: c.refunds,
                    lost_orders: c.lost,
                    business_cost: cost,
                    slot_wait_ms_mean: if c.slot_waits == 0 {
                        0.0
                    } else {
                        c.slot_wait_ns / c.slot_waits as f64 / MILLISECOND as f64
                    },
                    conn_wait_ms_mean: if c.conn_waits == 0 {
                        0.0
                    } else {
                        c.conn_wait_ns / c.conn_waits as f64 / MILLISECOND as f64
                    },
                }
            })
            .collect();
        let n = self.s.instances as f64;
        let inst_span = span * n;
        let occupancy = |gs: &mut [Gauge], cap: u32| -> Occupancy {
            let integral: f64 = gs.iter_mut().map(|g| g.integral(now)).sum();
            let sat: f64 = gs.iter_mut().map(|g| g.saturated(now) as f64).sum();
            Occupancy {
                capacity: cap as u64,
                mean: integral / inst_span,
                peak: gs.iter().map(|g| g.peak as u64).max().unwrap_or(0),
                saturated_fraction: sat / inst_span,
            }
        };
        let resources = ResourceSummary {
            workers: occupancy(&mut self.workers, self.s.slots),
            pool: occupancy(&mut self.pool, self.s.connections),
        };
        let breaker = self.s.has_breaker.then(|| BreakerSummary {
            transitions: self.transitions,
            transitions_per_min: self.transitions as f64 / (secs / 60.0),
            open_fraction: self.open.integral(now) / inst_span,
            half_open_fraction: self.half_open.integral(now) / inst_span,
            cycles: self.cycles,
        });
        let limit = self.s.has_limit.then(|| LimitSummary {
            mean: self.limit_sum.integral(now) / inst_span,
            min: self.limit_sum.low / n,
            max: self.limit_sum.peak / n,
        });
        let calls = &self.window_calls;
        let cv = if calls.len() < 2 {
            0.0
        } else {
            let m = calls.iter().sum::<u64>() as f64 / calls.len() as f64;
            let var = calls.iter().map(|&c| (c as f64 - m).powi(2)).sum::<f64>() / (calls.len() - 1) as f64;
            if m > 0.0 { var.sqrt() / m } else { 0.0 }
        };
        let business_cost = classes.iter().map(|c| c.business_cost).sum();
        RunSummary {
            policy: self.s.policy.clone(),
            classes,
            dependency: DependencySummary {
                calls: self.dep_calls,
                calls_per_s: self.dep_calls as f64 / secs,
                peak_in_flight: self.dep_in_flight.peak as u64,
                latency_ms: self.dep_latency.stats(),
                throughput_cv: cv,
                abandoned: self.dep_abandoned,
                mean_in_flight: self.dep_in_flight.integral(now) / span,
                found_in_flight: self.found_in_flight.clone(),
            },
            breaker,
            limit,
            resources,
            amplification: if self.requests_calling == 0 {
                0.0
            } else {
                self.calls_by_requests as f64 / self.requests_calling as f64
            },
            business_cost,
            per_instance: self.per_instance.iter().map(Tally::outcomes).collect(),
            events,
            in_flight_at_end,
        }
    }
}

/// Outcome counts indexed by `Outcome as usize`: one indexed increment per finished
/// request, where a `match` onto named fields compiles to a jump whose target changes with
/// every outcome.
#[derive(Debug, Clone, Copy, Default)]
struct Tally([u64; 6]);

impl Tally {
    #[inline]
    fn bump(&mut self, outcome: Outcome) {
        self.0[outcome as usize] += 1;
    }

    fn outcomes(&self) -> Outcomes {
        let n = |o: Outcome| self.0[o as usize];
        Outcomes {
            ok: n(Outcome::Ok),
            error: n(Outcome::Error),
            timeout: n(Outcome::Timeout),
            rejected: n(Outcome::Rejected),
            short_circuited: n(Outcome::ShortCircuited),
            fallback: n(Outcome::Fallback),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
    fn list_and_spilled_forms_match_the_hdr_histogram() {
        // The oracle is hdrhistogram itself, fed the same values; sizes on both sides of the
        // spill threshold, then a reset and a smaller batch.
        let mut rng = crate::engine::stream(5, "test/lat");
        for n in [1usize, 2, 7, 100, EXACT, EXACT + 1, 3 * EXACT] {
            let mut l = Lat::new();
            let mut h = hist();
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
    fn dependency_occupancy_by_hand() {
        let mut r = Recorder::new(RecorderSetup {
            policy: "p".into(),
            classes: vec!["c".into()],
            deadlines: vec![SECOND],
            instances: 1,
            slots: 1,
            connections: 1,
            warmup: 0,
            horizon: 40,
            window: 40,
            has_breaker: false,
            has_limit: false,
            costs: (0.0, 0.0, 0.0),
            timeseries: true,
        });
        // Calls start at 0 and 10 and end at 20 and 30: one call on [0,10), two on [10,20),
        // one on [20,30), none on [30,40): mean (10 + 20 + 10) / 40 = 1.
        r.dep_start(0, 1);
        r.dep_start(10, 2);
        r.dep_end(20, 20, false, 1);
        r.dep_end(30, 20, false, 0);
        let d = r.summary(40, 0, 0).dependency;
        assert_eq!(d.mean_in_flight, 1.0);
        // The first found no other call, the second found one.
        assert_eq!(&d.found_in_flight[..3], &[1, 1, 0]);
        assert_eq!(d.found_in_flight.len(), FOUND_BUCKETS);
    }
}
