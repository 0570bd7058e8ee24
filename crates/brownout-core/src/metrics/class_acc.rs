//! One class's accumulators over the measured span, and the class summary they make.

use super::cause::{Cause, CauseTally};
use super::fallback::FallbackUse;
use super::hist::Lat;
use super::recorder::{OrderEffect, Outcome};
use super::summary::{ClassSummary, Outcomes, StalenessMs};
use crate::engine::{MILLISECOND, Time};

/// How one finished request counts, as the recorder judged it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Judged {
    /// How it ended.
    pub outcome: Outcome,
    /// End-to-end latency.
    pub latency: Time,
    /// An answer to its caller: ok, or a fallback that is not a fail-closed refusal.
    pub answered: bool,
    /// Finished within the class deadline.
    pub in_deadline: bool,
    /// Why it is not in time; `None` when it is.
    pub cause: Option<Cause>,
    /// A fallback answer's (age, wrong).
    pub staleness: Option<(Time, bool)>,
    /// Its business effect.
    pub order: OrderEffect,
    /// A fallback answer that costs per use.
    pub costed: bool,
}

/// One class's figures over the measured span.
#[derive(Debug, Clone, Default)]
pub(super) struct ClassAcc {
    outcomes: Tally,
    // The whole class's latency is answered + failed, merged at summary time.
    in_time_latency: Lat,
    answered_latency: Lat,
    failed_latency: Lat,
    causes: CauseTally,
    good: u64,
    fresh_good: u64,
    missed: u64,
    late: u64,
    staleness: Lat,
    stale_wrong: u64,
    orders: u64,
    substitutions: u64,
    refunds: u64,
    lost: u64,
    /// Fallback answers of a class whose fallback is not the catalogue's.
    answers: u64,
    pub(super) slot_wait_ns: f64,
    pub(super) slot_waits: u64,
    pub(super) conn_wait_ns: f64,
    pub(super) conn_waits: u64,
}

impl ClassAcc {
    /// Count one finished request.
    #[inline]
    pub(super) fn record(&mut self, j: Judged) {
        self.outcomes.bump(j.outcome);
        if j.answered {
            self.answered_latency.record(j.latency);
            self.good += j.in_deadline as u64;
            self.late += !j.in_deadline as u64;
        } else {
            self.failed_latency.record(j.latency);
        }
        match j.cause {
            None => self.in_time_latency.record(j.latency),
            Some(c) => self.causes.bump(c),
        }
        self.fresh_good += (j.outcome == Outcome::Ok && j.in_deadline) as u64;
        self.missed += !j.in_deadline as u64;
        if let Some((age, wrong)) = j.staleness {
            self.staleness.record(age);
            self.stale_wrong += wrong as u64;
        }
        self.orders += j.order.order as u64;
        self.substitutions += j.order.substitution as u64;
        self.refunds += j.order.refund as u64;
        self.lost += j.order.lost as u64;
        self.answers += j.costed as u64;
    }

    /// This class's summary over `secs` measured seconds; `costs` are (substitution, refund,
    /// lost order); `fallback` says what its fallback answers are.
    pub(super) fn summary(
        &mut self,
        name: &str,
        secs: f64,
        (cs, cr, cl): (f64, f64, f64),
        fallback: FallbackUse,
    ) -> ClassSummary {
        let c = self;
        let outcomes = c.outcomes.outcomes();
        let n = outcomes.total();
        let ratio = |x: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
        let mean_ms = |ns: f64, k: u64| if k == 0 { 0.0 } else { ns / k as f64 / MILLISECOND as f64 };
        let answers = fallback.answers(c.answers);
        let order_cost = c.substitutions as f64 * cs + c.refunds as f64 * cr + c.lost as f64 * cl;
        let in_time = c.in_time_latency.len();
        ClassSummary {
            class: name.to_string(),
            requests: n,
            outcomes,
            latency_ms: Lat::merged(&c.answered_latency, &c.failed_latency).stats(),
            throughput_per_s: n as f64 / secs,
            goodput_per_s: c.good as f64 / secs,
            fresh_goodput_per_s: c.fresh_good as f64 / secs,
            deadline_missed: c.missed,
            ok_ratio: ratio(outcomes.ok),
            fallback_ratio: ratio(outcomes.fallback),
            goodput_ratio: ratio(c.good),
            staleness_ms: StalenessMs {
                p50: c.staleness.q_ms(0.5),
                p95: c.staleness.q_ms(0.95),
                max: c.staleness.max_ms(),
            },
            stale_wrong: c.stale_wrong,
            stale_wrong_fraction: if outcomes.fallback == 0 {
                0.0
            } else {
                c.stale_wrong as f64 / outcomes.fallback as f64
            },
            orders: c.orders,
            substitutions: c.substitutions,
            refunds: c.refunds,
            lost_orders: c.lost,
            business_cost: answers.map_or(order_cost, |a| order_cost + a.cost),
            fallback_answers: answers,
            slot_wait_ms_mean: mean_ms(c.slot_wait_ns, c.slot_waits),
            conn_wait_ms_mean: mean_ms(c.conn_wait_ns, c.conn_waits),
            in_time,
            in_time_ratio: ratio(in_time),
            late: c.late,
            causes: c.causes.causes(),
            latency_in_time_ms: c.in_time_latency.stats(),
            latency_answered_ms: c.answered_latency.stats(),
            latency_failed_ms: c.failed_latency.stats(),
        }
    }
}

