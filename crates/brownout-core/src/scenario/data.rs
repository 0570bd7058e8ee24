//! Data files a scenario references (CSV with a header): bounded reads, and every value
//! checked with an error naming the data file, the line and the column of the bad cell.
//! `scenario::load` reads them all before any run (so `check` refuses what `run` would), and
//! the model reads them through the same functions.

use std::path::Path;

/// The largest data file read (256 MiB): larger files, or files that are not regular files
/// (`/dev/zero`, a folder, a pipe), are refused before reading.
pub const MAX_DATA_BYTES: u64 = 256 * 1024 * 1024;

/// Times in data files are at most this many seconds (~31 years, as durations).
const MAX_T_S: f64 = 1.0e9;
/// Latencies in data files are at most this many milliseconds (~31 years).
const MAX_MS: f64 = 1.0e12;

/// A data file's error at its line and column: the same located error as the scenario's.
pub type DataError = super::ScenarioError;

/// One column to read and what its values must satisfy.
#[derive(Debug, Clone, Copy)]
struct Column<'a> {
    name: &'a str,
    /// Largest allowed value.
    max: f64,
    /// Values must not decrease from row to row.
    ordered: bool,
}

/// A request-rate series (`t_s`, `rate_per_s`), times in order.
pub fn rate_series(path: &Path) -> Result<Vec<(f64, f64)>, DataError> {
    let t = Column { name: "t_s", max: MAX_T_S, ordered: true };
    let r = Column { name: "rate_per_s", max: f64::MAX, ordered: false };
    pairs(read(path, &[t, r])?)
}

/// An observed-latency series (`t_s`, `latency_ms`), times in order.
pub fn latency_series(path: &Path) -> Result<Vec<(f64, f64)>, DataError> {
    let t = Column { name: "t_s", max: MAX_T_S, ordered: true };
    let l = Column { name: "latency_ms", max: MAX_MS, ordered: false };
    pairs(read(path, &[t, l])?)
}

/// Observed latencies in milliseconds from one column.
pub fn latency_samples(path: &Path, column: &str) -> Result<Vec<f64>, DataError> {
    let mut cols = read(path, &[Column { name: column, max: MAX_MS, ordered: false }])?;
    Ok(cols.swap_remove(0))
}

fn pairs(mut cols: Vec<Vec<f64>>) -> Result<Vec<(f64, f64)>, DataError> {
    let second = cols.pop().unwrap_or_default();
    let first = cols.pop().unwrap_or_default();
    Ok(first.into_iter().zip(second).collect())
}

fn whole(path: &Path, message: String) -> DataError {
    DataError { file: path.to_path_buf(), line: 0, col: 0, message }
}

/// The text of a `what` ("data file", "scenario file"): a regular file of at most
/// [`MAX_DATA_BYTES`], in UTF-8.
pub(crate) fn bounded_text(path: &Path, what: &str) -> Result<String, DataError> {
    // Non-blocking, checked after opening, read with a hard cap: a FIFO or a device named
    // here neither blocks nor fills the memory.
    let bytes = crate::fsread::read_capped(path, MAX_DATA_BYTES).map_err(|e| match e {
        crate::fsread::ReadError::Io(e) => whole(path, format!("cannot read the {what}: {e}")),
        e => whole(path, format!("the {what} is {e}")),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let ok = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = ok.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = ok.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&ok[start..]).chars().count() + 1;
        DataError { file: path.to_path_buf(), line, col, message: format!("the {what} is not UTF-8 text") }
    })
}

/// The 1-based column (in characters) of field `idx` of the record starting at byte `start`.
fn field_col(text: &str, start: usize, idx: usize) -> usize {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let (mut field, mut quoted, mut col) = (0, false, text[line_start..start].chars().count() + 1);
    let mut chars = text[start..].chars().peekable();
    while field < idx {
        let Some(c) = chars.next() else { break };
        col += 1;
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => field += 1,
            '\n' => col = 1,
            _ => {}
        }
    }
    // Point at the value, not at blanks before it.
    col + chars.take_while(|c| *c == ' ' || *c == '\t').count()
}

/// A cell's text as shown in a message: short ones quoted, long or odd ones not echoed.
fn shown(cell: &str) -> String {
    if cell.chars().count() <= 24 && !cell.chars().any(char::is_control) {
        format!("\"{cell}\"")
    } else {
        "the value".into()
    }
}

/// How many columns the header has: never its names, which could be any file's first line
/// (a password file's, a key's) when the wrong file is named.
fn header_hint(headers: &csv::StringRecord) -> String {
    match headers.len() {
        1 => "the header has 1 column".into(),
        n => format!("the header has {n} columns"),
    }
}

fn csv_error(path: &Path, e: &csv::Error) -> DataError {
    let line = e.position().map_or(0, |p| p.line() as usize);
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("this row has {len} fields but the header has {expected_len}")
        }
        _ => "malformed CSV".into(),
    };
    DataError { file: path.to_path_buf(), line, col: usize::from(line > 0), message }
}

/// Read `columns` of a CSV file with a header, checking every value.
fn read(path: &Path, columns: &[Column]) -> Result<Vec<Vec<f64>>, DataError> {
    let text = bounded_text(path, "data file")?;
    let at = |line: usize, col: usize, message: String| DataError { file: path.to_path_buf(), line, col, message };
    let mut rdr = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
    let headers = rdr.headers().map_err(|e| csv_error(path, &e))?.clone();
    let idx = columns
        .iter()
        .map(|c| {
            headers.iter().position(|h| h.trim() == c.name).ok_or_else(|| {
                at(
                    1,
                    1,
                    format!(
                        "no column \"{}\" ({}; the first line must name the columns)",
                        c.name,
                        header_hint(&headers)
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = vec![Vec::new(); columns.len()];
    let mut record = csv::StringRecord::new();
    while rdr.read_record(&mut record).map_err(|e| csv_error(path, &e))? {
        let pos = record.position().map_or((0, 0), |p| (p.line() as usize, p.byte() as usize));
        for ((c, &i), values) in columns.iter().zip(&idx).zip(&mut out) {
            let cell = record.get(i).unwrap_or("").trim();
            let here = |m: String| at(pos.0, field_col(&text, pos.1, i), m);
            let v: f64 = cell.parse().map_err(|_| here(format!("{}: {} is not a number", c.name, shown(cell))))?;
            if !(v >= 0.0 && v <= c.max) {
                let bound = if c.max < f64::MAX { format!(" and <= {:e}", c.max) } else { String::new() };
                return Err(here(format!("{}: {v} must be a finite number >= 0{bound}", c.name)));
            }
            if c.ordered && values.last().is_some_and(|&last| v < last) {
                return Err(here(format!(
                    "{}: {v} is before the previous row's {} (rows must be in time order)",
                    c.name,
                    values[values.len() - 1]
                )));
            }
            values.push(v);
        }
    }
    if out[0].is_empty() {
        return Err(at(1, 1, "no data rows (a header line and at least one row are needed)".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_of_a_field_is_counted_in_characters_past_quotes() {
        let text = "a,b,c\n1, \"x,y\",  7\n";
        assert_eq!(field_col(text, 6, 0), 1);
        assert_eq!(field_col(text, 6, 1), 4);
        assert_eq!(field_col(text, 6, 2), 12);
    }
}
