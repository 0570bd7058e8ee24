//! Unit tests of `resilience4j`, in a file of their own to keep the module short.

use super::*;
use crate::policy::CallOutcome::{self, Error, Success};

const MS: Time = MILLISECOND;

fn att(now: Time, id: u64) -> Attempt {
    Attempt::new(now, 0, id)
}
fn done(b: &mut Resilience4j, start: Time, now: Time, id: u64, o: CallOutcome) {
    b.complete(&Completed::new(now, 0, id, start, o));
}
fn state(b: &Resilience4j) -> BreakerState {
    b.status().breaker.unwrap()
}

#[test]
fn defaults_are_the_librarys() {
    let c = Resilience4jConfig::default();
    assert_eq!(c.failure_rate_threshold, 50.0);
    assert_eq!(c.slow_call_rate_threshold, 100.0);
    assert_eq!(c.slow_call_duration_threshold, Dur::secs(60));
    assert_eq!(c.wait_duration_in_open_state, Dur::secs(60));
    assert_eq!(c.permitted_number_of_calls_in_half_open_state, 10);
    assert_eq!(c.minimum_number_of_calls, 100);
    assert_eq!(c.sliding_window_size, 100);
    assert_eq!(c.sliding_window_type, SlidingWindowType::CountBased);
    assert_eq!(c.max_wait_duration_in_half_open_state, Dur(0));
    assert!(!c.automatic_transition_from_open_to_half_open_enabled);
}

#[test]
fn count_based_minimum_is_capped_by_the_window() {
    // minimumNumberOfCalls 100 > slidingWindowSize 4: the ring's 4 calls suffice.
    let mut b = Resilience4j::new(&Resilience4jConfig { sliding_window_size: 4, ..Default::default() });
    for i in 0..3 {
        b.admit(&att(0, i));
        done(&mut b, 0, MS, i, if i == 0 { Error } else { Success });
    }
    assert_eq!(state(&b), BreakerState::Closed);
    b.admit(&att(0, 3));
    done(&mut b, 0, MS, 3, Error);
    assert_eq!(state(&b), BreakerState::Open, "2 of 4 = 50 % >= 50 %");
}

#[test]
fn time_based_minimum_is_not_capped() {
    let mut b = Resilience4j::new(&Resilience4jConfig {
        sliding_window_size: 2,
        minimum_number_of_calls: 5,
        sliding_window_type: SlidingWindowType::TimeBased,
        ..Default::default()
    });
    for i in 0..4 {
        b.admit(&att(0, i));
        done(&mut b, 0, MS, i, Error);
    }
    assert_eq!(state(&b), BreakerState::Closed, "4 < minimumNumberOfCalls 5");
    b.admit(&att(0, 4));
    done(&mut b, 0, MS, 4, Error);
    assert_eq!(state(&b), BreakerState::Open);
}

#[test]
fn lazy_half_open_strictly_after_the_wait_with_exponential_backoff() {
    let mut b = Resilience4j::new(&Resilience4jConfig {
        sliding_window_size: 1,
        permitted_number_of_calls_in_half_open_state: 1,
        wait_interval_function_in_open_state: Some(IntervalFunction::ExponentialBackoff {
            initial_interval: Dur::secs(1),
            multiplier: 2.0,
            max_interval: Some(Dur::secs(3)),
        }),
        ..Default::default()
    });
    b.admit(&att(0, 1));
    done(&mut b, 0, 0, 1, Error); // open at 0 for 1 s (attempt 1)
    let refused = Admission::Refuse(Refusal::ShortCircuited);
    assert_eq!(b.admit(&att(SECOND, 2)), refused, "not strictly after");
    assert_eq!(b.admit(&att(SECOND + 1, 3)), Admission::Admit);
    done(&mut b, SECOND + 1, SECOND + 1, 3, Error); // re-open: attempt 2 = 2 s
    let t = SECOND + 1;
    assert_eq!(b.admit(&att(t + 2 * SECOND, 4)), refused);
    assert_eq!(b.admit(&att(t + 2 * SECOND + 1, 5)), Admission::Admit);
    done(&mut b, t, t + 2 * SECOND + 1, 5, Error); // attempt 3 = min(4 s, 3 s)
    let u = t + 2 * SECOND + 1;
    assert_eq!(b.admit(&att(u + 3 * SECOND, 6)), refused);
    assert_eq!(b.admit(&att(u + 3 * SECOND + 1, 7)), Admission::Admit);
}

