//! The admission gate shared by the adaptive limiters: counts attempts in flight, admits while
//! `in_flight < floor(limit)`, remembers per admitted attempt what a limit algorithm needs
//! when it finishes, and turns completions and cancellations into samples.

use std::collections::BTreeMap;

use super::fixed::RefuseAs;
use crate::engine::Time;
use crate::policy::why::Why;
use crate::policy::{Admission, Attempt, CallOutcome, Completed, ConfigError, Policy, Status};
use crate::units::Dur;

/// One finished attempt as a limit algorithm sees it (Netflix `Limit.onSample`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sample {
    /// Virtual time the sample is taken.
    pub now: Time,
    /// When the attempt was admitted by this layer.
    pub start: Time,
    /// Round-trip time as this layer measured it.
    pub rtt: Time,
    /// Attempts in flight when it was admitted, itself included (Netflix `currentInflight`).
    pub inflight: u32,
    /// Netflix `didDrop`: the attempt timed out or was refused downstream.
    pub did_drop: bool,
}

/// A concurrency-limit algorithm driven by samples (Netflix's `Limit`).
pub(crate) trait LimitAlgorithm {
    /// Feed one sample.
    fn update(&mut self, s: &Sample);
    /// The current limit (possibly fractional; the gate admits up to its floor).
    fn limit(&self) -> f64;
    /// The figures of the last update that moved [`LimitAlgorithm::limit`].
    fn why(&self) -> Why {
        Why::Fresh
    }
}

/// What a limiter does with attempts over its limit: refuse them, or queue some. Every limiter
/// config (`Limiter`, `Aimd`, `Vegas`, `Gradient2`; `EnvoyGradient` has no queue) writes these
/// settings as its own fields `queue`, `max_wait` and `refuse_as`, documented alike, and hands
/// them here to be checked once ([`GateConfig::validate`]) and carried out. They are not one
/// `#[serde(flatten)]`ed field: serde cannot flatten into a struct that denies unknown fields,
/// and a misspelt field must still be refused at its line and column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateConfig {
    /// Attempts that may wait (0 = refuse at once).
    pub queue: u32,
    /// Longest wait.
    pub max_wait: Dur,
    /// How a refused attempt is answered.
    pub refuse_as: RefuseAs,
}

impl GateConfig {
    /// Check the settings for limiter `policy` (its name in scenario files, which starts the
    /// message): a queue needs a wait, or nothing ever waits in it.
    pub fn validate(&self, policy: &str) -> Result<(), ConfigError> {
        if self.queue > 0 && self.max_wait.ns() == 0 {
            return Err(format!("{policy}.queue > 0 needs a max_wait > 0 (with max_wait 0 nothing ever waits)").into());
        }
        Ok(())
    }
}

/// Default for limiter configs: refuse as 429.
pub(crate) fn rejected() -> RefuseAs {
    RefuseAs::Rejected
}

/// A limiter: a [`LimitAlgorithm`] behind the admission gate. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Adaptive<A> {
    algo: A,
    gate: GateConfig,
    in_flight: u32,
    // Per admitted attempt: (admitted at, in flight at admission). O(in-flight) memory;
    // a BTreeMap so that nothing depends on hash order.
    open: BTreeMap<u64, (Time, u32)>,
}

impl<A: LimitAlgorithm> Adaptive<A> {
    /// Put `algo` behind a gate.
    pub fn new(algo: A, gate: GateConfig) -> Self {
        Self { algo, gate, in_flight: 0, open: BTreeMap::new() }
    }

    /// The algorithm, for the algorithms' unit tests.
    #[cfg(test)]
    pub fn algorithm(&self) -> &A {
        &self.algo
    }

    /// The limit the gate enforces: the algorithm's limit rounded down.
    pub fn permits(&self) -> u32 {
        self.algo.limit().max(0.0).floor() as u32
    }

    fn finish(&mut self, id: u64, now: Time, did_drop: bool) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if let Some((start, inflight)) = self.open.remove(&id) {
            self.algo.update(&Sample { now, start, rtt: now.saturating_sub(start), inflight, did_drop });
        }
    }
}

