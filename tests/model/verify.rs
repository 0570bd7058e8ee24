//! `brownout verify --quick` passes every check; a model that departs from its theory fails
//! (so the suite can fail); a model file that no longer fits its formula is bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn brownout(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brownout"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run brownout")
}

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/verify")
}

/// A copy of the models with `file` edited by replacing `from` with `to`.
pub(crate) fn edited_models(file: &str, from: &str, to: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(models()).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        if path.file_name().unwrap() == file {
            assert!(text.contains(from), "{file} should contain {from}");
            text = text.replace(from, to);
        }
        std::fs::write(dir.path().join(path.file_name().unwrap()), text).unwrap();
    }
    dir
}

#[test]
fn quick_suite_passes_every_check() {
    let out = brownout(&["verify", "--quick"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains("PASS") || l.contains("FAIL")).collect();
    // Two M/M/c models x (wait, P(wait)), slot and limiter queue waits, two loss models,
    // two Little checks, two tails, M/M/c/K (loss, time in system), four M/G/1-PS, the token
    // bucket's four windows and its worst slack, and the graph model: All (mean, p95), slow
    // fan-out, First, Quorum and sequence (mean, tail each), Little.
    assert_eq!(rows.len(), 41, "{stdout}");
    assert!(rows.iter().all(|l| l.contains("PASS")), "{stdout}");
    assert!(stdout.contains("All checks passed."));
}

#[test]
fn too_few_worker_slots_break_erlang_b_and_the_suite_says_so() {
    // Three worker slots in front of a five-permit limiter make a 3-server loss system:
    // Erlang B(3, 4) = 0.4507, far from B(5, 4) = 0.1991, so the check must fail.
    let dir = edited_models("erlang-b-exp.ron", "slots: 100000", "slots: 3");
    let out = brownout(&["verify", "--quick", "--models", dir.path().to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let row = stdout.lines().find(|l| l.starts_with("erlang-b-exp")).expect("erlang-b-exp row");
    assert!(row.ends_with("FAIL"), "{row}");
    assert!(stdout.contains("1 check(s) FAILED"), "{stdout}");
}

#[test]
fn a_gateway_limit_in_front_of_the_finite_queue_breaks_mmck() {
    // Four worker slots hold at most four calls at the dependency, so none ever finds K = 5
    // there and no call is shed: P(blocked) falls from 2/11 to 0 (the excess turns into 429s
    // at the gateway), and the M/M/2/5 row must fail.
    let dir = edited_models("mmck.ron", "slots: 100000", "slots: 4");
    let out = brownout(&["verify", "--quick", "--models", dir.path().to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let row = stdout.lines().find(|l| l.contains("P(blocked)")).expect("mmck row");
    assert!(row.ends_with("FAIL"), "{row}");
}

#[test]
fn a_model_that_no_longer_fits_its_formula_is_bad_input() {
    let dir = edited_models(
        "erlang-b-exp.ron",
        "Limiter((permits: 5, queue: 0))",
        "Limiter((permits: 5, queue: 3, max_wait: \"1s\"))",
    );
    let out = brownout(&["verify", "--quick", "--models", dir.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("erlang-b-exp.ron"), "{stderr}");
    assert!(stderr.contains("Limiter with no queue"), "{stderr}");
    assert!(out.stdout.is_empty(), "no table for a broken model");
}

#[test]
fn the_progress_observer_hears_every_run_once_and_changes_nothing() {
    use brownout::verify::suite;
    use std::sync::Mutex;
    let opts = suite::Options { quick: true, replications: Some(2), seed: 1, dir: models() };
    let heard = Mutex::new(Vec::new());
    let observed = suite::run_observed(&opts, &|n| heard.lock().unwrap().push(n)).unwrap();
    let mut heard = heard.into_inner().unwrap();
    heard.sort_unstable();
    // One run per model file per replication, each counted once: 1, 2, ..., files x 2.
    let files = std::fs::read_dir(models())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "ron"))
        .count();
    assert_eq!(heard, (1..=files * 2).collect::<Vec<_>>());
    assert_eq!(suite::runs(&opts), files * 2);
    let plain = suite::run(&opts).unwrap();
    assert_eq!(suite::render(&plain), suite::render(&observed));
}
