//! One class's accumulators over the measured span, and the class summary they make.

use super::cause::{Cause, CauseTally};
use super::fallback::FallbackUse;
use super::hist::RunLat;
use super::recorder::{OrderEffect, Outcome};
use super::summary::{ClassSummary, LatencyMs, Outcomes, StalenessMs};
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
    /// Latency by [`Part`]: each request records once, in the one part it belongs to; the
    /// answered and the whole class's latencies are unions of parts, merged at summary time.
    latency: [RunLat; PARTS],
    causes: CauseTally,
    good: u64,
    fresh_good: u64,
    missed: u64,
    late: u64,
    staleness: RunLat,
    stale_wrong: u64,
    orders: u64,
    substitutions: u64,
    refunds: u64,
    lost: u64,
    /// Fallback answers of a class whose fallback is not the catalogue's.
    answers: u64,
    /// Still in flight at the horizon with the deadline passed (cause `unfinished`).
    unfinished: u64,
    /// Still in flight at the horizon within the deadline: not judged.
    pending: u64,
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
        self.latency[Part::of(&j) as usize].record(j.latency);
        if j.answered {
            self.good += j.in_deadline as u64;
            self.late += !j.in_deadline as u64;
        }
        if let Some(c) = j.cause {
            self.causes.bump(c);
        }
        self.fresh_good += (j.outcome == Outcome::Ok && j.in_deadline) as u64;
        self.missed += !j.in_deadline as u64;
        if let Some((age, wrong)) = j.staleness {
            self.staleness.record(age);
            self.stale_wrong += wrong as u64;
        }
        // Most requests have no business effect: one test instead of four sums.
        if j.order != OrderEffect::default() {
            self.orders += j.order.order as u64;
            self.substitutions += j.order.substitution as u64;
            self.refunds += j.order.refund as u64;
            self.lost += j.order.lost as u64;
        }
        self.answers += j.costed as u64;
    }

    /// A request still in flight at the horizon: with its deadline passed it is judged not
    /// in time (cause `unfinished`, a missed deadline, no outcome and no latency: it has
    /// neither yet); within it, it is only counted as pending.
    pub(super) fn record_at_horizon(&mut self, deadline_passed: bool) {
        if deadline_passed {
            self.unfinished += 1;
            self.missed += 1;
            self.causes.bump(Cause::Unfinished);
        } else {
            self.pending += 1;
        }
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
        let n = outcomes.total() + c.unfinished;
        // A figure over no sample has no value: NaN, never 0 (a class without requests is not
        // 0 % in time, a class that never waited did not wait 0 ms).
        let ratio = |x: u64| if n == 0 { f64::NAN } else { x as f64 / n as f64 };
        let mean_ms = |ns: f64, k: u64| if k == 0 { f64::NAN } else { ns / k as f64 / MILLISECOND as f64 };
        let staleness = |q: f64| if c.staleness.is_empty() { f64::NAN } else { c.staleness.q_ms(q) };
        let answers = fallback.answers(c.answers);
        let order_cost = c.substitutions as f64 * cs + c.refunds as f64 * cr + c.lost as f64 * cl;
        let in_time = c.latency[Part::InTime as usize].len();
        let (answered_ms, answered_p999_ms, all_ms) = c.answered_and_all();
        ClassSummary {
            class: name.to_string(),
            requests: n,
            outcomes,
            latency_ms: all_ms,
            throughput_per_s: outcomes.total() as f64 / secs,
            goodput_per_s: c.good as f64 / secs,
            fresh_goodput_per_s: c.fresh_good as f64 / secs,
            deadline_missed: c.missed,
            ok_ratio: ratio(outcomes.ok),
            fallback_ratio: ratio(outcomes.fallback),
            goodput_ratio: ratio(c.good),
            staleness_ms: StalenessMs {
                p50: staleness(0.5),
                p95: staleness(0.95),
                max: if c.staleness.is_empty() { f64::NAN } else { c.staleness.max_ms() },
            },
            stale_wrong: c.stale_wrong,
            stale_wrong_fraction: if outcomes.fallback == 0 {
                f64::NAN
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
            causes_by_dependency: Vec::new(),
            calls: Vec::new(),
            latency_in_time_ms: c.latency[Part::InTime as usize].stats(),
            latency_answered_ms: answered_ms,
            latency_answered_p999_ms: answered_p999_ms,
            latency_failed_ms: c.latency[Part::Failed as usize].stats(),
            in_flight_within_deadline: c.pending,
            slo: None,
            // Judged per window by the recorder's `Tracker`, which fills these in.
            degraded_fraction: f64::NAN,
            degraded_entries: 0,
            recovery: None,
        }
    }

    /// The latency statistics of the answered requests (in time, wrong in time, late) with
    /// their p99.9, and of the whole class (answered and failed): one copy of the parts,
    /// merged into in turn.
    fn answered_and_all(&self) -> (LatencyMs, f64, LatencyMs) {
        let [in_time, wrong, late, failed] = &self.latency;
        let mut m = in_time.clone();
        m.absorb(wrong);
        m.absorb(late);
        let answered = m.stats();
        let p999 = m.q_ms(0.999);
        m.absorb(failed);
        (answered, p999, m.stats())
    }
}

