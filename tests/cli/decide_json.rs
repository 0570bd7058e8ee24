//! Issue 31, "`--json` carries the decision": the `run`, `sweep` and `tune` documents hold
//! the recommendation as `recommendation.json` does, the human text still goes to stderr, and
//! an argument error under `--json` (clap's: an unknown flag, a missing argument) prints one
//! JSON error document on stdout with exit code 2 (docs/json.md).

use crate::common;

use std::path::{Path, PathBuf};

use common::{brownout, document};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// 20 requests, one every 100 ms, to a dependency that always takes 10 ms (deadline 1 s):
/// `direct` answers every one in time, `tight` times out every call at 5 ms. Maximise the
/// in-time ratio: `direct` is the choice, exactly.
const SCENARIO: &str = r#"Scenario(
    name: "json-decide", horizon: "3s",
    fleet: (instances: 1, workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: ["50ms", "150ms", "250ms", "350ms", "450ms",
        "550ms", "650ms", "750ms", "850ms", "950ms", "1050ms", "1150ms", "1250ms", "1350ms",
        "1450ms", "1550ms", "1650ms", "1750ms", "1850ms", "1950ms"]), deadline: "1s")],
    dependency: (latency: Constant("10ms")),
    policies: [
        (name: "tight", stack: [(policy: Timeout((timeout: "5ms")))]),
        (name: "direct", stack: []),
    ],
    decide: (maximize: "api/in_time_ratio", subject_to: []),
)"#;

#[test]
fn run_json_carries_the_recommendation_and_the_table_goes_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.ron"), SCENARIO).unwrap();
    let o = brownout(&["run", "s.ron", "--json", "-q", "--out", "out"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&o);
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/recommendation.json")).unwrap()).unwrap();
    assert_eq!(doc["recommendation"], file, "the document's recommendation is the file's");
    assert_eq!(doc["recommendation"]["recommended"]["policy"], "direct");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("== Recommendation ==") && err.contains("Recommended: direct"), "{err}");
}

#[test]
fn sweep_json_carries_the_recommendation() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("scenarios/sweeps/payments-share.ron")).unwrap();
    let base = repo("scenarios/payments-share.ron");
    let text = text
        .replace("\"../payments-share.ron\"", &format!("{:?}", base.to_str().unwrap()))
        .replace("values: [0.5, 0.6, 0.7, 0.8, 0.9]", "values: [0.5, 0.9]")
        .replace("replications: 5", "replications: 2");
    std::fs::write(dir.path().join("spec.ron"), text).unwrap();
    let o = brownout(&["sweep", "spec.ron", "--json", "-q", "-j", "2", "--out", "out"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&o);
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/recommendation.json")).unwrap()).unwrap();
    assert_eq!(doc["recommendation"]["recommended"], file["recommended"], "{doc}");
    assert_eq!(doc["recommendation"]["source"], "sweep");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("recommended (minimize authorize_share)"), "{err}");
}

/// `args` under `--json` is refused by the argument parser: one error document, exit 2.
fn argument_error(args: &[&str], command: &str, says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let o = brownout(args, dir.path());
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&o);
    assert_eq!(doc["ok"], false, "{doc}");
    assert_eq!(doc["exit_code"], 2, "{doc}");
    assert_eq!(doc["command"], command, "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains(says), "{args:?}: {message}");
    assert!(!String::from_utf8_lossy(&o.stderr).is_empty(), "clap's message still goes to stderr");
}

#[test]
fn argument_errors_under_json_print_one_error_document() {
    argument_error(&["run", "--json", "--bogus", "s.ron"], "run", "--bogus");
    argument_error(&["run", "--json"], "run", "required");
    argument_error(&["sweep", "spec.ron", "--json", "--replications", "x"], "sweep", "--replications");
    argument_error(&["check", "--json"], "check", "required");
    argument_error(&["nosuchcommand", "--json"], "brownout", "nosuchcommand");
    // Help is not an error: it prints as always.
    let o = brownout(&["run", "--json", "--help"], Path::new("."));
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Usage"));
}
