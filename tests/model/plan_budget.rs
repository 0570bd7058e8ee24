//! A retry budget in a class with a call plan hears of each call as a request, scoped to
//! the call's dependency or not: each call runs through the class's stack as a request of
//! its own, so the layer wraps the client that sends it. The libraries count so: tower's
//! `TpsBudget` deposits once per request to the service it wraps
//! (`tower/src/retry/budget/tps_budget.rs`, `Budget::deposit`), Finagle's
//! `RequeueFilter.apply` calls `retryBudget.deposit()` once per request through the filter
//! (`finagle-core/.../service/RequeueFilter.scala`), and Envoy's retry budget is a share of
//! the cluster's active upstream requests, one per call.

use crate::common;

/// b's call (answers) then a's (optional, always fails).
const B_THEN_A: &str = r#"[Call("b"), Optional(dependency: "a")]"#;

/// One request at 0 whose plan is `calls` over `a` (10 ms, always fails) and `b` (10 ms,
/// answers), retried once after 1 ms, under tower's budget with ttl 1 s, no reserve and
/// 50 %: each deposit adds 1, a retry withdraws floor(1 / 0.5) = 2. The budget's layer
/// takes `scope`.
pub(crate) fn budgeted(calls: &str, scope: &str) -> String {
    format!(
        r#"Scenario(
    name: "budget", horizon: "2s", warmup: "0s",
    fleet: (instances: 1, workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Scripted(times: ["0ms"]), deadline: "1s", calls: {calls})],
    dependencies: [(name: "a", latency: Constant("10ms"), error_rate: Constant(1.0)),
                   (name: "b", latency: Constant("10ms"))],
    policies: [(name: "p", stack: [
        (policy: Retry((max_attempts: 2, backoff: "1ms"))),
        (policy: RetryBudget((ttl: "1s", min_per_sec: 0, retry_percent: 0.5)){scope}),
    ])],
)"#
    )
}

#[test]
fn an_unscoped_budget_deposits_for_every_call_of_a_plan() {
    // b's call deposits 1 and is answered; a's call deposits 1 (balance 2), fails, and its
    // retry withdraws 2: calls b 1 + a 2 = 3. (Heard once per request, the one deposit
    // could not pay for the retry: 2 calls.)
    assert_eq!(common::run_first(&budgeted(B_THEN_A, "")).dependency.calls, 3);
}

#[test]
fn a_budget_scoped_to_every_called_dependency_counts_as_the_unscoped_one() {
    // Scoped to both dependencies it wraps both clients: the same deposits, the same 3 calls.
    assert_eq!(common::run_first(&budgeted(B_THEN_A, r#", dependencies: ["a", "b"]"#)).dependency.calls, 3);
    // Scoped to a alone, b's call deposits nothing: balance 1 when a fails, no retry: 2.
    assert_eq!(common::run_first(&budgeted(B_THEN_A, r#", dependencies: ["a"]"#)).dependency.calls, 2);
}
