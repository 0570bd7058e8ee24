//! Files and concurrency (issue 15): output folders are locked, named folders cannot escape
//! their parent, a run folder is all-or-nothing, temporary files never follow a planted link,
//! names are escaped for each output format, and chart files never collide. Index:
//! - `second_sweep_on_a_folder_is_refused`, `run_refused_while_its_folder_is_locked`: locks.
//! - `dot_names_never_write_outside_output`: scenarios and sweeps named `.` and `..`.
//! - `failed_run_never_mixes_two_runs`, `killed_runs_leave_a_complete_folder`: staging.
//! - `planted_temporary_symlink_is_not_followed`, `runs_leave_no_temporary_litter`.
//! - `saved_scenario_has_the_seed_used`, `runaway_job_count_is_refused`.
//! - `names_are_escaped_*`, `colliding_class_names_keep_both_charts`: escaping.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

/// A small M/M/c-like scenario; `horizon` sets how long a run takes.
fn scenario(name: &str, horizon: &str, rate: f64) -> String {
    format!(
        r#"Scenario(
    name: "{name}", seed: 3, horizon: "{horizon}", warmup: "1s",
    fleet: (workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: {rate}), deadline: "5s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [
        (name: "direct", stack: []),
        (name: "limit", stack: [(policy: Limiter((permits: 3, queue: 0)))]),
    ],
)"#
    )
}

fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
    let p = dir.join(file);
    std::fs::write(&p, text).unwrap();
    p
}

fn run(args: &[&std::ffi::OsStr], cwd: &Path) -> Output {
    Command::new(BIN).args(args).current_dir(cwd).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Wait for `path` to exist (at most 60 s).
fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(t.elapsed() < Duration::from_secs(60), "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn second_sweep_on_a_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.ron", &scenario("base", "400s", 400.0));
    let spec = write(
        dir.path(),
        "sweep.ron",
        r#"SweepSpec(name: "lock", base: "base.ron", seed: 1, replications: 40,
            metrics: ["api/requests"], axes: [])"#,
    );
    let out = dir.path().join("out");
    let mut first = Command::new(BIN)
        .args(["sweep".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str(), "-j".as_ref(), "1".as_ref()])
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // The journal is created after the lock is taken.
    wait_for(&out.join("journal.jsonl"));
    let second = run(
        &[
            "sweep".as_ref(),
            spec.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "--resume".as_ref(),
            "-j".as_ref(),
            "1".as_ref(),
        ],
        dir.path(),
    );
    let still_running = first.try_wait().unwrap().is_none();
    first.kill().ok();
    first.wait().unwrap();
    assert!(still_running, "the first sweep finished too early for this test");
    assert_eq!(second.status.code(), Some(2), "second sweep: {}", stderr(&second));
    assert!(stderr(&second).contains("in use by another brownout process"), "{}", stderr(&second));
    // The first process's journal is intact: every complete line is a valid record.
    let resumed =
        run(&["sweep".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str(), "--resume".as_ref()], dir.path());
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
}

#[test]
fn run_refused_while_its_folder_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s", "20s", 50.0));
    let out = dir.path().join("res");
    // Held as another brownout process holds it (the lock file inside the folder, `.brownout/lock`).
    let lock = brownout::output::folder::lock(&out).unwrap();
    let o = run(&["run".as_ref(), s.as_os_str(), "--out".as_ref(), out.as_os_str()], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("in use by another brownout process"), "{}", stderr(&o));
    let names: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, [".brownout"], "nothing written while locked");
    drop(lock);
    let o = run(&["run".as_ref(), s.as_os_str(), "--out".as_ref(), out.as_os_str()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn dot_names_never_write_outside_output() {
    for name in [".", ".."] {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let s = write(&work, "s.ron", &scenario(name, "5s", 20.0));
        let o = run(&["run".as_ref(), s.as_os_str(), "--no-charts".as_ref()], &work);
        assert_eq!(o.status.code(), Some(2), "run named {name:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(&format!("\"{name}\"")), "{}", stderr(&o));
        write(&work, "base.ron", &scenario("base", "5s", 20.0));
        let spec = format!(
            r#"SweepSpec(name: "{name}", base: "base.ron", seed: 1, replications: 2, metrics: ["api/requests"], axes: [])"#
        );
        let spec = write(&work, "sweep.ron", &spec);
        let o = run(&["sweep".as_ref(), spec.as_os_str()], &work);
        assert_eq!(o.status.code(), Some(2), "sweep named {name:?}: {}", stderr(&o));
        for d in [dir.path(), work.as_path()] {
            for f in ["report.md", "summary.json", "journal.jsonl", "plan.json", "sweep.csv"] {
                assert!(!d.join(f).exists(), "{name:?} wrote {}", d.join(f).display());
            }
        }
    }
}

