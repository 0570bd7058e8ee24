//! Connections with a life (issue 39): a pool's `connect` (set-up time and timeout) and
//! `keep_alive` (idle expiry, most requests per connection), each worked by hand on a
//! dependency that always takes 100 ms, with requests far enough apart that every one
//! finds the pool as the earlier ones left it.

use std::path::Path;

use brownout::engine::Time;
use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, RunResult, run_policy_recorded};
use brownout::policy::CallOutcome;

use crate::common;

const MS: Time = 1_000_000;

/// One instance with a pool of `connections` (`pool_extra` appended inside `pool: (..)`),
/// requests at `times`, a dependency of `dependency_extra` that takes 100 ms, one policy set
/// of `stack`.
fn scenario(connections: u32, pool_extra: &str, times: &str, dependency_extra: &str, stack: &str) -> String {
    format!(
        r#"Scenario(
        name: "connlife", seed: 1, horizon: "20s", window: "1s",
        fleet: (workers: (slots: 10), pool: (max_connections: {connections}, acquire_timeout: "60s"{pool_extra})),
        classes: [(name: "api", arrivals: Scripted(times: [{times}]), deadline: "5s")],
        dependency: (latency: Constant("100ms"){dependency_extra}),
        policies: [(name: "p", stack: [{stack}])],
    )"#
    )
}

fn run_one(text: &str) -> (RunResult, Records) {
    let s = common::scenario(text);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_policy_recorded(&model, 0, RunOptions::default()).unwrap()
}

/// Each attempt as (start after its request's arrival, its length, its outcome), ms, in the
/// order the requests arrived.
fn attempts(r: &Records) -> Vec<(Time, Time, CallOutcome)> {
    let mut out = Vec::new();
    for req in &r.requests {
        for a in r.attempts.iter().filter(|a| a.key == req.key) {
            out.push(((a.start - req.arrived) / MS, (a.end - a.start) / MS, a.outcome));
        }
    }
    out
}

/// The connections opened in the run (the summary's `resources.connections.opened`).
fn opened(run: &RunResult) -> u64 {
    run.summary.resources.connections.as_ref().expect("connection figures").opened
}

const OK: CallOutcome = CallOutcome::Success;
const TIMEOUT: CallOutcome = CallOutcome::Timeout;
const ERROR: CallOutcome = CallOutcome::Error;

