//! Reading OTLP JSON trace files as the OpenTelemetry Collector's file exporter writes them
//! (`format: json`): one `ExportTraceServiceRequest` a line, `{"resourceSpans": [{"resource":
//! {"attributes": [..]}, "scopeSpans": [{"spans": [..]}]}]}`, or one such document over many
//! lines. The encoding is OTLP/JSON (opentelemetry-proto, docs/specification.md, "JSON
//! Protobuf Encoding"): lowerCamelCase keys, trace and span ids as hex, enums as integers,
//! 64-bit integers as strings or numbers. Every span keeps its place in the file; a span
//! that cannot be counted is kept with the reason, one the file cannot describe is refused.

use std::path::Path;

use super::super::CalibrateError;
use crate::import::tree::{Node, Pos, Val, json};

/// Largest trace file read: the Collector's file exporter rotates at 100 MiB by default
/// (`rotation.max_megabytes`); 256 MiB holds some 700,000 spans at about 350 bytes each. A
/// larger file is refused before it is read.
pub const MAX_BYTES: u64 = 256 << 20;

/// OTLP's `SpanKind` (trace.proto): what a span is in its service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `SPAN_KIND_UNSPECIFIED` (0, or no `kind`): read as internal.
    Unspecified,
    /// `SPAN_KIND_INTERNAL` (1).
    Internal,
    /// `SPAN_KIND_SERVER` (2): a request the service answered.
    Server,
    /// `SPAN_KIND_CLIENT` (3): a call the service made.
    Client,
    /// `SPAN_KIND_PRODUCER` (4).
    Producer,
    /// `SPAN_KIND_CONSUMER` (5).
    Consumer,
    /// A value OTLP does not define, as written.
    Unknown(i64),
}

impl Kind {
    fn of(n: i64) -> Self {
        match n {
            0 => Kind::Unspecified,
            1 => Kind::Internal,
            2 => Kind::Server,
            3 => Kind::Client,
            4 => Kind::Producer,
            5 => Kind::Consumer,
            n => Kind::Unknown(n),
        }
    }

    fn named(s: &str) -> Option<Self> {
        let names = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];
        let bare = s.strip_prefix("SPAN_KIND_").unwrap_or(s);
        names.iter().position(|n| *n == bare).map(|i| Kind::of(i as i64))
    }
}

/// A span's `status.code` (trace.proto `Status.StatusCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// `STATUS_CODE_UNSET` (0, or no status).
    Unset,
    /// `STATUS_CODE_OK` (1).
    Ok,
    /// `STATUS_CODE_ERROR` (2).
    Error,
    /// A value OTLP does not define, as written.
    Unknown(i64),
}

/// The attributes of a span that calibration reads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attrs {
    /// `http.route`.
    pub route: Option<String>,
    /// `peer.service`.
    pub peer_service: Option<String>,
    /// `server.address` (semantic conventions 1.21 on), else the older `net.peer.name`, as
    /// (attribute key, value).
    pub address: Option<(&'static str, String)>,
}

/// One span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// `traceId`, 16 bytes.
    pub trace: u128,
    /// `spanId`, 8 bytes.
    pub id: u64,
    /// `parentSpanId` (None: a root span, empty or absent).
    pub parent: Option<u64>,
    /// `name`.
    pub name: String,
    /// `kind`.
    pub kind: Kind,
    /// `startTimeUnixNano`.
    pub start_ns: u64,
    /// `endTimeUnixNano`.
    pub end_ns: u64,
    /// `status.code`.
    pub status: Status,
    /// The resource's `service.name` (`unknown_service` when it has none, as the SDKs name it).
    pub service: String,
    /// The attributes read.
    pub attrs: Attrs,
    /// Where the span's object starts.
    pub at: Pos,
}

impl Span {
    /// The span as messages name it: its id, its trace's id and where it is.
    pub fn describe(&self) -> String {
        format!("span {:016x} (trace {:032x}, line {})", self.id, self.trace, self.at.line)
    }
}

fn error(file: &Path, at: Pos, message: impl Into<String>) -> CalibrateError {
    CalibrateError { file: file.to_path_buf(), line: at.line, col: at.col, message: message.into() }
}

/// Read one trace file: its spans in file order, or a located error.
pub fn read(path: &Path) -> Result<Vec<Span>, CalibrateError> {
    let whole = |m: String| error(path, Pos::default(), m);
    let bytes = crate::fsread::read_capped(path, MAX_BYTES).map_err(|e| match e {
        e @ crate::fsread::ReadError::TooLarge { .. } => whole(format!(
            "{e} of an OTLP trace file (split it: the Collector's file exporter rotates with `rotation.max_megabytes`)"
        )),
        e => whole(e.to_string()),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        whole(format!(
            "not UTF-8 text (byte {}): OTLP JSON is text; the file exporter's `format: proto` and compressed files are not read",
            e.utf8_error().valid_up_to()
        ))
    })?;
    read_text(path, &text)
}

