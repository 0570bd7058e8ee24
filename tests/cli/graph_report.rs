//! The graph drawing of a run with several dependencies (issue 33): `report.md` lists each
//! edge with its figures and the layers scoped to its dependency, `charts/graph.png` and
//! `charts/dependencies.png` are drawn and `report.html` shows both. Expected figures are
//! docs/graphs.md's worked example by hand: inventory (10 ms) and pricing (20 ms) in
//! parallel, then payment (30 ms), no failure; a checkout every 100 ms from 0 to 2 s (21)
//! all done by the 2.09 s horizon; pricing decides the parallel step (20 of 50 ms) and
//! payment its own (30 of 50 ms).

use crate::common::{self, brownout};

/// The worked example (`common::checkout_graph`) to 2.09 s, without and with layers scoped
/// to its edges.
fn graph() -> String {
    common::checkout_graph(
        r#"horizon: "2090ms", warmup: "0s""#,
        r#"
        (name: "direct", stack: []),
        (name: "per-edge", stack: [
            (policy: ConsecutiveBreaker((failures: 5, break_duration: "30s")), dependencies: ["pricing"]),
            (policy: Timeout((timeout: "200ms")), dependencies: ["pricing", "payment"]),
        ]),
    "#,
    )
}

#[test]
fn the_report_draws_each_edge_with_its_layers_and_figures() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("g.ron"), graph()).unwrap();
    let o = brownout(&["run", "g.ron", "--quiet", "--out", "out"], tmp.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    let edges = |policy: &str, pricing: &str, payment: &str| {
        format!(
            "- {policy}:\n  - checkout → inventory: step 0 ∥2: 21 calls, 0 failed, p95 10.0 ms, critical 0.0%\n  \
             - checkout → pricing: step 0 ∥2: 21 calls, 0 failed, p95 20.0 ms, critical 40.0%{pricing}\n  \
             - checkout → payment: step 1: 21 calls, 0 failed, p95 30.0 ms, critical 60.0%{payment}\n"
        )
    };
    assert!(md.contains("The graph over the whole run"), "{md}");
    assert!(md.contains(&edges("direct", "", "")), "{md}");
    assert!(md.contains(&edges("per-edge", " [consecutive-breaker, timeout]", " [timeout]")), "{md}");
    for chart in ["graph", "dependencies"] {
        assert!(tmp.path().join(format!("out/charts/{chart}.png")).is_file(), "{chart}.png");
        assert!(md.contains(&format!("![charts/{chart}.png](charts/{chart}.png)")), "{md}");
    }
    let html = std::fs::read_to_string(tmp.path().join("out/report.html")).unwrap();
    assert!(html.contains("<figure id=\"graph\">"), "the graph is drawn in the page");
    assert!(html.contains("checkout → pricing: step 0 ∥2"), "the edges are listed in the page");
    // The summary carries what the drawing reads: the layers scoped to each dependency.
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("out/summary.json")).unwrap()).unwrap();
    let layers = |run: usize, dep: usize| s["runs"][run]["dependencies"][dep].get("layers").cloned();
    assert_eq!(layers(0, 1), None, "no layer scoped: the field is left out");
    assert_eq!(layers(1, 1), Some(serde_json::json!(["consecutive-breaker", "timeout"])));
    assert_eq!(layers(1, 0), None);
}

#[test]
fn report_md_lists_a_services_calls_after_its_callers() {
    // scenarios/checkout-graph.ron: pricing is a service calling tax; report.md's graph list
    // has the edge pricing → tax for every policy set, with pricing's stack in the set that
    // gives it one, beside checkout's edges.
    let tmp = tempfile::tempdir().unwrap();
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/checkout-graph.ron");
    std::fs::copy(base, tmp.path().join("g.ron")).unwrap();
    let o = brownout(&["run", "g.ron", "--quiet", "--out", "out"], tmp.path());
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    let edges: Vec<&str> = md.lines().filter(|l| l.trim_start().starts_with("- pricing → tax")).collect();
    assert_eq!(edges.len(), 4, "one per policy set:\n{md}");
    assert!(md.contains("- checkout → pricing"), "{md}");
}
