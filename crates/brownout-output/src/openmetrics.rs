//! `brownout export openmetrics`: a run folder's time series (`timeseries.csv`, every window
//! as saved, never coalesced) in the OpenMetrics text format, for `promtool tsdb
//! create-blocks-from openmetrics` and so for Prometheus and Grafana (docs/openmetrics.md).
//!
//! One metric family per column. A window's per-window figures (rates, percentiles, mean
//! levels) are gauges stamped at the window's start, the time the saved row names; its counts
//! are counters (`_total`), cumulative over the run, stamped at the window's end, the first
//! time the whole count is known. Every sample has the labels `policy` and `class`, and
//! `phase` when the run has phases (the phase holding the window's start). A figure over no
//! sample (NaN: a percentile of a window without an answer) has no sample: a gap in the
//! series, never a value. Timestamps are the run's virtual clock plus the anchor the user
//! gives, in seconds with milliseconds.
//!
//! OpenMetrics wants a family's samples together and each series' samples in time order, so
//! the file is read once per family, and one family's values (two numbers a window and
//! series) are held at a time.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::metrics::WindowRow;
use crate::metrics::summary::ScenarioSummary;
use crate::report::escape;

/// How a family's value is taken from a saved row.
#[derive(Clone, Copy)]
enum Take {
    /// A count: a counter, cumulative over the run.
    Count(fn(&WindowRow) -> u64),
    /// A per-window figure as saved.
    Gauge(fn(&WindowRow) -> f64),
    /// A per-window figure in milliseconds, written in seconds.
    Millis(fn(&WindowRow) -> f64),
    /// Arrivals per second: the window's count over its width.
    Rate(fn(&WindowRow) -> u64),
    /// A level at the window's end, stamped there (as a counter is), not at its start.
    Level(fn(&WindowRow) -> f64),
}

/// One metric family: its name (a counter's without `_total`), unit (the name's suffix, or
/// none), help and where its value comes from.
struct Family {
    name: &'static str,
    unit: &'static str,
    help: &'static str,
    take: Take,
}

const fn family(name: &'static str, unit: &'static str, help: &'static str, take: Take) -> Family {
    Family { name, unit, help, take }
}

