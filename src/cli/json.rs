//! `--json`: the machine-readable documents of `run`, `check`, `sweep`, `tune`, `verify` and
//! `diff` (schema in docs/json.md). Each command prints exactly one document on stdout, an
//! argument error included.

use std::path::Path;

use serde_json::{Value, json};

use super::Failure;
use brownout::metrics::catalogue::{self, Scope};
use brownout::metrics::summary::ScenarioSummary;
use brownout::report::expect::Checked;
use brownout::scenario::ScenarioError;

/// Version of the documents' layout; raised when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// Print `doc` on stdout as one pretty-printed JSON document.
pub fn print(doc: &Value) {
    // Serializing a `Value` cannot fail.
    println!("{}", serde_json::to_string_pretty(doc).unwrap_or_default());
}

/// The error document of a failure, with the location of a scenario error where there is one.
pub fn error(kind: &str, failure: &Failure, at: Option<&ScenarioError>) -> Value {
    let (file, line, column, message) = match at {
        Some(e) => (
            Some(e.file.display().to_string()),
            (e.line > 0).then_some(e.line),
            (e.col > 0).then_some(e.col),
            e.message.clone(),
        ),
        None => (None, None, None, failure.message.trim_start_matches("error: ").to_string()),
    };
    json!({
        "schema_version": SCHEMA_VERSION,
        "command": kind,
        "ok": false,
        "exit_code": failure.code,
        "error": { "message": message, "file": file, "line": line, "column": column },
    })
}

/// Print the error document of `failure` and hand the failure back (its message still goes
/// to stderr).
pub fn fail(kind: &str, failure: Failure, at: Option<&ScenarioError>) -> Failure {
    print(&error(kind, &failure, at));
    failure
}

/// The error document of an argument error (clap's) under `--json`: `command` is the
/// subcommand named on the command line (`brownout` when there is none), `message` clap's
/// text without its `error: ` prefix.
pub fn argument_error(command: &str, code: u8, message: &str) -> Value {
    let failure = Failure { code, message: message.trim().to_string() };
    error(command, &failure, None)
}

/// The figures of every policy set and class, keyed by catalogue name (null where the run
/// has no such part, e.g. no breaker).
pub fn figures(s: &ScenarioSummary) -> Value {
    let policies: Vec<Value> = s
        .runs
        .iter()
        .map(|r| {
            let run: serde_json::Map<String, Value> =
                catalogue::of(Scope::Run).map(|m| (m.name.to_string(), number(m.read(r, None)))).collect();
            let classes: Vec<Value> = r
                .classes
                .iter()
                .map(|c| {
                    let figures: serde_json::Map<String, Value> =
                        catalogue::of(Scope::Class).map(|m| (m.name.to_string(), number(m.read(r, Some(c))))).collect();
                    json!({ "class": c.class, "figures": figures })
                })
                .collect();
            json!({ "policy": r.policy, "figures": run, "classes": classes })
        })
        .collect();
    Value::Array(policies)
}

/// A figure as a JSON number; null for none or a non-finite value (JSON has no NaN).
pub fn number(v: Option<f64>) -> Value {
    v.filter(|x| x.is_finite()).map_or(Value::Null, Value::from)
}

/// The expectations with their verdicts.
pub fn expectations(checked: &[Checked]) -> Value {
    Value::Array(
        checked
            .iter()
            .map(|c| json!({ "statement": c.statement, "measured": number(Some(c.actual)), "passed": c.passed }))
            .collect(),
    )
}

/// The document of a finished `run`.
pub fn run_doc(s: &ScenarioSummary, out: &Path, checked: &[Checked], exit_code: u8) -> Value {
    let mut doc = json!({
        "schema_version": SCHEMA_VERSION,
        "command": "run",
        "ok": exit_code == 0,
        "exit_code": exit_code,
        "scenario": s.scenario,
        "seed": s.seed,
        "out": out.display().to_string(),
        "measured_s": s.measured_s,
        "policies": figures(s),
        "phases": phases(s),
        "expectations": expectations(checked),
        // As recommendation.json holds it; null without a `decide` section.
        "recommendation": s.decision,
    });
    if let (Some(r), Some(map)) = (&s.replications, doc.as_object_mut()) {
        map.insert("replications".into(), serde_json::to_value(r).unwrap_or(Value::Null));
    }
    doc
}

/// Each phase with the same figures as the whole run.
fn phases(s: &ScenarioSummary) -> Value {
    let one = |p: &brownout::metrics::summary::PhaseSummary| {
        json!({ "name": p.name, "start_s": p.start_s, "end_s": p.end_s, "source": p.source,
                "policies": figures(&s.phase_view(p)) })
    };
    Value::Array(s.phases.iter().map(one).collect())
}
