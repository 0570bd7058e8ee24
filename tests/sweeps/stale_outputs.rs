//! A sweep written again into its folder (`--resume` after a spec edit, which keeps every
//! finished run) leaves nothing of the earlier results that the new ones do not hold ("no
//! half-written or mixed output"): when the spec gains or drops its `decide` section, the
//! charts only the earlier spec draws (the sensitivity of a metric it does not decide) and
//! its recommendation are gone, and the folder holds what a fresh sweep of the new spec
//! writes.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use crate::common;

/// The sweep spec over `base.ron` (`common::erlang_scenario`, 4 s) naming `metrics`, the
/// limiter's permits 1 or 4, with `decide` appended.
fn spec(metrics: &str, decide: &str) -> String {
    format!(
        r#"SweepSpec(name: "stale", base: "base.ron", seed: 5, replications: 2, metrics: [{metrics}],
    axes: [(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [1, 4])]{decide})"#
    )
}

fn sweep(spec: &Path, out: &Path, resume: bool) -> Output {
    let mut args = vec!["sweep".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str(), "-q".as_ref()];
    if resume {
        args.push("--resume".as_ref());
    }
    let o = Command::new(common::BIN).args(&args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The names of the files in `dir` (none when it does not exist).
fn names(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return BTreeSet::new() };
    entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn a_resumed_sweep_keeps_no_chart_or_recommendation_the_new_spec_does_not_write() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.ron"), common::erlang_scenario("4s")).unwrap();
    let path = dir.path().join("sweep.ron");
    let (grown, fresh) = (dir.path().join("grown"), dir.path().join("fresh"));
    let metrics = r#""api/ok_ratio", "api/p95_ms""#;
    let decide =
        r#", decide: (minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", op: Ge, value: 0.1)])"#;
    // Without `decide`, the sensitivity of every metric is drawn; with it, of the decided
    // ones alone (here ok_ratio), and a recommendation is written.
    std::fs::write(&path, spec(metrics, "")).unwrap();
    sweep(&path, &grown, false);
    let undecided = names(&grown.join("charts"));
    assert!(!grown.join("recommendation.json").exists());
    std::fs::write(&path, spec(metrics, decide)).unwrap();
    sweep(&path, &grown, true);
    sweep(&path, &fresh, false);
    let (after, expected) = (names(&grown.join("charts")), names(&fresh.join("charts")));
    assert!(undecided.is_superset(&expected) && undecided != expected, "{undecided:?} {expected:?}");
    assert_eq!(after, expected, "the charts of the earlier spec are left over");
    assert_eq!(names(&grown), names(&fresh));
    // Back to no `decide`: the recommendation goes, the charts are the first sweep's again.
    std::fs::write(&path, spec(metrics, "")).unwrap();
    sweep(&path, &grown, true);
    assert!(!grown.join("recommendation.json").exists(), "the earlier recommendation is left over");
    assert_eq!(names(&grown.join("charts")), undecided);
}
