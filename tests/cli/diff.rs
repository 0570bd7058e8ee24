//! `brownout diff A B` (issue 20): two runs of the grocery scenario that differ only in the
//! limiter's permits list the changed figures, each the two `summary.json` values (read here
//! independently); identical runs show no change; `--fail-on-regression` exits 1 only for a
//! guarded metric that got worse beyond its threshold; a folder that is not a result is exit 2.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use common::{brownout, document};

/// Three run folders: grocery (shortened to 8 minutes, through the brownout's start) twice,
/// and once with the limiter-fallback policy at 6 permits instead of 12.
struct Runs {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/grocery.ron")).unwrap();
        let a = text.replace(r#"horizon: "30m""#, r#"horizon: "8m""#);
        assert_ne!(a, text);
        let permits = "(policy: Limiter((permits: 12, refuse_as: Fallback)))";
        assert_eq!(a.matches(permits).count(), 1, "the grocery scenario's limiter moved");
        let b = a.replace(permits, "(policy: Limiter((permits: 6, refuse_as: Fallback)))");
        std::fs::write(root.join("a.ron"), &a).unwrap();
        std::fs::write(root.join("b.ron"), &b).unwrap();
        for (file, out) in [("a.ron", "a"), ("a.ron", "a2"), ("b.ron", "b")] {
            let o = brownout(&["run", file, "--out", out, "--no-charts", "--quiet"], &root);
            // Exit 1 is a failed expectation of the shortened run: the folder is written all the same.
            assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
        }
        Runs { _dir: dir, root }
    })
}

fn summary(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

/// The figure `metric` of policy `policy` (and `class`) read from a summary.json, by the
/// summary field the catalogue names for it.
fn figure(s: &Value, policy: &str, class: Option<&str>, metric: &str) -> Option<f64> {
    use brownout::metrics::catalogue::{CATALOGUE, Scope};
    let scope = if class.is_some() { Scope::Class } else { Scope::Run };
    let m = CATALOGUE.iter().find(|m| m.name == metric && m.scope() == scope).unwrap();
    let run = s["runs"].as_array().unwrap().iter().find(|r| r["policy"] == policy).unwrap();
    let holder = match class {
        Some(c) => run["classes"].as_array().unwrap().iter().find(|k| k["class"] == c).unwrap(),
        None => run,
    };
    m.field.split('.').fold(holder, |v, k| &v[k]).as_f64()
}

#[test]
fn diff_lists_the_changed_figures_with_both_summary_values() {
    let r = runs();
    let o = brownout(&["diff", "a", "b", "--json"], &r.root);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = document(&o);
    assert_eq!(doc["same_scenario"], true);
    let (sa, sb) = (summary(&r.root.join("a")), summary(&r.root.join("b")));
    let changes = doc["changes"].as_array().unwrap();
    assert!(!changes.is_empty(), "halving the permits changed nothing?");
    for c in changes {
        // Common random numbers: the other policy sets ran exactly as before.
        assert_eq!(c["policy"], "limiter-fallback", "{c}");
        let (class, metric) = (c["class"].as_str(), c["metric"].as_str().unwrap());
        // A phase's figure is read from that phase's runs, the whole run's from `runs`.
        let view = |s: &Value| match c["phase"].as_str() {
            Some(p) => s["phases"].as_array().unwrap().iter().find(|x| x["name"] == p).unwrap().clone(),
            None => s.clone(),
        };
        let (va, vb) = (view(&sa), view(&sb));
        let (a, b) = (figure(&va, "limiter-fallback", class, metric), figure(&vb, "limiter-fallback", class, metric));
        assert_eq!(c["a"].as_f64(), a, "{c}");
        assert_eq!(c["b"].as_f64(), b, "{c}");
        // The 1 % rule, checked by hand.
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(a == 0.0 || ((b - a) / a).abs() > 0.01, "{c} is within 1 %");
    }
    // And every figure that moved by more than 1 % is listed: the class figures, by field.
    for class in ["checkout", "browse", "search", "account"] {
        for metric in ["ok", "fallback", "p95_ms", "goodput_per_s", "business_cost"] {
            let a = figure(&sa, "limiter-fallback", Some(class), metric).unwrap();
            let b = figure(&sb, "limiter-fallback", Some(class), metric).unwrap();
            let moved = if a == 0.0 { b != 0.0 } else { ((b - a) / a).abs() > 0.01 };
            let listed = changes.iter().any(|c| c["class"] == class && c["metric"] == metric && c["phase"].is_null());
            assert_eq!(listed, moved, "{class} {metric}: {a} -> {b}");
        }
    }
    // The phases are compared too.
    assert!(changes.iter().any(|c| !c["phase"].is_null()), "no phase figure changed");
    // The text output names the same figures.
    let o = brownout(&["diff", "a", "b"], &r.root);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("{} of ", changes.len())), "{text}");
    assert!(text.contains("limiter-fallback / "), "{text}");
}