/// The disjoint parts a finished request's latency falls in, by how it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Answered within the deadline, and not a wrong fallback answer.
    InTime,
    /// A fallback answer within the deadline whose cached value was wrong.
    Wrong,
    /// Answered after the deadline.
    Late,
    /// Not answered.
    Failed,
}

/// Number of [`Part`]s.
const PARTS: usize = 4;

impl Part {
    /// The part of a judged request (in time exactly when it has no cause).
    #[inline]
    fn of(j: &Judged) -> Part {
        match (j.answered, j.in_deadline, j.cause) {
            (false, ..) => Part::Failed,
            (true, false, _) => Part::Late,
            (true, true, None) => Part::InTime,
            (true, true, Some(_)) => Part::Wrong,
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
    use super::super::{Cause, FallbackUse, Finished, OrderEffect, Outcome, Record, Recorder, RecorderSetup};
    use crate::engine::{MILLISECOND, SECOND, Time};

    /// A request of class 0 on instance 0 that arrived at 0, finished at `now` and made one call.
    fn at(now: Time, outcome: Outcome, staleness: Option<(Time, bool)>, cause: Option<Cause>) -> Finished {
        Finished {
            now,
            instance: 0,
            class: 0,
            arrived: 0,
            outcome,
            staleness,
            cause,
            order: OrderEffect::default(),
            dependency_calls: 1,
        }
    }

    /// Finish a request of class 0 that arrived at 0 and took `ms`.
    fn finish(r: &mut Recorder, ms: Time, outcome: Outcome, stale: Option<bool>, cause: Option<Cause>) {
        let staleness = stale.map(|w| (SECOND, w));
        r.finish(at(ms * MILLISECOND, outcome, staleness, cause));
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
        // Nothing was answered: the answered latency has no value, not 0.
        assert!(c.latency_answered_ms.max.is_nan());
    }

    #[test]
    fn answered_p999_is_the_999th_of_1000_answers() {
        // By hand, nearest rank: 995 answers at 1 ms and 5 at 2 ms, sorted; p99.9 is the
        // 999th value (2 ms), p99 the 990th (1 ms). Both below 2,048 us, where the HDR
        // histogram is exact.
        let mut r = Recorder::new(RecorderSetup::one_class(10 * SECOND, 10 * SECOND));
        for k in 0..1000 {
            finish(&mut r, if k < 995 { 1 } else { 2 }, Outcome::Ok, None, None);
        }
        let c = &r.summary(10 * SECOND, 0, 0).classes[0];
        assert_eq!((c.latency_answered_ms.p99, c.latency_answered_p999_ms), (1.0, 2.0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Each latency figure of a class equals one latency fed exactly the requests it is
        /// about (the class's requests are recorded once, in disjoint parts, merged later).
        /// Kinds: 0 ok, 1 right fallback, 2 wrong fallback, 3 error; deadline 1 s. Up to
        /// 40,000 requests, so the parts spill into their HDR histograms.
        #[test]
        fn each_latency_figure_is_its_requests_recorded_together(
            reqs in proptest::collection::vec((1u64..3_000_000, 0u8..4), 0..40_000),
        ) {
            use super::super::hist::Lat;
            let mut r = Recorder::new(RecorderSetup::one_class(10 * SECOND, 10 * SECOND));
            let (mut all, mut answered, mut in_time, mut failed) = (Lat::new(), Lat::new(), Lat::new(), Lat::new());
            let dep = Some(Cause::DependencyError);
            for &(us, kind) in &reqs {
                let ns = us * 1_000 + us % 1_000;
                let (outcome, stale, cause) = match kind {
                    0 => (Outcome::Ok, None, None),
                    1 => (Outcome::Fallback, Some((SECOND, false)), dep),
                    2 => (Outcome::Fallback, Some((SECOND, true)), dep),
                    _ => (Outcome::Error, None, dep),
                };
                r.finish(at(ns, outcome, stale, cause));
                all.record(ns);
                if kind == 3 {
                    failed.record(ns);
                } else {
                    answered.record(ns);
                    if kind != 2 && ns <= SECOND {
                        in_time.record(ns);
                    }
                }
            }
            let c = &r.summary(10 * SECOND, 0, 0).classes[0];
            proptest::prop_assert_eq!(c.latency_ms, all.stats());
            proptest::prop_assert_eq!(c.latency_answered_ms, answered.stats());
            let p999 = answered.q_ms(0.999);
            proptest::prop_assert!(c.latency_answered_p999_ms == p999 || (p999.is_nan() && c.latency_answered_p999_ms.is_nan()));
            proptest::prop_assert_eq!(c.latency_in_time_ms, in_time.stats());
            proptest::prop_assert_eq!(c.latency_failed_ms, failed.stats());
            proptest::prop_assert_eq!(c.in_time, in_time.len());
        }
    }
}
