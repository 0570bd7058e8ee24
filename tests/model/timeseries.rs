//! `timeseries.csv` names the unit of every column (issue 20), and files written under the old
//! names still load.

use std::path::Path;

use brownout::model::{Model, RunOptions};
use brownout::output;
use brownout::runner::run_all;

/// The header, written out by hand from the README's column table.
const HEADER: &str = "policy,t_s,class,offered_count,ok_count,error_count,timeout_count,rejected_count,\
short_circuited_count,fallback_count,goodput_per_s,fallback_per_s,deadline_missed_count,business_cost_units,\
latency_p50_ms,latency_p95_ms,staleness_p95_ms,stale_wrong_count,dep_calls_per_s,dep_in_flight_mean_count,\
dep_latency_p50_ms,dep_latency_p95_ms,workers_busy_mean_count,pool_busy_mean_count,breaker_open_fraction,\
breaker_half_open_fraction,limit_mean_count,in_flight_end_count,dep_in_flight_end_count";

/// The header before issue 20.
const OLD_HEADER: &str = "policy,t_s,class,offered,ok,error,timeout,rejected,short_circuited,fallback,\
goodput_per_s,fallback_per_s,deadline_missed,business_cost,latency_p50_ms,latency_p95_ms,staleness_p95_ms,\
stale_wrong,dep_calls_per_s,dep_in_flight,dep_latency_p50_ms,dep_latency_p95_ms,workers_busy,pool_busy,\
breaker_open,breaker_half_open,limit";

fn rows() -> (brownout::metrics::summary::ScenarioSummary, Vec<brownout::metrics::WindowRow>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/r02-baseline.ron");
    let s = brownout::scenario::load(&path).unwrap();
    let m = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    let r = run_all(&m, RunOptions::new().with_timeseries(true), false);
    {
        let r = r.unwrap();
        (r.summary, r.rows)
    }
}

#[test]
fn every_column_names_its_unit() {
    let (_, rows) = rows();
    let csv = String::from_utf8(output::timeseries_csv(&rows).unwrap()).unwrap();
    let header = csv.lines().next().unwrap();
    assert_eq!(header, HEADER);
    let units = ["_s", "_count", "_per_s", "_ms", "_fraction", "_units"];
    for col in header.split(',').filter(|c| !["policy", "class"].contains(c)) {
        assert!(units.iter().any(|u| col.ends_with(u)), "{col} does not say its unit");
    }
}

#[test]
fn a_file_with_the_old_column_names_still_loads() {
    let (summary, rows) = rows();
    let csv = String::from_utf8(output::timeseries_csv(&rows).unwrap()).unwrap();
    // The columns added after issue 20 keep their names: a file with them and the old names
    // reads back whole.
    let old = csv.replacen(HEADER, &format!("{OLD_HEADER},in_flight_end_count,dep_in_flight_end_count"), 1);
    assert_ne!(old, csv);
    let dir = tempfile::tempdir().unwrap();
    output::write_atomic(&dir.path().join("summary.json"), &output::summary_json(&summary).unwrap()).unwrap();
    output::write_atomic(&dir.path().join("timeseries.csv"), old.as_bytes()).unwrap();
    let (_, loaded) = output::pages::load_run(dir.path()).unwrap();
    assert_eq!(loaded, rows);
}

/// A class that arrives only in its first window (a script), and a dependency whose calls all
/// start in the first window: every later window has no answer and no call.
const QUIET_AFTER_FIRST_WINDOW: &str = r#"Scenario(
    name: "quiet", horizon: "30s", window: "10s",
    fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: ["1s", "2s"]), deadline: "1s")],
    dependency: (latency: Constant("100ms")),
    policies: [(name: "none")],
)"#;

#[test]
fn a_window_with_no_answer_has_no_latency_and_a_run_without_a_limiter_no_limit() {
    // Nothing is 0: a percentile over no answer, and the limit of a run without a limiter, are
    // no value (NaN in memory, an empty cell in timeseries.csv, as in summary.csv), never 0 ms,
    // which a reader or a chart would take for the fastest window of the run.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quiet.ron");
    std::fs::write(&path, QUIET_AFTER_FIRST_WINDOW).unwrap();
    let s = brownout::scenario::load(&path).unwrap();
    let m = Model::build(&s, s.seed, dir.path()).unwrap();
    let r = run_all(&m, RunOptions::new().with_timeseries(true), false).unwrap();
    assert_eq!(r.rows.len(), 3, "three windows of one class");
    // The first window: two requests answered in 100 ms.
    assert_eq!(r.rows[0].ok, 2);
    assert!((r.rows[0].latency_p95_ms - 100.0).abs() < 1.0, "{}", r.rows[0].latency_p95_ms);
    for w in &r.rows[1..] {
        assert_eq!(w.ok + w.error + w.timeout + w.rejected + w.short_circuited + w.fallback, 0);
        for (col, v) in [
            ("latency_p50_ms", w.latency_p50_ms),
            ("latency_p95_ms", w.latency_p95_ms),
            ("staleness_p95_ms", w.staleness_p95_ms),
            ("dep_latency_p50_ms", w.dep_latency_p50_ms),
            ("dep_latency_p95_ms", w.dep_latency_p95_ms),
        ] {
            assert!(v.is_nan(), "window at {} s: {col} = {v}", w.t_s);
        }
    }
    for w in &r.rows {
        assert!(w.limit.is_nan(), "no limiter, yet a limit of {}", w.limit);
    }
    // Written as empty cells, read back as no value.
    let csv = String::from_utf8(output::timeseries_csv(&r.rows).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let last: Vec<&str> = csv.lines().nth(3).unwrap().split(',').collect();
    let cell = |name: &str| last[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!((cell("latency_p95_ms"), cell("limit_mean_count")), ("", ""));
    output::write_atomic(&dir.path().join("summary.json"), &output::summary_json(&r.summary).unwrap()).unwrap();
    output::write_atomic(&dir.path().join("timeseries.csv"), csv.as_bytes()).unwrap();
    let (_, loaded) = output::pages::load_run(dir.path()).unwrap();
    assert!(loaded[2].latency_p95_ms.is_nan() && loaded[0].latency_p95_ms > 0.0);
}
