//! Breaker conformance: scripted call sequences whose state transitions were worked out by
//! hand from each library's documented semantics (/work/shared/reference/policy-semantics.md),
//! written as scenario RON so the parameter names are checked too; then property tests per
//! breaker (an open breaker admits nothing, a half-open one at most its permits until a
//! verdict, a woken breaker never asks for a wake-up at or before the time it was woken).
//!
//! Index: `script` runs a case; cases `r4j_*`, `polly_*`, `hystrix_*`, `sentinel_*`,
//! `error_rate_*`, `latency_*`; `props` holds the property tests.

use brownout::engine::{MILLISECOND, SECOND, Time};
use brownout::policy::{
    Admission, Attempt, BreakerState, BuildCtx, CallOutcome, Completed, Policy, PolicySpec, Refusal,
};

const MS: Time = MILLISECOND;
const NO: Admission = Admission::Refuse(Refusal::ShortCircuited);
const YES: Admission = Admission::Admit;
use BreakerState::{Closed, HalfOpen, Open};
use CallOutcome::{Error, Success};

/// One scripted step.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Ask admission for attempt `id` at `t`; expect this answer.
    Admit(Time, u64, Admission),
    /// Attempt `id`, admitted at `start`, finishes at `t` with an outcome.
    Done(Time, u64, Time, CallOutcome),
    /// Attempt `id` is cancelled at `t` (an inner layer refused it).
    Cancel(Time, u64),
    /// The timer fires at `t`.
    Wake(Time),
    /// The breaker is in this state now.
    Is(BreakerState),
    /// The breaker asks for this wake-up time.
    WakeAt(Option<Time>),
}
use Step::*;

fn build(ron_spec: &str) -> Box<dyn Policy> {
    let spec: PolicySpec = ron::from_str(ron_spec).unwrap_or_else(|e| panic!("{ron_spec}: {e}"));
    spec.validate(&["api"]).expect("valid");
    spec.build(&BuildCtx::default())
}

fn att(now: Time, id: u64) -> Attempt {
    Attempt::new(now, 0, id)
}

/// Run the steps, failing at the first mismatch with its index.
fn script(ron_spec: &str, steps: &[Step]) {
    let mut p = build(ron_spec);
    for (i, s) in steps.iter().enumerate() {
        match *s {
            Admit(t, id, want) => assert_eq!(p.admit(&att(t, id)), want, "step {i}: admit {id}"),
            Done(t, id, start, outcome) => p.complete(&Completed::new(t, 0, id, start, outcome)),
            Cancel(t, id) => p.cancel(&att(t, id)),
            Wake(t) => p.on_wakeup(t),
            Is(st) => assert_eq!(p.status().breaker, Some(st), "step {i}: state"),
            WakeAt(w) => assert_eq!(p.status().wake_at, w, "step {i}: wake_at"),
        }
    }
}

/// Admit `id` at `t` and finish it `d` later.
fn call(t: Time, id: u64, d: Time, o: CallOutcome) -> [Step; 2] {
    [Admit(t, id, YES), Done(t + d, id, t, o)]
}

fn steps<const N: usize>(groups: [&[Step]; N]) -> Vec<Step> {
    groups.concat()
}

#[test]
fn r4j_count_minimum_capped_permits_kept_and_straggler_in_half_open() {
    // minimumNumberOfCalls 10 is capped at slidingWindowSize 5. S S S E: 4 calls, closed.
    // The 5th (E) makes 2/5 = 40 % >= 40 %: OPEN at 5 ms for 2 s. HALF_OPEN on the first call
    // strictly after 2.005 s, 2 permits. A straggler (admitted at 1 ms) fails in HALF_OPEN:
    // 1 outcome < min(10, 2). A trial succeeds: E S = 50 % >= 40 %: OPEN again at 2.2 s.
    let spec = "Resilience4j((slidingWindowSize: 5, minimumNumberOfCalls: 10, \
                failureRateThreshold: 40, waitDurationInOpenState: \"2s\", \
                permittedNumberOfCallsInHalfOpenState: 2))";
    let open_at = 5 * MS;
    let t = open_at + 2 * SECOND;
    script(
        spec,
        &steps([
            &call(0, 1, MS, Success),
            &[Admit(MS, 50, YES)],
            &call(MS, 2, MS, Success),
            &call(2 * MS, 3, MS, Success),
            &call(3 * MS, 4, MS, Error),
            &[Is(Closed)],
            &call(4 * MS, 5, MS, Error),
            &[Is(Open), WakeAt(None)],
            &[Admit(t, 6, NO), Admit(t + 1, 7, YES), Admit(t + 1, 8, YES)],
            &[Admit(t + 1, 9, NO)],
            &[Done(2_100 * MS, 50, MS, Error), Is(HalfOpen)],
            &[Admit(2_150 * MS, 10, NO)],
            &[Done(2_200 * MS, 7, t + 1, Success), Is(Open)],
            &[Admit(4_200 * MS, 11, NO), Admit(4_200 * MS + 1, 12, YES)],
            &[Admit(4_200 * MS + 1, 13, YES), Done(4_300 * MS, 12, 0, Success)],
            &[Done(4_300 * MS, 13, 0, Success), Is(Closed)],
        ]),
    );
}

