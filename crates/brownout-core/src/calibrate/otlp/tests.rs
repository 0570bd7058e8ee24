//! The trace fit on small hand-made OTLP JSON: each figure against a count by hand, and each
//! kind of messy span skipped with its id and reason, or the file refused at its place.

use std::path::Path;

use super::*;

/// One span as OTLP/JSON writes it: (trace, id, parent (0: none), name, kind, start and end
/// in ms after 1000 s, status code, attributes as (key, value)).
struct S<'a> {
    trace: u32,
    id: u32,
    parent: u32,
    name: &'a str,
    kind: i64,
    start_ms: u64,
    end_ms: u64,
    status: i64,
    attrs: &'a [(&'a str, &'a str)],
}

const T0_NS: u64 = 1_000_000_000_000;

fn span_json(s: &S) -> String {
    let attrs: Vec<String> =
        s.attrs.iter().map(|(k, v)| format!("{{\"key\":\"{k}\",\"value\":{{\"stringValue\":\"{v}\"}}}}")).collect();
    let parent = if s.parent == 0 { String::new() } else { format!("\"parentSpanId\":\"{:016x}\",", s.parent) };
    format!(
        "{{\"traceId\":\"{:032x}\",\"spanId\":\"{:016x}\",{parent}\"name\":\"{}\",\"kind\":{},\
         \"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\",\"attributes\":[{}],\"status\":{{\"code\":{}}}}}",
        s.trace,
        s.id,
        s.name,
        s.kind,
        T0_NS + s.start_ms * 1_000_000,
        T0_NS + s.end_ms * 1_000_000,
        attrs.join(","),
        s.status
    )
}

/// One request a line, as the file exporter writes: `per_line` spans of service `svc` each.
fn file(svc: &str, spans: &[S], per_line: usize) -> String {
    spans
        .chunks(per_line)
        .map(|c| {
            let body: Vec<String> = c.iter().map(span_json).collect();
            format!(
                "{{\"resourceSpans\":[{{\"resource\":{{\"attributes\":[{{\"key\":\"service.name\",\"value\":{{\"stringValue\":\"{svc}\"}}}}]}},\
                 \"scopeSpans\":[{{\"scope\":{{\"name\":\"t\"}},\"spans\":[{}]}}]}}]}}\n",
                body.join(",")
            )
        })
        .collect()
}

/// Route /a: requests at 0, 5, 10 and 19 s (1 s each), through an INTERNAL span to a call
/// to peer.service "inv" of 100, 200, 300 and 400 ms starting 100 ms in, the third an
/// ERROR. Route "GET /b" (no http.route): requests at 1 and 11 s, each a 50 ms call to
/// server.address "db". The last span ends at 20 s.
fn shop() -> Vec<S<'static>> {
    let mut v = Vec::new();
    for (k, (t, lat)) in [(0u64, 100u64), (5_000, 200), (10_000, 300), (19_000, 400)].into_iter().enumerate() {
        let k = k as u32 * 10 + 1;
        let route: &'static [(&str, &str)] = &[("http.route", "/a")];
        v.push(S {
            trace: k,
            id: k,
            parent: 0,
            name: "GET /a",
            kind: 2,
            start_ms: t,
            end_ms: t + 1000,
            status: 0,
            attrs: route,
        });
        v.push(S {
            trace: k,
            id: k + 1,
            parent: k,
            name: "work",
            kind: 1,
            start_ms: t + 50,
            end_ms: t + 900,
            status: 0,
            attrs: &[],
        });
        let status = if t == 10_000 { 2 } else { 0 };
        v.push(S {
            trace: k,
            id: k + 2,
            parent: k + 1,
            name: "GET",
            kind: 3,
            start_ms: t + 100,
            end_ms: t + 100 + lat,
            status,
            attrs: &[("peer.service", "inv"), ("server.address", "inv.internal")],
        });
    }
    for (k, t) in [(100u32, 1_000u64), (110, 11_000)] {
        v.push(S {
            trace: k,
            id: k,
            parent: 0,
            name: "GET /b",
            kind: 2,
            start_ms: t,
            end_ms: t + 500,
            status: 0,
            attrs: &[],
        });
        v.push(S {
            trace: k,
            id: k + 1,
            parent: k,
            name: "SELECT",
            kind: 3,
            start_ms: t + 10,
            end_ms: t + 60,
            status: 1,
            attrs: &[("server.address", "db")],
        });
    }
    v
}

