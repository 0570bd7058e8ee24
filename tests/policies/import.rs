//! `brownout import` and `Import(..)` layers (issue 19, "Importers"): the samples in
//! `scenarios/imports/` import to RON that `brownout check` accepts, each value as the file
//! and the library's documented defaults give it (worked out by hand from the samples), the
//! resilience4j import runs exactly like the same stack written by hand, Spring's relaxed
//! binding, warnings for options with no equivalent, and bad input with line and column.

use crate::common;

use std::path::{Path, PathBuf};

use brownout::import::{Imported, Library, import_file, import_text};
use common::brownout;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sample(name: &str) -> PathBuf {
    repo().join("scenarios/imports").join(name)
}

/// `(name, value)` of every field of layer `i`.
fn fields(out: &Imported, i: usize) -> Vec<(&str, &str)> {
    out.layers[i].fields.iter().map(|f| (f.name, f.value.as_str())).collect()
}

fn warned_keys(out: &Imported) -> Vec<&str> {
    out.warnings.iter().map(|w| w.key.as_str()).collect()
}

/// A scenario around `stack` (RON text of a list of layers) and `replicas` (dependency field
/// text, may be empty).
fn scenario_with(stack: &str, replicas: &str) -> String {
    format!(
        r#"Scenario(
    name: "imported",
    seed: 1,
    horizon: "1m",
    fleet: (instances: 1, workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 20.0), deadline: "5s")],
    dependency: (latency: LogNormal(median: "100ms", sigma: 0.3){replicas}),
    policies: [(name: "imported", stack: {stack})],
)
"#
    )
}

/// Import `file` with the binary, put the printed stack into a scenario, and `check` it.
fn import_then_check(library: &str, file: &Path, instance: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["import", library, file.to_str().unwrap()];
    if let Some(i) = instance {
        args.extend(["--instance", i]);
    }
    let o = brownout(&args, dir.path());
    assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    // The snippet (outlier detection) is printed commented out, to place under `replicas:`.
    let snippet: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("// "))
        .skip_while(|l| !l.starts_with("outlier_detection"))
        .collect();
    let replicas = if snippet.is_empty() {
        String::new()
    } else {
        format!(", replicas: (count: 4, balancing: RoundRobin, {})", snippet.join("\n"))
    };
    let path = dir.path().join("s.ron");
    std::fs::write(&path, scenario_with(&text, &replicas)).unwrap();
    let c = brownout(&["check", "s.ron"], dir.path());
    assert!(c.status.success(), "check refused the import:\n{text}\n{}", String::from_utf8_lossy(&c.stderr));
}

#[test]
fn resilience4j_sample_imports_to_ron_that_check_accepts() {
    import_then_check("resilience4j", &sample("application.yml"), Some("inventory"));
    import_then_check("resilience4j", &sample("application.yml"), Some("pricing"));
}

#[test]
fn opossum_sample_imports_to_ron_that_check_accepts() {
    import_then_check("opossum", &sample("opossum.json"), None);
}

#[test]
fn dotnet_sample_imports_to_ron_that_check_accepts() {
    import_then_check("dotnet", &sample("appsettings.json"), None);
}

#[test]
fn envoy_samples_import_to_ron_that_check_accepts() {
    import_then_check("envoy", &sample("cluster.yaml"), None);
    import_then_check("envoy", &sample("destination-rule.yaml"), None);
}

/// The inventory instance of application.yml, worked out by hand: its circuit breaker is
/// `configs.default` (baseConfig) overridden by the instance; the retry likewise; the time
/// limiter's timeout is the instance's 3s; the bulkhead has no baseConfig and so starts from
/// `configs.default` (100 calls), overridden to 40, with no wait (maxWaitDuration 0).
#[test]
fn resilience4j_inventory_values_come_from_the_file() {
    let out = import_file(Some(Library::Resilience4j), &sample("application.yml"), Some("inventory")).unwrap();
    let policies: Vec<&str> = out.layers.iter().map(|l| l.policy).collect();
    assert_eq!(policies, ["Retry", "Resilience4j", "Timeout", "Limiter"]);
    // retryExceptions HttpServerErrorException and IOException: no TimeoutException, so the
    // time limiter's timeouts are not retried (resilience4j RetryConfig.createExceptionPredicate).
    assert_eq!(
        fields(&out, 0),
        [("max_attempts", "2"), ("backoff", "\"200ms\""), ("multiplier", "2.0"), ("on_timeout", "false")]
    );
    let mut cb = fields(&out, 1);
    cb.sort();
    let mut want = vec![
        ("failureRateThreshold", "50.0"),
        ("slowCallRateThreshold", "80.0"),
        ("slowCallDurationThreshold", "\"2s\""),
        ("waitDurationInOpenState", "\"20s\""), // PT20S overrides the default config's 30s
        ("permittedNumberOfCallsInHalfOpenState", "5"),
        ("minimumNumberOfCalls", "20"),
        ("slidingWindowSize", "50"),
        ("slidingWindowType", "COUNT_BASED"),
        ("maxWaitDurationInHalfOpenState", "\"10s\""), // a bare 10000 is milliseconds
        ("automaticTransitionFromOpenToHalfOpenEnabled", "false"),
    ];
    want.sort();
    assert_eq!(cb, want);
    assert_eq!(fields(&out, 2), [("timeout", "\"3s\"")]);
    assert_eq!(fields(&out, 3), [("permits", "40")]);
    // Each value names its line: slow-call-rate-threshold is on line 27 of the sample.
    let slow = out.layers[1].fields.iter().find(|f| f.name == "slowCallRateThreshold").unwrap();
    assert_eq!(slow.origin, "application.yml:27 slow-call-rate-threshold");
}

