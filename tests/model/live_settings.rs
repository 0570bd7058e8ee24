//! Issue 30 item 8, "every setting is live": every field `brownout explain --all` lists (the
//! scenario's JSON schema, generated the way `explain` generates it, so a new field is picked
//! up without touching this test) is either shown to change some figure of a run, or named
//! in [`EXEMPT`] with the reason it cannot.
//!
//! How a field is shown live: [`PROBE`] is a scenario with every section given. It is turned into its
//! JSON form (the form sweeps edit), every value in it is traced back through the schema to
//! the field that holds it, and the value is changed (a number doubled, halved or moved by
//! one, a duration doubled or halved, a flag flipped, an enum set to each other unit variant)
//! until the scenario still validates and the figures of a run (every summary, phase and
//! window row) differ from the unchanged run's. A field whose values never change a figure
//! in any probe, and is not exempt, fails the test: it is inert, or no probe reaches it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use brownout::model::{Model, RunOptions, run_policy};
use brownout::scenario::{Scenario, validate};
use rayon::prelude::*;
use serde_json::{Map, Value};

/// A field as `explain` lists it: (type, field). A struct variant's fields belong to
/// `Enum.Variant`.
type Field = (String, String);

/// Fields that cannot change a figure of a run, and why (`*`: every field of the type).
const EXEMPT: &[(&str, &str, &str)] = &[
    ("Expectation", "*", "an expectation judges the figures of a run (tests/cli/scenarios.rs), changes none"),
    ("Decide", "*", "a decision chooses among the figures of runs (tests/cli/decide_run.rs), changes none"),
    ("Constraint", "*", "a constraint judges the figures of runs (tests/cli/decide_run.rs), changes none"),
    (
        "Limits",
        "*",
        "guards that refuse or stop a run that would exceed them (tests/cli/guards.rs), never change a run they let through",
    ),
    (
        "ImportLayerConfig",
        "*",
        "replaced by the imported file's layers when the scenario is loaded (tests/policies/import.rs), never run",
    ),
    (
        "PluginConfig",
        "*",
        "a layer from a program that embeds brownout: the binary and these probes register none (tests/policies/plugin.rs)",
    ),
    ("Arrivals.Csv", "file", "names a data file: its rows are what drive a run (tests/io/check_data.rs)"),
    ("Drift.Csv", "file", "names a data file: its rows are what drive a run (tests/io/check_data.rs)"),
    ("Latency.Empirical", "file", "names a data file: its samples are what drive a run (tests/io/check_data.rs)"),
    (
        "Latency.Empirical",
        "column",
        "names a column of a data file: its samples are what drive a run (tests/io/check_data.rs)",
    ),
    ("ClassTier", "name", "names one of the scenario's classes (a reference, not a quantity)"),
    ("Scenario", "name", "a label: names the scenario in reports"),
    ("Scenario", "description", "text for reports"),
    ("Scenario", "expect", "judges the figures of a run (tests/cli/scenarios.rs), changes none"),
    (
        "Scenario",
        "limits",
        "guards that refuse or stop a run that would exceed them (tests/cli/guards.rs), never change a figure of a run they let through",
    ),
    (
        "Scenario",
        "replications",
        "how many times the runs repeat; each run's figures are the same (tests/model/replications.rs)",
    ),
    ("Scenario", "decide", "chooses among the figures of runs (tests/cli/decide_run.rs), changes none"),
    (
        "Scenario",
        "statistics",
        "the margins within which figures of runs tie: changes stars, bests and choices, no figure \
         (shown live in tests/sweeps/one_rule.rs: margins_from_the_scenario_are_live)",
    ),
    (
        "Statistics",
        "*",
        "the margins within which figures of runs tie: changes stars, bests and choices, no figure \
         (shown live in tests/sweeps/one_rule.rs: margins_from_the_scenario_are_live)",
    ),
    ("PolicySet", "name", "a label"),
    ("Class", "name", "a label"),
    ("Dependency", "name", "a label"),
    ("Phase", "name", "a label"),
    ("Step.Optional", "dependency", "names one of the scenario's dependencies (a reference, not a quantity)"),
    ("DependencyPool", "dependency", "names one of the scenario's dependencies (a reference, not a quantity)"),
    ("ServiceStack", "service", "names one of the scenario's services (a reference, not a quantity)"),
    (
        "NginxLimitReqConfig",
        "status",
        "takes 429 or 503 only, which the probe's numeric edits cannot reach from one another; \
         tests/policies/proxy_nginx.rs shows 429 answered `rejected` and 503 `error`",
    ),
    (
        "Slo",
        "alerts",
        "burn-rate alert rules are judged on the time series in report.html (tests/model/slo.rs: an alert's firing \
         time worked by hand), change no figure of a run",
    ),
    (
        "BurnAlert",
        "*",
        "an alert rule is judged on the time series in report.html (tests/model/slo.rs: an alert's firing time \
         worked by hand), changes no figure of a run",
    ),
    (
        "HystrixConfig",
        "metricsRollingStatisticalWindowBuckets",
        "as in Hystrix 1.5, the breaker reads the health stream, bucketed by \
         metricsHealthSnapshotIntervalInMilliseconds; these buckets shape only Hystrix's rolling-count \
         metrics, which the breaker never reads (policy/breaker/hystrix.rs); validated (must divide the window), \
         kept so that Hystrix settings load as written",
    ),
    (
        "DotnetStandardConfig",
        "retry_use_jitter",
        "brownout's retry jitter only shortens delays, not .NET's +-25 % / decorrelated jitter centred on the \
         plain delay, so the expansion keeps the plain delays (the same mean) and drops the spread \
         (policy/dotnet.rs module docs); kept so that .NET settings load as written",
    ),
];

