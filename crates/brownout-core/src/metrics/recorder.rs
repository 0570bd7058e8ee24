//! The recorder: what the world reports at each happening, accumulated into a run's summary.

use super::cause::{Cause, LayerKind};
use super::class_acc::{ClassAcc, Judged, Tally};
use super::dep_acc::{Blame, GraphAcc, GraphEvent, PlanCallInfo};
use super::fallback::FallbackUse;
use super::gauge::Gauge;
use super::hist::RunLat;
use super::phases::Record;
use super::queue::QueueAcc;
use super::recovery::{RecoveryRule, Tracker};
use super::summary::*;
use super::to_f64;
use super::window::{Readings, RowSink, WindowRow, Windows};
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

/// One finished request, as the world reports it to the recorder: everything a figure about
/// a request is taken from, so a new per-request figure is a new field here.
#[derive(Debug, Clone, Copy)]
pub struct Finished {
    /// When it finished.
    pub now: Time,
    /// The gateway instance that served it.
    pub instance: u32,
    /// Its class, as an index into the scenario's classes.
    pub class: usize,
    /// When it arrived.
    pub arrived: Time,
    /// How it ended.
    pub outcome: Outcome,
    /// A fallback answer's value: its age and whether the item had changed since (stale-wrong).
    pub staleness: Option<(Time, bool)>,
    /// Why it failed: `None` for an ok answer; a fallback answer carries the cause of the
    /// failure it answered.
    pub cause: Option<Cause>,
    /// What the business model concluded about it.
    pub order: OrderEffect,
    /// Dependency calls it made (every attempt and hedge).
    pub dependency_calls: u32,
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
    /// The stack has a concurrency limiter (fixed or adaptive): its queue is summarised.
    pub has_limiter: bool,
    /// The stack has a tiered bulkhead: its queue is summarised.
    pub has_bulkhead: bool,
    /// Business costs (substitution, refund, lost order).
    pub costs: (f64, f64, f64),
    /// Per class: what its fallback answers are and cost.
    pub fallbacks: Vec<FallbackUse>,
    /// Keep per-window figures for the time series. Without them the recorder still counts
    /// dependency calls per window (the summary's throughput CV needs them) but skips the
    /// window latency and outcome records and builds no rows; the summary is the same.
    pub timeseries: bool,
    /// Judge recovery and time degraded per window (`metrics/recovery.rs`): the whole run's
    /// recorder does, for itself and every phase; a phase's recorder does not.
    pub recovery: Option<RecoveryRule>,
}

/// See the module docs.
pub struct Recorder {
    s: RecorderSetup,
    classes: Vec<ClassAcc>,
    win: Windows,
    dep_calls: u64,
    dep_abandoned: u64,
    dep_cancelled: u64,
    dep_latency: RunLat,
    dep_wait: RunLat,
    dep_time: RunLat,
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
    found_in_flight: [u64; FOUND_BUCKETS],
    per_instance: Vec<Tally>,
    limiter_queue: QueueAcc,
    bulkhead_queue: QueueAcc,
    pool_waiting: Vec<Gauge>,
    /// Pool connections taken after warm-up.
    conns_taken: u64,
    /// New connections opened after warm-up and their set-up time (ns), once a pool with a
    /// `connect` opened one (None before: no connection figures).
    opened: Option<(u64, f64)>,
    /// Per-window in-time ratios judged for recovery and time degraded.
    track: Option<Tracker>,
    /// A service graph's figures (empty without one).
    graph: GraphAcc,
}

impl Recorder {
    /// A recorder for one run.
    pub fn new(s: RecorderSetup) -> Self {
        Self::with_phases(s, &[])
    }

