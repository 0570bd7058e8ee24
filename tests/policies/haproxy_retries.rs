//! `HaproxyBackend`'s `retries` and `redispatch` (issue 39), each rule worked by hand from
//! HAProxy 3.5-dev's source: `src/backend.c`, `back_handle_st_cer` (which failures are
//! retried, how many times, and the turn-around delay) and `include/haproxy/stream.h`,
//! `stream_choose_redispatch` (when a retry goes to another server). A connection failure is
//! a call a partition cut off: `FailFast` refused at once, `Hang` timed out after its
//! `connect_timeout`. The dependency answers in 100 ms; requests arrive at 1 s.

use crate::common;

use brownout::import::{Library, import_text};
use brownout::metrics::summary::ClassSummary;

/// Requests at `times` through `HaproxyBackend((backend))`, with a partition cutting the one
/// instance off from 0 to `until` in `mode`, and an error rate of `errors`.
fn run(backend: &str, times: &str, until: &str, mode: &str, errors: f64) -> ClassSummary {
    let summary = common::run_first(&format!(
        r#"Scenario(
        name: "haproxy-retries", seed: 1, horizon: "20s", window: "5s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "10s"),
                partitions: [(start: "0s", end: "{until}", instances: [0], mode: {mode})]),
        classes: [(name: "api", arrivals: Scripted(times: [{times}]), deadline: "10s")],
        dependency: (latency: Constant("100ms"), error_rate: Constant({errors})),
        policies: [(name: "p", stack: [(policy: HaproxyBackend(({backend})))])],
    )"#
    ));
    summary.classes[0].clone()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1.0
}

/// (ok, error, timeout) and the slowest ok and failed answers in ms.
fn figures(c: &ClassSummary) -> ((u64, u64, u64), f64, f64) {
    let o = &c.outcomes;
    ((o.ok, o.error, o.timeout), c.latency_ms.max, c.latency_failed_ms.max)
}