#[test]
fn half_open_permits_are_not_returned_and_stragglers_count() {
    let mut b = Resilience4j::new(&Resilience4jConfig {
        sliding_window_size: 2,
        minimum_number_of_calls: 2,
        permitted_number_of_calls_in_half_open_state: 3,
        wait_duration_in_open_state: Dur::secs(1),
        ..Default::default()
    });
    b.admit(&att(0, 100)); // straggler, still in flight
    for i in 0..2 {
        b.admit(&att(0, i));
        done(&mut b, 0, MS, i, Error);
    }
    let t = MS + SECOND + 1;
    for id in 10..13 {
        assert_eq!(b.admit(&att(t, id)), Admission::Admit);
    }
    assert_eq!(b.admit(&att(t, 13)), Admission::Refuse(Refusal::ShortCircuited));
    done(&mut b, t, t + MS, 10, Success);
    assert_eq!(b.admit(&att(t + MS, 14)), Admission::Refuse(Refusal::ShortCircuited));
    // The straggler's success is the second HALF_OPEN outcome; minimum = min(2, 3) = 2:
    // 0 of 2 failed -> CLOSED before the other trials report.
    done(&mut b, 0, t + MS, 100, Success);
    assert_eq!(state(&b), BreakerState::Closed);
}

#[test]
fn bounded_half_open_goes_to_the_configured_state() {
    let mut b = Resilience4j::new(&Resilience4jConfig {
        sliding_window_size: 1,
        wait_duration_in_open_state: Dur::secs(1),
        max_wait_duration_in_half_open_state: Dur::secs(5),
        automatic_transition_from_open_to_half_open_enabled: true,
        transition_to_state_after_wait_duration: StateAfterWait::Closed,
        ..Default::default()
    });
    b.admit(&att(0, 1));
    done(&mut b, 0, 0, 1, Error);
    assert_eq!(b.status().wake_at, Some(SECOND), "automatic: exactly at the wait");
    b.on_wakeup(SECOND);
    assert_eq!(state(&b), BreakerState::HalfOpen);
    assert_eq!(b.status().wake_at, Some(6 * SECOND));
    b.on_wakeup(6 * SECOND);
    assert_eq!(state(&b), BreakerState::Closed);
}

#[test]
fn slow_rate_trips_at_equality() {
    let mut b = Resilience4j::new(&Resilience4jConfig {
        sliding_window_size: 2,
        slow_call_rate_threshold: 50.0,
        slow_call_duration_threshold: Dur::secs(2),
        ..Default::default()
    });
    b.admit(&att(0, 1));
    done(&mut b, 0, 2 * SECOND, 1, Success); // exactly 2 s: not slow
    b.admit(&att(0, 2));
    done(&mut b, 0, 2 * SECOND, 2, Success);
    assert_eq!(state(&b), BreakerState::Closed);
    b.admit(&att(0, 3));
    done(&mut b, 0, 2 * SECOND + 1, 3, Success); // ring: ok, slow = 50 %
    assert_eq!(state(&b), BreakerState::Open);
}

fn refused() -> Admission {
    Admission::Refuse(Refusal::ShortCircuited)
}

/// Opens a one-call ring with `cfg` at 0 and returns the breaker.
fn opened_at_zero(cfg: Resilience4jConfig) -> Resilience4j {
    let mut b = Resilience4j::new(&Resilience4jConfig { sliding_window_size: 1, ..cfg });
    b.admit(&att(0, 1));
    done(&mut b, 0, 0, 1, Error);
    assert_eq!(state(&b), BreakerState::Open);
    b
}

#[test]
fn wait_in_open_state_is_whole_milliseconds() {
    // Duration.toMillis() truncates 1.9 ms to 1 ms: HALF_OPEN strictly after 1 ms.
    let mut b =
        opened_at_zero(Resilience4jConfig { wait_duration_in_open_state: Dur(1_900_000), ..Default::default() });
    assert_eq!(b.admit(&att(MS, 2)), refused(), "not strictly after 1 ms");
    assert_eq!(b.admit(&att(MS + 1, 3)), Admission::Admit, "1.9 ms counts as 1 ms");
}