#[test]
fn resilience4j_pricing_takes_the_default_configs_and_waits_in_the_bulkhead() {
    let out = import_file(Some(Library::Resilience4j), &sample("application.yml"), Some("pricing")).unwrap();
    let policies: Vec<&str> = out.layers.iter().map(|l| l.policy).collect();
    // No timelimiter instance "pricing": no Timeout layer.
    assert_eq!(policies, ["Retry", "Resilience4j", "Limiter"]);
    assert_eq!(fields(&out, 0), [("max_attempts", "3"), ("backoff", "\"100ms\""), ("on_timeout", "false")]);
    let cb = fields(&out, 1);
    assert!(cb.contains(&("slidingWindowType", "TIME_BASED")));
    assert!(cb.contains(&("slidingWindowSize", "10")));
    assert!(cb.contains(&("failureRateThreshold", "30.0")));
    // configs.default's 100 calls, a 10 ms wait, waiters unbounded as in resilience4j.
    assert_eq!(fields(&out, 2), [("permits", "100"), ("max_wait", "\"10ms\""), ("queue", "4294967295")]);
}

#[test]
fn options_without_an_equivalent_are_warned_on_stderr_and_in_the_ron() {
    let out = import_file(Some(Library::Resilience4j), &sample("application.yml"), Some("inventory")).unwrap();
    let keys = warned_keys(&out);
    for k in [
        "registerHealthIndicator",
        "eventConsumerBufferSize",
        // The exception lists are read; an application's own exception in them is warned.
        "com.example.BusinessException",
        "cancelRunningFuture",
    ] {
        assert!(keys.contains(&k), "no warning for {k}: {keys:?}");
    }
    let o = brownout(&["import", "resilience4j", "application.yml", "--instance", "inventory"], &sample(""));
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stderr.contains("warning: application.yml:23:13: com.example.BusinessException:"), "{stderr}");
    assert!(stdout.contains("// warning: application.yml:23:13: com.example.BusinessException:"), "{stdout}");
    assert!(stdout.contains("max_attempts: 2, // application.yml:49 max-attempts"), "{stdout}");
}

/// The stack a user would write by hand from application.yml's "inventory" instances.
const BY_HAND: &str = r#"[
            (policy: Retry((max_attempts: 2, backoff: "200ms", multiplier: 2.0, on_timeout: false))),
            (policy: Resilience4j((failureRateThreshold: 50.0, slowCallRateThreshold: 80.0,
                slowCallDurationThreshold: "2s", waitDurationInOpenState: "20s",
                permittedNumberOfCallsInHalfOpenState: 5, minimumNumberOfCalls: 20,
                slidingWindowSize: 50, slidingWindowType: COUNT_BASED,
                maxWaitDurationInHalfOpenState: "10s"))),
            (policy: Timeout((timeout: "3s"))),
            (policy: Limiter((permits: 40))),
        ]"#;

