//! The fit on small hand-made answers: each value checked against a hand calculation, and
//! each kind of messy input skipped with its series and time, or refused at its place.

use std::path::Path;

use super::*;

/// A query_range answer of `series` (labels as JSON text, samples (t s, "v")).
fn answer(series: &[(&str, Vec<(f64, &str)>)]) -> String {
    let items: Vec<String> = series
        .iter()
        .map(|(labels, samples)| {
            let v: Vec<String> = samples.iter().map(|(t, v)| format!("[{t},\"{v}\"]")).collect();
            format!("{{\"metric\":{labels},\n\"values\":[{}]}}", v.join(",\n"))
        })
        .collect();
    format!("{{\"status\":\"success\",\"data\":{{\"resultType\":\"matrix\",\"result\":[\n{}]}}}}", items.join(",\n"))
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn gauge(name: &str, class: &str, values: &[&'static str]) -> (String, Vec<(f64, &'static str)>) {
    let labels = format!("{{\"__name__\":\"{name}\",\"class\":\"{class}\"}}");
    (labels, values.iter().enumerate().map(|(i, v)| (1000.0 + 10.0 * i as f64, *v)).collect())
}

/// Rates 10, 20, 30 at 1000, 1010, 1020 s; p50 of 0.1, 0.1, 0.2 s and p95 of 0.2, 0.2, 0.4 s.
fn quantile_input(rate: [&'static str; 3]) -> Vec<Series> {
    let parts = [
        gauge("req_per_second", "api", &rate),
        gauge("lat_p50_seconds", "", &["0.1", "0.1", "0.2"]),
        gauge("lat_p95_seconds", "", &["0.2", "0.2", "0.4"]),
    ];
    let refs: Vec<(&str, Vec<(f64, &str)>)> = parts.iter().map(|(l, v)| (l.as_str(), v.clone())).collect();
    read_text(Path::new("in.json"), &answer(&refs)).unwrap()
}

fn quantile_opts() -> Options {
    Options {
        classes: vec![("api".into(), sel("req_per_second{class=\"api\"}"))],
        latency: LatencySource::Quantiles(vec![(0.5, sel("lat_p50_seconds")), (0.95, sel("lat_p95_seconds"))]),
        quiet_until: Some(Dur::secs(15)),
        latency_file: "base.csv".into(),
    }
}

#[test]
fn quantile_series_fit_a_log_normal_and_a_drift_and_check_accepts_the_scenario() {
    let c = calibrate(&quantile_input(["10", "20", "30"]), &quantile_opts()).unwrap();
    assert_eq!(c.arrivals, vec![("api".to_string(), vec![(0, 10.0), (10_000, 20.0), (20_000, 30.0)])]);
    // Quiet steps 0 s and 10 s: median 100 ms; sigma = ln(0.2 / 0.1) / z(0.95) = 0.693147 /
    // 1.644854 = 0.421404 (Python: math.log(2) / statistics.NormalDist().inv_cdf(0.95) =
    // 0.4214036, rounded to six places).
    let Base::LogNormal { median_ms, sigma } = c.base else { panic!("{:?}", c.base) };
    assert_eq!(median_ms, 100.0);
    assert_eq!(sigma, 0.421404);
    assert_eq!(c.drift, vec![(0, 1.0), (10_000, 1.0), (20_000, 2.0)]);
    // Every fitted value cites its series and time.
    assert!(c.scenario.contains("(\"20s\", 30.0), // req_per_second{class=\"api\"} @ 1020.000"), "{}", c.scenario);
    crate::scenario::load_text(Path::new("calibrated.ron"), &c.scenario)
        .unwrap_or_else(|e| panic!("{e}\n{}", c.scenario));
    // The fit report: p95 fitted = 200 ms * 2 at 20 s, as the data.
    assert!(c.report.contains("| 20s | 200.000 | 200.000 | +0.0 % | 400.000 | 400.000 | +0.0 % |"), "{}", c.report);
}

#[test]
fn nan_and_negative_samples_are_skipped_with_their_series_and_time() {
    let c = calibrate(&quantile_input(["10", "NaN", "-1"]), &quantile_opts()).unwrap();
    assert_eq!(c.arrivals[0].1, vec![(0, 10.0)]);
    let said: Vec<String> = c.skipped.iter().map(ToString::to_string).collect();
    assert!(said.iter().any(|s| s.starts_with("req_per_second{class=\"api\"} at 1010.000: value NaN")), "{said:?}");
    assert!(said.iter().any(|s| s.starts_with("req_per_second{class=\"api\"} at 1020.000: value -1")), "{said:?}");
}

#[test]
fn a_counter_is_turned_into_a_rate_and_a_reset_counted_from_zero() {
    // 100, 200, 50 (reset), 150 at a 10 s step: increases 100, 50 (from 0), 100 = 10, 5, 10 /s.
    let parts = [
        gauge("req_total", "api", &["100", "200", "50", "150"]),
        gauge("lat_p50_seconds", "", &["0.1", "0.1", "0.1", "0.1"]),
        gauge("lat_p95_seconds", "", &["0.2", "0.2", "0.2", "0.2"]),
    ];
    let refs: Vec<(&str, Vec<(f64, &str)>)> = parts.iter().map(|(l, v)| (l.as_str(), v.clone())).collect();
    let series = read_text(Path::new("in.json"), &answer(&refs)).unwrap();
    let mut opts = quantile_opts();
    opts.classes = vec![("api".into(), sel("req_total"))];
    let c = calibrate(&series, &opts).unwrap();
    assert_eq!(c.arrivals[0].1, vec![(10_000, 10.0), (20_000, 5.0), (30_000, 10.0)]);
    assert!(c.skipped.iter().any(|k| k.t_s == 1020.0 && k.reason.starts_with("counter reset")), "{:?}", c.skipped);
}

/// Buckets (le, counts per step) of a `_seconds` histogram given as increases per step.
fn histogram(buckets: &[(&str, [&'static str; 2])]) -> Vec<Series> {
    let mut parts: Vec<(String, Vec<(f64, &str)>)> = vec![gauge("req_per_second", "api", &["1", "1"])];
    for (le, v) in buckets {
        parts.push((format!("{{\"le\":\"{le}\",\"job\":\"dep\"}}"), vec![(1000.0, v[0]), (1010.0, v[1])]));
    }
    let refs: Vec<(&str, Vec<(f64, &str)>)> = parts.iter().map(|(l, v)| (l.as_str(), v.clone())).collect();
    read_text(Path::new("h.json"), &answer(&refs)).unwrap()
}

fn histogram_opts() -> Options {
    Options {
        classes: vec![("api".into(), sel("req_per_second"))],
        latency: LatencySource::Histogram(sel("{job=\"dep\"}")),
        quiet_until: Some(Dur::secs(5)),
        latency_file: "base.csv".into(),
    }
}

#[test]
fn histogram_quantiles_interpolate_as_prometheus_does() {
    // Prometheus's bucketQuantile: 10 at <= 0.1, 30 at <= 0.2, 40 in all. Median: rank 20, in
    // (0.1, 0.2] holding 20, 10 of them: 0.1 + 0.1 * 10 / 20 = 0.15. p99: rank 39.6 lies in
    // +Inf: the largest finite bound, 0.2. p10: rank 4 in the first bucket: 0.1 * 4 / 10.
    let b = [(0.1, 10.0), (0.2, 30.0), (f64::INFINITY, 40.0)];
    assert!((bucket_quantile(0.5, &b) - 0.15).abs() < 1e-12);
    assert_eq!(bucket_quantile(0.99, &b), 0.2);
    assert!((bucket_quantile(0.1, &b) - 0.04).abs() < 1e-12);
}

#[test]
fn a_histogram_gives_an_empirical_base_and_the_median_ratio_as_drift() {
    // Step 1000 (quiet): 100 in (0, 0.1] s: median 50 ms. Step 1010: 100 in (0.1, 0.2]:
    // median 150 ms; factor 3.
    let c = calibrate(
        &histogram(&[("0.1", ["100", "0"]), ("0.2", ["100", "100"]), ("+Inf", ["100", "100"])]),
        &histogram_opts(),
    )
    .unwrap();
    let Base::Empirical(v) = &c.base else { panic!() };
    // Point i at quantile (i + 0.5) / 1000 of a uniform (0, 100] ms: 0.1 * (i + 0.5) ms.
    assert_eq!((v.len(), v[0], v[999]), (1000, 0.05, 99.95));
    assert_eq!(c.drift, vec![(0, 1.0), (10_000, 3.0)]);
    assert!(c.latency_csv.as_deref().unwrap().starts_with("latency_ms\n0.05\n0.15\n"));
}

#[test]
fn non_monotonic_buckets_are_skipped_and_a_histogram_without_inf_is_refused() {
    let c = calibrate(
        &histogram(&[("0.1", ["100", "50"]), ("0.2", ["100", "40"]), ("+Inf", ["100", "40"])]),
        &histogram_opts(),
    )
    .unwrap();
    assert_eq!(c.drift, vec![(0, 1.0)]);
    assert!(
        c.skipped.iter().any(|k| k.t_s == 1010.0 && k.reason.starts_with("buckets not monotonic")),
        "{:?}",
        c.skipped
    );
    let e = calibrate(&histogram(&[("0.1", ["100", "0"]), ("0.2", ["100", "100"])]), &histogram_opts()).unwrap_err();
    // The first bucket series' object: line 5 of the answer (line 1 the header, 2 to 4 the
    // rate series).
    assert_eq!((e.file.as_path(), e.line, e.col), (Path::new("h.json"), 5, 1), "{e}");
    assert!(e.message.contains("no le=\"+Inf\" bucket"), "{e}");
}

#[test]
fn mixed_steps_and_wrong_formats_are_refused_where_they_are() {
    let text = answer(&[("{\"__name__\":\"r\"}", vec![(1000.0, "1"), (1010.0, "1"), (1025.0, "1")])]);
    let series = read_text(Path::new("m.json"), &text).unwrap();
    let mut opts = quantile_opts();
    opts.classes = vec![("api".into(), sel("r"))];
    opts.latency = LatencySource::Quantiles(vec![(0.5, sel("r")), (0.9, sel("r"))]);
    let e = calibrate(&series, &opts).unwrap_err();
    // The third sample, on the series' third line after the header: line 5.
    assert_eq!((e.line, e.col), (5, 1), "{e}");
    assert!(e.message.contains("not a whole number of steps"), "{e}");
    let e = read_text(
        Path::new("v.json"),
        "{\"status\":\"success\",\n \"data\":{\"resultType\":\"vector\",\"result\":[]}}",
    )
    .unwrap_err();
    // Line 2: a space, `"data":{` (8 characters), `"resultType":` (13): the value at column 23.
    assert_eq!((e.line, e.col), (2, 23), "{e}");
    assert!(e.message.contains("not \"matrix\""), "{e}");
    let e = read_text(Path::new("x.json"), "[1, 2]").unwrap_err();
    assert!(e.message.contains("not a /api/v1/query_range answer"), "{e}");
    let e = read_text(Path::new("bad.json"), "{\"status\": ").unwrap_err();
    assert!(e.line >= 1 && e.message.contains("malformed JSON"), "{e}");
}

#[test]
fn selectors_read_names_and_equality_matchers() {
    let s = sel("req_total{class=\"a\\\"b\", job=\"x\"}");
    assert_eq!(
        s.labels,
        vec![("__name__".into(), "req_total".into()), ("class".into(), "a\"b".into()), ("job".into(), "x".into())]
    );
    assert!(Selector::parse("x{a=~\"b\"}").is_err());
    assert!(Selector::parse("{}").is_err());
}
