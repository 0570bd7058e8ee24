//! `brownout check`: validate a scenario without running it.

use std::path::Path;

use serde_json::json;

use super::{Failure, json, run};
use brownout::decide::feasible;
use brownout::report::escape;
use brownout::scenario::{self, ScenarioError};

/// Load and validate `scenario`; print `ok` (or with `--json`, a document) or fail with exit 2.
/// A `decide` constraint that no policy set can meet (`decide::feasible`) is a valid scenario
/// whose question cannot be answered as asked: a warning on stderr (and in the document's
/// `warnings`), exit 0. So is what an `Import` layer's file holds that a stack cannot
/// (`scenario::import_warnings`), printed and in `warnings` alike.
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
    let warning = |w: &str| format!("warning: {}: {w}", scenario.display());
    // `load_scenario` has printed the Import layers' warnings; the document holds them too.
    let mut warnings: Vec<String> = match &loaded {
        Ok(_) => scenario::import_warnings(scenario).iter().map(|w| warning(w)).collect(),
        Err(_) => Vec::new(),
    };
    if let Ok((_, bounds)) = &loaded {
        for w in bounds.iter().filter_map(feasible::unreachable_text) {
            let w = warning(&w);
            eprintln!("{}", escape::terminal(&w));
            warnings.push(w);
        }
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