/// Settings no probe has shown live yet, though nothing says they cannot change a figure:
/// each needs a probe that reaches it (a policy that trips, a queue that fills) or is an
/// inert setting to fix. Listed so that the gap is visible; the test fails when one of them
/// is shown live (take it off the list) and on every setting not here, so a new field is
/// never waved through.
const NOT_YET_SHOWN: &[&str] = &[];

/// The scenario schema as `explain` builds it, and its definitions.
fn schema() -> (Value, Map<String, Value>) {
    let root = schemars::generate::SchemaSettings::default().into_generator().into_root_schema_for::<Scenario>();
    let mut root = root.to_value();
    let defs = match root.as_object_mut().and_then(|o| o.remove("$defs")) {
        Some(Value::Object(d)) => d,
        _ => Map::new(),
    };
    (root, defs)
}

fn ref_name(s: &Value) -> Option<&str> {
    s.get("$ref").and_then(Value::as_str).and_then(|r| r.rsplit('/').next())
}

/// The alternatives of an enum or an option.
fn alternatives(s: &Value) -> Vec<&Value> {
    ["oneOf", "anyOf"].iter().filter_map(|k| s.get(*k).and_then(Value::as_array)).flatten().collect()
}

/// A variant written `Variant(...)`: an object with its one property.
fn variant(alt: &Value) -> Option<(&String, &Value)> {
    let props = alt.get("properties")?.as_object()?;
    (props.len() == 1 && alt.get("additionalProperties") == Some(&Value::Bool(false)))
        .then(|| props.iter().next())
        .flatten()
}

/// Every (type, field) the reference lists.
fn all_fields(root: &Value, defs: &Map<String, Value>) -> BTreeSet<Field> {
    let mut out = BTreeSet::new();
    let mut add = |name: &str, s: &Value| {
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for k in props.keys() {
                out.insert((name.to_string(), k.clone()));
            }
        }
        for alt in alternatives(s) {
            if let Some((v, inner)) = variant(alt)
                && let Some(props) = inner.get("properties").and_then(Value::as_object)
            {
                for k in props.keys() {
                    out.insert((format!("{name}.{v}"), k.clone()));
                }
            }
        }
    };
    add("Scenario", root);
    for (name, s) in defs {
        add(name, s);
    }
    out
}

/// A value of a probe: its JSON pointer, the fields that hold it (outermost first), and the
/// unit variants it may be set to instead.
struct Leaf {
    pointer: String,
    owners: Vec<Field>,
    variants: Vec<String>,
}

/// Trace every scalar of `v` back through schema `s` (of type `ty`).
fn leaves(v: &Value, s: &Value, ty: &str, defs: &Map<String, Value>, ptr: &str, owners: &[Field], out: &mut Vec<Leaf>) {
    if let Some(name) = ref_name(s) {
        if let Some(def) = defs.get(name) {
            leaves(v, def, name, defs, ptr, owners, out);
        }
        return;
    }
    if let (Some(props), Value::Object(o)) = (s.get("properties").and_then(Value::as_object), v) {
        for (k, x) in o {
            if let Some(sub) = props.get(k) {
                let mut own = owners.to_vec();
                own.push((ty.to_string(), k.clone()));
                leaves(x, sub, &format!("{ty}.{k}"), defs, &format!("{ptr}/{k}"), &own, out);
            }
        }
        return;
    }
    let alts = alternatives(s);
    if !alts.is_empty() {
        if let Value::Object(o) = v
            && o.len() == 1
        {
            let (k, x) = o.iter().next().expect("one key");
            for alt in &alts {
                if let Some((name, inner)) = variant(alt).filter(|(n, _)| *n == k) {
                    leaves(x, inner, &format!("{ty}.{name}"), defs, &format!("{ptr}/{k}"), owners, out);
                    return;
                }
            }
        }
        let units: Vec<String> = alts
            .iter()
            .filter_map(|a| {
                a.get("enum")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .or_else(|| a.get("const").map(std::slice::from_ref))
            })
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        if let Value::String(x) = v
            && units.contains(x)
        {
            let variants = units.iter().filter(|u| *u != x).cloned().collect();
            out.push(Leaf { pointer: ptr.to_string(), owners: owners.to_vec(), variants });
            return;
        }
        // An untagged choice (a delay, an option): the alternative whose shape fits.
        for alt in alts {
            let fits = match (alt.get("type").and_then(Value::as_str), v) {
                (Some("null"), _) => false,
                (Some("string"), Value::String(_)) | (Some("number" | "integer"), Value::Number(_)) => true,
                (Some("boolean"), Value::Bool(_)) | (Some("array"), Value::Array(_)) => true,
                (Some("object"), Value::Object(_)) => true,
                (None, _) => ref_name(alt).is_some() || !alternatives(alt).is_empty(),
                _ => false,
            };
            if fits {
                let before = out.len();
                leaves(v, alt, ty, defs, ptr, owners, out);
                if out.len() > before || !matches!(v, Value::Object(_) | Value::Array(_)) {
                    return;
                }
            }
        }
        return;
    }
    match v {
        Value::Array(a) => {
            let items: Vec<&Value> = match (s.get("items"), s.get("prefixItems").and_then(Value::as_array)) {
                (_, Some(p)) => p.iter().collect(),
                (Some(i), None) => vec![i; a.len()],
                _ => return,
            };
            for (i, (x, sub)) in
                a.iter().zip(items.iter().chain(std::iter::repeat(items.last().unwrap_or(&&Value::Null)))).enumerate()
            {
                leaves(x, sub, ty, defs, &format!("{ptr}/{i}"), owners, out);
            }
        }
        Value::Object(_) | Value::Null => {}
        _ => out.push(Leaf { pointer: ptr.to_string(), owners: owners.to_vec(), variants: Vec::new() }),
    }
}

