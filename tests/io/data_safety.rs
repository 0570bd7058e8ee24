//! Data safety (issue 32, "Data loss"): each test plants the user's file or a colliding
//! folder, runs the command, and finds every byte it planted unchanged. Index:
//! - `sweep_or_tune_into_a_folder_of_another_kind_is_refused`, `run_into_a_sweep_folder_is_refused`:
//!   result folders of another kind, refused with a message naming the kind.
//! - `a_users_file_in_charts_survives_a_run`: a folder brownout did not write, at any depth.
//! - `siblings_named_old_or_staging_keep_their_locks`, `a_symlinked_alias_shares_the_lock`,
//!   `out_ending_in_dot_is_the_folder`, `out_naming_a_file_is_refused_before_simulating`,
//!   `a_writable_folder_in_a_read_only_parent_is_written`: the lock and staging inside the folder.
//! - `output_paths_colliding_with_each_other_or_an_input_are_refused`: `--events`, `--junit`,
//!   `--out`, the scenario, its data files and imported files.
//! - `import_never_writes_over_its_input`, `a_replaced_run_folder_keeps_its_mode`,
//!   `charts_that_plot_draws_are_brownouts_to_replace`.
//! - `new_and_import_files_follow_the_umask`, `new_out_dash_is_stdout`,
//!   `import_into_a_missing_folder_names_the_users_path`.
//!
//! Locks held by another process are held here through the library (`folder::lock`, an
//! `flock` on a file opened by this process), never by a race with a running child.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use brownout::output::folder;

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

/// A small scenario that runs in a fraction of a second; its data file is `rates.csv`.
fn scenario(name: &str) -> String {
    format!(
        r#"Scenario(
    name: "{name}", seed: 3, horizon: "5s", warmup: "1s",
    fleet: (workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 20.0), deadline: "5s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [
        (name: "direct", stack: []),
        (name: "limit", stack: [(policy: Limiter((permits: 3, queue: 0, max_wait: "20ms")))]),
    ],
)"#
    )
}

fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
    let p = dir.join(file);
    std::fs::write(&p, text).unwrap();
    p
}

