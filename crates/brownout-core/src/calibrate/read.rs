//! Reading `/api/v1/query_range` answers: `{"status": "success", "data": {"resultType":
//! "matrix", "result": [{"metric": {..}, "values": [[t, "v"], ..]}, ..]}}` (Prometheus's
//! HTTP API, docs/querying/api.md "Range queries" and "Range vectors"), every series and
//! sample with its place in the file for messages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::CalibrateError;
use crate::import::tree::{Node, Pos, Val, json};

/// Largest answer read: a day at a 15 s step is 5,760 samples a series, about 40 bytes each,
/// so 64 MiB holds some 300 such series; a larger answer is refused before it is parsed.
pub const MAX_BYTES: u64 = 64 << 20;

/// One sample: milliseconds since the epoch, the value (NaN and infinities as Prometheus
/// writes them: `"NaN"`, `"+Inf"`, `"-Inf"`), and where it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Milliseconds since the Unix epoch.
    pub t_ms: i64,
    /// The value.
    pub v: f64,
    /// Line and column of the sample in its file.
    pub at: Pos,
}

/// One series of an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The file it came from.
    pub file: PathBuf,
    /// Where its object starts.
    pub at: Pos,
    /// Its labels, `__name__` included when the answer kept it.
    pub labels: BTreeMap<String, String>,
    /// Its samples in file order.
    pub samples: Vec<Sample>,
}

impl Series {
    /// The series as PromQL writes it: `name{a="x",b="y"}`.
    pub fn describe(&self) -> String {
        let name = self.labels.get("__name__").cloned().unwrap_or_default();
        let rest: Vec<String> =
            self.labels.iter().filter(|(k, _)| *k != "__name__").map(|(k, v)| format!("{k}={v:?}")).collect();
        format!("{name}{{{}}}", rest.join(","))
    }

    /// The metric name, when the answer kept it.
    pub fn name(&self) -> Option<&str> {
        self.labels.get("__name__").map(String::as_str)
    }
}

fn error(file: &Path, at: Pos, message: impl Into<String>) -> CalibrateError {
    CalibrateError { file: file.to_path_buf(), line: at.line, col: at.col, message: message.into() }
}

/// Read one answer file: its series, or a located error.
pub fn read(path: &Path) -> Result<Vec<Series>, CalibrateError> {
    let whole = |m: String| error(path, Pos::default(), m);
    let bytes = crate::fsread::read_capped(path, MAX_BYTES).map_err(|e| match e {
        e @ crate::fsread::ReadError::TooLarge { .. } => {
            whole(format!("{e} of a query_range answer (query a shorter range or a larger step)"))
        }
        e => whole(e.to_string()),
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|e| whole(format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))?;
    read_text(path, &text)
}

/// Read an answer's text, `path` naming it in messages.
pub fn read_text(path: &Path, text: &str) -> Result<Vec<Series>, CalibrateError> {
    let root = json(text).map_err(|e| error(path, Pos { line: e.line, col: e.col }, e.message))?;
    parse(path, &root)
}

fn get<'a>(path: &Path, n: &'a Node, key: &str, what: &str) -> Result<&'a Node, CalibrateError> {
    n.get_exact(key)
        .map(|e| &e.value)
        .ok_or_else(|| error(path, n.at, format!("not a /api/v1/query_range answer: {what} has no \"{key}\"")))
}

fn parse(path: &Path, root: &Node) -> Result<Vec<Series>, CalibrateError> {
    if !matches!(root.v, Val::Map(_)) {
        return Err(error(
            path,
            root.at,
            format!("not a /api/v1/query_range answer: the file holds {}, not an object", root.kind()),
        ));
    }
    let status = get(path, root, "status", "the object")?;
    if !matches!(&status.v, Val::Str(s) if s == "success") {
        let why = root.get_exact("error").and_then(|e| match &e.value.v {
            Val::Str(s) => Some(s.clone()),
            _ => None,
        });
        return Err(error(
            path,
            status.at,
            format!("the query failed (status is not \"success\"){}", why.map_or(String::new(), |w| format!(": {w}"))),
        ));
    }
    let data = get(path, root, "data", "the object")?;
    let kind = get(path, data, "resultType", "data")?;
    match &kind.v {
        Val::Str(s) if s == "matrix" => {}
        Val::Str(s) => {
            return Err(error(
                path,
                kind.at,
                format!(
                    "resultType is \"{s}\", not \"matrix\": this is not a range query's answer (ask /api/v1/query_range, not /api/v1/query)"
                ),
            ));
        }
        _ => return Err(error(path, kind.at, "resultType is not a string")),
    }
    let result = get(path, data, "result", "data")?;
    let Val::Seq(items) = &result.v else { return Err(error(path, result.at, "result is not a list")) };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let metric = get(path, item, "metric", "a series")?;
        let mut labels = BTreeMap::new();
        for e in metric.entries() {
            let Val::Str(v) = &e.value.v else {
                return Err(error(path, e.value.at, format!("label {} is {}, not a string", e.key, e.value.kind())));
            };
            labels.insert(e.key.clone(), v.clone());
        }
        if item.get_exact("histograms").is_some() {
            return Err(error(
                path,
                item.at,
                "native histogram samples are not read: query the classic `_bucket` series",
            ));
        }
        let values = get(path, item, "values", "a series")?;
        let Val::Seq(points) = &values.v else { return Err(error(path, values.at, "values is not a list")) };
        let mut samples = Vec::with_capacity(points.len());
        for p in points {
            let bad = || error(path, p.at, "a sample is [time in seconds, \"value\"]");
            let Val::Seq(pair) = &p.v else { return Err(bad()) };
            let [t, v] = pair.as_slice() else { return Err(bad()) };
            let t = match t.v {
                Val::Int(i) => i as f64,
                Val::Float(f) => f,
                _ => return Err(bad()),
            };
            if !(t.is_finite() && (0.0..1e13).contains(&t)) {
                return Err(error(path, p.at, format!("sample time {t} is not a Unix time in seconds")));
            }
            let Val::Str(s) = &v.v else { return Err(bad()) };
            let v = match s.as_str() {
                "NaN" => f64::NAN,
                "+Inf" | "Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                s => s.parse::<f64>().map_err(|_| error(path, v.at, format!("sample value {s:?} is not a number")))?,
            };
            samples.push(Sample { t_ms: (t * 1000.0).round() as i64, v, at: p.at });
        }
        out.push(Series { file: path.to_path_buf(), at: item.at, labels, samples });
    }
    Ok(out)
}
