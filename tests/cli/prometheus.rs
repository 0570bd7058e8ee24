//! Issue 35's Prometheus round trip, the parts that need no Prometheus: `brownout export
//! openmetrics` on a run folder and its refusals, and `brownout calibrate prometheus` on the
//! answers the real Prometheus gave for that export (tests/data/prometheus/README.md), which
//! must fit back to the scenario that made them. `scripts/prometheus-ci.sh` runs the whole
//! trip against the real promtool and Prometheus.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn brownout(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brownout")).args(args).output().unwrap()
}

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/prometheus").join(name).display().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A run of the round-trip scenario in `dir/run`.
fn run(dir: &Path) -> PathBuf {
    let out = dir.join("run");
    let o = brownout(&["run", &data("roundtrip.ron"), "--out", out.to_str().unwrap(), "--no-charts"]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// `brownout calibrate prometheus` on the committed answers, into `out`.
fn calibrate(out: &Path, extra: &[&str]) -> Output {
    let (a, p50, p95) = (data("arrivals.json"), data("p50.json"), data("p95.json"));
    let mut args = vec![
        "calibrate",
        "prometheus",
        &a,
        &p50,
        &p95,
        "--class",
        "api=brownout_arrivals_per_second{class=\"api\"}",
        "--latency-quantile",
        "0.5=brownout_dependency_latency_p50_seconds",
        "--latency-quantile",
        "0.95=brownout_dependency_latency_p95_seconds",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    brownout(&args)
}

/// `"15s"`, `"100031us"` in seconds.
fn secs(d: &str) -> f64 {
    let split = d.find(|c: char| c.is_ascii_alphabetic()).unwrap();
    let scale = match &d[split..] {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        u => panic!("unit {u}"),
    };
    d[..split].parse::<f64>().unwrap() * scale
}

/// The `("time", value)` points of the list after `start` in `text`, up to its `])`.
fn points(text: &str, start: &str) -> Vec<(f64, f64)> {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start} in {text}"));
    let body = &text[from..from + text[from..].find("])").unwrap()];
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("(\""))
        .map(|l| {
            let (t, rest) = l.split_once("\", ").unwrap();
            (secs(t), rest.split_once(')').unwrap().0.parse().unwrap())
        })
        .collect()
}

#[test]
fn the_round_trip_closes_calibrate_fits_back_the_scenario_that_made_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fitted");
    let o = calibrate(&out, &["--quiet-until", "4m"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let check = brownout(&["check", out.join("scenario.ron").to_str().unwrap()]);
    assert!(check.status.success(), "{}", stderr(&check));
    let text = std::fs::read_to_string(out.join("scenario.ron")).unwrap();
    // roundtrip.ron's arrivals: 20/s at 0, 60/s at 5m, 20/s at 10m, linear between. A 15 s
    // window's expected rate is the profile's mean over it, its value at the middle; the
    // count is Poisson, so the rate's standard deviation is sqrt(rate * 15) / 15. Tolerance:
    // five of them.
    let profile = |t: f64| if t <= 300.0 { 20.0 + 40.0 * t / 300.0 } else { 60.0 - 40.0 * (t - 300.0) / 300.0 };
    let arrivals = points(&text, "PoissonProfile");
    assert_eq!(arrivals.len(), 40);
    for (t, v) in arrivals {
        let want = profile(t + 7.5);
        assert!((v - want).abs() <= 5.0 * (want * 15.0).sqrt() / 15.0, "arrivals at {t} s: {v}, the scenario's {want}");
    }
    // LogNormal(median: 100 ms, sigma: 0.4): the fitted median within 5 %, sigma within 0.05.
    let l = &text[text.find("LogNormal(median: \"").unwrap() + 19..];
    let median_ms = secs(&l[..l.find('"').unwrap()]) * 1000.0;
    let sigma: f64 = l[l.find("sigma: ").unwrap() + 7..l.find(')').unwrap()].parse().unwrap();
    assert!((median_ms - 100.0).abs() <= 5.0, "median {median_ms} ms");
    assert!((sigma - 0.4).abs() <= 0.05, "sigma {sigma}");
    // Ramp(start: 4m, end: 6m, from: 1, to: 3): each window's factor within 10 % of the
    // drift's range over the window.
    let drift = |t: f64| 1.0 + 2.0 * ((t - 240.0) / 120.0).clamp(0.0, 1.0);
    for (t, f) in points(&text, "drift: Points") {
        assert!(f >= 0.9 * drift(t) && f <= 1.1 * drift(t + 15.0), "drift at {t} s: {f}");
    }
    // The fit report sets data and fitted quantiles side by side per step.
    let report = std::fs::read_to_string(out.join("fit.md")).unwrap();
    assert!(report.contains("| t | data p50 | fitted p50 | error | data p95 | fitted p95 | error |"), "{report}");
}

#[test]
fn export_writes_openmetrics_with_families_labels_and_the_anchored_clock() {
    let dir = tempfile::tempdir().unwrap();
    let run = run(dir.path());
    let file = dir.path().join("x.om");
    let o = brownout(&[
        "export",
        "openmetrics",
        run.to_str().unwrap(),
        "--start",
        "2026-01-01T00:00:00Z",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with("# EOF\n"));
    let csv = std::fs::read_to_string(run.join("timeseries.csv")).unwrap();
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    // Window 0 (t_s 0, the derived phase "before"): its offered count over the 15 s window at
    // 2026-01-01T00:00:00Z = 1767225600 s; the counter's first sample at the window's end.
    let offered: f64 = first[3].parse().unwrap();
    let rate = format!(
        "brownout_arrivals_per_second{{policy=\"none\",class=\"api\",phase=\"before\"}} {} 1767225600.000\n",
        offered / 15.0
    );
    assert!(text.contains(&rate), "{rate}");
    let counter = format!(
        "brownout_offered_requests_total{{policy=\"none\",class=\"api\",phase=\"before\"}} {offered} 1767225615.000\n"
    );
    assert!(text.contains(&counter), "{counter}");
    // A level at the window's end (the requests in flight then) is stamped at the end too.
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "in_flight_end_count").expect("the column");
    let level: f64 = first[col].parse().unwrap();
    let in_flight =
        format!("brownout_in_flight{{policy=\"none\",class=\"api\",phase=\"before\"}} {level} 1767225615.000\n");
    assert!(text.contains(&in_flight), "{in_flight}");
    for head in [
        "# TYPE brownout_offered_requests counter\n",
        "# TYPE brownout_dependency_latency_p50_seconds gauge\n# UNIT brownout_dependency_latency_p50_seconds seconds\n",
    ] {
        assert!(text.contains(head), "{head}");
    }
    // A family's samples are together: its TYPE line comes once, before all of them.
    let families: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("# TYPE ")).collect();
    let mut sorted = families.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), families.len());
}

