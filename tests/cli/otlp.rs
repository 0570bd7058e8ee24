//! `brownout calibrate otlp`: a scenario fitted from OpenTelemetry traces that `brownout
//! check` accepts, every value citing its spans, the route -> dependency map printed; and,
//! with the real OpenTelemetry Python SDK (installed by `.ci/run`), traces of a known shape
//! that the SDK wrote calibrate back to that shape within stated tolerances.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::otlp::{T0_NS, file, shop};
use crate::common::{BIN, brownout};

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// `brownout check` on a written scenario: exit 0.
fn check(scenario: &Path) {
    let o = Command::new(BIN).arg("check").arg(scenario).output().unwrap();
    assert!(o.status.success(), "brownout check refused {}: {}", scenario.display(), text(&o).1);
}

/// The `("time", value), // comment` lines of the list after `start` in `scenario`, up to
/// its `])`: (time text, value, comment).
fn points(scenario: &str, start: &str) -> Vec<(String, f64, String)> {
    let from = scenario.find(start).unwrap_or_else(|| panic!("no {start} in {scenario}"));
    let body = &scenario[from..from + scenario[from..].find("])").unwrap()];
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("(\""))
        .map(|l| {
            let (t, rest) = l.split_once("\", ").unwrap();
            let (v, comment) = rest.split_once("), // ").unwrap();
            (t.to_string(), v.parse().unwrap(), comment.to_string())
        })
        .collect()
}

#[test]
fn calibrate_otlp_writes_a_scenario_that_check_accepts_with_every_value_cited() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("traces.jsonl"), file("shop", &shop(), 3)).unwrap();
    // --dependency: one dependency modelled alone (without it, the two are written as a
    // graph: tests/cli/otlp_graph.rs).
    let o = brownout(
        &["calibrate", "otlp", "traces.jsonl", "--step", "10s", "--dependency", "inventory", "--out", "fitted"],
        dir.path(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    check(&dir.path().join("fitted/scenario.ron"));
    // The route -> dependency map, counted by hand from `shop`: /cart's 5 requests, 4 of
    // which call inventory once; /pay's 2 requests call payments once each.
    assert_eq!(
        out,
        "calls: class \"cart\" -> \"inventory\": 0.800 per request (4 of 5 requests call it)\n\
         calls: class \"pay\" -> \"payments\": 1.000 per request (2 of 2 requests call it)\n"
    );
    let scenario = std::fs::read_to_string(dir.path().join("fitted/scenario.ron")).unwrap();
    assert!(scenario.contains("//   class \"cart\" -> \"inventory\": 0.800 calls per request"), "{scenario}");
    // Steps of 10 s from the first span (0 s) to the last end (20 s): /cart 2 then 3
    // requests, /pay 1 and 1.
    let cart = points(&scenario, "http.route \"/cart\"");
    let t0 = T0_NS / 1_000_000_000;
    assert_eq!(
        cart,
        vec![
            ("0s".into(), 0.2, format!("2 spans starting in [{t0}.000, {}.000)", t0 + 10)),
            ("10s".into(), 0.3, format!("3 spans starting in [{}.000, {}.000)", t0 + 10, t0 + 20)),
        ]
    );
    let pay: Vec<f64> = points(&scenario, "http.route \"/pay\"").into_iter().map(|p| p.1).collect();
    assert_eq!(pay, vec![0.1, 0.1]);
    // inventory is called most: its four durations, and one ERROR of the two calls in the
    // second step.
    let csv = std::fs::read_to_string(dir.path().join("fitted/dependency-latency.csv")).unwrap();
    assert_eq!(csv, "latency_ms\n100\n200\n300\n400\n");
    assert!(scenario.contains("name: \"inventory\", // peer.service of the CLIENT spans"), "{scenario}");
    let errors: Vec<(f64, String)> =
        points(&scenario, "error_rate: Points").into_iter().map(|(_, v, c)| (v, c)).collect();
    assert_eq!(errors[0].0, 0.0);
    assert_eq!(errors[1].0, 0.5);
    assert!(errors[1].1.starts_with("1 of 2 calls starting in"), "{errors:?}");
    let report = std::fs::read_to_string(dir.path().join("fitted/fit.md")).unwrap();
    assert!(report.contains("| inventory (written) | peer.service | 4 | 1 | 0.2500 |"), "{report}");
}

// ---- the real OpenTelemetry SDK ---------------------------------------------------------

/// The trace shape the SDK writes (tests/differential/otel_trace.py): 120 s from T0; routes
/// `/checkout` at 20/s (through an INTERNAL span: `inventory` by peer.service, then
/// `payments.internal` by server.address alone), `/search` at 50/s (`inventory`), `/health`
/// at 1/s (no call). Latencies log-normal, errors at a known share.
const SHAPE: &str = r#"{"t0_ns": 1767225600000000000, "duration_s": 120, "seed": 35, "batch": 512,
 "service": "gateway",
 "routes": [
  {"route": "/checkout", "rate": 20, "internal": true, "calls": [
     {"peer_service": "inventory", "server_address": "inventory.internal", "median_ms": 40, "sigma": 0.5, "error_share": 0.05},
     {"peer_service": null, "server_address": "payments.internal", "median_ms": 120, "sigma": 0.3, "error_share": 0.2}]},
  {"route": "/search", "rate": 50, "calls": [
     {"peer_service": "inventory", "server_address": "inventory.internal", "median_ms": 40, "sigma": 0.5, "error_share": 0.05}]},
  {"route": "/health", "rate": 1, "calls": []}]}"#;

