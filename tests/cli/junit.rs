//! `run --junit FILE` (issue 20): each expectation is a `<testcase>` (classname
//! `scenario/policy set`, name the expectation's text), each failed one carries a `<failure>`;
//! the file is read back here with an XML parser independent of the writer.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

#[test]
fn junit_has_a_testcase_per_expectation_and_a_failure_per_failed_one() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/r02-baseline.ron")).unwrap();
    // The scenario's three expectations hold (its comments derive them: 2 ok, 1 error, 755 ms);
    // two more fail by construction (ok is 2, not 3; there are 3 requests, not more than 5),
    // one with a name that needs escaping in XML.
    let text = text.replace(
        "expect: [",
        r#"expect: [
        (policy: "direct", class: "api", metric: "ok", op: Eq, value: 3),
        (policy: "direct", class: "api", metric: "requests", op: Gt, value: 5),"#,
    );
    let text = text.replace(r#"(name: "direct", stack: [])"#, r#"(name: "direct<&\"", stack: [])"#);
    let text = text.replace(r#"policy: "direct","#, r#"policy: "direct<&\"","#);
    std::fs::write(dir.path().join("s.ron"), text).unwrap();
    let o = Command::new(BIN)
        .args(["run", "s.ron", "--out", "out", "--no-charts", "--junit", "report/junit.xml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let xml = std::fs::read_to_string(dir.path().join("report/junit.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!((root.attribute("tests"), root.attribute("failures")), (Some("5"), Some("2")));
    let suite = root.children().find(|n| n.has_tag_name("testsuite")).unwrap();
    assert_eq!(suite.attribute("name"), Some("r02-baseline"));
    assert_eq!((suite.attribute("tests"), suite.attribute("failures")), (Some("5"), Some("2")));
    let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), 5);
    for c in &cases {
        assert_eq!(c.attribute("classname"), Some("r02-baseline/direct<&\""));
    }
    let failed: Vec<&str> = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .map(|c| c.attribute("name").unwrap())
        .collect();
    assert_eq!(failed, [r#"direct<&"/api ok == 3"#, r#"direct<&"/api requests > 5"#]);
    let failure = cases[0].children().find(|n| n.has_tag_name("failure")).unwrap();
    assert!(failure.attribute("message").unwrap().contains("measured 2"), "{xml}");
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("report")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["junit.xml"]);
}
