//! Why a request did not count as in time: one [`Cause`] per such request, tagged where the
//! world decides its outcome, and the per-class tally that becomes `causes` in the summary.

use super::summary::Causes;

/// Why a finished request is not in time (see [`Causes`] for each meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// The dependency answered with an error (also a partition or its full queue).
    DependencyError,
    /// The per-attempt timeout fired while the call was out.
    AttemptTimeout,
    /// No pool connection within the acquire timeout (or the attempt timeout, if sooner).
    PoolAcquireTimeout,
    /// No worker slot: the slot queue was full or the slot wait ran out.
    WorkerSlotsFull,
    /// A concurrency limiter (fixed or adaptive) refused the attempt or its wait ran out.
    LimiterRefused,
    /// A tiered bulkhead refused the attempt or its wait ran out.
    BulkheadRefused,
    /// A breaker short-circuited the attempt.
    BreakerOpen,
    /// Shed because too little of the deadline was left.
    ShedByDeadline,
    /// Refused by another layer (a plugin policy).
    OtherRefused,
    /// In flight on an instance that restarted.
    CrashRestart,
    /// A fallback answer in time whose cached value was wrong (stale-wrong).
    WrongAnswer,
    /// An answer (ok or fallback) after the deadline.
    Late,
    /// Still in flight at the horizon with its deadline passed: it cannot be in time.
    Unfinished,
    /// No upstream server could take the attempt: a 502 (nginx's "no live upstreams", every
    /// server at `max_conns`; a layer with `refuse_as: BadGateway`).
    NoLiveUpstream,
    /// A new connection's set-up ran past the pool's connect timeout.
    ConnectTimeout,
}

/// Number of [`Cause`]s.
const CAUSES: usize = 15;

/// Which kind of admission layer a stack layer is: where its refusals and queue waits count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// A concurrency limiter, fixed or adaptive.
    Limiter,
    /// A tiered bulkhead.
    Bulkhead,
    /// Shed by deadline.
    Shed,
    /// A breaker (refuses by short-circuiting).
    Breaker,
    /// Anything else (timeouts, retries, budgets, hedges, plugins).
    Other,
}

impl LayerKind {
    /// The cause of a refusal by a layer of this kind that is not a short-circuit.
    pub fn refusal(self) -> Cause {
        match self {
            LayerKind::Limiter => Cause::LimiterRefused,
            LayerKind::Bulkhead => Cause::BulkheadRefused,
            LayerKind::Shed => Cause::ShedByDeadline,
            LayerKind::Breaker => Cause::BreakerOpen,
            LayerKind::Other => Cause::OtherRefused,
        }
    }
}

/// Counts per cause, indexed by `Cause as usize`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct CauseTally([u64; CAUSES]);

impl CauseTally {
    #[inline]
    pub(super) fn bump(&mut self, cause: Cause) {
        self.0[cause as usize] += 1;
    }

    pub(super) fn causes(&self) -> Causes {
        let n = |c: Cause| self.0[c as usize];
        Causes {
            dependency_error: n(Cause::DependencyError),
            attempt_timeout: n(Cause::AttemptTimeout),
            pool_acquire_timeout: n(Cause::PoolAcquireTimeout),
            worker_slots_full: n(Cause::WorkerSlotsFull),
            limiter_refused: n(Cause::LimiterRefused),
            bulkhead_refused: n(Cause::BulkheadRefused),
            breaker_open: n(Cause::BreakerOpen),
            shed_by_deadline: n(Cause::ShedByDeadline),
            other_refused: n(Cause::OtherRefused),
            crash_restart: n(Cause::CrashRestart),
            wrong_answer: n(Cause::WrongAnswer),
            late: n(Cause::Late),
            unfinished: n(Cause::Unfinished),
            no_live_upstream: n(Cause::NoLiveUpstream),
            connect_timeout: n(Cause::ConnectTimeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_lands_in_its_own_field() {
        let all = [
            Cause::DependencyError,
            Cause::AttemptTimeout,
            Cause::PoolAcquireTimeout,
            Cause::WorkerSlotsFull,
            Cause::LimiterRefused,
            Cause::BulkheadRefused,
            Cause::BreakerOpen,
            Cause::ShedByDeadline,
            Cause::OtherRefused,
            Cause::CrashRestart,
            Cause::WrongAnswer,
            Cause::Late,
            Cause::Unfinished,
            Cause::NoLiveUpstream,
            Cause::ConnectTimeout,
        ];
        assert_eq!(all.len(), CAUSES);
        let mut t = CauseTally::default();
        // Cause k counted k + 1 times: every field distinct, so a swapped field shows.
        for (k, &c) in all.iter().enumerate() {
            for _ in 0..=k {
                t.bump(c);
            }
        }
        let c = t.causes();
        let got = [
            c.dependency_error,
            c.attempt_timeout,
            c.pool_acquire_timeout,
            c.worker_slots_full,
            c.limiter_refused,
            c.bulkhead_refused,
            c.breaker_open,
            c.shed_by_deadline,
            c.other_refused,
            c.crash_restart,
            c.wrong_answer,
            c.late,
            c.unfinished,
            c.no_live_upstream,
            c.connect_timeout,
        ];
        assert_eq!(got, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
        // 1 + 2 + ... + 15 = 15 x 16 / 2.
        assert_eq!(c.total(), 120);
    }
}