#[test]
fn an_import_layer_runs_exactly_like_the_stack_written_by_hand() {
    let text = std::fs::read_to_string(repo().join("scenarios/imported-resilience4j.ron")).unwrap();
    let import = r#"[
            (policy: Import((file: "imports/application.yml", instance: "inventory"))),
        ]"#;
    assert!(text.contains(import));
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir_all(scenarios.join("imports")).unwrap();
    std::fs::copy(sample("application.yml"), scenarios.join("imports/application.yml")).unwrap();
    std::fs::write(scenarios.join("imported.ron"), &text).unwrap();
    std::fs::write(scenarios.join("by-hand.ron"), text.replace(import, BY_HAND)).unwrap();
    let mut summaries = Vec::new();
    for name in ["imported", "by-hand"] {
        let out = format!("out-{name}");
        let o = brownout(&["run", &format!("scenarios/{name}.ron"), "--out", &out, "--no-charts", "-q"], dir.path());
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        summaries.push(std::fs::read_to_string(dir.path().join(out).join("summary.json")).unwrap());
    }
    assert_eq!(summaries[0], summaries[1]);
    // The stack did something: the breaker opened during the brownout.
    let s: serde_json::Value = serde_json::from_str(&summaries[0]).unwrap();
    let run = s["runs"].as_array().unwrap().iter().find(|r| r["policy"] == "inventory").unwrap();
    assert!(run["breaker"]["transitions"].as_u64().unwrap() > 0, "{run}");
}

fn r4j(yaml: &str) -> Imported {
    import_text(Some(Library::Resilience4j), Path::new("application.yml"), yaml, Some("a")).unwrap()
}

#[test]
fn spring_relaxed_binding_reads_every_key_form_alike() {
    let forms = [
        "resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n        failure-rate-threshold: 25\n        wait-duration-in-open-state: 5s\n",
        "resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n        failureRateThreshold: 25\n        waitDurationInOpenState: 5000\n",
        "resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n        failure_rate_threshold: 25\n        wait_duration_in_open_state: PT5S\n",
        "resilience4j.circuitbreaker.instances.a.failure-rate-threshold: 25\nresilience4j.circuitbreaker.instances.a.waitDurationInOpenState: 5s\n",
    ];
    for y in forms {
        let out = r4j(y);
        assert_eq!(fields(&out, 0), [("failureRateThreshold", "25.0"), ("waitDurationInOpenState", "\"5s\"")], "{y}");
    }
}

#[test]
fn instance_values_override_the_base_config_and_a_missing_base_is_an_error() {
    let y = "resilience4j:\n  circuitbreaker:\n    configs:\n      shared:\n        minimumNumberOfCalls: 7\n        slidingWindowSize: 9\n      default:\n        minimumNumberOfCalls: 1\n    instances:\n      a:\n        baseConfig: shared\n        sliding-window-size: 11\n";
    assert_eq!(fields(&r4j(y), 0), [("minimumNumberOfCalls", "7"), ("slidingWindowSize", "11")]);
    let bad = y.replace("baseConfig: shared", "baseConfig: nope");
    let e = import_text(Some(Library::Resilience4j), Path::new("application.yml"), &bad, Some("a")).unwrap_err();
    assert_eq!((e.line, e.col), (11, 21));
    assert!(e.message.contains("no such config (configs: shared, default)"), "{}", e.message);
}

/// resilience4j's randomized wait is uniform in [d(1-f), d(1+f)]; brownout's jitter j on a
/// delay D is uniform in [D(1-j), D]: D = d(1+f) = 1.5s and j = 2f/(1+f) = 2/3 for d = 1s,
/// f = 0.5, so [0.5s, 1.5s] both ways.
#[test]
fn a_randomized_retry_wait_becomes_the_same_uniform_range() {
    let y = "resilience4j:\n  retry:\n    instances:\n      a:\n        waitDuration: 1s\n        enableRandomizedWait: true\n        randomizedWaitFactor: 0.5\n";
    let out = r4j(y);
    let f = fields(&out, 0);
    assert_eq!(f[1], ("backoff", "\"1500ms\""));
    let j: f64 = f[2].1.parse().unwrap();
    assert!((j - 2.0 / 3.0).abs() < 1e-12 && f[2].0 == "jitter");
    let (lo, hi) = (1.5 * (1.0 - j), 1.5);
    assert!((lo - 0.5f64).abs() < 1e-12 && hi == 1.5);
}

