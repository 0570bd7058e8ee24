//! `brownout import` and `Import(..)` layers (issue 19, "Importers"): the samples in
//! `scenarios/imports/` import to RON that `brownout check` accepts, each value as the file
//! and the library's documented defaults give it (worked out by hand from the samples), the
//! resilience4j import runs exactly like the same stack written by hand, Spring's relaxed
//! binding, warnings for options with no equivalent, and bad input with line and column.
//! Envoy's and Istio's files are in `import_envoy.rs`, their routes in `route_import.rs`.

use std::path::Path;

use brownout::import::{Imported, Library, import_file, import_text};

use crate::common::brownout;
use crate::common::import::{fields, import_then_check, refused, sample, scenario_with, summary_of, warned_keys};

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
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/imported-resilience4j.ron"))
            .unwrap();
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

// ---- issue 32: imports refuse nonsense, accept what the libraries accept ----------------

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
