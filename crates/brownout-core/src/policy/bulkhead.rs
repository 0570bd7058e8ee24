//! Tiered bulkhead by request class (the first seed's design): `permits` shared by classes,
//! each with a guaranteed share and optional borrowing of idle permits, a per-class answer
//! when it cannot get a permit (wait, or take the fallback now), and a latency trip that
//! sends "fallback now" classes straight to the cache while the dependency is degraded.
//!
//! Partitions follow Netflix's `AbstractPartitionedLimiter`: a class's limit is
//! `max(1, ceil(permits * share))` and is enforced only when borrowing is off or the total is
//! full. Difference: Netflix then still admits a class below its own limit, letting the
//! total exceed the global limit; here `permits` is a hard cap, so a class below its share
//! that finds the total full waits for the next free permit (or falls back).
//!
//! Degraded: at the end of each `window` the p95 of the durations completed in it is compared
//! with `p95_over`; `windows` slow windows in a row trip it (windows with fewer than
//! `min_samples` completions leave the count as it is). While degraded, "fallback now" classes
//! are refused with `Refusal::Fallback`; after `recovery` the first such request is let
//! through as the single probe, and a successful probe no slower than `p95_over` ends
//! degradation (a slow or failed one starts another `recovery`). Windows start at the first
//! attempt and again when degradation ends.

use serde::{Deserialize, Serialize};

use super::Status;
use super::percentile::DurationHist;
use super::why::Why;
use super::{Admission, Attempt, BuildCtx, CallOutcome, ClassId, Completed, Policy, Refusal};
use crate::engine::Time;
use crate::policy::{ConfigError, Facts, FallbackRule, PolicyConfig};
use crate::units::Dur;

/// Tiered bulkhead configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TieredBulkheadConfig {
    /// Calls in flight at once per instance, all classes together (a hard cap, >= 1).
    pub permits: u32,
    /// Per-class partitions, each class at most once. Classes not listed get share 0, borrow
    /// and 429 when full.
    pub classes: Vec<ClassTier>,
    /// Attempts that may wait at once (for `Wait` classes; default unbounded).
    #[serde(default = "unbounded")]
    pub queue: u32,
    /// The latency trip; None = never degraded.
    #[serde(default)]
    pub degrade: Option<DegradeConfig>,
}

fn unbounded() -> u32 {
    u32::MAX
}

/// One class's partition.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassTier {
    /// Class name as in the scenario.
    pub name: String,
    /// Guaranteed fraction of `permits`, in [0, 1]; the shares of all classes sum to <= 1.
    pub share: f64,
    /// May use idle permits beyond its share while the total is not full.
    #[serde(default = "yes")]
    pub borrow: bool,
    /// What a request gets when no permit is free (or, for `FallbackNow`, while degraded).
    pub on_full: OnFull,
}

fn yes() -> bool {
    true
}

/// A class's answer when it cannot get a permit.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub enum OnFull {
    /// Wait up to this long for a permit (checkout keeps calling within its deadline); a
    /// wait that ends without one is refused with 429.
    Wait(Dur),
    /// Take the class's fallback at once (browse and search serve cached stock); a 429 for
    /// a class with `fallback: None`.
    FallbackNow,
    /// Refuse with 429, even where the class has a fallback.
    Reject,
}

/// The latency trip.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DegradeConfig {
    /// Measurement window (> 0).
    pub window: Dur,
    /// A window is slow when the p95 of its completed durations exceeds this.
    pub p95_over: Dur,
    /// Slow windows in a row that trip the degraded state (>= 1).
    pub windows: u32,
    /// Time from tripping (or a failed probe) to the next probe.
    pub recovery: Dur,
    /// Completions a window needs to count.
    #[serde(default = "one")]
    pub min_samples: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone)]
struct Part {
    limit: u32,
    busy: u32,
    borrow: bool,
    on_full: OnFull,
}

/// The tiered bulkhead. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct TieredBulkhead {
    permits: u32,
    queue: u32,
    in_flight: u32,
    parts: Vec<Part>,
    /// Partition of each class id (the last partition is the "unknown" one).
    part_of: Vec<usize>,
    trip: Option<Trip>,
}

#[derive(Debug, Clone)]
struct Trip {
    cfg: DegradeConfig,
    /// Durations completed in the current window (microseconds).
    hist: DurationHist,
    streak: u32,
    window_end: Option<Time>,
    degraded: bool,
    probe_at: Time,
    probe: Option<u64>,
    why: Why,
}

