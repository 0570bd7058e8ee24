//! What the world records through, [`Record`], and its two forms: the whole run's
//! [`Recorder`] alone (a run without phases, so the world's hot path makes no phase call at
//! all: the world is generic over the form, not branching on it), and [`Recorders`], the
//! whole run's recorder plus one per phase. A phase's recorder is an ordinary `Recorder`
//! whose warm-up is the phase's start, so its figures are the same `RunSummary` as the whole
//! run's; this file only decides what reaches it. Requests count by arrival in `[start, end)`
//! (whenever they finish); gauges, dependency calls, breaker and limit changes by their time,
//! up to `end`, so the phase's summary taken at `end` integrates its gauges over
//! `[start, end)` exactly.

use super::cause::{Cause, LayerKind};
use super::recorder::{OrderEffect, Outcome, Recorder, RecorderSetup};
use super::summary::RunSummary;
use super::window::WindowRow;
use crate::breaker_state::BreakerState;
use crate::engine::Time;

/// The recorder calls the world makes, in one of two forms chosen once per run: see the
/// module docs. Each method reports one happening; see [`Recorder`]'s method of the same name.
pub trait Record {
    /// The recorder for `setup` and the `[start, end)` phase spans (none for a `Recorder`).
    fn build(setup: RecorderSetup, spans: &[(Time, Time)]) -> Self;
    /// A request arrived.
    fn arrival(&mut self, now: Time, class: usize);
    /// A worker-slot wait ended (granted or not).
    fn slot_wait(&mut self, arrived: Time, class: usize, waited: Time);
    /// A connection wait ended (granted or not).
    fn conn_wait(&mut self, arrived: Time, class: usize, waited: Time);
    /// A request finished (see [`Recorder::finish`]).
    #[allow(clippy::too_many_arguments)]
    fn finish(
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
    );
    /// An attempt reached an admission layer of `kind`.
    fn layer_offered(&mut self, now: Time, kind: LayerKind);
    /// An attempt was parked in the queue of a layer of `kind`.
    fn layer_queued(&mut self, now: Time, kind: LayerKind);
    /// An attempt parked at `parked` left the queue of a layer of `kind` at `now` (counted in
    /// the phase it was parked in, like its offer).
    fn layer_waited(&mut self, now: Time, parked: Time, kind: LayerKind);
    /// The attempts waiting for a pool connection on an instance changed.
    fn pool_waiting(&mut self, now: Time, instance: u32, waiting: u32);
    /// A dependency call started; `in_flight` is the fleet-wide count after it.
    fn dep_start(&mut self, now: Time, in_flight: u64);
    /// A dependency call ended after `latency` of the dependency's own time.
    fn dep_end(&mut self, now: Time, latency: Time, abandoned: bool, in_flight: u64);
    /// An abandoned call was cancelled at the dependency (see [`Recorder::dep_cancelled`]).
    fn dep_cancelled(&mut self, now: Time, in_flight: u64);
    /// Worker slots in use on an instance changed.
    fn workers(&mut self, now: Time, instance: u32, in_use: u32);
    /// Pool connections in use on an instance changed.
    fn pool(&mut self, now: Time, instance: u32, in_use: u32);
    /// An instance's (first) breaker changed state.
    fn breaker(&mut self, now: Time, instance: u32, to: BreakerState);
    /// An instance's (first) limiter changed its limit.
    fn limit(&mut self, now: Time, instance: u32, limit: f64);
    /// Close the window ending at `now`.
    fn tick(&mut self, now: Time);
    /// Hand the whole run's window rows to `sink` as windows close ([`Recorder::set_sink`]).
    fn set_sink(&mut self, sink: Box<dyn super::window::RowSink>);
    /// Take the whole run's time-series rows.
    fn take_rows(&mut self) -> Vec<WindowRow>;
    /// The whole run's summary at the horizon, and each phase's (taken at its end; `events`
    /// and `in_flight_at_end` are the whole run's).
    fn summaries(&mut self, now: Time, events: u64, in_flight_at_end: u64) -> (RunSummary, Vec<RunSummary>);
}

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
    /// Apply `f` to every phase recorder that `now` falls before the end of.
    #[inline]
    fn upto(&mut self, now: Time, f: impl FnMut(&mut Recorder)) {
        if !self.phases.is_empty() {
            each_before(&mut self.phases, now, f);
        }
    }
}

