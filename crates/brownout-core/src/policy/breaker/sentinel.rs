//! Alibaba Sentinel degrade rule (`DegradeRule` with ResponseTimeCircuitBreaker for grade 0
//! and ExceptionCircuitBreaker for grades 1 and 2), with Sentinel's field names and defaults.
//!
//! Reproduced: statistics in a single bucket spanning `statIntervalMs`, aligned to multiples
//! of it and recorded whatever the state; the response time is whole milliseconds and a call
//! is slow iff `rt > count`. After each completion in CLOSED, with `total >= minRequestAmount`:
//! grade 0 trips when `slowRatio > slowRatioThreshold` (or `== 1.0` when the threshold is
//! 1.0), grade 1 when `errorRatio > count`, grade 2 when `errors > count`; OPEN until
//! `nextRetryTimestamp = now + timeWindow` seconds. The first request at or after it turns the
//! breaker HALF_OPEN and is the single probe; all others are blocked. Any completion while
//! HALF_OPEN decides (stragglers included): grade 0 re-opens iff `rt > count`, grades 1-2 iff it
//! failed; otherwise CLOSED with the bucket reset. If the probe is blocked by a later rule
//! (here: an inner layer refuses it, [`Policy::cancel`]) the breaker reverts to OPEN keeping
//! its retry time (the issue #1638 fix), so the next request probes again.
//!
//! Deliberate differences: every failure and timeout is an exception (Sentinel only sees
//! exceptions that are traced); time is virtual from zero.

use serde::{Deserialize, Serialize};

use super::super::{Admission, Attempt, BreakerState, Completed, Policy, Refusal, Status};
use super::window::{Sample, Window};
use crate::engine::{MILLISECOND, SECOND, Time};
use crate::policy::why::Why;
use crate::policy::{BuildCtx, ConfigError, Facts, FallbackRule, PolicyConfig};

/// Sentinel `DegradeRule`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SentinelConfig {
    /// 0 = slow-request ratio, 1 = exception ratio, 2 = exception count (default 0).
    #[serde(default)]
    pub grade: u8,
    /// Grade 0: max allowed response time in ms; grade 1: ratio; grade 2: count.
    pub count: f64,
    /// Recovery timeout in seconds (> 0).
    pub time_window: u32,
    /// Requests in the bucket before the rule judges (> 0; default 5).
    #[serde(default = "five")]
    pub min_request_amount: u32,
    /// Grade 0: slow ratio that trips, in [0, 1] (default 1.0).
    #[serde(default = "one_f")]
    pub slow_ratio_threshold: f64,
    /// The statistics bucket (default 1000 ms).
    #[serde(default = "thousand")]
    pub stat_interval_ms: u64,
}

fn five() -> u32 {
    5
}
fn one_f() -> f64 {
    1.0
}
fn thousand() -> u64 {
    1_000
}

