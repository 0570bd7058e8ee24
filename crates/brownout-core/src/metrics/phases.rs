//! The recorder fan-out: the whole run's [`Recorder`] plus one per phase, with the methods the
//! world calls. A phase's recorder is an ordinary `Recorder` whose warm-up is the phase's
//! start, so its figures are the same `RunSummary` as the whole run's; this file only decides
//! what reaches it. Requests count by arrival in `[start, end)` (whenever they finish);
//! gauges, dependency calls, breaker and limit changes by their time, up to `end`, so the
//! phase's summary taken at `end` integrates its gauges over `[start, end)` exactly.
//! Without phases, each method is the whole-run call plus one branch.

use super::cause::{Cause, LayerKind};
use super::recorder::{OrderEffect, Outcome, Recorder, RecorderSetup};
use super::summary::RunSummary;
use super::window::WindowRow;
use crate::breaker_state::BreakerState;
use crate::engine::Time;

/// One phase's recorder and the end of its span.
struct PhaseRec {
    rec: Recorder,
    /// Happenings at or after this time are outside the phase (`Time::MAX` for a phase that
    /// ends at the horizon, whose events at exactly the horizon still count, as in the run).
    cutoff: Time,
    end: Time,
}

/// See the module docs.
pub struct Recorders {
    all: Recorder,
    phases: Vec<PhaseRec>,
}

impl Recorders {
    /// The whole run's recorder from `setup`, and one per `[start, end)` span without a time
    /// series.
    pub fn new(setup: RecorderSetup, spans: &[(Time, Time)]) -> Self {
        let phases = spans
            .iter()
            .map(|&(start, end)| {
                let s = RecorderSetup { warmup: start, horizon: end, timeseries: false, ..setup.clone() };
                let cutoff = if end >= setup.horizon { Time::MAX } else { end };
                PhaseRec { rec: Recorder::new(s), cutoff, end: end.min(setup.horizon) }
            })
            .collect();
        Self { all: Recorder::new(setup), phases }
    }

    /// Apply `f` to every phase recorder that `now` falls before the end of. Without phases
    /// this is one predictable branch, so the whole-run call inlines into the world.
    #[inline]
    fn upto(&mut self, now: Time, f: impl FnMut(&mut Recorder)) {
        if !self.phases.is_empty() {
            each_before(&mut self.phases, now, f);
        }
    }

    /// A request arrived.
    #[inline]
    pub fn arrival(&mut self, now: Time, class: usize) {
        self.all.arrival(now, class);
    }

