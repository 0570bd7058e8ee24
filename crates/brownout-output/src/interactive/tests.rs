use super::*;

/// A saved summary with two policy sets and its class list cut to `classes`.
fn summary(classes: &[&str]) -> ScenarioSummary {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/golden/grocery/summary.json");
    let mut s: ScenarioSummary = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    s.runs.truncate(2);
    let template = s.setup.classes[0].clone();
    s.setup.classes = classes
        .iter()
        .map(|c| {
            let mut x = template.clone();
            x.name = c.to_string();
            x
        })
        .collect();
    s
}

fn row(policy: &str, class: &str, t: f64, goodput: f64, p95: f64) -> WindowRow {
    let mut r: WindowRow = serde_json::from_value(serde_json::json!({
        "policy": policy, "t_s": t, "class": class, "offered_count": 7, "ok_count": 1,
        "error_count": 0, "timeout_count": 2, "rejected_count": 0, "short_circuited_count": 0,
        "fallback_count": 0, "goodput_per_s": goodput, "fallback_per_s": 0.0,
        "latency_p50_ms": 0.0, "latency_p95_ms": 0.0, "staleness_p95_ms": 0.0,
        "stale_wrong_count": 0, "dep_calls_per_s": 3.5, "dep_in_flight_mean_count": 0.0,
        "dep_latency_p50_ms": 0.0, "dep_latency_p95_ms": 0.0, "workers_busy_mean_count": 0.5,
        "pool_busy_mean_count": 0.25, "breaker_open_fraction": 0.0, "breaker_half_open_fraction": 0.0,
        "limit_mean_count": 0.0
    }))
    .unwrap();
    r.latency_p95_ms = p95;
    r
}

/// The JSON element's text, parsed back.
fn embedded(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"brownout-series\">";
    let at = html.find(open).unwrap() + open.len();
    let end = at + html[at..].find("</script>").unwrap();
    serde_json::from_str(&html[at..end]).unwrap()
}

#[test]
fn each_panel_holds_the_rows_values_per_policy_and_window() {
    let s = summary(&["a", "b"]);
    let (p, q) = (s.runs[0].policy.clone(), s.runs[1].policy.clone());
    // Policy p has windows 0 and 1; q only window 1, so its window 0 is null. p's p95 in
    // window 1 is no value (NaN), which is null too, never 0.
    let rows = vec![
        row(&p, "a", 0.0, 10.0, 12.5),
        row(&p, "b", 0.0, 1.0, 3.0),
        row(&p, "a", 1.0, 20.0, f64::NAN),
        row(&p, "b", 1.0, 2.0, 4.0),
        row(&q, "a", 1.0, 30.0, 7.0),
        row(&q, "b", 1.0, 3.0, 8.0),
    ];
    let v = embedded(&section(&s, &rows, 1));
    assert_eq!(v["t"], serde_json::json!([0.0, 1.0]));
    assert_eq!(v["policies"], serde_json::json!([p, q]));
    let panel = |class: &str, column: &str| {
        v["panels"].as_array().unwrap().iter().find(|x| x["class"] == class && x["column"] == column).unwrap().clone()
    };
    assert_eq!(panel("a", "goodput_per_s")["series"], serde_json::json!([[10.0, 20.0], [null, 30.0]]));
    assert_eq!(panel("a", "latency_p95_ms")["series"], serde_json::json!([[12.5, null], [null, 7.0]]));
    assert_eq!(panel("b", "latency_p95_ms")["series"], serde_json::json!([[3.0, 4.0], [null, 8.0]]));
    assert_eq!(panel("b", "offered_count")["series"], serde_json::json!([[7.0, 7.0], [null, 7.0]]));
    // Fleet-wide columns are drawn once, from the first class's rows.
    let fleet: Vec<_> = v["panels"].as_array().unwrap().iter().filter(|x| x["group"] == "Fleet").collect();
    assert_eq!(fleet.len(), COLUMNS.iter().filter(|c| c.fleet).count());
    assert!(fleet.iter().all(|x| x["class"] == "a"));
    assert_eq!(panel("a", "pool_busy_mean_count")["series"], serde_json::json!([[0.25, 0.25], [null, 0.25]]));
}

#[test]
fn no_rows_no_section() {
    assert_eq!(section(&summary(&["a"]), &[], 1), "");
}

#[test]
fn names_cannot_close_the_script_element_or_inject_markup() {
    let evil = "</script><script>alert(1)</script><!-- & \u{2028}";
    let mut s = summary(&[evil]);
    s.runs[0].policy = "<b>p</b>".into();
    let rows = vec![row("<b>p</b>", evil, 0.0, 1.0, 1.0)];
    let html = section(&s, &rows, 1);
    assert!(!html.contains("<script>alert") && !html.contains("<b>p") && !html.contains("<!--"), "{html}");
    // Read back, the names are as written.
    let v = embedded(&html);
    assert_eq!(v["policies"][0], "<b>p</b>");
    assert_eq!(v["panels"][0]["class"], evil);
}

#[test]
fn the_inlined_files_cannot_end_their_element_and_name_one_version() {
    for (name, text) in [("uPlot.iife.min.js", UPLOT_JS), ("panels.js", PANELS_JS), ("uPlot.min.css", UPLOT_CSS)] {
        let lower = text.to_ascii_lowercase();
        assert!(!lower.contains("</script") && !lower.contains("</style") && !lower.contains("<!--"), "{name}");
    }
    assert!(UPLOT_JS.starts_with("/*! https://github.com/leeoniya/uPlot (v1.6.32) */"));
    let readme = include_str!("../../assets/uplot/README.md");
    assert!(readme.contains("uPlot 1.6.32, MIT licence") && readme.contains("`uplot@1.6.32`"));
    assert!(UPLOT_LICENSE.starts_with("The MIT License (MIT)"));
    let page = section(&summary(&["a"]), &[row("x", "a", 0.0, 1.0, 1.0)], 1);
    assert!(page.contains("uplot@1.6.32 under its MIT licence") && page.contains("Copyright (c) 2022 Leon Sorokin"));
}

#[test]
fn a_coalesced_series_says_so() {
    let s = summary(&["a"]);
    let rows = vec![row(&s.runs[0].policy.clone(), "a", 0.0, 1.0, 1.0)];
    assert!(section(&s, &rows, 3).contains("each point merges 3 saved windows"));
    assert!(section(&s, &rows, 1).contains("one window of <code>timeseries.csv</code>"));
}