fn opts() -> Options {
    Options { service: None, dependency: None, step: Dur::secs(10), max_routes: 50, latency_file: "lat.csv".into() }
}

/// The scenario parses and validates (its data file is checked by the command's tests).
fn check(text: &str) {
    let s = crate::scenario::parse(Path::new("calibrated.ron"), text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    crate::scenario::validate(&s).unwrap_or_else(|e| panic!("{e}\n{text}"));
}

fn fit(text: &str, o: &Options) -> Calibrated {
    let spans = read_text(Path::new("t.jsonl"), text).unwrap();
    calibrate(&spans, o).unwrap()
}

#[test]
fn routes_rates_latency_errors_and_links_match_a_count_by_hand() {
    // One dependency picked: the scenario models it alone, as it would the only one.
    let c = fit(&file("gw", &shop(), 4), &Options { dependency: Some("inv".into()), ..opts() });
    assert!(!c.graph && c.plans.is_empty());
    assert_eq!((c.t0_ns, c.end_ns), (T0_NS, T0_NS + 20_000_000_000));
    // Two steps of 10 s: /a has 2 requests in each (0, 5 s; 10, 19 s) = 0.2/s; "GET /b" 1 in
    // each = 0.1/s.
    type Rates = Vec<(u64, f64, u64, u64)>;
    let rates: Vec<(&str, &str, Rates)> =
        c.routes.iter().map(|r| (r.class.as_str(), r.source, r.rates.clone())).collect();
    let ten = 10_000_000_000;
    assert_eq!(
        rates,
        vec![
            ("a", "http.route", vec![(0, 0.2, 2, ten), (ten, 0.2, 2, ten)]),
            ("GET .b", "span name", vec![(0, 0.1, 1, ten), (ten, 0.1, 1, ten)]),
        ]
    );
    // inv: 4 calls (the most), one an ERROR at 10.1 s; db: 2 calls, by server.address.
    let deps: Vec<(&str, &str, u64, u64)> =
        c.dependencies.iter().map(|d| (d.name.as_str(), d.source, d.calls, d.errors)).collect();
    assert_eq!(deps, vec![("inv", "peer.service", 4, 1), ("db", "server.address", 2, 0)]);
    assert_eq!(c.chosen, 0);
    assert_eq!(c.dependencies[0].latencies_ms, vec![100.0, 200.0, 300.0, 400.0]);
    assert_eq!(c.latency_csv, "latency_ms\n100\n200\n300\n400\n");
    assert_eq!(c.error_rate, vec![(0, 0.0, 0, 2), (ten, 0.5, 1, 2)]);
    // /a reaches inv through its INTERNAL span; every request calls once.
    let links: Vec<(&str, &str, u64, u64, u64)> = c
        .links
        .iter()
        .map(|l| (l.class.as_str(), l.dependency.as_str(), l.calls, l.requests_calling, l.requests))
        .collect();
    assert_eq!(links, vec![("a", "inv", 4, 4, 4), ("GET .b", "db", 2, 2, 2)]);
    assert!(c.skipped.is_empty(), "{:?}", c.skipped);
    // Every value cites its spans; the map is in the comments.
    for want in [
        "(\"10s\", 0.2), // 2 spans starting in [1010.000, 1020.000)",
        "requests/s: SERVER spans of service.name \"gw\" with http.route \"/a\"",
        "latency: Empirical(file: \"lat.csv\"), // endTimeUnixNano - startTimeUnixNano of the 4 CLIENT spans of service.name \"gw\" with peer.service \"inv\" (every one)",
        "(\"10s\", 0.5), // 1 of 2 calls starting in [1010.000, 1020.000)",
        "//   class \"a\" -> \"inv\": 1.000 calls per request (4 calls; 4 of 4 requests call it)",
        "//   class \"GET .b\" -> \"db\": 1.000 calls per request (2 calls; 2 of 2 requests call it)",
    ] {
        assert!(c.scenario.contains(want), "no {want:?} in\n{}", c.scenario);
    }
    check(&c.scenario);
}

#[test]
fn several_dependencies_are_written_as_dependencies_with_each_class_plan() {
    let c = fit(&file("gw", &shop(), 4), &opts());
    assert!(c.graph);
    // /a calls inv (through its INTERNAL span), "GET /b" calls db: one call each. inv's one
    // ERROR (at 10.1 s) left its request answered (its SERVER span is not ERROR): tolerated,
    // so Optional.
    let names: Vec<String> = c.dependencies.iter().map(|d| d.name.clone()).collect();
    let plans: Vec<(&str, String, u64)> =
        c.plans.iter().map(|p| (p.class.as_str(), p.ron(&names), p.matching)).collect();
    assert_eq!(
        plans,
        vec![("a", r#"[Optional(dependency: "inv")]"#.to_string(), 4), ("GET .b", r#"[Call("db")]"#.to_string(), 2)]
    );
    let files: Vec<(&str, &str)> = c.latency_files.iter().map(|(f, t)| (f.as_str(), t.as_str())).collect();
    assert_eq!(
        files,
        vec![("latency-inv.csv", "latency_ms\n100\n200\n300\n400\n"), ("latency-db.csv", "latency_ms\n50\n50\n")]
    );
    // Each dependency's own error rate: inv's ERROR at 10.1 s; db has none.
    assert_eq!(c.dependencies[1].error_rate, vec![(0, 0.0, 0, 1), (10_000_000_000, 0.0, 0, 1)]);
    for want in [
        "    dependencies: [\n        (\n            name: \"inv\", // peer.service of the CLIENT spans\n",
        "            latency: Empirical(file: \"latency-db.csv\"), // endTimeUnixNano - startTimeUnixNano of the 2 CLIENT spans",
        "                (\"10s\", 0.5), // 1 of 2 calls starting in [1010.000, 1020.000)",
        "             Optional(dependency: \"inv\"), // \"inv\" in 4 of 4 requests, 1 of them ERROR, Optional: 1 of those requests still answered without ERROR",
    ] {
        assert!(c.scenario.contains(want), "no {want:?} in\n{}", c.scenario);
    }
    check(&c.scenario);
}

#[test]
fn one_document_over_many_lines_reads_as_the_same_spans() {
    let lines = file("gw", &shop(), 100);
    let pretty = lines.trim().replace("},{", "},\n  {").replace("[{", "[\n{");
    assert!(pretty.lines().count() > 5);
    let a = read_text(Path::new("a"), &lines).unwrap();
    let b = read_text(Path::new("b"), &pretty).unwrap();
    let key = |v: &[Span]| v.iter().map(|s| (s.trace, s.id, s.start_ns, s.end_ns)).collect::<Vec<_>>();
    assert_eq!(key(&a), key(&b));
    // Positions are the file's: the second span of the one-line file is on line 1, the
    // pretty one's on its own line.
    assert_eq!(a[1].at.line, 1);
    assert!(b[1].at.line > 1);
}

#[test]
fn the_dependency_and_the_service_can_be_picked_and_unknown_ones_are_refused() {
    let c = fit(&file("gw", &shop(), 4), &Options { dependency: Some("db".into()), ..opts() });
    assert_eq!(c.dependencies[c.chosen].name, "db");
    assert_eq!(c.latency_csv, "latency_ms\n50\n50\n");
    let spans = read_text(Path::new("t"), &file("gw", &shop(), 4)).unwrap();
    let e = calibrate(&spans, &Options { dependency: Some("nope".into()), ..opts() }).unwrap_err();
    assert!(e.message.contains("calls no such dependency (it calls inv, db)"), "{e}");
    let e = calibrate(&spans, &Options { service: Some("other".into()), ..opts() }).unwrap_err();
    assert!(e.message.contains("no span has that service.name"), "{e}");
    // Two services with SERVER spans: which one is asked.
    let two = format!(
        "{}{}",
        file("gw", &shop(), 4),
        file("inv", &shop()[..1], 4).replace("0000000000000001", "00000000000000ff")
    );
    let spans = read_text(Path::new("t"), &two).unwrap();
    let e = calibrate(&spans, &opts()).unwrap_err();
    assert!(e.message.contains("several services answer requests"), "{e}");
    let c = calibrate(&spans, &Options { service: Some("gw".into()), ..opts() }).unwrap();
    assert_eq!(c.other_services, vec![("inv".to_string(), 1)]);
}

#[test]
fn messy_spans_are_skipped_with_their_id_and_reason() {
    let mut v = shop();
    // Clock skew: a call that ends before it starts.
    v.push(S {
        trace: 1,
        id: 500,
        parent: 2,
        name: "GET",
        kind: 3,
        start_ms: 300,
        end_ms: 200,
        status: 0,
        attrs: &[("peer.service", "inv")],
    });
    // An unknown kind.
    v.push(S { trace: 1, id: 501, parent: 1, name: "odd", kind: 9, start_ms: 300, end_ms: 400, status: 0, attrs: &[] });
    // A call whose parent is not in the file: counted in inv's latency, in no route.
    v.push(S {
        trace: 7,
        id: 502,
        parent: 999,
        name: "GET",
        kind: 3,
        start_ms: 300,
        end_ms: 350,
        status: 0,
        attrs: &[("peer.service", "inv")],
    });
    // A span exported twice.
    v.push(S {
        trace: 100,
        id: 101,
        parent: 100,
        name: "SELECT",
        kind: 3,
        start_ms: 1010,
        end_ms: 1060,
        status: 1,
        attrs: &[("server.address", "db")],
    });
    let c = fit(&file("gw", &v, 3), &opts());
    let said: Vec<String> = c.skipped.iter().map(ToString::to_string).collect();
    let has = |id: u32, what: &str| {
        assert!(
            said.iter().any(|s| s.starts_with(&format!("span {id:016x} (trace ")) && s.contains(what)),
            "no skip of span {id} saying {what:?} in {said:#?}"
        )
    };
    has(500, "(clock skew): not counted");
    has(501, "kind 9 is none of OTLP's SpanKind values");
    has(502, "parent span 00000000000003e7 is not in the files (missing parent)");
    has(101, "span id repeated (first on line 5)");
    assert_eq!(said.len(), 4, "{said:#?}");
    // inv: the 4 linked calls and the orphan (50 ms); the skewed one is not counted.
    assert_eq!(c.dependencies[0].latencies_ms, vec![50.0, 100.0, 200.0, 300.0, 400.0]);
    assert_eq!(c.links[0].calls, 4);
    assert!(c.report.contains("## Skipped (4)"), "{}", c.report);
    check(&c.scenario);
}

#[test]
fn files_that_are_not_otlp_traces_are_refused_at_their_place() {
    let bad = |text: &str| read_text(Path::new("f.json"), text).unwrap_err();
    let e = bad("{\"status\":\"success\",\"data\":{}}");
    assert!(e.message.contains("a Prometheus query answer"), "{e}");
    let e = bad("{\"resourceMetrics\":[]}");
    assert!(e.message.contains("OTLP metrics or logs, not traces"), "{e}");
    let e = bad("[1, 2]");
    assert_eq!((e.line, e.col), (1, 1), "{e}");
    // A base64 id (protobuf's own JSON) on line 2 of a JSON-lines file, at its column.
    let good = file("gw", &shop()[..1], 1);
    let b64 = good.replace("\"spanId\":\"0000000000000001\"", "\"spanId\":\"AAAAAAAAAAE=\"");
    let e = bad(&format!("{good}{b64}"));
    assert_eq!(e.line, 2, "{e}");
    assert_eq!(e.col, b64.find("\"AAAA").unwrap() + 1, "{e}");
    assert!(e.message.contains("OTLP/JSON writes ids as hex"), "{e}");
    // Malformed JSON on line 3.
    let e = bad(&format!("{good}{good}{{\"resourceSpans\": [}}\n"));
    assert_eq!(e.line, 3, "{e}");
    assert!(e.message.starts_with("malformed JSON"), "{e}");
    let e = bad("\n\n");
    assert!(e.message.contains("empty"), "{e}");
}

#[test]
fn a_cycle_of_parent_ids_ends_the_walk_and_the_call_is_in_no_route() {
    let mut v = shop();
    // Two INTERNAL spans, each the other's parent, over a call to inv.
    v.push(S { trace: 9, id: 900, parent: 901, name: "x", kind: 1, start_ms: 0, end_ms: 10, status: 0, attrs: &[] });
    v.push(S { trace: 9, id: 901, parent: 900, name: "y", kind: 1, start_ms: 0, end_ms: 10, status: 0, attrs: &[] });
    v.push(S {
        trace: 9,
        id: 902,
        parent: 900,
        name: "GET",
        kind: 3,
        start_ms: 1,
        end_ms: 9,
        status: 0,
        attrs: &[("peer.service", "inv")],
    });
    let c = fit(&file("gw", &v, 4), &opts());
    let said: Vec<String> = c.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(said.len(), 1, "{said:#?}");
    assert!(
        said[0].starts_with("span 0000000000000386 (trace ") && said[0].contains("more than 64 parents"),
        "{said:?}"
    );
    assert_eq!(c.dependencies[0].calls, 5);
    assert_eq!(c.links[0].calls, 4);
}
