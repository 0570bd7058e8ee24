//! What the world records through, [`Record`], and its two forms: the whole run's
//! [`Recorder`] alone (a run without phases, so the world's hot path makes no phase call at
//! all: the world is generic over the form, not branching on it), and [`Recorders`], the
//! whole run's recorder plus one per phase. A phase's recorder is an ordinary `Recorder`
//! whose warm-up is the phase's start, so its figures are the same `RunSummary` as the whole
//! run's; this file only decides what reaches it. Requests count by arrival in `[start, end)`
//! (whenever they finish); gauges, dependency calls, breaker and limit changes by their time,
//! up to `end`, so the phase's summary taken at `end` integrates its gauges over
//! `[start, end)` exactly.

use super::cause::LayerKind;
use super::dep_acc::{Blame, GraphEvent, PlanCallInfo};
use super::recorder::{Finished, Recorder, RecorderSetup};
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
    /// A request finished (see [`Finished`]); it counts in the phase it arrived in.
    fn finish(&mut self, f: Finished);
    /// A request is still in flight at the horizon `now` (see [`Recorder::at_horizon`]);
    /// it counts in the phase it arrived in.
    fn at_horizon(&mut self, now: Time, class: usize, arrived: Time);
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
    /// A dependency call ended; `timing` is its (queue wait, service time) at the dependency,
    /// None for a call shed by a full queue (never served).
    fn dep_end(&mut self, now: Time, timing: Option<(Time, Time)>, abandoned: bool, in_flight: u64);
    /// An abandoned call was cancelled at the dependency (see [`Recorder::dep_cancelled`]).
    fn dep_cancelled(&mut self, now: Time, in_flight: u64);
    /// A pool opened a new connection whose set-up takes `setup` (ns; the connect timeout
    /// for one that fails).
    fn connection_opened(&mut self, now: Time, setup: Time);
    /// A request finished (see [`Finished`]) in a run with a service graph, its cause to be
    /// put on `blame`'s dependency; it counts in the phase it arrived in.
    fn finish_blamed(&mut self, f: Finished, blame: Blame);
    /// The run has a service graph: its dependencies' names and its classes' plans, call by
    /// call (an empty list for a class without one); before any event.
    fn set_graph(&mut self, names: &[String], plans: &[Vec<PlanCallInfo>]);
    /// A happening of the service graph; it counts in the phases `GraphEvent::at` falls
    /// before the end of.
    fn graph(&mut self, e: GraphEvent);
    /// Worker slots in use on an instance changed.
    fn workers(&mut self, now: Time, instance: u32, in_use: u32);
    /// Pool connections in use on an instance changed.
    fn pool(&mut self, now: Time, instance: u32, in_use: u32);
    /// An instance's (first) breaker changed state.
    fn breaker(&mut self, now: Time, instance: u32, to: BreakerState);
    /// An instance's (first) limiter changed its limit.
    fn limit(&mut self, now: Time, instance: u32, limit: f64);
    /// Every instance's (first) limiter's limit when the run starts, before any event.
    fn start_limits(&mut self, limits: &[f64]);
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
    start: Time,
    /// The per-instance levels have been taken from the whole run's recorder (see
    /// [`Recorders::sync_levels`]); changes of them reach the recorder from then on.
    synced: bool,
}

/// See the module docs.
///
/// Per-instance levels (worker slots, pool connections and waiters) change on almost every
/// event, and each instance's gauges are a line of their own per recorder: in a large fleet
/// these are cache misses. Before a phase starts its gauges integrate nothing and record no
/// peak, so those changes skip its recorder; at its start (the first change, tick or summary
/// at or after it) it takes the current levels from the whole run's recorder, which saw
/// every change: the same levels, so the same figures.
pub struct Recorders {
    all: Recorder,
    phases: Vec<PhaseRec>,
    /// The earliest start of a phase not yet synced (`Time::MAX`: none left).
    next_sync: Time,
}

impl Recorders {
    /// Apply `f` to every phase recorder that `now` falls before the end of.
    #[inline]
    fn upto(&mut self, now: Time, f: impl FnMut(&mut Recorder)) {
        if !self.phases.is_empty() {
            each_before(&mut self.phases, now, f);
        }
    }

    /// Before any per-instance level changes at `now`, or a phase's gauges are read: every
    /// phase that has started by `now` takes the whole run's levels, once.
    #[inline]
    fn sync_levels(&mut self, now: Time) {
        if now >= self.next_sync {
            self.sync_phases(now);
        }
    }

    #[inline(never)]
    fn sync_phases(&mut self, now: Time) {
        for p in self.phases.iter_mut().filter(|p| !p.synced && p.start <= now) {
            p.rec.copy_instance_levels(&self.all);
            p.synced = true;
        }
        self.next_sync = self.phases.iter().filter(|p| !p.synced).map(|p| p.start).min().unwrap_or(Time::MAX);
    }

