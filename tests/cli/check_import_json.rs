//! `brownout check --json` on a scenario whose `Import` layer reads an Envoy cluster with
//! `outlier_detection` (which a stack cannot hold): the document's `warnings` hold the same
//! warning that the text form prints, fragment and all.

use std::path::Path;

use crate::common::{brownout, document};

#[test]
fn check_json_carries_the_import_warning_that_the_text_form_prints() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/imports/cluster.yaml");
    std::fs::copy(cluster, dir.path().join("cluster.yaml")).unwrap();
    std::fs::write(
        dir.path().join("s.ron"),
        r#"Scenario(
    name: "imported", seed: 1, horizon: "30s",
    fleet: (instances: 1, workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 20.0), deadline: "5s")],
    dependency: (latency: LogNormal(median: "100ms", sigma: 0.3)),
    policies: [(name: "imported", stack: [(policy: Import((file: "cluster.yaml")))])],
)
"#,
    )
    .unwrap();
    let text = brownout(&["check", "s.ron"], dir.path());
    assert!(text.status.success());
    let printed = String::from_utf8_lossy(&text.stderr).into_owned();
    // The text form's warning (tests/policies/import_outlier.rs checks its wording).
    assert!(printed.starts_with("warning: s.ron: policies[0].stack[0]: cluster.yaml's outlier_detection"), "{printed}");

    let json = brownout(&["check", "s.ron", "--json"], dir.path());
    assert!(json.status.success());
    let doc = document(&json);
    let warnings: Vec<String> =
        doc["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect();
    assert_eq!(warnings.len(), 1, "{doc}");
    assert_eq!(format!("{}\n", warnings[0]), printed);
    // And on stderr once, as without --json.
    assert_eq!(String::from_utf8_lossy(&json.stderr), printed);
}
