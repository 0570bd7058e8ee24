//! Bad input about what is scoped to dependencies (issue 33): a pool for a dependency that
//! does not exist, a layer scoped to an unknown dependency or to one no class calls, each
//! refused by `check` at the name's line and column with exit 2; and the event estimate of
//! a wide plan names the setting that would allow it.

use std::path::Path;

use brownout::scenario::load_text;

use crate::common;
use crate::graph_input::{GOOD, position, refused};

const POOL: &str = r#"pool: (max_connections: 100, acquire_timeout: "1s")"#;
const SET: &str = r#"policies: [(name: "p")],"#;

/// `GOOD` with a policy set whose one layer is `layer`.
fn with_layer(layer: &str) -> (&'static str, String) {
    (SET, format!(r#"policies: [(name: "p", stack: [{layer}])],"#))
}

#[test]
fn pools_and_scoped_layers_on_known_called_dependencies_are_accepted() {
    let text = GOOD.replace(POOL, &format!(r#"{POOL}, pools: [(dependency: "pricing", max_connections: 2)]"#));
    let (from, to) = with_layer(r#"(policy: Timeout((timeout: "50ms")), dependencies: ["pricing", "payment"])"#);
    load_text(Path::new("graph.ron"), &text.replace(from, &to)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_pool_for_a_dependency_that_does_not_exist_is_refused_at_its_name() {
    let pools = |list: &str| format!("{POOL}, pools: [{list}]");
    refused(
        POOL,
        &pools(r#"(dependency: "tax", max_connections: 2)"#),
        r#""tax""#,
        "a pool for unknown dependency \"tax\" (known: inventory, pricing, payment)",
    );
    let twice = pools(r#"(dependency: "pricing", max_connections: 2), (dependency: "pricing", max_connections: 3)"#);
    let text = GOOD.replace(POOL, &twice);
    let e = load_text(Path::new("graph.ron"), &text).expect_err("two pools");
    assert!(e.message.contains("dependency \"pricing\" has two pools (also fleet.pools[0])"), "{e}");
    let (line, col) = position(&text, r#""pricing", max_connections: 3"#);
    assert_eq!((e.line, e.col), (line, col), "{e}");
    refused(
        POOL,
        &pools(r#"(dependency: "pricing", max_connections: 0)"#),
        "0)]",
        "fleet.pools[0].max_connections must be >= 1",
    );
}

#[test]
fn a_layer_scoped_to_an_unknown_dependency_is_refused_at_its_name() {
    let (from, to) = with_layer(r#"(policy: Timeout((timeout: "50ms")), dependencies: ["pricing", "tax"])"#);
    refused(from, &to, r#""tax""#, "policy \"p\" names unknown dependency \"tax\"");
}

#[test]
fn a_layer_scoped_to_a_dependency_no_class_calls_is_refused_at_its_name() {
    // `audit` exists, but checkout's plan never calls it.
    let deps = r#"(name: "payment", latency: Constant("30ms")),"#;
    let audit = format!(r#"{deps} (name: "audit", latency: Constant("1ms")),"#);
    let text = GOOD.replace(deps, &audit);
    let (from, to) =
        with_layer(r#"(policy: ConsecutiveBreaker((failures: 5, break_duration: "1s")), dependencies: ["audit"])"#);
    let text = text.replace(from, &to);
    let e = load_text(Path::new("graph.ron"), &text).expect_err("audit is never called");
    assert!(e.message.contains("scopes a layer to dependency \"audit\", which no class calls"), "{e}");
    let (line, col) = position(&text, r#"["audit"]"#);
    assert_eq!((e.line, e.col), (line, col + 1), "{e}");
    // `check` refuses it too: exit 2, the file's line and column in the message.
    let dir = std::env::temp_dir().join(format!("brownout-dep-scope-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("audit.ron"), &text).unwrap();
    let out = common::brownout(&["check", "audit.ron"], &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("audit.ron:{line}:{}", col + 1)), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_wide_plan_at_a_high_rate_is_refused_with_the_max_events_that_allows_it() {
    // A million requests a second for an hour: 3.6e9 requests. One call is 2 events each
    // (arrival, call), 7.2e9, plus 3,601 windows x 2 ticks: under the default 2e10. Eight
    // parallel calls are 9 events each: 3.24e10 + 7,202 = 32,400,007,202, over it; the
    // setting suggested is 1.25 x that rounded up to two significant digits: 41,000,000,000.
    let fast = GOOD.replace("horizon: \"10s\"", "horizon: \"1h\"").replace("rate_per_s: 10)", "rate_per_s: 1000000)");
    let plan = r#"calls: [Parallel(join: All, calls: [Call("inventory"), Optional(dependency: "pricing", cost: "1ms")]),
                Call("payment")]"#;
    let one = fast.replace(plan, r#"calls: [Call("payment")]"#);
    load_text(Path::new("graph.ron"), &one).unwrap_or_else(|e| panic!("{e}"));
    let eight = fast.replace(
        plan,
        r#"calls: [Parallel(calls: [Call("inventory"), Call("pricing"), Call("payment"), Call("pricing"),
                                    Call("inventory"), Call("pricing"), Call("payment"), Call("payment")])]"#,
    );
    let e = load_text(Path::new("graph.ron"), &eight).expect_err("over max_events");
    assert!(e.message.contains("32400007202 events"), "{e}");
    assert!(e.message.contains("raise the limit with `limits: (max_events: 41000000000)`"), "{e}");
    let raised = eight.replace(SET, &format!("{SET} limits: (max_events: 41000000000),"));
    load_text(Path::new("graph.ron"), &raised).unwrap_or_else(|e| panic!("{e}"));
}
