//! `brownout import envoy` and `Import(..)` of Envoy cluster and Istio `DestinationRule`
//! files (issues 19 and 32): the samples `scenarios/imports/cluster.yaml` and
//! `destination-rule.yaml` import to RON that `brownout check` accepts, each value as the file
//! and Envoy's and Istio's documented defaults give it (worked out by hand from the samples),
//! the import runs exactly like the thresholds and outlier detection written by hand, and a
//! file with nothing to read is refused where the missing part belongs.

use std::path::Path;

use brownout::import::{Library, import_file, import_text};

use crate::common::import::{
    fields, import_then_check, import_with_binary, refused, sample, scenario_with, summary_of, warned_keys,
};

#[test]
fn envoy_samples_import_to_ron_that_check_accepts() {
    import_then_check("envoy", &sample("cluster.yaml"), None);
    import_then_check("envoy", &sample("destination-rule.yaml"), None);
}

#[test]
fn istio_unset_limits_are_istios_unlimited_default_and_outlier_detection_as_istio_sets_it() {
    let out = import_file(Some(Library::Envoy), &sample("destination-rule.yaml"), None).unwrap();
    assert_eq!(out.instance.as_deref(), Some("inventory"));
    assert_eq!(
        fields(&out, 0),
        [(
            "thresholds",
            "[(priority: Default, max_connections: 100, max_pending_requests: 50, max_requests: 200, max_retries: 3)]"
        )]
    );
    let y = "kind: DestinationRule\nmetadata: {name: r}\nspec:\n  trafficPolicy:\n    connectionPool:\n      http: {maxRetries: 2}\n";
    let out = import_text(Some(Library::Envoy), Path::new("dr.yaml"), y, None).unwrap();
    let max = u32::MAX;
    let want = format!(
        "[(priority: Default, max_connections: {max}, max_pending_requests: {max}, max_requests: {max}, max_retries: 2)]"
    );
    assert_eq!(fields(&out, 0), [("thresholds", want.as_str())]);
    let od = import_file(Some(Library::Envoy), &sample("destination-rule.yaml"), None).unwrap().snippets;
    let od: Vec<(&str, &str)> = od[0].fields.iter().map(|f| (f.name, f.value.as_str())).collect();
    assert_eq!(
        od,
        [
            ("consecutive_5xx", "7"),
            ("enforcing_consecutive_5xx", "100"),
            ("consecutive_gateway_failure", "3"),
            ("enforcing_consecutive_gateway_failure", "100"),
            ("interval", "\"5m\""),
            ("base_ejection_time", "\"15m\""),
            ("max_ejection_percent", "30"),
            ("enforcing_success_rate", "0"),
            ("healthy_panic_threshold", "50"),
        ]
    );
}

