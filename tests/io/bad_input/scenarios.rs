//! Scenario cases: every field of a small valid scenario replaced by extreme values, every
//! arrival, latency, drift and dependency variant with extreme parameters, every policy kind
//! with extreme parameters.

use super::{Action, Case};

/// A small valid scenario that writes every field it can, so each can be replaced. Its
/// horizon is short so that an accepted case runs in a fraction of a second.
pub const BASE: &str = r#"Scenario(
    name: "bad",
    seed: 7,
    replications: 2,
    horizon: "2s",
    warmup: "100ms",
    window: "500ms",
    fleet: (
        instances: 2,
        workers: (slots: 4, queue: 8, max_wait: "200ms"),
        pool: (max_connections: 4, acquire_timeout: "100ms"),
        overhead: "1ms",
    ),
    classes: [
        (
            name: "api",
            arrivals: Poisson(rate_per_s: 20),
            deadline: "500ms",
            work: Exponential(mean: "2ms"),
            fallback: OnRefusalOrFailure,
            order_fraction: 0.1,
            priority: 1,
            reload: (patience: "300ms", probability: 0.2, delay: "50ms", max_reloads: 2),
        ),
    ],
    dependency: (
        latency: LogNormal(median: "20ms", sigma: 0.5),
        error_rate: Constant(0.01),
        hop: "1ms",
        capacity: (servers: 8, queue: 16),
        replicas: (count: 2, balancing: RoundRobin),
    ),
    catalogue: (items: 100, zipf: 1.0, changes_per_hour: 60, ttl: "10s"),
    business: (
        substitution_allowance: 0.5,
        degraded_substitution_allowance: 0.7,
        substitution_cost: 1.5,
        refund_cost: 2.5,
        lost_order_cost: 5.5,
    ),
    policies: [
        (name: "direct", stack: []),
        (name: "guarded", stack: [
            (policy: Retry((max_attempts: 3, backoff: "10ms", multiplier: 2.0, jitter: 0.5))),
            (policy: Limiter((permits: 8))),
            (policy: Timeout((timeout: "300ms"))),
        ]),
    ],
    expect: [(policy: "direct", class: "api", metric: "ok_ratio", op: Ge, value: 0.25)],
    limits: (max_in_flight: 100000, max_events: 100000000),
)
"#;

const INTS: &[&str] = &["-1", "0", "4294967295", "4294967296", "18446744073709551615", "1e30", "\"x\""];
const FLOATS: &[&str] = &["-1.0", "0.0", "NaN", "inf", "-inf", "1e30", "1e300", "4e9"];
const DURS: &[&str] =
    &["\"-1s\"", "\"0ms\"", "\"1000000000h\"", "\"18446744073709551615ns\"", "\"1e30s\"", "\"abc\"", "5"];

/// (text in BASE, the value in it, the values to put there instead).
const FIELDS: &[(&str, &str, &[&str])] = &[
    ("seed: ", "7", INTS),
    ("replications: ", "2", INTS),
    ("instances: ", "2", INTS),
    ("slots: ", "4", INTS),
    ("queue: ", "8", INTS),
    ("max_connections: ", "4", INTS),
    ("priority: ", "1", INTS),
    ("max_reloads: ", "2", INTS),
    ("servers: ", "8", INTS),
    ("queue: ", "16", INTS),
    ("count: ", "2", INTS),
    ("items: ", "100", INTS),
    ("max_attempts: ", "3", INTS),
    ("permits: ", "8", INTS),
    ("max_in_flight: ", "100000", INTS),
    ("max_events: ", "100000000", INTS),
    ("rate_per_s: ", "20", FLOATS),
    ("order_fraction: ", "0.1", FLOATS),
    ("probability: ", "0.2", FLOATS),
    ("sigma: ", "0.5", FLOATS),
    ("error_rate: Constant(", "0.01", FLOATS),
    ("zipf: ", "1.0", FLOATS),
    ("changes_per_hour: ", "60", FLOATS),
    ("substitution_allowance: ", "0.5", FLOATS),
    ("degraded_substitution_allowance: ", "0.7", FLOATS),
    ("substitution_cost: ", "1.5", FLOATS),
    ("refund_cost: ", "2.5", FLOATS),
    ("lost_order_cost: ", "5.5", FLOATS),
    ("multiplier: ", "2.0", FLOATS),
    ("jitter: ", "0.5", FLOATS),
    ("value: ", "0.25", FLOATS),
    ("horizon: ", "\"2s\"", DURS),
    ("warmup: ", "\"100ms\"", DURS),
    ("window: ", "\"500ms\"", DURS),
    ("max_wait: ", "\"200ms\"", DURS),
    ("acquire_timeout: ", "\"100ms\"", DURS),
    ("overhead: ", "\"1ms\"", DURS),
    ("deadline: ", "\"500ms\"", DURS),
    ("patience: ", "\"300ms\"", DURS),
    ("delay: ", "\"50ms\"", DURS),
    ("mean: ", "\"2ms\"", DURS),
    ("median: ", "\"20ms\"", DURS),
    ("hop: ", "\"1ms\"", DURS),
    ("ttl: ", "\"10s\"", DURS),
    ("timeout: ", "\"300ms\"", DURS),
    ("backoff: ", "\"10ms\"", DURS),
];

/// BASE with `from` (which must occur exactly once) replaced by `to`.
pub fn edit(from: &str, to: &str) -> String {
    assert_eq!(BASE.matches(from).count(), 1, "BASE must contain {from:?} once");
    BASE.replacen(from, to, 1)
}

fn case(name: String, text: String) -> Case {
    Case {
        name,
        files: vec![("s.ron".into(), text.into_bytes())],
        action: Action::Scenario("s.ron".into()),
        located: true,
    }
}

