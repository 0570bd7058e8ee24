//! Recovery after a phase, time degraded and flips (issue 34), worked by hand on scripted
//! timelines: arrivals at fixed times, a dependency with one server and a constant 100 ms
//! service (mu = 10/s), no policy, so every latency is a queue wait plus 100 ms.

use crate::common;

/// One class with a 1 s deadline; `before` and `after` are the arrival periods in ms before
/// 20 s and from 30 s to the 60 s horizon, every 50 ms (20/s) in the spike `[20 s, 30 s)`; a
/// second phase `late` at `[50 s, 52 s)` shows the baseline setting.
fn spike(after_ms: u64) -> String {
    let mut times = Vec::new();
    times.extend((0..20_000).step_by(200));
    times.extend((20_000..30_000).step_by(50));
    times.extend((30_000..60_000).step_by(after_ms as usize));
    let times: Vec<String> = times.iter().map(|t| format!("\"{t}ms\"")).collect();
    format!(
        r#"Scenario(
    name: "spike", horizon: "60s", window: "1s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "600s")),
    classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "1s")],
    dependency: (latency: Constant("100ms"), capacity: (servers: 1, queue: 100000)),
    policies: [(name: "none", stack: [])],
    phases: [(name: "spike", start: "20s", end: "30s"), (name: "late", start: "50s", end: "52s")],
)"#,
        times.join(", ")
    )
}

#[test]
fn recovery_after_a_load_step_is_the_drain_time_worked_by_hand() {
    // Before 20 s: one arrival every 200 ms, each served in 100 ms without waiting: every
    // window 5 of 5 in time, so the level before the spike is 1.0.
    // Spike: 200 arrivals at 20/s against mu = 10/s. The server is busy from 20 s on and ends
    // the spike's requests at 20 + 200 x 0.1 = 40 s: the backlog at 30 s is
    // B = (20 - 10)/s x 10 s = 100 requests (10 s of work).
    // After: lambda1 = 5/s (every 200 ms). Fluid: the work left drains at 1 - lambda1 x 0.1 =
    // 0.5 s per second, W(t) = 10 - 0.5 (t - 30), and an arrival is in time when
    // W(t) + 0.1 <= 1, i.e. t >= 30 + 9.1 / 0.5 = 48.2 s, that is B / (mu - lambda1) = 20 s
    // less the 0.9 s of slack in the deadline at the drain rate of 2 windows' arrivals per
    // second of work: 20 - 0.9 x 2 = 18.2 s after the spike.
    // Exactly: the j-th arrival after 30 s (at 30 + 0.2 j) starts at 40 + 0.1 j, so its
    // latency is 10.1 - 0.1 j, in time for j >= 91 (48.2 s). Window [48 s, 49 s) holds
    // j = 90..=94, 4 of 5 in time (0.8, not within 0.02 of 1.0); from 49 s on every window is
    // 5 of 5. With hold 3, windows 49, 50 and 51 are back: recovery_s = 49 - 30 = 19 s.
    let s = common::run_text(&spike(200));
    let c = &s.phases[0].runs[0].classes[0];
    let r = c.recovery.expect("a phase's class has its recovery");
    assert_eq!(r.before_in_time_ratio, 1.0);
    assert_eq!(r.recovered, Some(true));
    assert!((r.recovery_s - 18.2).abs() <= 1.0, "within one window of the fluid drain: {}", r.recovery_s);
    assert_eq!(r.recovery_s, 19.0);
    assert_eq!(r.end_in_time_ratio, 1.0);
    // Time degraded (below 0.9). In the spike the i-th arrival (at 20 + 0.05 i) finishes at
    // 20 + 0.1 (i + 1): latency 0.1 + 0.05 i, in time for i <= 18. Window 20 holds i = 0..=19,
    // 19 of 20 (0.95, not degraded); windows 21..=29 none. So in the phase 9 of 10 windows are
    // degraded, with one entry (window 21).
    assert_eq!((c.degraded_fraction, c.degraded_entries), (0.9, 1));
    // The whole run: windows 21..=48 are degraded (28); the judged windows are those final by
    // the 60 s horizon, end + 1 s deadline <= 60 s: windows 0..=58, 59 of them.
    let whole = &s.runs[0].classes[0];
    assert_eq!((whole.degraded_fraction, whole.degraded_entries), (28.0 / 59.0, 1));
    assert!(whole.recovery.is_none(), "the whole run follows no phase");
}

