//! Issue 33: with several dependencies, the terminal output, `report.md` and `report.html`
//! add a per-dependency table, the causes by dependency and each call's share of the
//! critical path; with one dependency they add nothing.

use crate::common;

use common::brownout;

/// docs/graphs.md's worked example (`common::checkout_graph`) over 7 s, no policy.
fn graph() -> String {
    common::checkout_graph(r#"horizon: "7s""#, r#"(name: "direct", stack: [])"#)
}

#[test]
fn several_dependencies_get_their_table_and_one_gets_none() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("g.ron"), graph()).unwrap();
    let o = brownout(&["run", "g.ron", "--out", "out"], tmp.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("== dependencies =="), "{out}");
    // Pricing ends the parallel step (20 of 50 ms), payment its own (30 of 50 ms).
    assert!(
        out.contains("critical path of checkout / direct: 0: inventory 0.0%, 0: pricing 40.0%, 1: payment 60.0%"),
        "{out}"
    );
    let md = std::fs::read_to_string(tmp.path().join("out/report.md")).unwrap();
    assert!(md.contains("## Dependencies"), "{md}");
    assert!(md.contains("| direct | pricing |"), "{md}");
    let html = std::fs::read_to_string(tmp.path().join("out/report.html")).unwrap();
    assert!(html.contains("<h2>Dependencies</h2>"));
    // The one-dependency form: none of it.
    let one = graph()
        .replace("calls: [Parallel(calls: [Call(\"inventory\"), Call(\"pricing\")]), Call(\"payment\")]", "")
        .replace(
            "dependencies: [\n        (name: \"inventory\", latency: Constant(\"10ms\")),\n        (name: \"pricing\", latency: Constant(\"20ms\")),\n        (name: \"payment\", latency: Constant(\"30ms\")),\n    ],",
            "dependency: (latency: Constant(\"10ms\")),",
        );
    assert!(one.contains("dependency: (") && !one.contains("Call("), "{one}");
    std::fs::write(tmp.path().join("one.ron"), &one).unwrap();
    let o = brownout(&["run", "one.ron", "--out", "out1"], tmp.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("== dependencies =="));
    let md = std::fs::read_to_string(tmp.path().join("out1/report.md")).unwrap();
    assert!(!md.contains("## Dependencies"));
    let json = std::fs::read_to_string(tmp.path().join("out1/summary.json")).unwrap();
    assert!(!json.contains("causes_by_dependency") && !json.contains("\"dependencies\""));
}
