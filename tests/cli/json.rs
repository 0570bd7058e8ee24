//! `--json` (issue 20): `run --json` prints one JSON document whose figures are the run
//! folder's `summary.json` values; `check --json` on a bad file prints an error object with
//! file, line and column, exit 2; `sweep` and `verify` print one document too.

use crate::common;

use std::path::Path;

use serde_json::Value;

use common::{brownout, document};

fn scenario_path(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(name).display().to_string()
}

/// The value at a dotted path of `summary.json` (`latency_ms.p95`).
fn at<'v>(v: &'v Value, path: &str) -> &'v Value {
    path.split('.').fold(v, |v, k| &v[k])
}

#[test]
fn run_json_holds_the_figures_of_summary_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = brownout(
        &["run", &scenario_path("limiters-demo.ron"), "--out", out.to_str().unwrap(), "--no-charts", "--json"],
        dir.path(),
    );
    let doc = document(&o);
    assert_eq!(o.status.code(), Some(doc["exit_code"].as_u64().unwrap() as i32));
    assert_eq!(doc["command"], "run");
    assert_eq!(doc["scenario"], "limiters-demo");
    assert_eq!(doc["seed"], 7, "the scenario's seed");
    assert_eq!(doc["out"], out.display().to_string());
    let summary: Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let runs = summary["runs"].as_array().unwrap();
    let policies = doc["policies"].as_array().unwrap();
    assert_eq!(policies.len(), runs.len());
    // Catalogue names against summary.json's own fields, spelled out here.
    let class_fields = [
        ("requests", "requests"),
        ("ok", "outcomes.ok"),
        ("fallback", "outcomes.fallback"),
        ("p95_ms", "latency_ms.p95"),
        ("p99_ms", "latency_ms.p99"),
        ("goodput_per_s", "goodput_per_s"),
        ("ok_ratio", "ok_ratio"),
        ("business_cost", "business_cost"),
    ];
    let run_fields =
        [("dependency_calls", "dependency.calls"), ("amplification", "amplification"), ("events", "events")];
    let mut compared = 0;
    for (p, r) in policies.iter().zip(runs) {
        assert_eq!(p["policy"], r["policy"]);
        for (name, field) in run_fields {
            assert_eq!(p["figures"][name].as_f64(), at(r, field).as_f64(), "{} {name}", r["policy"]);
            compared += 1;
        }
        let classes = p["classes"].as_array().unwrap();
        assert_eq!(classes.len(), r["classes"].as_array().unwrap().len());
        for (c, rc) in classes.iter().zip(r["classes"].as_array().unwrap()) {
            assert_eq!(c["class"], rc["class"]);
            for (name, field) in class_fields {
                let want = at(rc, field).as_f64().unwrap();
                assert_eq!(c["figures"][name].as_f64(), Some(want), "{} {} {name}", r["policy"], rc["class"]);
                compared += 1;
            }
        }
    }
    assert!(compared > 50, "compared only {compared} figures");
    // Nothing but the document on stdout: the tables are not printed.
    let expectations = doc["expectations"].as_array().unwrap();
    for e in expectations {
        assert!(e["statement"].is_string() && e["passed"].is_boolean());
    }
    assert_eq!(doc["ok"], expectations.iter().all(|e| e["passed"] == true));
}

#[test]
fn run_json_reports_a_failed_expectation_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(scenario_path("r02-baseline.ron")).unwrap();
    // Three requests, one of them during the outage: ok is 2 (the scenario's own expectation), never 3.
    let text = text.replace(
        "expect: [",
        "expect: [\n        (policy: \"direct\", class: \"api\", metric: \"ok\", op: Eq, value: 3),",
    );
    std::fs::write(dir.path().join("s.ron"), text).unwrap();
    let o = brownout(&["run", "s.ron", "--out", "out", "--no-charts", "--json"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let doc = document(&o);
    assert_eq!((doc["ok"].clone(), doc["exit_code"].clone()), (Value::Bool(false), Value::from(1)));
    let passed: Vec<bool> = doc["expectations"].as_array().unwrap().iter().map(|e| e["passed"] == true).collect();
    assert_eq!(passed, [false, true, true, true]);
    assert_eq!(doc["expectations"][0]["measured"], 2.0);
}

#[test]
fn check_json_on_a_bad_file_gives_a_located_error_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(scenario_path("r02-baseline.ron")).unwrap();
    // An unknown field where the file says `slots`: the line and column are where `slotz` is.
    let bad = text.replace("workers: (slots: 100)", "workers: (slotz: 100)");
    std::fs::write(dir.path().join("bad.ron"), &bad).unwrap();
    let (line, col) = bad.lines().enumerate().find_map(|(i, l)| l.find("slotz").map(|c| (i + 1, c + 1))).unwrap();
    let o = brownout(&["check", "bad.ron", "--json"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let doc = document(&o);
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["exit_code"], 2);
    assert_eq!(doc["error"]["file"], "bad.ron");
    assert_eq!(doc["error"]["line"], line);
    // The parser points at the unknown field's name or just past it.
    let column = doc["error"]["column"].as_u64().unwrap() as usize;
    assert!((col..=col + "slotz".len()).contains(&column), "column {column}, slotz at {col}");
    // The same place the human message names.
    let human = brownout(&["check", "bad.ron"], dir.path());
    assert!(String::from_utf8_lossy(&human.stderr).contains(&format!("bad.ron:{line}:{column}:")));
    assert!(doc["error"]["message"].as_str().unwrap().contains("slotz"), "{doc}");
    // A good file: ok, with its counts.
    let o = brownout(&["check", &scenario_path("r02-baseline.ron"), "--json"], dir.path());
    assert_eq!(o.status.code(), Some(0));
    let doc = document(&o);
    assert_eq!((doc["ok"].clone(), doc["classes"].clone(), doc["policies"].clone()), (true.into(), 1.into(), 1.into()));
}

#[test]
fn run_json_on_a_missing_file_is_an_error_document() {
    let dir = tempfile::tempdir().unwrap();
    let o = brownout(&["run", "nowhere.ron", "--json"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let doc = document(&o);
    assert_eq!((doc["command"].clone(), doc["exit_code"].clone()), ("run".into(), 2.into()));
    assert_eq!(doc["error"]["file"], "nowhere.ron");
    assert!(!dir.path().join("output").exists(), "nothing written");
}

#[test]
fn sweep_json_lists_the_files_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(root.join("scenarios/r02-baseline.ron"), dir.path().join("base.ron")).unwrap();
    let spec = r#"SweepSpec(name: "tiny", base: "base.ron", replications: 2, metrics: ["api/max_ms"],
        axes: [(name: "overhead", path: "fleet.overhead", values: ["5ms", "10ms"])])"#;
    std::fs::write(dir.path().join("spec.ron"), spec).unwrap();
    let o = brownout(&["sweep", "spec.ron", "--out", "out", "--json", "-j", "1"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&o);
    assert_eq!(doc["sweep"], "tiny");
    assert_eq!(doc["runs"]["planned"], 4, "2 points x 1 policy x 2 replications");
    let files: Vec<&str> = doc["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(files.iter().any(|f| f.ends_with("sweep.json")), "{files:?}");
    for f in files {
        assert!(dir.path().join(f).exists() || Path::new(f).exists(), "{f} listed but missing");
    }
}
