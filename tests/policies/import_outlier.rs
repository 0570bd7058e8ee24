//! An `Import` layer of an Envoy cluster with `outlier_detection` (issue 35): the layer gives
//! the cluster's circuit-breaker thresholds, and the outlier detection, which a stack cannot
//! hold, is a warning that prints the fragment to set under the dependency's `replicas:`
//! (gone once it is set there); a cluster with nothing but outlier detection is refused with
//! that fragment. `brownout import envoy` prints both parts.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::brownout;

fn cluster() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/imports/cluster.yaml")
}

/// A scenario whose one policy set imports `cluster.yaml`, with `replicas` (dependency field
/// text, may be empty).
fn scenario(replicas: &str) -> String {
    format!(
        r#"Scenario(
    name: "imported", seed: 1, horizon: "30s",
    fleet: (instances: 1, workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 20.0), deadline: "5s")],
    dependency: (latency: LogNormal(median: "100ms", sigma: 0.3){replicas}),
    policies: [(name: "imported", stack: [(policy: Import((file: "cluster.yaml")))])],
)
"#
    )
}

fn check(dir: &Path, text: &str) -> (Output, String) {
    std::fs::write(dir.join("s.ron"), text).unwrap();
    let o = brownout(&["check", "s.ron"], dir);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    (o, err)
}

/// The fragment the warning prints: its lines after the one that says where it goes.
fn fragment(err: &str) -> String {
    err.lines().skip_while(|l| !l.trim_start().starts_with("outlier_detection: Some((")).collect::<Vec<_>>().join("\n")
}

#[test]
fn an_import_layer_of_a_cluster_with_outlier_detection_warns_with_the_fragment_to_set() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(cluster(), dir.path().join("cluster.yaml")).unwrap();
    let (o, err) = check(dir.path(), &scenario(""));
    assert!(o.status.success(), "the thresholds import as a layer: {err}");
    assert!(
        err.contains(
            "warning: s.ron: policies[0].stack[0]: cluster.yaml's outlier_detection is not a stack layer: \
             set it under the dependency's `replicas:` (outlier detection ejects replicas):"
        ),
        "{err}"
    );
    // The values of cluster.yaml's outlier_detection (from line 24), each citing its line.
    let frag = fragment(&err);
    for want in [
        "consecutive_5xx: 5, // cluster.yaml:25 consecutive_5xx",
        "consecutive_gateway_failure: 3, // cluster.yaml:26 consecutive_gateway_failure",
        "base_ejection_time: \"30s\", // cluster.yaml:29 base_ejection_time",
        "max_ejection_percent: 50, // cluster.yaml:31 max_ejection_percent",
    ] {
        assert!(frag.contains(want), "no {want:?} in\n{frag}");
    }
    // Set where it says, the warning is gone and the scenario checks.
    let replicas = format!(", replicas: (count: 4, balancing: RoundRobin, {frag})");
    let (o, err) = check(dir.path(), &scenario(&replicas));
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn an_import_layer_of_outlier_detection_alone_is_refused_with_the_fragment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cluster.yaml"), "name: c\noutlier_detection:\n  consecutive_5xx: 7\n").unwrap();
    let (o, err) = check(dir.path(), &scenario(""));
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cluster.yaml gives no stack layer, only outlier_detection"), "{err}");
    assert!(fragment(&err).contains("consecutive_5xx: 7, // cluster.yaml:3 consecutive_5xx"), "{err}");
}
