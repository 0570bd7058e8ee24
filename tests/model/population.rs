//! Every figure over the right population (issue 30, items 1 to 3): requests still in flight
//! at the horizon, figures over no sample, and gauge extremes at the start of a span. Each
//! expected value is worked out by hand in the comments.

use std::path::Path;

use brownout::model::{Model, RunOptions, RunResult, run_policy};
use brownout::scenario::*;

fn model(text: &str) -> Model {
    let s = parse(Path::new("population.ron"), text).unwrap();
    validate(&s).unwrap();
    Model::build(&s, 1, Path::new(".")).unwrap()
}

/// A count in `x`'s JSON at `pointer`: read this way, the tests also compile against a
/// summary without the field, and fail there instead of not building.
fn count(x: &impl serde::Serialize, pointer: &str) -> u64 {
    let v = serde_json::to_value(x).unwrap();
    v.pointer(pointer).and_then(serde_json::Value::as_u64).unwrap_or_else(|| panic!("no count at {pointer}"))
}

fn run(m: &Model, policy: usize) -> RunResult {
    run_policy(m, policy, RunOptions::default()).expect("runs")
}

/// The issue's repro: Poisson 10/s, deadline 1 s, a 100 ms dependency that becomes 1000x
/// slower (100 s) at 50 s, horizon 100 s; no policy, and a Timeout of 800 ms.
const SLOW_AT_50S: &str = r#"Scenario(
    name: "in-flight-at-horizon", horizon: "100s", window: "10s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 10), deadline: "1s")],
    dependency: (latency: Constant("100ms"), drift: Step(at: "50s", factor: 1000.0)),
    policies: [
        (name: "none"),
        (name: "timeout", stack: [(policy: Timeout((timeout: "800ms")))]),
    ],
)"#;

#[test]
fn requests_in_flight_at_the_horizon_are_judged_or_counted_apart() {
    // By hand. A call that starts before 50 s takes 100 ms, one that starts at or after 50 s
    // takes 100 s, so nothing that arrives after 50 s finishes by the 100 s horizon.
    // - Arrivals in [0, 50 s): answered in 100 ms, in time, under both sets.
    // - "none": arrivals in [50 s, 99 s] are still out at 100 s, their 1 s deadline passed:
    //   not in time, cause `unfinished`. Arrivals in (99 s, 100 s] are still within their
    //   deadline: counted apart, not in `requests`.
    // - "timeout": arrivals in [50 s, 99.2 s] time out after 800 ms, by 100 s (cause
    //   attempt_timeout); arrivals in (99.2 s, 100 s] are out and within their deadline.
    // About 10/s x 100 s = 1,000 arrivals, 500 of them before 50 s, and 990 (none) or 992
    // (timeout) judged: in time about 500 / 990 = 50.5 %. The Poisson count before 50 s has
    // a standard deviation of sqrt(500) = 22, so the ratio lies within 0.505 +- 0.045 (two
    // standard deviations of 500 +- 22 over 990, rounded out). Before the fix "none" read
    // 100 % over the ~505 requests that finished.
    let m = model(SLOW_AT_50S);
    let (none, timeout) = (run(&m, 0), run(&m, 1));
    for (name, r) in [("none", &none), ("timeout", &timeout)] {
        let c = &r.summary.classes[0];
        assert!((0.46..=0.55).contains(&c.in_time_ratio), "{name}: in time {}", c.in_time_ratio);
        // Every arrival (no warm-up) is judged or still within its deadline.
        assert_eq!(c.requests + count(c, "/in_flight_within_deadline"), r.requests, "{name}");
        assert_eq!(c.requests, c.in_time + c.causes.total(), "{name}");
        // Arrivals in the last 1 s (none) or 0.8 s (timeout): about 10 or 8, far from 0 and 50.
        assert!(
            (1..50).contains(&count(c, "/in_flight_within_deadline")),
            "{name}: {}",
            count(c, "/in_flight_within_deadline")
        );
        // The degraded phase, derived from the step at 50 s, holds every request arriving
        // after 50 s and none of them is in time.
        let p = &r.phases.last().expect("a derived degraded phase").classes[0];
        assert_eq!(p.in_time, 0, "{name}");
        assert!(p.requests > 400, "{name}: the degraded phase judged {} requests", p.requests);
        assert_eq!(p.requests + c.in_time, c.requests, "{name}: every judged request is in one phase");
    }
    let (n, t) = (&none.summary.classes[0], &timeout.summary.classes[0]);
    // Common random numbers: the same arrivals, the same in-time answers before 50 s.
    assert_eq!(n.in_time, t.in_time);
    assert_eq!(count(n, "/causes/unfinished"), n.requests - n.in_time, "none: every failure is unfinished");
    assert_eq!(t.causes.attempt_timeout, t.requests - t.in_time, "timeout: every failure timed out");
    assert_eq!(count(t, "/causes/unfinished"), 0);
    // "timeout" judges the arrivals in (99 s, 99.2 s] that "none" leaves pending.
    assert!(
        t.requests >= n.requests && count(t, "/in_flight_within_deadline") <= count(n, "/in_flight_within_deadline")
    );
    assert_eq!(
        n.requests + count(n, "/in_flight_within_deadline"),
        t.requests + count(t, "/in_flight_within_deadline")
    );
}