    /// A recorder for one run whose recovery tracker also follows the phases `spans`.
    pub(super) fn with_phases(s: RecorderSetup, spans: &[(Time, Time)]) -> Self {
        let n = s.instances as usize;
        let warm = s.warmup;
        Self {
            classes: vec![ClassAcc::default(); s.classes.len()],
            win: Windows::new(s.classes.len()),
            dep_calls: 0,
            dep_abandoned: 0,
            dep_cancelled: 0,
            dep_latency: RunLat::empty(),
            dep_wait: RunLat::empty(),
            dep_time: RunLat::empty(),
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
            found_in_flight: [0; FOUND_BUCKETS],
            per_instance: vec![Tally::default(); n],
            limiter_queue: QueueAcc::default(),
            bulkhead_queue: QueueAcc::default(),
            pool_waiting: vec![Gauge::new(0.0, warm, f64::INFINITY); n],
            conns_taken: 0,
            opened: None,
            track: s.recovery.map(|r| Tracker::new(r, s.window, warm, &s.deadlines, spans)),
            graph: GraphAcc::default(),
            s,
        }
    }

    fn measured(&self, arrived: Time) -> bool {
        arrived >= self.s.warmup
    }

    /// The queue statistics of layers of `kind`, if they are kept.
    fn queue_of(&mut self, kind: LayerKind) -> Option<&mut QueueAcc> {
        match kind {
            LayerKind::Limiter => Some(&mut self.limiter_queue),
            LayerKind::Bulkhead => Some(&mut self.bulkhead_queue),
            _ => None,
        }
    }

    /// Take the per-instance levels (worker slots, pool connections, pool waiters) of
    /// `other`, a recorder that saw every change of them: for a phase's recorder that skipped
    /// the changes before its start (`Recorders`), which integrate nothing and set no peak.
    pub(super) fn copy_instance_levels(&mut self, other: &Recorder) {
        let pairs = [
            (&mut self.workers, &other.workers),
            (&mut self.pool, &other.pool),
            (&mut self.pool_waiting, &other.pool_waiting),
        ];
        for (mine, theirs) in pairs {
            for (g, o) in mine.iter_mut().zip(theirs) {
                g.hold(o.value);
            }
        }
    }

    fn fleet_integral(gauges: &mut [Gauge], now: Time) -> f64 {
        gauges.iter_mut().map(|g| g.integral(now)).sum()
    }

    /// The time-series rows kept so far (none once a sink is set).
    pub fn rows(&self) -> &[WindowRow] {
        self.win.rows()
    }

    /// The recovery tracker, which judged every window up to the last summary.
    pub(super) fn tracker(&self) -> Option<&Tracker> {
        self.track.as_ref()
    }

    /// Time-series rows held in memory (0 between windows with a sink).
    pub fn rows_held(&self) -> usize {
        self.win.held()
    }
}

/// A run without phases records straight into the whole run's recorder.
impl Record for Recorder {
    fn build(setup: RecorderSetup, spans: &[(Time, Time)]) -> Self {
        assert!(spans.is_empty(), "a lone Recorder has no phases: use Recorders");
        Recorder::new(setup)
    }

    /// A request arrived.
    fn arrival(&mut self, now: Time, class: usize) {
        // Counted with or without a time series: only the rows read it, and one increment is
        // all skipping it would save.
        let w = &mut self.win.classes[class];
        (w.offered, w.in_flight) = (w.offered + 1, w.in_flight + 1);
        if let Some(t) = &mut self.track {
            t.arrival(now, class);
        }
    }

