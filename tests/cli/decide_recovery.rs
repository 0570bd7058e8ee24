//! Issue 34: `recovery_s` after a phase is a decide objective (`minimize:
//! "incident:api/recovery_s"`), worked by hand on a scripted spike; a set that did not
//! recover has no recovery time and is never chosen for it.

use crate::common::run_text;

/// One class, 1,050 ms deadline, one dependency server at a constant 100 ms (mu = 10/s).
/// Arrivals every 200 ms before 20 s, every 50 ms in the `incident` [20 s, 30 s), every 200 ms
/// from 30.1 s to the 60 s horizon. Two replications (everything is scripted, so both agree).
fn spike() -> String {
    let mut times: Vec<u64> = (0..20_000).step_by(200).collect();
    times.extend((20_000..30_000).step_by(50));
    times.extend((30_100..60_000).step_by(200));
    let times: Vec<String> = times.iter().map(|t| format!("\"{t}ms\"")).collect();
    format!(
        r#"Scenario(
    name: "spike", horizon: "60s", window: "1s", replications: 2,
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "600s")),
    classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "1050ms")],
    dependency: (latency: Constant("100ms"), capacity: (servers: 1, queue: 100000)),
    policies: [
        (name: "none", stack: []),
        (name: "stuck", stack: [(policy: Retry((max_attempts: 3))), (policy: Timeout((timeout: "500ms")))]),
        (name: "shed", stack: [(policy: Limiter((permits: 1)))]),
    ],
    phases: [(name: "incident", start: "20s", end: "30s")],
    decide: (minimize: "incident:api/recovery_s"),
)"#,
        times.join(", ")
    )
}

#[test]
fn the_fastest_recovery_is_recommended_and_a_set_that_never_recovers_is_not_ranked() {
    // Before the spike every request is alone at the server: level 1.0 for all three sets.
    // `none`: the server is busy from 20 s and works off the spike's 200 calls by 40 s; the
    // j-th arrival after it (at 30.1 + 0.2 j s) starts at 40 + 0.1 j and so waits
    // 10 - 0.1 j s in all, in time for j >= 90 (48.1 s). Window 47 holds j = 85..=89, none
    // in time; windows 48, 49 and 50 are all in time: back (hold 3) from 48 s, 18 s after
    // the phase's end.
    // `shed`: one permit and no queue, so at most one call is ever at the server and a spike
    // arrival it cannot serve is refused at once; the last one it admits ends by 30.05 s,
    // before the first arrival after it: windows 30, 31, 32 are all in time, 0 s.
    // `stuck`: every attempt meets over 500 ms of queue after the spike, so each request
    // makes 3 attempts, 15 calls/s for mu = 10/s: the queue grows, no window is back, and
    // recovery_s has no value.
    let s = run_text(&spike());
    let recovery = |policy: &str| {
        let phase = &s.phases[0];
        let run = phase.runs.iter().find(|r| r.policy == policy).unwrap();
        run.classes[0].recovery.unwrap()
    };
    assert_eq!((recovery("none").recovered, recovery("none").recovery_s), (Some(true), 18.0));
    assert_eq!((recovery("shed").recovered, recovery("shed").recovery_s), (Some(true), 0.0));
    assert_eq!(recovery("stuck").recovered, Some(false));
    assert!(recovery("stuck").recovery_s.is_nan());
    let d = s.decision.as_ref().expect("a decide section gives a decision");
    let rec = d.recommended.as_ref().expect("a choice");
    assert_eq!((rec.policy.as_str(), rec.objective.n, rec.objective.mean), ("shed", 2, 0.0));
    let runner_up = d.runner_up.as_ref().expect("a runner-up");
    assert_eq!((runner_up.policy.as_str(), runner_up.objective.mean), ("none", 18.0));
}