/// Other values to try in place of `v`.
fn changes(v: &Value, variants: &[String]) -> Vec<Value> {
    match v {
        Value::Bool(b) => vec![Value::Bool(!b)],
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                [u * 2, u + 1, u.saturating_sub(1), u / 2, u * 10]
                    .into_iter()
                    .filter(|x| *x != u)
                    .map(Value::from)
                    .collect()
            } else {
                let x = n.as_f64().unwrap_or(0.0);
                [x * 2.0, x / 2.0, x + 1.0, x - 1.0, x * 0.9, 0.0, 1.0]
                    .into_iter()
                    .filter(|y| *y != x)
                    .filter_map(|y| serde_json::Number::from_f64(y).map(Value::Number))
                    .collect()
            }
        }
        Value::String(s) => {
            if let Ok(ns) = brownout::units::parse_duration(s) {
                let ms = ns as f64 / 1e6;
                [ms * 2.0, ms / 2.0, ms + 1000.0, ms * 10.0, ms + 1.0]
                    .into_iter()
                    .filter(|y| *y != ms)
                    .map(|y| Value::String(format!("{y}ms")))
                    .collect()
            } else {
                variants.iter().map(|u| Value::String(u.clone())).collect()
            }
        }
        _ => Vec::new(),
    }
}

/// The figures of a run of policy set `policy` (every one when None): summaries, phases and
/// window rows, as JSON.
fn figures(s: &Scenario, dir: &Path, policy: Option<usize>) -> Option<Value> {
    let model = Model::build(s, s.seed, dir).ok()?;
    let opts = RunOptions::new().with_timeseries(true);
    let which: Vec<usize> = match policy {
        Some(p) => vec![p],
        None => (0..s.policies.len()).collect(),
    };
    let mut all = Vec::new();
    for p in which {
        let r = run_policy(&model, p, opts).ok()?;
        all.push(serde_json::json!([r.summary, r.phases, r.rows]));
    }
    Some(Value::Array(all))
}

/// The shipped scenarios that load, with their folder (data files are relative to it).
fn probes() -> Vec<(PathBuf, Scenario)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let at = dir.join("probe.ron");
    let periodic =
        STEP.replace("Step(at: \"20s\", factor: 20.0)", "Periodic(period: \"20s\", duration: \"5s\", factor: 20.0)");
    // A pool of 5 that the step fills: where a timeout starts (the wait for a connection or not)
    // shows.
    let pooled = STEP
        .replace("max_connections: 50", "max_connections: 5")
        .replace(r#"(timeout: "300ms")"#, r#"(timeout: "300ms", starts: Connection)"#);
    // The connection probe twice: a pool of a dependency's own shares its settings' types
    // with the fleet's pool, so its own fields get their turn once those are shown live.
    let conns_again = CONNS.replace("seed: 29", "seed: 31");
    [
        PROBE,
        PROBE2,
        STEP,
        &periodic,
        &pooled,
        EDGES,
        SERVER,
        GRAPH,
        SHARED,
        NGINX,
        HAPROXY,
        CONNS,
        &conns_again,
        SERVICES,
    ]
    .into_iter()
    .map(|text| (at.clone(), brownout::scenario::load_text(&at, text).unwrap_or_else(|e| panic!("{e}"))))
    .collect()
}

