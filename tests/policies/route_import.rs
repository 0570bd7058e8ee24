//! Envoy route configuration and Istio `VirtualService` imports (issue 35): one class per
//! route, its layers for that class alone, each value worked out by hand from the samples in
//! `scenarios/imports/` with Envoy's and Istio's defaults (Envoy: route timeout 15 s,
//! `num_retries` 1, backoff 25 ms doubling to 10 x base with full jitter,
//! `source/common/router/retry_state_impl.cc` and `source/common/common/backoff_strategy.cc`;
//! Istio: `pilot/pkg/networking/core/route/retry/retry.go`, 2 retries on
//! `connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes`, no timeout).

use crate::common;

use std::path::Path;

use brownout::import::{Imported, Library, import_file, import_text};

use crate::common::import::sample;

/// `(policy, classes, fields)` of every layer, fields as `name: value`.
fn layers(out: &Imported) -> Vec<(&str, Vec<&str>, Vec<String>)> {
    out.layers
        .iter()
        .map(|l| {
            let classes = l.classes.iter().map(String::as_str).collect();
            let fields = l.fields.iter().map(|f| format!("{}: {}", f.name, f.value)).collect();
            (l.policy, classes, fields)
        })
        .collect()
}

fn warned(out: &Imported, key: &str) -> Option<(usize, usize)> {
    out.warnings.iter().find(|w| w.key == key).map(|w| (w.at.line, w.at.col))
}

const CHECKOUT_RETRY: [&str; 8] = [
    "max_attempts: 4",
    "backoff: \"50ms\"",
    "multiplier: 2.0",
    "max_backoff: \"400ms\"",
    "jitter: 1.0",
    // 5xx: failed calls, timeouts (a per-try timeout is a reset) and the 503.
    "on_error: true",
    "on_timeout: true",
    "on_refusal: [Dependency503]",
];

#[test]
fn envoy_routes_import_as_layers_for_one_class_each() {
    let out = import_file(Some(Library::Envoy), &sample("route.yaml"), None).unwrap();
    let got = layers(&out);
    let policies: Vec<(&str, &Vec<&str>)> = got.iter().map(|(p, c, _)| (*p, c)).collect();
    assert_eq!(
        policies,
        [
            ("Timeout", &vec!["checkout"]),
            ("Retry", &vec!["checkout"]),
            ("Timeout", &vec!["checkout"]),
            ("Timeout", &vec!["search"]),
            ("Retry", &vec!["search"]),
        ]
    );
    assert_eq!(got[0].2, ["timeout: \"3s\""]);
    assert_eq!(got[1].2, CHECKOUT_RETRY);
    assert_eq!(got[2].2, ["timeout: \"800ms\""]);
    assert_eq!(got[3].2, ["timeout: \"1s\""]);
    // search has no policy of its own: the virtual host's, 2 retries on connect-failure
    // (warned: not told apart) and reset (timeouts only); Envoy's default backoff.
    assert_eq!(
        got[4].2,
        [
            "max_attempts: 3",
            "backoff: \"25ms\"",
            "multiplier: 2.0",
            "max_backoff: \"250ms\"",
            "jitter: 1.0",
            "on_error: false",
            "on_timeout: true",
            "on_refusal: []",
        ]
    );
    assert_eq!(warned(&out, "retry_host_predicate"), Some((25, 13)));
    assert_eq!(warned(&out, "connect-failure"), Some((11, 17)));
    // Each value cites its line.
    let ron = out.to_ron();
    assert!(ron.contains("timeout: \"3s\", // route.yaml:18 timeout"), "{ron}");
    assert!(ron.contains("max_attempts: 4, // route.yaml:22 num_retries + the first call"), "{ron}");
    assert!(ron.contains(")), classes: [\"checkout\"]),"), "{ron}");
}

#[test]
fn one_route_is_imported_by_name() {
    let out = import_file(Some(Library::Envoy), &sample("route.yaml"), Some("checkout")).unwrap();
    assert_eq!(out.layers.len(), 3);
    assert!(out.layers.iter().all(|l| l.classes == ["checkout"]));
    let e = import_file(Some(Library::Envoy), &sample("route.yaml"), Some("cart")).unwrap_err();
    assert!(e.message.contains("no route \"cart\"") && e.message.contains("checkout, search"), "{e}");
}

/// A scenario with classes checkout and search, one request each at 0 ms, over `stack`.
fn run(stack: &str) -> brownout::metrics::summary::RunSummary {
    common::run_first(&format!(
        r#"Scenario(
        name: "routes", horizon: "10s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
        classes: [
            (name: "checkout", arrivals: Scripted(times: ["0ms"]), deadline: "5s"),
            (name: "search", arrivals: Scripted(times: ["0ms"]), deadline: "5s"),
        ],
        dependency: (latency: Constant("10ms"), error_rate: Constant(1.0)),
        policies: [(name: "p", stack: {stack})],
    )"#
    ))
}