#[test]
fn a_refused_connection_is_retried_after_the_turn_around_of_timeout_connect() {
    // `back_handle_st_cer`: a connection error sets `must_tar`, and a retry on the same
    // server waits min(timeout connect, 1 s) = 400 ms. Attempts at 1.0, 1.4, 1.8 are refused;
    // the partition is over at 2.1, so the fourth (retries 3) at 2.2 is answered at 2.3.
    let c = run(r#"retries: 3, timeout_connect: "400ms""#, r#""1s""#, "2.1s", "FailFast", 0.0);
    let (counts, ok_max, _) = figures(&c);
    assert_eq!(counts, (1, 0, 0));
    assert!(close(ok_max, 1300.0), "{ok_max}");
}

#[test]
fn retries_are_counted_after_the_first_attempt_and_then_it_gives_up() {
    // `conn_retries >= max_retries` gives up: retries 2 are attempts at 1.0, 1.4, 1.8, all
    // refused (the partition lasts to 2.1): an error at 1.8, 800 ms after arrival.
    let c = run(r#"retries: 2, timeout_connect: "400ms""#, r#""1s""#, "2.1s", "FailFast", 0.0);
    let (counts, _, failed_max) = figures(&c);
    assert_eq!(counts, (0, 1, 0));
    assert!(close(failed_max, 800.0), "{failed_max}");
    assert_eq!(c.causes.dependency_error, 1);
}

#[test]
fn without_timeout_connect_the_turn_around_is_one_second() {
    // `delay = 1000` unless `timeout connect` is shorter; retries default to 3
    // (`CONN_RETRIES`): attempts at 1.0 and 2.0 refused, 3.0 answered at 3.1.
    let c = run("", r#""1s""#, "2.1s", "FailFast", 0.0);
    let (counts, ok_max, _) = figures(&c);
    assert_eq!(counts, (1, 0, 0));
    assert!(close(ok_max, 2100.0), "{ok_max}");
}

#[test]
fn a_connect_timeout_is_retried_at_once() {
    // An expired connect (`SF_CONN_EXP` without `SC_FL_ERROR`) leaves `must_tar` 0: no
    // turn-around. Each attempt hangs 300 ms: 1.0-1.3, 1.3-1.6, 1.6-1.9 cut off (partition to
    // 1.75), the fourth at 1.9 answered at 2.0.
    let hang = r#"Hang(connect_timeout: "300ms")"#;
    let c = run(r#"retries: 3, timeout_connect: "300ms""#, r#""1s""#, "1.75s", hang, 0.0);
    let (counts, ok_max, _) = figures(&c);
    assert_eq!(counts, (1, 0, 0));
    assert!(close(ok_max, 1000.0), "{ok_max}");
}

#[test]
fn error_answers_and_server_timeouts_are_not_retried() {
    // `retry-on conn-failure` (HAProxy's default): a connection that was made and answered
    // with an error is not retried. Retried at once, four attempts would take 400 ms.
    let c = run("retries: 3", r#""1s""#, "0.5s", "FailFast", 1.0);
    let (counts, _, failed_max) = figures(&c);
    assert_eq!(counts, (0, 1, 0));
    assert!(close(failed_max, 100.0), "{failed_max}");
    // Nor a `timeout server` (a 504 after 50 ms, not 4 x 50 ms).
    let c = run(r#"retries: 3, timeout_server: "50ms""#, r#""1s""#, "0.5s", "FailFast", 0.0);
    let (counts, _, failed_max) = figures(&c);
    assert_eq!(counts, (0, 0, 1));
    assert!(close(failed_max, 50.0), "{failed_max}");
}

#[test]
fn without_redispatch_a_retry_keeps_its_place_with_redispatch_it_queues_again() {
    // maxconn 1, two requests at 1 s, refused until 1.05 s.
    // Without `option redispatch` the stream stays assigned (`SC_ST_ASS`) and keeps the
    // server's slot through the 1 s turn-around: A is refused at 1.0, retried at 2.0,
    // answered at 2.1; B waits in the queue and is answered at 2.2.
    let keep = run("maxconn: 1, retries: 3, servers: 2", r#""1s", "1s""#, "1.05s", "FailFast", 0.0);
    assert_eq!(figures(&keep).0, (2, 0, 0));
    assert!(close(keep.latency_ms.max, 1200.0), "{}", keep.latency_ms.max);
    // One server: `option redispatch` keeps the turn-around (`srv_act <= 1`), the same.
    let one = run("maxconn: 1, retries: 3, redispatch: true", r#""1s", "1s""#, "1.05s", "FailFast", 0.0);
    assert_eq!(figures(&one).0, (2, 0, 0));
    assert!(close(one.latency_ms.max, 1200.0), "{}", one.latency_ms.max);
    // With two servers every retry is redispatched at once (`stream_choose_redispatch`:
    // `srv_act > 1`, round robin): A leaves its slot, B takes it, each retry queues behind
    // the other's, all within 1.0, so both use their 4 attempts while cut off: two errors at
    // once.
    let moved = run("maxconn: 1, retries: 3, redispatch: true, servers: 2", r#""1s", "1s""#, "1.05s", "FailFast", 0.0);
    let (counts, _, failed_max) = figures(&moved);
    assert_eq!(counts, (0, 2, 0));
    assert!(close(failed_max, 0.0), "{failed_max}");
}

fn import(text: &str) -> Result<Vec<(String, String)>, String> {
    let out =
        import_text(Some(Library::Haproxy), std::path::Path::new("h.cfg"), text, None).map_err(|e| e.to_string())?;
    Ok(out.layers[0].fields.iter().map(|f| (f.name.to_string(), f.value.clone())).collect())
}

#[test]
fn the_importer_maps_retries_retry_on_and_redispatch() {
    let pairs = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    // `retries` inherited from the defaults, `option redispatch`, two servers.
    let text = "defaults\n  retries 2\nbackend b\n  option redispatch\n  server a 1.2.3.4:80\n  server c 1.2.3.5:80\n";
    assert_eq!(import(text).unwrap(), pairs(&[("retries", "2"), ("redispatch", "true"), ("servers", "2")]));
    // `no option redispatch` in the backend clears the defaults' option.
    let text = "defaults\n  option redispatch\nbackend b\n  no option redispatch\n  retries 1\n";
    assert_eq!(import(text).unwrap(), pairs(&[("retries", "1")]));
    // `option redispatch 0` clears it too (`src/cfgparse-listen.c`).
    let text = "backend b\n  retries 1\n  option redispatch 0\n";
    assert_eq!(import(text).unwrap(), pairs(&[("retries", "1")]));
    // A `retry-on` without `conn-failure` retries no connection: retries 0, cited there.
    let text = "backend b\n  retries 3\n  retry-on 503 response-timeout\n";
    assert_eq!(import(text).unwrap(), pairs(&[("retries", "0")]));
    let out = import_text(Some(Library::Haproxy), std::path::Path::new("h.cfg"), text, None).unwrap();
    let warned: Vec<&str> = out.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(warned, ["retry-on 503", "retry-on response-timeout"]);
    let text = "backend b\n  retries 3\n  retry-on conn-failure 503\n";
    assert_eq!(import(text).unwrap(), pairs(&[("retries", "3")]));
    // Bad values at their line and column.
    let e = import("backend b\n  retries x\n").unwrap_err();
    assert!(e.starts_with("h.cfg:2:11: ") && e.contains("whole number"), "{e}");
    let e = import("backend b\n  retries 1\n  option redispatch often\n").unwrap_err();
    assert!(e.starts_with("h.cfg:3:21: ") && e.contains("whole number"), "{e}");
}

#[test]
fn the_importer_reads_health_checks_into_a_snippet_for_the_replicas() {
    let read = |text: &str| import_text(Some(Library::Haproxy), std::path::Path::new("h.cfg"), text, None);
    // `default-server inter` and `fall`, a server's `check` and `rise`, `timeout check`.
    let text = "backend b\n  timeout check 300ms\n  default-server inter 1s fall 2\n  server a 1.2.3.4:80 check rise 4 maxconn 5\n";
    let out = read(text).unwrap();
    let sn = &out.snippets[0];
    assert_eq!(sn.field, "health_check");
    let got: Vec<(&str, &str, &str)> =
        sn.fields.iter().map(|f| (f.name, f.value.as_str(), f.origin.as_str())).collect();
    assert_eq!(
        got,
        [
            ("inter", "\"1s\"", "h.cfg:3 inter"),
            ("fall", "2", "h.cfg:3 fall"),
            ("rise", "4", "h.cfg:4 rise"),
            ("timeout", "\"300ms\"", "h.cfg:2 timeout check")
        ]
    );
    // Without `check` on any server HAProxy checks nothing: the settings are warned.
    let out = read("backend b\n  server a 1.2.3.4:80 inter 1s maxconn 5\n").unwrap();
    assert!(out.snippets.is_empty());
    assert_eq!(out.warnings.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(), ["inter"]);
    // `rise 0` is refused where the value is (`srv_parse_check_rise`: "has to be > 0").
    let e = read("backend b\n  server a 1.2.3.4:80 check rise 0\n").unwrap_err().to_string();
    assert!(e.starts_with("h.cfg:2:34: ") && e.contains("has to be > 0"), "{e}");
}
