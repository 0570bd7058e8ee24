//! Issue 31, "stars and best never reward answering less", in sweeps: a latency of answers is
//! not ranked between settings that answered different numbers of requests (the run report's
//! rule, `catalogue::ANSWERED_MARGIN`), neither as a best setting nor as a recommendation.
//!
//! The case: Poisson arrivals at 50/s to a dependency with exponential service (mean 40 ms) on
//! 3 servers with a long queue, through a limiter without a queue whose permits are swept.
//! - 100 permits refuse nothing: an M/M/3 queue at 2 erlangs (utilisation 2/3), stable, so
//!   every request is answered (60 s deadline), and a call that finds the 3 servers busy
//!   (Erlang C(3, 2) = 4/9 of them) waits an Exp(75/s - 50/s) = 40 ms mean on top of its service.
//! - 1 permit lets one call in at a time: it never waits, so its answers take Exp(40 ms)
//!   alone and their p95 is lower; but it is an M/M/1/1 loss system at 2 erlangs, which by
//!   Erlang B answers 1 / (1 + 2) = 1/3 of the requests and refuses the rest.
//!
//! By answer p95 alone, 1 permit would be "best" and recommended; it answered a third.

use crate::common;

use std::path::Path;

use common::brownout;

const BASE: &str = r#"Scenario(
    name: "answers", seed: 7, horizon: "60s", warmup: "2s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 50.0), deadline: "60s")],
    dependency: (latency: Exponential(mean: "40ms"), capacity: (servers: 3, queue: 100000)),
    policies: [(name: "limit", stack: [(policy: Limiter((permits: 3, queue: 0)))])],
)"#;

const SPEC: &str = r#"SweepSpec(
    name: "answers", base: "base.ron", seed: 5, replications: 3,
    metrics: ["api/answered_p95_ms", "api/ok_ratio"],
    axes: [(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [1, 100])],
    decide: (minimize: "api/answered_p95_ms"),
)"#;

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_setting_that_answers_a_third_is_not_best_on_answer_latency() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.ron"), BASE).unwrap();
    std::fs::write(dir.path().join("spec.ron"), SPEC).unwrap();
    let o = brownout(&["sweep", "spec.ron", "--out", "out"], dir.path());
    let err = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{err}");
    let out = dir.path().join("out");
    let sweep = json(&out.join("sweep.json"));
    let rows = sweep["rows"].as_array().unwrap();
    let p95 = |i: usize| rows[i]["metrics"]["api/answered_p95_ms"]["mean"].as_f64().unwrap();
    // Rows in point order: permits 1, then 100. The premise: 1 permit's answers are faster
    // (no wait at the servers), which made it "best" before.
    assert_eq!(
        (rows[0]["params"]["permits"].as_f64(), rows[1]["params"]["permits"].as_f64()),
        (Some(1.0), Some(100.0))
    );
    assert!(p95(0) < p95(1), "1 permit p95 {} vs 100 permits {}", p95(0), p95(1));

    let best: Vec<&serde_json::Value> =
        sweep["best"].as_array().unwrap().iter().filter(|b| b["metric"] == "api/answered_p95_ms").collect();
    assert_eq!(best.len(), 1, "{best:?}");
    let b = best[0];
    assert!(b.get("best_row").is_none(), "a best row on a metric not comparable: {b}");
    assert_eq!(b["tied_rows"], serde_json::json!([]), "{b}");
    assert_eq!(b["significant"], false, "{b}");
    let why = b["unranked"].as_str().unwrap_or_else(|| panic!("no reason: {b}"));
    // "not comparable: answered HI vs LO": HI is every request after the warmup (50/s over
    // 58 s, about 2,900), LO a third of them (Erlang B).
    let counts: Vec<f64> = why
        .strip_prefix("not comparable: answered ")
        .unwrap_or_else(|| panic!("{why}"))
        .split(" vs ")
        .map(|n| n.replace(',', "").parse().unwrap())
        .collect();
    let (hi, lo) = (counts[0], counts[1]);
    assert!((2610.0..=3190.0).contains(&hi), "answered {hi} with 100 permits, 50/s over 58 s is 2,900");
    assert!((lo / hi - 1.0 / 3.0).abs() < 0.04, "1 permit answered {lo} of {hi}, Erlang B gives 1/3");
    // A metric of every request stays ranked.
    assert!(sweep["best"].as_array().unwrap().iter().any(|b| b["metric"] == "api/ok_ratio" && b["best_row"] == 1));

    // The terminal, the report and the best chart say why there is no best setting.
    assert!(err.contains("no best setting of api/answered_p95_ms for limit: not comparable: answered"), "{err}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("no best setting: not comparable: answered"), "report.html lacks the reason");
    let svg = std::fs::read_to_string(out.join("charts/sweep_best.svg")).unwrap();
    assert!(svg.contains("not comparable"), "sweep_best.svg lacks the reason");

    // The recommendation ranks only the settings that answered as many: 100 permits, with the
    // reason the other could not win.
    let rec = json(&out.join("recommendation.json"));
    assert_eq!(rec["recommended"]["setting"]["permits"], 100.0, "{rec}");
    let flags = rec["flags"].as_array().map(|f| f.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join("\n"));
    let flags = flags.unwrap_or_default();
    assert!(flags.contains("1 of 2 candidates were not ranked on api/answered_p95_ms"), "{rec}");
    assert!(flags.contains("limit with permits=1: not comparable: answered"), "{rec}");
}