impl Record for Recorders {
    /// The whole run's recorder from `setup`, and one per `[start, end)` span without a time
    /// series.
    fn build(setup: RecorderSetup, spans: &[(Time, Time)]) -> Self {
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

    /// A request arrived.
    #[inline]
    fn arrival(&mut self, now: Time, class: usize) {
        self.all.arrival(now, class);
    }

    /// A worker-slot wait ended (granted or not).
    #[inline]
    fn slot_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        self.all.slot_wait(arrived, class, waited);
        self.upto(arrived, |r| r.slot_wait(arrived, class, waited));
    }

    /// A connection wait ended (granted or not).
    #[inline]
    fn conn_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        self.all.conn_wait(arrived, class, waited);
        self.upto(arrived, |r| r.conn_wait(arrived, class, waited));
    }

    /// A request finished (see [`Recorder::finish`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn finish(
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
    fn layer_offered(&mut self, now: Time, kind: LayerKind) {
        self.all.layer_offered(now, kind);
        self.upto(now, |r| r.layer_offered(now, kind));
    }

    /// An attempt was parked in the queue of a layer of `kind`.
    #[inline]
    fn layer_queued(&mut self, now: Time, kind: LayerKind) {
        self.all.layer_queued(now, kind);
        self.upto(now, |r| r.layer_queued(now, kind));
    }

    /// An attempt parked at `parked` left the queue of a layer of `kind` at `now` (counted in
    /// the phase it was parked in, like its offer).
    #[inline]
    fn layer_waited(&mut self, now: Time, parked: Time, kind: LayerKind) {
        self.all.layer_waited(now, parked, kind);
        self.upto(parked, |r| r.layer_waited(now, parked, kind));
    }

    /// The attempts waiting for a pool connection on an instance changed.
    #[inline]
    fn pool_waiting(&mut self, now: Time, instance: u32, waiting: u32) {
        self.all.pool_waiting(now, instance, waiting);
        self.upto(now, |r| r.pool_waiting(now, instance, waiting));
    }

    /// A dependency call started; `in_flight` is the fleet-wide count after it.
    #[inline]
    fn dep_start(&mut self, now: Time, in_flight: u64) {
        self.all.dep_start(now, in_flight);
        self.upto(now, |r| r.dep_start(now, in_flight));
    }

    /// A dependency call ended after `latency` of the dependency's own time.
    #[inline]
    fn dep_end(&mut self, now: Time, latency: Time, abandoned: bool, in_flight: u64) {
        self.all.dep_end(now, latency, abandoned, in_flight);
        self.upto(now, |r| r.dep_end(now, latency, abandoned, in_flight));
    }

    /// An abandoned call was cancelled at the dependency (see [`Recorder::dep_cancelled`]).
    #[inline]
    fn dep_cancelled(&mut self, now: Time, in_flight: u64) {
        self.all.dep_cancelled(now, in_flight);
        self.upto(now, |r| r.dep_cancelled(now, in_flight));
    }

    /// Worker slots in use on an instance changed.
    #[inline]
    fn workers(&mut self, now: Time, instance: u32, in_use: u32) {
        self.all.workers(now, instance, in_use);
        self.upto(now, |r| r.workers(now, instance, in_use));
    }

    /// Pool connections in use on an instance changed.
    #[inline]
    fn pool(&mut self, now: Time, instance: u32, in_use: u32) {
        self.all.pool(now, instance, in_use);
        self.upto(now, |r| r.pool(now, instance, in_use));
    }

    /// An instance's (first) breaker changed state.
    fn breaker(&mut self, now: Time, instance: u32, to: BreakerState) {
        self.all.breaker(now, instance, to);
        self.upto(now, |r| r.breaker(now, instance, to));
    }

    /// An instance's (first) limiter changed its limit.
    fn limit(&mut self, now: Time, instance: u32, limit: f64) {
        self.all.limit(now, instance, limit);
        self.upto(now, |r| r.limit(now, instance, limit));
    }

    /// Close the window ending at `now` (a phase's windows only count its full windows'
    /// dependency calls, for its throughput CV).
    fn tick(&mut self, now: Time) {
        self.all.tick(now);
        for p in self.phases.iter_mut().filter(|p| now <= p.end) {
            p.rec.tick(now);
        }
    }

    /// Hand the whole run's window rows to `sink` as windows close ([`Recorder::set_sink`]).
    fn set_sink(&mut self, sink: Box<dyn super::window::RowSink>) {
        self.all.set_sink(sink);
    }

    /// Take the whole run's time-series rows.
    fn take_rows(&mut self) -> Vec<WindowRow> {
        self.all.take_rows()
    }

    /// The whole run's summary at the horizon, and each phase's (taken at its end; `events`
    /// and `in_flight_at_end` are the whole run's).
    fn summaries(&mut self, now: Time, events: u64, in_flight_at_end: u64) -> (RunSummary, Vec<RunSummary>) {
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