    /// Apply a per-instance level change `f` to every phase recorder that has started by
    /// `now` and `now` falls before the end of (the others skip it: see [`Recorders`]).
    /// Called before the whole run's recorder sees the change, whose levels a phase starting
    /// now takes.
    #[inline]
    fn levels(&mut self, now: Time, f: impl FnMut(&mut Recorder)) {
        if !self.phases.is_empty() {
            self.levels_out_of_line(now, f);
        }
    }

    /// The phase part of [`Recorders::levels`], out of line: only runs with phases.
    #[inline(never)]
    fn levels_out_of_line(&mut self, now: Time, mut f: impl FnMut(&mut Recorder)) {
        self.sync_levels(now);
        for p in self.phases.iter_mut().filter(|p| p.start <= now && now < p.cutoff) {
            debug_assert!(p.synced, "a phase takes the levels before their first change in it");
            f(&mut p.rec);
        }
    }
}

impl Record for Recorders {
    fn build(setup: RecorderSetup, spans: &[(Time, Time)]) -> Self {
        let phases = spans
            .iter()
            .map(|&(start, end)| {
                let s =
                    RecorderSetup { warmup: start, horizon: end, timeseries: false, recovery: None, ..setup.clone() };
                let cutoff = if end >= setup.horizon { Time::MAX } else { end };
                PhaseRec { rec: Recorder::new(s), cutoff, end: end.min(setup.horizon), start, synced: false }
            })
            .collect::<Vec<_>>();
        let next_sync = phases.iter().map(|p| p.start).min().unwrap_or(Time::MAX);
        Self { all: Recorder::with_phases(setup, spans), phases, next_sync }
    }

    #[inline]
    fn arrival(&mut self, now: Time, class: usize) {
        self.all.arrival(now, class);
    }

