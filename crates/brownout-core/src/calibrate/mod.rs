//! `brownout calibrate prometheus`: scenario parts fitted from Prometheus range-query answers
//! (docs/openmetrics.md). Per class, the arrivals as a `PoissonProfile` through the request
//! rate at each step; the dependency's base latency from the quiet period (an `Empirical`
//! distribution from a latency histogram's buckets, or a `LogNormal` through two quantile
//! series), and its `drift` as the median at each step over the base median. Every value
//! written cites its series and time in a RON comment; the fit report sets the fitted
//! quantiles beside the data's at each step. What cannot be used is skipped with the series,
//! the time and the reason, or refused with the file, line and column.
//! The `otlp` module is the same from OpenTelemetry traces (docs/calibrate.md).

mod latency;
pub mod otlp;
mod read;
mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::PathBuf;

#[cfg(test)]
use latency::bucket_quantile;
use latency::{ReportRow, fit_histogram, fit_quantiles};
use write::{report_text, scenario_text};

pub use read::{MAX_BYTES, Sample, Series, read, read_text};

use crate::units::Dur;

/// An error at a place in an input file (line 0: the whole file), or about the options.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CalibrateError {
    /// The file (empty: the command line).
    pub file: PathBuf,
    /// 1-based line, 0 when about the whole file.
    pub line: usize,
    /// 1-based column, 0 when about the whole file.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CalibrateError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match (self.file.as_os_str().is_empty(), self.line) {
            (true, _) => f.write_str(&self.message),
            (false, 0) => write!(f, "{}: {}", self.file.display(), self.message),
            _ => write!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.col, self.message),
        }
    }
}

fn at_series(s: &Series, message: impl Into<String>) -> CalibrateError {
    CalibrateError { file: s.file.clone(), line: s.at.line, col: s.at.col, message: message.into() }
}

fn at_sample(s: &Series, x: &Sample, message: impl Into<String>) -> CalibrateError {
    CalibrateError { file: s.file.clone(), line: x.at.line, col: x.at.col, message: message.into() }
}

fn usage(message: impl Into<String>) -> CalibrateError {
    CalibrateError { message: message.into(), ..CalibrateError::default() }
}

/// A selector that does not parse ([`Selector::parse`]); its `Display` is the message
/// `brownout calibrate` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SelectorError {
    /// The selector as written.
    pub selector: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "selector {:?}: {} (write name{{label=\"value\",...}})", self.selector, self.why)
    }
}

impl std::error::Error for SelectorError {}

/// A PromQL-style equality selector, `name{label="value",...}`, `name` or `{label="value"}`:
/// a series matches when it has every label given (the name is its `__name__`).
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    text: String,
    labels: Vec<(String, String)>,
}

impl Selector {
    /// Parse a selector, or say what is wrong.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let bad = |why: &'static str| SelectorError { selector: text.to_string(), why };
        let t = text.trim();
        let (name, rest) = match t.find('{') {
            Some(i) => (&t[..i], Some(&t[i..])),
            None => (t, None),
        };
        let ident = |s: &str| {
            !s.is_empty()
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
                && !s.starts_with(|c: char| c.is_ascii_digit())
        };
        let mut labels = Vec::new();
        if !name.is_empty() {
            if !ident(name) {
                return Err(bad("the metric name holds characters PromQL names do not"));
            }
            labels.push(("__name__".to_string(), name.to_string()));
        }
        if let Some(rest) = rest {
            let inner = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')).ok_or_else(|| bad("unclosed {"))?;
            let mut chars = inner.trim();
            while !chars.is_empty() {
                let eq = chars.find('=').ok_or_else(|| bad("a matcher without ="))?;
                let key = chars[..eq].trim();
                if !ident(key) || chars[eq + 1..].starts_with('~') || key.ends_with('!') {
                    return Err(bad("only label=\"value\" matchers are read"));
                }
                let after = chars[eq + 1..].trim_start();
                let body = after.strip_prefix('"').ok_or_else(|| bad("a label value in double quotes"))?;
                let mut value = String::new();
                let mut end = None;
                let mut it = body.char_indices();
                while let Some((i, c)) = it.next() {
                    match c {
                        '\\' => match it.next() {
                            Some((_, 'n')) => value.push('\n'),
                            Some((_, c)) => value.push(c),
                            None => return Err(bad("a value ends in \\")),
                        },
                        '"' => {
                            end = Some(i);
                            break;
                        }
                        c => value.push(c),
                    }
                }
                let end = end.ok_or_else(|| bad("an unclosed label value"))?;
                labels.push((key.to_string(), value));
                chars = body[end + 1..].trim_start();
                chars = chars.strip_prefix(',').unwrap_or(chars).trim_start();
            }
        }
        if labels.is_empty() {
            return Err(bad("it selects nothing"));
        }
        Ok(Self { text: t.to_string(), labels })
    }

    /// Whether `s` has every label the selector names.
    pub fn matches(&self, s: &Series) -> bool {
        self.labels.iter().all(|(k, v)| s.labels.get(k) == Some(v))
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Where the dependency's latency comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum LatencySource {
    /// Histogram bucket series (with `le` labels) matching the selector, summed by `le`.
    Histogram(Selector),
    /// Quantile series: (quantile in (0, 1), selector); 0.5 and at least one other.
    Quantiles(Vec<(f64, Selector)>),
}