#[test]
fn istio_unset_limits_are_istios_unlimited_default_and_outlier_detection_as_istio_sets_it() {
    let out = import_file(Some(Library::Envoy), &sample("destination-rule.yaml"), None).unwrap();
    assert_eq!(out.instance.as_deref(), Some("inventory"));
    assert_eq!(
        fields(&out, 0),
        [(
            "thresholds",
            "[(priority: Default, max_connections: 100, max_pending_requests: 50, max_requests: 200, max_retries: 3)]"
        )]
    );
    let y = "kind: DestinationRule\nmetadata: {name: r}\nspec:\n  trafficPolicy:\n    connectionPool:\n      http: {maxRetries: 2}\n";
    let out = import_text(Some(Library::Envoy), Path::new("dr.yaml"), y, None).unwrap();
    let max = u32::MAX;
    let want = format!(
        "[(priority: Default, max_connections: {max}, max_pending_requests: {max}, max_requests: {max}, max_retries: 2)]"
    );
    assert_eq!(fields(&out, 0), [("thresholds", want.as_str())]);
    let od = import_file(Some(Library::Envoy), &sample("destination-rule.yaml"), None).unwrap().snippets;
    let od: Vec<(&str, &str)> = od[0].fields.iter().map(|f| (f.name, f.value.as_str())).collect();
    assert_eq!(
        od,
        [
            ("consecutive_5xx", "7"),
            ("enforcing_consecutive_5xx", "100"),
            ("consecutive_gateway_failure", "3"),
            ("enforcing_consecutive_gateway_failure", "100"),
            ("interval", "\"5m\""),
            ("base_ejection_time", "\"15m\""),
            ("max_ejection_percent", "30"),
            ("enforcing_success_rate", "0"),
            ("healthy_panic_threshold", "50"),
        ]
    );
}