fn missing(what: &str) {
    panic!("{what} (.ci/run installs it: see tests/differential/requirements.txt)");
}

/// The standard normal density.
pub(crate) fn phi(z: f64) -> f64 {
    (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// A new folder holding `traces.jsonl`, the trace file the OpenTelemetry Python SDK writes
/// for `shape` (tests/differential/otel_trace.py); the folder and the file's path.
pub(crate) fn sdk_traces(shape: &str) -> (tempfile::TempDir, PathBuf) {
    let python = std::env::var("BROWNOUT_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.common.trace_encoder"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        missing(&format!(
            "{python} cannot import the OpenTelemetry SDK and OTLP encoder (set BROWNOUT_PYTHON to a Python that can)"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces.jsonl");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(&python)
        .arg(root.join("tests/differential/otel_trace.py"))
        .arg(&traces)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(shape.as_bytes()).unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "otel_trace.py: {}", String::from_utf8_lossy(&done.stderr));
    (dir, traces)
}

#[test]
#[ignore = "needs the OpenTelemetry Python SDK (installed by .ci/run)"]
fn traces_the_real_sdk_wrote_calibrate_back_to_their_shape() {
    let (dir, traces) = sdk_traces(SHAPE);
    let o = brownout(
        &["calibrate", "otlp", traces.to_str().unwrap(), "--dependency", "inventory", "--out", "fitted"],
        dir.path(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("skipped:"), "the SDK's spans are all countable: {err}");
    check(&dir.path().join("fitted/scenario.ron"));

    // Links, exact by construction: every /checkout request calls inventory and payments
    // once (2,400 requests in 120 s), every /search request inventory once (6,000); /health
    // calls nothing.
    assert_eq!(
        out,
        "calls: class \"search\" -> \"inventory\": 1.000 per request (6000 of 6000 requests call it)\n\
         calls: class \"checkout\" -> \"inventory\": 1.000 per request (2400 of 2400 requests call it)\n\
         calls: class \"checkout\" -> \"payments.internal\": 1.000 per request (2400 of 2400 requests call it)\n"
    );
    let scenario = std::fs::read_to_string(dir.path().join("fitted/scenario.ron")).unwrap();

    // Rates per 1-minute step: 60 s × rate requests start in each step; the last step runs
    // to the last span's end, under 1 s past 120 s, so its rate is low by under 1/60: 2 %.
    for (route, rate) in [("/search", 50.0), ("/checkout", 20.0), ("/health", 1.0)] {
        let got = points(&scenario, &format!("http.route \"{route}\""));
        assert_eq!(got.len(), 2, "{route}: {got:?}");
        assert_eq!(got[0].1, rate, "{route}: the first step holds exactly 60 s of requests");
        assert!(got[0].2.starts_with(&format!("{} spans starting in", rate * 60.0)), "{got:?}");
        assert!((got[1].1 - rate).abs() <= rate * 0.02, "{route}: {} against {rate}", got[1].1);
    }

    // inventory's latency: 8,400 durations (all written), log-normal with median 40 ms and
    // sigma 0.5, so quantile p is 40 exp(0.5 z_p). Tolerance: 5 standard errors of the
    // sample quantile in log space, sqrt(p (1 - p) / n) / (phi(z_p) / sigma).
    assert!(scenario.contains("name: \"inventory\", // peer.service of the CLIENT spans"), "{scenario}");
    let csv = std::fs::read_to_string(dir.path().join("fitted/dependency-latency.csv")).unwrap();
    let mut ms: Vec<f64> = csv.lines().skip(1).map(|l| l.parse().unwrap()).collect();
    ms.sort_by(f64::total_cmp);
    assert_eq!(ms.len(), 8_400);
    let n = ms.len() as f64;
    // z_p of the standard normal (any table): 0.5 -> 0, 0.9 -> 1.281552, 0.99 -> 2.326348.
    for (p, z) in [(0.5, 0.0f64), (0.9, 1.281_552), (0.99, 2.326_348)] {
        let got = ms[(p * n).ceil() as usize - 1];
        let want = 40.0 * (0.5 * z).exp();
        let tol = 5.0 * (p * (1.0 - p) / n).sqrt() / (phi(z) / 0.5);
        assert!((got / want).ln().abs() <= tol, "p{}: {got} ms against {want} ms (log tolerance {tol})", p * 100.0);
    }

    // inventory's error rate per step: a share 0.05 of each step's calls, within 5 binomial
    // standard deviations of the step's count.
    let errors = points(&scenario, "error_rate: Points");
    assert_eq!(errors.len(), 2);
    let mut calls = 0;
    for (_, share, comment) in &errors {
        let (e, rest) = comment.split_once(" of ").unwrap();
        let m: f64 = rest.split_once(' ').unwrap().0.parse().unwrap();
        let e: f64 = e.parse().unwrap();
        assert!((share - e / m).abs() < 1e-6);
        assert!((share - 0.05).abs() <= 5.0 * (0.05 * 0.95 / m).sqrt(), "{share} of {m} calls");
        calls += m as u64;
    }
    assert_eq!(calls, 8_400);
}
