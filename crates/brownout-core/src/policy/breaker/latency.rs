//! Latency breaker (the first seed's latency trip): every `window`, take percentile `p` of
//! the durations completed in that window (plus, with `inflight_ageing`, the ages of calls
//! still in flight); if it exceeds `threshold` for `consecutive` windows in a row, open for
//! `break_duration` (growing by `break_multiplier` per re-open, capped by `max_break`).
//!
//! Conventions: the percentile is nearest-rank (the `ceil(p*n)`-th smallest sample);
//! a window with fewer than `min_calls` samples neither extends nor resets the streak.
//! Windows run back to back from time zero, pause while open or half-open, and restart
//! when the breaker closes. Open -> half-open is lazy (first call at or after the break's
//! end); `probes` trial calls are admitted; a probe longer than `threshold` re-opens at once
//! (with ageing: as soon as it has run longer than `threshold`), and the breaker closes when
//! all probes finished within it. Only probes decide: outcomes of calls started before the
//! half-open episode are ignored. A call is judged by how long it held this layer (admission
//! to completion), whatever its outcome: an error counts by its duration, and a call an
//! inner timeout cut off counts as a call of the timeout's length, fast when the timeout is
//! below `threshold` (pair this breaker with an error-rate one to catch fast failures and
//! timeouts).

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, Completed, Policy, Refusal, Status};
use super::error_rate::{check_break, grown_break};
use super::inflight::InFlight;
use super::trials::Trials;
use crate::engine::Time;
use crate::policy::percentile::nearest_rank;
use crate::policy::why::Why;
use crate::policy::{BuildCtx, ConfigError, Facts, FallbackRule, PolicyConfig};
use crate::units::Dur;

/// Latency breaker configuration: judges each call by how long it held this layer, from
/// admission to completion, whatever its outcome (an error by its duration; a call an inner
/// `Timeout` cut off as a call of the timeout's length, fast when that is below `threshold`,
/// so a timed-out trial closes it). Pair it with an error-rate breaker for fast failures.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencyConfig {
    /// Measurement window (> 0).
    pub window: Dur,
    /// Percentile in (0, 1], e.g. 0.95.
    #[serde(default = "p95")]
    pub percentile: f64,
    /// The percentile must exceed this (`>`) for a window to count as slow.
    pub threshold: Dur,
    /// Slow windows in a row that open the breaker (>= 1).
    #[serde(default = "one")]
    pub consecutive: u32,
    /// Samples a window needs to count at all.
    #[serde(default = "one")]
    pub min_calls: u32,
    /// Open duration after the first trip (> 0).
    pub break_duration: Dur,
    /// Factor applied to the break at each re-open from half-open (>= 1).
    #[serde(default = "one_f")]
    pub break_multiplier: f64,
    /// Cap on the grown break.
    #[serde(default)]
    pub max_break: Option<Dur>,
    /// Trial calls while half-open (>= 1).
    #[serde(default = "one")]
    pub probes: u32,
    /// Count the ages of calls in flight as samples, and judge a probe as soon as it is late.
    #[serde(default)]
    pub inflight_ageing: bool,
}

fn p95() -> f64 {
    0.95
}
fn one() -> u32 {
    1
}
fn one_f() -> f64 {
    1.0
}

