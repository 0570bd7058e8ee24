//! Sweeps over a service graph's edges (issue 33), on scenarios/checkout-flat.ron: an axis
//! names a layer scoped to a dependency (`stack[Timeout@pricing]`) or a dependency's own pool
//! (`fleet.pools[pricing]`), and a metric names one dependency's figures
//! (`dependencies[pricing]/abandoned`). Index:
//! - `pricing_timeout_moves_pricing_and_leaves_inventory`: the pricing timeout changes how many
//!   pricing attempts are abandoned (a timeout of 50 ms cuts about 10 % of pricing's calls
//!   before its brownout, LogNormal(30 ms, 0.4): P(L > 50) = 1 - Φ(ln(50/30)/0.4) = 0.10, and
//!   nearly all during it; 400 ms cuts none before and about 24 % during it) while every one
//!   of inventory's figures stays the same: pricing is optional, so a cut pricing call cancels
//!   nothing, and inventory draws from its own streams (common random numbers).
//! - `pricing_pool_bounds_pricing_in_flight`: two connections for pricing keep fewer of its
//!   attempts in flight at once than sixteen, inventory again untouched.
//! - `unknown_names_are_refused_at_their_line`: a dependency, pool or scoped layer that does
//!   not exist, in an axis's path or a metric, is refused with file:line:col and exit 2.
//! - `tune_searches_pricing_pool_and_timeout`: `tune` knobs on the same two paths, under a
//!   per-dependency constraint; a knob on pricing's latency (a condition) is refused.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::brownout;

const TIMEOUT: &str = "policies[pricing-timeout].stack[Timeout@pricing].policy.Timeout.timeout";
const POOL: &str = "fleet.pools[pricing].max_connections";
const INVENTORY: [&str; 5] = [
    "dependencies[inventory]/calls",
    "dependencies[inventory]/attempts",
    "dependencies[inventory]/total_mean_ms",
    "dependencies[inventory]/total_p95_ms",
    "dependencies[inventory]/abandoned",
];

fn base() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/checkout-flat.ron")
}

/// A one-replication sweep of the pricing-timeout set over `axis`, reading `metrics` and every
/// inventory figure.
fn spec(axis: &str, metrics: &[&str]) -> String {
    let all: Vec<String> = metrics.iter().chain(INVENTORY.iter()).map(|m| format!("{m:?}")).collect();
    format!(
        "SweepSpec(\n    name: \"graph-paths\",\n    base: {:?},\n    policies: [\"pricing-timeout\"],\n    metrics: [{}],\n    axes: [\n        {axis},\n    ],\n)\n",
        base().display().to_string(),
        all.join(", ")
    )
}

fn sweep(text: &str) -> Vec<BTreeMap<String, String>> {
    common::sweep_rows(text)
}

fn num(row: &BTreeMap<String, String>, col: &str) -> f64 {
    row.get(col).unwrap_or_else(|| panic!("no column {col} in {row:?}")).parse().unwrap()
}

fn inventory_unchanged(rows: &[BTreeMap<String, String>]) {
    for m in INVENTORY {
        assert!(num(&rows[0], "dependencies[inventory]/calls") > 1000.0, "{rows:?}");
        assert_eq!(rows[0][m], rows[1][m], "{m} moved with pricing's setting: {rows:?}");
    }
}

#[test]
fn pricing_timeout_moves_pricing_and_leaves_inventory() {
    let axis = format!("(name: \"pricing_timeout\", path: {TIMEOUT:?}, values: [\"50ms\", \"400ms\"])");
    let rows = sweep(&spec(&axis, &["dependencies[pricing]/abandoned", "dependencies[pricing]/calls"]));
    assert_eq!(rows.len(), 2);
    assert_eq!(num(&rows[0], "pricing_timeout"), 50.0);
    let abandoned = |r| num(&rows[r], "dependencies[pricing]/abandoned") / num(&rows[r], "dependencies[pricing]/calls");
    // 50 ms: 10 % of the calls outside the 28 s of brownout (of 65 s measured), nearly all
    // inside: at least 0.10 overall, and well above 400 ms's share.
    assert!(abandoned(0) > 0.3, "{rows:?}");
    assert!(abandoned(0) > 2.0 * abandoned(1), "{rows:?}");
    inventory_unchanged(&rows);
}

#[test]
fn pricing_pool_bounds_pricing_in_flight() {
    let axis = format!("(name: \"pricing_pool\", path: {POOL:?}, values: [2, 16])");
    let rows = sweep(&spec(&axis, &["dependencies[pricing]/peak_in_flight", "dependencies[pricing]/attempts"]));
    assert_eq!(num(&rows[0], "pricing_pool"), 2.0);
    let peak = |r| num(&rows[r], "dependencies[pricing]/peak_in_flight");
    // A cancelled attempt is still at pricing for the cancel's 1 ms after its connection is
    // back, so the peak may pass the pool by a little, never by much.
    assert!(peak(0) < peak(1), "{rows:?}");
    assert!(peak(0) <= 4.0, "{rows:?}");
    assert!(num(&rows[0], "dependencies[pricing]/attempts") < num(&rows[1], "dependencies[pricing]/attempts"));
    inventory_unchanged(&rows);
}