#[test]
fn identical_runs_show_no_change() {
    let r = runs();
    let o = brownout(&["diff", "a", "a2", "--json", "--fail-on-regression", "p95_ms"], &r.root);
    assert_eq!(o.status.code(), Some(0));
    let doc = document(&o);
    assert_eq!(doc["changes"].as_array().unwrap().len(), 0);
    assert!(doc["compared"].as_u64().unwrap() > 100, "{}", doc["compared"]);
}

/// A class figure of limiter-fallback that got worse (by its direction) from a to b, with its
/// relative change, from the two summary files.
fn a_worsened_figure(r: &Runs, metric: &str, lower_is_better: bool) -> Option<(String, f64)> {
    let (sa, sb) = (summary(&r.root.join("a")), summary(&r.root.join("b")));
    ["checkout", "browse", "search", "account"].into_iter().find_map(|class| {
        let a = figure(&sa, "limiter-fallback", Some(class), metric)?;
        let b = figure(&sb, "limiter-fallback", Some(class), metric)?;
        let worse = if lower_is_better { b > a } else { b < a };
        (worse && a != 0.0 && ((b - a) / a).abs() > 0.02).then(|| (class.to_string(), ((b - a) / a).abs()))
    })
}

#[test]
fn fail_on_regression_exits_1_only_beyond_its_threshold() {
    let r = runs();
    // Fewer permits send more browse and search traffic to the fallback: some fallback count rose.
    let (class, rel) = a_worsened_figure(r, "fallback", true).expect("no fallback count rose");
    let guard = format!("{class}/fallback");
    let o = brownout(&["diff", "a", "b", "--fail-on-regression", &guard], &r.root);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("regression"));
    // A threshold above the change lets it pass; one just below it does not.
    let above = format!("{guard}:{}", rel * 1.01);
    assert_eq!(brownout(&["diff", "a", "b", "--fail-on-regression", &above], &r.root).status.code(), Some(0));
    let below = format!("{guard}:{}%", rel * 99.0);
    assert_eq!(brownout(&["diff", "a", "b", "--fail-on-regression", &below], &r.root).status.code(), Some(1));
    // The same guard the other way round: b -> a is an improvement.
    assert_eq!(brownout(&["diff", "b", "a", "--fail-on-regression", &guard], &r.root).status.code(), Some(0));
    // An unknown metric is bad input.
    assert_eq!(brownout(&["diff", "a", "b", "--fail-on-regression", "nonsense"], &r.root).status.code(), Some(2));
}

#[test]
fn a_folder_that_is_not_a_result_is_exit_2() {
    let r = runs();
    let empty = tempfile::tempdir().unwrap();
    let o = brownout(&["diff", "a", empty.path().to_str().unwrap()], &r.root);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a result folder"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = brownout(&["diff", "a", "no-such-folder", "--json"], &r.root);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(document(&o)["exit_code"], 2);
    // A summary.json that is not a summary.
    std::fs::write(empty.path().join("summary.json"), "{}").unwrap();
    assert_eq!(brownout(&["diff", "a", empty.path().to_str().unwrap()], &r.root).status.code(), Some(2));
}

#[test]
fn folders_of_different_scenarios_are_compared_but_said_so() {
    let r = runs();
    let other = tempfile::tempdir().unwrap();
    let s = summary(&r.root.join("a2")).to_string().replace(r#""scenario":"grocery""#, r#""scenario":"elsewhere""#);
    std::fs::write(other.path().join("summary.json"), s).unwrap();
    let o = brownout(&["diff", "a", other.path().to_str().unwrap()], &r.root);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("different scenarios"));
    let o = brownout(&["diff", "a", other.path().to_str().unwrap(), "--json"], &r.root);
    let doc = document(&o);
    assert_eq!((doc["same_scenario"].clone(), doc["changes"].as_array().unwrap().len()), (false.into(), 0));
}
