//! `summary.csv`'s columns are append-only: a reader that indexes them by position keeps
//! working when a metric is added. The list below is the file's layout as shipped; a new
//! column goes after it (the next `.csv(N, ..)` number in the catalogue), never inside it.

use brownout::metrics::summary::ScenarioSummary;

/// The columns as shipped, in order, after `policy` and `class`. Append here when a metric
/// gains a column; never insert, reorder or remove.
const SHIPPED: &[&str] = &[
    "requests",
    "ok",
    "error",
    "timeout",
    "rejected",
    "short_circuited",
    "fallback",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_max_ms",
    "throughput_per_s",
    "goodput_per_s",
    "deadline_missed",
    "staleness_p50_ms",
    "staleness_p95_ms",
    "staleness_max_ms",
    "stale_wrong",
    "business_cost",
    "in_time",
    "in_time_ratio",
    "late",
    "breaker_transitions",
    "breaker_open_fraction",
    "breaker_cycles",
    "amplification",
    "dependency_calls",
    "recovery_s",
    "recovered",
    "degraded_fraction",
    "degraded_entries",
    "backlog_queued",
];

fn golden() -> ScenarioSummary {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/golden/grocery/summary.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn shipped_columns_keep_their_places_and_new_ones_come_after() {
    let s = golden();
    let csv = brownout::output::summary_csv(&s).unwrap();
    let mut r = csv::Reader::from_reader(csv.as_slice());
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(head[..2], ["policy", "class"]);
    assert!(head.len() >= 2 + SHIPPED.len(), "{head:?}");
    assert_eq!(head[2..2 + SHIPPED.len()], *SHIPPED, "a shipped column moved or went");
    // A value sits under its name: `goodput_per_s` (column 2 + 13) and `dependency_calls`
    // (the last shipped column) of the first row are the summary's own figures.
    let first = r.records().next().unwrap().unwrap();
    let (run, class) = (&s.runs[0], &s.runs[0].classes[0]);
    assert_eq!((&first[0], &first[1]), (run.policy.as_str(), class.class.as_str()));
    assert_eq!(first[2 + 13].parse::<f64>().unwrap(), class.goodput_per_s);
    assert_eq!(first[2 + 27].parse::<f64>().unwrap(), run.dependency.calls as f64);
}