/// The probe: a small fleet through a dependency incident (a latency brownout, errors, a slow
/// replica, a slow mode, a partition, a restart) with every section of a scenario given and
/// one policy set per policy, each behind a timeout, so that each setting has something to
/// act on. Short (120 s at 80 requests/s), so that a few hundred changed runs stay quick.
const PROBE: &str = r#"Scenario(
    name: "probe", seed: 3, horizon: "120s", warmup: "5s", window: "5s",
    recovery: (tolerance: 0.05, hold: 2, baseline: 4, degraded_below: 0.8),
    fleet: (
        instances: 2,
        workers: (slots: 60, queue: 40, max_wait: Some("1s")),
        pool: (max_connections: 40, acquire_timeout: "500ms"),
        overhead: Exponential(mean: "2ms"),
        timeout_unwind: Some("5ms"),
        partitions: [(instances: [1], start: "90s", end: "95s", mode: Hang(connect_timeout: "1s"))],
        restarts: [(at: "70s", instances: [0, 1], interval: "2s", persistent_cache: true, persistent_policies: true)],
    ),
    classes: [
        (name: "checkout", arrivals: Poisson(rate_per_s: 20), deadline: "2s", fallback: OnRefusalOrFailure,
         order_fraction: 0.5, priority: 2, reload: Some((probability: 0.3, patience: "1s", delay: "100ms", max_reloads: 2))),
        (name: "browse", arrivals: Poisson(rate_per_s: 60), deadline: "1s", fallback: OnRefusal, priority: 1,
         work: Some(Constant("1ms"))),
    ],
    dependency: (
        latency: LogNormal(median: "50ms", sigma: 0.5),
        drift: Brownout(start: "30s", ramp: "10s", hold: "30s", peak: 20.0),
        error_rate: Points([("0s", 0.02), ("40s", 0.3), ("80s", 0.02)]),
        modes: [(at: "100s", mode: Slow("100ms")), (at: "110s", mode: Healthy)],
        capacity: Some((servers: 30, queue: 20)),
        hop: "2ms",
        replicas: Some((count: 3, balancing: PowerOfTwo, slow: [(replica: 0, start: "20s", end: "60s", factor: 5.0)],
            outlier_detection: Some((consecutive_5xx: 3, consecutive_gateway_failure: 3, enforcing_consecutive_gateway_failure: 100,
                max_ejection_percent: 50, success_rate_minimum_hosts: 2, success_rate_request_volume: 20,
                success_rate_stdev_factor: 500, interval: "2s", base_ejection_time: "5s", max_ejection_time: "30s")))),
        cancellation: Propagate(delay: "5ms"),
    ),
    catalogue: Some((items: 500, changes_per_hour: 20.0, ttl: Some("60s"), zipf: 1.0, shared_cache: false, prewarm: true)),
    business: Some((substitution_allowance: 0.5, degraded_substitution_allowance: 0.8, substitution_cost: 1.0,
        refund_cost: 5.0, lost_order_cost: 20.0)),
    phases: [(name: "incident", start: "30s", end: "80s")],
    policies: [
        (name: "timeout", stack: [(policy: Timeout((timeout: "800ms")))]),
        (name: "retry", stack: [(policy: Retry((max_attempts: 3, backoff: "50ms", multiplier: 2.0, jitter: 0.5,
            max_backoff: Some("400ms"), max_elapsed: Some("900ms")))), (policy: Timeout((timeout: "800ms")))]),
        (name: "consecutive", stack: [(policy: ConsecutiveBreaker((failures: 5, break_duration: "5s"))),
            (policy: Timeout((timeout: "800ms")))]),
        (name: "limiter", stack: [(policy: Limiter((permits: 10, queue: 20, max_wait: "200ms", refuse_as: Rejected,
            order: Priority, class_max_wait: [("checkout", "500ms")], shed_by_deadline: false))), (policy: Timeout((timeout: "800ms")))]),
        (name: "hedge", stack: [(policy: Hedge((latency_percentile: 0.9, min_data_points: 20, period: "10s"))),
            (policy: Timeout((timeout: "800ms")))]),
        (name: "aimd", stack: [(policy: Aimd((max_limit: 30, timeout: "300ms", queue: 10, max_wait: "100ms"))), (policy: Timeout((timeout: "800ms")))]),
        (name: "vegas", stack: [(policy: Vegas((max_concurrency: 30, queue: 10, max_wait: "100ms"))), (policy: Timeout((timeout: "800ms")))]),
        (name: "gradient2", stack: [(policy: Gradient2((max_concurrency: 30, queue: 10, max_wait: "100ms"))), (policy: Timeout((timeout: "800ms")))]),
        (name: "envoy-gradient", stack: [(policy: EnvoyGradient((concurrency_update_interval: "1s",
            min_rtt_calc_interval: "20s"))), (policy: Timeout((timeout: "800ms")))]),
        (name: "bulkhead", stack: [(policy: TieredBulkhead((permits: 20, queue: 50, classes: [
                (name: "checkout", share: 0.5, on_full: Wait("500ms")), (name: "browse", share: 0.5, on_full: FallbackNow)],
            degrade: Some((window: "1s", p95_over: "300ms", windows: 2, recovery: "5s"))))), (policy: Timeout((timeout: "800ms")))]),
        (name: "tps-budget", stack: [(policy: RetryBudget(())), (policy: Retry((max_attempts: 3))), (policy: Timeout((timeout: "800ms")))]),
        (name: "grpc", stack: [(policy: GrpcThrottle((max_tokens: 10, token_ratio: 0.1))), (policy: Retry((max_attempts: 3))),
            (policy: Timeout((timeout: "800ms")))]),
        (name: "adaptive-retry", stack: [(policy: AdaptiveRetry(())), (policy: Retry((max_attempts: 3))), (policy: Timeout((timeout: "800ms")))]),
        (name: "error-rate", stack: [(policy: ErrorRateBreaker((window: Count(20), break_duration: "5s",
            slow_call_duration_threshold: Some("400ms"), slow_call_rate_threshold: 50, break_multiplier: 2.0,
            max_break: Some("12s"), max_half_open_wait: Some("1s"), inflight_ageing: true, stragglers: Credit))),
            (policy: Timeout((timeout: "800ms")))]),
        (name: "latency-breaker", stack: [(policy: LatencyBreaker((window: "5s", threshold: "300ms", break_duration: "5s"))),
            (policy: Timeout((timeout: "800ms")))]),
        (name: "resilience4j", stack: [(policy: Resilience4j((minimumNumberOfCalls: 20, slowCallDurationThreshold: "500ms",
            slowCallRateThreshold: 50, maxWaitDurationInHalfOpenState: "2s", transitionToStateAfterWaitDuration: CLOSED,
            waitIntervalFunctionInOpenState: Some(ExponentialBackoff(initialInterval: "2s", maxInterval: Some("20s"), multiplier: 2.0))))), (policy: Timeout((timeout: "800ms")))]),
        (name: "polly", stack: [(policy: Polly(())), (policy: Timeout((timeout: "800ms")))]),
        (name: "hystrix", stack: [(policy: Hystrix(())), (policy: Timeout((timeout: "800ms")))]),
        (name: "sentinel", stack: [(policy: Sentinel((count: 0.2, timeWindow: 5))), (policy: Timeout((timeout: "800ms")))]),
        (name: "opossum", stack: [(policy: Opossum((timeout: "800ms")))]),
        (name: "dotnet", stack: [(policy: DotnetStandard(()))]),
        (name: "shed", stack: [(policy: ShedByDeadline((min_remaining: "300ms"))), (policy: Timeout((timeout: "800ms")))]),
        (name: "haproxy", stack: [(policy: HaproxyBackend((maxconn: 6, maxqueue: 4, timeout_queue: "200ms",
            timeout_server: "400ms")))]),
        (name: "haproxy-connect", stack: [(policy: HaproxyBackend((maxconn: 6, timeout_connect: "200ms")))]),
    ],
)"#;

