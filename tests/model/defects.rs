//! Regression tests for defects in results (issue 15), each a reproduction from the issue
//! with its expected values worked out by hand in the comments.

use std::path::Path;

use brownout::engine::Time;
use brownout::model::{Model, RunOptions, run_policy};
use brownout::policy::PolicySpec;
use brownout::policy::breaker::consecutive::ConsecutiveConfig;
use brownout::policy::hedge::HedgeConfig;
use brownout::policy::retry::RetryConfig;
use brownout::policy::timeout::{TimeoutConfig, TimeoutStart};
use brownout::scenario::*;

fn model(text: &str) -> Model {
    let s = parse(Path::new("defect.ron"), text).unwrap();
    validate(&s).unwrap();
    Model::build(&s, 1, Path::new(".")).unwrap()
}

/// One request at 950 ms. The dependency answers in 100 ms and fails every call until 1 s,
/// then succeeds but 30x slower (3 s). Hedge 50 ms over a 500 ms per-attempt timeout.
const HEDGE_OVER_TIMEOUT: &str = r#"Scenario(
    name: "hedge-timeout", horizon: "10s", window: "1s",
    fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: ["950ms"]), deadline: "5s")],
    dependency: (
        latency: Constant("100ms"),
        drift: Step(at: "1s", factor: 30.0),
        error_rate: Points([("0s", 1.0), ("1s", 1.0), ("1s", 0.0)]),
    ),
    policies: [
        (name: "hedge-over-timeout", stack: [
            (policy: Hedge((delay: "50ms"))),
            (policy: Timeout((timeout: "500ms"))),
        ]),
    ],
)"#;

#[test]
fn a_timeout_holds_when_the_primary_fails_and_the_hedge_is_slow() {
    let m = model(HEDGE_OVER_TIMEOUT);
    let r = run_policy(&m, 0, RunOptions::default()).expect("runs");
    let c = &r.summary.classes[0];
    // Primary at 950 ms: error due at 1,050 ms (before the 1,450 ms deadline). Hedge at
    // 1,000 ms: 100 ms x 30 = 3 s, due at 4,000 ms, after the deadline. The primary fails
    // first, the request waits for the hedge, and the timeout must cut it at 1,450 ms:
    // a 504 after 500 ms, not a 200 after 3,050 ms.
    assert_eq!(c.requests, 1);
    assert_eq!(c.outcomes.timeout, 1, "{:?}", c.outcomes);
    assert_eq!(c.outcomes.ok, 0, "{:?}", c.outcomes);
    assert!((c.latency_ms.max - 500.0).abs() < 1.0, "answered after {} ms", c.latency_ms.max);
}

/// Class "a": a request at 1 s (the dependency is 1000x slower until 2 s) and a healthy one
/// at 5 s. Under "timeout" the first request times out, and so does its reload (a user
/// reloads every failure, once). Under "none" it is still out at the horizon: no reload.
const RELOADS: &str = r#"Scenario(
    name: "reload-crn", horizon: "8s", window: "1s",
    fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "a", arrivals: Scripted(times: ["1s", "5s"]), deadline: "1s",
               reload: (patience: "100s", probability: 1.0, delay: "100ms", max_reloads: 1))],
    dependency: (
        latency: LogNormal(median: "100ms", sigma: 0.5),
        drift: Points([("0s", 1000.0), ("2s", 1000.0), ("2s", 1.0)]),
    ),
    policies: [
        (name: "none"),
        (name: "timeout", stack: [(policy: Timeout((timeout: "200ms")))]),
    ],
)"#;

#[test]
fn a_reload_elsewhere_leaves_a_later_request_its_latency() {
    let m = model(RELOADS);
    let opts = RunOptions::new().with_timeseries(true);
    // The 5 s request is the only ok answer in either run (the first is 1000x slower, a
    // median of 100 s, so still out at 8 s under "none"; timed out under "timeout").
    let ok_latency = |p: usize| {
        let r = run_policy(&m, p, opts).expect("runs");
        let ok: Vec<_> = r.rows.iter().filter(|w| w.ok > 0).collect();
        assert_eq!(ok.len(), 1, "policy {p}: one window with an ok answer");
        assert_eq!(ok[0].ok, 1);
        (r.requests, ok[0].latency_p50_ms)
    };
    let (none, timeout) = (ok_latency(0), ok_latency(1));
    assert_eq!((none.0, timeout.0), (2, 3), "the reload happens under \"timeout\" only");
    // Common random numbers: the same request at the same time draws the same latency.
    assert_eq!(none.1, timeout.1, "the 5 s request's latency depends on another request's reload");
}

