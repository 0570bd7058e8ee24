//! The recorder: what the world reports at each happening, accumulated into a run's summary.

use super::fallback::FallbackUse;
use super::gauge::Gauge;
use super::hist::Lat;
use super::summary::*;
use super::to_f64;
use super::window::{Readings, WindowRow, Windows};
use crate::breaker_state::BreakerState;
use crate::engine::{MILLISECOND, SECOND, Time};

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

/// One class's figures over the measured span.
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
    /// Fallback answers of a class whose fallback is not the catalogue's.
    answers: u64,
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
            answers: 0,
            slot_wait_ns: 0.0,
            slot_waits: 0,
            conn_wait_ns: 0.0,
            conn_waits: 0,
        }
    }
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
    /// Per class: what its fallback answers are and cost.
    pub fallbacks: Vec<FallbackUse>,
    /// Keep per-window figures for the time series. Without them the recorder still counts
    /// dependency calls per window (the summary's throughput CV needs them) but skips the
    /// window latency and outcome records and builds no rows; the summary is the same.
    pub timeseries: bool,
}

/// See the module docs.
pub struct Recorder {
    s: RecorderSetup,
    classes: Vec<ClassAcc>,
    win: Windows,
    dep_calls: u64,
    dep_abandoned: u64,
    dep_cancelled: u64,
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
            win: Windows::new(s.classes.len()),
            dep_calls: 0,
            dep_abandoned: 0,
            dep_cancelled: 0,
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
        self.win.classes[class].offered += 1;
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
        let fallback = self.s.fallbacks[class];
        let answered = match outcome {
            Outcome::Ok => true,
            Outcome::Fallback => !matches!(fallback, FallbackUse::Closed(_)),
            _ => false,
        };
        // A catalogue fallback costs nothing per use; its costs come with the order.
        let use_cost = if outcome == Outcome::Fallback && fallback != FallbackUse::Catalogue {
            Some(fallback.cost())
        } else {
            None
        };
        let in_time = latency <= self.s.deadlines[class];
        if self.s.timeseries {
            let w = &mut self.win.classes[class];
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
            if let Some(c) = use_cost {
                w.cost += c;
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
        c.answers += use_cost.is_some() as u64;
    }

    /// A dependency call started; `in_flight` is the fleet-wide count after it.
    pub fn dep_start(&mut self, now: Time, in_flight: u64) {
        self.win.dep_calls += 1;
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
            self.win.dep_latency.record(latency);
        }
        if now >= self.s.warmup {
            self.dep_latency.record(latency);
            self.dep_abandoned += abandoned as u64;
        }
        self.dep_in_flight.set(now, to_f64(in_flight));
    }