#[test]
fn r4j_time_based_buckets_are_epoch_seconds_and_minimum_is_not_capped() {
    // Two 1 s buckets, minimum 3. E at 0.5 s, E at 1.5 s; at 2.0 s bucket 0 has left:
    // E(1.5) S(2.0) = 2 calls < 3. E at 2.5 s: 3 calls, 2/3 = 66.7 % >= 50 %: OPEN.
    let spec = "Resilience4j((slidingWindowType: TIME_BASED, slidingWindowSize: 2, \
                minimumNumberOfCalls: 3))";
    script(
        spec,
        &steps([
            &call(500 * MS, 1, 0, Error),
            &call(1_500 * MS, 2, 0, Error),
            &call(2_000 * MS, 3, 0, Success),
            &[Is(Closed)],
            &call(2_500 * MS, 4, 0, Error),
            &[Is(Open)],
        ]),
    );
}

#[test]
fn r4j_slow_is_strictly_longer_rate_trips_at_equality_and_backoff_is_capped() {
    // Slow threshold 1 s: a 1 s call is not slow, 1 s + 1 ns is. Ring of 2, slow rate 50 %.
    // Interval function 1 s x 3^(n-1), max 5 s: waits 1 s, 3 s, 5 s.
    let spec = "Resilience4j((slidingWindowSize: 2, minimumNumberOfCalls: 2, \
                slowCallDurationThreshold: \"1s\", slowCallRateThreshold: 50, \
                permittedNumberOfCallsInHalfOpenState: 1, \
                waitIntervalFunctionInOpenState: Some(ExponentialBackoff(initialInterval: \"1s\", \
                multiplier: 3.0, maxInterval: Some(\"5s\")))))";
    let a = 2 * SECOND + 1; // opened by the second call's completion
    script(
        spec,
        &steps([
            &call(0, 1, SECOND, Success),
            &call(0, 2, SECOND, Success),
            &[Is(Closed)],
            &call(SECOND, 3, SECOND + 1, Success),
            &[Is(Open)],
            &[Admit(a + SECOND, 4, NO), Admit(a + SECOND + 1, 5, YES)],
            &[Done(a + SECOND + 1, 5, 0, Error), Is(Open)],
            &[Admit(a + 4 * SECOND + 1, 6, NO), Admit(a + 4 * SECOND + 2, 7, YES)],
            &[Done(a + 4 * SECOND + 2, 7, 0, Error), Is(Open)],
            &[Admit(a + 9 * SECOND + 2, 8, NO), Admit(a + 9 * SECOND + 3, 9, YES)],
        ]),
    );
}

#[test]
fn polly_single_trial_success_closes_and_resets() {
    // E at 0: throughput 1 < 2. E at 10 ms: 2/2 >= 0.5: OPEN until 1.01 s. The call at
    // exactly 1.01 s is the trial; nobody else passes while HALF_OPEN, even 0.5 s later. Its
    // success closes and resets the metrics, so one failure afterwards does not break.
    let spec = "Polly((FailureRatio: 0.5, MinimumThroughput: 2, SamplingDuration: \"10s\", \
                BreakDuration: \"1s\"))";
    let t = 1_010 * MS;
    script(
        spec,
        &steps([
            &call(0, 1, 0, Error),
            &[Is(Closed)],
            &call(10 * MS, 2, 0, Error),
            &[Is(Open), Admit(t - 1, 3, NO), Admit(t, 4, YES), Is(HalfOpen)],
            &[Admit(t, 5, NO), Admit(t + 500 * MS, 6, NO)],
            &[Done(t + 600 * MS, 4, t, Success), Is(Closed)],
            &call(t + 700 * MS, 7, 0, Error),
            &[Is(Closed)],
        ]),
    );
}

