//! `brownout check`: validate a scenario without running it.

use std::path::Path;

use serde_json::json;

use super::{Failure, json, run};
use brownout::decide::feasible;
use brownout::report::escape;
use brownout::scenario::ScenarioError;

/// Load and validate `scenario`; print `ok` (or with `--json`, a document) or fail with exit 2.
/// A `decide` constraint that no policy set can meet (`decide::feasible`) is a valid scenario
/// whose question cannot be answered as asked: a warning on stderr (and in the document's
/// `warnings`), exit 0.
pub fn check(scenario: &Path, as_json: bool) -> Result<(), Failure> {
    let loaded = run::load_scenario(scenario).and_then(|s| {
        let dir = scenario.parent().unwrap_or(Path::new("."));
        let bounds = feasible::ceilings_at(&s, dir).map_err(|e| ScenarioError {
            file: scenario.to_path_buf(),
            line: 0,
            col: 0,
            message: e.to_string(),
        })?;
        Ok((s, bounds))
    });
    let warnings: Vec<String> = match &loaded {
        Ok((_, bounds)) => bounds
            .iter()
            .filter_map(feasible::unreachable_text)
            .map(|w| format!("warning: {}: {w}", scenario.display()))
            .collect(),
        Err(_) => Vec::new(),
    };
    for w in &warnings {
        eprintln!("{}", escape::terminal(w));
    }
    match loaded {
        Ok((s, bounds)) if as_json => {
            json::print(&json!({
                "schema_version": json::SCHEMA_VERSION,
                "command": "check",
                "ok": true,
                "exit_code": 0,
                "file": scenario.display().to_string(),
                "scenario": s.name,
                "classes": s.classes.len(),
                "policies": s.policies.len(),
                "bounds": bounds,
                "warnings": warnings,
            }));
            Ok(())
        }
        Ok((s, _)) => {
            let ok = format!("{}: ok ({} classes, {} policies)", scenario.display(), s.classes.len(), s.policies.len());
            println!("{}", escape::terminal(&ok));
            Ok(())
        }
        Err(e) => {
            let f = Failure::input(format!("error: {e}"));
            Err(if as_json { json::fail("check", f, Some(&e)) } else { f })
        }
    }
}
