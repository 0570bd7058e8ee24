//! The event estimate counts the connection set-ups a request certainly causes
//! (`scenario::estimate`, `Pool::connect`): a new connection whose set-up takes time is one
//! event (`Connected`) before its call goes out, and a pool that keeps no connection opens
//! one for every call, so a scenario that would run away is refused before it runs.

use std::path::Path;

use brownout::scenario::load_text;

/// 1,000 requests a second for an hour of class `c` (its `calls`, if any, appended), through
/// the fleet pool with the extra settings `pool`, to `deps`, under `stack`, with
/// `limits.max_events` = `max_events`, loaded (so estimated) as `brownout check` loads it.
pub(crate) fn hour_of_load(pool: &str, calls: &str, deps: &str, stack: &str, max_events: u64) -> Result<(), String> {
    let text = format!(
        r#"Scenario(
    name: "hour", horizon: "1h",
    fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s"{pool})),
    classes: [(name: "c", arrivals: Poisson(rate_per_s: 1000), deadline: "1s"{calls})],
    {deps},
    policies: [(name: "p", stack: [{stack}])],
    limits: (max_events: {max_events}),
)"#
    );
    load_text(Path::new("hour.ron"), &text).map(|_| ()).map_err(|e| e.to_string())
}

/// One call each to a 1 ms dependency, through a pool of `pool` extra settings, under
/// `stack`, with `limits.max_events` = 9,000,000.
fn connecting(pool: &str, stack: &str) -> Result<(), String> {
    hour_of_load(pool, "", r#"dependency: (latency: Constant("1ms"))"#, stack, 9_000_000)
}

#[test]
fn a_pool_that_keeps_no_connection_counts_a_set_up_per_call() {
    // 3,600,000 requests; 3,601 windows x 2 ticks = 7,202 events. A request is its arrival
    // and its call: 7,207,202, under 9 million.
    connecting("", "").unwrap();
    // Every call opens a connection set up in 5 ms: 3 events a request, 10,807,202.
    let e = connecting(r#", connect: (latency: "5ms")"#, "").unwrap_err();
    assert!(e.contains("10807202 events"), "{e}");
    // A connect timeout it cannot reach leaves the set-up certain: the same.
    let e = connecting(r#", connect: (latency: "5ms", timeout: "10ms")"#, "").unwrap_err();
    assert!(e.contains("10807202 events"), "{e}");
}

#[test]
fn kept_connections_count_a_set_up_per_max_requests_calls() {
    // Closed after 2 calls: half the calls open one, 2.5 events a request: 9,007,202.
    let e = connecting(r#", connect: (latency: "5ms"), keep_alive: (max_requests: 2)"#, "").unwrap_err();
    assert!(e.contains("9007202 events"), "{e}");
    // After 4: 2.25 a request, 8,107,202, under the limit; kept without a limit, no set-up
    // is certain beyond the run's first ones.
    connecting(r#", connect: (latency: "5ms"), keep_alive: (max_requests: 4)"#, "").unwrap();
    connecting(r#", connect: (latency: "5ms"), keep_alive: (max_idle: 1000)"#, "").unwrap();
}

#[test]
fn what_is_not_certain_is_not_counted_and_presets_set_the_reuse() {
    // A set-up that may run past its timeout may fail in the call's own event: not counted.
    connecting(r#", connect: (latency: "5ms", timeout: "2ms")"#, "").unwrap();
    connecting(r#", connect: (latency: Exponential(mean: "5ms"), timeout: "10ms")"#, "").unwrap();
    // HAProxy's `http-reuse never` closes the kept connections: a set-up per call again.
    let never = r#"(policy: HaproxyBackend((retries: 0, http_reuse: Some(Never))))"#;
    let e = connecting(r#", connect: (latency: "5ms"), keep_alive: (max_idle: 1000)"#, never).unwrap_err();
    assert!(e.contains("10807202 events"), "{e}");
}
