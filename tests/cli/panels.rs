//! Issue 18, "the run report recommends" and "best per metric": panels and columns that say
//! nothing for a scenario are left out, charts of a constrained metric draw the target, and
//! `recommendation.json` writes figures it lacks as `null` and reads them back.

use crate::common;

use common::brownout;

/// A request every 100 ms (60 in all) to a dependency that always takes 10 ms, 1 s deadline:
/// every request is in time. No fallback, no catalogue, no business section, no breaker, no
/// limiter. `decide` asks for 99 % in time during the `brownout` phase.
fn plain(replications: u32) -> String {
    let times: Vec<String> = (0..60).map(|k| format!("\"{}ms\"", 50 + 100 * k)).collect();
    format!(
        r#"Scenario(
    name: "plain", horizon: "7s", replications: {replications},
    fleet: (instances: 1, workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "1s")],
    dependency: (latency: Constant("10ms")),
    policies: [(name: "direct", stack: []), (name: "tight", stack: [(policy: Timeout((timeout: "5ms")))])],
    phases: [(name: "brownout", start: "2s", end: "4s")],
    decide: (minimize: "api/p95_ms", subject_to: [
        (class: "api", metric: "in_time_ratio", phase: "brownout", op: Ge, value: 0.99),
    ]),
)"#,
        times.join(", ")
    )
}

/// One replication estimates no bound: `recommendation.json` says so with `null` (JSON has no
/// NaN), and the file reads back into the type that wrote it.
#[test]
fn a_one_replication_recommendation_has_null_bounds_and_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("s.ron"), plain(1)).unwrap();
    let o = brownout(&["run", "s.ron", "--out", "out"], tmp.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(tmp.path().join("out/recommendation.json")).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
    let c = &json["constraints"][0];
    assert_eq!((c["n"].as_u64(), c["untested"].as_bool()), (Some(1), Some(true)));
    // `direct` answers all 20 requests of the phase in time: mean 1, no bound from one value.
    assert_eq!(c["mean"].as_f64(), Some(1.0));
    assert!(c["lo"].is_null() && c["hi"].is_null(), "{c}");
    let objective = &json["recommended"]["objective"];
    assert!(objective["lo"].is_null() && objective["hi"].is_null(), "{objective}");
    let back: brownout::decide::recommendation::Recommendation =
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("reads back: {e}"));
    assert_eq!(back.constraints[0].mean, 1.0);
    assert_eq!(back.recommended.as_ref().map(|r| r.policy.as_str()), Some("direct"));
}

/// The table header with every catalogue column except those of the metrics `absent`, in the
/// table's order: so a column added to the catalogue breaks no expectation here, and each test
/// states only which columns a class must leave out.
fn header_without(absent: &[&str]) -> String {
    let titles: Vec<&str> = brownout::metrics::catalogue::table_columns()
        .into_iter()
        .filter(|(m, _)| !absent.contains(&m.name))
        .map(|(_, c)| c.title)
        .collect();
    for name in absent {
        assert!(
            brownout::metrics::catalogue::CATALOGUE.iter().any(|m| m.name == *name && m.column.is_some()),
            "{name}"
        );
    }
    format!("| policy | {} |", titles.join(" | "))
}

/// The table header of the first class in a report's comparison.
fn header(report: &str, class: &str) -> String {
    let at = report.find(&format!("### {class}\n")).unwrap_or_else(|| panic!("no table for {class}"));
    report[at..].lines().find(|l| l.starts_with("| policy")).unwrap().to_string()
}

/// A scenario without a fallback, a catalogue, a business section, a breaker or a moving
/// limit: its report has no such column and its charts no such panel.
#[test]
fn a_scenario_without_fallback_cache_cost_or_breaker_leaves_them_out() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("s.ron"), plain(1)).unwrap();
    let o = brownout(&["run", "s.ron", "--out", "out"], tmp.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    assert_eq!(
        header(&report, "api"),
        header_without(&[
            "fallback_ratio",
            "staleness_p95_ms",
            "business_cost",
            "transitions",
            "recovery_s",
            "backlog_queued"
        ])
    );
    assert!(!report.contains("answered by a fallback") && !report.contains("business cost"), "{report}");
    let terminal = String::from_utf8_lossy(&o.stdout);
    assert!(!terminal.contains("fallback") && !terminal.contains("transitions"), "{terminal}");
    let charts = tmp.path().join("out/charts");
    for absent in ["staleness", "breaker", "limit"] {
        assert!(!charts.join(format!("{absent}.svg")).exists(), "{absent} chart drawn");
    }
    let goodput = std::fs::read_to_string(charts.join("goodput_api.svg")).unwrap();
    assert!(!goodput.contains("Fallbacks served"), "an empty fallback panel");
    let compare = std::fs::read_to_string(charts.join("compare_api.svg")).unwrap();
    assert!(!compare.contains("Served from the cache") && !compare.contains("Business cost"));
    assert!(!compare.contains("Staleness"));
}

/// grocery (scenarios/grocery.ron): checkout has no fallback but orders (order_fraction 1)
/// under a business section; browse and search fall back to the catalogue; account has no
/// fallback and no orders; three policy sets have breakers. So checkout keeps cost, browse all
/// columns, account neither fallback nor cost; every class keeps transitions. The whole run
/// follows no phase and leaves no queue, so none has the recovery or queued-at-end column.
#[test]
fn grocery_keeps_the_columns_its_classes_have() {
    let report =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/golden/grocery/report.md")).unwrap();
    let whole = ["recovery_s", "backlog_queued"];
    assert_eq!(header(&report, "browse"), header_without(&whole));
    assert_eq!(header(&report, "search"), header_without(&whole));
    assert_eq!(
        header(&report, "checkout"),
        header_without(&[&whole[..], &["fallback_ratio", "staleness_p95_ms"]].concat())
    );
    let account = [&whole[..], &["fallback_ratio", "staleness_p95_ms", "business_cost"]].concat();
    assert_eq!(header(&report, "account"), header_without(&account));
}
