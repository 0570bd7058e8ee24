//! `Arrivals::Periodic`: deterministic, evenly spaced arrivals without a CSV. D/D/1 worked by
//! hand: with service shorter than the spacing no call ever waits; with service longer, each
//! call waits the difference more than the one before.

use std::path::Path;

use brownout::engine::Time;
use brownout::model::{Model, RunOptions, run_policy_recorded};

use crate::common;

const MS: Time = 1_000_000;

/// Arrivals at 100/s from 5 ms over 10 s to one server with a constant `service`.
fn dd1(service: &str) -> (brownout::model::RunResult, brownout::model::records::Records) {
    let text = format!(
        r#"Scenario(
        name: "dd1", seed: 1, horizon: "10s", window: "1s",
        fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "60s")),
        classes: [(name: "api", arrivals: Periodic(rate_per_s: 100, phase: "5ms"), deadline: "60s")],
        dependency: (latency: Constant("{service}"), capacity: (servers: 1, queue: 100000)),
        policies: [(name: "none", stack: [])],
    )"#
    );
    let s = common::scenario(&text);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_policy_recorded(&model, 0, RunOptions::default()).unwrap()
}

#[test]
fn periodic_arrivals_are_exactly_spaced_and_counted() {
    let (_, rec) = dd1("9ms");
    // [0, 10 s] from 5 ms every 10 ms: floor((10 s - 5 ms) x 100) + 1 = 1000 arrivals, the
    // k-th at exactly 5 ms + 10k ms.
    assert_eq!(rec.requests.len(), 1000);
    for (k, r) in rec.requests.iter().enumerate() {
        assert_eq!(r.arrived, 5 * MS + 10 * MS * k as Time, "arrival {k}");
    }
}

#[test]
fn dd1_with_service_below_the_spacing_never_queues() {
    // 9 ms of service every 10 ms: each call finds the server free, so the queue wait is
    // exactly zero for every call and each answer takes exactly 9 ms.
    let (out, rec) = dd1("9ms");
    let d = &out.summary.dependency;
    assert_eq!(d.queue_wait_ms.max, 0.0);
    assert!(rec.calls.iter().zip(&rec.requests).all(|(c, r)| c.start == r.arrived));
    assert_eq!(out.summary.classes[0].latency_ms.max, 9.0);
    // 11 ms of service every 10 ms: call k waits k ms (the server falls 1 ms behind per call).
    let (_, rec) = dd1("11ms");
    for (k, (c, r)) in rec.calls.iter().zip(&rec.requests).take(900).enumerate() {
        assert_eq!(c.start - r.arrived, k as Time * MS, "call {k}");
    }
}