/// What to fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Per class: its name and the selector of its request-rate series (summed when several).
    pub classes: Vec<(String, Selector)>,
    /// The latency series.
    pub latency: LatencySource,
    /// The quiet period: steps before this time after the first sample give the base latency.
    /// None: the first quarter of the range.
    pub quiet_until: Option<Dur>,
    /// File name of the empirical latency CSV the scenario names (histogram source).
    pub latency_file: String,
}

/// A sample or step left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skip {
    /// The series (PromQL form) or the histogram.
    pub series: String,
    /// Seconds since the epoch of the sample or step.
    pub t_s: f64,
    /// Why.
    pub reason: String,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} at {:.3}: {}", self.series, self.t_s, self.reason)
    }
}

/// The fitted base latency.
#[derive(Debug, Clone, PartialEq)]
pub enum Base {
    /// Latencies (ms) at evenly spaced quantiles of the quiet period's histogram.
    Empirical(Vec<f64>),
    /// Median (ms) and sigma of a log-normal.
    LogNormal {
        /// Median, ms.
        median_ms: f64,
        /// Sigma of ln(latency).
        sigma: f64,
    },
}

/// What was fitted, as numbers and as the files to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibrated {
    /// Per class: its name and its rate profile (ms from the first sample, requests per s).
    pub arrivals: Vec<(String, Vec<(u64, f64)>)>,
    /// The base latency.
    pub base: Base,
    /// The drift: (ms from the first sample, factor).
    pub drift: Vec<(u64, f64)>,
    /// The step, ms.
    pub step_ms: u64,
    /// The first sample's time, ms since the epoch.
    pub t0_ms: i64,
    /// What was left out.
    pub skipped: Vec<Skip>,
    /// The scenario (RON) with every fitted value's source in a comment.
    pub scenario: String,
    /// The empirical latency CSV (histogram source), to write beside the scenario as
    /// `Options::latency_file`.
    pub latency_csv: Option<String>,
    /// The fit report (Markdown).
    pub report: String,
}

/// The quantiles the fit report compares.
const REPORT_QUANTILES: [f64; 3] = [0.5, 0.9, 0.99];

/// Samples the empirical base latency file holds.
const EMPIRICAL_POINTS: usize = 1000;