/// Every field with every extreme value of its kind.
pub fn fields() -> Vec<Case> {
    let mut out = Vec::new();
    for (key, value, bad) in FIELDS {
        for b in *bad {
            let text = edit(&format!("{key}{value}"), &format!("{key}{b}"));
            out.push(case(format!("field {key}{value} -> {b}"), text));
        }
    }
    out
}

/// Variants with extreme parameters: (name, text in BASE, replacement).
const VARIANTS: &[(&str, &str, &str)] = &[
    ("poisson 1e9", "Poisson(rate_per_s: 20)", "Poisson(rate_per_s: 1e9)"),
    ("profile empty", "Poisson(rate_per_s: 20)", "PoissonProfile(points: [])"),
    ("profile 1e30", "Poisson(rate_per_s: 20)", "PoissonProfile(points: [(\"1s\", 1e30)])"),
    ("profile unsorted", "Poisson(rate_per_s: 20)", "PoissonProfile(points: [(\"1s\", 5), (\"0s\", 5)])"),
    ("profile negative", "Poisson(rate_per_s: 20)", "PoissonProfile(points: [(\"0s\", -5)])"),
    ("profile far", "Poisson(rate_per_s: 20)", "PoissonProfile(points: [(\"1000000000h\", 5)])"),
    ("profile NaN", "Poisson(rate_per_s: 20)", "PoissonProfile(points: [(\"0s\", NaN)])"),
    ("closed 0 users", "Poisson(rate_per_s: 20)", "ClosedLoop(users: 0, think: \"1s\")"),
    ("closed 4e9 users", "Poisson(rate_per_s: 20)", "ClosedLoop(users: 4294967295, think: \"1s\")"),
    ("closed 1e6 users", "Poisson(rate_per_s: 20)", "ClosedLoop(users: 1000000, think: \"0ms\")"),
    ("closed huge think", "Poisson(rate_per_s: 20)", "ClosedLoop(users: 3, think: \"1000000000h\")"),
    ("closed zero think", "Poisson(rate_per_s: 20)", "ClosedLoop(users: 3, think: \"0ms\")"),
    ("scripted empty", "Poisson(rate_per_s: 20)", "Scripted(times: [])"),
    ("scripted unsorted", "Poisson(rate_per_s: 20)", "Scripted(times: [\"1s\", \"0s\"])"),
    ("scripted far", "Poisson(rate_per_s: 20)", "Scripted(times: [\"0s\", \"1000000000h\"])"),
    ("scripted max", "Poisson(rate_per_s: 20)", "Scripted(times: [\"18446744073709551615ns\"])"),
    ("diurnal amp 2", "Poisson(rate_per_s: 20)", "Diurnal(mean_rate_per_s: 5, amplitude: 2)"),
    ("diurnal period 0", "Poisson(rate_per_s: 20)", "Diurnal(mean_rate_per_s: 5, amplitude: 0.5, period: \"0ms\")"),
    ("diurnal 1e30", "Poisson(rate_per_s: 20)", "Diurnal(mean_rate_per_s: 1e30, amplitude: 0.5)"),
    (
        "diurnal huge",
        "Poisson(rate_per_s: 20)",
        "Diurnal(mean_rate_per_s: 5, amplitude: 1, period: \"18446744073709551615ns\", peak_at: \"1000000000h\")",
    ),
    (
        "burst 1e30",
        "Poisson(rate_per_s: 20)",
        "Burst(base_rate_per_s: 5, at: \"1s\", duration: \"1s\", multiplier: 1e30)",
    ),
    (
        "burst inf",
        "Poisson(rate_per_s: 20)",
        "Burst(base_rate_per_s: 5, at: \"1s\", duration: \"1s\", multiplier: inf)",
    ),
    (
        "burst far",
        "Poisson(rate_per_s: 20)",
        "Burst(base_rate_per_s: 5, at: \"18446744073709551615ns\", duration: \"18446744073709551615ns\", multiplier: 2)",
    ),
    (
        "burst thin",
        "Poisson(rate_per_s: 20)",
        "Burst(base_rate_per_s: 0.001, at: \"1h\", duration: \"1s\", multiplier: 1e9)",
    ),
    ("latency constant 0", "LogNormal(median: \"20ms\", sigma: 0.5)", "Constant(\"0ms\")"),
    ("latency constant huge", "LogNormal(median: \"20ms\", sigma: 0.5)", "Constant(\"1000000000h\")"),
    ("latency constant max", "LogNormal(median: \"20ms\", sigma: 0.5)", "Constant(\"18446744073709551615ns\")"),
    ("latency exp 0", "LogNormal(median: \"20ms\", sigma: 0.5)", "Exponential(mean: \"0ms\")"),
    ("latency exp huge", "LogNormal(median: \"20ms\", sigma: 0.5)", "Exponential(mean: \"1000000000h\")"),
    ("latency sigma 5", "LogNormal(median: \"20ms\", sigma: 0.5)", "LogNormal(median: \"1000000000h\", sigma: 5)"),
    ("latency sigma 100", "LogNormal(median: \"20ms\", sigma: 0.5)", "LogNormal(median: \"20ms\", sigma: 100)"),
    ("work constant huge", "work: Exponential(mean: \"2ms\")", "work: Constant(\"1000000000h\")"),
    ("work lognormal", "work: Exponential(mean: \"2ms\")", "work: LogNormal(median: \"1000000000h\", sigma: 5)"),
    ("hop exp 0", "hop: \"1ms\",", "hop: Exponential(mean: \"0ms\"),"),
    ("hop sigma NaN", "hop: \"1ms\",", "hop: LogNormal(median: \"1ms\", sigma: NaN),"),
    ("hop sigma -1", "hop: \"1ms\",", "hop: LogNormal(median: \"1ms\", sigma: -1),"),
    ("hop negative", "hop: \"1ms\",", "hop: \"-1ms\","),
    ("hop unknown shape", "hop: \"1ms\",", "hop: Gamma(mean: \"1ms\"),"),
    ("hop empirical missing", "hop: \"1ms\",", "hop: Empirical(file: \"missing.csv\"),"),
    ("overhead exp 0", "overhead: \"1ms\",", "overhead: Exponential(mean: \"0ms\"),"),
    ("overhead sigma inf", "overhead: \"1ms\",", "overhead: LogNormal(median: \"1ms\", sigma: inf),"),
    ("overhead huge", "overhead: \"1ms\",", "overhead: LogNormal(median: \"1000000000h\", sigma: 5),"),
    ("cancel delay on keep working", "hop: \"1ms\",", "hop: \"1ms\", cancellation: KeepWorking(delay: \"5ms\"),"),
    ("cancel negative delay", "hop: \"1ms\",", "hop: \"1ms\", cancellation: Propagate(delay: \"-5ms\"),"),
    ("cancel no delay", "hop: \"1ms\",", "hop: \"1ms\", cancellation: Propagate(),"),
    ("cancel huge delay", "hop: \"1ms\",", "hop: \"1ms\", cancellation: Propagate(delay: \"1000000000h\"),"),
    ("drift step 0", "hop: \"1ms\",", "hop: \"1ms\", drift: Step(at: \"1s\", factor: 0),"),
    ("drift step 1e30", "hop: \"1ms\",", "hop: \"1ms\", drift: Step(at: \"1s\", factor: 1e30),"),
    ("drift step inf", "hop: \"1ms\",", "hop: \"1ms\", drift: Step(at: \"1s\", factor: inf),"),
    ("drift ramp reversed", "hop: \"1ms\",", "hop: \"1ms\", drift: Ramp(start: \"2s\", end: \"1s\", from: 1, to: 2),"),
    ("drift ramp 1e300", "hop: \"1ms\",", "hop: \"1ms\", drift: Ramp(start: \"0s\", end: \"1s\", from: 1, to: 1e300),"),
    ("drift points empty", "hop: \"1ms\",", "hop: \"1ms\", drift: Points([]),"),
    ("drift points tiny", "hop: \"1ms\",", "hop: \"1ms\", drift: Points([(\"0s\", 1e-300)]),"),
    (
        "drift brownout huge",
        "hop: \"1ms\",",
        "hop: \"1ms\", drift: Brownout(start: \"1000000000h\", ramp: \"1000000000h\", hold: \"1000000000h\", peak: 1e30),",
    ),
    (
        "drift brownout max",
        "hop: \"1ms\",",
        "hop: \"1ms\", drift: Brownout(start: \"0s\", ramp: \"18446744073709551615ns\", hold: \"1s\", peak: 3),",
    ),
    (
        "drift periodic 0",
        "hop: \"1ms\",",
        "hop: \"1ms\", drift: Periodic(period: \"0ms\", duration: \"0ms\", factor: 2),",
    ),
    (
        "drift periodic long",
        "hop: \"1ms\",",
        "hop: \"1ms\", drift: Periodic(period: \"1s\", duration: \"2s\", factor: 2),",
    ),
    (
        "drift periodic 1e300",
        "hop: \"1ms\",",
        "hop: \"1ms\", drift: Periodic(period: \"1s\", duration: \"1s\", factor: 1e300),",
    ),
    ("error points unsorted", "error_rate: Constant(0.01)", "error_rate: Points([(\"1s\", 0.1), (\"0s\", 0.1)])"),
    ("error points 2", "error_rate: Constant(0.01)", "error_rate: Points([(\"0s\", 2)])"),
    ("error points empty", "error_rate: Constant(0.01)", "error_rate: Points([])"),
    ("mode slow huge", "hop: \"1ms\",", "hop: \"1ms\", modes: [(at: \"0s\", mode: Slow(\"1000000000h\"))],"),
    ("mode unavailable", "hop: \"1ms\",", "hop: \"1ms\", modes: [(at: \"0s\", mode: Unavailable)],"),
    (
        "modes unsorted",
        "hop: \"1ms\",",
        "hop: \"1ms\", modes: [(at: \"1s\", mode: Unavailable), (at: \"0s\", mode: Healthy)],",
    ),
    ("capacity 0", "capacity: (servers: 8, queue: 16)", "capacity: (servers: 0, queue: 0)"),
    ("replicas 10001", "count: 2, balancing: RoundRobin", "count: 10001, balancing: PowerOfTwo"),
    (
        "outlier percent 101",
        "count: 2, balancing: RoundRobin",
        "count: 2, balancing: RoundRobin, outlier_detection: Some((max_ejection_percent: 101))",
    ),
    (
        "outlier interval 0",
        "count: 2, balancing: RoundRobin",
        "count: 2, balancing: PowerOfTwo, outlier_detection: Some((interval: \"0s\", consecutive_5xx: 0))",
    ),
    (
        "outlier huge",
        "count: 2, balancing: RoundRobin",
        "count: 2, balancing: Random, outlier_detection: Some((consecutive_5xx: 1, interval: \"1ns\", \
         base_ejection_time: \"18446744073709551615ns\", max_ejection_time: \"18446744073709551615ns\", \
         max_ejection_percent: 100, success_rate_minimum_hosts: 0, success_rate_request_volume: 0, \
         success_rate_stdev_factor: 4294967295))",
    ),
    (
        "replica slow missing",
        "count: 2, balancing: RoundRobin",
        "count: 2, balancing: Random, slow: [(replica: 5, start: \"0s\", end: \"1s\", factor: 2)]",
    ),
    (
        "replica slow 1e300",
        "count: 2, balancing: RoundRobin",
        "count: 2, balancing: LeastOutstanding, slow: [(replica: 1, start: \"0s\", end: \"1s\", factor: 1e300)]",
    ),
    (
        "replica slow 0",
        "count: 2, balancing: RoundRobin",
        "count: 2, balancing: RoundRobin, slow: [(replica: 1, start: \"0s\", end: \"1s\", factor: 0)]",
    ),
    (
        "partition missing instance",
        "overhead: \"1ms\",",
        "overhead: \"1ms\", partitions: [(start: \"0s\", end: \"1s\", instances: [99], mode: FailFast)],",
    ),
    (
        "partition reversed",
        "overhead: \"1ms\",",
        "overhead: \"1ms\", partitions: [(start: \"1s\", end: \"0s\", instances: [0], mode: FailFast)],",
    ),
    (
        "partition hang huge",
        "overhead: \"1ms\",",
        "overhead: \"1ms\", partitions: [(start: \"0s\", end: \"2s\", instances: [0], \
         mode: Hang(connect_timeout: \"1000000000h\"))],",
    ),
    ("restart missing instance", "overhead: \"1ms\",", "overhead: \"1ms\", restarts: [(at: \"1s\", instances: [7])],"),
    (
        "restart huge interval",
        "overhead: \"1ms\",",
        "overhead: \"1ms\", restarts: [(at: \"1000000000h\", instances: [0, 1], interval: \"18446744073709551615ns\")],",
    ),
    ("catalogue 4e9 items", "items: 100", "items: 4294967295"),
    ("catalogue 1e30 changes", "changes_per_hour: 60", "changes_per_hour: 1e30"),
    ("catalogue 1e15 changes", "changes_per_hour: 60", "changes_per_hour: 1e15"),
    ("catalogue shared 4e9", "items: 100", "items: 4000000000, shared_cache: true, prewarm: false"),
    ("instances 1e9", "instances: 2", "instances: 1000000000"),
    ("instances 1e6", "instances: 2", "instances: 1000000"),
    ("window 1ns", "window: \"500ms\"", "window: \"1ns\""),
    ("million windows", "horizon: \"2s\"", "horizon: \"1000000s\""),
    ("expect unknown metric", "metric: \"ok_ratio\"", "metric: \"bogus\""),
    ("expect than unknown", "op: Ge, value: 0.25", "op: Ge, than: \"nobody\""),
    ("expect both", "op: Ge, value: 0.25", "op: Ge, value: 0.25, than: \"guarded\""),
    ("limits memory tiny", "max_events: 100000000", "max_events: 100000000, max_memory: \"1KiB\""),
    ("limits memory text", "max_events: 100000000", "max_events: 100000000, max_memory: \"lots\""),
    ("limits memory negative", "max_events: 100000000", "max_events: 100000000, max_memory: -1"),
    ("limits attempts 0", "max_events: 100000000", "max_events: 100000000, max_attempts: 0"),
    ("limits unknown", "max_events: 100000000", "max_events: 100000000, max_cpu: 1"),
    ("name empty", "name: \"bad\"", "name: \"\""),
    ("name slash", "name: \"bad\"", "name: \"a/b\""),
    ("class duplicate", "classes: [", "classes: [(name: \"api\", arrivals: Poisson(rate_per_s: 1), deadline: \"1s\"),"),
    ("class unknown field", "order_fraction: 0.1", "order_fraction: 0.1, bogus: 1"),
    ("policies empty", "(name: \"direct\", stack: []),", ""),
    ("unknown field", "seed: 7,", "seed: 7, colour: 3,"),
    ("truncated", "limits: (max_in_flight", "limits: (max_in_fl"),
];