/// Three scripted requests under no policy: at 1 s (healthy, 100 ms), at 60 s and at 99.5 s
/// (the dependency takes 100 s from 50 s on). Warm-up 500 ms; phases split at 50 s.
const SCRIPTED: &str = r#"Scenario(
    name: "in-flight-scripted", horizon: "100s", window: "10s", warmup: "500ms",
    fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: ["100ms", "1s", "60s", "99500ms"]), deadline: "1s")],
    dependency: (latency: Constant("100ms"), drift: Step(at: "50s", factor: 1000.0)),
    phases: [(name: "before", start: "500ms", end: "50s"), (name: "brownout", start: "50s", end: "100s")],
    policies: [(name: "none")],
)"#;

#[test]
fn scripted_requests_at_the_horizon_by_hand() {
    // The 100 ms arrival is in warm-up: in no figure. The 1 s arrival is in time. The 60 s
    // arrival is out for 40 s > 1 s at the horizon: unfinished. The 99.5 s arrival is out
    // for 0.5 s < 1 s: within its deadline, not judged.
    let r = run(&model(SCRIPTED), 0);
    let c = &r.summary.classes[0];
    assert_eq!(
        (c.requests, c.in_time, count(c, "/causes/unfinished"), count(c, "/in_flight_within_deadline")),
        (2, 1, 1, 1)
    );
    assert_eq!(c.in_time_ratio, 0.5);
    assert_eq!(c.deadline_missed, 1);
    assert_eq!(c.outcomes.total(), 1, "an unfinished request has no outcome");
    let before = &r.phases[0].classes[0];
    let brownout = &r.phases[1].classes[0];
    assert_eq!((before.requests, before.in_time, count(before, "/in_flight_within_deadline")), (1, 1, 0));
    assert_eq!(
        (brownout.requests, count(brownout, "/causes/unfinished"), count(brownout, "/in_flight_within_deadline")),
        (1, 1, 1)
    );
}

/// Four instances, each with a fixed limiter of 40 permits set when the run starts; warm-up
/// `warmup`, light traffic that never changes the limit.
fn fixed_limit(warmup: &str) -> String {
    format!(
        r#"Scenario(
    name: "limit-extremes", horizon: "20s", window: "1s", warmup: "{warmup}",
    fleet: (instances: 4, workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 5), deadline: "1s")],
    dependency: (latency: Constant("10ms")),
    policies: [(name: "fixed", stack: [(policy: Limiter((permits: 40)))])],
)"#
    )
}

#[test]
fn a_limit_set_before_the_span_is_its_extremes() {
    // The limit is 40 on every instance from time 0 and never changes: mean, min and max are
    // all 40 per instance, with or without a warm-up. Before the fix the limit set before a
    // 5 s warm-up read max 0 (and min 0), and without warm-up the instance-by-instance start
    // read min 10 (the sum 40 of the first instance over 4 instances).
    for warmup in ["5s", "0s"] {
        let r = run(&model(&fixed_limit(warmup)), 0);
        let l = r.summary.limit.expect("a limiter");
        assert_eq!((l.mean, l.min, l.max), (40.0, 40.0, 40.0), "warm-up {warmup}");
    }
}

/// Ten requests at 0..9 ms take all ten worker slots and hold them for 2 s (a constant 2 s
/// dependency); warm-up 1 s, horizon 4 s; phases split at 1.5 s.
const SLOTS_ACROSS_WARMUP: &str = r#"Scenario(
    name: "slots-across-warmup", horizon: "4s", window: "1s", warmup: "1s",
    fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: ["0ms", "1ms", "2ms", "3ms", "4ms", "5ms", "6ms", "7ms", "8ms", "9ms"]), deadline: "10s")],
    dependency: (latency: Constant("2s")),
    phases: [(name: "early", start: "1s", end: "1500ms"), (name: "late", start: "1500ms", end: "4s")],
    policies: [(name: "none")],
)"#;

#[test]
fn slots_held_across_the_warm_up_count_at_their_level() {
    // By hand: all ten slots are in use from 9 ms to at least 2 s (each request holds its slot
    // for its 2 s call), so over the span [1 s, 4 s) the level is 10 on [1 s, 2 s): peak 10,
    // saturated 1 s of 3 s = 1/3. Before the fix the peak read 9, the first level set after
    // the warm-up (the first release). Each phase: "early" is [1 s, 1.5 s), saturated
    // throughout, peak 10; "late" starts at 10 too, so its peak is 10, saturated 0.5 s of
    // 2.5 s = 0.2.
    let r = run(&model(SLOTS_ACROSS_WARMUP), 0);
    let w = &r.summary.resources.workers;
    assert_eq!(w.peak, 10);
    assert!((w.saturated_fraction - 1.0 / 3.0).abs() < 1e-12, "{}", w.saturated_fraction);
    let (early, late) = (&r.phases[0].resources.workers, &r.phases[1].resources.workers);
    assert_eq!((early.peak, late.peak), (10, 10));
    assert!((early.saturated_fraction - 1.0).abs() < 1e-12, "{}", early.saturated_fraction);
    assert!((late.saturated_fraction - 0.2).abs() < 1e-12, "{}", late.saturated_fraction);
}