fn run(args: &[&OsStr], cwd: &Path) -> Output {
    Command::new(BIN).args(args).current_dir(cwd).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `brownout run SCENARIO --out OUT` plus `extra`.
fn run_into(dir: &Path, scenario: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec!["run".as_ref(), scenario.as_os_str(), "--out".as_ref(), out.as_os_str()];
    args.extend(["--no-charts", "-q"].iter().map(OsStr::new));
    args.extend(extra.iter().map(OsStr::new));
    run(&args, dir)
}

/// Every file under `dir` (following no link) with its bytes, and every folder, except
/// brownout's own bookkeeping (`.brownout/`).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_name() == ".brownout" {
                continue;
            }
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                out.insert(e.path(), None);
                todo.push(e.path());
            } else {
                out.insert(e.path(), Some(std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out
}

/// A sweep spec over `base.ron` with two points.
const SWEEP: &str = r#"SweepSpec(name: "sw", base: "base.ron", seed: 1, replications: 2,
    metrics: ["api/requests"], axes: [(name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s", values: [10.0, 20.0])])"#;

/// A tune spec over `base.ron`'s limiter, with a budget of a few runs.
const TUNE: &str = r#"TuneSpec(name: "tn", base: "base.ron", seed: 11, replications: 2, policy: "limit",
    knobs: [(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", range: (from: 1, to: 6), integer: true)],
    decide: (minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", op: Ge, value: 0.5)]),
    budget: (runs: 8))"#;

#[test]
fn sweep_or_tune_into_a_folder_of_another_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.ron", &scenario("base"));
    let sweep = write(dir.path(), "sweep.ron", SWEEP);
    let tune = write(dir.path(), "tune.ron", TUNE);
    let res = dir.path().join("res");
    let o = run(&["run".as_ref(), base.as_os_str(), "--out".as_ref(), res.as_os_str(), "-q".as_ref()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let planted = snapshot(&res);
    assert!(planted.contains_key(&res.join("report.html")), "{planted:?}");
    for (cmd, spec) in [("sweep", &sweep), ("tune", &tune)] {
        let o = run(&[cmd.as_ref(), spec.as_os_str(), "--out".as_ref(), res.as_os_str()], dir.path());
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        assert!(stderr(&o).contains("results of a run"), "{cmd}: {}", stderr(&o));
        assert!(snapshot(&res) == planted, "{cmd} changed the run folder");
    }
    // A sweep folder is no tune's, nor the other way round.
    let sw = dir.path().join("sw");
    let o = run(&["sweep".as_ref(), sweep.as_os_str(), "--out".as_ref(), sw.as_os_str()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let planted = snapshot(&sw);
    let o = run(&["tune".as_ref(), tune.as_os_str(), "--out".as_ref(), sw.as_os_str()], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("results of a sweep"), "{}", stderr(&o));
    assert!(snapshot(&sw) == planted, "tune changed the sweep folder");
}

#[test]
fn run_into_a_sweep_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.ron", &scenario("base"));
    let sweep = write(dir.path(), "sweep.ron", SWEEP);
    let tune = write(dir.path(), "tune.ron", TUNE);
    let tn = dir.path().join("tn");
    let o = run(&["tune".as_ref(), tune.as_os_str(), "--out".as_ref(), tn.as_os_str()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let planted = snapshot(&tn);
    let o = run_into(dir.path(), &base, &tn, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("results of a tune"), "{}", stderr(&o));
    let o = run(&["sweep".as_ref(), sweep.as_os_str(), "--out".as_ref(), tn.as_os_str()], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("results of a tune"), "{}", stderr(&o));
    assert!(snapshot(&tn) == planted, "the tune folder changed");
}

#[test]
fn a_users_file_in_charts_survives_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s"));
    let res = dir.path().join("res");
    let o = run(&["run".as_ref(), s.as_os_str(), "--out".as_ref(), res.as_os_str(), "-q".as_ref()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Named like a chart, and not: neither is brownout's to delete.
    for mine in ["charts/mine.png", "charts/notes.txt"] {
        let planted_at = res.join(mine);
        std::fs::write(&planted_at, "the user's own").unwrap();
        let planted = snapshot(&res);
        let o = run_into(dir.path(), &s, &res, &[]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(mine), "{}", stderr(&o));
        assert!(snapshot(&res) == planted, "{mine}: the folder changed");
        std::fs::remove_file(&planted_at).unwrap();
    }
    // A folder of the user's one level down.
    std::fs::create_dir(res.join("charts/keep")).unwrap();
    let o = run_into(dir.path(), &s, &res, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(res.join("charts/keep").is_dir());
}

#[test]
fn siblings_named_old_or_staging_keep_their_locks() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s"));
    let x = dir.path().join("x");
    let mut held = Vec::new();
    let mut planted = Vec::new();
    for sibling in ["x.old-1", "x.staging-1", ".x.old-2", ".x.staging-2"] {
        let p = dir.path().join(sibling);
        let o = run_into(dir.path(), &s, &p, &[]);
        assert_eq!(o.status.code(), Some(0), "{sibling}: {}", stderr(&o));
        planted.push((p.clone(), snapshot(&p)));
        // A live run on the sibling: its lock held as that process would hold it.
        held.push(folder::lock(&p).unwrap());
    }
    // Twice: once creating x, once replacing it.
    for _ in 0..2 {
        let o = run_into(dir.path(), &s, &x, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    for (p, before) in &planted {
        assert!(snapshot(p) == *before, "{} changed", p.display());
        let e = folder::lock(p).unwrap_err().to_string();
        assert!(e.contains("in use by another brownout process"), "{}: its lock was lost: {e}", p.display());
    }
    drop(held);
}

#[test]
fn a_symlinked_alias_shares_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s"));
    let x = dir.path().join("x");
    assert_eq!(run_into(dir.path(), &s, &x, &[]).status.code(), Some(0));
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink(&x, &alias).unwrap();
    let planted = snapshot(&x);
    let held = folder::lock(&x).unwrap();
    let o = run_into(dir.path(), &s, &alias, &["--seed", "9"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("in use by another brownout process"), "{}", stderr(&o));
    assert!(snapshot(&x) == planted, "the locked folder changed");
    assert!(std::fs::symlink_metadata(&alias).unwrap().file_type().is_symlink(), "the alias was replaced");
    drop(held);
    // Unlocked, a run through the alias writes the folder it names and leaves the link a link.
    let o = run_into(dir.path(), &s, &alias, &["--seed", "9"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&alias).unwrap().file_type().is_symlink(), "the alias was replaced");
    assert!(std::fs::read_to_string(x.join("scenario.ron")).unwrap().contains("seed: 9"));
}

#[test]
fn out_ending_in_dot_is_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s"));
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    for (out, folder) in [("res/.", "res"), ("sub/../res2", "res2"), ("sub/res3/", "sub/res3")] {
        let o = run_into(dir.path(), &s, Path::new(out), &[]);
        assert_eq!(o.status.code(), Some(0), "{out}: {}", stderr(&o));
        assert!(dir.path().join(folder).join("summary.json").is_file(), "{out}");
        // And again, replacing it.
        let o = run_into(dir.path(), &s, Path::new(out), &[]);
        assert_eq!(o.status.code(), Some(0), "{out}: {}", stderr(&o));
    }
}

#[test]
fn out_naming_a_file_is_refused_before_simulating() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s"));
    let file = write(dir.path(), "notes.txt", "mine");
    let o = run_into(dir.path(), &s, &file, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("notes.txt"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "nothing written: {names:?}");
}

/// Makes `dir` refuse new entries (even to root: the immutable attribute), undone on drop.
struct ReadOnly(PathBuf);

impl ReadOnly {
    fn new(dir: &Path) -> Self {
        let ok = Command::new("chattr").arg("+i").arg(dir).status().is_ok_and(|s| s.success());
        if !ok {
            // Not root, or no chattr: permissions bind a non-root user.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        }
        let probe = dir.join("probe");
        assert!(std::fs::write(&probe, "").is_err(), "cannot make {} read-only here", dir.display());
        Self(dir.to_path_buf())
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn a_writable_folder_in_a_read_only_parent_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s"));
    let parent = dir.path().join("parent");
    std::fs::create_dir(&parent).unwrap();
    let x = parent.join("x");
    assert_eq!(run_into(dir.path(), &s, &x, &["--seed", "1"]).status.code(), Some(0));
    let _ro = ReadOnly::new(&parent);
    let o = run_into(dir.path(), &s, &x, &["--seed", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(x.join("scenario.ron")).unwrap().contains("seed: 2"));
    let o = run_into(dir.path(), &s, &x, &["--seed", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let saved = std::fs::read_to_string(x.join("scenario.ron")).unwrap();
    assert!(saved.contains("seed: 3"), "{saved}");
    // Moved in entry by entry: no staging folder or commit record is left behind.
    let mut kept: Vec<_> = std::fs::read_dir(x.join(".brownout")).unwrap().map(|e| e.unwrap().file_name()).collect();
    kept.sort();
    assert_eq!(kept, ["lock", "manifest"]);
}

#[test]
fn output_paths_colliding_with_each_other_or_an_input_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("rates.csv"), "t_s,rate_per_s\n0,20\n10,20\n").unwrap();
    std::fs::create_dir(d.join("imports")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/imports/opossum.json"),
        d.join("imports/opossum.json"),
    )
    .unwrap();
    let text = scenario("s").replace("Poisson(rate_per_s: 20.0)", r#"Csv(file: "rates.csv")"#).replace(
        r#"(name: "direct", stack: [])"#,
        r#"(name: "direct", stack: [(policy: Import((file: "imports/opossum.json")))])"#,
    );
    let s = write(d, "s.ron", &text);
    let check = run(&["check".as_ref(), s.as_os_str()], d);
    assert_eq!(check.status.code(), Some(0), "the scenario itself is valid: {}", stderr(&check));
    std::fs::create_dir(d.join("link")).unwrap();
    std::os::unix::fs::symlink(&s, d.join("link/alias.ron")).unwrap();
    let planted = snapshot(d);
    let cases: &[(&[&str], [&str; 2])] = &[
        (&["--out", "res", "--events", "res"], ["--events", "--out"]),
        (&["--out", "res", "--events", "res/events.jsonl"], ["--events", "--out"]),
        (&["--out", "res", "--events", "j.xml", "--junit", "j.xml"], ["--events", "--junit"]),
        (&["--out", "res", "--events", "./j.xml", "--junit", "j.xml"], ["--events", "--junit"]),
        (&["--out", "res", "--events", "s.ron"], ["--events", "s.ron"]),
        (&["--out", "res", "--events", "link/alias.ron"], ["--events", "s.ron"]),
        (&["--out", "res", "--junit", "rates.csv"], ["--junit", "rates.csv"]),
        (&["--out", "res", "--events", "imports/opossum.json"], ["--events", "opossum.json"]),
        (&["--out", "res", "--junit", "res/j.xml"], ["--junit", "--out"]),
        (&["--out", "s.ron"], ["--out", "s.ron"]),
    ];
    for (args, names) in cases {
        let mut all: Vec<&OsStr> = vec!["run".as_ref(), "s.ron".as_ref(), "-q".as_ref(), "--no-charts".as_ref()];
        all.extend(args.iter().map(OsStr::new));
        let o = run(&all, d);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        for n in names {
            assert!(stderr(&o).contains(n), "{args:?} does not name {n}: {}", stderr(&o));
        }
        assert!(snapshot(d) == planted, "{args:?} changed the folder");
    }
}

/// Mode bits of `path`.
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `brownout ARGS` under `umask MASK` (through the shell, which sets it for the child).
fn with_umask(mask: &str, args: &str, cwd: &Path) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {mask} && exec \"$0\" {args}"))
        .arg(BIN)
        .current_dir(cwd)
        .output()
        .unwrap()
}

#[test]
fn new_and_import_files_follow_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let json = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/imports/opossum.json");
    // 0666 & !umask, as any editor creates a file.
    for (mask, want) in [("022", 0o644), ("027", 0o640), ("077", 0o600)] {
        let o = with_umask(mask, &format!("new --out new-{mask}.ron"), dir.path());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(mode(&dir.path().join(format!("new-{mask}.ron"))), want, "new, umask {mask}");
        let o = with_umask(mask, &format!("import opossum {} --out imp-{mask}.ron", json.display()), dir.path());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(mode(&dir.path().join(format!("imp-{mask}.ron"))), want, "import, umask {mask}");
    }
    // --force replaces a file and keeps to the umask too.
    let o = with_umask("022", "new --out new-077.ron --force", dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(mode(&dir.path().join("new-077.ron")), 0o644);
}

#[test]
fn new_out_dash_is_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["new".as_ref(), "grocery".as_ref(), "--out".as_ref(), "-".as_ref()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let template = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/grocery.ron")).unwrap();
    assert_eq!(o.stdout, template);
    assert!(!dir.path().join("-").exists(), "a file named - was written");
    let json = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/imports/opossum.json");
    let o = run(&["import".as_ref(), "opossum".as_ref(), json.as_os_str(), "-o".as_ref(), "-".as_ref()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("stack:") || !o.stdout.is_empty());
    assert!(!dir.path().join("-").exists(), "a file named - was written");
}

#[test]
fn import_into_a_missing_folder_names_the_users_path() {
    let dir = tempfile::tempdir().unwrap();
    let json = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/imports/opossum.json");
    for cmd in
        [vec!["new", "--out", "nodir/x.ron"], vec!["import", "opossum", json.to_str().unwrap(), "--out", "nodir/x.ron"]]
    {
        let args: Vec<&OsStr> = cmd.iter().map(OsStr::new).collect();
        let o = run(&args, dir.path());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("nodir/x.ron"), "{err}");
        assert!(err.contains("nodir") && err.contains("does not exist"), "the cause: {err}");
        assert!(!err.contains(".tmp"), "a temporary path: {err}");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(names.is_empty(), "nothing written");
}

#[test]
fn import_never_writes_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("opossum.json");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/imports/opossum.json"), &json).unwrap();
    let planted = snapshot(dir.path());
    std::os::unix::fs::symlink(&json, dir.path().join("alias.json")).unwrap();
    for out in ["opossum.json", "./opossum.json", "alias.json"] {
        let o = run(&["import", "opossum", "opossum.json", "--out", out, "--force"].map(OsStr::new), dir.path());
        assert_eq!(o.status.code(), Some(2), "{out}: {}", stderr(&o));
        assert!(stderr(&o).contains("--out") && stderr(&o).contains("configuration file"), "{}", stderr(&o));
        let now: BTreeMap<_, _> =
            snapshot(dir.path()).into_iter().filter(|(p, _)| !p.ends_with("alias.json")).collect();
        assert!(now == planted, "{out}: the input changed");
    }
}

#[test]
fn a_replaced_run_folder_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s"));
    let res = dir.path().join("res");
    assert_eq!(run_into(dir.path(), &s, &res, &[]).status.code(), Some(0));
    // The user narrows who may read the results; the next run must not widen it again.
    std::fs::set_permissions(&res, std::fs::Permissions::from_mode(0o750)).unwrap();
    let o = run_into(dir.path(), &s, &res, &["--seed", "8"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_to_string(res.join("scenario.ron")).unwrap().contains("seed: 8"));
    assert_eq!(mode(&res), 0o750);
}

#[test]
fn charts_that_plot_draws_are_brownouts_to_replace() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s"));
    let res = dir.path().join("res");
    assert_eq!(run_into(dir.path(), &s, &res, &[]).status.code(), Some(0));
    let o = run(&["plot".as_ref(), res.as_os_str()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read_dir(res.join("charts")).unwrap().count() > 0);
    // The charts plot drew are in the folder's manifest: the next run replaces them.
    let o = run_into(dir.path(), &s, &res, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!res.join("charts").exists(), "a run without charts keeps none of the old ones");
}