#[test]
fn polly_checks_only_on_failure_and_half_open_failure_reopens() {
    // S S E: 1/3 < 0.5. S: 1/4 but no check on success. E: 2/5 < 0.5. E: 3/6 >= 0.5: OPEN.
    let spec = "Polly((FailureRatio: 0.5, MinimumThroughput: 2, BreakDuration: \"1s\"))";
    script(
        spec,
        &steps([
            &call(0, 1, 0, Success),
            &call(0, 2, 0, Success),
            &call(0, 3, 0, Error),
            &call(0, 4, 0, Success),
            &call(0, 5, 0, Error),
            &[Is(Closed)],
            &call(0, 6, 0, Error),
            &[Is(Open), Admit(SECOND, 7, YES), Done(SECOND + 1, 7, SECOND, Error)],
            &[Is(Open), Admit(2 * SECOND, 8, NO), Admit(2 * SECOND + 1, 9, YES)],
        ]),
    );
}

#[test]
fn hystrix_trips_on_the_snapshot_not_on_the_call() {
    // Volume 4: four errors by 400 ms; nothing happens until the 500 ms snapshot. The sleep
    // window of 1 s ends strictly after 1.5 s: one probe, the rest short-circuited; its
    // failure re-opens with a new window from 1.6 s.
    let spec = "Hystrix((circuitBreakerRequestVolumeThreshold: 4, \
                circuitBreakerSleepWindowInMilliseconds: 1000))";
    let t = 1_500 * MS;
    script(
        spec,
        &steps([
            &[WakeAt(Some(500 * MS))],
            &call(0, 1, 100 * MS, Error),
            &call(0, 2, 200 * MS, Error),
            &call(0, 3, 300 * MS, CallOutcome::Timeout),
            &call(0, 4, 400 * MS, Error),
            &[Is(Closed), Wake(500 * MS), Is(Open), WakeAt(Some(SECOND))],
            &[Admit(t, 5, NO), Admit(t + 1, 6, YES), Admit(t + 1, 7, NO)],
            &[Done(1_600 * MS, 6, t + 1, Error), Is(Open)],
            &[Admit(2_600 * MS, 8, NO), Admit(2_600 * MS + 1, 9, YES)],
            &[Done(2_700 * MS, 9, 0, Success), Is(Closed)],
        ]),
    );
}

#[test]
fn hystrix_counts_inner_refusals_as_errors() {
    // Two successes and two inner refusals: 2 errors / 4 = 50 % >= 50 %, volume 4.
    let spec = "Hystrix((circuitBreakerRequestVolumeThreshold: 4))";
    script(
        spec,
        &steps([
            &call(0, 1, MS, Success),
            &call(0, 2, MS, Success),
            &[Admit(0, 3, YES), Cancel(0, 3), Admit(0, 4, YES), Cancel(0, 4)],
            &[Wake(500 * MS), Is(Open)],
        ]),
    );
}

#[test]
fn sentinel_single_bucket_resets_and_the_probe_decides() {
    // count 100 ms, minRequestAmount 3, slowRatioThreshold 0.5, 1 s bucket. Two slow calls
    // (rt 150 ms) end at 0.9 s; a third ends at 1.05 s in a fresh bucket: 1 < 3. Two more by
    // 1.2 s: 3/3 > 0.5: OPEN, retry at 3.2 s. The probe at 3.2 s takes exactly 100 ms (not
    // slow): CLOSED with the bucket reset, so two slow calls at 3.4-3.5 s are 2 < 3 (without
    // the reset: 2 of 3 > 0.5). A third slow one opens it.
    let spec = "Sentinel((count: 100, timeWindow: 2, minRequestAmount: 3, \
                slowRatioThreshold: 0.5))";
    let slow = 150 * MS;
    let t = 3_200 * MS;
    script(
        spec,
        &steps([
            &call(750 * MS, 1, slow, Success),
            &call(750 * MS, 2, slow, Success),
            &call(900 * MS, 3, slow, Success),
            &[Is(Closed)],
            &call(950 * MS, 4, slow, Success),
            &call(1_050 * MS, 5, slow, Success),
            &[Is(Open), Admit(t - 1, 6, NO), Admit(t, 7, YES), Admit(t, 8, NO)],
            &[Done(t + 100 * MS, 7, t, Success), Is(Closed)],
            &call(3_250 * MS, 9, slow, Success),
            &call(3_350 * MS, 10, slow, Success),
            &[Is(Closed)],
            &call(3_450 * MS, 11, slow, Success),
            &[Is(Open)],
        ]),
    );
}

