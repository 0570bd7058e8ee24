//! Every scenario in `scenarios/` doubles as a test: it loads, runs, and every expectation
//! it states holds. The grocery scenario also runs at a reduced horizon that still covers
//! the drift to 6 s, to show its claims do not depend on the long tail of the run.

use crate::common;

use std::path::{Path, PathBuf};

use brownout::model::{Model, RunOptions};
use brownout::report::expect::check;
use brownout::runner::run_all;
use brownout::scenario::{Dur, Scenario, load};

fn scenario_files() -> Vec<PathBuf> {
    common::ron_files("scenarios")
}

fn failures(s: &Scenario, dir: &Path) -> Vec<String> {
    let model = Model::build(s, s.seed, dir).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    let result = run_all(&model, RunOptions::default(), true).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    check(&result.summary, &s.expect)
        .into_iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{}: {} (measured {})", s.name, c.statement, c.actual))
        .collect()
}

#[test]
fn every_scenario_runs_and_meets_its_expectations() {
    let mut failed = Vec::new();
    let files = scenario_files();
    assert!(files.len() >= 10, "expected the scenario library, found {}", files.len());
    for path in files {
        let s = load(&path).unwrap_or_else(|e| panic!("{e}"));
        failed.extend(failures(&s, path.parent().unwrap()));
    }
    assert!(failed.is_empty(), "failed expectations:\n{}", failed.join("\n"));
}

#[test]
fn grocery_claims_hold_at_a_reduced_horizon() {
    // 15 minutes still covers the ramp (5-10 min) and five minutes at 6 s.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/grocery.ron");
    let mut s = load(&path).unwrap();
    s.horizon = Dur::secs(15 * 60);
    let failed = failures(&s, path.parent().unwrap());
    assert!(failed.is_empty(), "failed expectations:\n{}", failed.join("\n"));
}