/// The second probe: the shapes the first leaves out (other arrival processes, drifts,
/// fallback answers, windows, a fleet-wide scope, Envoy's thresholds, a fixed hedge delay).
const PROBE2: &str = r#"Scenario(
    name: "probe2", seed: 5, horizon: "90s", warmup: "5s", window: "5s",
    fleet: (instances: 2, workers: (slots: 40), pool: (max_connections: 30, acquire_timeout: "300ms")),
    classes: [
        (name: "burst", arrivals: Burst(at: "30s", base_rate_per_s: 20, duration: "10s", multiplier: 4.0), deadline: "1s",
         fallback: OnRefusalOrFailure, fallback_answer: FailOpen(cost_per_use: 0.5)),
        (name: "users", arrivals: ClosedLoop(users: 20, think: "500ms"), deadline: "1s",
         fallback: OnRefusalOrFailure, fallback_answer: FailClosed(cost_per_use: 0.5), order_fraction: 0.3),
        (name: "daily", arrivals: Diurnal(mean_rate_per_s: 20, amplitude: 0.5, period: "60s", peak_at: "20s"), deadline: "1s",
         fallback: OnRefusalOrFailure, fallback_answer: LastAnswer(cost_per_use: 0.5, max_age: Some("3s"))),
        (name: "profile", arrivals: PoissonProfile(points: [("0s", 10), ("45s", 40), ("90s", 10)]), deadline: "1s"),
        (name: "script", arrivals: Scripted(times: ["10s", "10s", "10s", "40s", "40s", "41s"]), deadline: "1s"),
    ],
    dependency: (
        latency: Exponential(mean: "40ms"),
        drift: Ramp(start: "20s", end: "50s", from: 1.0, to: 15.0),
        error_rate: Constant(0.05),
    ),
    policies: [
        (name: "fleet-breaker", stack: [(policy: ErrorRateBreaker((window: Time(bucket: "1s", buckets: 5), break_duration: "3s",
            minimum_calls: 5)), scope: Fleet(propagation: "200ms")), (policy: Timeout((timeout: "500ms")))]),
        (name: "envoy", stack: [(policy: EnvoyThresholds((thresholds: [(max_connections: 10, max_pending_requests: 5,
            max_requests: 12, max_retries: 2)]))), (policy: Retry((max_attempts: 3))), (policy: Timeout((timeout: "500ms")))]),
        (name: "hedge", stack: [(policy: Hedge((delay: Some("60ms")))), (policy: Timeout((timeout: "500ms")))]),
        (name: "classes", stack: [(policy: Limiter((permits: 3)), classes: ["burst", "daily"]), (policy: Timeout((timeout: "500ms")))]),
    ],
)"#;

/// The third probe: drifts that the others leave out, one per run.
const STEP: &str = r#"Scenario(
    name: "probe3", seed: 7, horizon: "60s", window: "5s",
    fleet: (workers: (slots: 100), pool: (max_connections: 50, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 50), deadline: "500ms")],
    dependency: (latency: Constant("20ms"), drift: Step(at: "20s", factor: 20.0)),
    policies: [(name: "timeout", stack: [(policy: Timeout((timeout: "300ms")))])],
)"#;

