//! A class's SLO (issue 35, docs/slo.md): burn rate and error budget used per run and phase,
//! and when a multi-window burn-rate alert first fires on the time series, all worked by hand.

use std::path::Path;

use crate::common;

use brownout::metrics::slo::{AlertRule, first_firing, window_counts};
use brownout::model::{Model, RunOptions};
use brownout::runner::run_all;

/// Ten scripted requests to a dependency answering in 10 ms, 300 ms slower for calls started
/// in [2 s, 3 s); the deadline is 100 ms, no policy. Each request finishes 10 ms after it
/// arrives, except the three of the slow second (2.2, 2.4, 2.6 s), which answer at 310 ms:
/// late, so not in time. SLO: 90 % in time over an hour.
const SCENARIO: &str = r#"Scenario(
    name: "slo", horizon: "4s", window: "1s",
    fleet: (instances: 1, workers: (slots: 20), pool: (max_connections: 20, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: ["500ms", "1s", "1500ms", "2200ms", "2400ms", "2600ms",
        "3200ms", "3400ms", "3600ms", "3800ms"]), deadline: "100ms",
        slo: (target: 0.9, window: "1h", alerts: [
            (name: "fast", burn: 5.0, long: "2s", short: "1s"),
            (name: "slow", burn: 7.0, long: "2s", short: "1s"),
        ]))],
    dependency: (latency: Constant("10ms"), modes: [(at: "2s", mode: Slow("300ms")), (at: "3s", mode: Healthy)]),
    phases: [(name: "calm", start: "0s", end: "2s"), (name: "incident", start: "2s", end: "3s")],
    policies: [(name: "none", stack: [])],
)"#;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

#[test]
fn burn_rate_and_budget_used_per_run_and_phase_match_the_hand_arithmetic() {
    let s = common::run_text(SCENARIO);
    let run = &s.runs[0].classes[0];
    // Whole run, measured 4 s (no warm-up): 10 requests, 7 in time, bad = 3.
    //   burn = (3 / 10) / (1 - 0.9) = 0.3 / 0.1 = 3
    //   budget used = burn * T / W = 3 * 4 s / 3600 s = 1/300
    assert_eq!((run.requests, run.in_time), (10, 7));
    let f = run.slo.expect("the class has an SLO");
    assert!(close(f.burn_rate, 3.0), "{}", f.burn_rate);
    assert!(close(f.budget_used, 1.0 / 300.0), "{}", f.budget_used);
    // The incident [2 s, 3 s): the 3 slow requests, all bad.
    //   burn = (3 / 3) / 0.1 = 10; budget used = 10 * 1 s / 3600 s = 1/360
    let incident = &s.phases.iter().find(|p| p.name == "incident").unwrap().runs[0].classes[0];
    assert_eq!((incident.requests, incident.in_time), (3, 0));
    let f = incident.slo.unwrap();
    assert!(close(f.burn_rate, 10.0) && close(f.budget_used, 1.0 / 360.0), "{f:?}");
    // Calm [0 s, 2 s): 3 requests, all in time: nothing burns.
    let calm = &s.phases.iter().find(|p| p.name == "calm").unwrap().runs[0].classes[0];
    assert_eq!((calm.requests, calm.in_time), (3, 3));
    assert_eq!((calm.slo.unwrap().burn_rate, calm.slo.unwrap().budget_used), (0.0, 0.0));
    // The derived phase after the incident [3 s, 4 s) is not written: no phases beyond the two.
    assert_eq!(s.phases.len(), 2);
    // The catalogue reads them, so expectations and decide can use them.
    let burn = brownout::metrics::catalogue::by_path("api/burn_rate").unwrap();
    assert!(close(burn.value(&s.runs[0], Some(run)).unwrap(), 3.0));
    let used = brownout::metrics::catalogue::by_path("api/budget_used").unwrap();
    assert!(close(used.value(&s.runs[0], Some(run)).unwrap(), 1.0 / 300.0));
}

#[test]
fn a_class_without_an_slo_has_no_figures_and_the_metrics_no_value() {
    let text = SCENARIO.replace(
        r#"slo: (target: 0.9, window: "1h", alerts: [
            (name: "fast", burn: 5.0, long: "2s", short: "1s"),
            (name: "slow", burn: 7.0, long: "2s", short: "1s"),
        ])"#,
        "",
    );
    assert_ne!(text, SCENARIO);
    let s = common::run_text(&text);
    let c = &s.runs[0].classes[0];
    assert!(c.slo.is_none());
    let json = serde_json::to_value(c).unwrap();
    assert!(json.get("slo").is_none(), "no slo key: summaries without one keep their bytes");
    let burn = brownout::metrics::catalogue::by_path("api/burn_rate").unwrap();
    assert!(burn.value(&s.runs[0], Some(c)).unwrap().is_nan());
}

#[test]
fn an_alert_fires_at_the_end_of_the_first_window_both_look_backs_burn_too_fast() {
    let s = common::scenario(SCENARIO);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let r = run_all(&model, RunOptions::new().with_timeseries(true), false).unwrap();
    let w = window_counts(&r.rows, "none", "api", 0.0, 1.0, 4.0);
    // By hand, requests by the window they finish in (windows (start, end]):
    //   (0,1]: 0.51                 n 1, bad 0
    //   (1,2]: 1.01, 1.51           n 2, bad 0
    //   (2,3]: 2.51, 2.71, 2.91     n 3, bad 3 (late)
    //   (3,4]: 3.21, 3.41, 3.61, 3.81 n 4, bad 0
    assert_eq!(w, vec![(1.0, 1, 0), (2.0, 2, 0), (3.0, 3, 3), (4.0, 4, 0)]);
    // "fast" (burn > 5 over 2 s and over 1 s): at 2 s nothing burns; at 3 s the 2 s look-back
    // holds (1,3]: bad 3 of 5 = 0.6, burn 0.6 / 0.1 = 6 > 5, and the 1 s look-back (2,3]:
    // 3 of 3, burn 10 > 5: it fires at 3 s.
    let rule = |name: &str, burn: f64| AlertRule { name: name.into(), burn, long_s: 2.0, short_s: 1.0 };
    assert_eq!(first_firing(&w, 0.9, &rule("fast", 5.0)), Some(3.0));
    // "slow" (burn > 7): at 3 s the long look-back burns 6; at 4 s (2,4]: 3 of 7, burn
    // 4.29; it never fires.
    assert_eq!(first_firing(&w, 0.9, &rule("slow", 7.0)), None);
}

#[test]
fn a_bad_slo_is_refused_at_its_line() {
    for (bad, field) in [
        (r#"target: 1.0, window: "1h""#, "slo.target"),
        (r#"target: 0.9, window: "0s""#, "slo.window"),
        (r#"target: 0.9, window: "1h", alerts: [(name: "p", burn: 2.0, long: "1s", short: "2s")]"#, "short"),
    ] {
        let text = SCENARIO.replace(
            r#"target: 0.9, window: "1h", alerts: [
            (name: "fast", burn: 5.0, long: "2s", short: "1s"),
            (name: "slow", burn: 7.0, long: "2s", short: "1s"),
        ]"#,
            bad,
        );
        let e = brownout::scenario::load_text(Path::new("inline.ron"), &text).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains("inline.ron:6:"), "{bad}: {e}");
    }
}
