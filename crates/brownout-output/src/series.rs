//! `timeseries.csv` as a stream. Each policy run writes its rows to a part file as its windows
//! close (`Parts::sink`); the parts are joined in policy order into the one file, byte for
//! byte what writing every row at once gives; the charts read it back row by row, coalescing
//! windows so a series holds at most [`MAX_CHART_WINDOWS`](crate::metrics::MAX_CHART_WINDOWS) points ([`read_series`]). Nothing
//! here holds a row per window.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};

use crate::metrics::summary::ScenarioSummary;
use crate::metrics::{RowSink, WindowRow, chart_factor};

use crate::open_regular;
use crate::report::escape;

/// Write one row of `timeseries.csv`: names as [`escape::csv_cell`]s.
pub(crate) fn write_row<W: Write>(w: &mut csv::Writer<W>, r: &WindowRow) -> csv::Result<()> {
    w.serialize(WindowRow { policy: escape::csv_cell(&r.policy), class: escape::csv_cell(&r.class), ..r.clone() })
}

/// The part files of one run folder's `timeseries.csv`, one per policy set, in `dir`.
#[derive(Debug)]
pub(crate) struct Parts {
    dir: PathBuf,
    count: usize,
    /// The first write error of any sink (the runs cannot report them).
    error: Arc<Mutex<Option<String>>>,
}

impl Parts {
    /// `count` parts in `dir` (the staging folder: a failed run leaves nothing behind).
    pub(crate) fn new(dir: &Path, count: usize) -> Self {
        Self { dir: dir.to_path_buf(), count, error: Arc::default() }
    }

    fn path(&self, part: usize) -> PathBuf {
        self.dir.join(format!(".timeseries-{part}.part"))
    }

    /// The sink of part `part`: each window's rows are written as the window closes.
    pub(crate) fn sink(&self, part: usize) -> Box<dyn RowSink> {
        let path = self.path(part);
        let out = File::create(&path).map(csv::Writer::from_writer);
        let mut sink = PartSink { out: None, path, error: self.error.clone() };
        match out {
            Ok(w) => sink.out = Some(w),
            Err(e) => sink.fail(&e),
        }
        Box::new(sink)
    }

    /// Join the parts in order into `to` (each part has its own header; only the first is
    /// kept) and remove them. Fails with the first error any sink met.
    pub(crate) fn join(self, to: &Path) -> Result<()> {
        if let Some(e) = self.error.lock().map_or_else(|e| e.into_inner().clone(), |e| e.clone()) {
            bail!("{e}");
        }
        let mut out = File::create(to).with_context(|| format!("creating {}", to.display()))?;
        let mut header = false;
        for part in 0..self.count {
            let path = self.path(part);
            let Ok(file) = File::open(&path) else { continue };
            let mut input = BufReader::new(file);
            if header {
                // Column names hold no line break: the header is the first line.
                input.skip_until(b'\n').with_context(|| format!("reading {}", path.display()))?;
            }
            let copied = std::io::copy(&mut input, &mut out).with_context(|| format!("writing {}", to.display()))?;
            header |= copied > 0;
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
        out.flush().with_context(|| format!("writing {}", to.display()))
    }
}

/// Writes one run's rows to its part file; keeps the first error for [`Parts::join`].
struct PartSink {
    out: Option<csv::Writer<File>>,
    path: PathBuf,
    error: Arc<Mutex<Option<String>>>,
}

impl PartSink {
    fn fail(&mut self, e: &dyn std::fmt::Display) {
        self.out = None;
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| format!("writing {}: {e}", self.path.display()));
    }
}

impl RowSink for PartSink {
    fn window(&mut self, rows: &[WindowRow]) {
        let Some(w) = &mut self.out else { return };
        if let Err(e) = rows.iter().try_for_each(|r| write_row(w, r)) {
            self.fail(&e);
        }
    }
}

impl Drop for PartSink {
    fn drop(&mut self) {
        if let Some(e) = self.out.as_mut().and_then(|w| w.flush().err()) {
            self.fail(&e);
        }
    }
}

/// A run's time series as the charts draw it: windows coalesced by `factor` (1 when the run
/// has at most [`MAX_CHART_WINDOWS`](crate::metrics::MAX_CHART_WINDOWS) windows: every row as saved).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Rows in file order, one per (policy, coalesced window, class).
    pub rows: Vec<WindowRow>,
    /// Saved windows per coalesced window.
    pub factor: u64,
}