impl SentinelConfig {
    /// Check values serde cannot, naming the field (DegradeRuleManager.isValidRule).
    fn check(&self) -> Result<(), String> {
        let p = "Sentinel";
        if self.grade > 2 {
            return Err(format!("{p}.grade must be 0, 1 or 2"));
        }
        if self.count.is_nan() || self.count < 0.0 || (self.grade == 1 && self.count > 1.0) {
            return Err(format!("{p}.count must be >= 0 (and <= 1 for grade 1, the exception ratio)"));
        }
        if self.time_window == 0 {
            return Err(format!("{p}.timeWindow must be > 0"));
        }
        if self.min_request_amount == 0 {
            return Err(format!("{p}.minRequestAmount must be > 0"));
        }
        if !(0.0..=1.0).contains(&self.slow_ratio_threshold) {
            return Err(format!("{p}.slowRatioThreshold must lie in [0, 1]"));
        }
        if self.stat_interval_ms == 0 {
            return Err(format!("{p}.statIntervalMs must be > 0"));
        }
        Ok(())
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Sentinel {
    cfg: SentinelConfig,
    state: BreakerState,
    bucket: Window,
    next_retry: Time,
    probe: Option<u64>,
    why: Why,
}

impl Sentinel {
    /// Build from config.
    pub fn new(cfg: &SentinelConfig) -> Self {
        Self {
            cfg: cfg.clone(),
            state: BreakerState::Closed,
            bucket: Window::time(1, cfg.stat_interval_ms.max(1) * MILLISECOND),
            next_retry: 0,
            probe: None,
            why: Why::Fresh,
        }
    }

    fn open(&mut self, now: Time) {
        self.state = BreakerState::Open;
        self.next_retry = now.saturating_add(u64::from(self.cfg.time_window).saturating_mul(SECOND));
        self.probe = None;
    }

    /// Whether a completion is "bad": slow for grade 0, failed for grades 1-2.
    fn bad(&self, rt_ms: u64, failed: bool) -> bool {
        if self.cfg.grade == 0 { rt_ms as f64 > self.cfg.count } else { failed }
    }

    /// CLOSED: judge the bucket.
    fn exceeded(&mut self, now: Time) -> bool {
        let c = self.bucket.counts(now);
        if c.total < u64::from(self.cfg.min_request_amount) {
            return false;
        }
        let total = c.total as f64;
        let (what, value, threshold, over) = match self.cfg.grade {
            0 => {
                let ratio = c.slow as f64 / total;
                let thr = self.cfg.slow_ratio_threshold;
                ("slow-call ratio", ratio, thr, ratio > thr || (ratio == thr && thr == 1.0))
            }
            1 => ("error ratio", c.failed as f64 / total, self.cfg.count, c.failed as f64 / total > self.cfg.count),
            _ => ("errors", c.failed as f64, self.cfg.count, c.failed as f64 > self.cfg.count),
        };
        if over {
            self.why = Why::Exceeded { what, value, threshold, calls: c.total };
        }
        over
    }
}

impl Policy for Sentinel {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        match self.state {
            BreakerState::Closed => Admission::Admit,
            BreakerState::Open if a.now >= self.next_retry => {
                self.state = BreakerState::HalfOpen;
                let opened = self.next_retry.saturating_sub(u64::from(self.cfg.time_window).saturating_mul(SECOND));
                self.why = Why::BreakOver { open_for: a.now - opened };
                self.probe = Some(a.id);
                Admission::Admit
            }
            _ => Admission::Refuse(Refusal::ShortCircuited),
        }
    }

    fn cancel(&mut self, a: &Attempt) {
        if self.state == BreakerState::HalfOpen && self.probe == Some(a.id) {
            self.state = BreakerState::Open; // retry time unchanged
            self.why = Why::TrialCancelled;
            self.probe = None;
        }
    }

    fn complete(&mut self, d: &Completed) {
        let rt_ms = d.duration() / MILLISECOND;
        let failed = d.outcome.is_failure();
        let bad = self.bad(rt_ms, failed);
        let s = Sample { failed, slow: self.cfg.grade == 0 && bad };
        self.bucket.record(d.now, s);
        match self.state {
            BreakerState::Open => {}
            BreakerState::HalfOpen if bad => {
                let slow = (self.cfg.grade == 0).then(|| (d.duration(), (self.cfg.count * 1e6) as Time));
                self.why = Why::TrialFailed { slow };
                self.open(d.now);
            }
            BreakerState::HalfOpen => {
                self.why = Why::TrialsPassed { ok: 1, needed: 1 };
                self.state = BreakerState::Closed;
                self.probe = None;
                self.bucket.clear(); // resetStat
            }
            BreakerState::Closed => {
                if self.exceeded(d.now) {
                    self.open(d.now);
                }
            }
        }
    }

    fn status(&self) -> Status {
        Status { breaker: Some(self.state), degraded: self.state != BreakerState::Closed, ..Status::default() }
    }

    fn reason(&self) -> String {
        self.why.text()
    }
}

impl PolicyConfig for SentinelConfig {
    const KIND: &'static str = "sentinel-breaker";