/// The seed each result file says it came from (`None`: the file is absent).
fn seeds(out: &Path) -> Vec<(String, Option<u64>)> {
    let find = |file: &str, key: &str| {
        let text = std::fs::read_to_string(out.join(file)).ok()?;
        let at = text.find(key)? + key.len();
        let digits: String = text[at..].chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    vec![
        ("summary.json".into(), find("summary.json", "\"seed\": ")),
        ("scenario.ron".into(), find("scenario.ron", "seed: ")),
        ("report.md".into(), find("report.md", "Seed ")),
        ("report.html".into(), find("report.html", "Seed ")),
    ]
}

/// Every file present and all from one seed; returns it.
fn one_seed(out: &Path) -> u64 {
    let s = seeds(out);
    let first = s[0].1.unwrap_or_else(|| panic!("{}: incomplete: {s:?}", out.display()));
    assert!(s.iter().all(|(_, x)| *x == Some(first)), "{}: files of two runs: {s:?}", out.display());
    first
}

#[test]
fn failed_run_never_mixes_two_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s", "10s", 50.0));
    let out = dir.path().join("res");
    let go = |seed: &str| {
        run(
            &["run".as_ref(), s.as_os_str(), "--out".as_ref(), out.as_os_str(), "--seed".as_ref(), seed.as_ref()],
            dir.path(),
        )
    };
    assert_eq!(go("1").status.code(), Some(0));
    assert_eq!(one_seed(&out), 1);
    // A file where the charts folder should be makes writing charts fail half-way through.
    std::fs::remove_dir_all(out.join("charts")).unwrap();
    std::fs::write(out.join("charts"), "not a folder").unwrap();
    let o = go("2");
    let seed = one_seed(&out);
    if o.status.success() {
        assert_eq!(seed, 2, "a successful run leaves its own results");
    } else {
        assert_eq!(seed, 1, "a failed run leaves the previous results: {}", stderr(&o));
    }
}

#[test]
fn killed_runs_leave_a_complete_folder() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s", "60s", 200.0));
    let out = dir.path().join("res");
    let cmd = |seed: u64| {
        let mut c = Command::new(BIN);
        c.args(["run".as_ref(), s.as_os_str(), "--out".as_ref(), out.as_os_str(), "--seed".as_ref()])
            .arg(seed.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    };
    let t = Instant::now();
    assert!(cmd(1).status().unwrap().success());
    let full = t.elapsed();
    // Kill at spread-out moments of a run, many of them while files are being written.
    for i in 0..12u64 {
        let mut child = cmd(2 + i).spawn().unwrap();
        std::thread::sleep(full.mul_f64(0.3 + 0.06 * i as f64));
        child.kill().ok();
        child.wait().unwrap();
        let seed = one_seed(&out);
        assert!(seed == 1 || seed <= 2 + i, "seed {seed}");
    }
}

#[test]
fn planted_temporary_symlink_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious.txt");
    std::fs::write(&target, "keep me").unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // The name the old code chose for its temporary file: `.<name>.tmp-<pid>`.
    let planted = out.join(format!(".summary.csv.tmp-{}", std::process::id()));
    std::os::unix::fs::symlink(&target, &planted).unwrap();
    brownout::output::write_atomic(&out.join("summary.csv"), b"a,b\n").unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    assert_eq!(std::fs::read(out.join("summary.csv")).unwrap(), b"a,b\n");
    assert!(!std::fs::symlink_metadata(out.join("summary.csv")).unwrap().file_type().is_symlink());
}

/// Hidden entries left in `dir` and its `charts/` (temporary files, staging folders).
fn litter(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for d in [dir.to_path_buf(), dir.join("charts")] {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name != ".brownout" {
                found.push(format!("{}/{name}", d.display()));
            }
        }
    }
    found
}

#[test]
fn runs_leave_no_temporary_litter() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s", "5s", 20.0));
    let out = dir.path().join("res");
    // Litter of a killed process: a stale temporary file inside, the staging folder beside
    // that the folder records, one inside `.brownout/`.
    std::fs::create_dir_all(out.join("charts")).unwrap();
    std::fs::write(out.join(".summary.json.tmp-999999"), "stale").unwrap();
    std::fs::create_dir_all(dir.path().join(".res.brownout-abc123/.brownout")).unwrap();
    std::fs::create_dir_all(out.join(".brownout/stage-abc123")).unwrap();
    std::fs::write(out.join(".brownout/staging"), ".res.brownout-abc123").unwrap();
    let o = run(&["run".as_ref(), s.as_os_str(), "--out".as_ref(), out.as_os_str()], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(litter(&out), Vec::<String>::new());
    assert_eq!(litter(dir.path()), Vec::<String>::new());
    let mut kept: Vec<_> = std::fs::read_dir(out.join(".brownout")).unwrap().map(|e| e.unwrap().file_name()).collect();
    kept.sort();
    assert_eq!(kept, ["lock", "manifest"], "only the lock and the manifest stay");
}

#[test]
fn saved_scenario_has_the_seed_used() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.ron", &scenario("s", "5s", 20.0));
    let out = dir.path().join("res");
    let o = run(
        &[
            "run".as_ref(),
            s.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "--seed".as_ref(),
            "77".as_ref(),
            "--no-charts".as_ref(),
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let saved = std::fs::read_to_string(out.join("scenario.ron")).unwrap();
    assert!(saved.contains("seed: 77,"), "{saved}");
    // Re-running the saved scenario without --seed reproduces the summary.
    let again = dir.path().join("again");
    let saved_path = out.join("scenario.ron");
    let o = run(
        &["run".as_ref(), saved_path.as_os_str(), "--out".as_ref(), again.as_os_str(), "--no-charts".as_ref()],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), std::fs::read(again.join("summary.json")).unwrap());
}

#[test]
fn runaway_job_count_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.ron", &scenario("base", "5s", 20.0));
    let spec = write(
        dir.path(),
        "sweep.ron",
        r#"SweepSpec(name: "j", base: "base.ron", seed: 1, replications: 2, metrics: ["api/requests"], axes: [])"#,
    );
    for jobs in ["0", "100000"] {
        let out = dir.path().join(format!("out{jobs}"));
        let t = Instant::now();
        let o = run(
            &["sweep".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str(), "-j".as_ref(), jobs.as_ref()],
            dir.path(),
        );
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(o.status.code(), Some(2), "-j {jobs}: {}", stderr(&o));
        assert!(stderr(&o).contains(&format!("-j {jobs}")), "{}", stderr(&o));
        assert!(!out.exists(), "-j {jobs} wrote {}", out.display());
    }
}