impl LatencyConfig {
    /// Check values serde cannot, naming the field.
    fn check(&self) -> Result<(), String> {
        let p = "LatencyBreaker";
        if self.window.ns() == 0 {
            return Err(format!("{p}.window must be > 0"));
        }
        if !(self.percentile > 0.0 && self.percentile <= 1.0) {
            return Err(format!("{p}.percentile must lie in (0, 1]"));
        }
        if self.consecutive == 0 {
            return Err(format!("{p}.consecutive must be >= 1"));
        }
        if self.probes == 0 {
            return Err(format!("{p}.probes must be >= 1"));
        }
        check_break(p, self.break_duration, self.break_multiplier)
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Latency {
    cfg: LatencyConfig,
    state: BreakerState,
    window_end: Time,
    samples: Vec<Time>,
    streak: u32,
    open_until: Time,
    attempts: u32,
    probes: Trials,
    probes_ok: u32,
    /// Of `probes_ok`, the probes an attempt timeout ended, and how long the last one ran.
    probes_timed_out: (u32, Time),
    inflight: InFlight,
    opened_at: Time,
    why: Why,
}

impl Latency {
    /// Build from config.
    pub fn new(cfg: &LatencyConfig) -> Self {
        Self {
            state: BreakerState::Closed,
            window_end: cfg.window.ns(),
            samples: Vec::new(),
            streak: 0,
            open_until: 0,
            attempts: 0,
            probes: Trials::default(),
            probes_ok: 0,
            probes_timed_out: (0, 0),
            inflight: InFlight::default(),
            opened_at: 0,
            why: Why::Fresh,
            cfg: cfg.clone(),
        }
    }

    /// Slow windows in a row so far.
    #[cfg(test)]
    fn streak(&self) -> u32 {
        self.streak
    }

    fn open(&mut self, now: Time) {
        self.attempts += 1;
        let b = grown_break(
            self.cfg.break_duration.ns(),
            self.cfg.break_multiplier,
            self.cfg.max_break.map(Dur::ns),
            self.attempts,
        );
        self.state = BreakerState::Open;
        self.opened_at = now;
        self.open_until = now.saturating_add(b);
        self.streak = 0;
        self.samples.clear();
    }

    fn close(&mut self, now: Time) {
        self.state = BreakerState::Closed;
        self.attempts = 0;
        self.streak = 0;
        self.samples.clear();
        self.window_end = now.saturating_add(self.cfg.window.ns());
    }

    /// Judge the window ending at `now`.
    fn end_window(&mut self, now: Time) {
        let mut v = std::mem::take(&mut self.samples);
        if self.cfg.inflight_ageing {
            v.extend(self.inflight.ages(now));
        }
        if v.len() >= self.cfg.min_calls.max(1) as usize {
            let q = nearest_rank(&mut v, self.cfg.percentile).expect("non-empty");
            if q > self.cfg.threshold.ns() {
                self.streak += 1;
                if self.streak >= self.cfg.consecutive {
                    let (percentile, threshold) = (self.cfg.percentile, self.cfg.threshold.ns());
                    self.why = Why::Latency { percentile, value: q, threshold, windows: self.streak };
                    self.open(now);
                    return;
                }
            } else {
                self.streak = 0;
            }
        }
        v.clear();
        self.samples = v; // keep the allocation
    }

    /// Time-driven work due at `now`: window ends while closed, late probes while half-open.
    fn tick(&mut self, now: Time) {
        while self.state == BreakerState::Closed && now >= self.window_end {
            let end = self.window_end;
            self.window_end += self.cfg.window.ns();
            self.end_window(end);
        }
        if let Some(due) = self.late_probe_due().filter(|&t| self.state == BreakerState::HalfOpen && now >= t) {
            let thr = self.cfg.threshold.ns();
            self.why = Why::TrialFailed { slow: Some((now - (due - thr - 1), thr)) };
            self.open(now);
        }
    }

    /// When the oldest probe in flight becomes late (ageing only).
    fn late_probe_due(&self) -> Option<Time> {
        if !self.cfg.inflight_ageing {
            return None;
        }
        let thr = self.cfg.threshold.ns();
        self.probes.ids().iter().filter_map(|&id| self.inflight.start(id)).min().map(|s| s + thr + 1)
    }
}

impl Policy for Latency {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        self.tick(a.now);
        if self.state == BreakerState::Open && a.now >= self.open_until {
            self.state = BreakerState::HalfOpen;
            self.why = Why::BreakOver { open_for: a.now - self.opened_at };
            self.probes.open(self.cfg.probes);
            self.probes_ok = 0;
            self.probes_timed_out = (0, 0);
        }
        match self.state {
            BreakerState::Open => return Admission::Refuse(Refusal::ShortCircuited),
            BreakerState::HalfOpen if !self.probes.take(a.id) => return Admission::Refuse(Refusal::ShortCircuited),
            BreakerState::HalfOpen => {}
            BreakerState::Closed => {}
        }
        if self.cfg.inflight_ageing {
            // Only ageing reads the calls in flight: without it, tracking them is wasted work.
            self.inflight.admit(a.id, a.now);
        }
        Admission::Admit
    }

    fn cancel(&mut self, a: &Attempt) {
        self.inflight.remove(a.id);
        self.probes.cancel(a.id, self.state == BreakerState::HalfOpen);
    }

    fn complete(&mut self, d: &Completed) {
        self.tick(d.now);
        self.inflight.remove(d.id);
        match self.state {
            BreakerState::Closed => self.samples.push(d.duration()),
            BreakerState::HalfOpen if self.probes.finish(d.id) => {
                if d.duration() > self.cfg.threshold.ns() {
                    self.why = Why::TrialFailed { slow: Some((d.duration(), self.cfg.threshold.ns())) };
                    self.open(d.now);
                } else {
                    self.probes_ok += 1;
                    if d.outcome == crate::policy::CallOutcome::Timeout {
                        self.probes_timed_out = (self.probes_timed_out.0 + 1, d.duration());
                    }
                    if self.probes_ok >= self.cfg.probes {
                        let (timeouts, last_timeout) = self.probes_timed_out;
                        self.why = Why::TrialsWithin {
                            ok: self.probes_ok,
                            needed: self.cfg.probes,
                            threshold: self.cfg.threshold.ns(),
                            timeouts,
                            last_timeout,
                        };
                        self.close(d.now);
                    }
                }
            }
            _ => {}
        }
    }

    fn on_wakeup(&mut self, now: Time) {
        self.tick(now);
    }

    fn status(&self) -> Status {
        let wake_at = match self.state {
            BreakerState::Closed => Some(self.window_end),
            BreakerState::HalfOpen => self.late_probe_due(),
            BreakerState::Open => None,
        };
        Status { breaker: Some(self.state), wake_at, degraded: self.state != BreakerState::Closed, ..Status::default() }
    }

    fn reason(&self) -> String {
        self.why.text()
    }
}

impl PolicyConfig for LatencyConfig {
    const KIND: &'static str = "latency-breaker";

