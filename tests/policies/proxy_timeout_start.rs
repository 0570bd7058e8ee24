//! Where a timeout starts (issue 39): from the attempt (`starts: Attempt`, the default: the
//! wait for a pool connection counts, as in client libraries) or from the moment the attempt
//! holds a connection (`starts: Connection`: HAProxy's `timeout server`, nginx's
//! `proxy_read_timeout`, which a request waiting in the proxy's queue has not started).
//!
//! A hand-computable case: a pool of 1 connection, a dependency that always takes 300 ms,
//! two requests arriving together at t = 1 s, a 500 ms timeout.
//! - Request A takes the connection at 1.000 s and holds it until its answer at 1.300 s.
//! - Request B waits for the connection from 1.000 s to 1.300 s (300 ms), then calls; its
//!   answer would come at 1.300 + 0.300 = 1.600 s, 600 ms after its attempt began.
//! - `Attempt`: B's timeout runs from 1.000 s and fires at 1.500 s, 500 ms after its attempt
//!   began (300 ms of waiting + 200 ms into the call): B times out, cause `attempt_timeout`.
//! - `Connection`: B's timeout runs from 1.300 s and would fire at 1.800 s; the answer at
//!   1.600 s comes first: B is ok, in 600 ms, slower than the 500 ms timeout.

use crate::common;

use std::path::Path;

use brownout::engine::Time;
use brownout::metrics::summary::ClassSummary;
use brownout::model::{Model, RunOptions, run_policy_recorded};
use brownout::policy::CallOutcome;

const MS: Time = 1_000_000;

/// Each attempt's (start, end) in ms after the arrival at 1 s and its outcome, in start
/// order, and the class's summary, for a `Timeout((timeout: "{timeout}"{starts}))` layer.
fn attempts(timeout: &str, starts: &str) -> (Vec<(Time, Time, CallOutcome)>, ClassSummary) {
    let s = common::scenario(&format!(
        r#"Scenario(
        name: "timeout-start", seed: 1, horizon: "10s", window: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 1, acquire_timeout: "60s")),
        classes: [(name: "api", arrivals: Scripted(times: ["1s", "1s"]), deadline: "5s")],
        dependency: (latency: Constant("300ms")),
        policies: [(name: "t", stack: [(policy: Timeout((timeout: "{timeout}"{starts})))])],
    )"#
    ));
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let (run, records) = run_policy_recorded(&model, 0, RunOptions::default()).unwrap();
    let mut a: Vec<_> =
        records.attempts.iter().map(|a| ((a.start - 1000 * MS) / MS, (a.end - 1000 * MS) / MS, a.outcome)).collect();
    a.sort_by_key(|&(start, end, _)| (start, end));
    (a, run.summary.classes[0].clone())
}

#[test]
fn a_timeout_from_the_attempt_counts_the_wait_for_a_connection() {
    for starts in ["", ", starts: Attempt"] {
        let (a, c) = attempts("500ms", starts);
        // A: 0..300 ok. B: asked for the connection at 0, timed out at 0 + 500.
        assert_eq!(a, vec![(0, 300, CallOutcome::Success), (0, 500, CallOutcome::Timeout)], "{starts:?}");
        assert_eq!((c.outcomes.ok, c.outcomes.timeout, c.causes.attempt_timeout), (1, 1, 1), "{starts:?}");
    }
}

#[test]
fn a_timeout_from_the_connection_leaves_the_wait_out() {
    let (a, c) = attempts("500ms", ", starts: Connection");
    // B's attempt began at 0 (asking for the connection) and its answer came at 300 + 300.
    assert_eq!(a, vec![(0, 300, CallOutcome::Success), (0, 600, CallOutcome::Success)]);
    assert_eq!((c.outcomes.ok, c.outcomes.timeout, c.causes.attempt_timeout), (2, 0, 0));
    // Ok answers in 300 ms and 600 ms: the slowest is past the 500 ms timeout.
    assert_eq!(c.latency_ms.max, 600.0);
}

#[test]
fn a_timeout_from_the_connection_still_fires_on_a_slow_call() {
    // A 250 ms timeout: A's call is cut at 0 + 250 and frees the connection; B takes it then
    // (its wait 0..250) and is cut 250 ms later, at 500.
    let (a, c) = attempts("250ms", ", starts: Connection");
    assert_eq!(a, vec![(0, 250, CallOutcome::Timeout), (0, 500, CallOutcome::Timeout)]);
    assert_eq!((c.outcomes.timeout, c.causes.attempt_timeout), (2, 2));
}
