//! Guards against bad and runaway input, through the CLI: each case exits 2 with a message
//! that names the problem, and writes nothing (the output folder is never created).

use std::path::Path;
use std::process::{Command, Output};

/// A small valid scenario; each case edits one part of it.
const BASE: &str = r#"Scenario(
    name: "guard",
    horizon: "10s",
    fleet: (
        workers: (slots: 10),
        pool: (max_connections: 10, acquire_timeout: "1s"),
    ),
    classes: [
        (name: "api", arrivals: Poisson(rate_per_s: 10), deadline: "1s"),
    ],
    dependency: (
        latency: Constant("10ms"),
    ),
    policies: [
        (name: "direct", stack: []),
    ],
)
"#;

/// Write `text` as `file` in a fresh folder, run `brownout run` on it with `--out` inside
/// that folder, and return the output and whether the out folder exists afterwards.
fn run(file: &str, text: &str) -> (Output, bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    std::fs::write(&path, text).unwrap();
    let out_dir = dir.path().join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_brownout"))
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run brownout");
    let exists = Path::new(&out_dir).exists();
    (out, exists)
}

fn edited(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "BASE should contain {from}");
    BASE.replacen(from, to, 1)
}

/// Exit 2, a message containing every `needle`, nothing written.
fn assert_refused(file: &str, text: &str, needles: &[&str]) {
    let (out, wrote) = run(file, text);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "expected {n:?} in: {stderr}");
    }
    assert!(!wrote, "the output folder must not be created");
}

#[test]
fn the_base_scenario_runs_and_writes() {
    // The control: without an edit the same harness exits 0 and writes the folder.
    let (out, wrote) = run("ok.ron", BASE);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(wrote);
}

#[test]
fn runaway_arrivals_stop_at_max_in_flight() {
    // 20,000 requests/s into one worker slot whose queue is practically unbounded, each
    // call taking 100 ms: the backlog grows by ~19,990 per second, so the 5,000-request
    // guard trips within the first second, long before the 10 s horizon.
    let text = edited("workers: (slots: 10)", r#"workers: (slots: 1, queue: 4000000000, max_wait: "1h")"#)
        .replace("rate_per_s: 10", "rate_per_s: 20000")
        .replace("deadline: \"1s\"", "deadline: \"1h\"")
        .replace("Constant(\"10ms\")", "Constant(\"100ms\")")
        .replace("    policies: [", "    limits: (max_in_flight: 5000, max_events: 100000000),\n    policies: [");
    assert_refused("runaway.ron", &text, &["runaway scenario", "5000", "limits.max_in_flight", "nothing written"]);
}

#[test]
fn malformed_file_names_file_line_and_column() {
    // Without the comma after the horizon, the parser meets `fleet` on line 4, column 5.
    let text = edited("horizon: \"10s\",", "horizon: \"10s\"");
    assert_refused("broken.ron", &text, &["broken.ron:4:5:"]);
}

#[test]
fn zero_pool_is_refused() {
    assert_refused(
        "pool.ron",
        &edited("max_connections: 10", "max_connections: 0"),
        &["pool.ron:6:", "max_connections must be >= 1"],
    );
}

#[test]
fn negative_rate_is_refused() {
    assert_refused(
        "rate.ron",
        &edited("rate_per_s: 10", "rate_per_s: -5"),
        &["class \"api\"", "rate_per_s must be >= 0, got -5"],
    );
}

#[test]
fn zero_deadline_is_refused() {
    assert_refused(
        "deadline.ron",
        &edited("deadline: \"1s\"", "deadline: \"0ms\""),
        &["class \"api\": deadline must be > 0"],
    );
}

#[test]
fn drift_times_out_of_order_are_refused() {
    let ramp = r#"latency: Constant("10ms"),
        drift: Ramp(start: "5s", end: "2s", from: 1.0, to: 4.0),"#;
    assert_refused("ramp.ron", &edited("latency: Constant(\"10ms\"),", ramp), &["dependency.drift", "out of order"]);
    let points = r#"latency: Constant("10ms"),
        drift: Points([("5s", 1.0), ("2s", 4.0)]),"#;
    assert_refused("points.ron", &edited("latency: Constant(\"10ms\"),", points), &["dependency.drift", "time order"]);
}

#[test]
fn a_policy_naming_an_unknown_class_is_refused() {
    let stack = r#"(name: "direct", stack: [(policy: Timeout((timeout: "1s")), classes: ["checkout"])]),"#;
    assert_refused(
        "class.ron",
        &edited(r#"(name: "direct", stack: []),"#, stack),
        &["policy \"direct\" names unknown class \"checkout\""],
    );
}