#[test]
fn export_refuses_sweeps_bad_folders_and_bad_start_times_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = run(dir.path());
    let file = dir.path().join("x.om");
    let f = file.to_str().unwrap();
    let sweep = dir.path().join("sweep");
    std::fs::create_dir(&sweep).unwrap();
    std::fs::write(sweep.join("sweep.json"), "{}").unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (args, says) in [
        (
            vec![sweep.to_str().unwrap(), "--start", "2026-01-01T00:00:00Z"],
            "sweep.json: a sweep folder holds no time series",
        ),
        (vec![empty.to_str().unwrap(), "--start", "2026-01-01T00:00:00Z"], "not a run folder"),
        (vec![run.to_str().unwrap(), "--start", "2026-01-01 00:00"], "not an RFC 3339 time"),
        (vec![run.to_str().unwrap(), "--start", "1969-12-31T00:00:00Z"], "before 1970"),
    ] {
        let mut all = vec!["export", "openmetrics"];
        all.extend(args);
        all.extend(["--out", f]);
        let o = brownout(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{all:?}: {}", stderr(&o));
        assert!(!file.exists(), "{all:?} wrote {f}");
    }
    // Into the run folder itself: refused (its manifest lists what it holds).
    let inside = run.join("x.om");
    let o = brownout(&[
        "export",
        "openmetrics",
        run.to_str().unwrap(),
        "--start",
        "2026-01-01T00:00:00Z",
        "--out",
        inside.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!inside.exists());
}

#[test]
fn calibrate_refuses_wrong_formats_and_oversized_files_at_their_place_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fitted");
    let vector = dir.path().join("vector.json");
    std::fs::write(&vector, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}").unwrap();
    let big = dir.path().join("big.json");
    // One byte over the 64 MiB read cap (a sparse file: nothing is written to disk).
    std::fs::File::create(&big).unwrap().set_len((64 << 20) + 1).unwrap();
    for (file, says) in [
        (&vector, "vector.json:1:42: resultType is \"vector\", not \"matrix\""),
        (&big, "larger than the limit of 64 MiB"),
    ] {
        let o = brownout(&[
            "calibrate",
            "prometheus",
            file.to_str().unwrap(),
            "--class",
            "api=x",
            "--latency",
            "y",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(!out.exists());
    }
    // A folder already there is refused: calibrate writes a new one.
    let o = calibrate(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = calibrate(&out, &[]);
    assert_eq!(again.status.code(), Some(2), "an existing --out is refused: {}", stderr(&again));
}

#[test]
fn a_histogram_calibrates_to_an_empirical_latency_file_that_check_reads() {
    // Two 10 s steps of a `_seconds` histogram (rates per bucket) and a request rate: the
    // quiet step has all 100 calls in (0, 0.1] s, the next in (0.1, 0.2] s.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.json");
    let series =
        |labels: &str, a: &str, b: &str| format!("{{\"metric\":{labels},\"values\":[[1000,\"{a}\"],[1010,\"{b}\"]]}}");
    let text = format!(
        "{{\"status\":\"success\",\"data\":{{\"resultType\":\"matrix\",\"result\":[{},{},{},{}]}}}}",
        series("{\"__name__\":\"req_per_second\",\"route\":\"/a\"}", "5", "7"),
        series("{\"le\":\"0.1\"}", "100", "0"),
        series("{\"le\":\"0.2\"}", "100", "100"),
        series("{\"le\":\"+Inf\"}", "100", "100"),
    );
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("fitted");
    let o = brownout(&[
        "calibrate",
        "prometheus",
        file.to_str().unwrap(),
        "--class",
        "a=req_per_second{route=\"/a\"}",
        "--latency",
        "{le=~\"x\"}",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "only equality matchers: {}", stderr(&o));
    let o = brownout(&[
        "calibrate",
        "prometheus",
        file.to_str().unwrap(),
        "--class",
        "a=req_per_second{route=\"/a\"}",
        "--latency",
        "{__name__=\"\"}",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "a selector matching nothing: {}", stderr(&o));
    assert!(stderr(&o).contains("no series matches"), "{}", stderr(&o));
    let o = brownout(&[
        "calibrate",
        "prometheus",
        file.to_str().unwrap(),
        "--class",
        "a=req_per_second{route=\"/a\"}",
        "--latency",
        "{le=\"0.1\"}",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "a histogram without +Inf: {}", stderr(&o));
    assert!(!out.exists());
    // The three buckets: the same le labels, selected by what they share (nothing but le).
    std::fs::write(&file, std::fs::read_to_string(&file).unwrap().replace("{\"le\"", "{\"job\":\"dep\",\"le\""))
        .unwrap();
    let o = brownout(&[
        "calibrate",
        "prometheus",
        file.to_str().unwrap(),
        "--class",
        "a=req_per_second{route=\"/a\"}",
        "--latency",
        "{job=\"dep\"}",
        "--quiet-until",
        "5s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("base-latency.csv")).unwrap();
    // Quantile (i + 0.5) / 1000 of a uniform (0, 100] ms: 0.05, 0.15, ... 99.95 ms.
    assert_eq!(csv.lines().count(), 1001);
    assert!(csv.starts_with("latency_ms\n0.05\n0.15\n"), "{csv}");
    let text = std::fs::read_to_string(out.join("scenario.ron")).unwrap();
    assert!(text.contains("Empirical(file: \"base-latency.csv\")"), "{text}");
    // Median 150 ms over 50 ms: factor 3 at 10 s.
    assert!(text.contains("(\"10s\", 3.0), // median @ 1010.000"), "{text}");
    let check = brownout(&["check", out.join("scenario.ron").to_str().unwrap()]);
    assert!(check.status.success(), "{}", stderr(&check));
}