#[test]
fn error_rate_inflight_ageing_trips_at_the_threshold() {
    // resilience4j#1597: calls started at 0 with a 2 s slow threshold and none finished.
    // With ageing the breaker opens at 2 s + 1 ns; without it, only when they complete.
    let with = "ErrorRateBreaker((window: Count(10), minimum_calls: 3, \
                slow_call_duration_threshold: Some(\"2s\"), slow_call_rate_threshold: 100, \
                break_duration: \"5s\", inflight_ageing: true))";
    let without = with.replace("inflight_ageing: true", "inflight_ageing: false");
    let start = [Admit(0, 1, YES), Admit(0, 2, YES), Admit(0, 3, YES)];
    script(
        with,
        &steps([
            &start,
            &[WakeAt(Some(2 * SECOND + 1)), Wake(2 * SECOND + 1), Is(Open)],
            &[Done(6 * SECOND, 1, 0, Success), Is(Open)],
        ]),
    );
    script(
        &without,
        &steps([
            &start,
            &[WakeAt(None), Is(Closed)],
            &[Done(6 * SECOND, 1, 0, Success), Done(6 * SECOND, 2, 0, Success)],
            &[Is(Closed), Done(6 * SECOND, 3, 0, Success), Is(Open)],
        ]),
    );
}

#[test]
fn error_rate_break_grows_to_its_cap_and_resets_on_close() {
    // Breaks 1 s, 2 s, then 4 s capped at 3 s; a successful trial closes and resets to 1 s.
    let spec = "ErrorRateBreaker((window: Count(1), break_duration: \"1s\", \
                break_multiplier: 2.0, max_break: Some(\"3s\")))";
    script(
        spec,
        &steps([
            &call(0, 1, 0, Error),
            &[Admit(SECOND - 1, 2, NO)],
            &call(SECOND, 3, 0, Error),
            &[Admit(3 * SECOND - 1, 4, NO)],
            &call(3 * SECOND, 5, 0, Error),
            &[Admit(6 * SECOND - 1, 6, NO)],
            &call(6 * SECOND, 7, 0, Success),
            &[Is(Closed)],
            &call(6 * SECOND, 8, 0, Error),
            &[Admit(7 * SECOND - 1, 9, NO), Admit(7 * SECOND, 10, YES)],
        ]),
    );
}

