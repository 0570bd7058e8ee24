//! `brownout diff` over the per-dependency figures of a service graph (issue 33): two runs of
//! scenarios/checkout-flat.ron that differ only in the pricing timeout (400 ms in A, 50 ms in
//! B). Each changed figure keyed `dependencies[NAME]` is the two runs' `summary.json` values
//! of that dependency (read here independently), pricing's abandoned attempts are among them
//! (a 50 ms timeout cuts about 10 % of pricing's calls outside its brownout, nearly all
//! inside), inventory's figures do not change (common random numbers: pricing is optional,
//! so a cut pricing call cancels nothing, and inventory is called at arrival), payment's
//! calls and latencies do not either (its draws are its own; only when it is called moves,
//! and with it how many of its calls overlap: its in-flight figures), and a guard on
//! `dependencies[pricing]/abandoned` fails the diff.

use crate::common;

use std::path::Path;

use serde_json::Value;

use common::{brownout, document};

fn summary(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

/// Dependency `name`'s figure at `field` (dotted) in policy set `policy`'s run.
fn figure(s: &Value, policy: &str, name: &str, field: &str) -> f64 {
    let run = s["runs"].as_array().unwrap().iter().find(|r| r["policy"] == policy).unwrap();
    let d = run["dependencies"].as_array().unwrap().iter().find(|d| d["name"] == name).unwrap();
    field.split('.').fold(d, |v, k| &v[k]).as_f64().unwrap()
}

#[test]
fn diff_compares_each_dependency_of_a_graph() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/checkout-flat.ron")).unwrap();
    let timeout = "(policy: Timeout((timeout: \"100ms\")), dependencies: [\"pricing\"])";
    assert_eq!(text.matches(timeout).count(), 1, "checkout-flat's pricing timeout moved");
    std::fs::write(root.join("a.ron"), text.replace(timeout, &timeout.replace("100ms", "400ms"))).unwrap();
    std::fs::write(root.join("b.ron"), text.replace(timeout, &timeout.replace("100ms", "50ms"))).unwrap();
    for (file, out) in [("a.ron", "a"), ("b.ron", "b")] {
        let o = brownout(&["run", file, "--out", out, "--no-charts", "--quiet"], root);
        // Exit 1 is a failed expectation (400 ms lets checkouts go late): written all the same.
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = brownout(&["diff", "a", "b", "--json"], root);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&o);
    let (sa, sb) = (summary(&root.join("a")), summary(&root.join("b")));
    let changes = doc["changes"].as_array().unwrap();
    let per_dependency: Vec<&Value> =
        changes.iter().filter(|c| c["class"].as_str().is_some_and(|k| k.starts_with("dependencies["))).collect();
    let mut abandoned = false;
    for c in &per_dependency {
        assert_eq!(c["policy"], "pricing-timeout", "{c}");
        let in_flight = ["peak_in_flight", "mean_in_flight"].contains(&c["metric"].as_str().unwrap());
        match c["class"].as_str().unwrap() {
            "dependencies[pricing]" => {}
            "dependencies[payment]" => assert!(in_flight, "payment's draws moved: {c}"),
            _ => panic!("inventory ran as before: {c}"),
        }
        if c["class"] != "dependencies[pricing]" {
            continue;
        }
        if c["phase"].is_null() {
            let field = brownout::metrics::catalogue::DEPENDENCY_METRICS
                .iter()
                .find(|m| m.name == c["metric"].as_str().unwrap())
                .unwrap()
                .field;
            assert_eq!(c["a"].as_f64().unwrap(), figure(&sa, "pricing-timeout", "pricing", field), "{c}");
            assert_eq!(c["b"].as_f64().unwrap(), figure(&sb, "pricing-timeout", "pricing", field), "{c}");
            abandoned |= c["metric"] == "abandoned";
        }
    }
    assert!(abandoned, "pricing's abandoned attempts did not change: {per_dependency:?}");
    assert!(
        figure(&sb, "pricing-timeout", "pricing", "abandoned") > figure(&sa, "pricing-timeout", "pricing", "abandoned")
    );
    let guard = brownout(&["diff", "a", "b", "--fail-on-regression", "dependencies[pricing]/abandoned"], root);
    assert_eq!(guard.status.code(), Some(1), "{}", String::from_utf8_lossy(&guard.stderr));
    let guard = brownout(&["diff", "a", "b", "--fail-on-regression", "dependencies[inventory]/abandoned"], root);
    assert_eq!(guard.status.code(), Some(0), "{}", String::from_utf8_lossy(&guard.stderr));
}
