//! A sweep's sensitivity table (`sweep.json`'s `sensitivity`, the report's table and the
//! tornado chart) ranks the axes by how much each moves the metric, on a construction whose
//! answer is known without brownout: an Erlang loss system (Poisson 50/s, exponential 40 ms
//! service, so a = 2 Erlang) behind an outer limiter of `permits` without a queue, and an
//! inner limiter of `inner` permits that can never be reached.
//!
//! - `permits` moves the in-time ratio by Erlang B: a request is refused with probability
//!   B(c, 2), and one admitted finishes far within its 60 s deadline, so the in-time ratio is
//!   1 − B(c, 2). B(1, 2) = 2 / 3 and B(4, 2) = (16/24) / (1 + 2 + 2 + 8/6 + 16/24) = 2/21:
//!   in time 1/3 and 19/21, a width of 19/21 − 1/3 = 4/7 = 0.5714.
//! - `inner` (1,000 or 2,000 permits) sits inside a limiter of at most 4: it never holds more
//!   than 4 requests, so it never refuses, and every draw is counter-based, so the runs are the
//!   same bit for bit: a width of exactly 0, not beyond noise.

use crate::common;

use common::brownout;

const SCENARIO: &str = r#"Scenario(
    name: "erlang-two-limits", seed: 3, horizon: "22s", warmup: "2s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 50.0), deadline: "60s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [
        (name: "limit", stack: [
            (policy: Limiter((permits: 3, queue: 0))),
            (policy: Limiter((permits: 1000, queue: 0))),
        ]),
    ],
)"#;

/// The inert axis comes first, so a ranking by axis order would put it on top.
const SPEC: &str = r#"SweepSpec(
    name: "two-limits",
    base: "base.ron",
    seed: 5,
    replications: 4,
    metrics: ["api/in_time_ratio"],
    axes: [
        (name: "inner", path: "policies[limit].stack[1].policy.Limiter.permits", values: [1000, 2000]),
        (name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [1, 4]),
    ],
    decide: (maximize: "api/in_time_ratio"),
)"#;

#[test]
fn the_axis_that_moves_the_metric_ranks_first_and_the_inert_one_has_no_width() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.ron"), SCENARIO).unwrap();
    std::fs::write(dir.path().join("spec.ron"), SPEC).unwrap();
    let out = dir.path().join("out");
    let o = brownout(&["sweep", "spec.ron", "-q", "-j", "2", "--out", out.to_str().unwrap()], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
    let list = doc["sensitivity"].as_array().expect("a sensitivity list");
    assert_eq!(list.len(), 1, "{list:?}");
    let s = &list[0];
    assert_eq!((s["metric"].as_str(), s["role"].as_str()), (Some("api/in_time_ratio"), Some("objective")));
    // Held at the recommended setting: the most permits.
    assert_eq!(s["anchor"]["permits"], 4.0, "{s}");
    let rows = s["rows"].as_array().unwrap();
    let axes: Vec<&str> = rows.iter().map(|r| r["axis"].as_str().unwrap()).collect();
    assert_eq!(axes, ["permits", "inner"], "widest first: {s}");
    let (lo, hi, width) =
        (rows[0]["lo"].as_f64().unwrap(), rows[0]["hi"].as_f64().unwrap(), rows[0]["width"].as_f64().unwrap());
    // Erlang B by hand (module doc); about 1,000 requests per replication and 4 replications
    // put the means within a few points of it.
    assert!((lo - 1.0 / 3.0).abs() < 0.05, "in time at 1 permit: {lo}");
    assert!((hi - 19.0 / 21.0).abs() < 0.05, "in time at 4 permits: {hi}");
    assert!((width - 4.0 / 7.0).abs() < 0.07 && rows[0]["significant"] == true, "{s}");
    assert_eq!(
        (rows[1]["width"].as_f64(), &rows[1]["significant"]),
        (Some(0.0), &serde_json::Value::Bool(false)),
        "{s}"
    );
    assert_eq!(rows[0]["mover"], "decision");
    // The tornado chart and the report's table.
    assert!(out.join("charts/sensitivity_api_in_time_ratio.png").exists());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h3>Sensitivity of api/in_time_ratio (objective)</h3>"), "{html}");
    let permits_row = html.find("<tr><td>permits</td><td>decision</td>").expect("the permits row");
    let inner_row = html.find("<tr><td>inner</td><td>decision</td>").expect("the inner row");
    assert!(permits_row < inner_row, "widest first in the table too");
}