/// Every variant case, and the closed loop whose requests take no time at all.
pub fn variants() -> Vec<Case> {
    let mut out: Vec<Case> =
        VARIANTS.iter().map(|(n, from, to)| case(format!("variant {n}"), edit(from, to))).collect();
    let spin = edit("Poisson(rate_per_s: 20)", "ClosedLoop(users: 3, think: \"0ms\")")
        .replace("LogNormal(median: \"20ms\", sigma: 0.5)", "Constant(\"0ms\")")
        .replace("work: Exponential(mean: \"2ms\"),", "")
        .replace("overhead: \"1ms\",", "")
        .replace("hop: \"1ms\",", "");
    out.push(case("variant closed loop in zero time".into(), spin));
    out.push(case(
        "policies none".into(),
        edit("(name: \"direct\", stack: []),", "")
            .replace("(name: \"guarded\", stack: [", "(name: \"direct\", stack: ["),
    ));
    out
}

/// Fallbacks that cannot take effect or have bad parameters (issue 20): (name, text in BASE,
/// replacement). Each must be refused.
const FALLBACKS: &[(&str, &str, &str)] = &[
    ("fallback without catalogue", "catalogue: (items: 100, zipf: 1.0, changes_per_hour: 60, ttl: \"10s\"),", ""),
    (
        "fallback answer without fallback",
        "fallback: OnRefusalOrFailure,",
        "fallback_answer: FailOpen(cost_per_use: 1),",
    ),
    (
        "fallback on a class that never calls",
        "fallback: OnRefusalOrFailure,",
        "fallback: OnRefusalOrFailure, calls_dependency: false,",
    ),
    (
        "last answer on a class that never calls",
        "fallback: OnRefusalOrFailure,",
        "fallback: OnRefusalOrFailure, calls_dependency: false, fallback_answer: LastAnswer(),",
    ),
    (
        "fallback cost negative",
        "fallback: OnRefusalOrFailure,",
        "fallback: OnRefusalOrFailure, fallback_answer: FailOpen(cost_per_use: -1),",
    ),
    (
        "fallback cost NaN",
        "fallback: OnRefusalOrFailure,",
        "fallback: OnRefusalOrFailure, fallback_answer: FailClosed(cost_per_use: NaN),",
    ),
    (
        "fallback cost inf",
        "fallback: OnRefusalOrFailure,",
        "fallback: OnRefusalOrFailure, fallback_answer: LastAnswer(cost_per_use: inf),",
    ),
    (
        "fallback max age 0",
        "fallback: OnRefusalOrFailure,",
        "fallback: OnRefusalOrFailure, fallback_answer: LastAnswer(max_age: \"0ms\"),",
    ),
    (
        "fallback answer unknown",
        "fallback: OnRefusalOrFailure,",
        "fallback: OnRefusalOrFailure, fallback_answer: Guess(),",
    ),
];

