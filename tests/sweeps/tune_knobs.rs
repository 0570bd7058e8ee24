//! What a tune knob may be (issue 31). Index:
//! - `knobs_that_cannot_be_searched_are_refused_located`: an integer knob whose range holds no
//!   whole number (it panicked mid-search), two knobs setting one value (as sweeps refuse two
//!   axes on one value), and bad duration knobs are refused before any run, exit 2, at the
//!   knob's line in the spec, writing nothing.
//! - `a_duration_knob_takes_duration_text_or_seconds`: `Timeout.timeout` is a knob (it was "not
//!   a number"); a range written `("10ms", "200ms")` and one written `(0.01, 0.2)` (seconds) are
//!   the same search, and the setting reaches the scenario: the recommended timeout's ok ratio
//!   is the closed form 1 - exp(-T / 40 ms) of an exponential latency cut at T.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

/// Poisson 50/s, exponential 40 ms calls, a limiter that never fills (offered load 2 of 1000
/// permits) and a timeout: a call is ok when it answers within the timeout.
const SCENARIO: &str = r#"Scenario(
    name: "timeouts", seed: 5, horizon: "100s", warmup: "2s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 50.0), deadline: "60s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [(name: "t", stack: [
        (policy: Limiter((permits: 1000, queue: 0))),
        (policy: Timeout((timeout: "1s"))),
    ])],
)"#;

const TIMEOUT: &str = "policies[t].stack[1].policy.Timeout.timeout";
const PERMITS: &str = "policies[t].stack[0].policy.Limiter.permits";

/// A spec whose knobs are `knobs`, one per line, minimising the first knob subject to an ok
/// ratio of at least 0.9.
fn spec(knobs: &[String]) -> String {
    let first = knobs[0].split('"').nth(1).unwrap().to_string();
    format!(
        "TuneSpec(\n    name: \"timeouts-tune\",\n    base: \"timeouts.ron\",\n    seed: 13,\n    replications: 3,\n    policy: \"t\",\n    knobs: [\n{}\n    ],\n    decide: (minimize: \"{first}\", subject_to: [(class: \"api\", metric: \"ok_ratio\", op: Ge, value: 0.9)]),\n    budget: (runs: 30),\n)\n",
        knobs.iter().map(|k| format!("        {k},")).collect::<Vec<_>>().join("\n")
    )
}

fn knob(name: &str, path: &str, range: &str, extra: &str) -> String {
    format!("(name: \"{name}\", path: \"{path}\", range: {range}{extra})")
}

fn setup(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("timeouts.ron"), SCENARIO).unwrap();
    let p = dir.path().join("tune.ron");
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

fn tune(spec: &Path, out: &Path) -> Output {
    Command::new(BIN).arg("tune").arg(spec).arg("--out").arg(out).args(["-j", "2"]).output().unwrap()
}