impl TieredBulkhead {
    /// Build from config, resolving class names through `ctx`.
    pub fn new(cfg: &TieredBulkheadConfig, ctx: &BuildCtx) -> Self {
        let part = |share: f64, borrow, on_full| Part {
            // Netflix: max(1, ceil(total * percent)).
            limit: ((cfg.permits as f64 * share).ceil() as u32).max(1),
            busy: 0,
            borrow,
            on_full,
        };
        let mut parts: Vec<Part> = cfg.classes.iter().map(|t| part(t.share, t.borrow, t.on_full)).collect();
        let unknown = parts.len();
        parts.push(part(0.0, true, OnFull::Reject));
        let mut part_of = vec![unknown; ctx.classes.len()];
        for (i, t) in cfg.classes.iter().enumerate() {
            if let Some(id) = ctx.class_id(&t.name) {
                part_of[id as usize] = i;
            }
        }
        let trip = cfg.degrade.as_ref().map(|d| Trip {
            cfg: d.clone(),
            hist: DurationHist::default(),
            streak: 0,
            window_end: None,
            degraded: false,
            probe_at: 0,
            probe: None,
            why: Why::Fresh,
        });
        Self { permits: cfg.permits, queue: cfg.queue, in_flight: 0, parts, part_of, trip }
    }

    fn part(&self, class: ClassId) -> usize {
        self.part_of.get(class as usize).copied().unwrap_or(self.parts.len() - 1)
    }

    fn has_permit(&self, p: usize) -> bool {
        let part = &self.parts[p];
        self.in_flight < self.permits && (part.busy < part.limit || part.borrow)
    }

    fn take(&mut self, p: usize) -> Admission {
        self.in_flight += 1;
        self.parts[p].busy += 1;
        Admission::Admit
    }

    /// While degraded: a "fallback now" request is the probe if one is due, else falls back.
    fn degraded_admit(&mut self, a: &Attempt, p: usize) -> Admission {
        let due = self.trip.as_ref().is_some_and(|t| t.probe.is_none() && a.now >= t.probe_at);
        if due && self.has_permit(p) {
            if let Some(t) = self.trip.as_mut() {
                t.probe = Some(a.id);
            }
            return self.take(p);
        }
        Admission::Refuse(Refusal::Fallback)
    }

    fn release(&mut self, class: ClassId) {
        let p = self.part(class);
        self.parts[p].busy = self.parts[p].busy.saturating_sub(1);
        self.in_flight = self.in_flight.saturating_sub(1);
    }
}

impl Trip {
    fn restart_windows(&mut self, now: Time) {
        self.hist.reset();
        self.streak = 0;
        self.window_end = Some(now.saturating_add(self.cfg.window.ns()));
    }

    fn close_window(&mut self, now: Time) {
        if self.hist.len() >= self.cfg.min_samples as u64 {
            let p95 = self.hist.quantile(0.95).to_time();
            if p95 > self.cfg.p95_over.ns() {
                self.streak += 1;
                let threshold = self.cfg.p95_over.ns();
                self.why = Why::Latency { percentile: 0.95, value: p95, threshold, windows: self.streak };
            } else {
                self.streak = 0;
            }
        }
        self.hist.reset();
        if self.streak >= self.cfg.windows {
            self.degraded = true;
            self.probe_at = now.saturating_add(self.cfg.recovery.ns());
            self.window_end = None;
        } else {
            self.window_end = Some(now.saturating_add(self.cfg.window.ns()));
        }
    }

    fn on_complete(&mut self, d: &Completed) {
        if !self.degraded {
            self.hist.record(d.duration());
        } else if self.probe == Some(d.id) {
            self.probe = None;
            let fast = d.outcome == CallOutcome::Success && d.duration() <= self.cfg.p95_over.ns();
            if fast {
                self.why = Why::ProbeOk { took: d.duration(), threshold: self.cfg.p95_over.ns() };
                self.degraded = false;
                self.restart_windows(d.now);
            } else {
                self.probe_at = d.now.saturating_add(self.cfg.recovery.ns());
            }
        }
    }
}