/// The fallback cases; each must be refused.
pub fn fallbacks() -> Vec<Case> {
    let mut out: Vec<Case> =
        FALLBACKS.iter().map(|(n, from, to)| case(format!("fallback {n}"), edit(from, to))).collect();
    // Without the limiter no layer can refuse, so an OnRefusal fallback never applies.
    let nothing_refuses = edit("fallback: OnRefusalOrFailure,", "fallback: OnRefusal, fallback_answer: FailClosed(),")
        .replace("(policy: Limiter((permits: 8))),", "");
    out.push(case("fallback on refusal that nothing refuses".into(), nothing_refuses));
    out
}

/// Policy layers with extreme parameters, each as the only layer of a second policy set.
const POLICIES: &[&str] = &[
    "Timeout((timeout: \"0ms\"))",
    "Timeout((timeout: \"1000000000h\", unwind: \"1000000000h\"))",
    "Timeout((timeout: \"18446744073709551615ns\"))",
    "Retry((max_attempts: 0))",
    "Retry((max_attempts: 4294967295))",
    "Retry((max_attempts: 4294967295, backoff: \"0ms\"))",
    "Retry((max_attempts: 50, backoff: \"1000000000h\", multiplier: 1e30))",
    "Retry((max_attempts: 50, backoff: \"1s\", multiplier: inf))",
    "Retry((max_attempts: 50, backoff: \"18446744073709551615ns\", max_backoff: \"18446744073709551615ns\"))",
    "Retry((max_attempts: 3, jitter: 2))",
    "Retry((max_attempts: 3, multiplier: NaN))",
    "ConsecutiveBreaker((failures: 0, break_duration: \"1s\"))",
    "ConsecutiveBreaker((failures: 4294967295, break_duration: \"18446744073709551615ns\", probes: 4294967295))",
    "ConsecutiveBreaker((failures: 1, break_duration: \"0ms\", probes: 0))",
    "Limiter((permits: 0))",
    "Limiter((permits: 4294967295, queue: 4294967295, max_wait: \"1000000000h\"))",
    "Limiter((permits: 1, queue: 5, max_wait: \"0ms\"))",
    "Limiter((permits: 1, class_max_wait: [(\"nobody\", \"1s\")]))",
    "Hedge((delay: \"0ms\"))",
    "Hedge((delay: \"18446744073709551615ns\"))",
    "Hedge((latency_percentile: 1.0))",
    "Hedge((latency_percentile: NaN, min_data_points: 4294967295))",
    "Hedge((period: \"0ms\"))",
    "Plugin((name: \"nobody\"))",
    "Plugin((name: \"\"))",
    "Aimd((initial_limit: 4294967295, max_limit: 4294967295))",
    "Aimd((initial_limit: 0, min_limit: 0))",
    "Aimd((backoff_ratio: 2))",
    "Aimd((backoff_ratio: NaN, timeout: \"0ms\"))",
    "Vegas((initial_limit: 0))",
    "Vegas((smoothing: NaN, probe_multiplier: 0))",
    "Vegas((max_concurrency: 4294967295, initial_limit: 4294967295))",
    "Gradient2((long_window: 4294967295))",
    "Gradient2((smoothing: 1e30, rtt_tolerance: -1))",
    "Gradient2((initial_limit: 0, min_limit: 0, max_concurrency: 0))",
    "EnvoyGradient((sample_aggregate_percentile: 2))",
    "EnvoyGradient((concurrency_update_interval: \"0ms\"))",
    "EnvoyGradient((request_count: 4294967295, buffer: 1e30))",
    "EnvoyGradient((min_rtt_calc_interval: \"18446744073709551615ns\", jitter: 5))",
    "TieredBulkhead((permits: 0, classes: [(name: \"api\", share: 1, on_full: Reject)]))",
    "TieredBulkhead((permits: 4, classes: [(name: \"api\", share: 2, on_full: Reject)]))",
    "TieredBulkhead((permits: 4, classes: [(name: \"nobody\", share: 0.5, on_full: Reject)]))",
    "TieredBulkhead((permits: 4, classes: [(name: \"api\", share: 0.5, on_full: Reject)], \
     degrade: Some((window: \"0ms\", windows: 4294967295, recovery: \"1000000000h\", min_samples: 0))))",
    "RetryBudget((ttl: \"0ms\"))",
    "RetryBudget((retry_percent: 1e30, min_per_sec: 4294967295))",
    "RetryBudget((ttl: \"18446744073709551615ns\", retry_percent: NaN))",
    "GrpcThrottle((max_tokens: 0))",
    "GrpcThrottle((max_tokens: 4294967295, token_ratio: NaN))",
    "AdaptiveRetry((bucket_size: inf))",
    "AdaptiveRetry((retry_cost: -1, refill_per_request: 1e300))",
    "ErrorRateBreaker((window: Count(4294967295)))",
    "ErrorRateBreaker((window: Time(buckets: 4294967295, bucket: \"1ms\")))",
    "ErrorRateBreaker((window: Time(buckets: 2, bucket: \"18446744073709551615ns\")))",
    "ErrorRateBreaker((window: Count(10), half_open_calls: 4294967295))",
    "ErrorRateBreaker((window: Count(10), break_multiplier: 1e300, max_break: \"18446744073709551615ns\"))",
    "ErrorRateBreaker((window: Count(0), failure_rate_threshold: NaN))",
    "LatencyBreaker((window: \"0ms\", threshold: \"1s\"))",
    "LatencyBreaker((window: \"1s\", threshold: \"1s\", percentile: 2))",
    "LatencyBreaker((window: \"1s\", threshold: \"1ms\", break_duration: \"1s\", break_multiplier: 1e300))",
    "LatencyBreaker((window: \"1s\", threshold: \"1ms\", consecutive: 4294967295, probes: 4294967295))",
    "Resilience4j((slidingWindowSize: 4294967295))",
    "Resilience4j((slidingWindowSize: 4294967295, slidingWindowType: TIME_BASED))",
    "Resilience4j((permittedNumberOfCallsInHalfOpenState: 4294967295))",
    "Resilience4j((waitDurationInOpenState: \"18446744073709551615ns\", failureRateThreshold: 1e30))",
    "Resilience4j((failureRateThreshold: NaN, minimumNumberOfCalls: 0))",
    "Polly((FailureRatio: 2))",
    "Polly((SamplingDuration: \"0ms\"))",
    "Polly((MinimumThroughput: 4294967295, BreakDuration: \"18446744073709551615ns\"))",
    "Hystrix((metricsRollingStatisticalWindowInMilliseconds: 18446744073709551615))",
    "Hystrix((metricsRollingStatisticalWindowInMilliseconds: 10000, metricsRollingStatisticalWindowBuckets: 3))",
    "Hystrix((metricsRollingStatisticalWindowInMilliseconds: 4000000000000, \
     metricsRollingStatisticalWindowBuckets: 1, metricsHealthSnapshotIntervalInMilliseconds: 1))",
    "Hystrix((circuitBreakerSleepWindowInMilliseconds: 18446744073709551615))",
    "Sentinel((grade: 9))",
    "Sentinel((grade: 0, count: NaN, statIntervalMs: 0))",
    "Sentinel((grade: 1, count: 0.5, timeWindow: 4294967295, minRequestAmount: 4294967295))",
    "Sentinel((grade: 2, count: 1e300, statIntervalMs: 18446744073709551615))",
    "EnvoyThresholds((thresholds: [(max_connections: 0)]))",
    "EnvoyThresholds((thresholds: [(priority: High), (priority: High)]))",
    "EnvoyThresholds((thresholds: [(max_connections: 4294967295, max_pending_requests: 4294967295, \
     max_requests: 1, max_retries: 4294967295)]))",
    "DotnetStandard((retry_backoff: Linear))",
    "DotnetStandard((attempt_timeout: \"18446744073709551615ns\", total_timeout: \"18446744073709551615ns\"))",
    "DotnetStandard((rate_limiter_permits: 1, rate_limiter_queue: 4294967295, max_retry_attempts: 4294967295, \
     retry_delay: \"18446744073709551615ns\", attempt_timeout: \"1ns\"))",
];