#[test]
fn max_wait_in_half_open_is_whole_milliseconds_and_off_under_one() {
    let auto = |max: Time| Resilience4jConfig {
        wait_duration_in_open_state: Dur::secs(1),
        automatic_transition_from_open_to_half_open_enabled: true,
        max_wait_duration_in_half_open_state: Dur(max),
        ..Default::default()
    };
    let mut b = opened_at_zero(auto(2_500_000));
    b.on_wakeup(SECOND);
    assert_eq!(state(&b), BreakerState::HalfOpen);
    assert_eq!(b.status().wake_at, Some(SECOND + 2 * MS), "2.5 ms counts as 2 ms");
    let mut b = opened_at_zero(auto(999_999));
    b.on_wakeup(SECOND);
    assert_eq!(state(&b), BreakerState::HalfOpen);
    assert_eq!(b.status().wake_at, None, "toMillis() = 0: no half-open timer");
    b.on_wakeup(SECOND + MS);
    assert_eq!(state(&b), BreakerState::HalfOpen, "stays half-open");
}

/// A breaker whose half-open trial keeps failing stays open exactly `waits_ms` in turn:
/// refused at the wait's end, admitted 1 ns after it (strictly after, as the library).
fn assert_open_waits(initial: Dur, multiplier: f64, max: Option<Dur>, waits_ms: &[Time]) {
    let mut b = opened_at_zero(Resilience4jConfig {
        permitted_number_of_calls_in_half_open_state: 1,
        wait_interval_function_in_open_state: Some(IntervalFunction::ExponentialBackoff {
            initial_interval: initial,
            multiplier,
            max_interval: max,
        }),
        ..Default::default()
    });
    let mut opened = 0;
    for (k, &w) in waits_ms.iter().enumerate() {
        let id = 10 + k as u64;
        assert_eq!(b.admit(&att(opened + w * MS, id)), refused(), "wait {k} is longer than {w} ms");
        let t = opened + w * MS + 1;
        assert_eq!(b.admit(&att(t, id)), Admission::Admit, "wait {k} is not {w} ms");
        done(&mut b, t, t, id, Error);
        opened = t;
    }
}

#[test]
fn exponential_backoff_truncates_each_step_to_whole_milliseconds() {
    // x(k+1) = (long)(x(k) * 1.5): 250, 375, 562 (not 562.5), 843 (562 * 1.5 = 843).
    assert_open_waits(Dur::ms(250), 1.5, None, &[250, 375, 562, 843]);
    // 1 ms * 1.5 = 1.5 -> 1: it never grows.
    assert_open_waits(Dur::ms(1), 1.5, None, &[1, 1, 1, 1]);
    // Initial and cap are truncated too (2.7 -> 2, 7.9 -> 7); the cap applies last.
    assert_open_waits(Dur(2_700_000), 2.0, Some(Dur(7_900_000)), &[2, 4, 7, 7]);
}

#[test]
fn release_permission_in_half_open_returns_a_permit_for_any_call() {
    // HalfOpenState.releasePermission() increments the permits unconditionally: a call
    // admitted while CLOSED and cancelled during HALF_OPEN lets one more trial through.
    let mut b = Resilience4j::new(&Resilience4jConfig {
        sliding_window_size: 1,
        permitted_number_of_calls_in_half_open_state: 1,
        wait_duration_in_open_state: Dur::secs(1),
        ..Default::default()
    });
    b.admit(&att(0, 100)); // parked in an inner layer's queue
    b.admit(&att(0, 1));
    done(&mut b, 0, 0, 1, Error);
    let t = SECOND + 1;
    assert_eq!(b.admit(&att(t, 2)), Admission::Admit, "the one trial");
    assert_eq!(b.admit(&att(t, 3)), refused());
    b.cancel(&att(t, 100));
    assert_eq!(b.admit(&att(t, 4)), Admission::Admit, "a second trial, as in the library");
    assert_eq!(b.admit(&att(t, 5)), refused());
}

#[test]
fn durations_under_a_millisecond_are_refused_like_the_builder() {
    let bad = |c: Resilience4jConfig| c.check().unwrap_err();
    let e = bad(Resilience4jConfig { wait_duration_in_open_state: Dur(999_999), ..Default::default() });
    assert!(e.contains("waitDurationInOpenState must be at least 1 ms"), "{e}");
    let f = |initial: Time, max: Option<Time>| Resilience4jConfig {
        wait_interval_function_in_open_state: Some(IntervalFunction::ExponentialBackoff {
            initial_interval: Dur(initial),
            multiplier: 1.5,
            max_interval: max.map(Dur),
        }),
        ..Default::default()
    };
    assert!(bad(f(999_999, None)).contains("initialInterval"));
    assert!(bad(f(MS, Some(999_999))).contains("maxInterval"));
    assert!(f(MS, Some(MS)).check().is_ok());
}