    /// A worker-slot wait ended (granted or not).
    fn slot_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        if self.measured(arrived) {
            let c = &mut self.classes[class];
            c.slot_wait_ns += to_f64(waited);
            c.slot_waits += 1;
        }
    }

    /// A connection wait ended (granted or not).
    fn conn_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        if self.measured(arrived) {
            let c = &mut self.classes[class];
            c.conn_wait_ns += to_f64(waited);
            c.conn_waits += 1;
        }
    }

    /// An attempt reached an admission layer of `kind`.
    fn layer_offered(&mut self, now: Time, kind: LayerKind) {
        if now >= self.s.warmup
            && let Some(q) = self.queue_of(kind)
        {
            q.offer();
        }
    }

    /// An attempt was parked in the queue of a layer of `kind`.
    fn layer_queued(&mut self, now: Time, kind: LayerKind) {
        if now >= self.s.warmup
            && let Some(q) = self.queue_of(kind)
        {
            q.queue();
        }
    }

    /// An attempt parked at `parked` left the queue of a layer of `kind` at `now`.
    fn layer_waited(&mut self, now: Time, parked: Time, kind: LayerKind) {
        if parked >= self.s.warmup
            && let Some(q) = self.queue_of(kind)
        {
            q.waited(now - parked);
        }
    }

    /// The attempts waiting for a pool connection on an instance changed.
    fn pool_waiting(&mut self, now: Time, instance: u32, waiting: u32) {
        self.pool_waiting[instance as usize].set(now, waiting as f64);
    }

    /// A request finished (see [`Finished`]).
    fn finish(&mut self, f: Finished) {
        self.finish_blamed(f, Blame::default());
    }

    /// A request finished in a run with a service graph (see `GraphAcc::finished`).
    fn finish_blamed(&mut self, f: Finished, blame: Blame) {
        let Finished { now, instance, class, arrived, outcome, staleness, cause, order, dependency_calls } = f;
        let latency = now - arrived;
        let w = &mut self.win.classes[class];
        w.in_flight = w.in_flight.saturating_sub(1);
        // The class's fallback is looked up only for a fallback answer. A catalogue fallback
        // costs nothing per use; its costs come with the order.
        let (answered, use_cost) = match outcome {
            Outcome::Ok => (true, None),
            Outcome::Fallback => {
                let fallback = self.s.fallbacks[class];
                (
                    !matches!(fallback, FallbackUse::Closed(_)),
                    (fallback != FallbackUse::Catalogue).then(|| fallback.cost()),
                )
            }
            _ => (false, None),
        };
        let in_time = latency <= self.s.deadlines[class];
        let wrong = staleness.is_some_and(|(_, w)| w);
        if answered
            && in_time
            && !wrong
            && let Some(t) = &mut self.track
        {
            t.in_time(arrived, class);
        }
        if self.s.timeseries {
            w.outcomes.bump(outcome);
            w.latency.record(latency);
            if answered && in_time {
                w.good += 1;
            }
            w.missed += !in_time as u64;
            let (cs, cr, cl) = self.s.costs;
            // At most one of the three holds; adding nothing leaves the (non-negative) sum as
            // is. Most requests have no business effect: one test for all three.
            if order != OrderEffect::default() {
                if order.substitution {
                    w.cost += cs;
                } else if order.refund {
                    w.cost += cr;
                } else if order.lost {
                    w.cost += cl;
                }
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
        // Lateness first, then a wrong answer, then what made it fail: one cause each.
        let cause = match (answered, in_time, wrong) {
            (true, true, false) => None,
            (true, false, _) => Some(Cause::Late),
            (true, true, true) => Some(Cause::WrongAnswer),
            (false, ..) => Some(cause.expect("the world tags every failure with its cause")),
        };
        self.graph.finished(class, latency, cause, blame);
        self.classes[class].record(Judged {
            outcome,
            latency,
            answered,
            in_deadline: in_time,
            cause,
            staleness,
            order,
            costed: use_cost.is_some(),
        });
    }

    /// A request that arrived at `arrived` is still in flight at the horizon `now`. Events at
    /// the horizon have run, so it would finish after `now - arrived`: at or past its deadline
    /// it cannot be in time and is judged `unfinished`; before it, it is left unjudged.
    fn at_horizon(&mut self, now: Time, class: usize, arrived: Time) {
        if self.measured(arrived) {
            let passed = now - arrived >= self.s.deadlines[class];
            self.classes[class].record_at_horizon(passed);
            if passed {
                self.graph.blame(class, None, Cause::Unfinished);
            }
        }
    }

    /// A dependency call started; `in_flight` is the fleet-wide count after it.
    fn dep_start(&mut self, now: Time, in_flight: u64) {
        self.win.dep_calls += 1;
        if now >= self.s.warmup {
            self.dep_calls += 1;
            // The calls this one found there: the count after it, minus itself.
            let found = (in_flight.saturating_sub(1) as usize).min(FOUND_BUCKETS - 1);
            self.found_in_flight[found] += 1;
        }
        self.dep_in_flight.set(now, to_f64(in_flight));
    }

    /// A dependency call ended; `timing` is its (queue wait, service time), None when a full
    /// queue shed it.
    fn dep_end(&mut self, now: Time, timing: Option<(Time, Time)>, abandoned: bool, in_flight: u64) {
        if self.s.timeseries
            && let Some((_, service)) = timing
        {
            self.win.dep_latency.record(service);
        }
        if now >= self.s.warmup {
            if let Some((wait, service)) = timing {
                self.dep_latency.record(service);
                self.dep_wait.record(wait);
                self.dep_time.record(wait.saturating_add(service));
            }
            self.dep_abandoned += abandoned as u64;
        }
        self.dep_in_flight.set(now, to_f64(in_flight));
    }

    /// An abandoned call was cancelled at the dependency before its answer; `in_flight` is
    /// the fleet-wide count after it left. It counts as abandoned too.
    fn dep_cancelled(&mut self, now: Time, in_flight: u64) {
        if now >= self.s.warmup {
            self.dep_abandoned += 1;
            self.dep_cancelled += 1;
        }
        self.dep_in_flight.set(now, to_f64(in_flight));
    }

    fn connection_opened(&mut self, now: Time, setup: Time) {
        let (opened, total) = self.opened.get_or_insert((0, 0.0));
        if now >= self.s.warmup {
            *opened += 1;
            *total += to_f64(setup);
        }
    }

    fn set_graph(&mut self, names: &[String], plans: &[Vec<PlanCallInfo>]) {
        self.graph = GraphAcc::new(names, plans, self.s.warmup);
    }

    fn graph(&mut self, e: GraphEvent) {
        self.graph.apply(e, self.s.warmup);
    }

    /// Worker slots in use on an instance changed.
    #[inline]
    fn workers(&mut self, now: Time, instance: u32, in_use: u32) {
        self.workers[instance as usize].set(now, in_use as f64);
    }

    /// Pool connections in use on an instance changed.
    #[inline]
    fn pool(&mut self, now: Time, instance: u32, in_use: u32) {
        let g = &mut self.pool[instance as usize];
        self.conns_taken += (now >= self.s.warmup && in_use as f64 > g.value) as u64;
        g.set(now, in_use as f64);
    }

    /// An instance's (first) breaker changed state.
    fn breaker(&mut self, now: Time, instance: u32, to: BreakerState) {
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
    fn limit(&mut self, now: Time, instance: u32, limit: f64) {
        let i = instance as usize;
        let delta = limit - self.limits[i];
        self.limits[i] = limit;
        if delta != 0.0 {
            self.limit_sum.add(now, delta);
        }
    }

    /// Every instance's limit when the run starts, as one sum (see `Gauge::start_at`).
    fn start_limits(&mut self, limits: &[f64]) {
        self.limits.copy_from_slice(limits);
        self.limit_sum.start_at(limits.iter().sum());
    }

    /// Close the window ending at `now` and start the next.
    fn tick(&mut self, now: Time) {
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
        if let Some(t) = &mut self.track {
            t.tick(now);
        }
    }

    /// Hand each later window's rows to `sink` as the window closes instead of keeping them.
    fn set_sink(&mut self, sink: Box<dyn RowSink>) {
        self.win.set_sink(sink);
    }

    /// Take the kept time-series rows; drops the sink, which flushes it.
    fn take_rows(&mut self) -> Vec<WindowRow> {
        self.win.take_rows()
    }

    fn summaries(&mut self, now: Time, events: u64, in_flight_at_end: u64) -> (RunSummary, Vec<RunSummary>) {
        (self.summary(now, events, in_flight_at_end), Vec::new())
    }
}

mod summarize;

#[cfg(test)]
mod tests;