/// Every policy case, alone in the guarded set and scoped to the fleet.
pub fn policies() -> Vec<Case> {
    let mut out = Vec::new();
    for p in POLICIES {
        let stack = format!("(name: \"guarded\", stack: [(policy: {p})]),\n    ],");
        let from = &BASE[BASE.find("(name: \"guarded\"").unwrap()..BASE.find("    expect:").unwrap()];
        let text = BASE.replacen(from, &format!("{stack}\n"), 1);
        out.push(case(format!("policy {p}"), text));
    }
    for (n, scope) in
        [("fleet huge propagation", "Fleet(propagation: \"18446744073709551615ns\")"), ("fleet", "Fleet()")]
    {
        let text = edit(
            "(policy: Limiter((permits: 8))),",
            &format!("(policy: Limiter((permits: 8)), scope: {scope}, persistent: true, classes: [\"api\"]),"),
        );
        out.push(case(format!("policy scope {n}"), text));
    }
    out
}

/// BASE without its `business` section.
pub fn without_business() -> String {
    let start = BASE.find("    business: (").unwrap();
    let end = start + BASE[start..].find("    ),\n").unwrap() + "    ),\n".len();
    format!("{}{}", &BASE[..start], &BASE[end..])
}

/// BASE with one phase named `name` (written as a RON string body).
fn phase_named(name: &str) -> String {
    edit("    expect: [", &format!("    phases: [(name: \"{name}\", start: \"1s\", end: \"2s\")],\n    expect: ["))
}