/// Istio's `pilot/pkg/networking/core/cluster_traffic_policy.go`, `applyOutlierDetection`:
/// a consecutive count of 0 is written with enforcement 0 (that detector off, and Envoy's
/// `==` test never matches 0), `maxEjectionPercent` is written only when > 0 (so 0 leaves
/// Envoy's default of 10 %), and `minHealthPercent` always becomes the cluster's
/// `healthy_panic_threshold` (0 when unset: panic off).
#[test]
fn istio_outlier_detection_carries_istios_meaning() {
    let y = "kind: DestinationRule\nmetadata: {name: r}\nspec:\n  trafficPolicy:\n    outlierDetection:\n      \
             consecutive5xxErrors: 0\n      consecutiveGatewayErrors: 2\n      maxEjectionPercent: 0\n";
    let out = import_text(Some(Library::Envoy), Path::new("dr.yaml"), y, None).unwrap();
    let od: Vec<(&str, &str)> = out.snippets[0].fields.iter().map(|f| (f.name, f.value.as_str())).collect();
    assert_eq!(
        od,
        [
            ("consecutive_5xx", "0"),
            ("enforcing_consecutive_5xx", "0"),
            ("consecutive_gateway_failure", "2"),
            ("enforcing_consecutive_gateway_failure", "100"),
            ("enforcing_success_rate", "0"),
            ("healthy_panic_threshold", "0"),
        ]
    );
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // What the import prints is what `check` accepts, a 0 count (detector off) included.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("dr.yaml"), y).unwrap();
    import_then_check("envoy", &dir.path().join("dr.yaml"), None);
    // minHealthPercent set: that percentage, and no warning that it is not modelled.
    let y = y.replace("maxEjectionPercent: 0", "minHealthPercent: 25");
    let out = import_text(Some(Library::Envoy), Path::new("dr.yaml"), &y, None).unwrap();
    let last = out.snippets[0].fields.last().unwrap();
    assert_eq!((last.name, last.value.as_str()), ("healthy_panic_threshold", "25"));
    assert!(last.origin.starts_with("dr.yaml:"), "{}", last.origin);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn envoy_cluster_thresholds_durations_and_percent_types() {
    let out = import_file(Some(Library::Envoy), &sample("cluster.yaml"), None).unwrap();
    assert_eq!(
        fields(&out, 0),
        [(
            "thresholds",
            "[(priority: Default, max_connections: 100, max_pending_requests: 50, max_requests: 200, max_retries: 3), \
             (priority: High, max_connections: 200, max_pending_requests: 100, max_requests: 400, max_retries: 5)]"
        )]
    );
    let od: Vec<(&str, &str)> = out.snippets[0].fields.iter().map(|f| (f.name, f.value.as_str())).collect();
    assert!(od.contains(&("base_ejection_time", "\"30s\""))); // {seconds: 30}
    assert!(od.contains(&("max_ejection_percent", "50"))); // {value: 50}
    let keys = warned_keys(&out);
    for k in ["track_remaining", "retry_budget", "max_ejection_time_jitter", "connect_timeout", "load_assignment"] {
        assert!(keys.contains(&k), "no warning for {k}: {keys:?}");
    }
}

#[test]
fn opossum_and_dotnet_values_come_from_the_file() {
    let out = import_file(Some(Library::Opossum), &sample("opossum.json"), None).unwrap();
    assert_eq!(
        fields(&out, 0),
        [
            ("timeout", "\"3s\""),
            ("error_threshold_percentage", "50.0"),
            ("reset_timeout", "\"30s\""),
            ("rolling_count_timeout", "\"10s\""),
            ("rolling_count_buckets", "10"),
            ("volume_threshold", "10"),
            ("capacity", "100"),
            ("allow_warm_up", "true"),
        ]
    );
    assert_eq!(warned_keys(&out), ["name", "group", "enableSnapshots", "cache"]);
    let off = import_text(Some(Library::Opossum), Path::new("o.json"), r#"{"timeout": false}"#, None).unwrap();
    assert_eq!(fields(&off, 0), [("timeout", "\"0s\"")]);

    let out = import_file(Some(Library::Dotnet), &sample("appsettings.json"), None).unwrap();
    assert_eq!(out.instance.as_deref(), Some("Inventory:Resilience"));
    assert_eq!(
        fields(&out, 0),
        [
            ("rate_limiter_permits", "200"),
            ("rate_limiter_queue", "20"),
            ("total_timeout", "\"20s\""),
            ("max_retry_attempts", "2"),
            ("retry_backoff", "Exponential"),
            ("retry_use_jitter", "true"),
            ("retry_delay", "\"500ms\""),
            ("failure_ratio", "0.2"),
            ("minimum_throughput", "50"),
            ("sampling_duration", "\"20s\""),
            ("break_duration", "\"10s\""),
            ("attempt_timeout", "\"5s\""),
        ]
    );
    assert_eq!(warned_keys(&out), ["MaxDelay", "ShouldRetryAfterHeader"]);
}

/// The first imported layer built as a scenario would build it (fields as RON, `Option`s
/// without `Some`), for one class.
fn built(out: &Imported) -> Box<dyn brownout::policy::Policy> {
    let l = &out.layers[0];
    let fields: Vec<String> = l.fields.iter().map(|f| format!("{}: {}", f.name, f.value)).collect();
    let text = format!("{}(({}))", l.policy, fields.join(", "));
    let spec: brownout::policy::PolicySpec = ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str(&text)
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    spec.validate(&["api"]).unwrap_or_else(|e| panic!("{text}: {e}"));
    spec.build(&brownout::policy::BuildCtx::new(vec!["api".into()]))
}

/// How many of `n` calls started at once the layer admits.
fn admitted_of(p: &mut dyn brownout::policy::Policy, n: u64) -> u64 {
    use brownout::policy::{Admission, Attempt};
    (0..n).filter(|&id| p.admit(&Attempt::new(0, 0, id)) == Admission::Admit).count() as u64
}

/// opossum 10.0.0 `lib/circuit.js`, the `CircuitBreaker` constructor: `capacity` is used
/// only when `Number.isInteger(capacity)` (0 included: `new Semaphore(0)` refuses every
/// call), otherwise `Number.MAX_SAFE_INTEGER`; `volumeThreshold` likewise or 0;
/// `allowWarmUp` only when `=== true`. Options it does not know it never reads.
#[test]
fn opossum_import_reads_each_option_as_opossum_does() {
    let imp = |json: &str| import_text(Some(Library::Opossum), Path::new("o.json"), json, None).unwrap();
    let out = imp(r#"{"capacity": 0}"#);
    assert_eq!(admitted_of(built(&out).as_mut(), 3), 0, "Semaphore(0): {:?}", out.layers);
    for cap in ["2.5", "\"5\"", "null", "1e300"] {
        let out = imp(&format!(r#"{{"capacity": {cap}, "timeout": 100}}"#));
        assert_eq!(admitted_of(built(&out).as_mut(), 1000), 1000, "capacity {cap}: unbounded: {:?}", out.layers);
        // 1e300 is an integer to JavaScript: a bound no run reaches, nothing ignored.
        let warned = warned_keys(&out).contains(&"capacity");
        assert_eq!(warned, cap != "1e300", "capacity {cap}: {:?}", out.warnings);
    }
    let out = imp(r#"{"capacity": 2.0}"#); // Number.isInteger(2.0) is true
    assert_eq!(admitted_of(built(&out).as_mut(), 5), 2);
    let out = imp(r#"{"volumeThreshold": "5", "allowWarmUp": "true", "timeout": 100}"#);
    assert_eq!(fields(&out, 0), [("timeout", "\"100ms\"")]);
    assert_eq!(warned_keys(&out), ["volumeThreshold", "allowWarmUp"]);
    // A misspelt option is warned on, and never taken for a breaker's name.
    let out = imp(r#"{"timout": 100}"#);
    assert_eq!(out.instance, None);
    assert!(fields(&out, 0).is_empty(), "{:?}", out.layers);
    assert_eq!(warned_keys(&out), ["timout"]);
    let out = imp(r#"{"timout": 100, "resetTimeout": 1000}"#);
    assert_eq!(fields(&out, 0), [("reset_timeout", "\"1s\"")]);
    assert_eq!(warned_keys(&out), ["timout"]);
    assert!(out.warnings[0].message.contains("timeout"), "names the option meant: {}", out.warnings[0].message);
}

/// `brownout import` on bad input: exit 2, `file:line:col: message`, nothing on stdout.
fn refused(library: &str, name: &str, text: &str, extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    let mut args = vec!["import", library, name];
    args.extend(extra);
    let o = brownout(&args, dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn bad_input_is_refused_with_line_and_column() {
    let cb = "resilience4j:\n  circuitbreaker:\n    instances:\n      a:\n";
    let e = refused("resilience4j", "a.yml", &format!("{cb}        failureRateTreshold: 50\n"), &[]);
    assert!(
        e.starts_with("error: a.yml:5:9: unknown resilience4j.circuitbreaker option \"failureRateTreshold\""),
        "{e}"
    );
    let e = refused("resilience4j", "a.yml", &format!("{cb}        failureRateThreshold: [50\n"), &[]);
    assert!(e.starts_with("error: a.yml:6:1: malformed YAML"), "{e}");
    let e = refused("resilience4j", "a.yml", &format!("{cb}        minimumNumberOfCalls: many\n"), &[]);
    assert!(e.starts_with("error: a.yml:5:31: minimumNumberOfCalls: expected an integer, found a string"), "{e}");
    let e = refused("resilience4j", "a.yml", &format!("{cb}        failureRateThreshold: 150\n"), &[]);
    assert!(e.starts_with("error: a.yml:5:31: failureRateThreshold: 150 is out of range: expected (0, 100]"), "{e}");
    let e = refused(
        "resilience4j",
        "a.yml",
        &format!("{cb}        minimumNumberOfCalls: 5\n      b: {{}}\n"),
        &["--instance", "c"],
    );
    assert!(e.starts_with("error: a.yml:3:5: no instance \"c\" in the file (instances: a, b)"), "{e}");
    let e = refused("resilience4j", "a.yml", "resilience4j:\n  circuitbrecker: {}\n", &[]);
    assert!(e.starts_with("error: a.yml:2:3: unknown resilience4j module \"circuitbrecker\""), "{e}");
    let e = refused("opossum", "o.json", "{\n  \"timeout\": 100,\n  \"resetTimeout\": ,\n}", &[]);
    assert!(e.starts_with("error: o.json:3:19: malformed JSON"), "{e}");
    let e = refused("dotnet", "appsettings.json", "{\"Retry\": {\"MaxRetryAttempts\": 2, \"Backoff\": 1}}", &[]);
    assert!(e.starts_with("error: appsettings.json:1:35: unknown .NET Retry option \"Backoff\""), "{e}");
    let e = refused("envoy", "c.yaml", "name: c\noutlier_detection:\n  interval: 10\n", &[]);
    assert!(e.starts_with("error: c.yaml:3:13: interval: expected a duration"), "{e}");
}

#[test]
fn check_refuses_an_import_layer_at_the_imported_files_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let layer = r#"[(policy: Import((file: "app.yml", instance: "a")))]"#;
    std::fs::write(dir.path().join("s.ron"), scenario_with(layer, "")).unwrap();
    std::fs::write(
        dir.path().join("app.yml"),
        "resilience4j:\n  retry:\n    instances:\n      a:\n        maxAttempts: 0\n",
    )
    .unwrap();
    let o = brownout(&["check", "s.ron"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("app.yml:5:22: maxAttempts: 0 is out of range"), "{e}");
    assert!(e.contains("(imported by s.ron:8:"), "{e}");
    // A file that is not there: the scenario's `file` value.
    std::fs::remove_file(dir.path().join("app.yml")).unwrap();
    let o = brownout(&["check", "s.ron"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("s.ron:8:") && e.contains("app.yml: cannot read"), "{e}");
}

/// Run `scenario` (text) from `dir` and return its `summary.json`.
fn summary_of(dir: &Path, name: &str, scenario: &str) -> String {
    std::fs::write(dir.join(format!("{name}.ron")), scenario).unwrap();
    let out = format!("out-{name}");
    let o = brownout(&["run", &format!("{name}.ron"), "--out", &out, "--no-charts", "-q"], dir);
    assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(dir.join(out).join("summary.json")).unwrap()
}

/// The opossum and .NET samples as `Import` layers run exactly like the presets written by
/// hand from the files' values (read off the samples; the rest are the libraries' defaults).
#[test]
fn opossum_and_dotnet_imports_run_like_the_presets_written_by_hand() {
    let cases = [
        (
            "opossum.json",
            r#"[(policy: Opossum((timeout: "3s", error_threshold_percentage: 50.0, reset_timeout: "30s",
                rolling_count_timeout: "10s", rolling_count_buckets: 10, volume_threshold: 10,
                capacity: 100, allow_warm_up: true)))]"#,
        ),
        (
            "appsettings.json",
            r#"[(policy: DotnetStandard((rate_limiter_permits: 200, rate_limiter_queue: 20,
                total_timeout: "20s", max_retry_attempts: 2, retry_backoff: Exponential,
                retry_delay: "500ms", retry_use_jitter: true, failure_ratio: 0.2,
                minimum_throughput: 50, sampling_duration: "20s", break_duration: "10s",
                attempt_timeout: "5s")))]"#,
        ),
    ];
    for (file, by_hand) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(sample(file), dir.path().join(file)).unwrap();
        let imported =
            summary_of(dir.path(), "imported", &scenario_with(&format!(r#"[(policy: Import((file: "{file}")))]"#), ""));
        let hand = summary_of(dir.path(), "by-hand", &scenario_with(by_hand, ""));
        assert_eq!(imported, hand, "{file}");
    }
}

/// The Envoy cluster's printed stack and outlier-detection snippet, placed as the output says,
/// run exactly like the thresholds and outlier detection written by hand from cluster.yaml.
#[test]
fn the_envoy_import_runs_like_the_thresholds_and_outlier_detection_written_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let o = brownout(&["import", "envoy", sample("cluster.yaml").to_str().unwrap()], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let snippet: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("// "))
        .skip_while(|l| !l.starts_with("outlier_detection"))
        .collect();
    assert!(!snippet.is_empty(), "{text}");
    let replicas = |od: &str| format!(", replicas: (count: 4, balancing: RoundRobin, {od})");
    let imported = summary_of(dir.path(), "imported", &scenario_with(&text, &replicas(&snippet.join("\n"))));
    let hand_stack = r#"[(policy: EnvoyThresholds((thresholds: [
        (priority: Default, max_connections: 100, max_pending_requests: 50, max_requests: 200, max_retries: 3),
        (priority: High, max_connections: 200, max_pending_requests: 100, max_requests: 400, max_retries: 5)])))]"#;
    let hand_od = r#"outlier_detection: Some((consecutive_5xx: 5, consecutive_gateway_failure: 3,
        enforcing_consecutive_gateway_failure: 100, interval: "10s", base_ejection_time: "30s",
        max_ejection_time: "300s", max_ejection_percent: 50, success_rate_minimum_hosts: 3,
        success_rate_request_volume: 50, success_rate_stdev_factor: 1900, enforcing_success_rate: 100))"#;
    let hand = summary_of(dir.path(), "by-hand", &scenario_with(hand_stack, &replicas(hand_od)));
    assert_eq!(imported, hand);
}