/// Fit `opts` from `series` (every series of every file read).
pub fn calibrate(series: &[Series], opts: &Options) -> Result<Calibrated, CalibrateError> {
    if opts.classes.is_empty() {
        return Err(usage("name at least one class: --class NAME=SELECTOR"));
    }
    let mut used: Vec<&Series> = Vec::new();
    let mut picked = |sel: &Selector, extra: &dyn Fn(&Series) -> bool| -> Result<Vec<&Series>, CalibrateError> {
        let got: Vec<&Series> = series.iter().filter(|s| sel.matches(s) && extra(s)).collect();
        if got.is_empty() {
            let names: Vec<String> = series.iter().map(Series::describe).collect();
            return Err(usage(format!(
                "no series matches {sel} (the files hold {})",
                crate::text::listing(&names.iter().map(String::as_str).collect::<Vec<_>>())
            )));
        }
        used.extend(got.iter().copied());
        Ok(got)
    };
    let mut class_series = Vec::new();
    for (name, sel) in &opts.classes {
        class_series.push((name.clone(), sel.clone(), picked(sel, &|s| !s.labels.contains_key("le"))?));
    }
    let latency_series: Vec<(f64, String, Vec<&Series>)> = match &opts.latency {
        LatencySource::Histogram(sel) => {
            vec![(f64::NAN, sel.to_string(), picked(sel, &|s| s.labels.contains_key("le"))?)]
        }
        LatencySource::Quantiles(qs) => {
            if !qs.iter().any(|(q, _)| *q == 0.5) || qs.len() < 2 {
                return Err(usage(
                    "--latency-quantile needs the median (0.5=SELECTOR) and at least one other quantile",
                ));
            }
            qs.iter()
                .map(|(q, sel)| picked(sel, &|s| !s.labels.contains_key("le")).map(|v| (*q, sel.to_string(), v)))
                .collect::<Result<_, _>>()?
        }
    };
    let step_ms = step_of(&used)?;
    let t0_ms = used.iter().filter_map(|s| s.samples.first().map(|x| x.t_ms)).min().unwrap_or(0);
    let t_end = used.iter().filter_map(|s| s.samples.last().map(|x| x.t_ms)).max().unwrap_or(t0_ms);
    let quiet_end = t0_ms
        + opts
            .quiet_until
            .map_or(((t_end - t0_ms + step_ms as i64) / 4).max(step_ms as i64), |d| (d.ns() / 1_000_000) as i64);
    let mut skipped = Vec::new();

    let mut arrivals = Vec::new();
    let mut cites: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, sel, ss) in &class_series {
        let points = summed_rates(ss, sel, step_ms, &mut skipped);
        if points.is_empty() {
            return Err(at_series(
                ss[0],
                format!("class {name}: no usable sample in the series {sel} selects (see the skipped samples)"),
            ));
        }
        let rel: Vec<(u64, f64)> = points.iter().map(|&(t, v)| ((t - t0_ms) as u64, round6(v))).collect();
        cites.insert(
            name.clone(),
            vec![if ss.len() == 1 { ss[0].describe() } else { format!("sum of {} series matching {sel}", ss.len()) }],
        );
        arrivals.push((name.clone(), rel));
    }

    let (base, drift, report_rows, base_cite) = match &opts.latency {
        LatencySource::Histogram(sel) => {
            fit_histogram(&latency_series[0].2, sel, step_ms, t0_ms, quiet_end, &mut skipped)?
        }
        LatencySource::Quantiles(_) => fit_quantiles(&latency_series, step_ms, t0_ms, quiet_end, &mut skipped)?,
    };
    if drift.is_empty() {
        return Err(usage("no step has a usable latency (see the skipped samples)"));
    }
    let mut out = Calibrated {
        arrivals,
        base,
        drift,
        step_ms,
        t0_ms,
        skipped,
        scenario: String::new(),
        latency_csv: None,
        report: String::new(),
    };
    out.scenario = scenario_text(&out, opts, &cites, &base_cite, t_end, quiet_end);
    if let Base::Empirical(v) = &out.base {
        let mut csv = String::from("latency_ms\n");
        for x in v {
            writeln!(csv, "{x}").ok();
        }
        out.latency_csv = Some(csv);
    }
    out.report = report_text(&out, &report_rows, &base_cite);
    Ok(out)
}

/// The query step: every series' smallest gap between samples, which must agree; within a
/// series every gap a whole number of steps (more than one: missing samples).
fn step_of(used: &[&Series]) -> Result<u64, CalibrateError> {
    let mut step: Option<(u64, &Series)> = None;
    for s in used {
        let mut own: Option<i64> = None;
        for w in s.samples.windows(2) {
            let d = w[1].t_ms - w[0].t_ms;
            if d <= 0 {
                return Err(at_sample(s, &w[1], "sample times do not increase"));
            }
            own = Some(own.map_or(d, |o| o.min(d)));
        }
        let Some(own) = own else { continue };
        match step {
            None => step = Some((own as u64, s)),
            Some((st, first)) if st != own as u64 => {
                return Err(at_series(
                    s,
                    format!(
                        "this series has a step of {} s, {} one of {} s: mixed query steps; query every series with the same step",
                        own as f64 / 1000.0,
                        first.describe(),
                        st as f64 / 1000.0
                    ),
                ));
            }
            _ => {}
        }
    }
    let Some((st, _)) = step else { return Err(usage("no series has two samples: nothing to fit a profile through")) };
    for s in used {
        for w in s.samples.windows(2) {
            if !((w[1].t_ms - w[0].t_ms) as u64).is_multiple_of(st) {
                return Err(at_sample(
                    s,
                    &w[1],
                    format!(
                        "this sample is {} s after the previous one, not a whole number of steps of {} s: mixed query steps",
                        (w[1].t_ms - w[0].t_ms) as f64 / 1000.0,
                        st as f64 / 1000.0
                    ),
                ));
            }
        }
    }
    Ok(st)
}

