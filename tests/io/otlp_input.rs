//! `brownout calibrate otlp` on messy traces: spans with clock skew, missing parents or
//! unknown kinds are skipped with their id and reason (printed and in fit.md) and the
//! scenario still passes `brownout check`; files in the wrong format or far too large are
//! refused with exit 2, the file, line and column, and nothing written.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::otlp::{Span, file, shop};
use crate::common::{BIN, brownout};

fn calibrate(dir: &Path, input: &str) -> Output {
    brownout(&["calibrate", "otlp", input, "--step", "10s", "--out", "fitted"], dir)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2 with `want` in the message, and no folder written (nor a staging folder left).
fn refused(dir: &Path, input: &str, want: &str) -> String {
    let o = calibrate(dir, input);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(want), "no {want:?} in {err}");
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(
        left.iter().all(|n| n != "fitted" && !n.to_string_lossy().starts_with(".calibrate")),
        "left behind: {left:?}"
    );
    err
}

#[test]
fn skewed_orphaned_and_unknown_spans_are_skipped_with_their_id_and_the_scenario_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut spans = shop();
    // A call under /cart's first request that ends 50 ms before it starts.
    let mut skewed = Span::client(10, 500, 10, "inventory", 300, 0, false);
    skewed.end_ms = 250;
    spans.push(skewed);
    // A call whose parent was never exported.
    spans.push(Span::client(77, 501, 0x999, "inventory", 1_000, 70, false));
    // A span of a kind OTLP does not define.
    let mut odd = Span::server(10, 502, "/cart", 400, 10);
    odd.kind = 7;
    spans.push(odd);
    std::fs::write(dir.path().join("t.jsonl"), file("shop", &spans, 4)).unwrap();
    let o = calibrate(dir.path(), "t.jsonl");
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    // Lines of four spans: the 13th, 14th and 15th spans are on line 4.
    for want in [
        "skipped: span 00000000000001f4 (trace 0000000000000000000000000000000a, line 4) at 1767225600.300: ends 50.000000 ms before it starts (clock skew): not counted",
        "skipped: span 00000000000001f6 (trace 0000000000000000000000000000000a, line 4) at 1767225600.400: kind 7 is none of OTLP's SpanKind values (0 to 5)",
        "skipped: span 00000000000001f5 (trace 0000000000000000000000000000004d, line 4) at 1767225601.000: parent span 0000000000000999 is not in the files (missing parent): counted in the latency and error rate, in no route",
    ] {
        assert!(err.contains(want), "no {want:?} in\n{err}");
    }
    let report = std::fs::read_to_string(dir.path().join("fitted/fit.md")).unwrap();
    assert!(report.contains("## Skipped (3)"), "{report}");
    // The orphan's 70 ms is in inventory's latency, the skewed call is not.
    let csv = std::fs::read_to_string(dir.path().join("fitted/latency-inventory.csv")).unwrap();
    assert_eq!(csv, "latency_ms\n70\n100\n200\n300\n400\n");
    let o = Command::new(BIN).arg("check").arg(dir.path().join("fitted/scenario.ron")).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn files_in_the_wrong_format_are_refused_where_they_go_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let put = |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).unwrap();
    put("prom.json", br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#);
    refused(
        dir.path(),
        "prom.json",
        "prom.json:1:1: not OTLP JSON traces (an ExportTraceServiceRequest): it looks like a Prometheus query answer",
    );
    put("metrics.json", br#"{"resourceMetrics":[]}"#);
    refused(
        dir.path(),
        "metrics.json",
        "metrics.json:1:1: not OTLP JSON traces (an ExportTraceServiceRequest): it holds resourceMetrics",
    );
    // The file exporter's `format: proto`: a length-prefixed protobuf, not text.
    put("traces.pb", &[0x0a, 0x8e, 0x02, 0x0a, 0x1b, 0xff, 0xfe]);
    refused(dir.path(), "traces.pb", "traces.pb: not UTF-8 text (byte 1)");
    // A broken second line: its line and column (the `}` that closes no list, column 20).
    let good = file("shop", &shop()[..2], 2);
    put("broken.jsonl", format!("{good}{{\"resourceSpans\": [}}\n").as_bytes());
    refused(dir.path(), "broken.jsonl", "broken.jsonl:2:20: malformed JSON");
    // Ids in base64, as protobuf's own JSON writes them.
    put("b64.jsonl", good.replace("\"spanId\":\"000000000000000a\"", "\"spanId\":\"AAAAAAAAAAo=\"").as_bytes());
    let col = good.find("\"spanId\"").unwrap() + "\"spanId\":".len() + 1;
    refused(dir.path(), "b64.jsonl", &format!("b64.jsonl:1:{col}: spanId \"AAAAAAAAAAo=\" is not 8 bytes in hex"));
    // Times that are no whole nanoseconds.
    put("t.jsonl", good.replacen("\"startTimeUnixNano\":\"", "\"startTimeUnixNano\":\"1.5e18x", 1).as_bytes());
    refused(dir.path(), "t.jsonl", "is not a whole number of nanoseconds");
    put("empty.jsonl", b"\n\n");
    refused(dir.path(), "empty.jsonl", "empty.jsonl: the file is empty: no spans");
}

#[test]
fn a_file_over_the_limit_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse: its stated size is over 256 MiB, and it is refused on that alone.
    let f = std::fs::File::create(dir.path().join("huge.jsonl")).unwrap();
    f.set_len((256 << 20) + 1).unwrap();
    refused(dir.path(), "huge.jsonl", "huge.jsonl: larger than the limit of 256 MiB of an OTLP trace file");
}

