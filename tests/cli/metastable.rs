//! scenarios/metastable.ron against the fluid argument (docs/metastable.md): with retries on
//! timeout and abandoned work still performed, the backlog drains only while
//! lambda x E[attempts] < mu, so the unprotected set recovers from a spike that leaves less
//! than a timeout's worth of queue and stays stuck after one that leaves more.

use crate::common;
use brownout::metrics::summary::ScenarioSummary;

/// The shipped scenario with the spike's multiplier `m`, the root seed `seed`, and `extra`
/// text after the dependency's capacity.
fn metastable(m: f64, seed: u64, extra: &str) -> ScenarioSummary {
    let text = std::fs::read_to_string("scenarios/metastable.ron").expect("shipped scenario");
    let text = text
        .replace("multiplier: 2.0", &format!("multiplier: {m:?}"))
        .replace("seed: 34", &format!("seed: {seed}"))
        .replace(
            "capacity: (servers: 10, queue: 100000),",
            &format!("capacity: (servers: 10, queue: 100000), {extra}"),
        );
    common::run_text(&text)
}

/// Whether policy set `policy` recovered after the incident phase.
fn recovered(s: &ScenarioSummary, policy: &str) -> Option<bool> {
    let phase = s.phases.iter().find(|p| p.name == "incident").expect("the incident phase");
    let run = phase.runs.iter().find(|r| r.policy == policy).expect("policy set");
    run.classes[0].recovery.expect("a phase's class has its recovery").recovered
}

#[test]
fn the_unprotected_set_stops_recovering_where_the_fluid_argument_puts_the_boundary() {
    // mu = 10 servers / 100 ms = 100/s; the queue holds more than a 500 ms timeout's work
    // past 50 calls; a 10 s spike at 80 m/s grows it at 80 m - 100 per second while attempts
    // still succeed: past 50 calls when (80 m - 100) x 10 > 50, m > 1.3125. Below, at
    // m = 1.2 (96/s < 100/s) nothing accumulates; above, at m = 1.4, the queue passes the
    // timeout, every request makes 3 attempts, 80 x 3 = 240 > 100, and it never drains.
    // The retry budget (80 x 1.1 = 88 < 100) recovers from both.
    for seed in 1..=3 {
        let below = metastable(1.2, seed, "");
        assert_eq!(recovered(&below, "retry"), Some(true), "m = 1.2, seed {seed}");
        let above = metastable(1.4, seed, "");
        assert_eq!(recovered(&above, "retry"), Some(false), "m = 1.4, seed {seed}");
        assert_eq!(recovered(&above, "retry-budget"), Some(true), "m = 1.4, seed {seed}");
        let left = above.runs.iter().find(|r| r.policy == "retry").unwrap().backlog_at_end.dependency_queue;
        assert!(left > 1000, "the stuck set leaves its queue at the horizon: {left}");
    }
}

#[test]
fn cancellation_propagation_bounds_the_queue_but_does_not_end_the_retries() {
    // With the cancel reaching the dependency, a timed-out attempt leaves its queue, so the
    // queue holds only live attempts: a request has one attempt out at a time and gives up
    // after 3 x 500 ms, so the calls queued at the horizon are at most the requests of the
    // last 1.5 s (about 80 x 1.5 = 120; 240 is far beyond a Poisson count of mean 120).
    // But FIFO service still reaches each call after nearly 500 ms of queue: the retries keep
    // the queue at the timeout's length and the class does not recover.
    let s = metastable(2.0, 34, "cancellation: Propagate(delay: \"1ms\"),");
    assert_eq!(recovered(&s, "retry"), Some(false));
    let retry = s.runs.iter().find(|r| r.policy == "retry").unwrap();
    assert!(retry.backlog_at_end.dependency_queue < 240, "{:?}", retry.backlog_at_end);
    let keep = metastable(2.0, 34, "");
    let kept = keep.runs.iter().find(|r| r.policy == "retry").unwrap().backlog_at_end.dependency_queue;
    assert!(kept > 10 * retry.backlog_at_end.dependency_queue, "kept working: {kept}");
}