/// Two classes: "api" at 20/s and "idle" at rate 0 (no request at all). The dependency takes
/// 100 ms; "cut" times every attempt out after 1 ms, so it answers nothing; "none" answers all.
const NOTHING_TO_MEASURE: &str = r#"Scenario(
    name: "no-value", seed: 5, horizon: "20s", window: "5s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [
        (name: "api", arrivals: Poisson(rate_per_s: 20), deadline: "1s"),
        (name: "idle", arrivals: Poisson(rate_per_s: 0), deadline: "1s"),
    ],
    dependency: (latency: Constant("100ms")),
    policies: [
        (name: "none"),
        (name: "cut", stack: [(policy: Timeout((timeout: "1ms")))]),
    ],
    expect: [
        (policy: "none", class: "idle", metric: "in_time_ratio", op: Ge, value: 0.0),
        (policy: "cut", class: "api", metric: "answered_p95_ms", op: Le, value: 500.0),
    ],
)"#;

/// The cells of `policy`'s row in the first block of a terminal table, after the name.
fn row<'a>(block: &'a str, policy: &str) -> Vec<&'a str> {
    let line = block.lines().find(|l| l.starts_with(&format!("{policy} "))).unwrap_or_else(|| panic!("{policy}"));
    line[policy.len()..].split("  ").map(str::trim).filter(|c| !c.is_empty()).collect()
}

/// The terminal block of `class` (up to the next block).
fn block<'a>(table: &'a str, class: &str) -> &'a str {
    let start = table.find(&format!("== {class} ==")).unwrap_or_else(|| panic!("{class}"));
    let rest = &table[start + 1..];
    &table[start..start + 1 + rest.find("\n== ").or_else(|| rest.find("\n(")).unwrap_or(rest.len())]
}

#[test]
fn a_figure_over_no_sample_has_no_value_anywhere() {
    use brownout::report::{expect, table};
    use brownout::runner::run_replicated;
    let s = parse(Path::new("population.ron"), NOTHING_TO_MEASURE).unwrap();
    validate(&s).unwrap();
    let m = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let sum = run_replicated(&m, 3, RunOptions::default(), false).expect("runs").summary;
    // By hand: "cut" answers nothing (every attempt times out at 1 ms), so its answer latency
    // is over no sample; "idle" has no request, so every ratio and latency of it is too.
    let cut = &sum.runs[1].classes[0];
    assert_eq!(cut.outcomes.timeout, cut.requests);
    assert!(cut.latency_answered_ms.p95.is_nan() && cut.latency_in_time_ms.mean.is_nan(), "{cut:?}");
    let idle = &sum.runs[0].classes[1];
    assert_eq!(idle.requests, 0);
    for v in [idle.in_time_ratio, idle.ok_ratio, idle.goodput_ratio, idle.latency_ms.p95, idle.slot_wait_ms_mean] {
        assert!(v.is_nan(), "{idle:?}");
    }
    // Tables: "–", never "0.0", never starred or tied for best.
    let t = table::terminal(&sum);
    let api = block(&t, "api");
    let header: Vec<&str> = api.lines().nth(1).unwrap().split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    let p95 = header.iter().position(|h| h.contains("p95")).expect("an answer p95 column") - 1;
    let cells = row(api, "cut");
    assert_eq!(cells[p95], "–", "{api}");
    assert!(!cells.iter().any(|c| c.ends_with('*') && c.starts_with('–')));
    for cell in row(block(&t, "idle"), "none") {
        assert!(cell == "–" || !cell.contains('%'), "an idle class reads no ratio: {cell}\n{t}");
    }
    // The verdict never names a set without a value best.
    let v = table::verdict(&sum);
    let idle_line = v.lines().find(|l| l.contains("**idle**")).expect("a verdict line for idle");
    assert!(idle_line.contains("no policy set has a value"), "{idle_line}");
    // Expectations: no value never holds, and the statement says why.
    for c in expect::check(&sum, &s.expect) {
        assert!(!c.passed, "{}", c.statement);
        assert!(c.statement.contains("no value"), "{}", c.statement);
        assert_eq!(c.measured(), "–");
    }
    // JSON: null, read back as NaN.
    let json = serde_json::to_string(&sum).unwrap();
    assert!(json.contains("\"in_time_ratio\":null"));
    let back: brownout::metrics::summary::ScenarioSummary = serde_json::from_str(&json).expect("null reads as NaN");
    assert!(back.runs[0].classes[1].in_time_ratio.is_nan());
    assert!(back.runs[1].classes[0].latency_answered_ms.p95.is_nan());
}
