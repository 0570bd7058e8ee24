//! Sweeps reach into services (issue 33), on scenarios/checkout-graph.ron: an axis names a
//! policy set's stack for a service (`policies[SET].services[pricing].stack[1]`, the entry
//! picked by its `service`) or a service's own slots (`dependencies[pricing].service.workers`).
//! During the brownout tax answers in 1.5 s, so every attempt pricing makes to it times out:
//! with pricing's own timeout at 100 ms its three attempts fit in the gateway's 400 ms, at
//! 300 ms only two start before the gateway gives up, so tax gets more attempts at 100 ms.
//! One worker slot for pricing lets through fewer calls to tax than a hundred.

use crate::common;

use std::path::Path;

fn sweep(axis: &str) -> Vec<f64> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/checkout-graph.ron");
    let text = format!(
        "SweepSpec(\n    name: \"service-paths\",\n    base: {:?},\n    policies: [\"retries-everywhere\"],\n    metrics: [\"dependencies[tax]/attempts\"],\n    axes: [\n        {axis},\n    ],\n)\n",
        base.display().to_string()
    );
    let col = "dependencies[tax]/attempts";
    common::sweep_rows(&text).iter().map(|r| r[col].parse().unwrap()).collect()
}

#[test]
fn a_policy_sets_stack_for_a_service_is_an_axis() {
    let path = "policies[retries-everywhere].services[pricing].stack[1].policy.Timeout.timeout";
    let tax = sweep(&format!("(name: \"inner_timeout\", path: {path:?}, values: [\"100ms\", \"300ms\"])"));
    assert!(tax[0] > tax[1], "tax's attempts at 100 ms and 300 ms: {tax:?}");
}

#[test]
fn a_services_slots_are_an_axis() {
    let path = "dependencies[pricing].service.workers.slots";
    let tax = sweep(&format!("(name: \"slots\", path: {path:?}, values: [1, 100])"));
    assert!(tax[0] < tax[1], "tax's attempts with 1 and 100 slots: {tax:?}");
}