/// The fourth probe: settings that only act once a policy is pushed to its edge (a limit that
/// grows to its cap, a breaker that half-opens and re-opens, a queue that fills, a rule that
/// trips on a ratio, a replica ejected again and again, a breaker restarted without its state).
/// Errors from the start (opossum's warm-up), a brownout with errors, a replica that times out
/// (gateway failures), an instance restarted at 60 s without `persistent_policies`.
const EDGES: &str = r#"Scenario(
    name: "probe4", seed: 11, horizon: "100s", warmup: "5s", window: "5s",
    fleet: (
        instances: 2,
        workers: (slots: 200),
        pool: (max_connections: 200, acquire_timeout: "1s"),
        restarts: [(at: "60s", instances: [0], interval: "1s", persistent_cache: false, persistent_policies: false)],
    ),
    classes: [
        (name: "a", arrivals: Poisson(rate_per_s: 40), deadline: "2s", fallback: OnRefusalOrFailure,
         fallback_answer: FailOpen(cost_per_use: 0.5), priority: 2),
        (name: "b", arrivals: Poisson(rate_per_s: 40), deadline: "1s", priority: 1),
    ],
    dependency: (
        latency: LogNormal(median: "40ms", sigma: 0.5),
        drift: Brownout(start: "30s", ramp: "10s", hold: "30s", peak: 20.0),
        error_rate: Points([("0s", 0.6), ("8s", 0.6), ("9s", 0.02), ("40s", 0.5), ("70s", 0.5), ("71s", 0.02)]),
        replicas: Some((count: 3, balancing: RoundRobin, slow: [(replica: 0, start: "15s", end: "90s", factor: 30.0)],
            outlier_detection: Some((consecutive_5xx: 3, consecutive_gateway_failure: 2, enforcing_consecutive_gateway_failure: 50,
                max_ejection_percent: 50, interval: "1s", base_ejection_time: "4s", max_ejection_time: "10s")))),
    ),
    policies: [
        (name: "aimd", stack: [(policy: Aimd((initial_limit: 2, min_limit: 1, max_limit: 4, timeout: "300ms")), persistent: true),
            (policy: Timeout((timeout: "800ms")))]),
        (name: "vegas", stack: [(policy: Vegas((initial_limit: 2, max_concurrency: 4))), (policy: Timeout((timeout: "800ms")))]),
        (name: "consecutive", stack: [(policy: ConsecutiveBreaker((failures: 3, break_duration: "1s", probes: 3,
            success_threshold: 2, exclude: [Timeout]))), (policy: Timeout((timeout: "300ms")))]),
        (name: "bulkhead", stack: [(policy: TieredBulkhead((permits: 6, queue: 2, classes: [
                (name: "a", share: 0.5, borrow: false, on_full: Wait("300ms")), (name: "b", share: 0.3, borrow: false, on_full: Wait("300ms"))],
            degrade: Some((window: "1s", p95_over: "200ms", windows: 1, recovery: "3s", min_samples: 8))))),
            (policy: Timeout((timeout: "800ms")))]),
        (name: "limiter", stack: [(policy: Limiter((permits: 2, queue: 4, max_wait: "900ms", order: Fifo, shed_by_deadline: true))),
            (policy: Timeout((timeout: "800ms")))]),
        (name: "dotnet", stack: [(policy: DotnetStandard((rate_limiter_permits: 4, rate_limiter_queue: 2, total_timeout: "1500ms",
            attempt_timeout: "500ms", retry_delay: "100ms", retry_use_jitter: false, sampling_duration: "4s", minimum_throughput: 10,
            failure_ratio: 0.3, break_duration: "2s")))]),
        (name: "envoy-gradient", stack: [(policy: EnvoyGradient((concurrency_update_interval: "500ms", min_rtt_calc_interval: "10s",
            fixed_value: Some("30ms")))), (policy: Timeout((timeout: "800ms")))]),
        (name: "envoy", stack: [(policy: Retry((max_attempts: 3))), (policy: EnvoyThresholds((thresholds: [(priority: High, max_retries: 1)]))),
            (policy: Timeout((timeout: "500ms")))]),
        (name: "error-rate", stack: [(policy: ErrorRateBreaker((window: Count(10), break_duration: "500ms", minimum_calls: 5,
            max_half_open_wait: Some("200ms"), stragglers: Discard))), (policy: Timeout((timeout: "1500ms")))]),
        (name: "hystrix", stack: [(policy: Hystrix((executionTimeoutEnabled: true, executionTimeoutInMilliseconds: 300,
            metricsRollingStatisticalWindowInMilliseconds: 2000, metricsRollingStatisticalWindowBuckets: 4,
            circuitBreakerSleepWindowInMilliseconds: 1000, circuitBreakerRequestVolumeThreshold: 10)))]),
        (name: "latency-breaker", stack: [(policy: LatencyBreaker((window: "2s", threshold: "200ms", break_duration: "2s",
            break_multiplier: 2.0, max_break: Some("3s"), min_calls: 20))), (policy: Timeout((timeout: "800ms")))]),
        (name: "opossum", stack: [(policy: Opossum((timeout: "300ms", reset_timeout: "5s", volume_threshold: 20, allow_warm_up: true,
            capacity: Some(3))))]),
        (name: "resilience4j", stack: [(policy: Resilience4j((minimumNumberOfCalls: 10, slidingWindowSize: 20,
            waitDurationInOpenState: "3s", permittedNumberOfCallsInHalfOpenState: 10, maxWaitDurationInHalfOpenState: "200ms",
            transitionToStateAfterWaitDuration: CLOSED))), (policy: Timeout((timeout: "800ms")))]),
        (name: "retry", stack: [(policy: Retry((max_attempts: 4, backoff: "100ms", multiplier: 3.0, jitter: 0.0,
            max_backoff: Some("300ms")))), (policy: Timeout((timeout: "500ms")))]),
        (name: "sentinel", stack: [(policy: Sentinel((grade: 0, count: 200, timeWindow: 2, slowRatioThreshold: 0.5,
            statIntervalMs: 1000, minRequestAmount: 5))), (policy: Timeout((timeout: "800ms")))]),
    ],
)"#;

/// The fifth probe: the dependency's own queue rules (LIFO, a wait bound, CoDel) under a load
/// step, periodic arrivals, an SLO, a token-bucket rate limit and retried refusals.
const SERVER: &str = r#"Scenario(
    name: "probe5", seed: 13, horizon: "30s", warmup: "2s", window: "2s",
    fleet: (workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "1s")),
    classes: [
        (name: "tick", arrivals: Periodic(rate_per_s: 60, phase: "3ms"), deadline: "400ms",
         slo: Some((target: 0.99, window: "1h"))),
        (name: "burst", arrivals: Burst(at: "10s", base_rate_per_s: 20, duration: "10s", multiplier: 4.0), deadline: "400ms"),
    ],
    dependency: (
        latency: Exponential(mean: "20ms"),
        drift: Step(at: "12s", factor: 3.0),
        capacity: Some((servers: 2, queue: 40, discipline: Lifo, max_wait: Some("150ms"),
            codel: Some((target: "20ms", interval: "200ms")))),
    ),
    policies: [
        (name: "timeout", stack: [(policy: Timeout((timeout: "300ms")))]),
        (name: "rate", stack: [(policy: RateLimit((rate_per_s: 50, burst: 10, refuse_as: Fallback, per_class: true))),
            (policy: Timeout((timeout: "300ms")))]),
        (name: "retry-refusals", stack: [(policy: Retry((max_attempts: 3, backoff: "20ms", on_refusal: [Layer429]))),
            (policy: Limiter((permits: 3))), (policy: Timeout((timeout: "300ms")))]),
    ],
)"#;

/// The seventh probe: load-dependent service at the dependency (`sharing`: the scalability
/// law, whose coefficients and variant each change the calls' times), which the fifth's
/// queue rules cannot sit beside.
const SHARED: &str = r#"Scenario(
    name: "probe7", seed: 19, horizon: "30s", warmup: "2s", window: "2s",
    fleet: (workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 150), deadline: "400ms")],
    dependency: (
        latency: Exponential(mean: "20ms"),
        capacity: Some((servers: 4, queue: 200, sharing: Usl(sigma: 0.05, kappa: 0.002))),
    ),
    policies: [(name: "timeout", stack: [(policy: Timeout((timeout: "300ms")))])],
)"#;

