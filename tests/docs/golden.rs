//! Golden reports: the grocery scenarios' `summary.json` and `report.md` are committed in
//! `docs/golden/`, so any change in behaviour shows up in review, and optimisations that
//! must not change results are checked byte for byte. Regenerate deliberately with
//! `BROWNOUT_BLESS=1 cargo test --profile ci --test docs golden::` (or `bash docs/regen.sh`).

use std::path::Path;

use brownout::model::{Model, RunOptions};
use brownout::output::{report_md, summary_json};
use brownout::report::expect::check;
use brownout::runner::run_all;
use brownout::scenario::load;

fn golden(name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("scenarios").join(format!("{name}.ron"));
    let s = load(&path).unwrap();
    let model = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    let result = run_all(&model, RunOptions::default(), true).expect("runs");
    let checked = check(&result.summary, &s.expect);
    // The charts list as `brownout run` writes it, so the report matches byte for byte.
    let charts: Vec<String> = std::fs::read_to_string(root.join("docs/golden").join(name).join("report.md"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("![").and_then(|r| r.split(']').next()).map(str::to_string))
        .collect();
    let files = [
        ("summary.json", summary_json(&result.summary).unwrap()),
        ("report.md", report_md(&s, &result.summary, &checked, &charts).into_bytes()),
    ];
    let dir = root.join("docs/golden").join(name);
    for (file, bytes) in files {
        let want = dir.join(file);
        if std::env::var_os("BROWNOUT_BLESS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&want, &bytes).unwrap();
            continue;
        }
        let expected = std::fs::read(&want).unwrap_or_else(|e| panic!("{}: {e}", want.display()));
        assert!(
            expected == bytes,
            "{} differs from the golden file: if the change is intended, run BROWNOUT_BLESS=1 cargo test --profile ci --test docs golden::",
            want.display()
        );
    }
}

#[test]
fn grocery_matches_its_golden_report() {
    golden("grocery");
}

#[test]
fn grocery_overload_matches_its_golden_report() {
    golden("grocery-overload");
}
