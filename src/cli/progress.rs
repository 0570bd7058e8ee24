//! Progress of long commands on stderr: a bar with ETA on a terminal, a plain line at most
//! every [`PLAIN_EVERY`] off a terminal (CI logs), nothing with `--quiet`. The simulation only
//! calls an observer with simulated time; the clock and the printing live here.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use brownout::engine::Time;
use brownout::model::{Model, RunOptions};
use brownout::runner::{self, ScenarioResult};

/// Off a terminal, at most one progress line this often.
pub const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// How progress is shown.
enum Display {
    Bar(ProgressBar),
    Plain { last: Mutex<Instant> },
}

/// A progress display over `total` units of work, shown as `what`.
pub struct Progress {
    display: Display,
    total: u64,
    done: AtomicU64,
    started: Instant,
    what: String,
    /// Renders an amount of work for people (simulated time, runs).
    unit: fn(u64) -> String,
    /// Amounts are shown divided by this (parallel runs: the mean per run).
    per: u64,
}

impl Progress {
    /// A display on stderr; `None` under `--quiet`.
    pub fn new(quiet: bool, total: u64, what: &str, unit: fn(u64) -> String) -> Option<Self> {
        if quiet {
            return None;
        }
        let started = Instant::now();
        let display = if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {percent:>3}%  {msg}  elapsed {elapsed}  ETA {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            Display::Bar(bar)
        } else {
            Display::Plain { last: Mutex::new(started) }
        };
        Some(Self { display, total, done: AtomicU64::new(0), started, what: what.to_string(), unit, per: 1 })
    }

    /// Show amounts divided by `per` (at least 1).
    pub fn per(self, per: u64) -> Self {
        Self { per: per.max(1), ..self }
    }

    /// Add `amount` units of finished work.
    pub fn add(&self, amount: u64) {
        let done = self.done.fetch_add(amount, Ordering::Relaxed).saturating_add(amount).min(self.total);
        let shown = format!("{} {} of {}", self.what, (self.unit)(done / self.per), (self.unit)(self.total / self.per));
        match &self.display {
            Display::Bar(bar) => {
                bar.set_position(done);
                bar.set_message(shown);
            }
            Display::Plain { last } => {
                let now = Instant::now();
                let Ok(mut last) = last.lock() else { return };
                if now.duration_since(*last) < PLAIN_EVERY {
                    return;
                }
                *last = now;
                eprintln!("{}", plain_line(&shown, done, self.total, now.duration_since(self.started)));
            }
        }
    }

    /// Remove the bar (a plain display leaves its lines).
    pub fn finish(&self) {
        if let Display::Bar(bar) = &self.display {
            bar.finish_and_clear();
        }
    }
}

/// `shown (41 %), 3.2 s elapsed, ETA 4.6 s`: the ETA assumes the rest goes at the pace so far.
fn plain_line(shown: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let fraction = if total == 0 { 1.0 } else { done as f64 / total as f64 };
    let secs = elapsed.as_secs_f64();
    let eta = if fraction > 0.0 { format!("{:.1} s", secs * (1.0 - fraction) / fraction) } else { "?".into() };
    format!("{shown} ({:.0} %), {secs:.1} s elapsed, ETA {eta}", fraction * 100.0)
}

/// Simulated nanoseconds as `1h02m03s` (whole seconds).
pub fn sim_time(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, sec) => format!("{h}h{m:02}m{sec:02}s"),
    }
}

/// Run every policy set of `model` (every replication) with progress in simulated time
/// (summed over the runs), unless `quiet`. The results are those of [`runner::run_all`].
pub fn run_all(
    model: &Model,
    opts: RunOptions,
    parallel: bool,
    quiet: bool,
    sinks: runner::Sinks,
) -> Result<ScenarioResult, runner::PolicyRunError> {
    let sets = model.scenario().policies.len();
    let reps = model.scenario().replications.max(1) as usize;
    let n = sets * reps;
    let horizon = model.scenario().horizon.ns();
    let what = match reps {
        1 => format!("{sets} policy set(s), simulated (mean)"),
        _ => format!("{sets} policy set(s) x {reps} replications, simulated (mean)"),
    };
    let Some(progress) = Progress::new(quiet, horizon.saturating_mul(n as u64), &what, sim_time) else {
        return runner::run_all_streamed(model, opts, parallel, None, sinks);
    };
    let progress = progress.per(n as u64);
    // Each run's last reported time, so ticks add only the time since.
    let reached: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let observer = |p: usize, now: Time| {
        let before = reached[p].swap(now, Ordering::Relaxed);
        progress.add(now.saturating_sub(before));
    };
    let result = runner::run_all_streamed(model, opts, parallel, Some(&observer), sinks);
    progress.finish();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_time_reads_as_hours_minutes_seconds() {
        assert_eq!(sim_time(0), "0s");
        assert_eq!(sim_time(59_999_999_999), "59s");
        assert_eq!(sim_time(90 * 1_000_000_000), "1m30s");
        assert_eq!(sim_time(86_400 * 1_000_000_000), "24h00m00s");
    }

    #[test]
    fn plain_line_estimates_the_rest_at_the_pace_so_far() {
        // A quarter done in 3 s leaves three quarters: 9 s more at that pace.
        let line = plain_line("x", 25, 100, Duration::from_secs(3));
        assert_eq!(line, "x (25 %), 3.0 s elapsed, ETA 9.0 s");
    }
}
