//! Recovery after each phase and time degraded, per class, judged from the per-window in-time
//! ratio (the scenario's `recovery` settings; docs/metastable.md).
//!
//! A window's in-time ratio is taken over the requests that *arrived* in it,
//! `[k·window, (k+1)·window)`, as the summary's `in_time_ratio` is over the requests that
//! arrived in the measured span: a request stuck in a queue then counts against the window it
//! arrived in, and a window in which nothing finishes is not a window without a figure. An
//! in-time request finishes within its deadline of arriving, so window `k`'s figure is final
//! once `(k+1)·window + deadline` has passed: windows are judged at the tick after that, in
//! order, and only the windows not yet final are held (about `deadline / window` per class),
//! so memory does not grow with the horizon. Windows not final at the horizon, windows without
//! arrivals and windows starting before the warm-up ends are not judged.
//!
//! A phase's level before is taken from the last `baseline` judged windows that lie in no
//! phase (the derived `before` phase excepted), kept in a ring per class: derived phases tile
//! the run, and the `degraded` phase measured against the `ramp` before it would recover at
//! once from a level already near 0.

use std::collections::VecDeque;

use super::summary::RecoverySummary;
use crate::engine::{SECOND, Time};

/// The scenario's `recovery` settings, as the recorder uses them.
#[derive(Debug, Clone, Copy)]
pub struct RecoveryRule {
    /// A window is back when its ratio is at least the level before minus this.
    pub tolerance: f64,
    /// Consecutive judged windows back that make a recovery.
    pub hold: u32,
    /// Windows before a phase whose requests give its level before.
    pub baseline: u32,
    /// The first phase is the healthy span before an episode (the derived `before`), whose
    /// windows may give a later phase its level before; no other phase's windows do.
    pub first_is_healthy: bool,
    /// A window below this ratio is degraded.
    pub degraded_below: f64,
}

/// A ratio may come out of a division a last bit below the level it equals on paper.
const SLACK: f64 = 1e-12;

/// One window's arrivals and the in-time requests among them.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    offered: u64,
    in_time: u64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.offered += o.offered;
        self.in_time += o.in_time;
    }

    /// in_time / offered; no value over no arrival.
    fn ratio(self) -> f64 {
        if self.offered == 0 { f64::NAN } else { self.in_time as f64 / self.offered as f64 }
    }
}

/// Degraded windows of a span.
#[derive(Debug, Clone, Copy, Default)]
struct Degraded {
    judged: u64,
    below: u64,
    entries: u64,
}

impl Degraded {
    fn add(&mut self, below: bool, entry: bool) {
        self.judged += 1;
        self.below += below as u64;
        self.entries += entry as u64;
    }

    /// (share of judged windows degraded, entries); no share without a judged window.
    fn figures(&self) -> (f64, u64) {
        let share = if self.judged == 0 { f64::NAN } else { self.below as f64 / self.judged as f64 };
        (share, self.entries)
    }
}

/// One phase as one class sees it.
#[derive(Debug, Clone)]
struct PhaseTrack {
    start: Time,
    end: Time,
    /// Arrivals and in-time requests of the baseline windows before the phase, taken from
    /// the class's `ring` when the first window reaching into the phase is judged.
    before: Option<Counts>,
    during: Degraded,
    /// Judged windows after the phase's end.
    after: u64,
    /// The current run of windows back: (first window, length).
    run: Option<(u64, u32)>,
    /// The first window of the run that made the recovery.
    recovered_at: Option<u64>,
    /// The last `hold` judged windows after the phase.
    last: VecDeque<Counts>,
}

/// One class's windows not yet final and its figures so far.
#[derive(Debug, Clone)]
struct ClassTrack {
    deadline: Time,
    /// Index of `pending`'s first window.
    base: u64,
    pending: VecDeque<Counts>,
    /// Whether the last judged window was degraded (none judged yet: `None`).
    prev: Option<bool>,
    /// The last `baseline` judged windows in no phase (but a healthy one): the windows a
    /// phase starting next takes its level before from.
    ring: VecDeque<Counts>,
    whole: Degraded,
    phases: Vec<PhaseTrack>,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(super) struct Tracker {
    rule: RecoveryRule,
    window: Time,
    warmup: Time,
    classes: Vec<ClassTrack>,
}

impl Tracker {
    /// A tracker for classes with `deadlines`, windows of `window` ns, and phases `spans`.
    pub(super) fn new(
        rule: RecoveryRule,
        window: Time,
        warmup: Time,
        deadlines: &[Time],
        spans: &[(Time, Time)],
    ) -> Self {
        let phase = |&(start, end): &(Time, Time)| PhaseTrack {
            start,
            end,
            before: None,
            during: Degraded::default(),
            after: 0,
            run: None,
            recovered_at: None,
            last: VecDeque::new(),
        };
        let class = |&deadline: &Time| ClassTrack {
            deadline,
            base: 0,
            pending: VecDeque::new(),
            prev: None,
            ring: VecDeque::new(),
            whole: Degraded::default(),
            phases: spans.iter().map(phase).collect(),
        };
        Tracker { rule, window: window.max(1), warmup, classes: deadlines.iter().map(class).collect() }
    }

    /// The counts of window `k` of `class`, which is not final yet.
    #[inline]
    fn slot(&mut self, class: usize, k: u64) -> Option<&mut Counts> {
        let c = &mut self.classes[class];
        if c.pending.is_empty() {
            // Windows skipped while nothing was pending had no arrival: nothing to judge.
            c.base = c.base.max(k);
        }
        let i = k.checked_sub(c.base)? as usize;
        if i >= c.pending.len() {
            c.pending.resize(i + 1, Counts::default());
        }
        c.pending.get_mut(i)
    }