#[test]
fn each_class_runs_its_own_routes_layers() {
    // Every call fails after 10 ms: checkout's 5xx retries it (4 calls, backoffs under
    // 400 ms, well inside 3 s); search's connect-failure,reset does not (1 call).
    let out = import_file(Some(Library::Envoy), &sample("route.yaml"), None).unwrap();
    let stack: Vec<String> = out.layers.iter().map(|l| l.ron()).collect();
    let r = run(&format!("[{}]", stack.join(", ")));
    assert_eq!(r.dependency.calls, 5);
    assert_eq!(r.classes[0].outcomes.error + r.classes[1].outcomes.error, 2);
}

#[test]
fn istio_routes_import_with_istios_defaults() {
    let out = import_file(Some(Library::Envoy), &sample("virtual-service.yaml"), None).unwrap();
    let got = layers(&out);
    let policies: Vec<(&str, &Vec<&str>)> = got.iter().map(|(p, c, _)| (*p, c)).collect();
    assert_eq!(
        policies,
        [
            ("Timeout", &vec!["checkout"]),
            ("Retry", &vec!["checkout"]),
            ("Timeout", &vec!["checkout"]),
            ("Timeout", &vec!["/search"]),
            ("Retry", &vec!["/search"]),
        ]
    );
    // gateway-error,503: timeouts and the dependency's 503, not a failed call (a 500).
    assert_eq!(
        got[1].2,
        [
            "max_attempts: 4",
            "backoff: \"25ms\"",
            "multiplier: 2.0",
            "max_backoff: \"250ms\"",
            "jitter: 1.0",
            "on_error: false",
            "on_timeout: true",
            "on_refusal: [Dependency503]",
        ]
    );
    assert_eq!(got[2].2, ["timeout: \"800ms\""]);
    // No retries block: Istio's default policy, 2 retries on values none of which brownout
    // simulates apart: a retry that retries nothing, said in a warning at the route.
    let last = &got[4].2;
    assert_eq!(last[0], "max_attempts: 3");
    assert_eq!(&last[5..], ["on_error: false", "on_timeout: false", "on_refusal: []"]);
    assert_eq!(warned(&out, "retryOn"), Some((24, 7)));
}

fn import_yaml(text: &str) -> Result<Imported, brownout::import::ImportError> {
    import_text(Some(Library::Envoy), Path::new("r.yaml"), text, None)
}

const ROUTE: &str = "virtual_hosts:
  - name: v
    routes:
      - name: a
        route:
          timeout: 2s
          retry_policy:
";

#[test]
fn bad_route_values_are_refused_at_their_line() {
    let cases = [
        ("            num_retries: -1\n", (8, 26), "out of range"),
        ("            retry_on: 5xx,sometimes\n", (8, 23), "unknown value \"sometimes\""),
        ("            per_try_timeout: soon\n", (8, 30), "expected a duration"),
        ("            retry_back_off: {max_interval: 1s}\n", (8, 29), "base_interval is required"),
        ("            retry_back_off: {base_interval: 1s, max_interval: 0.5s}\n", (8, 63), "max_interval: must be >="),
    ];
    for (tail, at, message) in cases {
        let e = import_yaml(&format!("{ROUTE}{tail}")).unwrap_err();
        assert_eq!((e.line, e.col), at, "{tail}: {e}");
        assert!(e.message.contains(message), "{tail}: {e}");
    }
    let e = import_text(
        Some(Library::Envoy),
        Path::new("vs.yaml"),
        "kind: VirtualService\nspec:\n  http:\n    - retries:\n        attempts: many\n",
        None,
    )
    .unwrap_err();
    assert_eq!((e.line, e.col), (5, 19), "{e}");
}

#[test]
fn unknown_route_fields_are_warned_not_refused() {
    let out = import_yaml(&format!("{ROUTE}            retry_on: 5xx\n            jitter_please: true\n")).unwrap();
    assert_eq!(warned(&out, "jitter_please"), Some((9, 13)));
    // A route with neither timeout nor retries gets Envoy's default 15 s timeout.
    let out = import_yaml("routes:\n  - match: {prefix: /x}\n    decorator: {operation: x}\n").unwrap();
    assert_eq!(warned(&out, "decorator"), Some((3, 5)));
    assert_eq!(layers(&out), [("Timeout", vec!["/x"], vec!["timeout: \"15s\"".to_string()])]);
}
