//! Generic error-rate / slow-call-rate breaker: a COUNT or TIME sliding window, a minimum
//! number of calls, rates that trip at `>=`, a break that may grow per re-open, N half-open
//! trial calls judged by the same thresholds, and two options no library has: in-flight
//! ageing (a call running past the slow threshold counts as slow *now*, not when it
//! finishes: resilience4j#1597) and a straggler policy (credit a late outcome to the current
//! state, as the libraries do, or discard it).
//!
//! Conventions: slow is `duration > slow_call_duration_threshold`; rates are percentages.
//! Open -> half-open happens on the first call at or after the break's end (lazy), or at the
//! break's end by timer (`automatic_half_open`). Half-open permits are not returned when a
//! trial completes (only when it is cancelled), so at most `half_open_calls` trials run per
//! half-open episode; a bounded `max_half_open_wait` re-opens a half-open breaker whose trials
//! never report. An aged call that later completes is not counted again (its error, if it
//! fails, is not added).

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, Completed, Policy, Refusal, Status};
use super::inflight::InFlight;
use super::trials::Trials;
use super::window::{Counts, Sample, Window};
use crate::engine::Time;
use crate::policy::why::Why;
use crate::policy::{BuildCtx, ConfigError, Facts, FallbackRule, PolicyConfig};
use crate::units::Dur;

/// Which window the closed state measures.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum WindowSpec {
    /// The last N outcomes.
    Count(u32),
    /// `buckets` buckets of `bucket` width, aligned to multiples of the width.
    Time {
        /// Number of buckets.
        buckets: u32,
        /// Width of one bucket.
        bucket: Dur,
    },
}

/// What to do with the outcome of a call started before the last state transition.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema)]
pub enum Stragglers {
    /// Credit it to the current state (resilience4j, Polly, Hystrix).
    #[default]
    Credit,
    /// Ignore it.
    Discard,
}

/// Error-rate breaker configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorRateConfig {
    /// The closed-state window.
    pub window: WindowSpec,
    /// Outcomes needed in the window before rates are judged.
    #[serde(default = "one")]
    pub minimum_calls: u32,
    /// Failure percentage that opens the breaker (`>=`), in (0, 100].
    #[serde(default = "fifty")]
    pub failure_rate_threshold: f64,
    /// A call longer than this (`>`) is slow. None = no slow-call criterion.
    #[serde(default)]
    pub slow_call_duration_threshold: Option<Dur>,
    /// Slow-call percentage that opens the breaker (`>=`), in (0, 100].
    #[serde(default = "hundred")]
    pub slow_call_rate_threshold: f64,
    /// Open duration after the first trip.
    pub break_duration: Dur,
    /// Factor applied to the break at each re-open from half-open (>= 1; 1 = fixed).
    #[serde(default = "one_f")]
    pub break_multiplier: f64,
    /// Cap on the grown break.
    #[serde(default)]
    pub max_break: Option<Dur>,
    /// Trial calls per half-open episode (>= 1); the verdict comes once that many outcomes are in.
    #[serde(default = "one")]
    pub half_open_calls: u32,
    /// Longest stay in half-open before re-opening (> 0; None = unbounded).
    #[serde(default)]
    pub max_half_open_wait: Option<Dur>,
    /// Go half-open by timer at the break's end instead of on the first call after it.
    #[serde(default)]
    pub automatic_half_open: bool,
    /// Count calls in flight longer than the slow threshold as slow as soon as they pass it
    /// (needs `slow_call_duration_threshold`).
    #[serde(default)]
    pub inflight_ageing: bool,
    /// Outcomes of calls started before the last transition.
    #[serde(default)]
    pub stragglers: Stragglers,
}

fn one() -> u32 {
    1
}
fn one_f() -> f64 {
    1.0
}
fn fifty() -> f64 {
    50.0
}
fn hundred() -> f64 {
    100.0
}

