//! `brownout check`: validate a scenario without running it.

use std::path::Path;

use serde_json::json;

use super::{Failure, json, run};
use brownout::report::escape;

/// Load and validate `scenario`; print `ok` (or with `--json`, a document) or fail with exit 2.
pub fn check(scenario: &Path, as_json: bool) -> Result<(), Failure> {
    match run::load_scenario(scenario) {
        Ok(s) if as_json => {
            json::print(&json!({
                "schema_version": json::SCHEMA_VERSION,
                "command": "check",
                "ok": true,
                "exit_code": 0,
                "file": scenario.display().to_string(),
                "scenario": s.name,
                "classes": s.classes.len(),
                "policies": s.policies.len(),
            }));
            Ok(())
        }
        Ok(s) => {
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
