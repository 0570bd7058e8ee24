//! Issue 18's payments share question through `brownout sweep`: the recommendation must be
//! the smallest authorize share whose one-sided 95 % bound on authorize's in-time ratio
//! during the brownout holds in every brownout depth, recomputed here from runs.csv with the
//! t table's value; and bad `decide` or `link` input is refused with file:line:col, exit 2.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::brownout;

/// t(0.95, 4) from a t table: 5 replications give 4 degrees of freedom.
const T_95_4: f64 = 2.131847;
const TARGET: f64 = 0.99;
const METRIC: &str = "brownout:authorize/in_time_ratio";

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// Run a sweep spec into `out`; returns stdout.
fn sweep(spec: &Path, out: &Path) -> String {
    let o =
        brownout(&["sweep", spec.to_str().unwrap(), "-q", "-j", "2", "--out", out.to_str().unwrap()], Path::new("."));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// From runs.csv: the smallest authorize share whose lower bound holds at every depth.
fn expected_share(out: &Path) -> f64 {
    let mut rd = csv::Reader::from_path(out.join("runs.csv")).unwrap();
    let head = rd.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap_or_else(|| panic!("no column {n}"));
    let (a, d, m) = (col("authorize_share"), col("depth"), col(METRIC));
    let mut values: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for r in rd.records() {
        let r = r.unwrap();
        values.entry((r[a].to_string(), r[d].to_string())).or_default().push(r[m].parse().unwrap());
    }
    let mut holds: BTreeMap<String, bool> = BTreeMap::new();
    for ((share, _), xs) in &values {
        assert_eq!(xs.len(), 5);
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let s = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let lo = mean - T_95_4 * s / n.sqrt();
        *holds.entry(share.clone()).or_insert(true) &= lo >= TARGET;
    }
    let ok: Vec<f64> = holds.iter().filter(|(_, h)| **h).map(|(s, _)| s.parse().unwrap()).collect();
    assert!(!ok.is_empty(), "no share holds: {holds:?}");
    assert!(holds.values().any(|h| !h), "every share holds: the question would be moot: {holds:?}");
    ok.into_iter().fold(f64::INFINITY, f64::min)
}

fn recommendation(out: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(out.join("recommendation.json")).unwrap()).unwrap()
}

fn check(out: &Path) {
    let want = expected_share(out);
    let r = recommendation(out);
    assert_eq!(r["source"], "sweep");
    assert_eq!(r["feasible"], true, "{r}");
    let setting = &r["recommended"]["setting"];
    assert_eq!(setting["authorize_share"].as_f64(), Some(want), "{r}");
    // The linked axis follows: refund gets the rest.
    assert!((setting["refund_share"].as_f64().unwrap() - (1.0 - want)).abs() < 1e-9, "{r}");
    let stack = r["recommended"]["stack"].as_str().unwrap();
    assert!(stack.contains(&format!("share: {want}")), "{stack}");
    assert_eq!(r["constraints"][0]["metric"], METRIC);
}

#[test]
fn payments_share_recommends_the_smallest_share_that_holds_in_every_depth() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let printed = sweep(&repo("scenarios/sweeps/payments-share.ron"), &out);
    check(&out);
    assert!(printed.contains("recommended (minimize authorize_share): tiered with authorize_share="), "{printed}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let first = html.find("<h2>").unwrap();
    assert!(html[first..].starts_with("<h2>Recommendation</h2>"), "the recommendation is not first");
    assert!(html.contains("<h3>Per condition</h3>"));
}

#[test]
fn a_finer_grid_recommends_the_smallest_share_too() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("scenarios/sweeps/payments-share.ron")).unwrap();
    let base = repo("scenarios/payments-share.ron");
    let text = text
        .replace("\"../payments-share.ron\"", &format!("{:?}", base.to_str().unwrap()))
        .replace("values: [0.5, 0.6, 0.7, 0.8, 0.9]", "values: [0.65, 0.7, 0.75, 0.8, 0.85]");
    let spec = dir.path().join("fine.ron");
    std::fs::write(&spec, text).unwrap();
    let out = dir.path().join("out");
    sweep(&spec, &out);
    check(&out);
}

/// Write the payments spec with `from` replaced by `to` and sweep it: it must be refused
/// with exit 2 at the line of `marker` (in the edited text), writing nothing.
fn refused(from: &str, to: &str, marker: &str, says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("scenarios/sweeps/payments-share.ron")).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{from}");
    let base = repo("scenarios/payments-share.ron");
    let text = text.replace(from, to).replace("\"../payments-share.ron\"", &format!("{:?}", base.to_str().unwrap()));
    let line = text.lines().position(|l| l.contains(marker)).unwrap() + 1;
    let spec = dir.path().join("spec.ron");
    std::fs::write(&spec, &text).unwrap();
    let out = dir.path().join("out");
    let o = brownout(&["sweep", spec.to_str().unwrap(), "--out", out.to_str().unwrap()], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}:{line}:", spec.display())), "want line {line}: {err}");
    assert!(err.contains(says), "want {says:?}: {err}");
    assert!(!out.exists(), "a refused sweep wrote {}", out.display());
}

#[test]
fn objective_on_an_unknown_metric_is_refused() {
    refused("minimize: \"authorize_share\"", "minimize: \"authorize/in_tme\"", "minimize", "unknown metric \"in_tme\"");
}

#[test]
fn constraint_on_an_unknown_phase_is_refused() {
    refused("phase: \"brownout\", op: Ge", "phase: \"brownot\", op: Ge", "brownot", "brownot");
}

#[test]
fn a_link_to_itself_is_refused() {
    refused("link: \"1 - authorize_share\"", "link: \"1 - refund_share\"", "1 - refund_share", "its own axis");
}

#[test]
fn a_link_to_an_unknown_axis_is_refused() {
    refused("link: \"depth\"", "link: \"dept\"", "link: \"dept\"", "unknown axis \"dept\"");
}

#[test]
fn a_link_giving_a_value_the_scenario_refuses_names_the_point() {
    // At authorize_share = 0.5 refund's share would be 1.1: the shares must sum to <= 1.
    refused(
        "link: \"1 - authorize_share\"",
        "link: \"1.6 - authorize_share\"",
        "1.6 - authorize_share",
        "authorize_share=0.5",
    );
}

#[test]
fn check_refuses_a_scenario_deciding_on_an_unknown_phase() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("scenarios/payments-share.ron")).unwrap();
    let decide = "    decide: (\n        minimize: \"refund/rejected\",\n        subject_to: [(class: \"authorize\", metric: \"in_time_ratio\", phase: \"incident\", op: Ge, value: 0.99)],\n    ),\n)";
    let text = format!("{}{decide}\n", text.trim_end().strip_suffix(')').unwrap());
    let line = text.lines().position(|l| l.contains("\"incident\"")).unwrap() + 1;
    let file = dir.path().join("s.ron");
    std::fs::write(&file, &text).unwrap();
    let o = brownout(&["check", file.to_str().unwrap()], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}:{line}:", file.display())), "want line {line}: {err}");
    assert!(err.contains("incident"), "{err}");
}