impl ErrorRateConfig {
    /// Check values serde cannot, naming the field.
    fn check(&self) -> Result<(), String> {
        let p = "ErrorRateBreaker";
        match self.window {
            WindowSpec::Count(0) => return Err(format!("{p}.window: Count size must be >= 1")),
            WindowSpec::Time { buckets: 0, .. } => {
                return Err(format!("{p}.window: Time buckets must be >= 1"));
            }
            WindowSpec::Time { bucket, .. } if bucket.ns() == 0 => {
                return Err(format!("{p}.window: Time bucket must be > 0"));
            }
            _ => {}
        }
        check_pct(p, "failure_rate_threshold", self.failure_rate_threshold)?;
        check_pct(p, "slow_call_rate_threshold", self.slow_call_rate_threshold)?;
        check_break(p, self.break_duration, self.break_multiplier)?;
        if self.half_open_calls == 0 {
            return Err(format!("{p}.half_open_calls must be >= 1"));
        }
        if self.max_half_open_wait.is_some_and(|d| d.ns() == 0) {
            return Err(format!("{p}.max_half_open_wait must be > 0 when set"));
        }
        if self.inflight_ageing && self.slow_call_duration_threshold.is_none() {
            return Err(format!("{p}.inflight_ageing needs slow_call_duration_threshold"));
        }
        Ok(())
    }
}

/// A percentage in (0, 100], naming the field on error.
pub(crate) fn check_pct(policy: &str, field: &str, v: f64) -> Result<(), String> {
    if v > 0.0 && v <= 100.0 { Ok(()) } else { Err(format!("{policy}.{field} must lie in (0, 100]")) }
}

/// A break > 0 and a multiplier >= 1, naming the fields on error.
pub(crate) fn check_break(policy: &str, d: Dur, mult: f64) -> Result<(), String> {
    if d.ns() == 0 {
        return Err(format!("{policy}.break_duration must be > 0"));
    }
    if mult.is_nan() || mult < 1.0 {
        return Err(format!("{policy}.break_multiplier must be >= 1"));
    }
    Ok(())
}