    fn facts(&self) -> Facts {
        // A short circuit is a 503 the class's fallback decides.
        Facts::plain(crate::metrics::LayerKind::Breaker).fallback(FallbackRule::Always)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(self.check()?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Latency::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MILLISECOND, SECOND};
    use crate::policy::CallOutcome::Success;

    const MS: Time = MILLISECOND;

    fn cfg() -> LatencyConfig {
        LatencyConfig {
            window: Dur::secs(1),
            percentile: 0.5,
            threshold: Dur::ms(500),
            consecutive: 2,
            min_calls: 3,
            break_duration: Dur::secs(10),
            break_multiplier: 2.0,
            max_break: Some(Dur::secs(15)),
            probes: 1,
            inflight_ageing: false,
        }
    }
    fn att(now: Time, id: u64) -> Attempt {
        Attempt::new(now, 0, id)
    }
    fn call(b: &mut Latency, at: Time, id: u64, dur: Time) -> Admission {
        let adm = b.admit(&att(at, id));
        if adm == Admission::Admit {
            b.complete(&Completed::new(at + dur, 0, id, at, Success));
        }
        adm
    }
    fn state(b: &Latency) -> BreakerState {
        b.status().breaker.unwrap()
    }

    #[test]
    fn opens_after_consecutive_slow_windows_and_thin_windows_do_not_count() {
        let mut b = Latency::new(&cfg());
        // Window [0,1s): median of 600, 600, 100 = 600 > 500: slow (streak 1).
        call(&mut b, 0, 1, 600 * MS);
        call(&mut b, 0, 2, 600 * MS);
        call(&mut b, 0, 3, 100 * MS);
        assert_eq!(b.status().wake_at, Some(SECOND));
        b.on_wakeup(SECOND);
        assert_eq!((state(&b), b.streak()), (BreakerState::Closed, 1));
        // Window [1s,2s): two samples only (< min_calls 3): no effect either way.
        call(&mut b, SECOND, 4, 100 * MS);
        call(&mut b, SECOND, 5, 100 * MS);
        b.on_wakeup(2 * SECOND);
        assert_eq!(b.streak(), 1);
        // Window [2s,3s): median exactly 500 is not > 500: streak resets.
        for i in 0..3 {
            call(&mut b, 2 * SECOND, 10 + i, 500 * MS);
        }
        b.on_wakeup(3 * SECOND);
        assert_eq!(b.streak(), 0);
        // Two slow windows in a row open it at 5 s.
        for w in [3, 4] {
            for i in 0..3 {
                call(&mut b, w * SECOND, 20 + w * 3 + i, 501 * MS);
            }
            b.on_wakeup((w + 1) * SECOND);
        }
        assert_eq!(state(&b), BreakerState::Open);
        assert_eq!(b.status().wake_at, None, "lazy half-open");
    }

    #[test]
    fn probe_verdict_and_break_growth_with_cap() {
        let mut b = Latency::new(&cfg());
        b.open(0); // attempt 1: 10 s
        assert_eq!(call(&mut b, 10 * SECOND - 1, 1, 0), Admission::Refuse(Refusal::ShortCircuited));
        assert_eq!(b.admit(&att(10 * SECOND, 2)), Admission::Admit);
        assert_eq!(b.admit(&att(10 * SECOND, 3)), Admission::Refuse(Refusal::ShortCircuited));
        b.complete(&Completed::new(10 * SECOND + 501 * MS, 0, 2, 10 * SECOND, Success));
        // Re-opened at 10.501 s for min(20 s, 15 s) = 15 s.
        let t = 10 * SECOND + 501 * MS;
        assert_eq!(state(&b), BreakerState::Open);
        assert_eq!(call(&mut b, t + 15 * SECOND - 1, 4, 0), Admission::Refuse(Refusal::ShortCircuited));
        // A probe of exactly 500 ms closes it; the window restarts from the close.
        assert_eq!(call(&mut b, t + 15 * SECOND, 5, 500 * MS), Admission::Admit);
        assert_eq!(state(&b), BreakerState::Closed);
        assert_eq!(b.status().wake_at, Some(t + 15 * SECOND + 500 * MS + SECOND));
    }

    #[test]
    fn ageing_counts_calls_still_in_flight_and_late_probes() {
        let mut c = cfg();
        c.inflight_ageing = true;
        c.consecutive = 1;
        let mut b = Latency::new(&c);
        // Three calls start in [0,1s) and none completes: their ages at 1 s are 1000, 900,
        // 800 ms; the median 900 ms > 500 ms opens the breaker at the window's end.
        for (i, t) in [0, 100, 200].into_iter().enumerate() {
            b.admit(&att(t * MS, i as u64));
        }
        b.on_wakeup(SECOND);
        assert_eq!(state(&b), BreakerState::Open);
        // Half-open at 11 s: the probe is judged late at 11.5 s + 1 ns, before it completes.
        assert_eq!(b.admit(&att(11 * SECOND, 9)), Admission::Admit);
        assert_eq!(b.status().wake_at, Some(11 * SECOND + 500 * MS + 1));
        b.on_wakeup(11 * SECOND + 500 * MS + 1);
        assert_eq!(state(&b), BreakerState::Open);
    }

    #[test]
    fn a_probe_cut_off_by_its_attempt_timeout_is_said_to_count_as_fast() {
        // The breaker judges a probe by how long it held the layer, not by its outcome: a probe
        // an inner timeout ended after 80 ms is an 80 ms probe, within the 500 ms threshold,
        // and closes the breaker. The reason must say so rather than call it a success.
        let mut b = Latency::new(&cfg());
        b.open(0);
        assert_eq!(b.admit(&att(10 * SECOND, 1)), Admission::Admit);
        b.complete(&Completed::new(10 * SECOND + 80 * MS, 0, 1, 10 * SECOND, crate::policy::CallOutcome::Timeout));
        assert_eq!(state(&b), BreakerState::Closed);
        assert_eq!(
            b.reason(),
            "1 of 1 half-open trials within 500 ms (1 ended in 80 ms by its attempt timeout, counted as fast)"
        );
        // A probe that answered says nothing of timeouts.
        b.open(20 * SECOND);
        assert_eq!(call(&mut b, 40 * SECOND, 2, 100 * MS), Admission::Admit);
        assert_eq!(b.reason(), "1 of 1 half-open trials within 500 ms");
    }

    #[test]
    fn validate_names_fields() {
        let mut c = cfg();
        c.percentile = 1.5;
        assert!(c.check().unwrap_err().contains("percentile"));
        assert!(cfg().check().is_ok());
    }
}