/// Read `timeseries.csv` row by row, coalescing each (policy, class)'s windows by the factor
/// that leaves at most [`MAX_CHART_WINDOWS`](crate::metrics::MAX_CHART_WINDOWS) per series ([`chart_factor`] of the run's window
/// count, known up front from `summary`). A coalesced window sums the counts and business cost,
/// averages the rates, gauges and fractions, and takes the largest of each latency percentile
/// (so a spike stays visible); it starts where its first window starts.
pub fn read_series(path: &Path, summary: &ScenarioSummary) -> Result<Series> {
    let u = &summary.setup;
    let window_s = if u.window_s > 0.0 { u.window_s } else { 1.0 };
    let factor = chart_factor((u.horizon_s / window_s).ceil().max(1.0) as u64);
    // Streamed row by row, so no cap; opened as a regular file so a device or FIFO is refused.
    let mut r = csv::Reader::from_reader(std::io::BufReader::new(open_regular(path)?));
    let mut c = Coalescer::default();
    for row in r.deserialize() {
        let row: WindowRow = row.with_context(|| format!("parsing {}", path.display()))?;
        let (policy, class) = (escape::csv_name(&row.policy), escape::csv_name(&row.class));
        let group = (row.t_s / window_s).round().max(0.0) as u64 / factor;
        c.add(WindowRow { policy, class, ..row }, group);
    }
    Ok(Series { rows: c.finish(), factor })
}

/// The open coalesced window (one policy, one group of windows) and the rows done.
#[derive(Default)]
struct Coalescer {
    done: Vec<WindowRow>,
    /// Policy and group of the open window.
    open: Option<(String, u64)>,
    /// Per class, in order of appearance: sums so far and windows merged.
    classes: Vec<(WindowRow, u32)>,
}

impl Coalescer {
    fn add(&mut self, row: WindowRow, group: u64) {
        if self.open.as_ref().is_none_or(|(p, g)| *p != row.policy || *g != group) {
            self.flush();
            self.open = Some((row.policy.clone(), group));
        }
        match self.classes.iter_mut().find(|(a, _)| a.class == row.class) {
            Some((acc, n)) => {
                merge(acc, &row);
                *n += 1;
            }
            None => self.classes.push((row, 1)),
        }
    }

    fn flush(&mut self) {
        for (mut acc, n) in self.classes.drain(..) {
            let n = f64::from(n);
            for v in means(&mut acc) {
                *v /= n;
            }
            self.done.push(acc);
        }
    }

    fn finish(mut self) -> Vec<WindowRow> {
        self.flush();
        self.done
    }
}

/// The averaged columns (summed by [`merge`], divided at the end).
fn means(r: &mut WindowRow) -> [&mut f64; 9] {
    [
        &mut r.goodput_per_s,
        &mut r.fallback_per_s,
        &mut r.dep_calls_per_s,
        &mut r.dep_in_flight,
        &mut r.workers_busy,
        &mut r.pool_busy,
        &mut r.breaker_open,
        &mut r.breaker_half_open,
        &mut r.limit,
    ]
}

/// Add `r` into `acc`: counts and cost summed, averaged columns summed, percentiles maxed.
fn merge(acc: &mut WindowRow, r: &WindowRow) {
    acc.offered += r.offered;
    acc.ok += r.ok;
    acc.error += r.error;
    acc.timeout += r.timeout;
    acc.rejected += r.rejected;
    acc.short_circuited += r.short_circuited;
    acc.fallback += r.fallback;
    acc.deadline_missed += r.deadline_missed;
    acc.stale_wrong += r.stale_wrong;
    acc.business_cost += r.business_cost;
    // Levels at a window's end: the coalesced window ends where its last window does.
    acc.in_flight_end_count = r.in_flight_end_count;
    acc.dep_in_flight_end_count = r.dep_in_flight_end_count;
    let mut r = r.clone();
    for (a, b) in means(acc).into_iter().zip(means(&mut r)) {
        *a += *b;
    }
    for (a, b) in [
        (&mut acc.latency_p50_ms, r.latency_p50_ms),
        (&mut acc.latency_p95_ms, r.latency_p95_ms),
        (&mut acc.staleness_p95_ms, r.staleness_p95_ms),
        (&mut acc.dep_latency_p50_ms, r.dep_latency_p50_ms),
        (&mut acc.dep_latency_p95_ms, r.dep_latency_p95_ms),
    ] {
        *a = a.max(b);
    }
}