/// Break length for the `attempts`-th consecutive open: `base * mult^(attempts-1)`, capped.
pub(crate) fn grown_break(base: Time, mult: f64, cap: Option<Time>, attempts: u32) -> Time {
    let exp = attempts.saturating_sub(1).min(i32::MAX as u32) as i32;
    let raw = base as f64 * mult.powi(exp);
    let cap = cap.unwrap_or(Time::MAX);
    if raw >= cap as f64 { cap } else { (raw as Time).max(1) }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct ErrorRate {
    cfg: ErrorRateConfig,
    slow_ns: Option<Time>,
    state: BreakerState,
    window: Window,
    trials: Window,
    probes: Trials,
    open_until: Time,
    half_open_deadline: Option<Time>,
    attempts: u32,
    since: Time,
    inflight: InFlight,
    why: Why,
}

impl ErrorRate {
    /// Build from config.
    pub fn new(cfg: &ErrorRateConfig) -> Self {
        let window = match cfg.window {
            WindowSpec::Count(n) => Window::count(n),
            WindowSpec::Time { buckets, bucket } => Window::time(buckets, bucket.ns()),
        };
        Self {
            slow_ns: cfg.slow_call_duration_threshold.map(Dur::ns),
            state: BreakerState::Closed,
            window,
            trials: Window::count(cfg.half_open_calls),
            probes: Trials::default(),
            open_until: 0,
            half_open_deadline: None,
            attempts: 0,
            since: 0,
            inflight: InFlight::default(),
            why: Why::Fresh,
            cfg: cfg.clone(),
        }
    }

    fn ageing(&self) -> Option<Time> {
        self.slow_ns.filter(|_| self.cfg.inflight_ageing)
    }

    fn exceeded(&self, c: Counts, min_calls: u32) -> bool {
        let slow = self.slow_ns.is_some() && c.slow_pct() >= self.cfg.slow_call_rate_threshold;
        c.total > 0 && c.total >= u64::from(min_calls) && (c.failure_pct() >= self.cfg.failure_rate_threshold || slow)
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
        self.open_until = now.saturating_add(b);
        self.half_open_deadline = None;
        self.since = now;
        self.window.clear();
    }

    fn half_open(&mut self, now: Time) {
        self.why = Why::BreakOver { open_for: now - self.since };
        self.state = BreakerState::HalfOpen;
        self.probes.open(self.cfg.half_open_calls);
        self.trials.clear();
        self.half_open_deadline = self.cfg.max_half_open_wait.map(|w| now.saturating_add(w.ns()));
        self.since = now;
    }

    fn close(&mut self, now: Time) {
        self.state = BreakerState::Closed;
        self.attempts = 0;
        self.half_open_deadline = None;
        self.window.clear();
        self.since = now;
    }

    /// The figures of a rate verdict on `c`.
    fn rates(&self, trial: bool, counts: Counts) -> Why {
        let slow_pct = self.slow_ns.map(|_| self.cfg.slow_call_rate_threshold);
        Why::Rates { trial, counts, failure_pct: self.cfg.failure_rate_threshold, slow_pct }
    }

    /// Record an outcome observed at `now` for a call started at `started`.
    fn record(&mut self, now: Time, started: Time, s: Sample) {
        if self.cfg.stragglers == Stragglers::Discard && started < self.since {
            return;
        }
        match self.state {
            BreakerState::Closed => {
                self.window.record(now, s);
                let c = self.window.counts(now);
                if self.exceeded(c, self.cfg.minimum_calls) {
                    self.why = self.rates(false, c);
                    self.open(now);
                }
            }
            BreakerState::HalfOpen => {
                self.trials.record(now, s);
                let c = self.trials.counts(now);
                if c.total >= u64::from(self.cfg.half_open_calls) {
                    self.why = self.rates(true, c);
                    if self.exceeded(c, self.cfg.half_open_calls) {
                        self.open(now);
                    } else {
                        self.close(now);
                    }
                }
            }
            // Outcomes arriving while open change nothing.
            BreakerState::Open => {}
        }
    }

    /// Time-driven work due at `now`: bounded half-open, automatic half-open, ageing.
    fn tick(&mut self, now: Time) {
        if self.state == BreakerState::HalfOpen && self.half_open_deadline.is_some_and(|d| now >= d) {
            self.why = Why::HalfOpenExpired { waited: now - self.since };
            self.open(now);
        }
        if self.state == BreakerState::Open && self.cfg.automatic_half_open && now >= self.open_until {
            self.half_open(now);
        }
        // While open nothing is recorded, so calls age only once closed or half-open.
        if let Some(thr) = self.ageing().filter(|_| self.state != BreakerState::Open) {
            for start in self.inflight.age_out(now, thr) {
                let slow = Sample { failed: false, slow: true };
                self.record(now, start, slow);
            }
        }
    }
}

impl Policy for ErrorRate {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        self.tick(a.now);
        if self.state == BreakerState::Open && a.now >= self.open_until {
            self.half_open(a.now);
        }
        match self.state {
            BreakerState::Open => return Admission::Refuse(Refusal::ShortCircuited),
            BreakerState::HalfOpen if !self.probes.take(a.id) => return Admission::Refuse(Refusal::ShortCircuited),
            BreakerState::HalfOpen => {}
            BreakerState::Closed => {}
        }
        if self.ageing().is_some() {
            self.inflight.admit(a.id, a.now);
        }
        Admission::Admit
    }

    fn cancel(&mut self, a: &Attempt) {
        self.inflight.remove(a.id);
        self.probes.cancel(a.id, self.state == BreakerState::HalfOpen);
    }

    fn complete(&mut self, d: &Completed) {
        let tracked = self.inflight.remove(d.id);
        self.tick(d.now);
        if self.ageing().is_some() && !tracked {
            return; // already counted as slow when it aged out
        }
        let slow = self.slow_ns.is_some_and(|t| d.duration() > t);
        let s = Sample { failed: d.outcome.is_failure(), slow };
        self.record(d.now, d.admitted_at, s);
    }

    fn on_wakeup(&mut self, now: Time) {
        self.tick(now);
    }

    fn status(&self) -> Status {
        let mut wake: Option<Time> = None;
        let mut want = |t: Time| wake = Some(wake.map_or(t, |w: Time| w.min(t)));
        match self.state {
            BreakerState::Open if self.cfg.automatic_half_open => want(self.open_until),
            BreakerState::Open => {}
            _ => {
                if let Some(d) = self.half_open_deadline {
                    want(d);
                }
                if let Some(t) = self.ageing().and_then(|thr| self.inflight.next_due(thr)) {
                    want(t);
                }
            }
        }
        Status {
            breaker: Some(self.state),
            wake_at: wake,
            degraded: self.state != BreakerState::Closed,
            ..Status::default()
        }
    }

    fn reason(&self) -> String {
        self.why.text()
    }
}