    fn facts(&self) -> Facts {
        // A short circuit is a 503 the class's fallback decides.
        Facts::plain(crate::metrics::LayerKind::Breaker).fallback(FallbackRule::Always)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(self.check()?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Sentinel::new(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::CallOutcome::{self, Error, Success};

    const MS: Time = MILLISECOND;

    fn rt_rule() -> SentinelConfig {
        SentinelConfig {
            grade: 0,
            count: 200.0,
            time_window: 10,
            min_request_amount: 5,
            slow_ratio_threshold: 0.5,
            stat_interval_ms: 1_000,
        }
    }
    fn att(now: Time, id: u64) -> Attempt {
        Attempt::new(now, 0, id)
    }
    fn done(b: &mut Sentinel, start: Time, end: Time, id: u64, o: CallOutcome) {
        b.complete(&Completed::new(end, 0, id, start, o));
    }
    fn state(b: &Sentinel) -> BreakerState {
        b.status().breaker.unwrap()
    }

    #[test]
    fn slow_ratio_must_exceed_the_threshold() {
        let mut b = Sentinel::new(&rt_rule());
        // In [0, 1 s): rt 201 ms x2 (slow), 200 ms x2 (not slow: rt > count is strict),
        // 100 ms: 2 of 5 = 0.4.
        for (i, rt) in [201, 201, 200, 200, 100].into_iter().enumerate() {
            done(&mut b, 0, rt * MS, i as u64, Success);
        }
        assert_eq!(state(&b), BreakerState::Closed);
        // A third slow one: 3 of 6 = 0.5, not > 0.5.
        done(&mut b, 500 * MS, 701 * MS, 6, Success);
        assert_eq!(state(&b), BreakerState::Closed);
        done(&mut b, 500 * MS, 701 * MS, 7, Success); // 4 of 7 > 0.5
        assert_eq!(state(&b), BreakerState::Open);
    }

    #[test]
    fn the_single_bucket_resets_at_each_interval() {
        let mut b = Sentinel::new(&rt_rule());
        // Four 999 ms calls (slow) end in [0, 1 s).
        for i in 0..4 {
            done(&mut b, 0, 999 * MS, i, Success);
        }
        // The fifth slow call lands in the next interval: a fresh bucket with 1 < 5 calls.
        done(&mut b, 0, 1_000 * MS, 4, Success);
        assert_eq!(state(&b), BreakerState::Closed);
    }

    #[test]
    fn ratio_one_trips_at_equality_only_for_threshold_one() {
        let mut b = Sentinel::new(&SentinelConfig { slow_ratio_threshold: 1.0, ..rt_rule() });
        for i in 0..5 {
            done(&mut b, 0, 300 * MS, i, Success);
        }
        assert_eq!(state(&b), BreakerState::Open, "5 of 5 slow == 1.0");
    }

    #[test]
    fn single_probe_decides_and_close_resets_the_bucket() {
        let mut b = Sentinel::new(&rt_rule());
        for i in 0..5 {
            done(&mut b, 0, 300 * MS, i, Success);
        }
        let opened = 300 * MS;
        let refused = Admission::Refuse(Refusal::ShortCircuited);
        assert_eq!(b.admit(&att(opened + 10 * SECOND - 1, 10)), refused);
        assert_eq!(b.admit(&att(opened + 10 * SECOND, 11)), Admission::Admit);
        assert_eq!(b.admit(&att(opened + 10 * SECOND, 12)), refused, "single probe");
        let t = opened + 10 * SECOND;
        // Probe rt 201 ms > 200: re-open for another 10 s.
        done(&mut b, t, t + 201 * MS, 11, Success);
        assert_eq!(state(&b), BreakerState::Open);
        let u = t + 201 * MS + 10 * SECOND;
        assert_eq!(b.admit(&att(u, 13)), Admission::Admit);
        done(&mut b, u, u + 200 * MS, 13, Success);
        assert_eq!(state(&b), BreakerState::Closed);
        // Reset: four more slow calls in the same interval do not reach minRequestAmount.
        for i in 0..4 {
            done(&mut b, u, u + 300 * MS, 20 + i, Success);
        }
        assert_eq!(state(&b), BreakerState::Closed);
    }

    #[test]
    fn a_blocked_probe_reverts_to_open_keeping_the_retry_time() {
        let mut b = Sentinel::new(&rt_rule());
        for i in 0..5 {
            done(&mut b, 0, 300 * MS, i, Success);
        }
        let t = 300 * MS + 10 * SECOND;
        assert_eq!(b.admit(&att(t, 11)), Admission::Admit);
        b.cancel(&att(t, 11));
        assert_eq!(state(&b), BreakerState::Open);
        assert_eq!(b.admit(&att(t + 1, 12)), Admission::Admit, "next request probes");
    }

    #[test]
    fn exception_ratio_and_count_grades() {
        let mut b = Sentinel::new(&SentinelConfig { grade: 1, count: 0.4, ..rt_rule() });
        for (i, o) in [Error, Error, Success, Success, Success].into_iter().enumerate() {
            done(&mut b, 0, MS, i as u64, o);
        }
        assert_eq!(state(&b), BreakerState::Closed, "0.4 is not > 0.4");
        done(&mut b, 0, MS, 5, Error);
        assert_eq!(state(&b), BreakerState::Open, "3 of 6 = 0.5");
        let mut c = Sentinel::new(&SentinelConfig { grade: 2, count: 2.0, ..rt_rule() });
        for i in 0..5 {
            done(&mut c, 0, MS, i, if i < 2 { Error } else { Success });
        }
        assert_eq!(state(&c), BreakerState::Closed, "2 errors is not > 2");
        done(&mut c, 0, MS, 9, Error);
        assert_eq!(state(&c), BreakerState::Open);
    }
}