// ---- issue 32: imports refuse nonsense, accept what the libraries accept ----------------

/// A file that holds nothing the Envoy importer reads (a line of text, a cluster without
/// `circuit_breakers` or `outlier_detection`, a DestinationRule without a traffic policy it
/// reads) is refused where the missing part belongs, never printed as an empty stack.
#[test]
fn an_envoy_import_of_a_file_with_nothing_to_read_is_refused() {
    let e = refused("envoy", "notes.yaml", "just a line of text\n", &[]);
    assert!(e.starts_with("error: notes.yaml:1:1: ") && e.contains("nothing to import"), "{e}");
    let e = refused("envoy", "c.yaml", "name: c\nconnect_timeout: 1s\n", &[]);
    assert!(e.starts_with("error: c.yaml:1:1: ") && e.contains("nothing to import"), "{e}");
    let e = refused("envoy", "dr.yaml", "kind: DestinationRule\nmetadata: {name: r}\nspec:\n  host: r\n", &[]);
    assert!(e.starts_with("error: dr.yaml:3:1: ") && e.contains("nothing to import"), "{e}");
}

/// Envoy `source/common/upstream/upstream_impl.cc`, `ClusterInfoImpl::ResourceManagers::load`:
/// each priority's limits are the FIRST `thresholds` entry with that priority (`std::find_if`;
/// an entry without `priority` is DEFAULT); a later one is never read. The import keeps the
/// first and warns at the later one's `priority`, and `check` accepts what it prints.
#[test]
fn a_duplicate_envoy_priority_keeps_the_first_as_envoy_does() {
    let y = "name: c\ncircuit_breakers:\n  thresholds:\n  - {max_connections: 10}\n  - {priority: DEFAULT, max_connections: 20}\n  - {priority: HIGH, max_retries: 1}\n";
    let out = import_text(Some(Library::Envoy), Path::new("c.yaml"), y, None).unwrap();
    assert_eq!(fields(&out, 0), [("thresholds", "[(max_connections: 10), (priority: High, max_retries: 1)]")]);
    let w = out.warnings.iter().find(|w| w.key == "priority").expect("a warning at the duplicate");
    assert_eq!((w.at.line, w.at.col), (5, 6));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.yaml"), y).unwrap();
    import_then_check("envoy", &dir.path().join("c.yaml"), None);
}