/// `tune` gives the same tornado (docs/tune.md, "Sensitivity"): after the search, each knob at
/// its range's low and high end, the other at the recommended setting. On the construction
/// above, `permits` from 1 to 4 swings the in-time ratio by Erlang B's 4/7 (the recommended
/// setting in between can only lie within that span, as the in-time ratio 1 − B(c, 2) rises
/// with c), and `inner` from 1,000 to 2,000 behind a limiter of at most 4 moves nothing: width
/// exactly 0, not beyond noise. A `--resume` recomputes the same figures; `--no-sensitivity`
/// skips them and removes their charts.
#[test]
fn a_tune_reports_the_swing_of_each_knob_over_its_range() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.ron"), SCENARIO).unwrap();
    let spec = r#"TuneSpec(
    name: "two-limits-tune", base: "base.ron", seed: 5, replications: 4, policy: "limit",
    knobs: [(name: "inner", path: "policies[limit].stack[1].policy.Limiter.permits",
             range: (from: 1000, to: 2000), integer: true),
            (name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits",
             range: (from: 1, to: 4), integer: true)],
    decide: (maximize: "api/in_time_ratio"),
    budget: (runs: 24),
)"#;
    std::fs::write(dir.path().join("tune.ron"), spec).unwrap();
    let out = dir.path().join("out");
    let run = |extra: &[&str]| {
        let mut args = vec!["tune", "tune.ron", "--json", "--out", out.to_str().unwrap()];
        args.extend(extra);
        let o = brownout(&args, dir.path());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (common::document(&o), String::from_utf8_lossy(&o.stderr).to_string())
    };
    let (doc, err) = run(&[]);
    let sens = &doc["sensitivity"];
    let m = &sens["metrics"][0];
    assert_eq!((m["metric"].as_str(), m["role"].as_str()), (Some("api/in_time_ratio"), Some("objective")), "{sens}");
    let rows = m["rows"].as_array().unwrap();
    // Widest first: permits, then the inert knob.
    assert_eq!((rows[0]["axis"].as_str(), rows[1]["axis"].as_str()), (Some("permits"), Some("inner")), "{sens}");
    let width = rows[0]["width"].as_f64().unwrap();
    assert!((width - 4.0 / 7.0).abs() < 0.05, "permits swings the in-time ratio by {width}, Erlang B gives 4/7");
    assert_eq!(rows[0]["significant"], true, "{sens}");
    assert_eq!((rows[1]["width"].as_f64(), &rows[1]["significant"]), (Some(0.0), &serde_json::json!(false)), "{sens}");
    let labels: Vec<&str> = rows[0]["steps"].as_array().unwrap().iter().filter_map(|s| s["label"].as_str()).collect();
    assert_eq!((labels.first(), labels.last()), (Some(&"1"), Some(&"4")), "the range's integer ends: {labels:?}");
    // Outside the budget, and said so: at most 2 ends per knob plus the recommended setting,
    // 4 replications each, fewer where the search had run a setting already.
    let (runs, settings) = (sens["runs"].as_u64().unwrap(), sens["settings"].as_u64().unwrap());
    assert!(settings <= 5 && runs <= 4 * settings && runs % 4 == 0, "{sens}");
    assert!(err.contains(&format!("{runs} runs outside the budget")), "{err}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<h2>Sensitivity</h2>") && html.contains("<h3>Sensitivity of api/in_time_ratio (objective)</h3>")
    );
    assert!(out.join("charts/sensitivity_api_in_time_ratio.png").exists());

    // A resumed tune recomputes the same figures.
    let (again, _) = run(&["--resume"]);
    assert_eq!(again["sensitivity"]["metrics"], doc["sensitivity"]["metrics"]);
    let (skipped, _) = run(&["--resume", "--no-sensitivity"]);
    assert!(skipped["sensitivity"].is_null(), "{skipped}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h2>Sensitivity</h2>\n<p>Not estimated (<code>--no-sensitivity</code>).</p>"), "{html}");
    // The charts of the sensitivity runs it did not make are gone with them.
    for ext in ["png", "svg"] {
        assert!(!out.join(format!("charts/sensitivity_api_in_time_ratio.{ext}")).exists(), "stale {ext} chart left");
    }
}