/// BASE with `decide` set to `d`.
fn deciding(d: &str) -> String {
    edit("    expect: [", &format!("    decide: {d},\n    expect: ["))
}

/// Issue 32's "accepts nonsense": each is refused by `check` and `run`, located, since a run
/// of it would report figures that mean nothing. (name, scenario text).
pub fn nonsense() -> Vec<Case> {
    let guarded = |p: &str| edit("(policy: Limiter((permits: 8))),", &format!("(policy: {p}),"));
    let expect = |metric: &str, class: bool, value: &str| {
        let class = if class { "class: \"api\", " } else { "" };
        edit(
            "expect: [(policy: \"direct\", class: \"api\", metric: \"ok_ratio\", op: Ge, value: 0.25)]",
            &format!("expect: [(policy: \"direct\", {class}metric: \"{metric}\", op: Ge, value: {value})]"),
        )
    };
    let constraint = |metric: &str, value: &str| {
        deciding(&format!(
            "(minimize: \"dependency_calls\", subject_to: [(class: \"api\", metric: \"{metric}\", op: Ge, value: {value})])"
        ))
    };
    let mut cases: Vec<(String, String)> = Vec::new();
    for m in ["in_time_ratio", "ok_ratio", "fallback_ratio", "goodput_ratio", "stale_wrong_fraction"] {
        for v in ["2.0", "1.0000001", "-0.1", "-1e-9", "100"] {
            cases.push((format!("expect {m} {v}"), expect(m, true, v)));
            cases.push((format!("constraint {m} {v}"), constraint(m, v)));
        }
    }
    for m in ["open_fraction", "workers_saturated_fraction", "pool_saturated_fraction", "limiter_wait_probability"] {
        for v in ["2.0", "-0.5"] {
            cases.push((format!("expect {m} {v}"), expect(m, false, v)));
        }
    }
    let no_business = without_business();
    for (n, d) in [
        ("minimize business_cost", "(minimize: \"business_cost\")"),
        ("minimize class business_cost", "(minimize: \"api/business_cost\")"),
        ("minimize refunds", "(minimize: \"api/refunds\")"),
        ("minimize orders", "(maximize: \"api/orders\")"),
        ("minimize lost_orders", "(minimize: \"api/lost_orders\")"),
        ("minimize substitutions", "(minimize: \"api/substitutions\")"),
        (
            "constraint business_cost",
            "(minimize: \"dependency_calls\", subject_to: [(class: \"api\", metric: \"business_cost\", op: Le, value: 5)])",
        ),
    ] {
        let text = no_business.replacen("    expect: [", &format!("    decide: {d},\n    expect: ["), 1);
        cases.push((format!("no business {n}"), text));
    }
    for (n, name) in [
        ("colon", "a:b"),
        ("slash", "a/b"),
        ("newline", "a\\nb"),
        ("escape", "a\\u{1b}[31mb"),
        ("tab", "a\\tb"),
        ("nul", "a\\u{0}b"),
        ("bidi", "a\\u{202e}b"),
        ("only colon", ":"),
        ("blank", " "),
    ] {
        cases.push((format!("phase name {n}"), phase_named(name)));
    }
    for d in ["0ms", "1ns", "499ms", "499999999ns", "86400000000001ns", "25h"] {
        cases.push((format!("dotnet break {d}"), guarded(&format!("DotnetStandard((break_duration: \"{d}\"))"))));
    }
    for d in ["499ms", "25h"] {
        cases.push((
            format!("dotnet sampling {d}"),
            guarded(&format!("DotnetStandard((attempt_timeout: \"1ms\", sampling_duration: \"{d}\"))")),
        ));
    }
    cases.push(("consecutive break 0".into(), guarded("ConsecutiveBreaker((failures: 3, break_duration: \"0ms\"))")));
    cases.push((
        "consecutive break 0s".into(),
        guarded("ConsecutiveBreaker((failures: 1, break_duration: \"0s\", probes: 2))"),
    ));
    for (n, classes) in [
        ("twice", "[(name: \"api\", share: 0.2, on_full: Reject), (name: \"api\", share: 0.2, on_full: Reject)]"),
        (
            "thrice",
            "[(name: \"api\", share: 0.1, on_full: FallbackNow), (name: \"api\", share: 0.1, on_full: FallbackNow), (name: \"api\", share: 0.1, on_full: FallbackNow)]",
        ),
        (
            "twice zero share",
            "[(name: \"api\", share: 0, on_full: Wait(\"10ms\")), (name: \"api\", share: 0, on_full: Wait(\"10ms\"))]",
        ),
    ] {
        cases.push((
            format!("bulkhead class {n}"),
            guarded(&format!("TieredBulkhead((permits: 4, classes: {classes}))")),
        ));
    }
    cases.into_iter().map(|(n, text)| case(format!("nonsense {n}"), text)).collect()
}

