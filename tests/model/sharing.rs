//! Load-dependent service at the dependency (`capacity.sharing`, issue 34): processor
//! sharing and the universal scalability law, worked by hand on one replica with a constant
//! 10 ms service requirement and scripted arrivals. With `n` calls present each progresses at
//! `min(1, servers / n)` of full speed (processor sharing) or `1 / (1 + sigma (n - 1) +
//! kappa n (n - 1))` (USL), so a call's end follows from the calls beside it.

use std::path::Path;

use brownout::engine::Time;
use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, RunResult, run_policy_recorded};
use brownout::policy::CallOutcome;

use crate::common;

const MS: Time = 1_000_000;
const US: Time = 1_000;
const AT: Time = 1_000 * MS;

/// One replica with `capacity`, `extra` dependency settings, constant 10 ms service, no hop,
/// `stack` and requests at 1 s plus each of `times_us` (microseconds).
fn run(capacity: &str, extra: &str, stack: &str, times_us: &[u64]) -> (RunResult, Records) {
    let times: Vec<String> = times_us.iter().map(|t| format!("\"{}us\"", 1_000_000 + t)).collect();
    let text = format!(
        r#"Scenario(
        name: "sharing", seed: 1, horizon: "10s", window: "1s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "10s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "5s")],
        dependency: (latency: Constant("10ms"), capacity: ({capacity}){extra}),
        policies: [(name: "p", stack: [{stack}])],
    )"#,
        times.join(", ")
    );
    let s = common::scenario(&text);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_policy_recorded(&model, 0, RunOptions::default()).unwrap()
}

/// Per request in arrival order: (end in µs after 1 s, outcome) of its one attempt.
fn ends(r: &Records) -> Vec<(Time, CallOutcome)> {
    r.requests
        .iter()
        .map(|q| {
            let a = r.attempts.iter().find(|a| a.key == q.key).expect("an attempt");
            ((a.end - AT) / US, a.outcome)
        })
        .collect()
}

const OK: CallOutcome = CallOutcome::Success;

#[test]
fn processor_sharing_slows_every_call_present() {
    // Servers and a queue: the first call 0-10 ms, the second waits and runs 10-20 ms.
    let (_, fifo) = run("servers: 1, queue: 10", "", "", &[0, 5_000]);
    assert_eq!(ends(&fifo), [(10_000, OK), (20_000, OK)]);
    // Processor sharing: the first alone for 5 ms (5 ms of work done), then both at half
    // speed: the first's last 5 ms take 10 ms (ends at 15), by when the second did 5 ms; its
    // last 5 ms alone: 20.
    let (_, ps) = run("servers: 1, queue: 10, sharing: ProcessorSharing", "", "", &[0, 5_000]);
    assert_eq!(ends(&ps), [(15_000, OK), (20_000, OK)]);
    // Three at once on two servers: each at 2/3, all end at 15 ms.
    let (_, two) = run("servers: 2, queue: 10, sharing: ProcessorSharing", "", "", &[0, 0, 0]);
    assert_eq!(ends(&two), [(15_000, OK); 3]);
}

#[test]
fn the_scalability_law_slows_calls_by_contention_and_coherency() {
    // sigma = 0.5, two calls at once: each at 1 / 1.5, both end at 15 ms.
    let (_, s) = run("servers: 1, queue: 10, sharing: Usl(sigma: 0.5, kappa: 0.0)", "", "", &[0, 0]);
    assert_eq!(ends(&s), [(15_000, OK); 2]);
    // kappa = 0.25, three at once: 1 / (1 + 0.25 x 3 x 2) = 0.4 each: 25 ms.
    let (_, k) = run("servers: 1, queue: 10, sharing: Usl(sigma: 0.0, kappa: 0.25)", "", "", &[0, 0, 0]);
    assert_eq!(ends(&k), [(25_000, OK); 3]);
    // sigma = kappa = 0 is processor sharing with unlimited servers: every call at full speed.
    let (_, free) = run("servers: 1, queue: 10, sharing: Usl(sigma: 0.0, kappa: 0.0)", "", "", &[0, 0, 3_000]);
    assert_eq!(ends(&free), [(10_000, OK), (10_000, OK), (13_000, OK)]);
}

#[test]
fn servers_plus_queue_bounds_the_calls_present() {
    // Room for two: the third call at once is answered 503 without service.
    let (out, rec) = run("servers: 1, queue: 1, sharing: ProcessorSharing", "", "", &[0, 0, 0]);
    assert_eq!(ends(&rec), [(20_000, OK), (20_000, OK), (0, CallOutcome::Error)]);
    assert_eq!(out.summary.classes[0].causes.dependency_error, 1);
}

#[test]
fn a_cancelled_call_gives_its_share_back() {
    // Two calls at 0 and one at 14 ms, 15 ms attempt timeout. By 14 ms the first two did 7 ms
    // each; three share until 15 ms (1/3 ms each), when the first two time out. Cancelled
    // at once, they leave the third alone with 9 2/3 ms to do: it ends at 24.667 ms, in time.
    // Kept working, the three share on: the first two finish their 2 2/3 ms at 23 ms, by when
    // the third did 3 ms; its last 7 ms end at 30 ms, after its timeout at 29 ms.
    let stack = r#"(policy: Timeout((timeout: "15ms")))"#;
    let cap = "servers: 1, queue: 10, sharing: ProcessorSharing";
    let (_, cancel) = run(cap, r#", cancellation: Propagate(delay: "0ms")"#, stack, &[0, 0, 14_000]);
    let timeout = CallOutcome::Timeout;
    assert_eq!(ends(&cancel), [(15_000, timeout), (15_000, timeout), (24_666, OK)]);
    let (_, keep) = run(cap, "", stack, &[0, 0, 14_000]);
    assert_eq!(ends(&keep), [(15_000, timeout), (15_000, timeout), (29_000, timeout)]);
}