/// Every family, in the order written; `docs/openmetrics.md` lists them with their columns.
const FAMILIES: &[Family] = &[
    family(
        "brownout_offered_requests",
        "",
        "Requests that arrived (timeseries.csv offered_count), cumulative",
        Take::Count(|r| r.offered),
    ),
    family("brownout_ok_requests", "", "Requests answered ok (ok_count), cumulative", Take::Count(|r| r.ok)),
    family(
        "brownout_error_requests",
        "",
        "Requests answered with an error (error_count), cumulative",
        Take::Count(|r| r.error),
    ),
    family(
        "brownout_timeout_requests",
        "",
        "Requests that timed out (timeout_count), cumulative",
        Take::Count(|r| r.timeout),
    ),
    family(
        "brownout_rejected_requests",
        "",
        "Requests rejected by a policy (rejected_count), cumulative",
        Take::Count(|r| r.rejected),
    ),
    family(
        "brownout_short_circuited_requests",
        "",
        "Requests short-circuited by an open breaker (short_circuited_count), cumulative",
        Take::Count(|r| r.short_circuited),
    ),
    family(
        "brownout_fallback_requests",
        "",
        "Requests answered by a fallback (fallback_count), cumulative",
        Take::Count(|r| r.fallback),
    ),
    family(
        "brownout_deadline_missed_requests",
        "",
        "Responses after the deadline (deadline_missed_count), cumulative",
        Take::Count(|r| r.deadline_missed),
    ),
    family(
        "brownout_stale_wrong_requests",
        "",
        "Fallbacks that answered a wrong stale value (stale_wrong_count), cumulative",
        Take::Count(|r| r.stale_wrong),
    ),
    family(
        "brownout_arrivals_per_second",
        "",
        "Arrivals per second in the window (offered_count over the window)",
        Take::Rate(|r| r.offered),
    ),
    family(
        "brownout_goodput_per_second",
        "",
        "Answers within the deadline per second in the window (goodput_per_s)",
        Take::Gauge(|r| r.goodput_per_s),
    ),
    family(
        "brownout_fallbacks_per_second",
        "",
        "Fallbacks per second in the window (fallback_per_s)",
        Take::Gauge(|r| r.fallback_per_s),
    ),
    family(
        "brownout_business_cost",
        "",
        "Business cost of the requests that finished in the window (business_cost_units)",
        Take::Gauge(|r| r.business_cost),
    ),
    family(
        "brownout_latency_p50_seconds",
        "seconds",
        "Gateway latency median in the window (latency_p50_ms)",
        Take::Millis(|r| r.latency_p50_ms),
    ),
    family(
        "brownout_latency_p95_seconds",
        "seconds",
        "Gateway latency p95 in the window (latency_p95_ms)",
        Take::Millis(|r| r.latency_p95_ms),
    ),
    family(
        "brownout_staleness_p95_seconds",
        "seconds",
        "Staleness p95 of the window's fallbacks (staleness_p95_ms)",
        Take::Millis(|r| r.staleness_p95_ms),
    ),
    family(
        "brownout_dependency_calls_per_second",
        "",
        "Dependency calls started per second in the window (dep_calls_per_s)",
        Take::Gauge(|r| r.dep_calls_per_s),
    ),
    family(
        "brownout_dependency_in_flight",
        "",
        "Dependency calls in flight, time-weighted mean (dep_in_flight_mean_count)",
        Take::Gauge(|r| r.dep_in_flight),
    ),
    family(
        "brownout_in_flight",
        "",
        "Requests in flight at the window's end, stamped there (in_flight_end_count)",
        Take::Level(|r| r.in_flight_end_count),
    ),
    family(
        "brownout_dependency_unanswered",
        "",
        "Dependency calls not yet answered at the window's end, abandoned ones included, stamped there \
         (dep_in_flight_end_count)",
        Take::Level(|r| r.dep_in_flight_end_count),
    ),
    family(
        "brownout_dependency_latency_p50_seconds",
        "seconds",
        "Median service time of the window's dependency calls (dep_latency_p50_ms)",
        Take::Millis(|r| r.dep_latency_p50_ms),
    ),
    family(
        "brownout_dependency_latency_p95_seconds",
        "seconds",
        "p95 service time of the window's dependency calls (dep_latency_p95_ms)",
        Take::Millis(|r| r.dep_latency_p95_ms),
    ),
    family(
        "brownout_workers_busy",
        "",
        "Worker slots in use per instance, time-weighted mean (workers_busy_mean_count)",
        Take::Gauge(|r| r.workers_busy),
    ),
    family(
        "brownout_pool_busy",
        "",
        "Pool connections in use per instance, time-weighted mean (pool_busy_mean_count)",
        Take::Gauge(|r| r.pool_busy),
    ),
    family(
        "brownout_breaker_open_ratio",
        "ratio",
        "Fraction of instance-time the breaker was open (breaker_open_fraction)",
        Take::Gauge(|r| r.breaker_open),
    ),
    family(
        "brownout_breaker_half_open_ratio",
        "ratio",
        "Fraction of instance-time the breaker was half-open (breaker_half_open_fraction)",
        Take::Gauge(|r| r.breaker_half_open),
    ),
    family(
        "brownout_limit",
        "",
        "Mean concurrency limit across instances at the window's end (limit_mean_count)",
        Take::Gauge(|r| r.limit),
    ),
];

/// A `--start` that is no RFC 3339 time from 1970 on ([`parse_start`]); its `Display` is the
/// message `brownout export` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BadStart {
    /// Not written as RFC 3339 (the text as given).
    NotRfc3339(String),
    /// A valid time before the epoch (the text as given).
    Before1970(String),
}

impl std::fmt::Display for BadStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadStart::NotRfc3339(t) => write!(f, "--start {t:?} is not an RFC 3339 time such as 2026-01-01T00:00:00Z"),
            BadStart::Before1970(t) => {
                write!(f, "--start {t:?} is before 1970-01-01T00:00:00Z, where Prometheus keeps no samples")
            }
        }
    }
}

impl std::error::Error for BadStart {}