/// Outcome counts indexed by `Outcome as usize`: one indexed increment per finished
/// request, where a `match` onto named fields compiles to a jump whose target changes with
/// every outcome.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tally([u64; 6]);

impl Tally {
    #[inline]
    pub(super) fn bump(&mut self, outcome: Outcome) {
        self.0[outcome as usize] += 1;
    }

    pub(super) fn outcomes(&self) -> Outcomes {
        let n = |o: Outcome| self.0[o as usize];
        Outcomes {
            ok: n(Outcome::Ok),
            error: n(Outcome::Error),
            timeout: n(Outcome::Timeout),
            rejected: n(Outcome::Rejected),
            short_circuited: n(Outcome::ShortCircuited),
            fallback: n(Outcome::Fallback),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Cause, FallbackUse, OrderEffect, Outcome, Recorder, RecorderSetup};
    use crate::engine::{MILLISECOND, SECOND, Time};

    /// Finish a request of class 0 that arrived at 0 and took `ms`.
    fn finish(r: &mut Recorder, ms: Time, outcome: Outcome, stale: Option<bool>, cause: Option<Cause>) {
        let staleness = stale.map(|w| (SECOND, w));
        r.finish(ms * MILLISECOND, 0, 0, 0, outcome, staleness, cause, OrderEffect::default(), 1);
    }

    #[test]
    fn each_request_is_in_time_or_has_one_cause_late_before_wrong_before_failure() {
        // Deadline 1 s. By hand: in time are the ok at 500 ms and the right fallback at
        // 500 ms; late the ok and the wrong fallback at 2 s; wrong the wrong fallback at
        // 500 ms; a dependency error at 100 ms.
        let mut r = Recorder::new(RecorderSetup::one_class(10 * SECOND, 10 * SECOND));
        let dep = Some(Cause::DependencyError);
        finish(&mut r, 500, Outcome::Ok, None, None);
        finish(&mut r, 2000, Outcome::Ok, None, None);
        finish(&mut r, 500, Outcome::Fallback, Some(false), dep);
        finish(&mut r, 500, Outcome::Fallback, Some(true), dep);
        finish(&mut r, 2000, Outcome::Fallback, Some(true), dep);
        finish(&mut r, 100, Outcome::Error, None, dep);
        let c = &r.summary(10 * SECOND, 0, 0).classes[0];
        assert_eq!((c.in_time, c.late), (2, 2));
        assert_eq!(c.in_time_ratio, 2.0 / 6.0);
        assert_eq!((c.causes.late, c.causes.wrong_answer, c.causes.dependency_error), (2, 1, 1));
        assert_eq!(c.causes.total(), 4);
        assert_eq!(c.latency_in_time_ms.mean, 500.0);
        assert_eq!(c.latency_answered_ms.mean, (500.0 + 2000.0 + 500.0 + 500.0 + 2000.0) / 5.0);
        assert_eq!(c.latency_failed_ms.mean, 100.0);
        // The old figures keep their meaning: goodput counts the wrong fallback in time, the
        // deadline misses the three requests after 1 s.
        assert_eq!(c.goodput_ratio, 3.0 / 6.0);
        assert_eq!(c.deadline_missed, 2);
    }

    #[test]
    fn a_fail_closed_refusal_counts_under_the_failure_it_answered() {
        let mut r = Recorder::new(RecorderSetup {
            fallbacks: vec![FallbackUse::Closed(0.0)],
            ..RecorderSetup::one_class(10 * SECOND, 10 * SECOND)
        });
        finish(&mut r, 1, Outcome::Fallback, None, Some(Cause::BreakerOpen));
        let c = &r.summary(10 * SECOND, 0, 0).classes[0];
        assert_eq!((c.in_time, c.late, c.causes.breaker_open), (0, 0, 1));
        assert_eq!(c.latency_failed_ms.max, 1.0);
        assert_eq!(c.latency_answered_ms.max, 0.0);
    }
}
