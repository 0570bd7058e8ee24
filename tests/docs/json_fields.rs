//! docs/json.md's `summary.json` field tables are generated from the metric catalogue and the
//! summary types' documentation (`brownout::metrics::fields::markdown`), between two markers,
//! so they cannot drift: `BROWNOUT_BLESS=1 cargo test --profile ci --test docs json_fields::`
//! rewrites that part of the document.

use std::path::PathBuf;

use brownout::metrics::catalogue::CATALOGUE;

const BEGIN: &str =
    "<!-- BEGIN generated: summary fields (BROWNOUT_BLESS=1 cargo test --profile ci --test docs json_fields::) -->";
const END: &str = "<!-- END generated: summary fields -->";

fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/json.md")
}

/// The document and the byte range between its markers.
fn generated_part() -> (String, std::ops::Range<usize>) {
    let doc = std::fs::read_to_string(path()).unwrap();
    let start = doc.find(BEGIN).map(|i| i + BEGIN.len() + 1).expect("docs/json.md has the BEGIN marker");
    let end = doc.find(END).expect("docs/json.md has the END marker");
    assert!(start <= end, "the markers are in order");
    (doc, start..end)
}

#[test]
fn the_summary_field_tables_are_the_generated_ones() {
    let generated = brownout::metrics::fields::markdown();
    let (doc, range) = generated_part();
    if std::env::var_os("BROWNOUT_BLESS").is_some() {
        let mut doc = doc;
        doc.replace_range(range, &generated);
        std::fs::write(path(), doc).unwrap();
        return;
    }
    assert!(
        doc[range] == generated,
        "docs/json.md's summary fields are stale: run BROWNOUT_BLESS=1 cargo test --profile ci --test docs json_fields::"
    );
}

/// Every figure a summary holds is documented: its field path and catalogue name, on one row.
/// (The hand-written table this replaced left out 52 of the 119 figures, among them every
/// `dependency.*`, `breaker.*` and `limit.*` figure.)
#[test]
fn every_catalogue_figure_has_a_row() {
    let doc = std::fs::read_to_string(path()).unwrap();
    let missing: Vec<&str> = CATALOGUE
        .iter()
        .filter(|m| !doc.lines().any(|l| l.starts_with(&format!("| `{}` | `{}` |", m.field, m.name))))
        .map(|m| m.name)
        .collect();
    assert!(missing.is_empty(), "{} figures without a row in docs/json.md: {missing:?}", missing.len());
}