impl PolicyConfig for ErrorRateConfig {
    const KIND: &'static str = "error-rate-breaker";

    fn facts(&self) -> Facts {
        let window = match self.window {
            WindowSpec::Count(n) => f64::from(n),
            WindowSpec::Time { buckets, .. } => f64::from(buckets),
        };
        Facts::plain(crate::metrics::LayerKind::Breaker)
            .fallback(FallbackRule::Always)
            .window_samples(window + f64::from(self.half_open_calls))
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(self.check()?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(ErrorRate::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MILLISECOND, SECOND};
    use crate::policy::CallOutcome;
    use crate::policy::CallOutcome::{Error, Success};

    const MS: Time = MILLISECOND;

    fn cfg() -> ErrorRateConfig {
        ErrorRateConfig {
            window: WindowSpec::Count(4),
            minimum_calls: 4,
            failure_rate_threshold: 50.0,
            slow_call_duration_threshold: Some(Dur::ms(100)),
            slow_call_rate_threshold: 50.0,
            break_duration: Dur::secs(1),
            break_multiplier: 1.0,
            max_break: None,
            half_open_calls: 2,
            max_half_open_wait: None,
            automatic_half_open: false,
            inflight_ageing: false,
            stragglers: Stragglers::Credit,
        }
    }
    fn att(now: Time, id: u64) -> Attempt {
        Attempt::new(now, 0, id)
    }
    fn call(b: &mut ErrorRate, at: Time, id: u64, dur: Time, o: CallOutcome) -> Admission {
        let adm = b.admit(&att(at, id));
        if adm == Admission::Admit {
            b.complete(&Completed::new(at + dur, 0, id, at, o));
        }
        adm
    }
    fn state(b: &ErrorRate) -> BreakerState {
        b.status().breaker.unwrap()
    }

    #[test]
    fn trips_at_exactly_the_failure_threshold_once_minimum_calls_are_in() {
        let mut b = ErrorRate::new(&cfg());
        // 2 failures of 3 calls = 66 % but below minimum_calls (4): stays closed.
        for (i, o) in [Error, Success, Error].into_iter().enumerate() {
            call(&mut b, i as Time * MS, i as u64, MS, o);
        }
        assert_eq!(state(&b), BreakerState::Closed);
        // 4th call succeeds: 2 of 4 = 50 % >= 50 %: open.
        call(&mut b, 10 * MS, 3, MS, Success);
        assert_eq!(state(&b), BreakerState::Open);
        assert_eq!(b.reason(), "failure rate 50 % over 4 calls >= 50 %", "2 of 4 failed");
    }

    #[test]
    fn slow_is_strictly_longer_than_the_threshold() {
        let mut b = ErrorRate::new(&cfg());
        // Four calls of exactly 100 ms are not slow.
        for i in 0..4 {
            call(&mut b, 0, i, 100 * MS, Success);
        }
        assert_eq!(state(&b), BreakerState::Closed);
        // Two of 101 ms make 2 of the last 4 slow = 50 %: open.
        call(&mut b, SECOND, 4, 101 * MS, Success);
        assert_eq!(state(&b), BreakerState::Closed);
        call(&mut b, SECOND, 5, 101 * MS, Success);
        assert_eq!(state(&b), BreakerState::Open);
    }

    #[test]
    fn half_open_verdict_waits_for_all_trials_and_break_grows_to_its_cap() {
        let mut c = cfg();
        c.break_multiplier = 3.0;
        c.max_break = Some(Dur::secs(5));
        let mut b = ErrorRate::new(&c);
        for i in 0..4 {
            call(&mut b, 0, i, MS, Error);
        }
        // Opened at 1 ms for 1 s.
        assert_eq!(b.admit(&att(1_000 * MS, 10)), Admission::Refuse(Refusal::ShortCircuited));
        assert_eq!(b.admit(&att(1_001 * MS, 11)), Admission::Admit);
        assert_eq!(b.reason(), "open for 1,000 ms: half-open trial", "opened at 1 ms, trial at 1,001 ms");
        assert_eq!(b.admit(&att(1_001 * MS, 12)), Admission::Admit);
        assert_eq!(b.admit(&att(1_001 * MS, 13)), Admission::Refuse(Refusal::ShortCircuited));
        let done = |id, o| Completed::new(1_002 * MS, 0, id, 1_001 * MS, o);
        b.complete(&done(11, Error));
        assert_eq!(state(&b), BreakerState::HalfOpen, "one of two outcomes in");
        assert_eq!(
            b.admit(&att(1_002 * MS, 14)),
            Admission::Refuse(Refusal::ShortCircuited),
            "permits are not returned"
        );
        b.complete(&done(12, Success));
        // 1 of 2 failed = 50 %: re-open with break 3 s (attempt 2).
        assert_eq!(state(&b), BreakerState::Open);
        assert_eq!(b.reason(), "failure rate 50 % over 2 trial calls >= 50 %");
        let t = 1_002 * MS;
        assert_eq!(b.admit(&att(t + 3 * SECOND - 1, 20)), Admission::Refuse(Refusal::ShortCircuited));
        assert_eq!(b.admit(&att(t + 3 * SECOND, 21)), Admission::Admit);
        b.cancel(&att(t + 3 * SECOND, 21));
        assert_eq!(b.admit(&att(t + 3 * SECOND, 22)), Admission::Admit, "a cancelled trial returns its permit");
        assert_eq!(b.admit(&att(t + 3 * SECOND, 23)), Admission::Admit);
        let u = t + 3 * SECOND;
        for id in [22, 23] {
            b.complete(&Completed::new(u + MS, 0, id, u, Error));
        }
        // Attempt 3: 9 s capped to 5 s.
        assert_eq!(b.admit(&att(u + MS + 5 * SECOND - 1, 30)), Admission::Refuse(Refusal::ShortCircuited));
        assert_eq!(b.admit(&att(u + MS + 5 * SECOND, 31)), Admission::Admit);
    }

    #[test]
    fn inflight_ageing_trips_at_the_threshold_not_at_completion() {
        let mut c = cfg();
        c.inflight_ageing = true;
        c.minimum_calls = 2;
        let mut b = ErrorRate::new(&c);
        assert_eq!(b.admit(&att(0, 1)), Admission::Admit);
        assert_eq!(b.admit(&att(10 * MS, 2)), Admission::Admit);
        // The oldest exceeds 100 ms at 100 ms + 1 ns.
        assert_eq!(b.status().wake_at, Some(100 * MS + 1));
        b.on_wakeup(100 * MS + 1);
        assert_eq!(state(&b), BreakerState::Closed, "1 sample < minimum 2");
        assert_eq!(b.status().wake_at, Some(110 * MS + 1));
        b.on_wakeup(110 * MS + 1);
        assert_eq!(state(&b), BreakerState::Open, "2 of 2 slow while still in flight");
        // Their completions are not counted again (nothing changes while open anyway).
        b.complete(&Completed::new(6 * SECOND, 0, 1, 0, Success));
        assert_eq!(state(&b), BreakerState::Open);
    }

    #[test]
    fn aged_calls_completing_later_are_not_double_counted() {
        let mut c = cfg();
        c.inflight_ageing = true;
        c.window = WindowSpec::Count(10);
        c.minimum_calls = 10;
        let mut b = ErrorRate::new(&c);
        b.admit(&att(0, 1));
        b.on_wakeup(100 * MS + 1);
        let aged = Counts { total: 1, failed: 0, slow: 1 };
        assert_eq!(b.window.counts(100 * MS + 1), aged);
        // It finishes later with an error: neither a second sample nor the error is added.
        b.complete(&Completed::new(200 * MS, 0, 1, 0, Error));
        assert_eq!(b.window.counts(200 * MS), aged);
        assert_eq!(b.status().wake_at, None, "nothing left in flight");
    }

    #[test]
    fn discarded_stragglers_do_not_decide_half_open() {
        let mut c = cfg();
        c.stragglers = Stragglers::Discard;
        c.half_open_calls = 1;
        let mut b = ErrorRate::new(&c);
        b.admit(&att(0, 99)); // a straggler started while closed
        for i in 0..4 {
            call(&mut b, MS, i, MS, Error);
        }
        assert_eq!(b.admit(&att(2 * SECOND, 5)), Admission::Admit);
        b.complete(&Completed::new(2 * SECOND + 1, 0, 99, 0, Success));
        assert_eq!(state(&b), BreakerState::HalfOpen, "the straggler's success is discarded");
        // Without a slow criterion (the straggler took 2 s, which would count as slow).
        let mut credit = ErrorRate::new(&ErrorRateConfig { slow_call_duration_threshold: None, ..cfg_one_trial() });
        credit.admit(&att(0, 99));
        for i in 0..4 {
            call(&mut credit, MS, i, MS, Error);
        }
        credit.admit(&att(2 * SECOND, 5));
        credit.complete(&Completed::new(2 * SECOND + 1, 0, 99, 0, Success));
        assert_eq!(state(&credit), BreakerState::Closed, "credited: the straggler closes it");
    }

    fn cfg_one_trial() -> ErrorRateConfig {
        ErrorRateConfig { half_open_calls: 1, ..cfg() }
    }

    #[test]
    fn bounded_half_open_and_automatic_transition() {
        let mut c = cfg_one_trial();
        c.automatic_half_open = true;
        c.max_half_open_wait = Some(Dur::secs(2));
        let mut b = ErrorRate::new(&c);
        for i in 0..4 {
            call(&mut b, 0, i, 0, Error);
        }
        assert_eq!(b.status().wake_at, Some(SECOND));
        b.on_wakeup(SECOND);
        assert_eq!(state(&b), BreakerState::HalfOpen);
        assert_eq!(b.admit(&att(SECOND, 9)), Admission::Admit);
        assert_eq!(b.status().wake_at, Some(3 * SECOND));
        b.on_wakeup(3 * SECOND);
        assert_eq!(state(&b), BreakerState::Open, "the trial never reported");
    }

    #[test]
    fn time_window_forgets_old_failures() {
        let mut c = cfg();
        c.window = WindowSpec::Time { buckets: 2, bucket: Dur::secs(1) };
        c.minimum_calls = 2;
        let mut b = ErrorRate::new(&c);
        call(&mut b, 0, 1, 0, Error);
        // At 2 s bucket 0 has slid out; one failure alone is below minimum 2.
        call(&mut b, 2 * SECOND, 2, 0, Success);
        assert_eq!(state(&b), BreakerState::Closed);
        call(&mut b, 2 * SECOND, 3, 0, Error);
        assert_eq!(state(&b), BreakerState::Open, "1 of 2 = 50 %");
    }

    #[test]
    fn validate_names_fields() {
        let mut c = cfg();
        c.failure_rate_threshold = 0.0;
        assert!(c.check().unwrap_err().contains("failure_rate_threshold"));
        let mut c = cfg();
        c.slow_call_duration_threshold = None;
        c.inflight_ageing = true;
        assert!(c.check().unwrap_err().contains("inflight_ageing"));
        assert!(cfg().check().is_ok());
    }
}
