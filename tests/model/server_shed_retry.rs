//! A call the dependency sheds (full queue, `max_wait`, CoDel) is its 503 refusal without
//! service, so a retry layer's `on_refusal` decides whether it is retried, not `on_error`.
//! Worked by hand on one server with a constant 10 ms service, `max_wait: 15ms` and calls at
//! 0, 1, 2 and 3 ms: calls 0 and 1 are served (0-10, 10-20 ms); at 20 ms calls 2 and 3 have
//! waited 18 and 17 ms and are shed. Retried at once (no backoff), call 2's retry is served
//! 20-30 ms and call 3's waits 10 ms and is served 30-40 ms: four answers.

use std::path::Path;

use brownout::model::{Model, RunOptions, run_policy};

use crate::common;

fn outcomes(retry: &str) -> (u64, u64) {
    let text = format!(
        r#"Scenario(
        name: "shed-retry", seed: 1, horizon: "10s", window: "1s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "10s")),
        classes: [(name: "api", arrivals: Scripted(times: ["1000ms", "1001ms", "1002ms", "1003ms"]), deadline: "5s")],
        dependency: (latency: Constant("10ms"), capacity: (servers: 1, queue: 100, max_wait: "15ms")),
        policies: [(name: "retry", stack: [(policy: Retry((max_attempts: 2{retry})))])],
    )"#
    );
    let s = common::scenario(&text);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let c = &run_policy(&model, 0, RunOptions::default()).unwrap().summary.classes[0];
    (c.outcomes.ok, c.outcomes.error)
}

#[test]
fn a_shed_call_is_retried_as_a_dependency_503() {
    // Default `on_refusal: [Dependency503]`: both shed calls are retried and answered.
    assert_eq!(outcomes(""), (4, 0));
}

#[test]
fn on_refusal_empty_leaves_shed_calls_alone_even_with_on_error() {
    // `on_error` stays true; a shed is a refusal, not an error, so it is not retried.
    assert_eq!(outcomes(", on_refusal: [], on_error: true"), (2, 2));
}
