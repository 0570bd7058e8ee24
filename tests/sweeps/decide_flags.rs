//! Issue 31, "recommendations at the edge of the range": a sweep whose recommended value is
//! the last of its axis's values, or whose constraint every setting meets, says so in the
//! terminal, in `recommendation.json` (`flags`) and in `report.html`: widen the range.

use crate::common;

use std::path::{Path, PathBuf};

use common::brownout;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The payments share sweep with authorize's share `values` and the in-time target `target`,
/// two replications; returns (stdout, recommendation.json, report.html).
fn sweep(values: &str, target: &str) -> (String, serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("scenarios/sweeps/payments-share.ron")).unwrap();
    let base = repo("scenarios/payments-share.ron");
    let text = text
        .replace("\"../payments-share.ron\"", &format!("{:?}", base.to_str().unwrap()))
        .replace("values: [0.5, 0.6, 0.7, 0.8, 0.9]", &format!("values: {values}"))
        .replace("op: Ge, value: 0.99", &format!("op: Ge, value: {target}"))
        .replace("replications: 5", "replications: 2");
    std::fs::write(dir.path().join("spec.ron"), text).unwrap();
    let o = brownout(&["sweep", "spec.ron", "-q", "-j", "2", "--out", "out"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let rec = serde_json::from_slice(&std::fs::read(dir.path().join("out/recommendation.json")).unwrap()).unwrap();
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    (String::from_utf8(o.stdout).unwrap(), rec, html)
}

#[test]
fn a_recommendation_at_the_edge_of_the_range_is_flagged() {
    // Authorize needs most of the bulkhead through the brownout: of 0.5 and 0.9 only 0.9
    // holds 99 % (tests/sweeps/decide_sweep.rs recomputes which shares hold), the range's top.
    let (out, rec, html) = sweep("[0.5, 0.9]", "0.99");
    assert_eq!(rec["recommended"]["setting"]["authorize_share"], 0.9, "{rec}");
    let want = "the recommended value authorize_share = 0.9 is at the edge of the range [0.5, 0.9]: widen the range";
    assert_eq!(rec["flags"][0], want, "{rec}");
    assert!(out.contains(&format!("warning: {want}")), "{out}");
    assert!(html.contains(&format!("<li>Warning: {want}</li>")), "report.html lacks the flag");
    // The linked refund share is at its edge too, but follows: it is not flagged apart.
    assert_eq!(rec["flags"].as_array().unwrap().len(), 1, "{rec}");
}

#[test]
fn a_constraint_every_setting_meets_never_bound_and_is_flagged() {
    // A 1 % target: every share meets it, so the smallest share wins at the range's bottom and
    // the constraint decided nothing.
    let (out, rec, _) = sweep("[0.5, 0.7, 0.9]", "0.01");
    assert_eq!(rec["recommended"]["setting"]["authorize_share"], 0.5, "{rec}");
    let flags: Vec<&str> = rec["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert!(flags.iter().any(|f| f.contains("authorize_share = 0.5 is at the edge")), "{flags:?}");
    let never = "the constraint brownout:authorize/in_time_ratio >= 0.01 never bound: every candidate meets it; widen the range";
    assert!(flags.contains(&never), "{flags:?}");
    assert!(out.contains(never), "{out}");
}

#[test]
fn a_recommendation_inside_the_range_raises_no_flag() {
    // At 95 % a middle share is the smallest that holds at both depths (0.5 fails clearly).
    let (_, rec, _) = sweep("[0.5, 0.6, 0.7, 0.8, 0.9]", "0.95");
    let share = rec["recommended"]["setting"]["authorize_share"].as_f64().unwrap();
    assert!(share > 0.5 && share < 0.9, "{rec}");
    assert!(rec.get("flags").is_none(), "{rec}");
}
