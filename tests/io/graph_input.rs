//! Bad service graphs (issue 33) are refused by `check` at the offending value's line and
//! column: a call to an unknown dependency, an empty parallel group, a quorum larger than
//! its group, duplicate dependency names, and both `dependency` and `dependencies`.

use std::path::Path;

use brownout::scenario::load_text;

/// A valid graph: checkout calls inventory and pricing in parallel, then payment.
pub(crate) const GOOD: &str = r#"Scenario(
    name: "graph", horizon: "10s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "checkout", arrivals: Poisson(rate_per_s: 10), deadline: "1s",
        calls: [Parallel(join: All, calls: [Call("inventory"), Optional(dependency: "pricing", cost: "1ms")]),
                Call("payment")])],
    dependencies: [
        (name: "inventory", latency: Constant("10ms")),
        (name: "pricing", latency: Constant("20ms")),
        (name: "payment", latency: Constant("30ms")),
    ],
    policies: [(name: "p")],
)"#;

/// Line and column (1-based) of the only occurrence of `needle` in `text`.
pub(crate) fn position(text: &str, needle: &str) -> (usize, usize) {
    assert_eq!(text.matches(needle).count(), 1, "{needle:?} must occur once");
    let at = text.find(needle).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, text[start..at].chars().count() + 1)
}

/// `GOOD` with `from` replaced by `to` is refused at `value` (unique in the edited text),
/// with a message containing `says`.
pub(crate) fn refused(from: &str, to: &str, value: &str, says: &str) {
    refused_in(GOOD, from, to, value, says);
}

/// [`refused`] for another valid scenario `good`.
pub(crate) fn refused_in(good: &str, from: &str, to: &str, value: &str, says: &str) {
    assert_eq!(good.matches(from).count(), 1, "{from:?}");
    let text = good.replace(from, to);
    let e = load_text(Path::new("graph.ron"), &text).expect_err(to);
    assert!(e.message.contains(says), "{to}: {e}");
    assert_eq!((e.line, e.col), position(&text, value), "{to}: {e}");
}

#[test]
fn the_good_graph_is_accepted() {
    load_text(Path::new("graph.ron"), GOOD).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_call_to_an_unknown_dependency_is_refused_at_the_call() {
    refused(r#"Call("payment")"#, r#"Call("paymnet")"#, r#"Call("paymnet")"#, "unknown dependency \"paymnet\"");
    refused(r#"Call("inventory")"#, r#"Call("stock")"#, r#"Call("stock")"#, "unknown dependency \"stock\"");
    refused(r#"dependency: "pricing""#, r#"dependency: "prices""#, r#""prices""#, "unknown dependency \"prices\"");
}

#[test]
fn an_empty_parallel_group_is_refused_at_its_calls() {
    let group = r#"calls: [Call("inventory"), Optional(dependency: "pricing", cost: "1ms")]"#;
    refused(group, "calls: [ ]", "[ ]", "empty parallel group");
}

#[test]
fn a_quorum_larger_than_its_group_is_refused_at_the_join() {
    refused("join: All", "join: Quorum(3)", "Quorum(3)", "Quorum(3) needs 1..=2");
    refused("join: All", "join: Quorum(0)", "Quorum(0)", "Quorum(0) needs 1..=2");
}

#[test]
fn duplicate_dependency_names_are_refused_at_the_second() {
    let dup = r#"name: "pricing", latency: Constant("30ms")"#;
    let text = GOOD.replace(r#"name: "payment", latency"#, r#"name: "pricing", latency"#);
    let e = load_text(Path::new("graph.ron"), &text).expect_err("duplicate");
    assert!(e.message.contains("duplicate dependency name \"pricing\" (also dependencies[1])"), "{e}");
    let (line, col) = position(&text, dup);
    assert_eq!((e.line, e.col), (line, col + "name: ".len()), "{e}");
}

#[test]
fn both_dependency_and_dependencies_are_refused_at_dependency() {
    refused(
        "    dependencies: [",
        "    dependency: (latency: Constant(\"5ms\")),\n    dependencies: [",
        "(latency: Constant(\"5ms\"))",
        "either dependency (one) or dependencies (several), not both",
    );
}

#[test]
fn several_dependencies_need_a_plan_and_a_plan_needs_calls_dependency() {
    let plan = r#"
        calls: [Parallel(join: All, calls: [Call("inventory"), Optional(dependency: "pricing", cost: "1ms")]),
                Call("payment")])],"#;
    let text = GOOD.replace(plan, ")],");
    let e = load_text(Path::new("graph.ron"), &text).expect_err("no plan");
    assert!(e.message.contains("has no calls: [..] plan, and there are 3"), "{e}");
    assert_eq!((e.line, e.col), position(&text, "\"checkout\""), "{e}");
    refused(
        r#"deadline: "1s","#,
        r#"deadline: "1s", calls_dependency: false,"#,
        "[Parallel",
        "calls_dependency: false has no calls plan",
    );
}

#[test]
fn the_event_estimate_multiplies_by_the_calls_per_request() {
    // 10 requests a second for 10 s: 100 requests. One call each is 2 events a request (its
    // arrival and its call) plus 10 windows x 2 ticks: 220 events. A plan of eight calls is
    // 9 events a request: 920, over a limit of 500 that one call fits in.
    let one = GOOD
        .replace(
            r#"calls: [Parallel(join: All, calls: [Call("inventory"), Optional(dependency: "pricing", cost: "1ms")]),
                Call("payment")]"#,
            r#"calls: [Call("payment")]"#,
        )
        .replace(r#"policies: [(name: "p")],"#, r#"policies: [(name: "p")], limits: (max_events: 500),"#);
    load_text(Path::new("graph.ron"), &one).unwrap_or_else(|e| panic!("{e}"));
    let eight = one.replace(
        r#"calls: [Call("payment")]"#,
        r#"calls: [Parallel(calls: [Call("inventory"), Call("pricing"), Call("payment"), Call("pricing"),
                                    Call("inventory"), Call("pricing"), Call("payment"), Call("payment")])]"#,
    );
    let e = load_text(Path::new("graph.ron"), &eight).expect_err("over max_events");
    assert!(e.message.contains("limits.max_events (500)"), "{e}");
}
