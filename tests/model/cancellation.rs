//! Cancellation of abandoned calls (issue 19, "the modelling gaps a real gateway showed").
//! Every expected figure is computed by hand from the scenario (Little's law on a periodic
//! arrival stream and a constant service time), never read from brownout's output.

use crate::common::run_first as run;

use brownout::metrics::summary::RunSummary;

/// Arrivals every 10 ms from 0 to 11 s; the first second is warm-up, so the 10 s measured
/// are whole periods of every pattern below (a call starting at 11 s has no weight).
fn scripted_every_10ms() -> String {
    let times: Vec<String> = starts().map(|t| format!("\"{t}ms\"")).collect();
    format!("Scripted(times: [{}])", times.join(", "))
}

/// One class calling a constant-latency dependency through a 30 ms attempt timeout.
fn scenario(latency: &str, capacity: &str, cancellation: &str, stack: &str) -> String {
    format!(
        r#"Scenario(
            name: "cancel", horizon: "11s", warmup: "1s", window: "1s",
            fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "5s")),
            classes: [(name: "api", arrivals: {arrivals}, deadline: "5s")],
            dependency: (latency: Constant("{latency}"), {capacity} {cancellation}),
            policies: [(name: "p", stack: [{stack}])],
        )"#,
        arrivals = scripted_every_10ms(),
    )
}

const TIMEOUT_30MS: &str = r#"(policy: Timeout((timeout: "30ms")))"#;
const PROPAGATE_5MS: &str = r#"cancellation: Propagate(delay: "5ms"),"#;

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.max(1.0)
}

/// Call start times in ms: one every 10 ms from 0 to 11 s (the horizon, whose events run).
fn starts() -> impl Iterator<Item = u64> {
    (0..=1100).map(|k| 10 * k)
}

/// Calls (by start time) with `pred`; `measured(t)`: t lies in the measured [1 s, 11 s].
fn count(pred: impl Fn(u64) -> bool) -> u64 {
    starts().filter(|&t| pred(t)).count() as u64
}

fn measured(t: u64) -> bool {
    (1000..=11_000).contains(&t)
}

/// The must-show: 5 servers, no queue, a call every 10 ms, service 95 ms, timeout 30 ms.
///
/// Keep working: a server is held 95 ms per call. Servers fill at 0..40 ms, the calls at
/// 50..90 ms find all five busy and are shed (503), each server frees at 95 ms and takes
/// the call at 100 ms: every 100 ms five calls are served and five shed. Load = served rate
/// x service = 50/s x 95 ms = 4.75 calls in the dependency.
///
/// Propagate after 5 ms: a call leaves at min(95, 30 + 5) = 35 ms, so at most four are in at
/// once (< 5 servers), nothing is shed, and the load is 100/s x 35 ms = 3.5.
#[test]
fn cancelled_calls_free_dependency_capacity_by_the_hand_computed_amount() {
    let capacity = "capacity: Some((servers: 5, queue: 0)),";
    let keep = run(&scenario("95ms", capacity, "", TIMEOUT_30MS));
    let cancel = run(&scenario("95ms", capacity, PROPAGATE_5MS, TIMEOUT_30MS));
    assert!(close(keep.dependency.mean_in_flight, 4.75), "keep working: {}", keep.dependency.mean_in_flight);
    assert!(close(cancel.dependency.mean_in_flight, 3.5), "cancelled: {}", cancel.dependency.mean_in_flight);
    // Kept: five in service, and a shed call is in the dependency for the instant of its 503.
    assert_eq!(keep.dependency.peak_in_flight, 6);
    assert_eq!(cancel.dependency.peak_in_flight, 4);
    assert_eq!(keep.dependency.calls, count(measured));
    assert_eq!(cancel.dependency.calls, count(measured));
    // Kept: the first half of every 100 ms is served, and each of those calls is abandoned at
    // 30 ms and ends at 95 ms; the second half is shed at once. Requests count when they
    // arrive after warm-up and end by the horizon.
    let served = |t: u64| t % 100 < 50;
    let api = |r: &RunSummary| r.classes[0].outcomes;
    assert_eq!(api(&keep).error, count(|t| !served(t) && measured(t)));
    assert_eq!(api(&keep).timeout, count(|t| served(t) && t >= 1000 && measured(t + 30)));
    assert_eq!(keep.dependency.abandoned, count(|t| served(t) && measured(t + 95)));
    assert_eq!(keep.dependency.cancelled, 0);
    // Cancelled: every call is served, times out at 30 ms and is stopped at 35 ms.
    assert_eq!(api(&cancel).error, 0);
    assert_eq!(api(&cancel).timeout, count(|t| t >= 1000 && measured(t + 30)));
    assert_eq!(cancel.dependency.cancelled, count(|t| measured(t + 35)));
    assert_eq!(cancel.dependency.abandoned, cancel.dependency.cancelled, "a cancelled call was abandoned first");
}