#[test]
fn a_cold_pool_pays_set_up_on_its_first_connections_then_none() {
    // Three requests at once at 1 s find an empty pool of 3: each opens a connection (30 ms
    // set-up, holding its slot) and its call starts at 30 ms: 130 ms each. Their connections
    // go idle at 1.13 s; the three at 2 s and the three at 3 s take them: 100 ms, no set-up.
    let times = r#""1s", "1s", "1s", "2s", "2s", "2s", "3s", "3s", "3s""#;
    let pool = r#", connect: (latency: Constant("30ms")), keep_alive: ()"#;
    let (run, rec) = run_one(&scenario(3, pool, times, "", ""));
    let mut want = vec![(0, 130, OK); 3];
    want.extend(vec![(0, 100, OK); 6]);
    assert_eq!(attempts(&rec), want);
    let calls: Vec<Time> = rec.calls.iter().map(|c| c.start % (1000 * MS) / MS).collect();
    assert_eq!(calls, [30, 30, 30, 0, 0, 0, 0, 0, 0], "calls start once their connection is set up");
    assert_eq!(opened(&run), 3);
    let c = run.summary.resources.connections.as_ref().unwrap();
    assert_eq!(c.setup_ms_mean, 30.0);
    // Set-up 3 x 30 ms of the connection-time in use 3 x 130 + 6 x 100 = 990 ms.
    assert!((c.setup_share - 90.0 / 990.0).abs() < 1e-12, "{}", c.setup_share);

    // Without keep_alive every call opens its own connection and closes it after: 130 ms
    // each, 9 connections, a set-up share of 270 / 1170.
    let (run, rec) = run_one(&scenario(3, r#", connect: (latency: Constant("30ms"))"#, times, "", ""));
    assert_eq!(attempts(&rec), vec![(0, 130, OK); 9]);
    assert_eq!(opened(&run), 9);
    let share = run.summary.resources.connections.as_ref().unwrap().setup_share;
    assert!((share - 270.0 / 1170.0).abs() < 1e-12, "{share}");

    // A pool without `connect` has no connection figures, and its calls start at once.
    let (run, rec) = run_one(&scenario(3, "", times, "", ""));
    assert_eq!(attempts(&rec), vec![(0, 100, OK); 9]);
    assert!(run.summary.resources.connections.is_none());
}

#[test]
fn a_timed_out_or_failed_call_closes_its_connection_and_the_next_pays_set_up() {
    // A pool of 1 with a 200 ms attempt timeout; the dependency is 300 ms slower (or
    // unavailable) from 1.5 s to 2.5 s. 1 s: the pool opens (30 ms) and the call answers at
    // 130 ms; the connection goes idle. 2 s: the request takes it (no set-up), the slow call
    // times out at 200 ms and closes it. 3 s: no open connection, so set-up again: 130 ms.
    // 4 s: the connection of 3 s is reused: 100 ms.
    let times = r#""1s", "2s", "3s", "4s""#;
    let pool = r#", connect: (latency: Constant("30ms")), keep_alive: ()"#;
    let timeout = r#"(policy: Timeout((timeout: "200ms")))"#;
    let slow = r#", modes: [(at: "1.5s", mode: Slow("300ms")), (at: "2.5s", mode: Healthy)]"#;
    let (run, rec) = run_one(&scenario(1, pool, times, slow, timeout));
    assert_eq!(attempts(&rec), vec![(0, 130, OK), (0, 200, TIMEOUT), (0, 130, OK), (0, 100, OK)]);
    assert_eq!(opened(&run), 2);

    // The same with the dependency failing at once (503) instead: the failed call closes
    // its connection too.
    let down = r#", modes: [(at: "1.5s", mode: Unavailable), (at: "2.5s", mode: Healthy)]"#;
    let (run, rec) = run_one(&scenario(1, pool, times, down, timeout));
    assert_eq!(attempts(&rec), vec![(0, 130, OK), (0, 0, ERROR), (0, 130, OK), (0, 100, OK)]);
    assert_eq!(opened(&run), 2);
}

#[test]
fn idle_connections_expire_and_max_requests_closes_after_n_calls() {
    // keep_alive idle 1 s, a pool of 1. 1 s: opens, answers at 1.13 s, idle from then.
    // 1.5 s: idle 370 ms, reused (100 ms), idle from 1.6 s. 3 s: idle 1.4 s, expired: set-up
    // again (130 ms), idle from 3.13 s. 4.13 s: idle exactly 1 s, expired (130 ms).
    // 4.5 s: idle 240 ms since 4.26 s, reused.
    let times = r#""1s", "1.5s", "3s", "4.13s", "4.5s""#;
    let pool = r#", connect: (latency: Constant("30ms")), keep_alive: (idle: "1s")"#;
    let (run, rec) = run_one(&scenario(1, pool, times, "", ""));
    assert_eq!(attempts(&rec), vec![(0, 130, OK), (0, 100, OK), (0, 130, OK), (0, 130, OK), (0, 100, OK)]);
    assert_eq!(opened(&run), 3);

    // max_requests 2: each connection serves two calls and is closed after the second.
    let times = r#""1s", "2s", "3s", "4s", "5s""#;
    let pool = r#", connect: (latency: Constant("30ms")), keep_alive: (max_requests: 2)"#;
    let (run, rec) = run_one(&scenario(1, pool, times, "", ""));
    assert_eq!(attempts(&rec), vec![(0, 130, OK), (0, 100, OK), (0, 130, OK), (0, 100, OK), (0, 130, OK)]);
    assert_eq!(opened(&run), 3);
}

#[test]
fn a_set_up_past_the_connect_timeout_fails_with_its_own_cause() {
    // Set-up 300 ms, connect timeout 100 ms: each attempt fails at 100 ms, an error with
    // cause connect_timeout, and no call reaches the dependency.
    let times = r#""1s", "2s""#;
    let pool = r#", connect: (latency: Constant("300ms"), timeout: "100ms"), keep_alive: ()"#;
    let (run, rec) = run_one(&scenario(1, pool, times, "", ""));
    assert_eq!(attempts(&rec), vec![(0, 100, ERROR), (0, 100, ERROR)]);
    let c = &run.summary.classes[0];
    assert_eq!((c.outcomes.error, c.causes.connect_timeout, c.causes.dependency_error), (2, 2, 0));
    assert_eq!(run.summary.dependency.calls, 0);
    assert_eq!(opened(&run), 2);

    // An attempt timeout (from the attempt) covers the set-up: 50 ms, a timeout.
    let (run, rec) = run_one(&scenario(1, pool, times, "", r#"(policy: Timeout((timeout: "50ms")))"#));
    assert_eq!(attempts(&rec), vec![(0, 50, TIMEOUT), (0, 50, TIMEOUT)]);
    assert_eq!(run.summary.classes[0].causes.attempt_timeout, 2);
}

#[test]
fn a_connection_timeout_starts_after_the_set_up() {
    // Set-up 30 ms, a 100 ms dependency, `timeout server` 80 ms from the connection: the
    // call is out from 30 ms and is cut at 30 + 80 = 110 ms. The same timeout from the
    // attempt cuts it at 80 ms.
    let pool = r#", connect: (latency: Constant("30ms")), keep_alive: ()"#;
    let connection = r#"(policy: Timeout((timeout: "80ms", starts: Connection)))"#;
    let (_, rec) = run_one(&scenario(1, pool, r#""1s""#, "", connection));
    assert_eq!(attempts(&rec), vec![(0, 110, TIMEOUT)]);
    let (_, rec) = run_one(&scenario(1, pool, r#""1s""#, "", r#"(policy: Timeout((timeout: "80ms")))"#));
    assert_eq!(attempts(&rec), vec![(0, 80, TIMEOUT)]);
}

#[test]
fn a_proxy_preset_sets_the_connect_timeout_and_reuse_of_the_pool_behind_it() {
    // The pool's set-up takes 300 ms with no timeout of its own. HAProxy's `timeout connect
    // 100ms` fails each request at 100 ms (a 503, cause connect_timeout), nginx's
    // `proxy_connect_timeout 100ms` alike; without a preset the set-up completes: 400 ms.
    let text = |pool: &str, times: &str, sets: &str| {
        format!(
            r#"Scenario(
            name: "proxied", seed: 1, horizon: "20s", window: "1s",
            fleet: (workers: (slots: 10), pool: (max_connections: 4, acquire_timeout: "60s", {pool})),
            classes: [(name: "api", arrivals: Scripted(times: [{times}]), deadline: "5s")],
            dependency: (latency: Constant("100ms")),
            policies: [{sets}],
        )"#
        )
    };
    let slow = r#"connect: (latency: Constant("300ms")), keep_alive: ()"#;
    let sets = r#"(name: "haproxy", stack: [(policy: HaproxyBackend((timeout_connect: "100ms", retries: 0)))]),
        (name: "nginx", stack: [(policy: NginxUpstream((proxy_connect_timeout: "100ms")))]),
        (name: "plain"),
        (name: "haproxy-retries", stack: [(policy: HaproxyBackend((timeout_connect: "100ms")))])"#;
    let runs = run_sets(&text(slow, r#""1s""#, sets));
    for (run, rec) in &runs[..2] {
        assert_eq!(attempts(rec), vec![(0, 100, ERROR)]);
        assert_eq!(run.summary.classes[0].causes.connect_timeout, 1);
    }
    assert_eq!(attempts(&runs[2].1), vec![(0, 400, OK)]);
    // A connect timeout is a connection failure, which HAProxy's `retries` (3 by default)
    // retry at once, without the turn-around a refused connection waits (`src/backend.c`,
    // `back_handle_st_cer`): four set-ups of 100 ms, then the 503.
    let (run, rec) = &runs[3];
    assert_eq!(attempts(rec), vec![(0, 100, ERROR), (100, 100, ERROR), (200, 100, ERROR), (300, 100, ERROR)]);
    assert_eq!(run.summary.classes[0].causes.connect_timeout, 1);

    // Reuse, on a pool that keeps connections: requests at 1, 2 and 3 s, set-up 30 ms.
    // `http-reuse never` and nginx without `keepalive` close each connection: 130 ms each.
    // `http-reuse safe` reuses: 130, 100, 100. nginx `keepalive 4` with `keepalive_requests
    // 2`: the second call closes it, the third sets up again. `keepalive_timeout 500ms`: the
    // connection idle 870 ms is closed, so each sets up.
    let fast = r#"connect: (latency: Constant("30ms")), keep_alive: ()"#;
    let sets = r#"(name: "never", stack: [(policy: HaproxyBackend((timeout_server: "1s", http_reuse: Never)))]),
        (name: "safe", stack: [(policy: HaproxyBackend((timeout_server: "1s", http_reuse: Safe)))]),
        (name: "nginx-default", stack: [(policy: NginxUpstream(()))]),
        (name: "nginx-requests", stack: [(policy: NginxUpstream((keepalive: 4, keepalive_requests: 2)))]),
        (name: "nginx-timeout", stack: [(policy: NginxUpstream((keepalive: 4, keepalive_timeout: "500ms")))])"#;
    let runs = run_sets(&text(fast, r#""1s", "2s", "3s""#, sets));
    let lengths: Vec<Vec<Time>> = runs.iter().map(|(_, rec)| attempts(rec).iter().map(|a| a.1).collect()).collect();
    assert_eq!(
        lengths,
        [vec![130, 130, 130], vec![130, 100, 100], vec![130, 130, 130], vec![130, 100, 130], vec![130, 130, 130]]
    );
    let opened: Vec<u64> = runs.iter().map(|(run, _)| opened(run)).collect();
    assert_eq!(opened, [3, 1, 3, 2, 3]);
}

#[test]
fn nginx_keepalive_keeps_at_most_n_idle_connections_closing_the_oldest() {
    // keepalive 1 on a pool of 3: three requests at once at 1 s open three connections
    // (130 ms each); they end together at 1.13 s and only the last one to go idle stays
    // open. Three more at 2 s: one reuses it (100 ms), two set up (130 ms).
    let pool = r#", connect: (latency: Constant("30ms")), keep_alive: ()"#;
    let times = r#""1s", "1s", "1s", "2s", "2s", "2s""#;
    let (run, rec) = run_one(&scenario(3, pool, times, "", "(policy: NginxUpstream((keepalive: 1)))"));
    let mut lengths: Vec<Time> = attempts(&rec).iter().map(|a| a.1).collect();
    lengths[3..].sort_unstable();
    assert_eq!(lengths, [130, 130, 130, 100, 130, 130]);
    assert_eq!(opened(&run), 5);
    // The same pool's own `max_idle: 1` does the same without a preset.
    let own = r#", connect: (latency: Constant("30ms")), keep_alive: (max_idle: 1)"#;
    let (run, _) = run_one(&scenario(3, own, times, "", ""));
    assert_eq!(opened(&run), 5);
}

fn run_sets(text: &str) -> Vec<(RunResult, Records)> {
    let s = common::scenario(text);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    (0..s.policies.len()).map(|p| run_policy_recorded(&model, p, RunOptions::default()).unwrap()).collect()
}