/// Read a trace file's text, `path` naming it in messages: JSON lines (one request a line,
/// as the file exporter writes), or one document (a first line that is no whole JSON value).
pub fn read_text(path: &Path, text: &str) -> Result<Vec<Span>, CalibrateError> {
    let located =
        |e: crate::import::ImportError, line0: usize| error(path, Pos { line: e.line + line0, col: e.col }, e.message);
    let first = text.lines().position(|l| !l.trim().is_empty());
    let Some(first) = first else { return Err(error(path, Pos::default(), "the file is empty: no spans")) };
    let mut spans = Vec::new();
    let first_line = text.lines().nth(first).unwrap_or_default();
    if json(first_line).is_ok() {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let root = json(line).map_err(|e| located(e, i))?;
            // Positions within the line's own parse are on its line 1.
            let root = shift(root, i);
            parse(path, &root, &mut spans)?;
        }
    } else {
        let root = json(text).map_err(|e| located(e, 0))?;
        parse(path, &root, &mut spans)?;
    }
    Ok(spans)
}

/// A line's tree moved down by `lines` (it was parsed alone, as line 1).
fn shift(mut n: Node, lines: usize) -> Node {
    fn walk(n: &mut Node, lines: usize) {
        n.at.line += lines;
        match &mut n.v {
            Val::Seq(items) => items.iter_mut().for_each(|x| walk(x, lines)),
            Val::Map(entries) => entries.iter_mut().for_each(|e| {
                e.at.line += lines;
                walk(&mut e.value, lines);
            }),
            _ => {}
        }
    }
    if lines > 0 {
        walk(&mut n, lines);
    }
    n
}

/// The list under `key` of `n` (absent: empty), or an error when it is something else.
fn list<'a>(path: &Path, n: &'a Node, key: &str) -> Result<&'a [Node], CalibrateError> {
    match n.get_exact(key).map(|e| &e.value) {
        None => Ok(&[]),
        Some(Node { v: Val::Seq(items), .. }) => Ok(items),
        Some(Node { v: Val::Null, .. }) => Ok(&[]),
        Some(v) => Err(error(path, v.at, format!("\"{key}\" is {}, not a list", v.kind()))),
    }
}

fn object<'a>(path: &Path, n: &'a Node, what: &str) -> Result<&'a Node, CalibrateError> {
    match n.v {
        Val::Map(_) => Ok(n),
        _ => Err(error(path, n.at, format!("{what} is {}, not an object", n.kind()))),
    }
}

/// The string values of the attributes (`[{"key": k, "value": {"stringValue": v}}]`) whose
/// keys `want` names; other attributes and other value types are passed over.
fn string_attrs(path: &Path, n: &Node, want: &[&str]) -> Result<Vec<Option<String>>, CalibrateError> {
    let mut out = vec![None; want.len()];
    for a in list(path, n, "attributes")? {
        let a = object(path, a, "an attribute")?;
        let Some(Val::Str(key)) = a.get_exact("key").map(|e| &e.value.v) else {
            return Err(error(path, a.at, "an attribute without a string \"key\""));
        };
        let Some(i) = want.iter().position(|w| w == key) else { continue };
        if let Some(v) = a.get_exact("value")
            && let Some(Val::Str(s)) = v.value.get_exact("stringValue").map(|e| &e.value.v)
        {
            out[i] = Some(s.clone());
        }
    }
    Ok(out)
}

/// Hex of `bytes` bytes (an id), or why not.
fn hex_id(path: &Path, n: &Node, what: &str, bytes: usize) -> Result<Option<u128>, CalibrateError> {
    let Val::Str(s) = &n.v else { return Err(error(path, n.at, format!("{what} is {}, not a hex string", n.kind()))) };
    if s.is_empty() {
        return Ok(None);
    }
    if s.len() != 2 * bytes || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(error(
            path,
            n.at,
            format!(
                "{what} {s:?} is not {bytes} bytes in hex: OTLP/JSON writes ids as hex (protobuf's own JSON writes base64, which the Collector does not)"
            ),
        ));
    }
    let v = u128::from_str_radix(s, 16).map_err(|_| error(path, n.at, format!("{what} {s:?} is not hex")))?;
    if v == 0 {
        return Err(error(path, n.at, format!("{what} is all zeros, which OTLP calls invalid")));
    }
    Ok(Some(v))
}

/// A 64-bit unsigned integer, written as a string or a number (OTLP/JSON allows both).
fn uint(path: &Path, n: &Node, what: &str) -> Result<u64, CalibrateError> {
    match &n.v {
        Val::Int(i) if *i >= 0 => Ok(*i as u64),
        Val::Str(s) => s
            .parse::<u64>()
            .map_err(|_| error(path, n.at, format!("{what} {s:?} is not a whole number of nanoseconds"))),
        _ => Err(error(path, n.at, format!("{what} is {}, not a whole number of nanoseconds", n.kind()))),
    }
}