/// Without a capacity limit the dependency still stops work: Little's law gives the mean
/// number of calls in it as rate x time held, 100/s x 80 ms = 8 kept against
/// 100/s x (30 + 5) ms = 3.5 cancelled.
#[test]
fn an_unlimited_dependency_holds_cancelled_calls_for_timeout_plus_delay() {
    let keep = run(&scenario("80ms", "", "", TIMEOUT_30MS));
    let cancel = run(&scenario("80ms", "", PROPAGATE_5MS, TIMEOUT_30MS));
    assert!(close(keep.dependency.mean_in_flight, 8.0), "keep working: {}", keep.dependency.mean_in_flight);
    assert!(close(cancel.dependency.mean_in_flight, 3.5), "cancelled: {}", cancel.dependency.mean_in_flight);
    assert_eq!((keep.dependency.abandoned, keep.dependency.cancelled), (count(|t| measured(t + 80)), 0));
    let cancelled = count(|t| measured(t + 35));
    assert_eq!((cancel.dependency.abandoned, cancel.dependency.cancelled), (cancelled, cancelled));
}

/// A call answered before its cancel arrives is not cancelled: service 33 ms lies between
/// the timeout (30 ms) and the cancel's arrival (35 ms), so all calls are abandoned, none
/// cancelled, and each is held its full 33 ms (load 100/s x 33 ms = 3.3).
#[test]
fn an_answer_that_beats_the_cancel_is_not_cancelled() {
    let r = run(&scenario("33ms", "", PROPAGATE_5MS, TIMEOUT_30MS));
    assert_eq!((r.dependency.abandoned, r.dependency.cancelled), (count(|t| measured(t + 33)), 0));
    assert!(close(r.dependency.mean_in_flight, 3.3), "{}", r.dependency.mean_in_flight);
}

/// A cancelled call waiting for a server leaves the queue: one server, a queue of 10, service
/// 50 ms, a call every 10 ms, timeout 30 ms, cancel after 5 ms.
#[test]
fn a_queued_call_that_is_cancelled_leaves_the_queue() {
    let capacity = "capacity: Some((servers: 1, queue: 10)),";
    let keep = run(&scenario("50ms", capacity, "", TIMEOUT_30MS));
    let cancel = run(&scenario("50ms", capacity, PROPAGATE_5MS, TIMEOUT_30MS));
    // Kept: one call served every 50 ms; each completion (scheduled 50 ms ahead) runs before
    // the arrival at the same instant (scheduled 10 ms ahead), which refills the queue: one
    // in service and 10 queued at every instant of positive length.
    assert!(close(keep.dependency.mean_in_flight, 11.0), "keep working: {}", keep.dependency.mean_in_flight);
    // Cancelled: every call is gone 35 ms after it started, in the queue or in service, so
    // it is held exactly 35 ms: 100/s x 35 ms = 3.5, and the queue never fills.
    assert!(close(cancel.dependency.mean_in_flight, 3.5), "cancelled: {}", cancel.dependency.mean_in_flight);
    assert_eq!(cancel.dependency.cancelled, count(|t| measured(t + 35)));
    assert_eq!(cancel.classes[0].outcomes.error, 0, "no call is shed by a full queue");
}

/// Without `cancellation` nothing changes: the default is `KeepWorking`, and writing it out
/// gives the same run.
#[test]
fn keep_working_is_the_default() {
    let implicit = run(&scenario("95ms", "capacity: Some((servers: 5, queue: 0)),", "", TIMEOUT_30MS));
    let explicit =
        run(&scenario("95ms", "capacity: Some((servers: 5, queue: 0)),", "cancellation: KeepWorking,", TIMEOUT_30MS));
    assert_eq!(implicit, explicit);
}