#[test]
fn traces_with_nothing_countable_are_refused_not_written() {
    let dir = tempfile::tempdir().unwrap();
    // Every SERVER span skewed: no route has arrivals.
    let spans: Vec<Span> = shop()
        .into_iter()
        .map(|mut s| {
            if s.kind == 2 {
                s.end_ms = s.start_ms;
                s.start_ms += 1;
            }
            s
        })
        .collect();
    std::fs::write(dir.path().join("skew.jsonl"), file("shop", &spans, 4)).unwrap();
    refused(dir.path(), "skew.jsonl", "no SERVER span of service \"shop\" can be counted");
    // Only SERVER spans: no dependency to fit.
    let servers: Vec<Span> = shop().into_iter().filter(|s| s.kind == 2).collect();
    std::fs::write(dir.path().join("srv.jsonl"), file("shop", &servers, 4)).unwrap();
    refused(dir.path(), "srv.jsonl", "no CLIENT span of service \"shop\" can be counted");
}

#[test]
fn a_multi_call_trace_with_missing_parents_still_gives_the_plan_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    // Route /order at 0, 5, 10, 15 s (1 s): inventory and pricing at once from 10 ms in
    // (200 and 100 ms), then payments (50 ms) once inventory has answered. In the third
    // request pricing's call hangs under an INTERNAL span that was never exported, and a
    // fifth pricing call is a root CLIENT span (no parent at all).
    let mut spans = Vec::new();
    for k in 0..4u32 {
        let (t, id) = (5_000 * k as u64, 10 * (k + 1));
        spans.push(Span::server(id, id, "/order", t, 1_000));
        spans.push(Span::client(id, id + 1, id, "inventory", t + 10, 200, false));
        let parent = if k == 2 { 0x999 } else { id };
        spans.push(Span::client(id, id + 2, parent, "pricing", t + 10, 100, false));
        spans.push(Span::client(id, id + 3, id, "payments", t + 210, 50, false));
    }
    spans.push(Span::client(90, 91, 0, "pricing", 19_000, 70, false));
    std::fs::write(dir.path().join("t.jsonl"), file("shop", &spans, 4)).unwrap();
    let o = calibrate(dir.path(), "t.jsonl");
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for want in [
        "skipped: span 0000000000000020 (trace 0000000000000000000000000000001e, line 3) at 1767225610.010: parent span 0000000000000999 is not in the files (missing parent): counted in the latency and error rate, in no route",
        "skipped: span 000000000000005b (trace 0000000000000000000000000000005a, line 5) at 1767225619.000: a root CLIENT span (no parentSpanId): counted in the latency and error rate, in no route",
        // 3 of 4 requests show the pricing call: more than half, so it stays in the plan.
        "warning: class \"order\": \"pricing\" is called in 3 of 4 requests: written as a call every request makes",
    ] {
        assert!(err.contains(want), "no {want:?} in\n{err}");
    }
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "plan: class \"order\" calls: [Parallel(join: All, calls: [Call(\"pricing\"), Call(\"inventory\")]), Call(\"payments\")]"
        ),
        "{out}"
    );
    // pricing is called most (5 calls), so it leads the group. The orphaned and the root
    // call are in its latency (70 ms and the four 100 ms).
    let csv = std::fs::read_to_string(dir.path().join("fitted/latency-pricing.csv")).unwrap();
    assert_eq!(csv, "latency_ms\n70\n100\n100\n100\n100\n");
    let o = Command::new(BIN).arg("check").arg(dir.path().join("fitted/scenario.ron")).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}
