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
breaker_half_open_fraction,limit_mean_count";

/// The header before issue 20.
const OLD_HEADER: &str = "policy,t_s,class,offered,ok,error,timeout,rejected,short_circuited,fallback,\
goodput_per_s,fallback_per_s,deadline_missed,business_cost,latency_p50_ms,latency_p95_ms,staleness_p95_ms,\
stale_wrong,dep_calls_per_s,dep_in_flight,dep_latency_p50_ms,dep_latency_p95_ms,workers_busy,pool_busy,\
breaker_open,breaker_half_open,limit";

fn rows() -> (brownout::metrics::summary::ScenarioSummary, Vec<brownout::metrics::WindowRow>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/r02-baseline.ron");
    let s = brownout::scenario::load(&path).unwrap();
    let m = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    let r = run_all(&m, RunOptions { timeseries: true, trace_limit: 0, events: 0 }, false);
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
    let old = csv.replacen(HEADER, OLD_HEADER, 1);
    assert_ne!(old, csv);
    let dir = tempfile::tempdir().unwrap();
    output::write_atomic(&dir.path().join("summary.json"), &output::summary_json(&summary).unwrap()).unwrap();
    output::write_atomic(&dir.path().join("timeseries.csv"), old.as_bytes()).unwrap();
    let (_, loaded) = output::charts::load_run(dir.path()).unwrap();
    assert_eq!(loaded, rows);
}