/// .NET `Linear` backoff (delay x attempt) has no equivalent in brownout's retry: refused at
/// import time at the value, not printed as a layer `check` then refuses.
#[test]
fn a_dotnet_linear_backoff_is_refused_at_its_value() {
    let e = refused("dotnet", "appsettings.json", "{\"Retry\": {\"BackoffType\": \"Linear\"}}", &[]);
    assert!(e.starts_with("error: appsettings.json:1:27: BackoffType: Linear"), "{e}");
}

/// YAML merge keys (YAML 1.1 `<<`, which Spring's SnakeYAML and Envoy's yaml-cpp read): the
/// anchored mapping's keys, overridden by the keys written beside `<<`.
#[test]
fn yaml_merge_keys_are_read_as_the_merged_mapping() {
    let y = "resilience4j:\n  circuitbreaker:\n    configs:\n      shared: &shared\n        minimumNumberOfCalls: 7\n        slidingWindowSize: 9\n    instances:\n      a:\n        <<: *shared\n        slidingWindowSize: 11\n";
    let out = r4j(y);
    let mut f = fields(&out, 0);
    f.sort();
    assert_eq!(f, [("minimumNumberOfCalls", "7"), ("slidingWindowSize", "11")]);
    let y = "base: &b {consecutive_5xx: 3, interval: 5s}\nname: c\noutlier_detection:\n  <<: *b\n  interval: 7s\n";
    let out = import_text(Some(Library::Envoy), Path::new("c.yaml"), y, None).unwrap();
    let od: Vec<(&str, &str)> = out.snippets[0].fields.iter().map(|f| (f.name, f.value.as_str())).collect();
    assert!(od.contains(&("consecutive_5xx", "3")) && od.contains(&("interval", "\"7s\"")), "{od:?}");
    assert!(!od.contains(&("interval", "\"5s\"")), "{od:?}");
}