impl Policy for TieredBulkhead {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        if let Some(t) = self.trip.as_mut()
            && !t.degraded
            && t.window_end.is_none()
        {
            t.restart_windows(a.now);
        }
        let p = self.part(a.class);
        let degraded = self.trip.as_ref().is_some_and(|t| t.degraded);
        if degraded && self.parts[p].on_full == OnFull::FallbackNow {
            return self.degraded_admit(a, p);
        }
        if self.has_permit(p) {
            return self.take(p);
        }
        match self.parts[p].on_full {
            OnFull::Wait(max_wait) if a.queued < self.queue && max_wait.ns() > 0 => {
                Admission::Wait { max_wait: max_wait.ns() }
            }
            OnFull::FallbackNow => Admission::Refuse(Refusal::Fallback),
            _ => Admission::Refuse(Refusal::Rejected),
        }
    }

    fn refusal(&self, class: crate::policy::ClassId) -> Refusal {
        match self.parts[self.part(class)].on_full {
            OnFull::FallbackNow => Refusal::Fallback,
            OnFull::Wait(_) | OnFull::Reject => Refusal::Rejected,
        }
    }

    fn cancel(&mut self, a: &Attempt) {
        self.release(a.class);
        if let Some(t) = self.trip.as_mut()
            && t.probe == Some(a.id)
        {
            // The probe never ran: the next "fallback now" request probes instead.
            t.probe = None;
        }
    }

    fn complete(&mut self, d: &Completed) {
        self.release(d.class);
        if let Some(t) = self.trip.as_mut() {
            t.on_complete(d);
        }
    }

    fn on_wakeup(&mut self, now: Time) {
        if let Some(t) = self.trip.as_mut()
            && t.window_end.is_some_and(|end| end <= now)
        {
            t.close_window(now);
        }
    }

    fn status(&self) -> Status {
        Status {
            limit: Some(self.permits as f64),
            wake_at: self.trip.as_ref().and_then(|t| t.window_end),
            degraded: self.trip.as_ref().is_some_and(|t| t.degraded),
            ..Status::default()
        }
    }

    fn reason(&self) -> String {
        self.trip.as_ref().map_or_else(|| super::describe(&self.status()), |t| t.why.text())
    }
}

/// Validation messages for [`TieredBulkheadConfig`], naming the field.
fn check(c: &TieredBulkheadConfig, classes: &[&str]) -> Result<(), String> {
    if c.permits == 0 {
        return Err("TieredBulkhead.permits must be >= 1".into());
    }
    let mut total = 0.0;
    // A set, not the slice: a bulkhead may name every one of 100,000 classes.
    let known: std::collections::BTreeSet<&str> = classes.iter().copied().collect();
    for t in &c.classes {
        if !known.contains(t.name.as_str()) {
            return Err(format!(
                "TieredBulkhead.classes: unknown class \"{}\" (classes are: {})",
                t.name,
                crate::text::listing(classes)
            ));
        }
        if !(0.0..=1.0).contains(&t.share) {
            return Err(format!("TieredBulkhead.classes[{}].share must lie in [0, 1]", t.name));
        }
        total += t.share;
    }
    if total > 1.0 + 1e-9 {
        return Err("TieredBulkhead.classes: the shares must sum to <= 1".into());
    }
    if let Some(d) = &c.degrade {
        if d.window.ns() == 0 {
            return Err("TieredBulkhead.degrade.window must be > 0".into());
        }
        if d.windows == 0 {
            return Err("TieredBulkhead.degrade.windows must be >= 1".into());
        }
    }
    Ok(())
}

impl PolicyConfig for TieredBulkheadConfig {
    const KIND: &'static str = "tiered-bulkhead";

    fn facts(&self) -> Facts {
        let falling_back = self.classes.iter().filter(|t| t.on_full == OnFull::FallbackNow);
        Facts::plain(crate::metrics::LayerKind::Bulkhead)
            .fallback(FallbackRule::Classes(falling_back.map(|t| t.name.clone()).collect()))
    }

    fn validate(&self, classes: &[&str]) -> Result<(), ConfigError> {
        // The tier of a class listed twice would be whichever entry is read last.
        let mut seen = std::collections::BTreeMap::new();
        for (k, t) in self.classes.iter().enumerate() {
            if let Some(j) = seen.insert(t.name.as_str(), k) {
                return Err(format!(
                    "TieredBulkhead.classes[{k}].name: class \"{}\" is listed twice (first as classes[{j}])",
                    crate::text::visible(&t.name)
                )
                .into());
            }
        }
        Ok(check(self, classes)?)
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(TieredBulkhead::new(self, ctx))
    }
}
