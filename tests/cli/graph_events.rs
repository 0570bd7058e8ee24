//! The event log names the dependencies of a layer scoped to them (issue 33, docs/events.md):
//! a `dependencies` field in the JSONL line and the dependency after the layer's kind in
//! `report.md`; a layer of every call writes neither, so one-dependency logs keep their bytes.

use std::path::Path;

use serde_json::Value;

use crate::common::brownout;

/// Pricing always fails after 20 ms, inventory answers in 10 ms; checkouts every 100 ms. The
/// layer `layer` is the stack.
fn graph(layer: &str) -> String {
    format!(
        r#"Scenario(
    name: "graph-events", horizon: "2090ms", warmup: "0s", seed: 3,
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "10s")),
    classes: [(name: "checkout", arrivals: Periodic(rate_per_s: 10), deadline: "1s",
        calls: [Optional(dependency: "pricing"), Call("inventory")])],
    dependencies: [
        (name: "pricing", latency: Constant("20ms"), error_rate: Constant(1.0)),
        (name: "inventory", latency: Constant("10ms")),
    ],
    policies: [(name: "p", stack: [{layer}])],
)"#
    )
}

/// Run the scenario `text` with `--events`: its lines and `report.md`.
fn run(text: &str, dir: &Path) -> (Vec<Value>, String) {
    let file = dir.join("s.ron");
    std::fs::write(&file, text).unwrap();
    let (out, ev) = (dir.join("out"), dir.join("events.jsonl"));
    let args = ["run", file.to_str().unwrap(), "--quiet", "--no-charts", "--out", out.to_str().unwrap()];
    let o = brownout(&[&args[..], &["--events", ev.to_str().unwrap()]].concat(), dir);
    assert_eq!(o.status.code(), Some(0), "run failed: {}", String::from_utf8_lossy(&o.stderr));
    let lines =
        std::fs::read_to_string(&ev).unwrap().lines().map(|l| serde_json::from_str(l).expect("one object")).collect();
    (lines, std::fs::read_to_string(out.join("report.md")).unwrap())
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn a_breaker_scoped_to_pricing_is_logged_with_its_dependency() {
    let dir = tempfile::tempdir().unwrap();
    let scoped = r#"(policy: ConsecutiveBreaker((failures: 5, break_duration: "100s")), dependencies: ["pricing"])"#;
    let (lines, report) = run(&graph(scoped), dir.path());
    // The fifth pricing failure in a row (the checkout at 400 ms, failing at 420 ms) opens
    // it; its 100 s break outlasts the run: one transition.
    assert_eq!(lines.len(), 1, "{lines:?}");
    let l = &lines[0];
    assert_eq!((l["from"].as_str(), l["to"].as_str()), (Some("closed"), Some("open")), "{l}");
    assert_eq!(l["dependencies"], serde_json::json!(["pricing"]), "{l}");
    assert!(l.get("service").is_none(), "the gateway's own stack names no service: {l}");
    // Markdown shows the brackets escaped: `[pricing]` when rendered.
    assert!(report.contains(r"| 0 #0 consecutive-breaker \[pricing\] |"), "{report}");
}

#[test]
fn a_layer_of_every_call_writes_no_dependency() {
    // The same breaker unscoped on a scenario whose pricing alone is called: it opens on
    // pricing's fifth failure, and its line has the fields of a one-dependency log only.
    let dir = tempfile::tempdir().unwrap();
    let text = graph(r#"(policy: ConsecutiveBreaker((failures: 5, break_duration: "100s")))"#)
        .replace(
            r#"calls: [Optional(dependency: "pricing"), Call("inventory")]"#,
            r#"calls: [Optional(dependency: "pricing")]"#,
        )
        .replace("\n        (name: \"inventory\", latency: Constant(\"10ms\")),", "");
    let (lines, report) = run(&text, dir.path());
    assert_eq!(lines.len(), 1, "{lines:?}");
    let want = ["fleet", "from", "instance", "kind", "layer", "policy", "reason", "t_s", "to", "what"];
    let mut got = keys(&lines[0]);
    got.sort_unstable();
    assert_eq!(got, want);
    assert!(report.contains("| 0 #0 consecutive-breaker |"), "{report}");
}
