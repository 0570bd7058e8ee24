//! Bad connection-life settings of a pool (issue 39): a zero or negative time, a zero
//! request limit, a keep-alive without a set-up, a set-up that cannot be drawn, each refused
//! at the value's line and column.

use std::path::Path;

use brownout::scenario::load_text;

use crate::graph_input::{GOOD, refused};

const POOL: &str = r#"pool: (max_connections: 100, acquire_timeout: "1s")"#;

/// The fleet pool with `extra` inside its parentheses.
fn pool(extra: &str) -> String {
    format!(r#"pool: (max_connections: 100, acquire_timeout: "1s", {extra})"#)
}

#[test]
fn a_pool_with_a_connection_life_is_accepted() {
    for extra in [
        r#"connect: (latency: Constant("5ms"))"#,
        r#"connect: (latency: LogNormal(median: "5ms", sigma: 0.5), timeout: "1s"), keep_alive: ()"#,
        r#"connect: (latency: "5ms"), keep_alive: (idle: "60s", max_requests: 1000)"#,
    ] {
        load_text(Path::new("graph.ron"), &GOOD.replace(POOL, &pool(extra))).unwrap_or_else(|e| panic!("{extra}: {e}"));
    }
    let own = format!(
        r#"{POOL}, pools: [(dependency: "pricing", max_connections: 2, connect: (latency: "2ms"), keep_alive: (idle: "5s"))]"#
    );
    load_text(Path::new("graph.ron"), &GOOD.replace(POOL, &own)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn zero_and_negative_values_are_refused_where_they_are_written() {
    refused(
        POOL,
        &pool(r#"connect: (latency: "5ms", timeout: "0s")"#),
        r#""0s""#,
        "fleet.pool.connect.timeout must be > 0",
    );
    refused(
        POOL,
        &pool(r#"connect: (latency: "5ms"), keep_alive: (idle: "0ms")"#),
        r#""0ms""#,
        "fleet.pool.keep_alive.idle must be > 0",
    );
    refused(
        POOL,
        &pool(r#"connect: (latency: "5ms"), keep_alive: (max_requests: 0 )"#),
        "0 )",
        "fleet.pool.keep_alive.max_requests must be >= 1",
    );
    // A negative duration or count is not a value of its type: refused by the parser where
    // it is written.
    for (extra, value) in [
        (r#"connect: (latency: "-5ms")"#, r#""-5ms""#),
        (r#"connect: (latency: "5ms", timeout: "-1s")"#, r#""-1s""#),
        (r#"connect: (latency: "5ms"), keep_alive: (max_requests: -3)"#, "-3"),
    ] {
        let text = GOOD.replace(POOL, &pool(extra));
        let e = load_text(Path::new("graph.ron"), &text).expect_err(extra);
        let (line, col) = crate::graph_input::position(&text, value);
        assert_eq!(e.line, line, "{extra}: {e}");
        assert!(e.col >= col && e.col <= col + value.len(), "{extra}: {e} (value at column {col})");
    }
    refused(
        POOL,
        &pool(r#"connect: (latency: LogNormal(median: "5ms", sigma: 9.0))"#),
        "9.0",
        "fleet.pool.connect.latency: LogNormal sigma must lie in [0, 5]",
    );
}

#[test]
fn a_keep_alive_without_a_set_up_is_refused_at_the_keep_alive() {
    refused(POOL, &pool(r#"keep_alive: (idle: "60s")"#), r#"(idle: "60s")"#, "fleet.pool.keep_alive needs a connect");
    let own = format!(r#"{POOL}, pools: [(dependency: "pricing", max_connections: 2, keep_alive: (max_requests: 5))]"#);
    refused(POOL, &own, "(max_requests: 5)", "fleet.pools[0].keep_alive needs a connect");
}