#[test]
fn latency_breaker_needs_consecutive_windows() {
    // Windows by completion time. [0, 1 s): two 600 ms calls, p95 600 ms > 500 ms: streak 1.
    // [1 s, 2 s): one sample < min_calls 2: neither counts nor resets (counting it would
    // open at 2 s; resetting would not open at 3 s). [2 s, 3 s): slow again: streak 2: OPEN
    // at 3 s for 5 s.
    let spec = "LatencyBreaker((window: \"1s\", percentile: 0.95, threshold: \"500ms\", \
                consecutive: 2, min_calls: 2, break_duration: \"5s\"))";
    let slow = 600 * MS;
    script(
        spec,
        &steps([
            &call(0, 1, slow, Success),
            &call(0, 2, slow, Success),
            &[Wake(SECOND), Is(Closed)],
            &call(SECOND, 3, slow, Success),
            &[Wake(2 * SECOND), Is(Closed)],
            &call(2 * SECOND, 4, slow, Success),
            &call(2 * SECOND, 5, slow, Success),
            &[Wake(3 * SECOND), Is(Open)],
            &[Admit(8 * SECOND - 1, 6, NO), Admit(8 * SECOND, 7, YES)],
        ]),
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    /// One random interaction: advance time by `dt_ms`, then do `kind`.
    #[derive(Debug, Clone)]
    struct Op {
        dt_ms: u64,
        kind: u8,
        pick: usize,
        fail: bool,
    }

    fn op() -> impl Strategy<Value = Op> {
        (0u64..800, 0u8..4, any::<usize>(), any::<bool>()).prop_map(|(dt_ms, kind, pick, fail)| Op {
            dt_ms,
            kind,
            pick,
            fail,
        })
    }

    /// Drive a breaker like the world does and check the invariants.
    fn check(spec: &str, permits: u32, ops: &[Op]) -> Result<(), TestCaseError> {
        let mut p = build(spec);
        let mut now: Time = 0;
        let mut next_id = 0u64;
        let mut inflight: Vec<(u64, Time)> = Vec::new();
        let mut trials: Vec<u64> = Vec::new(); // admitted in the current half-open episode
        for o in ops {
            let target = now + o.dt_ms * MS;
            // Timers first, in order, as the event queue would fire them.
            while let Some(w) = p.status().wake_at.filter(|&w| w <= target) {
                now = now.max(w);
                p.on_wakeup(now);
                let st = p.status();
                prop_assert!(st.wake_at.is_none_or(|w2| w2 > now), "wake {w} -> {:?}", st.wake_at);
                if st.breaker != Some(HalfOpen) {
                    trials.clear();
                }
            }
            now = target;
            match o.kind {
                0 | 1 => {
                    next_id += 1;
                    let a = p.admit(&att(now, next_id));
                    let after = p.status().breaker;
                    if a == YES {
                        prop_assert_ne!(after, Some(Open), "an open breaker admitted");
                        if after == Some(HalfOpen) {
                            trials.push(next_id);
                        }
                        prop_assert!(trials.len() as u32 <= permits, "{} trials", trials.len());
                        if o.kind == 1 && o.fail {
                            // An inner layer refuses it at once.
                            p.cancel(&att(now, next_id));
                            trials.retain(|&t| t != next_id);
                        } else {
                            inflight.push((next_id, now));
                        }
                    }
                }
                _ if !inflight.is_empty() => {
                    let (id, start) = inflight.swap_remove(o.pick % inflight.len());
                    let outcome = if o.fail { Error } else { Success };
                    p.complete(&Completed::new(now, 0, id, start, outcome));
                }
                _ => {}
            }
            // A new half-open episode starts from a state that is not half-open.
            if p.status().breaker != Some(HalfOpen) {
                trials.clear();
            }
        }
        Ok(())
    }

    const SPECS: [(&str, u32); 7] = [
        (
            "ErrorRateBreaker((window: Count(4), minimum_calls: 2, \
             slow_call_duration_threshold: Some(\"300ms\"), slow_call_rate_threshold: 50, \
             break_duration: \"1s\", break_multiplier: 2.0, max_break: Some(\"4s\"), \
             half_open_calls: 3, max_half_open_wait: Some(\"5s\"), automatic_half_open: true, \
             inflight_ageing: true))",
            3,
        ),
        (
            "ErrorRateBreaker((window: Time(buckets: 3, bucket: \"1s\"), minimum_calls: 2, \
             break_duration: \"1s\", half_open_calls: 2, stragglers: Discard))",
            2,
        ),
        (
            "LatencyBreaker((window: \"1s\", percentile: 0.5, threshold: \"300ms\", \
             break_duration: \"1s\", probes: 2, inflight_ageing: true))",
            2,
        ),
        (
            "Resilience4j((slidingWindowSize: 4, minimumNumberOfCalls: 2, \
             slowCallDurationThreshold: \"300ms\", slowCallRateThreshold: 50, \
             waitDurationInOpenState: \"1s\", permittedNumberOfCallsInHalfOpenState: 3, \
             maxWaitDurationInHalfOpenState: \"5s\", \
             automaticTransitionFromOpenToHalfOpenEnabled: true))",
            3,
        ),
        (
            "Polly((FailureRatio: 0.5, MinimumThroughput: 2, SamplingDuration: \"2s\", \
             BreakDuration: \"1s\"))",
            1,
        ),
        (
            "Hystrix((circuitBreakerRequestVolumeThreshold: 2, \
             circuitBreakerSleepWindowInMilliseconds: 1000))",
            1,
        ),
        (
            "Sentinel((count: 300, timeWindow: 1, minRequestAmount: 2, \
             slowRatioThreshold: 0.5))",
            1,
        ),
    ];

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 96,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/breaker_conformance.txt"
            ))),
            ..ProptestConfig::default()
        })]

        #[test]
        fn error_rate_count_with_ageing(ops in prop::collection::vec(op(), 1..200)) {
            check(SPECS[0].0, SPECS[0].1, &ops)?;
        }

        #[test]
        fn error_rate_time_window_discarding(ops in prop::collection::vec(op(), 1..200)) {
            check(SPECS[1].0, SPECS[1].1, &ops)?;
        }

        #[test]
        fn latency(ops in prop::collection::vec(op(), 1..200)) {
            check(SPECS[2].0, SPECS[2].1, &ops)?;
        }

        #[test]
        fn resilience4j(ops in prop::collection::vec(op(), 1..200)) {
            check(SPECS[3].0, SPECS[3].1, &ops)?;
        }

        #[test]
        fn polly(ops in prop::collection::vec(op(), 1..200)) {
            check(SPECS[4].0, SPECS[4].1, &ops)?;
        }

        #[test]
        fn hystrix(ops in prop::collection::vec(op(), 1..200)) {
            check(SPECS[5].0, SPECS[5].1, &ops)?;
        }

        #[test]
        fn sentinel(ops in prop::collection::vec(op(), 1..200)) {
            check(SPECS[6].0, SPECS[6].1, &ops)?;
        }
    }
}