/// The controls of [`nonsense`]: the same edits at their valid bounds, each accepted.
pub fn nonsense_controls() -> Vec<Case> {
    let guarded = |p: &str| edit("(policy: Limiter((permits: 8))),", &format!("(policy: {p}),"));
    let mut cases = vec![
        ("expect in_time_ratio 1".to_string(), edit("metric: \"ok_ratio\", op: Ge, value: 0.25", "metric: \"in_time_ratio\", op: Le, value: 1.0")),
        ("expect ok_ratio 0".to_string(), edit("op: Ge, value: 0.25", "op: Ge, value: 0")),
        ("expect amplification 2".to_string(), edit("class: \"api\", metric: \"ok_ratio\", op: Ge, value: 0.25", "metric: \"amplification\", op: Le, value: 2.0")),
        ("business_cost with business".to_string(), deciding("(minimize: \"business_cost\")")),
        ("phase name with spaces and dashes".to_string(), phase_named("peak - hour 2")),
        ("dotnet break 500ms".to_string(), guarded("DotnetStandard((break_duration: \"500ms\"))")),
        ("dotnet break 24h".to_string(), guarded("DotnetStandard((break_duration: \"24h\"))")),
        ("consecutive break 1ns".to_string(), guarded("ConsecutiveBreaker((failures: 3, break_duration: \"1ns\"))")),
        (
            "bulkhead two classes".to_string(),
            edit("classes: [", "classes: [(name: \"web\", arrivals: Poisson(rate_per_s: 1), deadline: \"1s\"),")
                .replace(
                    "(policy: Limiter((permits: 8))),",
                    "(policy: TieredBulkhead((permits: 4, classes: [(name: \"api\", share: 0.5, on_full: Reject), (name: \"web\", share: 0.5, on_full: Reject)]))),",
                ),
        ),
    ];
    cases.push((
        "constraint ratio 1".into(),
        deciding("(minimize: \"dependency_calls\", subject_to: [(class: \"api\", metric: \"in_time_ratio\", op: Le, value: 1)])"),
    ));
    cases.into_iter().map(|(n, text)| case(format!("nonsense {n} control"), text)).collect()
}