    /// A worker-slot wait ended (granted or not).
    #[inline]
    pub fn slot_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        self.all.slot_wait(arrived, class, waited);
        self.upto(arrived, |r| r.slot_wait(arrived, class, waited));
    }

    /// A connection wait ended (granted or not).
    #[inline]
    pub fn conn_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        self.all.conn_wait(arrived, class, waited);
        self.upto(arrived, |r| r.conn_wait(arrived, class, waited));
    }

    /// A request finished (see [`Recorder::finish`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn finish(
        &mut self,
        now: Time,
        instance: u32,
        class: usize,
        arrived: Time,
        outcome: Outcome,
        staleness: Option<(Time, bool)>,
        cause: Option<Cause>,
        order: OrderEffect,
        dependency_calls: u32,
    ) {
        self.all.finish(now, instance, class, arrived, outcome, staleness, cause, order, dependency_calls);
        self.upto(arrived, |r| {
            r.finish(now, instance, class, arrived, outcome, staleness, cause, order, dependency_calls)
        });
    }

    /// An attempt reached an admission layer of `kind`.
    #[inline]
    pub fn layer_offered(&mut self, now: Time, kind: LayerKind) {
        self.all.layer_offered(now, kind);
        self.upto(now, |r| r.layer_offered(now, kind));
    }

    /// An attempt was parked in the queue of a layer of `kind`.
    #[inline]
    pub fn layer_queued(&mut self, now: Time, kind: LayerKind) {
        self.all.layer_queued(now, kind);
        self.upto(now, |r| r.layer_queued(now, kind));
    }

    /// An attempt parked at `parked` left the queue of a layer of `kind` at `now` (counted in
    /// the phase it was parked in, like its offer).
    #[inline]
    pub fn layer_waited(&mut self, now: Time, parked: Time, kind: LayerKind) {
        self.all.layer_waited(now, parked, kind);
        self.upto(parked, |r| r.layer_waited(now, parked, kind));
    }

    /// The attempts waiting for a pool connection on an instance changed.
    #[inline]
    pub fn pool_waiting(&mut self, now: Time, instance: u32, waiting: u32) {
        self.all.pool_waiting(now, instance, waiting);
        self.upto(now, |r| r.pool_waiting(now, instance, waiting));
    }

    /// A dependency call started; `in_flight` is the fleet-wide count after it.
    #[inline]
    pub fn dep_start(&mut self, now: Time, in_flight: u64) {
        self.all.dep_start(now, in_flight);
        self.upto(now, |r| r.dep_start(now, in_flight));
    }

    /// A dependency call ended after `latency` of the dependency's own time.
    #[inline]
    pub fn dep_end(&mut self, now: Time, latency: Time, abandoned: bool, in_flight: u64) {
        self.all.dep_end(now, latency, abandoned, in_flight);
        self.upto(now, |r| r.dep_end(now, latency, abandoned, in_flight));
    }

    /// An abandoned call was cancelled at the dependency (see [`Recorder::dep_cancelled`]).
    #[inline]
    pub fn dep_cancelled(&mut self, now: Time, in_flight: u64) {
        self.all.dep_cancelled(now, in_flight);
        self.upto(now, |r| r.dep_cancelled(now, in_flight));
    }

    /// Worker slots in use on an instance changed.
    #[inline]
    pub fn workers(&mut self, now: Time, instance: u32, in_use: u32) {
        self.all.workers(now, instance, in_use);
        self.upto(now, |r| r.workers(now, instance, in_use));
    }

    /// Pool connections in use on an instance changed.
    #[inline]
    pub fn pool(&mut self, now: Time, instance: u32, in_use: u32) {
        self.all.pool(now, instance, in_use);
        self.upto(now, |r| r.pool(now, instance, in_use));
    }

    /// An instance's (first) breaker changed state.
    pub fn breaker(&mut self, now: Time, instance: u32, to: BreakerState) {
        self.all.breaker(now, instance, to);
        self.upto(now, |r| r.breaker(now, instance, to));
    }

    /// An instance's (first) limiter changed its limit.
    pub fn limit(&mut self, now: Time, instance: u32, limit: f64) {
        self.all.limit(now, instance, limit);
        self.upto(now, |r| r.limit(now, instance, limit));
    }

    /// Close the window ending at `now` (a phase's windows only count its full windows'
    /// dependency calls, for its throughput CV).
    pub fn tick(&mut self, now: Time) {
        self.all.tick(now);
        for p in self.phases.iter_mut().filter(|p| now <= p.end) {
            p.rec.tick(now);
        }
    }

    /// Hand the whole run's window rows to `sink` as windows close ([`Recorder::set_sink`]).
    pub fn set_sink(&mut self, sink: Box<dyn super::window::RowSink>) {
        self.all.set_sink(sink);
    }

    /// Take the whole run's time-series rows.
    pub fn take_rows(&mut self) -> Vec<WindowRow> {
        self.all.take_rows()
    }

    /// The whole run's summary at the horizon, and each phase's (taken at its end; `events`
    /// and `in_flight_at_end` are the whole run's).
    pub fn summaries(&mut self, now: Time, events: u64, in_flight_at_end: u64) -> (RunSummary, Vec<RunSummary>) {
        let all = self.all.summary(now, events, in_flight_at_end);
        let phases = self.phases.iter_mut().map(|p| p.rec.summary(p.end.min(now), events, in_flight_at_end)).collect();
        (all, phases)
    }
}

/// The phase loop of [`Recorders::upto`], out of line: only runs with phases.
#[inline(never)]
fn each_before(phases: &mut [PhaseRec], now: Time, mut f: impl FnMut(&mut Recorder)) {
    for p in phases.iter_mut().filter(|p| now < p.cutoff) {
        f(&mut p.rec);
    }
}
