//! `run` draws the load chart (issue 34) for scenarios/metastable.ron: offered load, goodput
//! and backlog with the incident shaded and each policy set's recovery marked, listed in
//! `report.md` and `report.html`; its series are the run's `timeseries.csv`.

use std::path::Path;

use crate::common;

#[test]
fn the_metastable_run_draws_its_load_chart_and_its_backlog_series_agree_with_the_horizon() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = common::brownout(&["run", "scenarios/metastable.ron", "--out", out.to_str().unwrap()], root);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = std::fs::read(out.join("charts/load_api.png")).expect("charts/load_api.png");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG file");
    assert!(out.join("charts/load_api.svg").is_file());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("(charts/load_api.png)"), "report.md lists the chart");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("charts/load_api.png"), "report.html shows the chart");
    // The chart marks what the summary says: the stuck set's label, the others' lines.
    let svg = std::fs::read_to_string(out.join("charts/load_api.svg")).unwrap();
    assert!(svg.contains("retry: did not recover"), "the unprotected set is labelled");
    assert!(svg.contains("breaker: recovered in"), "the breaker's recovery is marked");
    // The last window ends at the horizon: its backlog at the dependency is what the world
    // counts there layer by layer (`backlog_at_end.dependency_out`, read from the world's
    // state, not from the recorder), for every policy set.
    let (summary, rows) = brownout::output::pages::load_run(&out).unwrap();
    for run in &summary.runs {
        let last = rows.iter().rev().find(|r| r.policy == run.policy).expect("rows of every policy set");
        assert_eq!(last.dep_in_flight_end_count, run.backlog_at_end.dependency_out as f64, "{}", run.policy);
        assert_eq!(last.in_flight_end_count, run.in_flight_at_end as f64, "{}", run.policy);
    }
    let retry = summary.runs.iter().find(|r| r.policy == "retry").unwrap();
    let b = retry.backlog_at_end;
    assert!(b.dependency_out > 1000, "the stuck set's queue never drained");
    // The report says it in words and figures: the stuck set did not recover (its
    // expectation), the others did; its queue per layer is a row of the backlog table.
    assert!(md.contains("| incident | api | retry | **no** | – |"), "{md}");
    assert!(md.contains("| incident | api | breaker | yes |"), "{md}");
    let row = format!(
        "| retry | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        retry.in_flight_at_end,
        b.worker_queue,
        b.workers_busy,
        b.layer_queue,
        b.limiter_queue,
        b.pool_queue,
        b.pool_busy,
        b.backoff,
        b.dependency_queue,
        b.dependency_out
    );
    assert!(md.contains("### Backlog at the horizon") && md.contains(&row), "{row}\n{md}");
    assert!(html.contains("<h2 id=\"recovery\">Recovery and backlog</h2>"));
}