/// Values of the wrong type for each kind of field: (kind's values in FIELDS, wrong values).
const WRONG_TYPES: &[(&[&str], &[&str])] = &[
    (INTS, &["2.5", "true", "\"2\"", "-0"]),
    (FLOATS, &["\"x\"", "true", "[1]"]),
    (DURS, &["\"-5ms\"", "\"5 parsecs\"", "\"\"", "5.0", "\"ms\""]),
];

/// Every field with each value of the wrong type for its kind (an integer field given a
/// fraction, a duration given a number or a negative text, ...).
pub fn wrong_types() -> Vec<Case> {
    let mut out = Vec::new();
    for (key, value, kind) in FIELDS {
        let Some((_, wrong)) = WRONG_TYPES.iter().find(|(k, _)| k == kind) else { continue };
        for w in *wrong {
            let text = edit(&format!("{key}{value}"), &format!("{key}{w}"));
            let action = Action::Check("s.ron".into());
            out.push(Case { action, ..case(format!("type {key}{value} -> {w}"), text) });
        }
    }
    out
}

/// Every numeric rule of validation on both sides of its bound: (name, text in BASE,
/// replacement). The `ok` ones lie on the valid side and run.
const BOUNDARIES: &[(&str, &str, &str)] = &[
    ("replications 1001", "replications: 2", "replications: 1001"),
    ("order_fraction 1 ok", "order_fraction: 0.1", "order_fraction: 1.0"),
    ("order_fraction above 1", "order_fraction: 0.1", "order_fraction: 1.0000001"),
    ("order_fraction below 0", "order_fraction: 0.1", "order_fraction: -0.0000001"),
    ("probability 1 ok", "probability: 0.2", "probability: 1.0"),
    ("probability above 1", "probability: 0.2", "probability: 1.0000001"),
    ("sigma 5 ok", "sigma: 0.5", "sigma: 5.0"),
    ("sigma above 5", "sigma: 0.5", "sigma: 5.0000001"),
    ("sigma 0 ok", "sigma: 0.5", "sigma: 0.0"),
    ("error rate 1 ok", "error_rate: Constant(0.01)", "error_rate: Constant(1.0)"),
    ("error rate above 1", "error_rate: Constant(0.01)", "error_rate: Constant(1.0000001)"),
    ("substitution allowance above 1", "substitution_allowance: 0.5", "substitution_allowance: 1.01"),
    ("degraded allowance 1 ok", "degraded_substitution_allowance: 0.7", "degraded_substitution_allowance: 1"),
    ("zipf 0 ok", "zipf: 1.0", "zipf: 0.0"),
    ("zipf negative", "zipf: 1.0", "zipf: -0.0001"),
    ("warmup equals horizon", "warmup: \"100ms\"", "warmup: \"2s\""),
    ("warmup just below horizon ok", "warmup: \"100ms\"", "warmup: \"1999ms\""),
    ("window below a millionth of the horizon", "window: \"500ms\"", "window: \"1999ns\""),
    ("window longer than horizon ok", "window: \"500ms\"", "window: \"10s\""),
    ("deadline 1ns ok", "deadline: \"500ms\"", "deadline: \"1ns\""),
    ("deadline 0", "deadline: \"500ms\"", "deadline: \"0ns\""),
    ("patience 0", "patience: \"300ms\"", "patience: \"0s\""),
    ("replicas 10000 ok", "count: 2, balancing: RoundRobin", "count: 10000, balancing: RoundRobin"),
    ("replicas 0", "count: 2, balancing: RoundRobin", "count: 0, balancing: RoundRobin"),
    ("servers 1 ok", "capacity: (servers: 8, queue: 16)", "capacity: (servers: 1, queue: 0)"),
    ("diurnal amplitude 1 ok", "Poisson(rate_per_s: 20)", "Diurnal(mean_rate_per_s: 5, amplitude: 1.0)"),
    ("diurnal amplitude above 1", "Poisson(rate_per_s: 20)", "Diurnal(mean_rate_per_s: 5, amplitude: 1.0000001)"),
    ("profile rate 0 ok", "Poisson(rate_per_s: 20)", "PoissonProfile(points: [(\"0s\", 0), (\"1s\", 5)])"),
    ("drift step factor tiny ok", "hop: \"1ms\",", "hop: \"1ms\", drift: Step(at: \"1s\", factor: 1e-9),"),
    (
        "drift periodic duration equals period ok",
        "hop: \"1ms\",",
        "hop: \"1ms\", drift: Periodic(period: \"1s\", duration: \"1s\", factor: 2),",
    ),
    (
        "drift periodic duration above period",
        "hop: \"1ms\",",
        "hop: \"1ms\", drift: Periodic(period: \"1s\", duration: \"1000000001ns\", factor: 2),",
    ),
    (
        "partition end equals start ok",
        "overhead: \"1ms\",",
        "overhead: \"1ms\", partitions: [(start: \"1s\", end: \"1s\", instances: [1], mode: FailFast)],",
    ),
    (
        "partition last instance ok",
        "overhead: \"1ms\",",
        "overhead: \"1ms\", partitions: [(start: \"0s\", end: \"1s\", instances: [1], mode: FailFast)],",
    ),
    (
        "partition instance 2",
        "overhead: \"1ms\",",
        "overhead: \"1ms\", partitions: [(start: \"0s\", end: \"1s\", instances: [2], mode: FailFast)],",
    ),
    ("expect value 0.0 ok", "op: Ge, value: 0.25", "op: Ge, value: 0.0"),
    ("expect factor NaN", "op: Ge, value: 0.25", "op: Ge, than: \"guarded\", factor: NaN"),
    ("expect than ok", "op: Ge, value: 0.25", "op: Le, than: \"guarded\", factor: 2.0"),
];

/// Every [`BOUNDARIES`] case.
pub fn boundaries() -> Vec<Case> {
    BOUNDARIES.iter().map(|(n, from, to)| case(format!("boundary {n}"), edit(from, to))).collect()
}