/// `text` refused with exit 2 at the line holding `marker`, saying `why`, writing nothing.
fn refused(text: &str, marker: &str, why: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (spec, out) = (dir.path().join("spec.ron"), dir.path().join("out"));
    std::fs::write(&spec, text).unwrap();
    let o = brownout(&["sweep", spec.to_str().unwrap(), "-q", "--out", out.to_str().unwrap()], Path::new("."));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let line = text.lines().position(|l| l.contains(marker)).unwrap() + 1;
    assert!(err.contains(&format!("{}:{line}:", spec.display())), "want line {line} ({marker}): {err}");
    assert!(err.contains(why), "want {why}: {err}");
    assert!(!out.exists());
}

#[test]
fn unknown_names_are_refused_at_their_line() {
    let axis = |path: &str| format!("(name: \"x\", path: {path:?}, values: [1, 2])");
    for (path, why) in [
        ("dependencies[shipping].latency.LogNormal.sigma", "no element named \"shipping\""),
        // Only pricing has a pool of its own.
        ("fleet.pools[inventory].max_connections", "no entry for dependency \"inventory\""),
        ("policies[pricing-timeout].stack[Timeout@payment].policy.Timeout.timeout", "no layer [Timeout@payment]"),
        ("policies[pricing-timeout].stack[Retry@pricing].policy.Retry.max_attempts", "no layer [Retry@pricing]"),
    ] {
        refused(&spec(&axis(path), &[]), path, why);
    }
    let ok = axis(POOL);
    let m = "dependencies[shipping]/calls";
    refused(&spec(&ok, &[m]), m, "unknown dependency \"shipping\" (dependencies: inventory, pricing, payment)");
    let m = "dependencies[pricing]/bogus";
    refused(&spec(&ok, &[m]), m, "unknown per-dependency metric \"bogus\"");
}

/// A tune spec over checkout-flat's pricing pool and timeout, with `extra` knobs.
fn tune_spec(extra: &str) -> String {
    format!(
        r#"TuneSpec(
    name: "graph-tune",
    base: {:?},
    seed: 5,
    replications: 2,
    policy: "pricing-timeout",
    knobs: [
        (name: "pricing_pool", path: {POOL:?}, range: (from: 2, to: 16), integer: true),
        (name: "pricing_timeout", path: {TIMEOUT:?}, range: (from: "50ms", to: "300ms")),{extra}
    ],
    decide: (
        minimize: "pricing_pool",
        subject_to: [
            (dependency: "pricing", metric: "mean_in_flight", phase: "brownout", op: Le, value: 8.0),
            (class: "checkout", metric: "ok_ratio", op: Ge, value: 0.5),
        ],
    ),
    budget: (runs: 24),
)
"#,
        base().display().to_string()
    )
}

#[test]
fn tune_searches_pricing_pool_and_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, out) = (dir.path().join("tune.ron"), dir.path().join("out"));
    std::fs::write(&spec, tune_spec("")).unwrap();
    let o = brownout(&["tune", spec.to_str().unwrap(), "-j", "2", "--out", out.to_str().unwrap()], Path::new("."));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("recommendation.json")).unwrap()).unwrap();
    let setting = &r["recommended"]["setting"];
    let pool = setting["pricing_pool"].as_f64().unwrap();
    assert!((2.0..=16.0).contains(&pool) && pool.fract() == 0.0, "{r}");
    assert_eq!(r["constraints"][0]["metric"], "brownout:dependencies[pricing]/mean_in_flight", "{r}");
    // The recommended stack carries the timeout the search chose, on pricing's layer.
    let stack = r["recommended"]["stack"].as_str().unwrap();
    assert!(stack.contains("dependencies: [") && stack.contains("\"pricing\""), "{stack}");
    // Pricing's latency is the environment, not a decision.
    let bad = r#"
        (name: "slow", path: "dependencies[pricing].latency.LogNormal.median", range: (from: "10ms", to: "50ms")),"#;
    let text = tune_spec(bad);
    std::fs::write(&spec, &text).unwrap();
    let o =
        brownout(&["tune", spec.to_str().unwrap(), "--out", dir.path().join("bad").to_str().unwrap()], Path::new("."));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let line = text.lines().position(|l| l.contains("LogNormal.median")).unwrap() + 1;
    assert!(err.contains(&format!("{}:{line}:", spec.display())) && err.contains("is not a decision"), "{err}");
}