impl<A: LimitAlgorithm> Policy for Adaptive<A> {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::NOTICES.with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, a: &Attempt) -> Admission {
        if self.in_flight < self.permits() {
            self.in_flight += 1;
            self.open.insert(a.id, (a.now, self.in_flight));
            return Admission::Admit;
        }
        if a.queued < self.gate.queue && self.gate.max_wait.ns() > 0 {
            Admission::Wait { max_wait: self.gate.max_wait.ns() }
        } else {
            Admission::Refuse(self.gate.refuse_as.refusal())
        }
    }

    fn refusal(&self, _class: crate::policy::ClassId) -> crate::policy::Refusal {
        self.gate.refuse_as.refusal()
    }

    fn cancel(&mut self, a: &Attempt) {
        // Refused downstream (or gave up waiting inside): Netflix `onDropped`.
        self.finish(a.id, a.now, true);
    }

    fn complete(&mut self, d: &Completed) {
        // An error is an ordinary sample: only timeouts are drops (see the module docs).
        self.finish(d.id, d.now, d.outcome == CallOutcome::Timeout);
    }

    fn status(&self) -> Status {
        Status { limit: Some(self.algo.limit()), ..Status::default() }
    }

    fn reason(&self) -> String {
        match self.algo.why() {
            Why::Fresh => crate::policy::describe(&self.status()),
            why => why.text(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limiter_refuses_a_queue_nobody_may_wait_in() {
        // A queue with `max_wait` 0 (its default) parks nothing: every limiter with a queue
        // says so at load, naming its own `queue`, as the fixed limiter always did.
        for (text, field) in [
            ("Limiter((permits: 4, queue: 5))", "Limiter.queue"),
            ("Aimd((queue: 5))", "Aimd.queue"),
            ("Vegas((queue: 5))", "Vegas.queue"),
            ("Gradient2((queue: 5))", "Gradient2.queue"),
        ] {
            let spec: crate::policy::PolicySpec = ron::from_str(text).expect(text);
            let err = spec.validate(&["a"]).expect_err(text).to_string();
            assert!(err.starts_with(&format!("{field} > 0 needs a max_wait > 0")), "{text}: {err}");
            let waits: crate::policy::PolicySpec =
                ron::from_str(&text.replace("queue: 5", "queue: 5, max_wait: \"1s\"")).expect(text);
            assert_eq!(waits.validate(&["a"]).map_err(|e| e.to_string()), Ok(()), "{text}");
        }
    }

    /// A limit that records what it was fed and stays at 2.
    #[derive(Default)]
    struct Spy(Vec<Sample>);
    impl LimitAlgorithm for Spy {
        fn update(&mut self, s: &Sample) {
            self.0.push(*s);
        }
        fn limit(&self) -> f64 {
            2.9
        }
    }

    fn att(now: Time, id: u64) -> Attempt {
        Attempt::new(now, 0, id)
    }

    #[test]
    fn admits_up_to_the_floor_and_samples_with_admission_inflight() {
        let gate = GateConfig { queue: 0, max_wait: Dur::ms(0), refuse_as: RefuseAs::Fallback };
        let mut g = Adaptive::new(Spy::default(), gate);
        assert_eq!(g.admit(&att(0, 1)), Admission::Admit);
        assert_eq!(g.admit(&att(5, 2)), Admission::Admit);
        // floor(2.9) = 2 permits.
        assert_eq!(g.admit(&att(6, 3)), Admission::Refuse(crate::policy::Refusal::Fallback));
        g.cancel(&att(7, 2));
        g.complete(&Completed::new(10, 0, 1, 0, CallOutcome::Timeout));
        let s = &g.algorithm().0;
        assert_eq!((s[0].rtt, s[0].inflight, s[0].did_drop), (2, 2, true));
        assert_eq!((s[1].rtt, s[1].inflight, s[1].did_drop), (10, 1, true));
        assert_eq!(g.in_flight, 0);
    }
}