    #[inline]
    fn slot_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        self.all.slot_wait(arrived, class, waited);
        self.upto(arrived, |r| r.slot_wait(arrived, class, waited));
    }

    #[inline]
    fn conn_wait(&mut self, arrived: Time, class: usize, waited: Time) {
        self.all.conn_wait(arrived, class, waited);
        self.upto(arrived, |r| r.conn_wait(arrived, class, waited));
    }

    #[inline]
    fn finish(&mut self, f: Finished) {
        self.all.finish(f);
        self.upto(f.arrived, |r| r.finish(f));
    }

    fn finish_blamed(&mut self, f: Finished, blame: Blame) {
        self.all.finish_blamed(f, blame);
        self.upto(f.arrived, |r| r.finish_blamed(f, blame));
    }

    fn set_graph(&mut self, names: &[String], plans: &[Vec<PlanCallInfo>]) {
        self.all.set_graph(names, plans);
        for p in &mut self.phases {
            p.rec.set_graph(names, plans);
        }
    }

    fn graph(&mut self, e: GraphEvent) {
        self.all.graph(e);
        self.upto(e.at(), |r| r.graph(e));
    }

    fn at_horizon(&mut self, now: Time, class: usize, arrived: Time) {
        self.all.at_horizon(now, class, arrived);
        self.upto(arrived, |r| r.at_horizon(now, class, arrived));
    }

    #[inline]
    fn layer_offered(&mut self, now: Time, kind: LayerKind) {
        self.all.layer_offered(now, kind);
        self.upto(now, |r| r.layer_offered(now, kind));
    }

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

    #[inline]
    fn pool_waiting(&mut self, now: Time, instance: u32, waiting: u32) {
        self.levels(now, |r| r.pool_waiting(now, instance, waiting));
        self.all.pool_waiting(now, instance, waiting);
    }

    #[inline]
    fn dep_start(&mut self, now: Time, in_flight: u64) {
        self.all.dep_start(now, in_flight);
        self.upto(now, |r| r.dep_start(now, in_flight));
    }

    #[inline]
    fn dep_end(&mut self, now: Time, timing: Option<(Time, Time)>, abandoned: bool, in_flight: u64) {
        self.all.dep_end(now, timing, abandoned, in_flight);
        self.upto(now, |r| r.dep_end(now, timing, abandoned, in_flight));
    }

    #[inline]
    fn dep_cancelled(&mut self, now: Time, in_flight: u64) {
        self.all.dep_cancelled(now, in_flight);
        self.upto(now, |r| r.dep_cancelled(now, in_flight));
    }

    fn connection_opened(&mut self, now: Time, setup: Time) {
        self.all.connection_opened(now, setup);
        self.upto(now, |r| r.connection_opened(now, setup));
    }

    #[inline]
    fn workers(&mut self, now: Time, instance: u32, in_use: u32) {
        self.levels(now, |r| r.workers(now, instance, in_use));
        self.all.workers(now, instance, in_use);
    }

    #[inline]
    fn pool(&mut self, now: Time, instance: u32, in_use: u32) {
        self.levels(now, |r| r.pool(now, instance, in_use));
        self.all.pool(now, instance, in_use);
    }

    fn breaker(&mut self, now: Time, instance: u32, to: BreakerState) {
        self.all.breaker(now, instance, to);
        self.upto(now, |r| r.breaker(now, instance, to));
    }

    fn limit(&mut self, now: Time, instance: u32, limit: f64) {
        self.all.limit(now, instance, limit);
        self.upto(now, |r| r.limit(now, instance, limit));
    }

    fn start_limits(&mut self, limits: &[f64]) {
        self.all.start_limits(limits);
        for p in &mut self.phases {
            p.rec.start_limits(limits);
        }
    }

    /// Close the window ending at `now` (a phase's windows only count its full windows'
    /// dependency calls, for its throughput CV).
    fn tick(&mut self, now: Time) {
        self.sync_levels(now);
        self.all.tick(now);
        for p in self.phases.iter_mut().filter(|p| now <= p.end) {
            p.rec.tick(now);
        }
    }

    fn set_sink(&mut self, sink: Box<dyn super::window::RowSink>) {
        self.all.set_sink(sink);
    }

    fn take_rows(&mut self) -> Vec<WindowRow> {
        self.all.take_rows()
    }

    /// The whole run's summary at the horizon, and each phase's (taken at its end; `events`
    /// and `in_flight_at_end` are the whole run's).
    fn summaries(&mut self, now: Time, events: u64, in_flight_at_end: u64) -> (RunSummary, Vec<RunSummary>) {
        self.sync_levels(now);
        let all = self.all.summary(now, events, in_flight_at_end);
        let mut phases: Vec<RunSummary> =
            self.phases.iter_mut().map(|p| p.rec.summary(p.end.min(now), events, in_flight_at_end)).collect();
        // The whole run's recorder judged every window, phases' included (`recovery.rs`).
        if let Some(t) = self.all.tracker() {
            for (k, phase) in phases.iter_mut().enumerate() {
                for (c, class) in phase.classes.iter_mut().enumerate() {
                    let (share, entries, recovery) = t.phase(c, k);
                    (class.degraded_fraction, class.degraded_entries) = (share, entries);
                    class.recovery = Some(recovery);
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-instance level changes before, at and after each phase's start and end: a phase's
    /// summary, whose recorder skipped the changes before its start and took the levels at
    /// it, equals that of a recorder that saw every change up to its end.
    #[test]
    fn a_phase_that_takes_the_levels_at_its_start_sums_up_as_one_that_saw_every_change() {
        let setup = RecorderSetup { instances: 2, slots: 4, connections: 4, ..RecorderSetup::one_class(100, 10) };
        // The second phase has no change in it: it takes the levels at a tick or the summary.
        let spans = [(30, 60), (62, 68), (60, 100)];
        let mut rs = Recorders::build(setup.clone(), &spans);
        let mut reference: Vec<(Recorder, Time, Time)> = spans
            .iter()
            .map(|&(start, end)| {
                let s = RecorderSetup { warmup: start, horizon: end, ..setup.clone() };
                let cutoff = if end >= setup.horizon { Time::MAX } else { end };
                (Recorder::new(s), cutoff, end)
            })
            .collect();
        let changes: [(Time, u32, u32); 10] = [
            (5, 0, 1),
            (12, 1, 3),
            (29, 0, 2),
            (30, 1, 4),
            (45, 0, 0),
            (59, 1, 1),
            (60, 0, 3),
            (61, 1, 2),
            (75, 0, 4),
            (99, 1, 0),
        ];
        let mut next = 0;
        for tick in (10..=100).step_by(10) {
            while next < changes.len() && changes[next].0 <= tick {
                let (t, i, v) = changes[next];
                next += 1;
                rs.workers(t, i, v);
                rs.pool(t, i, v.min(3));
                rs.pool_waiting(t, i, v / 2);
                for (r, _, _) in reference.iter_mut().filter(|(_, cutoff, _)| t < *cutoff) {
                    r.workers(t, i, v);
                    r.pool(t, i, v.min(3));
                    r.pool_waiting(t, i, v / 2);
                }
            }
            rs.tick(tick);
            for (r, _, _) in reference.iter_mut().filter(|(_, _, end)| tick <= *end) {
                r.tick(tick);
            }
        }
        let (_, phases) = rs.summaries(100, 0, 0);
        for (k, (r, _, end)) in reference.iter_mut().enumerate() {
            assert_eq!(phases[k], r.summary((*end).min(100), 0, 0), "phase {k}");
        }
        assert!(phases[1].resources.workers.mean > 0.0, "the quiet phase took the levels");
    }
}