    /// A request of `class` arrived at `now`.
    #[inline]
    pub(super) fn arrival(&mut self, now: Time, class: usize) {
        let k = now / self.window;
        // Most arrivals land in a window already pending: a count there, and nothing of
        // `slot`'s bookkeeping inlined into every arrival.
        let c = &mut self.classes[class];
        if let Some(s) = k.checked_sub(c.base).and_then(|i| c.pending.get_mut(i as usize)) {
            s.offered += 1;
        } else {
            self.first_arrival(class, k);
        }
    }

    /// The first arrival in window `k` of `class`: its counts start.
    #[cold]
    #[inline(never)]
    fn first_arrival(&mut self, class: usize, k: u64) {
        let slot = self.slot(class, k);
        debug_assert!(slot.is_some(), "arrivals come in time order, after every judged window");
        if let Some(s) = slot {
            s.offered += 1;
        }
    }

    /// A request of `class` that arrived at `arrived` finished in time.
    #[inline]
    pub(super) fn in_time(&mut self, arrived: Time, class: usize) {
        let k = arrived / self.window;
        let c = &mut self.classes[class];
        let i = k.checked_sub(c.base).map(|i| i as usize);
        debug_assert!(i.is_some_and(|i| i < c.pending.len()), "an in-time request's window is not final yet");
        if let Some(s) = i.and_then(|i| c.pending.get_mut(i)) {
            s.in_time += 1;
        }
    }

    /// Judge every window final by `now`: its end plus the class's deadline has passed (see
    /// the module docs).
    pub(super) fn tick(&mut self, now: Time) {
        let (rule, window, warmup) = (self.rule, self.window, self.warmup);
        for c in &mut self.classes {
            while !c.pending.is_empty() && (c.base + 1).saturating_mul(window).saturating_add(c.deadline) <= now {
                let counts = c.pending.pop_front().expect("not empty");
                let k = c.base;
                c.base += 1;
                if counts.offered > 0 && k.saturating_mul(window) >= warmup {
                    c.judge(rule, window, k, counts);
                }
            }
        }
    }

    /// The whole run's (degraded fraction, entries) of `class`.
    pub(super) fn whole(&self, class: usize) -> (f64, u64) {
        self.classes[class].whole.figures()
    }

    /// Phase `phase`'s (degraded fraction, entries, recovery) of `class`.
    pub(super) fn phase(&self, class: usize, phase: usize) -> (f64, u64, RecoverySummary) {
        let c = &self.classes[class];
        let p = &c.phases[phase];
        let (share, entries) = p.during.figures();
        // No window reaching into the phase was judged: every judged window is before it.
        let level = p.before.unwrap_or_else(|| sum(&c.ring)).ratio();
        let end = sum(&p.last);
        let recovered = (!level.is_nan() && p.after > 0).then_some(p.recovered_at.is_some());
        let recovery_s = match (recovered, p.recovered_at) {
            (Some(true), Some(k)) => (k * self.window).saturating_sub(p.end) as f64 / SECOND as f64,
            _ => f64::NAN,
        };
        let summary =
            RecoverySummary { before_in_time_ratio: level, recovered, recovery_s, end_in_time_ratio: end.ratio() };
        (share, entries, summary)
    }
}

impl ClassTrack {
    /// Window `k` is final with `counts` (arrivals among them): add it to every figure.
    fn judge(&mut self, rule: RecoveryRule, window: Time, k: u64, counts: Counts) {
        let ratio = counts.ratio();
        let below = ratio < rule.degraded_below;
        let entry = below && self.prev != Some(true);
        self.prev = Some(below);
        self.whole.add(below, entry);
        let (t0, t1) = (k * window, (k + 1) * window);
        for p in self.phases.iter_mut().filter(|p| p.before.is_none() && t1 > p.start) {
            p.before = Some(sum(&self.ring));
        }
        // A window in another phase (an incident, a recovery) says nothing of the level
        // before the next one: adjacent phases would each take the last one's level.
        let outside = |(i, p): (usize, &PhaseTrack)| (i == 0 && rule.first_is_healthy) || t1 <= p.start || t0 >= p.end;
        if self.phases.iter().enumerate().all(outside) {
            self.ring.push_back(counts);
            if self.ring.len() > rule.baseline as usize {
                self.ring.pop_front();
            }
        }
        for p in &mut self.phases {
            if p.start <= t0 && t0 < p.end {
                p.during.add(below, entry);
            }
            if t0 >= p.end {
                p.after += 1;
                p.last.push_back(counts);
                if p.last.len() > rule.hold as usize {
                    p.last.pop_front();
                }
                if p.recovered_at.is_none() {
                    let level = p.before.map_or(f64::NAN, Counts::ratio);
                    let back = ratio + SLACK >= level - rule.tolerance;
                    p.run = match (back, p.run) {
                        (false, _) => None,
                        (true, None) => Some((k, 1)),
                        (true, Some((from, n))) => Some((from, n + 1)),
                    };
                    if let Some((from, _)) = p.run.filter(|&(_, n)| n >= rule.hold) {
                        p.recovered_at = Some(from);
                    }
                }
            }
        }
    }
}

/// The windows' counts added up.
fn sum(windows: &VecDeque<Counts>) -> Counts {
    let mut total = Counts::default();
    windows.iter().for_each(|c| total.add(*c));
    total
}

#[cfg(test)]
mod tests;