/// Spring Boot's map keys in brackets keep their dots (`"[backend.a]"`): the instance is
/// `backend.a`, in a nested key and in a dotted one.
#[test]
fn spring_bracket_keys_keep_their_dots() {
    for y in [
        "resilience4j:\n  circuitbreaker:\n    instances:\n      \"[backend.a]\":\n        minimumNumberOfCalls: 3\n",
        "resilience4j.circuitbreaker.instances.[backend.a].minimumNumberOfCalls: 3\n",
    ] {
        let out = import_text(Some(Library::Resilience4j), Path::new("application.yml"), y, Some("backend.a"))
            .unwrap_or_else(|e| panic!("{y}: {e}"));
        assert_eq!(fields(&out, 0), [("minimumNumberOfCalls", "3")], "{y}");
    }
}

/// "Only the first YAML document is read" points at the `---` that starts the second.
#[test]
fn the_second_yaml_document_warning_points_at_its_marker() {
    let y = "# a cluster\nname: c\noutlier_detection: {interval: 5s}\n\n---\nname: d\n";
    let out = import_text(Some(Library::Envoy), Path::new("c.yaml"), y, None).unwrap();
    let w = out.warnings.iter().find(|w| w.key == "---").expect("the warning");
    assert_eq!((w.at.line, w.at.col), (5, 1));
    let y = format!("---\n{y}");
    let out = import_text(Some(Library::Envoy), Path::new("c.yaml"), &y, None).unwrap();
    let w = out.warnings.iter().find(|w| w.key == "---").expect("the warning");
    assert_eq!((w.at.line, w.at.col), (6, 1));
}

/// A value the import passes but the scenario's checks refuse is named at the imported
/// file's line and column, with the line of the `Import` layer (docs/import.md, "Errors").
#[test]
fn a_refused_imported_value_names_the_imported_files_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.ron"), scenario_with(r#"[(policy: Import((file: "o.json")))]"#, "")).unwrap();
    std::fs::write(dir.path().join("o.json"), "{\n  \"resetTimeout\": 1000,\n  \"timeout\": 1.5\n}\n").unwrap();
    let o = brownout(&["check", "s.ron"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("o.json:3:14: ") && e.contains("whole milliseconds"), "{e}");
    assert!(e.contains("(imported by s.ron:8:"), "{e}");
}
