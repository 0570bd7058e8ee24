//! `brownout tune` tests (the built binary). Index:
//! - `finds_the_erlang_b_optimum`: the smallest limiter size keeping 95 % of a loss system's
//!   calls, known in closed form (Erlang B), found within a budget below the exhaustive grid.
//! - `same_trace_on_any_thread_count`: `-j 1` and `-j 2` write identical files.
//! - `resumed_search_reaches_the_same_result`: a journal cut mid-search (a torn last line) and
//!   resumed gives the uninterrupted search's files, running only the missing candidates.
//! - `bad_specs_exit_2_with_line_and_column`: no knobs, an unknown metric, an unknown phase,
//!   a path that does not exist, a knob outside the searched policy set (a condition such as
//!   the dependency's latency is not a decision), an unknown policy set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

/// A loss system: Poisson 50/s, exponential 40 ms calls (offered load a = 2 erlangs), a
/// limiter of `permits` with no queue (`max_wait` only matters to a queue, which a test
/// searches), so the refused fraction is Erlang B(permits, 2).
const ERLANG: &str = r#"Scenario(
    name: "erlang", seed: 3, horizon: "200s", warmup: "5s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 50.0), deadline: "60s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [(name: "limit", stack: [(policy: Limiter((permits: 3, queue: 0, max_wait: "20ms")))])],
)"#;

/// The tune spec with `knobs` and `decide` spliced in.
fn spec(knobs: &str, decide: &str, runs: u64) -> String {
    format!(
        "TuneSpec(\n    name: \"erlang-tune\",\n    base: \"erlang.ron\",\n    seed: 11,\n    replications: 3,\n    policy: \"limit\",\n    knobs: [{knobs}],\n    decide: {decide},\n    budget: (runs: {runs}),\n)\n"
    )
}

const KNOB: &str = r#"(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", range: (from: 1, to: 20), integer: true)"#;
const DECIDE: &str = r#"(minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", op: Ge, value: 0.95)])"#;

fn setup(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("erlang.ron"), ERLANG).unwrap();
    let p = dir.path().join("tune.ron");
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

fn tune(spec: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(BIN).arg("tune").arg(spec).arg("--out").arg(out).args(extra).output().unwrap()
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap()
}

/// Erlang B by the recursion B(0) = 1, B(c) = a B(c-1) / (c + a B(c-1)).
fn erlang_b(c: u32, a: f64) -> f64 {
    (1..=c).fold(1.0, |b, k| a * b / (f64::from(k) + a * b))
}

#[test]
fn finds_the_erlang_b_optimum() {
    // The smallest c with 1 - B(c, 2) >= 0.95: B(4, 2) = 0.0952, B(5, 2) = 0.0367.
    let want = (1..=20).find(|&c| 1.0 - erlang_b(c, 2.0) >= 0.95).unwrap();
    assert_eq!(want, 5);
    assert!(1.0 - erlang_b(want - 1, 2.0) < 0.91, "the answer is not on a knife edge");
    // 20 settings x 3 replications = 60 runs exhaustively; tune gets 30.
    let (dir, p) = setup(&spec(KNOB, DECIDE, 30));
    let out = dir.path().join("out");
    ok(&tune(&p, &out, &["-j", "2"]));
    let r: serde_json::Value = serde_json::from_str(&read(&out, "recommendation.json")).unwrap();
    assert_eq!(r["source"], "tune");
    assert_eq!(r["feasible"], true, "{r}");
    assert_eq!(r["recommended"]["setting"]["permits"], f64::from(want), "{r}");
    assert!(r["candidates"].as_u64().unwrap() * 3 <= 30);
    assert_eq!(r["constraints"][0]["verdict"], "holds");
    let stack = r["recommended"]["stack"].as_str().unwrap();
    assert!(stack.contains("permits: 5"), "{stack}");
    // The runner-up is the next smaller or larger size, beaten on the objective or infeasible.
    assert!(r["runner_up"].is_object());
    let trace = read(&out, "trace.csv");
    assert!(trace.starts_with("evaluation,runs,permits,objective,feasible,violation,best_feasible\n"), "{trace}");
    let html = read(&out, "report.html");
    assert!(html.contains("Recommendation") && html.contains("<svg"), "report.html lacks its sections");
    // The ready-to-paste stack keeps its line breaks, as recommendation.json has it.
    assert!(stack.contains('\n'), "{stack}");
    let first = stack.lines().nth(1).unwrap();
    assert!(html.contains(&format!("\n{}\n", first.replace('"', "&quot;"))), "{html}");
    assert!(!html.contains("\\u{a}"), "{html}");
    assert!(out.join("charts/best.png").is_file());
}

const FILES: [&str; 3] = ["recommendation.json", "trace.csv", "report.html"];

fn same_files(a: &Path, b: &Path) {
    for f in FILES {
        assert!(read(a, f) == read(b, f), "{f} differs between {} and {}", a.display(), b.display());
    }
}