/// Values that, before issue 15, made time arithmetic overflow ("event scheduled in the
/// past"). Set directly on the scenario, past what the parser and validation accept: the
/// world must not panic whatever they let through.
fn runs_without_panic(what: &str, change: impl Fn(&mut Scenario)) {
    let text = r#"Scenario(
    name: "overflow", horizon: "10s", window: "1s",
    fleet: (workers: (slots: 4), pool: (max_connections: 4, acquire_timeout: "1s")),
    classes: [(name: "a", arrivals: Poisson(rate_per_s: 50), deadline: "1s")],
    dependency: (latency: Exponential(mean: "20ms"), error_rate: Constant(0.5)),
    policies: [(name: "p")],
)"#;
    let mut s = parse(Path::new("overflow.ron"), text).unwrap();
    change(&mut s);
    let m = Model::build(&s, 7, Path::new(".")).unwrap();
    let r = run_policy(&m, 0, RunOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let c = &r.summary.classes[0];
    // Every arrival either finished or is still in flight (a saturated timer never fires).
    assert_eq!(r.requests, c.outcomes.total() + r.summary.in_flight_at_end, "{what}");
    assert!(r.requests > 300, "{what}: {} requests", r.requests);
}

fn layer(policy: PolicySpec) -> Layer {
    Layer { policy, classes: vec![], dependencies: vec![], scope: Scope::Instance, persistent: false }
}

const HUGE: Dur = Dur(Time::MAX - 1);

fn retry(backoff: Dur, multiplier: f64, max_backoff: Option<Dur>) -> PolicySpec {
    PolicySpec::Retry(RetryConfig {
        max_attempts: 6,
        backoff,
        multiplier,
        max_backoff,
        jitter: 0.0,
        on_timeout: true,
        on_error: true,
        on_refusal: vec![brownout::policy::Refused::Dependency503],
        give_up: 0.0,
        on_connect_failure: None,
        refused_delay: None,
        max_elapsed: None,
        replica: Default::default(),
    })
}

#[test]
fn a_retry_multiplier_of_1e30_or_infinity_saturates() {
    for m in [1e30, f64::INFINITY] {
        runs_without_panic(&format!("multiplier {m}"), |s| {
            s.policies[0].stack = vec![layer(retry(Dur::ms(10), m, None))];
        });
    }
}

#[test]
fn huge_backoffs_timeouts_hedge_delays_and_breaks_saturate() {
    let stacks = [
        ("backoff", vec![retry(HUGE, 1.0, None)]),
        ("max backoff", vec![retry(Dur::ms(10), 2.0, Some(HUGE))]),
        (
            "timeout",
            vec![PolicySpec::Timeout(TimeoutConfig { timeout: HUGE, unwind: HUGE, starts: TimeoutStart::Attempt })],
        ),
        (
            "timeout under a retry",
            vec![
                retry(HUGE, 2.0, None),
                PolicySpec::Timeout(TimeoutConfig { timeout: Dur::ms(5), unwind: HUGE, starts: TimeoutStart::Attempt }),
            ],
        ),
        (
            "hedge",
            vec![PolicySpec::Hedge(HedgeConfig {
                delay: Some(HUGE),
                latency_percentile: 0.9,
                min_data_points: 1,
                period: HUGE,
            })],
        ),
        (
            "break",
            vec![PolicySpec::ConsecutiveBreaker(ConsecutiveConfig {
                failures: 1,
                break_duration: HUGE,
                probes: 1,
                success_threshold: 1,
                exclude: vec![],
            })],
        ),
    ];
    for (what, stack) in stacks {
        runs_without_panic(what, |s| s.policies[0].stack = stack.iter().cloned().map(layer).collect());
    }
}

#[test]
fn huge_local_work_and_reload_delays_saturate() {
    runs_without_panic("work", |s| s.classes[0].work = Some(Latency::Exponential { mean: HUGE }));
    runs_without_panic("reload", |s| {
        s.classes[0].reload = Some(Reload { patience: Dur(1), probability: 1.0, delay: HUGE, max_reloads: 3 });
    });
    runs_without_panic("overhead and slot wait", |s| {
        s.fleet.overhead = brownout::scenario::Delay::Fixed(HUGE);
        s.fleet.workers.max_wait = Some(HUGE);
        s.fleet.pool.acquire_timeout = HUGE;
    });
}

#[test]
fn more_reloads_than_a_byte_counts() {
    // One request fails, and so does each of its 300 reloads (every call errs).
    runs_without_panic("300 reloads", |s| {
        s.dependency.error_rate = Profile::Constant(1.0);
        s.classes[0].arrivals = Arrivals::Scripted { times: vec![Dur::ms(1)] };
        s.classes[0].reload = Some(Reload { patience: Dur(1), probability: 1.0, delay: Dur::ms(1), max_reloads: 300 });
    });
}

#[test]
fn a_max_in_flight_of_2_pow_62_does_not_overflow_the_event_guard() {
    runs_without_panic("max_in_flight 2^62", |s| s.limits.max_in_flight = 1 << 62);
}
