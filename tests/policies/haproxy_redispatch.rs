//! Which replica an HAProxy retry reaches (`HaproxyBackend`'s `retries` and `redispatch`),
//! worked by hand from HAProxy's source: the server is assigned before the connection is
//! tried (`src/backend.c`, `assign_server` then `connect_server`), a failed connection is
//! retried by `back_handle_st_cer`, which calls `stream_choose_redispatch`
//! (`include/haproxy/stream.h`): without `option redispatch` the stream stays assigned to
//! its server (`SC_ST_ASS`); with it and more than one server up it is balanced anew
//! (`SC_ST_REQ`). The rule itself is unit-tested beside `policy::haproxy::redispatches`.
//!
//! The backend's two servers are the dependency's two replicas, balanced round robin:
//! replica 0 answers in 10 ms, replica 1 (slowed x10) in 100 ms, so a call's latency names
//! its replica. A partition hangs every call sent before 1.02 s until 60 ms later (a
//! connect timeout, retried at once). Requests A at 1.0 s, B at 1.05 s, C at 1.055 s:
//! - HAProxy assigns A's server first (replica 0; the cursor moves to 1), B gets replica 1,
//!   C replica 0, and A's retry at 1.06 s either keeps replica 0 or, redispatched, takes the
//!   cursor's replica 1.

use std::path::Path;

use brownout::model::records::Records;
use brownout::model::{Model, RunOptions, run_policy_recorded};

use crate::common;

fn records(backend: &str) -> Records {
    let text = format!(
        r#"Scenario(
    name: "redispatch", seed: 1, horizon: "3s", warmup: "0s", window: "1s",
    fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "10s"),
            partitions: [(start: "0s", end: "1.02s", instances: [0], mode: Hang(connect_timeout: "60ms"))]),
    classes: [(name: "api", arrivals: Scripted(times: ["1s", "1.05s", "1.055s"]), deadline: "10s")],
    dependency: (latency: Constant("10ms"),
        replicas: Some((count: 2, balancing: RoundRobin, slow: [(replica: 1, start: "0s", end: "3s", factor: 10.0)]))),
    policies: [(name: "p", stack: [(policy: HaproxyBackend(({backend})))])],
)"#
    );
    let s = common::scenario(&text);
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    run_policy_recorded(&m, 0, RunOptions::default()).expect("runs").1
}

/// (request key, attempt, latency in ms) of every call that reached a replica, in key order.
fn calls(r: &Records) -> Vec<(u64, u32, u64)> {
    let mut v: Vec<(u64, u32, u64)> = r.calls.iter().map(|c| (c.key, c.attempt, c.latency / 1_000_000)).collect();
    v.sort_unstable();
    v
}

#[test]
fn without_option_redispatch_the_retry_goes_to_the_server_assigned_before() {
    // A's first attempt hangs on replica 0; its retry stays there (10 ms), B took replica 1
    // (100 ms) and C replica 0 (10 ms).
    let r = records("retries: 3");
    assert_eq!(calls(&r), vec![(0, 2, 10), (1, 1, 100), (2, 1, 10)]);
}

#[test]
fn with_option_redispatch_and_two_servers_the_retry_is_balanced_anew() {
    // `srv_act > 1`: A's retry is redispatched and takes the cursor's replica 1 (100 ms).
    let r = records("retries: 3, redispatch: true, servers: 2");
    assert_eq!(calls(&r), vec![(0, 2, 100), (1, 1, 100), (2, 1, 10)]);
}