/// Milliseconds since 1970-01-01T00:00:00Z of an RFC 3339 time (`2026-01-01T00:00:00Z`,
/// `2026-01-01T01:00:00.250+01:00`), or why not. Times before 1970 are refused: Prometheus
/// keeps no samples there.
pub fn parse_start(text: &str) -> Result<i64, BadStart> {
    let bad = || BadStart::NotRfc3339(text.to_string());
    let b = text.as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let s = text.get(from..from + n)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    if b.len() < 20 || !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return Err(bad());
    }
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) =
        (digits(0, 4), digits(5, 2), digits(8, 2), digits(11, 2), digits(14, 2), digits(17, 2))
    else {
        return Err(bad());
    };
    let mut at = 19;
    let mut millis = 0;
    if sep(at, b".") {
        let n = b[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return Err(bad());
        }
        let frac = &text[at + 1..at + 1 + n];
        millis = format!("{frac:0<3}")[..3].parse::<i64>().map_err(|_| bad())?;
        at += 1 + n;
    }
    let offset = match &text[at..] {
        "Z" | "z" => 0,
        rest if rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-')) && sep(at + 3, b":") => {
            let (Some(oh), Some(om)) = (digits(at + 1, 2), digits(at + 4, 2)) else { return Err(bad()) };
            if oh > 23 || om > 59 {
                return Err(bad());
            }
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (oh * 3600 + om * 60)
        }
        _ => return Err(bad()),
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days_in = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > days_in[(mo - 1) as usize] || h > 23 || mi > 59 || s > 60 {
        return Err(bad());
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset;
    if secs < 0 {
        return Err(BadStart::Before1970(text.to_string()));
    }
    Ok(secs * 1000 + millis)
}

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian): Howard Hinnant's
/// `days_from_civil` (<http://howardhinnant.github.io/date_algorithms.html>).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A label value escaped as OpenMetrics writes it: backslash, double quote and line feed as
/// `\\`, `\"` and `\n` (the ABNF's `escaped-string`).
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// What is wrong with the folder asked for: the file at fault and why.
fn refuse(path: &Path, why: &str) -> anyhow::Error {
    anyhow::anyhow!("{}: {why}", path.display())
}

/// Where an export goes.
pub enum Dest<'a> {
    /// A file, written to a temporary file beside it and renamed into place when complete.
    File(&'a Path),
    /// A stream (the command line's standard output), written only once the export is complete.
    Stream(&'a mut dyn Write),
}

/// Write `dir`'s time series as OpenMetrics text to `out`, with the run's time 0 at
/// `start_ms` (milliseconds since the Unix epoch). Nothing is written on an error.
pub fn export(dir: &Path, start_ms: i64, out: Dest<'_>) -> Result<()> {
    let summary_path = dir.join("summary.json");
    if !summary_path.exists() {
        if dir.join("sweep.json").exists() {
            return Err(refuse(
                &dir.join("sweep.json"),
                "a sweep folder holds no time series (a sweep keeps each point's summary, not its windows); \
                 export the run folder of one point (`brownout run` on the scenario with the point's values)",
            ));
        }
        return Err(refuse(dir, "not a run folder: it holds no summary.json (export the folder `brownout run` wrote)"));
    }
    let summary: ScenarioSummary = serde_json::from_slice(&crate::read_regular(&summary_path)?)
        .with_context(|| format!("parsing {}", summary_path.display()))?;
    let csv_path = dir.join("timeseries.csv");
    if !csv_path.exists() {
        return Err(refuse(&csv_path, "missing: this run kept no time series, so there is nothing to export"));
    }
    let mut tmp = match &out {
        Dest::File(path) => {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
            let prefix = format!(".{name}.");
            let mut builder = tempfile::Builder::new();
            builder.prefix(&prefix).suffix(".tmp");
            // Like File::create: the umask decides (tempfile's default is owner-only).
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
            builder.tempfile_in(parent).with_context(|| format!("creating a temporary file in {}", parent.display()))?
        }
        Dest::Stream(_) => tempfile::NamedTempFile::new().context("creating a temporary file")?,
    };
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        write_families(&csv_path, &summary, start_ms, &mut w)?;
        w.flush().context("writing the export")?;
    }
    match out {
        Dest::File(path) => {
            tmp.persist(path).map_err(|e| e.error).with_context(|| format!("renaming into {}", path.display()))?;
        }
        Dest::Stream(w) => {
            let mut f = tmp.reopen().context("reading the export back")?;
            std::io::copy(&mut f, w).context("writing the export")?;
            w.flush().context("writing the export")?;
        }
    }
    Ok(())
}

/// One series of a family: its labels written out, and its (time in ms, value) samples.
type SeriesSamples = BTreeMap<usize, (String, Vec<(i64, f64)>)>;