/// The sixth probe: a service graph (several dependencies, a call plan with a parallel group
/// and an optional call), a pool of its own for one dependency, a layer scoped to two, and a
/// partition cutting one.
const GRAPH: &str = r#"Scenario(
    name: "probe6", seed: 17, horizon: "30s", warmup: "2s", window: "2s",
    fleet: (workers: (slots: 200), pool: (max_connections: 200, acquire_timeout: "1s"),
        pools: [(dependency: "a", max_connections: 4, acquire_timeout: "40ms")],
        partitions: [(instances: [0], start: "10s", end: "14s", mode: FailFast, dependencies: ["a"])]),
    classes: [
        (name: "page", arrivals: Poisson(rate_per_s: 40), deadline: "600ms", fallback: OnRefusalOrFailure,
         fallback_answer: FailOpen(cost_per_use: 0.5),
         calls: [Call("db"), Parallel(join: First, calls: [Call("a"), Optional(dependency: "b", cost: "50ms")])]),
    ],
    dependencies: [
        (name: "db", latency: Exponential(mean: "20ms")),
        (name: "a", latency: LogNormal(median: "60ms", sigma: 0.8), error_rate: Constant(0.3)),
        (name: "b", latency: Exponential(mean: "80ms"), error_rate: Constant(0.3)),
    ],
    policies: [
        (name: "timeout", stack: [(policy: Timeout((timeout: "300ms")))]),
        (name: "scoped", stack: [(policy: Timeout((timeout: "90ms")), dependencies: ["a", "db"]),
            (policy: Timeout((timeout: "300ms")))]),
    ],
)"#;

/// The services probe: a service (its own slots with a queue and a wait limit, a pool, a
/// stack, a plan with a quorum and an optional call) that a busy page calls, and a policy
/// set giving it another stack.
const SERVICES: &str = r#"Scenario(
    name: "probe11", seed: 31, horizon: "30s", warmup: "2s", window: "2s",
    fleet: (workers: (slots: 400), pool: (max_connections: 400, acquire_timeout: "1s")),
    classes: [(name: "page", arrivals: Poisson(rate_per_s: 100), deadline: "800ms", calls: [Call("pricing")])],
    dependencies: [
        (name: "pricing", latency: Exponential(mean: "5ms"), cancellation: Propagate(delay: "1ms"),
         service: (instances: 2, workers: (slots: 3, queue: 4, max_wait: "60ms"), pool: (max_connections: 5, acquire_timeout: "30ms"),
                   stack: [(policy: Timeout((timeout: "120ms")), dependencies: ["tax"])],
                   calls: [Parallel(join: Quorum(1), calls: [Call("tax"), Call("tax")]),
                           Optional(dependency: "rates", cost: "5ms")])),
        (name: "tax", latency: LogNormal(median: "30ms", sigma: 1.0), error_rate: Constant(0.1)),
        (name: "rates", latency: Exponential(mean: "10ms"), error_rate: Constant(0.3)),
    ],
    policies: [
        (name: "own"),
        (name: "set", stack: [(policy: Timeout((timeout: "200ms")))],
         services: [(service: "pricing", stack: [(policy: Retry((max_attempts: 2))), (policy: Timeout((timeout: "80ms")))])]),
    ],
)"#;

/// The eighth probe: nginx's presets (`limit_req` delaying its excess, an upstream of two
/// servers with a connection limit and a next-upstream retry) in front of a slow dependency.
const NGINX: &str = r#"Scenario(
    name: "probe8", seed: 23, horizon: "30s", warmup: "2s", window: "2s",
    fleet: (workers: (slots: 400), pool: (max_connections: 400, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 120), deadline: "800ms")],
    dependency: (
        latency: LogNormal(median: "60ms", sigma: 0.8),
        error_rate: Constant(0.05),
        drift: Step(at: "12s", factor: 3.0),
    ),
    policies: [
        (name: "nginx", stack: [
            (policy: NginxLimitReq((rate: PerSecond(100), burst: 20, nodelay: false, delay: 0, status: 429))),
            (policy: NginxUpstream((max_conns: 6, servers: 2, proxy_read_timeout: "250ms",
                proxy_next_upstream: [Error, Timeout], proxy_next_upstream_tries: 2,
                proxy_next_upstream_timeout: Some("300ms")))),
        ]),
    ],
)"#;

/// HAProxy's retries, redispatch, health checks and inactivity timeout (issue 39): a body
/// transfer time, partitions that refuse and
/// hang, a replica slowed past the checks' timeout.
const HAPROXY: &str = r#"Scenario(
    name: "probe10", seed: 29, horizon: "40s", warmup: "2s", window: "2s",
    fleet: (workers: (slots: 400), pool: (max_connections: 400, acquire_timeout: "1s"),
        partitions: [(instances: [0], start: "8s", end: "8.7s", mode: FailFast),
                     (instances: [0], start: "20s", end: "20.9s", mode: Hang(connect_timeout: "150ms"))]),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 80), deadline: "3s")],
    dependency: (
        latency: LogNormal(median: "60ms", sigma: 0.5),
        error_rate: Constant(0.05),
        transfer: "40ms",
        replicas: Some((count: 3, balancing: RoundRobin, slow: [(replica: 1, start: "10s", end: "30s", factor: 8.0)],
            health_check: Some((inter: "1s", fall: 3, rise: 2, timeout: "300ms")))),
    ),
    policies: [
        (name: "haproxy", stack: [(policy: HaproxyBackend((maxconn: 8, timeout_queue: "400ms", timeout_connect: "300ms",
            timeout_server: "600ms", retries: 2, redispatch: true, servers: 3)))]),
        (name: "retry", stack: [(policy: Retry((max_attempts: 3, backoff: "20ms", on_error: false,
            on_connect_failure: Some(true), refused_delay: Some("250ms")))), (policy: Timeout((timeout: "600ms")))]),
    ],
)"#;