/// A 2-knob problem (permits and the limiter's queue), so the simplex moves in two dimensions.
fn two_knobs(runs: u64) -> String {
    let queue = r#"(name: "queue", path: "policies[limit].stack[0].policy.Limiter.queue", range: (from: 0, to: 8), integer: true)"#;
    spec(&format!("{KNOB}, {queue}"), DECIDE, runs)
}

#[test]
fn same_trace_on_any_thread_count() {
    let (dir, p) = setup(&two_knobs(24));
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    ok(&tune(&p, &a, &["-j", "1"]));
    ok(&tune(&p, &b, &["-j", "2"]));
    same_files(&a, &b);
}

#[test]
fn resumed_search_reaches_the_same_result() {
    let (dir, p) = setup(&spec(KNOB, DECIDE, 30));
    let (full, cut) = (dir.path().join("full"), dir.path().join("cut"));
    ok(&tune(&p, &full, &[]));
    ok(&tune(&p, &cut, &[]));
    // Keep the header and three candidates, then half a line: what a kill mid-write leaves.
    let journal = cut.join("tune-journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 5, "too few candidates to cut: {}", lines.len());
    let torn = &lines[4][..lines[4].len() / 2];
    std::fs::write(&journal, format!("{}\n{torn}", lines[..4].join("\n"))).unwrap();
    for f in FILES {
        std::fs::remove_file(cut.join(f)).unwrap();
    }
    let again = tune(&p, &cut, &[]);
    assert!(!again.status.success(), "an existing journal without --resume must be refused");
    let o = tune(&p, &cut, &["--resume", "--json"]);
    ok(&o);
    same_files(&full, &cut);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["runs"]["resumed"], 9, "{doc}");
    assert_eq!(std::fs::read_to_string(&journal).unwrap().lines().count(), lines.len());
}

#[test]
fn bad_specs_exit_2_with_line_and_column() {
    let cases: [(&str, String, &str); 6] = [
        ("no knobs", spec("", DECIDE, 30), "knob"),
        ("unknown metric", spec(KNOB, r#"(minimize: "api/bogus_ratio")"#, 30), "bogus_ratio"),
        (
            "unknown phase",
            spec(
                KNOB,
                r#"(minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", phase: "storm", op: Ge, value: 0.9)])"#,
                30,
            ),
            "storm",
        ),
        (
            "missing path",
            spec(
                r#"(name: "p", path: "policies[limit].stack[0].policy.Limiter.nope", range: (from: 1, to: 2))"#,
                DECIDE,
                30,
            ),
            "nope",
        ),
        (
            // The traffic is a condition, not a decision: a space of it alone has no
            // decision to search.
            "condition knob",
            spec(
                r#"(name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s", range: (from: 10, to: 60))"#,
                DECIDE,
                30,
            ),
            "decision",
        ),
        (
            "unknown policy",
            spec(
                r#"(name: "p", path: "policies[0].stack[0].policy.Limiter.queue", range: (from: 0, to: 4))"#,
                DECIDE,
                30,
            )
            .replace("policy: \"limit\"", "policy: \"other\""),
            "other",
        ),
    ];
    for (what, text, needle) in cases {
        let (dir, p) = setup(&text);
        let out = dir.path().join("out");
        let o = tune(&p, &out, &[]);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", String::from_utf8_lossy(&o.stderr));
        let err = String::from_utf8_lossy(&o.stderr);
        // The line of the offending value in the spec (knobs on line 7, decide on line 8).
        let line = match what {
            "no knobs" | "missing path" | "condition knob" => 7,
            "unknown policy" => 6,
            _ => 8,
        };
        assert!(err.contains(&format!("tune.ron:{line}:")), "{what}: {err}");
        assert!(err.contains(needle), "{what}: {err}");
        assert!(!out.exists(), "{what}: nothing may be written");
    }
}

#[test]
fn resume_after_a_data_file_changed_is_refused() {
    let (dir, p) = setup(&spec(KNOB, DECIDE, 9));
    let csv = ERLANG.replace("Poisson(rate_per_s: 50.0)", r#"Csv(file: "rate.csv")"#);
    assert_ne!(csv, ERLANG);
    std::fs::write(dir.path().join("erlang.ron"), csv).unwrap();
    let rates = dir.path().join("rate.csv");
    std::fs::write(&rates, "t_s,rate_per_s\n0,50.0\n").unwrap();
    let out = dir.path().join("out");
    ok(&tune(&p, &out, &[]));
    let journal = std::fs::read(out.join("tune-journal.jsonl")).unwrap();
    // Spec and scenario unchanged; the rates the scenario replays are not.
    std::fs::write(&rates, "t_s,rate_per_s\n0,25.0\n").unwrap();
    let o = tune(&p, &out, &["--resume"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "a resume took candidates of the old data: {err}");
    assert!(err.contains("cannot resume"), "{err}");
    assert_eq!(std::fs::read(out.join("tune-journal.jsonl")).unwrap(), journal);
}
