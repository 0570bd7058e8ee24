//! The dependency's own queue discipline and shedding (`capacity.discipline`, `max_wait`,
//! `codel`), worked by hand on one server with a constant 10 ms service and scripted
//! arrivals: which call each free server takes, which it sheds, and that a shed call is a
//! dependency 503 (cause `dependency_error`), never a timeout.

use std::path::Path;

use brownout::engine::Time;
use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, RunResult, run_policy_recorded};
use brownout::policy::CallOutcome;

use crate::common;

const MS: Time = 1_000_000;
const AT: Time = 1_000 * MS;

/// One server, room for 100 waiting calls with `extra` capacity settings, constant 10 ms
/// service, no hop, and requests at 1 s plus each of `times_ms`.
fn run(extra: &str, times_ms: &[u64]) -> (RunResult, Records) {
    let times: Vec<String> = times_ms.iter().map(|t| format!("\"{}ms\"", 1000 + t)).collect();
    let text = format!(
        r#"Scenario(
        name: "server-queue", seed: 1, horizon: "10s", window: "1s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "10s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "5s")],
        dependency: (latency: Constant("10ms"), capacity: (servers: 1, queue: 100{extra})),
        policies: [(name: "none", stack: [])],
    )"#,
        times.join(", ")
    );
    let s = common::scenario(&text);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_policy_recorded(&model, 0, RunOptions::default()).unwrap()
}

/// Per request in arrival order: its service start (ms after 1 s; None if never served).
fn starts(r: &Records) -> Vec<Option<Time>> {
    r.requests.iter().map(|q| r.calls.iter().find(|c| c.key == q.key).map(|c| (c.start - AT) / MS)).collect()
}

/// Per request in arrival order: (end in ms after 1 s, outcome) of its one attempt.
fn ends(r: &Records) -> Vec<(Time, CallOutcome)> {
    r.requests
        .iter()
        .map(|q| {
            let a = r.attempts.iter().find(|a| a.key == q.key).expect("an attempt");
            ((a.end - AT) / MS, a.outcome)
        })
        .collect()
}

#[test]
fn lifo_serves_the_newest_waiting_call_first() {
    // Four calls 1 ms apart; the first is served at once (0-10 ms). FIFO then serves 1, 2, 3
    // at 10, 20, 30 ms; LIFO takes the newest waiting call each time: 3, 2, 1.
    let (_, fifo) = run("", &[0, 1, 2, 3]);
    assert_eq!(starts(&fifo), [Some(0), Some(10), Some(20), Some(30)]);
    let (_, lifo) = run(", discipline: Lifo", &[0, 1, 2, 3]);
    assert_eq!(starts(&lifo), [Some(0), Some(30), Some(20), Some(10)]);
}

#[test]
fn max_wait_sheds_stale_calls_as_a_503_without_service() {
    // max_wait 15 ms: at 10 ms call 1 has waited 9 ms (served 10-20); at 20 ms call 2 has
    // waited 18 and call 3 17, both over 15: shed with a 503 at 20 ms, using no service.
    let (run0, _) = run("", &[0, 1, 2, 3]);
    assert_eq!(run0.summary.classes[0].outcomes.ok, 4);
    let (out, rec) = run(r#", max_wait: "15ms""#, &[0, 1, 2, 3]);
    assert_eq!(starts(&rec), [Some(0), Some(10), None, None]);
    use CallOutcome::*;
    assert_eq!(ends(&rec), [(10, Success), (20, Success), (20, Error), (20, Error)]);
    let c = &out.summary.classes[0];
    assert_eq!((c.outcomes.ok, c.outcomes.error, c.outcomes.timeout), (2, 2, 0));
    assert_eq!(c.causes.dependency_error, 2, "a shed call is the dependency's 503");
    assert_eq!(c.causes.attempt_timeout, 0, "and not a timeout");
    // Two calls served, 10 ms each; the shed ones report no service or queue wait.
    assert_eq!(out.summary.dependency.latency_ms.max, 10.0);
}

#[test]
fn codel_drops_from_the_head_by_the_rfc_8289_control_law() {
    // Ten calls at once; target 5 ms, interval 10 ms (RFC 8289 section 5 by hand):
    // 10 ms: call 1 waited 10 >= target: first_above_time = 20 ms, served.
    // 20 ms: still above for an interval: drop call 2, serve call 3; dropping, count 1,
    //        drop_next = 20 + 10 / sqrt(1) = 30 ms.
    // 30 ms: drop call 4 (count 2), serve call 5; drop_next = 30 + 10 / sqrt 2 = 37.07 ms.
    // 40 ms: drop call 6 (count 3), serve call 7; drop_next = 37.07 + 10 / sqrt 3 = 42.84 ms.
    // 50 ms: call 8 leaves one call waiting (RFC: `bytes() <= maxpacket_`): not ok to drop,
    //        the dropping state ends; call 8 served, then call 9 at 60 ms.
    let burst = [0; 10];
    let (plain, _) = run("", &burst);
    assert_eq!(plain.summary.classes[0].outcomes.ok, 10);
    let (out, rec) = run(r#", codel: (target: "5ms", interval: "10ms")"#, &burst);
    let served = [Some(0), Some(10), None, Some(20), None, Some(30), None, Some(40), Some(50), Some(60)];
    assert_eq!(starts(&rec), served);
    let shed: Vec<(Time, CallOutcome)> = ends(&rec).into_iter().filter(|e| e.1 == CallOutcome::Error).collect();
    assert_eq!(shed, [(20, CallOutcome::Error), (30, CallOutcome::Error), (40, CallOutcome::Error)]);
    let c = &out.summary.classes[0];
    assert_eq!((c.outcomes.ok, c.outcomes.error, c.causes.dependency_error), (7, 3, 3));
}

#[test]
fn bad_shedding_settings_are_refused_where_they_are_written() {
    for (extra, field) in [
        (r#", max_wait: "0ms""#, "max_wait"),
        (r#", codel: (target: "0ms", interval: "10ms")"#, "codel.target"),
        (r#", codel: (target: "20ms", interval: "10ms")"#, "codel.interval"),
    ] {
        let text = format!(
            r#"Scenario(name: "x", seed: 1, horizon: "10s", fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
            classes: [(name: "api", arrivals: Poisson(rate_per_s: 1), deadline: "5s")],
            dependency: (latency: Constant("10ms"), capacity: (servers: 1, queue: 100{extra})),
            policies: [(name: "none", stack: [])])"#
        );
        let e = brownout::scenario::load_text(Path::new("inline.ron"), &text).expect_err(extra).to_string();
        assert!(e.contains(&format!("dependency.capacity.{field}")), "{e}");
        assert!(e.contains("inline.ron:3:"), "located on the dependency's line: {e}");
    }
}
