//! The load chart's series in `timeseries.csv` (issue 34): offered load, goodput and the
//! backlog at each window's end, worked by hand on a deterministic D/D/1 overload.

use std::path::Path;

use brownout::model::{Model, RunOptions};
use brownout::output;
use brownout::runner::run_all;

use crate::common;

/// Arrivals at exactly 20/s from 25 ms (the k-th at 25 ms + 50 ms k) to one server with a
/// constant 100 ms service (mu = 10/s), no policy, a 1,025 ms deadline, five 1 s windows.
const OVERLOAD: &str = r#"Scenario(
    name: "overload", seed: 1, horizon: "5s", window: "1s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Periodic(rate_per_s: 20, phase: "25ms"), deadline: "1025ms")],
    dependency: (latency: Constant("100ms"), capacity: (servers: 1, queue: 100000)),
    policies: [(name: "none", stack: [])],
)"#;

#[test]
fn offered_load_goodput_and_backlog_per_window_worked_by_hand() {
    // The server is busy from the first arrival on (20/s against 10/s), so the k-th request
    // finishes at 25 + 100 (k + 1) ms: latency 100 + 50 k ms, within 1,025 ms for k <= 18.
    // No arrival or answer falls on a window's edge (25 ms + multiples of 50 ms, 125 ms +
    // multiples of 100 ms).
    //   offered in each window [n, n + 1) s: 20 arrivals, 20/s.
    //   answered in window 0: k = 0..=8 (125..925 ms), 9; in window n >= 1: k = 10n - 1 ..=
    //   10n + 8, 10. In time: window 0 all 9, window 1 (k = 9..=18) all 10, later none.
    //   backlog at the end of window n (time n + 1 s): arrivals 20 (n + 1) less answers
    //   10 n + 9, i.e. 10 n + 11: 11, 21, 31, 41, 51; every one of them is a call at the
    //   dependency (queued or in service), so the dependency's count is the same.
    let s = common::scenario(OVERLOAD);
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let r = run_all(&m, RunOptions::new().with_timeseries(true), false).unwrap();
    let offered: Vec<u64> = r.rows.iter().map(|w| w.offered).collect();
    let goodput: Vec<f64> = r.rows.iter().map(|w| w.goodput_per_s).collect();
    let backlog: Vec<f64> = r.rows.iter().map(|w| w.in_flight_end_count).collect();
    let at_dependency: Vec<f64> = r.rows.iter().map(|w| w.dep_in_flight_end_count).collect();
    assert_eq!(offered, [20; 5]);
    assert_eq!(goodput, [9.0, 10.0, 0.0, 0.0, 0.0]);
    assert_eq!(backlog, [11.0, 21.0, 31.0, 41.0, 51.0]);
    assert_eq!(at_dependency, backlog);
    // The last window's end is the horizon: the summary's count of requests left agrees.
    assert_eq!(r.summary.runs[0].in_flight_at_end, 51);
    // Written to timeseries.csv as counts, and read back as written.
    let csv = String::from_utf8(output::timeseries_csv(&r.rows).unwrap()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let cells: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let column = |name: &str| cells.iter().map(|c| c[col(name)].to_string()).collect::<Vec<_>>();
    assert_eq!(column("in_flight_end_count"), ["11.0", "21.0", "31.0", "41.0", "51.0"]);
    assert_eq!(column("dep_in_flight_end_count"), ["11.0", "21.0", "31.0", "41.0", "51.0"]);
}

#[test]
fn a_file_written_before_the_backlog_columns_loads_them_as_no_value() {
    // A file without the two columns has no backlog to tell: no value (an empty chart
    // segment), never a backlog of 0.
    let s = common::scenario(OVERLOAD);
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let r = run_all(&m, RunOptions::new().with_timeseries(true), false).unwrap();
    let csv = String::from_utf8(output::timeseries_csv(&r.rows).unwrap()).unwrap();
    let old: String =
        csv.lines().map(|l| l.rsplitn(3, ',').nth(2).unwrap().to_string() + "\n").collect::<Vec<_>>().concat();
    assert!(old.lines().next().unwrap().ends_with(",limit_mean_count"), "{}", old.lines().next().unwrap());
    let dir = tempfile::tempdir().unwrap();
    output::write_atomic(&dir.path().join("summary.json"), &output::summary_json(&r.summary).unwrap()).unwrap();
    output::write_atomic(&dir.path().join("timeseries.csv"), old.as_bytes()).unwrap();
    let (_, loaded) = output::pages::load_run(dir.path()).unwrap();
    assert_eq!(loaded.len(), 5);
    for w in &loaded {
        assert!(w.in_flight_end_count.is_nan() && w.dep_in_flight_end_count.is_nan(), "{w:?}");
    }
    assert_eq!(loaded.iter().map(|w| w.offered).collect::<Vec<_>>(), [20; 5]);
}
