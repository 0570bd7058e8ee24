//! `brownout new`: every template in `templates/` is offered, passes `check`, and passes its
//! own expectations when run; the fresh user's `new payments > p.ron && run p.ron` works; bad
//! input (an unknown template, an existing file) exits 2 and writes nothing.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use brownout::model::{Model, RunOptions};
use brownout::report::expect::check;
use brownout::runner::run_all;
use brownout::scenario::load;

fn brownout(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brownout")).args(args).current_dir(dir).output().unwrap()
}

fn template_files() -> Vec<PathBuf> {
    common::ron_files("templates")
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

#[test]
fn the_list_names_every_template_file_and_new_prints_it_verbatim() {
    let tmp = tempfile::tempdir().unwrap();
    let out = brownout(&["new", "--list"], tmp.path());
    assert!(out.status.success());
    let listed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    let mut files: Vec<String> = template_files().iter().map(|p| stem(p)).collect();
    let mut sorted = listed.clone();
    sorted.sort();
    files.sort();
    assert_eq!(sorted, files, "`new --list` and templates/ differ");
    for name in ["minimal", "grocery", "payments", "fleet"] {
        assert!(listed.iter().any(|l| l == name), "{name} missing from {listed:?}");
    }
    for file in template_files() {
        let out = brownout(&["new", &stem(&file)], tmp.path());
        assert!(out.status.success());
        assert_eq!(out.stdout, std::fs::read(&file).unwrap(), "{}", file.display());
    }
    // No template name: the minimal one.
    let out = brownout(&["new"], tmp.path());
    let minimal = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/minimal.ron");
    assert_eq!(out.stdout, std::fs::read(minimal).unwrap());
}

#[test]
fn every_template_passes_check_and_its_own_expectations() {
    for file in template_files() {
        let s = load(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(!s.expect.is_empty(), "{}: a template states what it shows", file.display());
        let model = Model::build(&s, s.seed, file.parent().unwrap()).unwrap();
        let result = run_all(&model, RunOptions::new(), true).unwrap();
        for c in check(&result.summary, &s.expect) {
            assert!(c.passed, "{}: {} (measured {})", file.display(), c.statement, c.actual);
        }
    }
}

#[test]
fn a_fresh_user_gets_a_passing_run_with_a_report_from_the_payments_template() {
    let tmp = tempfile::tempdir().unwrap();
    let out = brownout(&["new", "payments"], tmp.path());
    assert!(out.status.success());
    std::fs::write(tmp.path().join("p.ron"), &out.stdout).unwrap();
    let out = brownout(&["check", "p.ron"], tmp.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = brownout(&["run", "p.ron"], tmp.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("PASS") && !stdout.contains("FAIL"), "{stdout}");
    for file in ["report.md", "report.html", "summary.json"] {
        assert!(tmp.path().join("output/payments").join(file).is_file(), "{file} not written");
    }
}

#[test]
fn an_unknown_template_exits_2_naming_the_known_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let out = brownout(&["new", "groceries", "--out", "g.ron"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    for name in ["minimal", "grocery", "payments", "fleet", "groceries"] {
        assert!(err.contains(name), "{name} not in: {err}");
    }
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "nothing written");
}

#[test]
fn out_refuses_an_existing_file_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("mine.ron");
    std::fs::write(&target, "my own scenario").unwrap();
    let out = brownout(&["new", "fleet", "--out", "mine.ron"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("mine.ron") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "my own scenario");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "no temporary file left");

    let out = brownout(&["new", "fleet", "--out", "mine.ron", "--force"], tmp.path());
    assert!(out.status.success());
    let fleet = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/fleet.ron");
    assert_eq!(std::fs::read(&target).unwrap(), std::fs::read(fleet).unwrap());

    let out = brownout(&["new", "minimal", "--out", "fresh.ron"], tmp.path());
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "the scenario goes to the file only");
    assert!(load(&tmp.path().join("fresh.ron")).is_ok());
}