/// A counter (a raw `_total` or `_bucket` series) or a gauge-like series already per second.
fn is_counter(s: &Series) -> bool {
    s.name().is_some_and(|n| n.ends_with("_total") || n.ends_with("_bucket") || n.ends_with("_count"))
}

/// A series' usable values per step time, and the times of the samples it left out.
type Values = (BTreeMap<i64, f64>, BTreeSet<i64>);

/// One series' usable values per step time: a gauge's samples as they are, a counter's
/// increase per step (as a rate when `per_second`); NaN, infinite and negative values,
/// gaps and counter resets reported in `skipped`.
fn values(s: &Series, step_ms: u64, per_second: bool, skipped: &mut Vec<Skip>) -> Values {
    let name = s.describe();
    let mut out = BTreeMap::new();
    let mut left = BTreeSet::new();
    let skip = |skipped: &mut Vec<Skip>, t: i64, reason: String| {
        skipped.push(Skip { series: name.clone(), t_s: t as f64 / 1000.0, reason });
    };
    let counter = is_counter(s);
    let mut prev: Option<&Sample> = None;
    for x in &s.samples {
        if let Some(p) = prev
            && x.t_ms - p.t_ms > step_ms as i64
        {
            skip(
                skipped,
                p.t_ms + step_ms as i64,
                format!("no samples until {:.3} (a gap): the profile runs straight across it", x.t_ms as f64 / 1000.0),
            );
        }
        if !x.v.is_finite() || x.v < 0.0 {
            skip(skipped, x.t_ms, format!("value {} is no rate or count", x.v));
            left.insert(x.t_ms);
            if counter {
                prev = None;
            }
            continue;
        }
        if !counter {
            out.insert(x.t_ms, x.v);
            prev = Some(x);
            continue;
        }
        if let Some(p) = prev {
            let inc = if x.v < p.v {
                // As Prometheus's rate() and increase() take a reset: the counter restarted
                // from 0 (promql/functions.go, extrapolatedRate).
                skip(
                    skipped,
                    x.t_ms,
                    format!("counter reset (from {} to {}): counted from 0, as rate() does", p.v, x.v),
                );
                x.v
            } else {
                x.v - p.v
            };
            let dt = (x.t_ms - p.t_ms) as f64 / 1000.0;
            out.insert(x.t_ms, if per_second { inc / dt } else { inc * step_ms as f64 / 1000.0 / dt });
        }
        prev = Some(x);
    }
    (out, left)
}

/// Per step, the sum over `ss` of the series that have a sample there, as PromQL's `sum`
/// adds the series present (a series split in time by a label, such as brownout's `phase`,
/// sums to the whole); a step where some series left its sample out is skipped whole.
fn summed(per: &[Values], what: &str, skipped: &mut Vec<Skip>) -> BTreeMap<i64, f64> {
    let times: BTreeSet<i64> = per.iter().flat_map(|m| m.0.keys().copied()).collect();
    let mut out = BTreeMap::new();
    for t in times {
        if per.iter().any(|m| m.1.contains(&t)) {
            skipped.push(Skip {
                series: what.to_string(),
                t_s: t as f64 / 1000.0,
                reason: "a series it sums left its sample out (above): step left out".into(),
            });
            continue;
        }
        out.insert(t, per.iter().filter_map(|m| m.0.get(&t)).sum());
    }
    out
}

/// The request rate at each step summed over `ss`.
fn summed_rates(ss: &[&Series], sel: &Selector, step_ms: u64, skipped: &mut Vec<Skip>) -> Vec<(i64, f64)> {
    let per: Vec<Values> = ss.iter().map(|s| values(s, step_ms, true, skipped)).collect();
    summed(&per, &format!("sum of {sel}"), skipped).into_iter().collect()
}

/// Six decimals: enough for a rate or a factor, short enough to read.
fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests;