#[test]
fn a_backlog_that_cannot_drain_does_not_recover() {
    // After the spike lambda1 = 10/s = mu: the 100 requests of backlog stay, every later
    // arrival waits 10 s and is late. Nothing is back by the horizon: recovered false, no
    // recovery time, and the level at the horizon is 0.
    let s = common::run_text(&spike(100));
    let r = s.phases[0].runs[0].classes[0].recovery.expect("a phase's class has its recovery");
    assert_eq!(r.before_in_time_ratio, 1.0);
    assert_eq!(r.recovered, Some(false));
    assert!(r.recovery_s.is_nan(), "no recovery time without a recovery: {}", r.recovery_s);
    assert_eq!(r.end_in_time_ratio, 0.0);
}

#[test]
fn the_recovery_settings_are_live() {
    // A tolerance of 0.2 takes window 48's 0.8 as back: 48 - 30 = 18 s.
    let text = spike(200).replace("window: \"1s\",", "window: \"1s\", recovery: (tolerance: 0.2),");
    let r = common::run_text(&text).phases[0].runs[0].classes[0].recovery.unwrap();
    assert_eq!(r.recovery_s, 18.0);
    // hold: 11 needs windows 49..=59, but only 49..=58 are judged by the horizon: not recovered.
    let text = spike(200).replace("window: \"1s\",", "window: \"1s\", recovery: (hold: 11),");
    let r = common::run_text(&text).phases[0].runs[0].classes[0].recovery.unwrap();
    assert_eq!(r.recovered, Some(false));
    // baseline: the level before `late` (50 s) is over windows 40..=49 by default (10): 0 of 5
    // in each of 40..=47, 4 of 5 in 48 and 5 of 5 in 49, 9 / 50 = 0.18; with a baseline of 1
    // window it is window 49's 1.0.
    let late = |s: &brownout::metrics::summary::ScenarioSummary| s.phases[1].runs[0].classes[0].recovery.unwrap();
    assert_eq!(late(&common::run_text(&spike(200))).before_in_time_ratio, 0.18);
    let text = spike(200).replace("window: \"1s\",", "window: \"1s\", recovery: (baseline: 1),");
    assert_eq!(late(&common::run_text(&text)).before_in_time_ratio, 1.0);
    // degraded_below: 0.96 makes window 20 (0.95) degraded too: 10 of 10 in the spike.
    let text = spike(200).replace("window: \"1s\",", "window: \"1s\", recovery: (degraded_below: 0.96),");
    let c = &common::run_text(&text).phases[0].runs[0].classes[0];
    assert_eq!((c.degraded_fraction, c.degraded_entries), (1.0, 1));
}

#[test]
fn the_backlog_at_the_horizon_is_counted_layer_by_layer() {
    // Not draining (lambda1 = mu = 10/s after the spike): from 20 s the server is never idle
    // and ends one call every 100 ms, 400 by the 60 s horizon (events at the horizon have run),
    // while 200 + 300 requests arrived from 20 s on: 100 are left, each holding a worker slot
    // and a pool connection with its call at the dependency, one in service and 99 queued.
    let s = common::run_text(&spike(100));
    let b = s.runs[0].backlog_at_end;
    assert_eq!(s.runs[0].in_flight_at_end, 100);
    assert_eq!((b.dependency_out, b.dependency_queue, b.queued), (100, 99, 99));
    assert_eq!((b.workers_busy, b.pool_busy), (100, 100));
    assert_eq!((b.worker_queue, b.layer_queue, b.limiter_queue, b.pool_queue, b.backoff), (0, 0, 0, 0, 0));
    assert_eq!(s.phases[0].runs[0].backlog_at_end, b, "a phase repeats the whole run's");
    // Draining (lambda1 = 5/s): the backlog is gone by 50 s and the last arrival (59.8 s) is
    // answered at 59.9 s: nothing is left.
    let b = common::run_text(&spike(200)).runs[0].backlog_at_end;
    assert_eq!(b, Default::default());
}