#[test]
fn knobs_that_cannot_be_searched_are_refused_located() {
    let timeout = |range: &str, extra: &str| knob("call_timeout", TIMEOUT, range, extra);
    let permits = |range: &str, extra: &str| knob("permits", PERMITS, range, extra);
    // (what, knobs, the knob whose line is blamed, words the message must hold)
    let cases: Vec<(&str, Vec<String>, usize, &[&str])> = vec![
        // 2.2 .. 2.8 holds no whole number: rounding clamped 2.5 into [3, 2] and panicked.
        (
            "integer range without an integer",
            vec![permits("(from: 2.2, to: 2.8)", "")],
            0,
            &["2.2", "2.8", "whole number"],
        ),
        (
            "integer asked on a range without an integer",
            vec![timeout("(from: 0.1, to: 0.2)", ""), permits("(from: 4.1, to: 4.9)", ", integer: true")],
            1,
            &["whole number"],
        ),
        // The same value by name and by index: the second knob would overwrite the first.
        (
            "two knobs on one value",
            vec![
                permits("(from: 1, to: 50)", ""),
                knob("p2", "policies[0].stack[0].policy.Limiter.permits", "(from: 2, to: 9)", ""),
            ],
            1,
            &["same value as knobs[0]"],
        ),
        ("a duration on a number", vec![permits(r#"(from: "1s", to: "2s")"#, "")], 0, &["\"1s\"", "number"]),
        ("a text that is no duration", vec![timeout(r#"(from: "fast", to: "200ms")"#, "")], 0, &["fast"]),
        ("negative seconds", vec![timeout("(from: -0.1, to: 0.2)", "")], 0, &["-0.1", "negative"]),
        (
            "integer on a duration",
            vec![timeout(r#"(from: "1s", to: "5s")"#, ", integer: true")],
            0,
            &["integer", "seconds"],
        ),
        // The scenario refuses the range's end: Timeout.timeout must be > 0.
        (
            "an end the scenario refuses",
            vec![timeout(r#"(from: "0ms", to: "200ms")"#, "")],
            0,
            &["= 0s", "Timeout.timeout must be > 0"],
        ),
    ];
    for (what, knobs, blamed, says) in cases {
        let text = spec(&knobs);
        let (dir, p) = setup(&text);
        let out = dir.path().join("out");
        let o = tune(&p, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        let line = text.lines().position(|l| l.contains(knobs[blamed].as_str())).unwrap() + 1;
        assert!(err.contains(&format!("tune.ron:{line}:")), "{what}: want line {line}: {err}");
        for s in says {
            assert!(err.contains(s), "{what}: want {s:?}: {err}");
        }
        assert!(!out.exists(), "{what}: nothing may be written");
    }
}

fn json(dir: &Path, f: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join(f)).unwrap()).unwrap()
}

#[test]
fn a_duration_knob_takes_duration_text_or_seconds() {
    let (dir, text_spec) = setup(&spec(&[knob("call_timeout", TIMEOUT, r#"(from: "10ms", to: "200ms")"#, "")]));
    let seconds_spec = dir.path().join("seconds.ron");
    std::fs::write(&seconds_spec, spec(&[knob("call_timeout", TIMEOUT, "(from: 0.01, to: 0.2)", "")])).unwrap();
    let (a, b) = (dir.path().join("text"), dir.path().join("seconds"));
    for (s, out) in [(&text_spec, &a), (&seconds_spec, &b)] {
        let o = tune(s, out);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for f in ["recommendation.json", "trace.csv"] {
        assert_eq!(std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap(), "{f}");
    }
    let r = json(&a, "recommendation.json");
    assert_eq!(r["feasible"], true, "{r}");
    // Values are seconds, within the range.
    let t = r["recommended"]["setting"]["call_timeout"].as_f64().unwrap();
    assert!((0.01..=0.2).contains(&t), "{t}");
    let trace = std::fs::read_to_string(a.join("trace.csv")).unwrap();
    for row in trace.lines().skip(1) {
        let v: f64 = row.split(',').nth(2).unwrap().parse().unwrap();
        assert!((0.01..=0.2).contains(&v), "{row}");
    }
    // The objective is the knob itself, in seconds.
    assert_eq!(r["recommended"]["objective"]["mean"].as_f64().unwrap(), t);
    // An exponential latency of mean 40 ms cut at T answers in time with probability
    // 1 - exp(-T / 0.04); about 4,900 calls per replication give a standard error near 0.004.
    let ok = r["constraints"][0]["mean"].as_f64().unwrap();
    let want = 1.0 - (-t / 0.040).exp();
    assert!((ok - want).abs() < 0.02, "ok ratio {ok} at timeout {t} s, closed form {want}");
    // The ready-to-paste stack holds the timeout as duration text, to the nanosecond.
    let ns = (t * 1e9).round() as u64;
    let shown = brownout::engine::fmt_time(ns);
    let stack = r["recommended"]["stack"].as_str().unwrap();
    assert!(stack.contains(&format!("timeout: \"{shown}\"")), "{shown}: {stack}");
}