    /// An abandoned call was cancelled at the dependency before its answer; `in_flight` is
    /// the fleet-wide count after it left. It counts as abandoned too.
    pub fn dep_cancelled(&mut self, now: Time, in_flight: u64) {
        if now >= self.s.warmup {
            self.dep_abandoned += 1;
            self.dep_cancelled += 1;
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
        let integrals = [
            self.dep_in_flight.integral(now),
            Self::fleet_integral(&mut self.workers, now),
            Self::fleet_integral(&mut self.pool, now),
            self.open.integral(now),
            self.half_open.integral(now),
        ];
        let levels = [
            self.dep_in_flight.value,
            self.workers.iter().map(|g| g.value).sum::<f64>(),
            self.pool.iter().map(|g| g.value).sum::<f64>(),
            self.open.value,
            self.half_open.value,
        ];
        let limit = self.limits.iter().sum::<f64>() / self.s.instances as f64;
        self.win.close(now, &self.s, Readings { integrals, levels, limit });
    }

    /// The time-series rows so far.
    pub fn rows(&self) -> &[WindowRow] {
        self.win.rows()
    }

    /// Take the time-series rows.
    pub fn take_rows(&mut self) -> Vec<WindowRow> {
        self.win.take_rows()
    }

    /// Summarise at the horizon.
    pub fn summary(&mut self, now: Time, events: u64, in_flight_at_end: u64) -> RunSummary {
        let span = (now.max(self.s.warmup + 1) - self.s.warmup) as f64;
        let secs = span / SECOND as f64;
        let costs = self.s.costs;
        let classes: Vec<ClassSummary> = self
            .classes
            .iter_mut()
            .zip(&self.s.classes)
            .zip(&self.s.fallbacks)
            .map(|((c, name), &f)| c.summary(name, secs, costs, f))
            .collect();
        let n = self.s.instances as f64;
        let inst_span = span * n;
        let resources = ResourceSummary {
            workers: occupancy(&mut self.workers, self.s.slots, now, inst_span),
            pool: occupancy(&mut self.pool, self.s.connections, now, inst_span),
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
        let business_cost = classes.iter().map(|c| c.business_cost).sum();
        RunSummary {
            policy: self.s.policy.clone(),
            classes,
            dependency: DependencySummary {
                calls: self.dep_calls,
                calls_per_s: self.dep_calls as f64 / secs,
                peak_in_flight: self.dep_in_flight.peak as u64,
                latency_ms: self.dep_latency.stats(),
                throughput_cv: self.win.throughput_cv(),
                abandoned: self.dep_abandoned,
                cancelled: self.dep_cancelled,
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

/// Occupancy of one resource kind over `inst_span` instance-nanoseconds up to `now`.
fn occupancy(gs: &mut [Gauge], cap: u32, now: Time, inst_span: f64) -> Occupancy {
    let integral: f64 = gs.iter_mut().map(|g| g.integral(now)).sum();
    let sat: f64 = gs.iter_mut().map(|g| g.saturated(now) as f64).sum();
    Occupancy {
        capacity: cap as u64,
        mean: integral / inst_span,
        peak: gs.iter().map(|g| g.peak as u64).max().unwrap_or(0),
        saturated_fraction: sat / inst_span,
    }
}

impl ClassAcc {
    /// This class's summary over `secs` measured seconds; `costs` are (substitution, refund,
    /// lost order); `fallback` says what its fallback answers are.
    fn summary(&mut self, name: &str, secs: f64, (cs, cr, cl): (f64, f64, f64), fallback: FallbackUse) -> ClassSummary {
        let c = self;
        let outcomes = c.outcomes.outcomes();
        let n = outcomes.total();
        let ratio = |x: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
        let mean_ms = |ns: f64, k: u64| if k == 0 { 0.0 } else { ns / k as f64 / MILLISECOND as f64 };
        let answers = fallback.answers(c.answers);
        let order_cost = c.substitutions as f64 * cs + c.refunds as f64 * cr + c.lost as f64 * cl;
        ClassSummary {
            class: name.to_string(),
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
            business_cost: answers.map_or(order_cost, |a| order_cost + a.cost),
            fallback_answers: answers,
            slot_wait_ms_mean: mean_ms(c.slot_wait_ns, c.slot_waits),
            conn_wait_ms_mean: mean_ms(c.conn_wait_ns, c.conn_waits),
        }
    }
}

/// Outcome counts indexed by `Outcome as usize`: one indexed increment per finished
/// request, where a `match` onto named fields compiles to a jump whose target changes with
/// every outcome.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tally([u64; 6]);

impl Tally {
    #[inline]
    pub(super) fn bump(&mut self, outcome: Outcome) {
        self.0[outcome as usize] += 1;
    }

    pub(super) fn outcomes(&self) -> Outcomes {
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
            costs: (0.0, 0.0, 0.0),
            fallbacks: vec![FallbackUse::Catalogue],
            timeseries: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_occupancy_by_hand() {
        let mut r = Recorder::new(RecorderSetup { timeseries: true, ..RecorderSetup::one_class(40, 40) });
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

    /// One dependency call every 10 ms, each over at once, 10 s windows, no warm-up.
    fn cv_of_calls_every_10ms(horizon: Time) -> f64 {
        let window = 10 * SECOND;
        let mut r = Recorder::new(RecorderSetup::one_class(horizon, window));
        let step = 10 * MILLISECOND;
        for k in 1..=horizon / step {
            let t = k * step;
            r.dep_start(t, 1);
            r.dep_end(t, 0, false, 0);
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
}