/// Every family of `csv` in turn, each series' samples in time order.
fn write_families(csv: &Path, summary: &ScenarioSummary, start_ms: i64, w: &mut impl Write) -> Result<()> {
    let window_s = summary.setup.window_s;
    if !(window_s.is_finite() && window_s > 0.0) {
        bail!("{}: setup.window_s is {window_s}, not a window width", csv.display());
    }
    let window_ms = (window_s * 1000.0).round() as i64;
    for f in FAMILIES {
        let mut head = String::new();
        let kind = if matches!(f.take, Take::Count(_)) { "counter" } else { "gauge" };
        writeln!(head, "# TYPE {} {kind}", f.name).ok();
        if !f.unit.is_empty() {
            writeln!(head, "# UNIT {} {}", f.name, f.unit).ok();
        }
        writeln!(head, "# HELP {} {}.", f.name, f.help).ok();
        w.write_all(head.as_bytes())?;
        let series = read_family(csv, summary, f.take, window_s)?;
        let suffix = if kind == "counter" { "_total" } else { "" };
        for (labels, samples) in series.values() {
            let mut text = String::new();
            for &(t_ms, v) in samples {
                let at_end = matches!(f.take, Take::Count(_) | Take::Level(_));
                let at = start_ms + t_ms + if at_end { window_ms } else { 0 };
                writeln!(text, "{}{suffix}{{{labels}}} {} {}.{:03}", f.name, number(v), at / 1000, at % 1000).ok();
            }
            w.write_all(text.as_bytes())?;
        }
    }
    w.write_all(b"# EOF\n")?;
    Ok(())
}

/// A sample value: integers as integers, others as Rust's shortest exact decimal.
fn number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v}") }
}

/// One family's series from the file: keyed by order of first appearance, each with its
/// labels and samples (time from the run's start in ms, value); NaN values are left out, and
/// counts accumulate over the whole (policy, class), across phases.
fn read_family(csv: &Path, summary: &ScenarioSummary, take: Take, window_s: f64) -> Result<SeriesSamples> {
    let mut r = csv::Reader::from_reader(std::io::BufReader::new(crate::open_regular(csv)?));
    let mut keys: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    let mut totals: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut out = SeriesSamples::new();
    for (i, row) in r.deserialize().enumerate() {
        let row: WindowRow = row.with_context(|| format!("parsing {} (row {})", csv.display(), i + 2))?;
        let (policy, class) = (escape::csv_name(&row.policy), escape::csv_name(&row.class));
        if !(row.t_s.is_finite() && row.t_s >= 0.0) {
            bail!("{} (row {}): t_s {} is not a time in the run", csv.display(), i + 2, row.t_s);
        }
        let phase = summary
            .phases
            .iter()
            .find(|p| p.start_s <= row.t_s && row.t_s < p.end_s)
            .map_or(String::new(), |p| p.name.clone());
        let value = match take {
            Take::Count(f) => {
                let total = totals.entry((policy.clone(), class.clone())).or_default();
                *total += f(&row);
                *total as f64
            }
            Take::Gauge(f) | Take::Level(f) => f(&row),
            Take::Millis(f) => f(&row) / 1000.0,
            Take::Rate(f) => f(&row) as f64 / window_s,
        };
        let next = keys.len();
        let key = (policy, class, phase);
        let id = match keys.get(&key) {
            Some(&id) => id,
            None => {
                let (policy, class, phase) = &key;
                let mut labels = format!("policy=\"{}\",class=\"{}\"", escape_label(policy), escape_label(class));
                if !phase.is_empty() {
                    write!(labels, ",phase=\"{}\"", escape_label(phase)).ok();
                }
                out.insert(next, (labels, Vec::new()));
                keys.insert(key, next);
                next
            }
        };
        if value.is_nan() {
            continue;
        }
        let t_ms = (row.t_s * 1000.0).round() as i64;
        if let Some(s) = out.get_mut(&id) {
            s.1.push((t_ms, value));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_read_as_rfc3339() {
        // 2026-01-01T00:00:00Z = 20,454 days after 1970-01-01 (56 years, 14 of them leap:
        // 1972..2024) = 56 * 365 + 14 = 20,454; * 86,400 s = 1,767,225,600 s.
        assert_eq!(parse_start("2026-01-01T00:00:00Z"), Ok(1_767_225_600_000));
        assert_eq!(parse_start("2026-01-01T01:00:00.25+01:00"), Ok(1_767_225_600_250));
        assert_eq!(parse_start("1970-01-01T00:00:00Z"), Ok(0));
        // 2024-02-29 exists (leap year); 2025-02-29 does not.
        assert!(parse_start("2024-02-29T00:00:00Z").is_ok());
        for bad in [
            "2025-02-29T00:00:00Z",
            "2026-01-01",
            "2026-01-01T00:00:00",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "1969-12-31T23:59:59Z",
        ] {
            assert!(parse_start(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn label_values_escape_backslash_quote_and_newline() {
        assert_eq!(escape_label("a\\b\"c\nd é"), "a\\\\b\\\"c\\nd é");
    }

    #[test]
    fn numbers_print_exactly() {
        assert_eq!((number(3.0), number(0.1), number(1e-7)), ("3".into(), "0.1".into(), "0.0000001".into()));
    }
}