/// The ninth probe: connections with a life (issue 39) in the fleet's pool and in a pool of
/// one dependency's own: set-ups drawn, some past their timeout, idle connections expiring
/// between calls, connections closed after some calls.
const CONNS: &str = r#"Scenario(
    name: "probe9", seed: 29, horizon: "20s", warmup: "2s", window: "2s",
    fleet: (workers: (slots: 200), pool: (max_connections: 30, acquire_timeout: "1s",
            connect: (latency: LogNormal(median: "20ms", sigma: 1.0), timeout: "60ms"),
            keep_alive: (idle: "150ms", max_requests: 6, max_idle: 5)),
        pools: [(dependency: "b", max_connections: 20,
            connect: (latency: Exponential(mean: "15ms"), timeout: "50ms"),
            keep_alive: (idle: "120ms", max_requests: 4))]),
    classes: [(name: "page", arrivals: Poisson(rate_per_s: 60), deadline: "600ms",
        calls: [Call("a"), Call("b")])],
    dependencies: [
        (name: "a", latency: Exponential(mean: "30ms"), error_rate: Constant(0.1)),
        (name: "b", latency: Exponential(mean: "40ms"), error_rate: Constant(0.1)),
    ],
    policies: [
        (name: "timeout", stack: [(policy: Timeout((timeout: "150ms")))]),
        (name: "haproxy", stack: [(policy: HaproxyBackend((maxconn: 25, timeout_queue: "100ms",
            timeout_connect: "40ms", timeout_server: "150ms", http_reuse: Never)))]),
        (name: "nginx", stack: [(policy: NginxUpstream((max_conns: 25, proxy_read_timeout: "150ms",
            proxy_connect_timeout: "40ms", keepalive: 3, keepalive_timeout: "100ms", keepalive_requests: 5)))]),
    ],
)"#;

#[test]
fn every_setting_changes_some_figure_or_says_why_not() {
    let (root, defs) = schema();
    let fields = all_fields(&root, &defs);
    let mut exempt: BTreeMap<Field, &str> = BTreeMap::new();
    for (t, f, why) in EXEMPT {
        let of_type: Vec<&Field> = fields.iter().filter(|(ty, name)| ty == t && (*f == "*" || name == f)).collect();
        assert!(!of_type.is_empty(), "{t}.{f} is exempt but the reference lists no such field");
        exempt.extend(of_type.into_iter().map(|x| (x.clone(), *why)));
    }
    let mut live: BTreeSet<Field> = BTreeSet::new();
    for (path, scenario) in probes() {
        let dir = path.parent().unwrap().to_path_buf();
        let json = serde_json::to_value(&scenario).unwrap();
        let mut found = Vec::new();
        leaves(&json, &root, "Scenario", &defs, "", &[], &mut found);
        // One change per field and probe is enough: the first leaf of a field not yet shown live.
        // A leaf stands for the innermost of its owners not yet shown live, so a list of
        // structs whose fields are all live elsewhere (`Scenario.dependencies`) is still tried.
        let mut todo: BTreeMap<Field, Vec<&Leaf>> = BTreeMap::new();
        for leaf in &found {
            let Some(own) = leaf.owners.iter().rev().find(|o| !live.contains(*o)) else { continue };
            if !live.contains(own) && !exempt.contains_key(own) && !leaf.owners.iter().any(|o| exempt.contains_key(o)) {
                todo.entry(own.clone()).or_default().push(leaf);
            }
        }
        if todo.is_empty() {
            continue;
        }
        let base: BTreeMap<Option<usize>, Option<Value>> = [None]
            .into_iter()
            .chain((0..scenario.policies.len()).map(Some))
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|p| (p, figures(&scenario, &dir, p)))
            .collect();
        let shown: Vec<Vec<Field>> = todo
            .par_iter()
            .filter_map(|(_, leaves)| {
                for leaf in leaves.iter().take(3) {
                    let policy = leaf
                        .pointer
                        .strip_prefix("/policies/")
                        .and_then(|r| r.split('/').next())
                        .and_then(|i| i.parse::<usize>().ok());
                    let old = json.pointer(&leaf.pointer).unwrap().clone();
                    let mut edits: Vec<Value> = changes(&old, &leaf.variants)
                        .into_iter()
                        .map(|new| {
                            let mut edited = json.clone();
                            *edited.pointer_mut(&leaf.pointer).unwrap() = new;
                            edited
                        })
                        .collect();
                    // An element of a list (a class a layer applies to, a scripted time): drop it.
                    let (parent, index) = leaf.pointer.rsplit_once('/').unwrap();
                    if let (Ok(i), Some(Value::Array(_))) = (index.parse::<usize>(), json.pointer(parent)) {
                        let mut edited = json.clone();
                        if let Some(Value::Array(a)) = edited.pointer_mut(parent) {
                            a.remove(i);
                        }
                        edits.push(edited);
                    }
                    for edited in edits {
                        let Ok(s) = serde_json::from_value::<Scenario>(edited) else { continue };
                        if validate(&s).is_err() {
                            continue;
                        }
                        let after = figures(&s, &dir, policy);
                        if after.is_some() && after != *base.get(&policy).unwrap() {
                            return Some(leaf.owners.clone());
                        }
                    }
                }
                None
            })
            .collect();
        live.extend(shown.into_iter().flatten());
    }
    let shown_now: Vec<&str> =
        NOT_YET_SHOWN.iter().copied().filter(|g| live.iter().any(|(t, f)| format!("{t}.{f}") == *g)).collect();
    assert!(shown_now.is_empty(), "now shown live, take them off NOT_YET_SHOWN: {shown_now:?}");
    let inert: Vec<String> = fields
        .iter()
        .filter(|f| !live.contains(*f) && !exempt.contains_key(*f))
        .map(|(t, f)| format!("{t}.{f}"))
        .filter(|f| !NOT_YET_SHOWN.contains(&f.as_str()))
        .collect();
    assert!(
        inert.is_empty(),
        "{} of {} settings changed no figure in any probe and are not exempt (inert, or no probe reaches \
         them):\n  {}",
        inert.len(),
        fields.len(),
        inert.join("\n  ")
    );
}
