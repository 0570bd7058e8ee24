//! The run's guards stop it at exactly the event that crosses their limit, however cheaply
//! they are checked.

use std::path::Path;

use crate::model::{Model, RunError, RunOptions, RunResult, run_policy};

/// One slot at 90 % load and a one-hour limit on the wait for it: nearly every request
/// queues, and its wait timer, superseded once it takes the slot, stays pending (far below
/// the 65,536 at which the run loop sweeps such timers), so the pending events grow by
/// about 800 a second while few requests are in flight.
const TEXT: &str = r#"Scenario(
    name: "guards", horizon: "5s",
    fleet: (workers: (slots: 1, queue: 1000000, max_wait: "1h"), pool: (max_connections: 2, acquire_timeout: "1s")),
    classes: [(name: "a", arrivals: Poisson(rate_per_s: 900), deadline: "1h")],
    dependency: (latency: Constant("1ms")),
    policies: [(name: "p")],
)"#;

fn run_with(max_in_flight: u64, max_events: u64) -> Result<RunResult, RunError> {
    let mut s = crate::scenario::parse(Path::new("guards.ron"), TEXT).unwrap();
    s.limits.max_in_flight = max_in_flight;
    s.limits.max_events = max_events;
    run_policy(&Model::build(&s, 1, Path::new(".")).unwrap(), 0, RunOptions::default())
}

#[test]
fn the_pending_guard_trips_exactly_when_the_peak_passes_its_limit() {
    let peak = run_with(u64::MAX, u64::MAX).expect("no limit").peak_pending;
    assert!(peak > 2_000, "{peak}");
    // The largest `max_in_flight` whose limit (4 per request in flight, plus 1,024) the
    // peak passes, and the smallest it does not.
    let tight = (peak - 1_025) / 4;
    assert!(super::max_pending(tight) < peak && super::max_pending(tight + 1) >= peak);
    assert!(run_with(tight + 1, u64::MAX).is_ok(), "a limit at the peak holds");
    match run_with(tight, u64::MAX) {
        Err(RunError::TooManyPending { pending, .. }) => {
            assert!(pending > super::max_pending(tight) && pending <= peak, "{pending} pending");
        }
        other => panic!("the guard must stop the run: {other:?}"),
    }
}

#[test]
fn the_event_guard_trips_one_event_past_its_limit() {
    let events = run_with(u64::MAX, u64::MAX).expect("no limit").summary.events;
    assert!(run_with(u64::MAX, events).is_ok(), "exactly the limit holds");
    match run_with(u64::MAX, events - 1) {
        Err(RunError::TooManyEvents { limit, .. }) => assert_eq!(limit, events - 1),
        other => panic!("the guard must stop the run: {other:?}"),
    }
}