/// An enum written as its number or its name.
fn enum_of<T>(
    path: &Path,
    n: &Node,
    what: &str,
    of: fn(i64) -> T,
    named: fn(&str) -> Option<T>,
) -> Result<T, CalibrateError> {
    match &n.v {
        Val::Int(i) => Ok(of(*i)),
        Val::Str(s) => named(s).ok_or_else(|| error(path, n.at, format!("{what} {s:?} is none of OTLP's names"))),
        _ => Err(error(path, n.at, format!("{what} is {}, not a number", n.kind()))),
    }
}

fn status_of(n: i64) -> Status {
    match n {
        0 => Status::Unset,
        1 => Status::Ok,
        2 => Status::Error,
        n => Status::Unknown(n),
    }
}

fn status_named(s: &str) -> Option<Status> {
    match s.strip_prefix("STATUS_CODE_").unwrap_or(s) {
        "UNSET" => Some(Status::Unset),
        "OK" => Some(Status::Ok),
        "ERROR" => Some(Status::Error),
        _ => None,
    }
}

fn parse(path: &Path, root: &Node, out: &mut Vec<Span>) -> Result<(), CalibrateError> {
    let root = object(path, root, "the document")?;
    if root.get_exact("resourceSpans").is_none() {
        let other = ["resourceMetrics", "resourceLogs"].into_iter().find(|k| root.get_exact(k).is_some());
        let why = match (other, root.get_exact("status").is_some() && root.get_exact("data").is_some()) {
            (Some(k), _) => format!("it holds {k}: OTLP metrics or logs, not traces"),
            (None, true) => "it looks like a Prometheus query answer (use `brownout calibrate prometheus`)".into(),
            (None, false) => "it has no \"resourceSpans\"".into(),
        };
        return Err(error(path, root.at, format!("not OTLP JSON traces (an ExportTraceServiceRequest): {why}")));
    }
    for rs in list(path, root, "resourceSpans")? {
        let rs = object(path, rs, "a resourceSpans item")?;
        let service = match rs.get_exact("resource") {
            Some(r) => string_attrs(path, object(path, &r.value, "resource")?, &["service.name"])?.remove(0),
            None => None,
        }
        .unwrap_or_else(|| "unknown_service".into());
        // `instrumentationLibrarySpans` is the name before OTLP 0.15 (2022).
        let scopes = match list(path, rs, "scopeSpans")? {
            [] => list(path, rs, "instrumentationLibrarySpans")?,
            s => s,
        };
        for ss in scopes {
            let ss = object(path, ss, "a scopeSpans item")?;
            for sp in list(path, ss, "spans")? {
                out.push(span(path, object(path, sp, "a span")?, &service)?);
            }
        }
    }
    Ok(())
}

fn span(path: &Path, sp: &Node, service: &str) -> Result<Span, CalibrateError> {
    let field = |key: &str| sp.get_exact(key).map(|e| &e.value);
    let need = |key: &str| field(key).ok_or_else(|| error(path, sp.at, format!("a span without \"{key}\"")));
    let trace = hex_id(path, need("traceId")?, "traceId", 16)?
        .ok_or_else(|| error(path, need("traceId").map_or(sp.at, |n| n.at), "traceId is empty"))?;
    let id = hex_id(path, need("spanId")?, "spanId", 8)?
        .ok_or_else(|| error(path, need("spanId").map_or(sp.at, |n| n.at), "spanId is empty"))? as u64;
    let parent = match field("parentSpanId") {
        Some(n) => hex_id(path, n, "parentSpanId", 8)?.map(|p| p as u64),
        None => None,
    };
    let name = match field("name").map(|n| &n.v) {
        Some(Val::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let kind = match field("kind") {
        Some(n) => enum_of(path, n, "kind", Kind::of, Kind::named)?,
        None => Kind::Unspecified,
    };
    let start_ns = field("startTimeUnixNano").map(|n| uint(path, n, "startTimeUnixNano")).transpose()?.unwrap_or(0);
    let end_ns = field("endTimeUnixNano").map(|n| uint(path, n, "endTimeUnixNano")).transpose()?.unwrap_or(0);
    let status = match field("status") {
        Some(s) => match object(path, s, "status")?.get_exact("code") {
            Some(c) => enum_of(path, &c.value, "status.code", status_of, status_named)?,
            None => Status::Unset,
        },
        None => Status::Unset,
    };
    let mut got = string_attrs(path, sp, &["http.route", "peer.service", "server.address", "net.peer.name"])?;
    let address = got[2].take().map(|a| ("server.address", a)).or_else(|| got[3].take().map(|a| ("net.peer.name", a)));
    let attrs = Attrs { route: got[0].take(), peer_service: got[1].take(), address };
    Ok(Span { trace, id, parent, name, kind, start_ns, end_ns, status, service: service.to_string(), attrs, at: sp.at })
}