/// Istio's `pilot/pkg/networking/core/cluster_traffic_policy.go`, `applyOutlierDetection`:
/// a consecutive count of 0 is written with enforcement 0 (that detector off, and Envoy's
/// `==` test never matches 0), `maxEjectionPercent` is written only when > 0 (so 0 leaves
/// Envoy's default of 10 %), and `minHealthPercent` always becomes the cluster's
/// `healthy_panic_threshold` (0 when unset: panic off).
#[test]
fn istio_outlier_detection_carries_istios_meaning() {
    let y = "kind: DestinationRule\nmetadata: {name: r}\nspec:\n  trafficPolicy:\n    outlierDetection:\n      \
             consecutive5xxErrors: 0\n      consecutiveGatewayErrors: 2\n      maxEjectionPercent: 0\n";
    let out = import_text(Some(Library::Envoy), Path::new("dr.yaml"), y, None).unwrap();
    let od: Vec<(&str, &str)> = out.snippets[0].fields.iter().map(|f| (f.name, f.value.as_str())).collect();
    assert_eq!(
        od,
        [
            ("consecutive_5xx", "0"),
            ("enforcing_consecutive_5xx", "0"),
            ("consecutive_gateway_failure", "2"),
            ("enforcing_consecutive_gateway_failure", "100"),
            ("enforcing_success_rate", "0"),
            ("healthy_panic_threshold", "0"),
        ]
    );
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // What the import prints is what `check` accepts, a 0 count (detector off) included.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("dr.yaml"), y).unwrap();
    import_then_check("envoy", &dir.path().join("dr.yaml"), None);
    // minHealthPercent set: that percentage, and no warning that it is not modelled.
    let y = y.replace("maxEjectionPercent: 0", "minHealthPercent: 25");
    let out = import_text(Some(Library::Envoy), Path::new("dr.yaml"), &y, None).unwrap();
    let last = out.snippets[0].fields.last().unwrap();
    assert_eq!((last.name, last.value.as_str()), ("healthy_panic_threshold", "25"));
    assert!(last.origin.starts_with("dr.yaml:"), "{}", last.origin);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn envoy_cluster_thresholds_durations_and_percent_types() {
    let out = import_file(Some(Library::Envoy), &sample("cluster.yaml"), None).unwrap();
    assert_eq!(
        fields(&out, 0),
        [(
            "thresholds",
            "[(priority: Default, max_connections: 100, max_pending_requests: 50, max_requests: 200, max_retries: 3), \
             (priority: High, max_connections: 200, max_pending_requests: 100, max_requests: 400, max_retries: 5)]"
        )]
    );
    let od: Vec<(&str, &str)> = out.snippets[0].fields.iter().map(|f| (f.name, f.value.as_str())).collect();
    assert!(od.contains(&("base_ejection_time", "\"30s\""))); // {seconds: 30}
    assert!(od.contains(&("max_ejection_percent", "50"))); // {value: 50}
    let keys = warned_keys(&out);
    for k in ["track_remaining", "retry_budget", "max_ejection_time_jitter", "connect_timeout", "load_assignment"] {
        assert!(keys.contains(&k), "no warning for {k}: {keys:?}");
    }
}

/// The Envoy cluster's printed stack and outlier-detection snippet, placed as the output says,
/// run exactly like the thresholds and outlier detection written by hand from cluster.yaml.
#[test]
fn the_envoy_import_runs_like_the_thresholds_and_outlier_detection_written_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let (text, snippet) = import_with_binary("envoy", &sample("cluster.yaml"), None, dir.path());
    assert!(!snippet.is_empty(), "{text}");
    let replicas = |od: &str| format!(", replicas: (count: 4, balancing: RoundRobin, {od})");
    let imported = summary_of(dir.path(), "imported", &scenario_with(&text, &replicas(&snippet.join("\n"))));
    let hand_stack = r#"[(policy: EnvoyThresholds((thresholds: [
        (priority: Default, max_connections: 100, max_pending_requests: 50, max_requests: 200, max_retries: 3),
        (priority: High, max_connections: 200, max_pending_requests: 100, max_requests: 400, max_retries: 5)])))]"#;
    let hand_od = r#"outlier_detection: Some((consecutive_5xx: 5, consecutive_gateway_failure: 3,
        enforcing_consecutive_gateway_failure: 100, interval: "10s", base_ejection_time: "30s",
        max_ejection_time: "300s", max_ejection_percent: 50, success_rate_minimum_hosts: 3,
        success_rate_request_volume: 50, success_rate_stdev_factor: 1900, enforcing_success_rate: 100))"#;
    let hand = summary_of(dir.path(), "by-hand", &scenario_with(hand_stack, &replicas(hand_od)));
    assert_eq!(imported, hand);
}

/// A file that holds nothing the Envoy importer reads (a line of text, a cluster without
/// `circuit_breakers` or `outlier_detection`, a DestinationRule without a traffic policy it
/// reads) is refused where the missing part belongs, never printed as an empty stack.
#[test]
fn an_envoy_import_of_a_file_with_nothing_to_read_is_refused() {
    let e = refused("envoy", "notes.yaml", "just a line of text\n", &[]);
    assert!(e.starts_with("error: notes.yaml:1:1: ") && e.contains("nothing to import"), "{e}");
    let e = refused("envoy", "c.yaml", "name: c\nconnect_timeout: 1s\n", &[]);
    assert!(e.starts_with("error: c.yaml:1:1: ") && e.contains("nothing to import"), "{e}");
    let e = refused("envoy", "dr.yaml", "kind: DestinationRule\nmetadata: {name: r}\nspec:\n  host: r\n", &[]);
    assert!(e.starts_with("error: dr.yaml:3:1: ") && e.contains("nothing to import"), "{e}");
}

/// Envoy `source/common/upstream/upstream_impl.cc`, `ClusterInfoImpl::ResourceManagers::load`:
/// each priority's limits are the FIRST `thresholds` entry with that priority (`std::find_if`;
/// an entry without `priority` is DEFAULT); a later one is never read. The import keeps the
/// first and warns at the later one's `priority`, and `check` accepts what it prints.
#[test]
fn a_duplicate_envoy_priority_keeps_the_first_as_envoy_does() {
    let y = "name: c\ncircuit_breakers:\n  thresholds:\n  - {max_connections: 10}\n  - {priority: DEFAULT, max_connections: 20}\n  - {priority: HIGH, max_retries: 1}\n";
    let out = import_text(Some(Library::Envoy), Path::new("c.yaml"), y, None).unwrap();
    assert_eq!(fields(&out, 0), [("thresholds", "[(max_connections: 10), (priority: High, max_retries: 1)]")]);
    let w = out.warnings.iter().find(|w| w.key == "priority").expect("a warning at the duplicate");
    assert_eq!((w.at.line, w.at.col), (5, 6));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.yaml"), y).unwrap();
    import_then_check("envoy", &dir.path().join("c.yaml"), None);
}
