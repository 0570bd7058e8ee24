//! docs/reference.md is `brownout explain --all`: generated from the scenario types, so it
//! cannot drift. `BROWNOUT_BLESS=1 cargo test --profile ci --test docs reference::` rewrites it.
//! `brownout explain NAME` prints one section; an unknown name is bad input.

use std::path::Path;
use std::process::{Command, Output};

fn brownout(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brownout")).args(args).output().unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = brownout(args);
    assert!(out.status.success(), "brownout {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_checked_in_reference_is_the_generated_one() {
    let generated = stdout(&["explain", "--all"]);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md");
    if std::env::var_os("BROWNOUT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "docs/reference.md is stale: run BROWNOUT_BLESS=1 cargo test --profile ci --test docs reference::"
    );
}

/// The rows `| `field` | type | default | meaning |` of the whole reference.
fn field_rows(reference: &str) -> Vec<Vec<String>> {
    reference
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect()
}

#[test]
fn every_field_has_a_type_a_default_and_a_meaning() {
    let rows = field_rows(&stdout(&["explain", "--all"]));
    assert!(rows.len() > 150, "{} field rows", rows.len());
    for row in &rows {
        assert_eq!(row.len(), 4, "{row:?}");
        assert!(row.iter().all(|c| !c.is_empty() && c != "any"), "{row:?}");
    }
}

#[test]
fn sections_state_the_defaults_and_ranges_written_in_the_types() {
    // Values read off the type definitions: Fleet.instances defaults to 1 (a u32),
    // Scenario.window to 1 s, Limits.max_in_flight to 2,000,000, the bulkhead's queue to u32::MAX.
    let fleet = stdout(&["explain", "Fleet"]);
    assert!(fleet.contains("| `instances` | integer 0..=4294967295 | `1` |"), "{fleet}");
    assert!(fleet.contains("| `workers` | [Workers](#workers) | required |"), "{fleet}");
    let scenario = stdout(&["explain", "scenario"]);
    assert!(scenario.contains("| `window` | [Dur](#dur) | `\"1s\"` |"), "{scenario}");
    let limits = stdout(&["explain", "Limits"]);
    assert!(limits.contains("| `max_in_flight` | integer 0..=18446744073709551615 | `2000000` |"), "{limits}");
    // A policy's name finds its configuration.
    let bulkhead = stdout(&["explain", "TieredBulkhead"]);
    assert!(bulkhead.starts_with("TieredBulkhead is a variant of PolicySpec"), "{bulkhead}");
    assert!(bulkhead.contains("## TieredBulkheadConfig"), "{bulkhead}");
    assert!(bulkhead.contains("| `queue` | integer 0..=4294967295 | `4294967295` |"), "{bulkhead}");
    let index = stdout(&["explain"]);
    for name in ["Scenario", "Fleet", "PolicySpec", "TieredBulkheadConfig", "Resilience4jConfig", "Dur"] {
        assert!(index.lines().any(|l| l.trim_start().starts_with(name)), "{name} not in the index");
    }
}

#[test]
fn an_unknown_name_is_bad_input() {
    let out = brownout(&["explain", "TieredBulkhed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("TieredBulkhed"));
    assert!(out.stdout.is_empty());
}