/// The summary the charts draw a series with: its window is the coalesced one.
pub(crate) fn charted(summary: &ScenarioSummary, factor: u64) -> std::borrow::Cow<'_, ScenarioSummary> {
    if factor == 1 {
        return std::borrow::Cow::Borrowed(summary);
    }
    let mut s = summary.clone();
    s.setup.window_s *= factor as f64;
    std::borrow::Cow::Owned(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saved summary (any will do: the reader uses its horizon and window only).
    fn summary(horizon_s: f64, window_s: f64) -> ScenarioSummary {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/golden/grocery-overload/summary.json");
        let mut s: ScenarioSummary = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        s.setup.horizon_s = horizon_s;
        s.setup.window_s = window_s;
        s
    }

    fn row(policy: &str, class: &str, t: u64) -> WindowRow {
        let mut r: WindowRow = serde_json::from_value(serde_json::json!({
            "policy": policy, "t_s": t as f64, "class": class, "offered_count": t, "ok_count": 1,
            "error_count": 0, "timeout_count": 0, "rejected_count": 0, "short_circuited_count": 0,
            "fallback_count": 0, "goodput_per_s": t as f64, "fallback_per_s": 0.0,
            "latency_p50_ms": 0.0, "latency_p95_ms": (t % 7) as f64, "staleness_p95_ms": 0.0,
            "stale_wrong_count": 0, "dep_calls_per_s": 0.0, "dep_in_flight_mean_count": 0.0,
            "dep_latency_p50_ms": 0.0, "dep_latency_p95_ms": 0.0, "workers_busy_mean_count": 0.5,
            "pool_busy_mean_count": 0.0, "breaker_open_fraction": 0.0, "breaker_half_open_fraction": 0.0,
            "limit_mean_count": 0.0
        }))
        .unwrap();
        r.business_cost = 0.25;
        r
    }

    /// `timeseries.csv` of `windows` one-second windows, policies "p" and "q", classes "a" and "b".
    fn file(dir: &Path, windows: u64) -> (PathBuf, Vec<WindowRow>) {
        let rows: Vec<WindowRow> =
            ["p", "q"].iter().flat_map(|p| (0..windows).flat_map(move |t| ["a", "b"].map(|c| row(p, c, t)))).collect();
        let path = dir.join("timeseries.csv");
        std::fs::write(&path, crate::timeseries_csv(&rows).unwrap()).unwrap();
        (path, rows)
    }

    #[test]
    fn a_run_within_the_bound_reads_back_every_row_as_saved() {
        let dir = tempfile::tempdir().unwrap();
        let (path, rows) = file(dir.path(), 500);
        let s = read_series(&path, &summary(500.0, 1.0)).unwrap();
        assert_eq!((s.factor, s.rows), (1, rows));
    }

    #[test]
    fn a_long_run_is_coalesced_to_at_most_the_bound_per_series() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = file(dir.path(), 1200);
        // 1,200 windows over a bound of 500: factor ceil(1200 / 500) = 3, 400 points a series.
        let s = read_series(&path, &summary(1200.0, 1.0)).unwrap();
        assert_eq!(s.factor, 3);
        assert_eq!(s.rows.len(), 2 * 400 * 2);
        for (i, r) in s.rows.iter().enumerate() {
            let (p, g, c) = (i / 800, (i % 800 / 2) as u64, i % 2);
            assert_eq!((r.policy.as_str(), r.class.as_str()), (["p", "q"][p], ["a", "b"][c]));
            // Windows 3g, 3g+1, 3g+2: offered t summed, goodput t averaged, p95 t % 7 maxed.
            assert_eq!(r.t_s, (3 * g) as f64);
            assert_eq!(r.offered, 9 * g + 3);
            assert_eq!(r.ok, 3);
            assert_eq!(r.goodput_per_s, (3 * g + 1) as f64);
            assert_eq!(
                r.latency_p95_ms,
                [3 * g % 7, (3 * g + 1) % 7, (3 * g + 2) % 7].into_iter().max().unwrap() as f64
            );
            assert_eq!((r.workers_busy, r.business_cost), (0.5, 0.75));
        }
        // The charts draw the coalesced windows with their own width.
        assert_eq!(charted(&summary(1200.0, 1.0), s.factor).setup.window_s, 3.0);
    }
}
