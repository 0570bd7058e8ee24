//! OTLP JSON trace files written in a test, span by span, in the encoding the OpenTelemetry
//! Collector's file exporter writes (one `ExportTraceServiceRequest` a line; ids in hex,
//! enums as integers, nanosecond times as strings), for `brownout calibrate otlp`.

/// The first span's time: 2026-01-01T00:00:00Z, in ns since the epoch.
pub const T0_NS: u64 = 1_767_225_600_000_000_000;

/// One span. Times are ms after [`T0_NS`]; `parent` 0 is none.
#[derive(Clone)]
pub struct Span {
    /// Its trace (written as 32 hex digits).
    pub trace: u32,
    /// Its id (written as 16 hex digits).
    pub id: u32,
    /// Its parent's id (0: a root span).
    pub parent: u32,
    /// Its name.
    pub name: String,
    /// Its `kind` as written (2 server, 3 client, ...).
    pub kind: i64,
    /// Start, ms after `T0_NS`.
    pub start_ms: u64,
    /// End, ms after `T0_NS`.
    pub end_ms: u64,
    /// `status.code` (2 error).
    pub status: i64,
    /// String attributes.
    pub attrs: Vec<(String, String)>,
}

impl Span {
    /// A SERVER span of `route` (its `http.route`) from `start_ms` for `ms`.
    pub fn server(trace: u32, id: u32, route: &str, start_ms: u64, ms: u64) -> Self {
        let attrs = vec![("http.route".into(), route.into())];
        Self {
            trace,
            id,
            parent: 0,
            name: format!("GET {route}"),
            kind: 2,
            start_ms,
            end_ms: start_ms + ms,
            status: 0,
            attrs,
        }
    }

    /// A CLIENT span under `parent` to `peer.service` `peer`, from `start_ms` for `ms`.
    pub fn client(trace: u32, id: u32, parent: u32, peer: &str, start_ms: u64, ms: u64, error: bool) -> Self {
        let attrs = vec![("peer.service".into(), peer.into())];
        let status = if error { 2 } else { 0 };
        Self { trace, id, parent, name: "GET".into(), kind: 3, start_ms, end_ms: start_ms + ms, status, attrs }
    }

    /// The span as OTLP/JSON.
    pub fn json(&self) -> String {
        let attrs: Vec<String> = self
            .attrs
            .iter()
            .map(|(k, v)| format!("{{\"key\":\"{k}\",\"value\":{{\"stringValue\":\"{v}\"}}}}"))
            .collect();
        let parent =
            if self.parent == 0 { String::new() } else { format!("\"parentSpanId\":\"{:016x}\",", self.parent) };
        format!(
            "{{\"traceId\":\"{:032x}\",\"spanId\":\"{:016x}\",{parent}\"name\":\"{}\",\"kind\":{},\
             \"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\",\"attributes\":[{}],\"status\":{{\"code\":{}}}}}",
            self.trace,
            self.id,
            self.name,
            self.kind,
            T0_NS + self.start_ms * 1_000_000,
            T0_NS + self.end_ms * 1_000_000,
            attrs.join(","),
            self.status
        )
    }
}

/// The file: `per_line` spans of service `service` a line.
pub fn file(service: &str, spans: &[Span], per_line: usize) -> String {
    spans
        .chunks(per_line)
        .map(|c| {
            let body: Vec<String> = c.iter().map(Span::json).collect();
            format!(
                "{{\"resourceSpans\":[{{\"resource\":{{\"attributes\":[{{\"key\":\"service.name\",\"value\":{{\"stringValue\":\"{service}\"}}}}]}},\
                 \"scopeSpans\":[{{\"scope\":{{\"name\":\"test\"}},\"spans\":[{}]}}]}}]}}\n",
                body.join(",")
            )
        })
        .collect()
}

/// A small shop over 20 s: route `/cart` at 0, 5, 10, 15 s (2 s each), each calling
/// `inventory` once for 100, 200, 300, 400 ms from 100 ms in, the one at 10 s an ERROR, and
/// at 18 s (2 s, no call: the last span ends at 20 s); route `/pay` at 2 and 12 s (1 s
/// each), each calling `payments` for 50 ms from 10 ms in.
pub fn shop() -> Vec<Span> {
    let mut v = Vec::new();
    for (k, (t, ms)) in [(0u64, 100u64), (5_000, 200), (10_000, 300), (15_000, 400)].into_iter().enumerate() {
        let id = 10 * (k as u32 + 1);
        v.push(Span::server(id, id, "/cart", t, 2_000));
        v.push(Span::client(id, id + 1, id, "inventory", t + 100, ms, t == 10_000));
    }
    v.push(Span::server(50, 50, "/cart", 18_000, 2_000));
    for (k, t) in [2_000u64, 12_000].into_iter().enumerate() {
        let id = 100 + 10 * k as u32;
        v.push(Span::server(id, id, "/pay", t, 1_000));
        v.push(Span::client(id, id + 1, id, "payments", t + 10, 50, false));
    }
    v
}
