//! The metric catalogue: one row per figure of a run's summary, with its name, scope, unit,
//! direction and how to read it. Expectations, sweep metrics, `summary.csv`, the report tables
//! and the sweep charts all look metrics up here; none keeps a list of its own.
//!
//! A new metric is three sites: its accumulator in the recorder, its field in
//! [`summary`](super::summary), and one row in [`CATALOGUE`] (a test fails while a summary field
//! has no row).

use super::summary::{ClassSummary, DependencyFigures, RunSummary};

/// Whether a metric is per class or per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One value per class (`class/metric` in sweeps).
    Class,
    /// One value per run (per policy set).
    Run,
    /// One value per dependency of a service graph (`dependencies[pricing]/amplification` in
    /// sweeps and `decide`); these rows are in [`DEPENDENCY_METRICS`], not in [`CATALOGUE`].
    Dependency,
}

/// What a metric's number counts or measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A whole number of things (requests, calls, transitions).
    Count,
    /// A dimensionless real number (a mean count, a ratio of counts, a coefficient of variation).
    Number,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
    /// Per second.
    PerS,
    /// Per minute.
    PerMin,
    /// A fraction in 0..1.
    Fraction,
    /// The scenario's business cost units.
    Cost,
}

impl Unit {
    /// The unit as documents, tables and `--json` name it.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Count => "count",
            Unit::Number => "number",
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::PerS => "per_s",
            Unit::PerMin => "per_min",
            Unit::Fraction => "fraction",
            Unit::Cost => "cost",
        }
    }
}

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// A higher value is better.
    Higher,
    /// A lower value is better.
    Lower,
    /// Neither is better: the figure describes the load or the setting, not how well a policy did.
    Neither,
}

/// Where a metric appears in the report's per-class comparison table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    /// The metric whose column this one follows (a catalogue name), `None` for the first
    /// column: columns are placed relative to each other, so a new one moves no other.
    pub after: Option<&'static str>,
    /// Column title.
    pub title: &'static str,
    /// The value is shown divided by this (1000 shows milliseconds as seconds).
    pub per: f64,
}

/// A metric's column in `summary.csv`. The file's columns are append-only: `at` numbers them
/// after `policy` and `class`, a new metric takes the next number, and no column ever moves
/// (a reader may index them by position).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvColumn {
    /// Position among the catalogue's columns, from 0 (the file's column `at + 2`).
    pub at: u16,
    /// Column name (as the file has always named it).
    pub name: &'static str,
}

/// How a row reads its value from a summary.
#[derive(Debug, Clone, Copy)]
enum Read {
    Class(fn(&ClassSummary) -> f64),
    /// `None` where the run has no such part (no breaker, no limiter).
    Run(fn(&RunSummary) -> Option<f64>),
    /// One dependency's figures (`summary.json`'s `dependencies` entry).
    Dep(fn(&DependencyFigures) -> f64),
}

/// One metric.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// The name expectations and sweeps use.
    pub name: &'static str,
    /// The summary field it reads, as a dotted path in `ClassSummary` or `RunSummary`'s JSON.
    pub field: &'static str,
    /// What the number measures.
    pub unit: Unit,
    /// Which way it improves.
    pub direction: Direction,
    /// Its column in `summary.csv`, if it has one.
    pub csv: Option<CsvColumn>,
    /// Its column in the report's comparison table, if it has one.
    pub column: Option<Column>,
    read: Read,
}

impl Metric {
    /// Per class or per run.
    pub fn scope(&self) -> Scope {
        match self.read {
            Read::Class(_) => Scope::Class,
            Read::Run(_) => Scope::Run,
            Read::Dep(_) => Scope::Dependency,
        }
    }

    /// The value of a per-dependency metric in one dependency's figures; `None` for a metric
    /// of another scope.
    pub fn read_dependency(&self, d: &DependencyFigures) -> Option<f64> {
        match self.read {
            Read::Dep(f) => Some(f(d)),
            Read::Class(_) | Read::Run(_) => None,
        }
    }

    /// The value in `run` (a per-class metric: of `class`); `None` where the run has no such
    /// part (no breaker, no limiter) or a per-class metric is read without a class.
    pub fn read(&self, run: &RunSummary, class: Option<&ClassSummary>) -> Option<f64> {
        match self.read {
            Read::Class(f) => class.map(f),
            Read::Run(f) => f(run),
            Read::Dep(_) => None,
        }
    }

    /// As [`Metric::read`], with a part the run lacks counted as 0 (a run without a breaker
    /// made no transitions): what expectations, sweeps and tables compare.
    pub fn value(&self, run: &RunSummary, class: Option<&ClassSummary>) -> Option<f64> {
        match self.read {
            Read::Class(f) => class.map(f),
            Read::Run(f) => Some(f(run).unwrap_or(0.0)),
            Read::Dep(_) => None,
        }
    }

    /// The practical-equivalence margin of this metric, in its unit: two policy sets (or
    /// settings, or candidates) whose paired difference cannot be shown to exceed it tie
    /// ([`crate::stats::paired_ci95`]). A scenario's `statistics.margins` overrides it. The
    /// default is about the smallest change a reader would act on, per unit, not noise-sized
    /// (noise is what the interval is for):
    /// - a fraction: 0.001, a tenth of a percentage point (76.6 % against 76.5 % is a tie);
    /// - milliseconds: 1 ms, the resolution at which latency targets and timeouts are set;
    ///   a tenth of a millisecond moves no SLO;
    /// - seconds (a recovery time): 1 s, the default window, the resolution it is measured at;
    /// - per second: 0.1/s, one request every ten seconds, the report's resolution;
    /// - per minute: 0.1/min (breaker transitions), likewise the report's resolution;
    /// - a count: 1, one request, call or transition over the run; a mean difference of
    ///   less than one thing is none;
    /// - a dimensionless number (amplification, a coefficient of variation, a mean count in
    ///   flight): 0.01, the second decimal a report shows;
    /// - cost: 1 unit of the scenario's currency, the smallest amount a budget names.
    pub fn margin(&self) -> f64 {
        match self.unit {
            Unit::Fraction => 0.001,
            Unit::Ms => 1.0,
            Unit::S => 1.0,
            Unit::PerS | Unit::PerMin => 0.1,
            Unit::Count => 1.0,
            Unit::Number => 0.01,
            Unit::Cost => 1.0,
        }
    }

    /// The requests this figure is taken over. A latency of answers can be made better by
    /// answering less (refusing the slow requests), so it is ranked only between sets that
    /// answered about as many ([`Population::Answers`]). Such a figure's field starts with
    /// `latency_answered` or `latency_in_time` (`latency_answered_ms.p95`,
    /// `latency_answered_p999_ms`).
    pub fn population(&self) -> Population {
        if self.field.starts_with("latency_answered") || self.field.starts_with("latency_in_time") {
            Population::Answers
        } else {
            Population::Requests
        }
    }

    /// Put it in `summary.csv` as catalogue column `at` (the next unused number: columns
    /// are append-only) under `name`.
    const fn csv(self, at: u16, name: &'static str) -> Self {
        Self { csv: Some(CsvColumn { at, name }), ..self }
    }

    /// Make it the report table's first column, under `title`, shown divided by `per`.
    const fn first_column(self, title: &'static str, per: f64) -> Self {
        Self { column: Some(Column { after: None, title, per }), ..self }
    }

    /// Put it in the report table right after the column of metric `after`, under `title`,
    /// shown divided by `per`.
    const fn column_after(self, after: &'static str, title: &'static str, per: f64) -> Self {
        Self { column: Some(Column { after: Some(after), title, per }), ..self }
    }
}

const fn class(
    name: &'static str,
    field: &'static str,
    unit: Unit,
    direction: Direction,
    read: fn(&ClassSummary) -> f64,
) -> Metric {
    row(name, field, unit, direction, Read::Class(read))
}

/// A row outside the summary's CSV and tables, reading its value by `read`.
const fn row(name: &'static str, field: &'static str, unit: Unit, direction: Direction, read: Read) -> Metric {
    Metric { name, field, unit, direction, csv: None, column: None, read }
}

const fn run(
    name: &'static str,
    field: &'static str,
    unit: Unit,
    direction: Direction,
    read: fn(&RunSummary) -> Option<f64>,
) -> Metric {
    row(name, field, unit, direction, Read::Run(read))
}

use Direction::{Higher, Lower, Neither};
use Unit::{Cost, Count, Fraction, Ms, Number, PerMin, PerS, S};

/// Every metric, in the order replications, `diff` and `--json` list them. `summary.csv` has
/// the rows with a CSV column, in the order of their numbers ([`csv_columns`]); the report
/// table those with a table column, each after the one it names ([`table_columns`]).
pub static CATALOGUE: &[Metric] = &[
    // Requests finished: set by the traffic, not by the policy.
    class("requests", "requests", Count, Neither, |c| c.requests as f64).csv(0, "requests"),
    class("ok", "outcomes.ok", Count, Higher, |c| c.outcomes.ok as f64).csv(1, "ok"),
    class("error", "outcomes.error", Count, Lower, |c| c.outcomes.error as f64).csv(2, "error"),
    class("timeout", "outcomes.timeout", Count, Lower, |c| c.outcomes.timeout as f64).csv(3, "timeout"),
    class("rejected", "outcomes.rejected", Count, Lower, |c| c.outcomes.rejected as f64).csv(4, "rejected"),
    class("short_circuited", "outcomes.short_circuited", Count, Lower, |c| c.outcomes.short_circuited as f64)
        .csv(5, "short_circuited"),
    class("fallback", "outcomes.fallback", Count, Lower, |c| c.outcomes.fallback as f64).csv(6, "fallback"),
    class("mean_ms", "latency_ms.mean", Ms, Lower, |c| c.latency_ms.mean).csv(7, "latency_mean_ms"),
    class("p50_ms", "latency_ms.p50", Ms, Lower, |c| c.latency_ms.p50).csv(8, "latency_p50_ms"),
    class("p95_ms", "latency_ms.p95", Ms, Lower, |c| c.latency_ms.p95).csv(9, "latency_p95_ms"),
    class("p99_ms", "latency_ms.p99", Ms, Lower, |c| c.latency_ms.p99).csv(10, "latency_p99_ms"),
    class("max_ms", "latency_ms.max", Ms, Lower, |c| c.latency_ms.max).csv(11, "latency_max_ms"),
    // Finished requests per second, failures included: the offered load, not a success.
    class("throughput_per_s", "throughput_per_s", PerS, Neither, |c| c.throughput_per_s).csv(12, "throughput_per_s"),
    class("goodput_per_s", "goodput_per_s", PerS, Higher, |c| c.goodput_per_s).csv(13, "goodput_per_s").column_after(
        "in_time_ratio",
        "goodput/s",
        1.0,
    ),
    class("fresh_goodput_per_s", "fresh_goodput_per_s", PerS, Higher, |c| c.fresh_goodput_per_s),
    class("deadline_missed", "deadline_missed", Count, Lower, |c| c.deadline_missed as f64).csv(14, "deadline_missed"),
    class("ok_ratio", "ok_ratio", Fraction, Higher, |c| c.ok_ratio),
    class("fallback_ratio", "fallback_ratio", Fraction, Lower, |c| c.fallback_ratio).column_after(
        "answered_p95_ms",
        "fallback",
        1.0,
    ),
    class("goodput_ratio", "goodput_ratio", Fraction, Higher, |c| c.goodput_ratio),
    class("staleness_p50_ms", "staleness_ms.p50", Ms, Lower, |c| c.staleness_ms.p50).csv(15, "staleness_p50_ms"),
    class("staleness_p95_ms", "staleness_ms.p95", Ms, Lower, |c| c.staleness_ms.p95)
        .csv(16, "staleness_p95_ms")
        .column_after("fallback_ratio", "stale p95 s", 1000.0),
    class("staleness_max_ms", "staleness_ms.max", Ms, Lower, |c| c.staleness_ms.max).csv(17, "staleness_max_ms"),
    class("stale_wrong", "stale_wrong", Count, Lower, |c| c.stale_wrong as f64).csv(18, "stale_wrong"),
    class("stale_wrong_fraction", "stale_wrong_fraction", Fraction, Lower, |c| c.stale_wrong_fraction),
    class("orders", "orders", Count, Higher, |c| c.orders as f64),
    class("substitutions", "substitutions", Count, Lower, |c| c.substitutions as f64),
    class("refunds", "refunds", Count, Lower, |c| c.refunds as f64),
    class("lost_orders", "lost_orders", Count, Lower, |c| c.lost_orders as f64),
    class("business_cost", "business_cost", Cost, Lower, |c| c.business_cost).csv(19, "business_cost").column_after(
        "staleness_p95_ms",
        "cost",
        1.0,
    ),
    // Fallbacks without a catalogue (0 for a class whose fallback is the catalogue's).
    class("fallback_open", "fallback_answers.open", Count, Lower, |c| {
        c.fallback_answers.map_or(0.0, |f| f.open as f64)
    }),
    class("fallback_closed", "fallback_answers.closed", Count, Lower, |c| {
        c.fallback_answers.map_or(0.0, |f| f.closed as f64)
    }),
    class("fallback_cached", "fallback_answers.cached", Count, Lower, |c| {
        c.fallback_answers.map_or(0.0, |f| f.cached as f64)
    }),
    class("fallback_cost", "fallback_answers.cost", Cost, Lower, |c| c.fallback_answers.map_or(0.0, |f| f.cost)),
    class("slot_wait_ms_mean", "slot_wait_ms_mean", Ms, Lower, |c| c.slot_wait_ms_mean),
    class("conn_wait_ms_mean", "conn_wait_ms_mean", Ms, Lower, |c| c.conn_wait_ms_mean),
    // Deadline-honest outcomes: in time is the headline (an ok, or a fallback answer that is
    // neither a fail-closed refusal nor stale-wrong, within the deadline).
    class("in_time", "in_time", Count, Higher, |c| c.in_time as f64).csv(20, "in_time"),
    class("in_time_ratio", "in_time_ratio", Fraction, Higher, |c| c.in_time_ratio)
        .csv(21, "in_time_ratio")
        .first_column("in time", 1.0),
    class("late", "late", Count, Lower, |c| c.late as f64).csv(22, "late").column_after("goodput_per_s", "late", 1.0),
    // Why requests were not in time: one cause each, summing to requests minus in_time.
    class("cause_dependency_error", "causes.dependency_error", Count, Lower, |c| c.causes.dependency_error as f64),
    class("cause_attempt_timeout", "causes.attempt_timeout", Count, Lower, |c| c.causes.attempt_timeout as f64),
    class("cause_pool_acquire_timeout", "causes.pool_acquire_timeout", Count, Lower, |c| {
        c.causes.pool_acquire_timeout as f64
    }),
    class("cause_worker_slots_full", "causes.worker_slots_full", Count, Lower, |c| c.causes.worker_slots_full as f64),
    class("cause_limiter_refused", "causes.limiter_refused", Count, Lower, |c| c.causes.limiter_refused as f64),
    class("cause_bulkhead_refused", "causes.bulkhead_refused", Count, Lower, |c| c.causes.bulkhead_refused as f64),
    class("cause_breaker_open", "causes.breaker_open", Count, Lower, |c| c.causes.breaker_open as f64),
    class("cause_shed_by_deadline", "causes.shed_by_deadline", Count, Lower, |c| c.causes.shed_by_deadline as f64),
    class("cause_other_refused", "causes.other_refused", Count, Lower, |c| c.causes.other_refused as f64),
    class("cause_crash_restart", "causes.crash_restart", Count, Lower, |c| c.causes.crash_restart as f64),
    class("cause_wrong_answer", "causes.wrong_answer", Count, Lower, |c| c.causes.wrong_answer as f64),
    class("cause_late", "causes.late", Count, Lower, |c| c.causes.late as f64),
    class("cause_unfinished", "causes.unfinished", Count, Lower, |c| c.causes.unfinished as f64),
    class("cause_no_live_upstream", "causes.no_live_upstream", Count, Lower, |c| c.causes.no_live_upstream as f64),
    class("cause_connect_timeout", "causes.connect_timeout", Count, Lower, |c| c.causes.connect_timeout as f64),
    // Still out at the horizon within the deadline: not judged, so not in `requests`.
    class("in_flight_within_deadline", "in_flight_within_deadline", Count, Neither, |c| {
        c.in_flight_within_deadline as f64
    }),
    // Latency per outcome: `latency_ms` mixes immediate refusals with answers.
    class("in_time_mean_ms", "latency_in_time_ms.mean", Ms, Lower, |c| c.latency_in_time_ms.mean),
    class("in_time_p50_ms", "latency_in_time_ms.p50", Ms, Lower, |c| c.latency_in_time_ms.p50),
    class("in_time_p95_ms", "latency_in_time_ms.p95", Ms, Lower, |c| c.latency_in_time_ms.p95),
    class("in_time_p99_ms", "latency_in_time_ms.p99", Ms, Lower, |c| c.latency_in_time_ms.p99),
    class("in_time_max_ms", "latency_in_time_ms.max", Ms, Lower, |c| c.latency_in_time_ms.max),
    class("answered_mean_ms", "latency_answered_ms.mean", Ms, Lower, |c| c.latency_answered_ms.mean),
    class("answered_p50_ms", "latency_answered_ms.p50", Ms, Lower, |c| c.latency_answered_ms.p50),
    class("answered_p95_ms", "latency_answered_ms.p95", Ms, Lower, |c| c.latency_answered_ms.p95).column_after(
        "late",
        "answer p95 ms",
        1.0,
    ),
    class("answered_p99_ms", "latency_answered_ms.p99", Ms, Lower, |c| c.latency_answered_ms.p99),
    class("answered_max_ms", "latency_answered_ms.max", Ms, Lower, |c| c.latency_answered_ms.max),
    class("answered_p999_ms", "latency_answered_p999_ms", Ms, Lower, |c| c.latency_answered_p999_ms),
    // The class's SLO (docs/slo.md): no value without an `slo` or without requests.
    class("burn_rate", "slo.burn_rate", Number, Lower, |c| c.slo.map_or(f64::NAN, |s| s.burn_rate)),
    class("budget_used", "slo.budget_used", Fraction, Lower, |c| c.slo.map_or(f64::NAN, |s| s.budget_used)),
    // A failure's latency: failing fast helps the caller, but failing more requests fast is no
    // better, so neither way is better.
    class("failed_mean_ms", "latency_failed_ms.mean", Ms, Neither, |c| c.latency_failed_ms.mean),
    class("failed_p50_ms", "latency_failed_ms.p50", Ms, Neither, |c| c.latency_failed_ms.p50),
    class("failed_p95_ms", "latency_failed_ms.p95", Ms, Neither, |c| c.latency_failed_ms.p95),
    class("failed_p99_ms", "latency_failed_ms.p99", Ms, Neither, |c| c.latency_failed_ms.p99),
    class("failed_max_ms", "latency_failed_ms.max", Ms, Neither, |c| c.latency_failed_ms.max),
    // Recovery after a phase (no value in the whole run's figures, which follow no phase) and
    // time degraded, from the per-window in-time ratio (metrics/recovery.rs).
    class("recovery_s", "recovery.recovery_s", S, Lower, |c| c.recovery.map_or(f64::NAN, |r| r.recovery_s))
        .csv(28, "recovery_s")
        .column_after("transitions", "recovery s", 1.0),
    // 1 recovered, 0 not, no value when it cannot be told: over replications, the share that recovered.
    class("recovered", "recovery.recovered", Fraction, Higher, |c| {
        c.recovery.and_then(|r| r.recovered).map_or(f64::NAN, |b| if b { 1.0 } else { 0.0 })
    })
    .csv(29, "recovered"),
    class("recovery_before_ratio", "recovery.before_in_time_ratio", Fraction, Neither, |c| {
        c.recovery.map_or(f64::NAN, |r| r.before_in_time_ratio)
    }),
    class("recovery_end_ratio", "recovery.end_in_time_ratio", Fraction, Higher, |c| {
        c.recovery.map_or(f64::NAN, |r| r.end_in_time_ratio)
    }),
    class("degraded_fraction", "degraded_fraction", Fraction, Lower, |c| c.degraded_fraction)
        .csv(30, "degraded_fraction"),
    class("degraded_entries", "degraded_entries", Count, Lower, |c| c.degraded_entries as f64)
        .csv(31, "degraded_entries"),
    run("transitions", "breaker.transitions", Count, Lower, |r| r.breaker.as_ref().map(|b| b.transitions as f64))
        .csv(23, "breaker_transitions")
        .column_after("business_cost", "transitions", 1.0),
    run("transitions_per_min", "breaker.transitions_per_min", PerMin, Lower, |r| {
        r.breaker.as_ref().map(|b| b.transitions_per_min)
    }),
    run("open_fraction", "breaker.open_fraction", Fraction, Lower, |r| r.breaker.as_ref().map(|b| b.open_fraction))
        .csv(24, "breaker_open_fraction"),
    run("half_open_fraction", "breaker.half_open_fraction", Fraction, Lower, |r| {
        r.breaker.as_ref().map(|b| b.half_open_fraction)
    }),
    run("cycles", "breaker.cycles", Count, Lower, |r| r.breaker.as_ref().map(|b| b.cycles as f64))
        .csv(25, "breaker_cycles"),
    run("amplification", "amplification", Number, Lower, |r| Some(r.amplification)).csv(26, "amplification"),
    // Calls made: fewer is less load, but a breaker that sheds everything makes the fewest.
    run("dependency_calls", "dependency.calls", Count, Neither, |r| Some(r.dependency.calls as f64))
        .csv(27, "dependency_calls"),
    run("dependency_calls_per_s", "dependency.calls_per_s", PerS, Neither, |r| Some(r.dependency.calls_per_s)),
    run("dependency_peak_in_flight", "dependency.peak_in_flight", Count, Lower, |r| {
        Some(r.dependency.peak_in_flight as f64)
    }),
    run("dependency_mean_ms", "dependency.latency_ms.mean", Ms, Lower, |r| Some(r.dependency.latency_ms.mean)),
    run("dependency_p50_ms", "dependency.latency_ms.p50", Ms, Lower, |r| Some(r.dependency.latency_ms.p50)),
    run("dependency_p95_ms", "dependency.latency_ms.p95", Ms, Lower, |r| Some(r.dependency.latency_ms.p95)),
    run("dependency_p99_ms", "dependency.latency_ms.p99", Ms, Lower, |r| Some(r.dependency.latency_ms.p99)),
    run("dependency_max_ms", "dependency.latency_ms.max", Ms, Lower, |r| Some(r.dependency.latency_ms.max)),
    run("dependency_queue_wait_mean_ms", "dependency.queue_wait_ms.mean", Ms, Lower, |r| {
        Some(r.dependency.queue_wait_ms.mean)
    }),
    run("dependency_queue_wait_p50_ms", "dependency.queue_wait_ms.p50", Ms, Lower, |r| {
        Some(r.dependency.queue_wait_ms.p50)
    }),
    run("dependency_queue_wait_p95_ms", "dependency.queue_wait_ms.p95", Ms, Lower, |r| {
        Some(r.dependency.queue_wait_ms.p95)
    }),
    run("dependency_queue_wait_p99_ms", "dependency.queue_wait_ms.p99", Ms, Lower, |r| {
        Some(r.dependency.queue_wait_ms.p99)
    }),
    run("dependency_queue_wait_max_ms", "dependency.queue_wait_ms.max", Ms, Lower, |r| {
        Some(r.dependency.queue_wait_ms.max)
    }),
    run("dependency_time_mean_ms", "dependency.time_ms.mean", Ms, Lower, |r| Some(r.dependency.time_ms.mean)),
    run("dependency_time_p50_ms", "dependency.time_ms.p50", Ms, Lower, |r| Some(r.dependency.time_ms.p50)),
    run("dependency_time_p95_ms", "dependency.time_ms.p95", Ms, Lower, |r| Some(r.dependency.time_ms.p95)),
    run("dependency_time_p99_ms", "dependency.time_ms.p99", Ms, Lower, |r| Some(r.dependency.time_ms.p99)),
    run("dependency_time_max_ms", "dependency.time_ms.max", Ms, Lower, |r| Some(r.dependency.time_ms.max)),
    // Oscillating load (herds after a breaker closes, retry storms) is what hurts a struggling
    // dependency: the same calls spread evenly are better.
    run("dependency_throughput_cv", "dependency.throughput_cv", Number, Lower, |r| Some(r.dependency.throughput_cv)),
    run("dependency_abandoned", "dependency.abandoned", Count, Lower, |r| Some(r.dependency.abandoned as f64)),
    // Cancelling an abandoned call frees the dependency; which is better depends on the protocol.
    run("dependency_cancelled", "dependency.cancelled", Count, Neither, |r| Some(r.dependency.cancelled as f64)),
    run("dependency_mean_in_flight", "dependency.mean_in_flight", Number, Lower, |r| Some(r.dependency.mean_in_flight)),
    // The limit a limiter settled on describes it; whether higher is better depends on the dependency.
    run("limit_mean", "limit.mean", Number, Neither, |r| r.limit.as_ref().map(|l| l.mean)),
    run("limit_min", "limit.min", Number, Neither, |r| r.limit.as_ref().map(|l| l.min)),
    run("limit_max", "limit.max", Number, Neither, |r| r.limit.as_ref().map(|l| l.max)),
    run("workers_mean", "resources.workers.mean", Number, Lower, |r| Some(r.resources.workers.mean)),
    run("workers_peak", "resources.workers.peak", Count, Lower, |r| Some(r.resources.workers.peak as f64)),
    run("workers_saturated_fraction", "resources.workers.saturated_fraction", Fraction, Lower, |r| {
        Some(r.resources.workers.saturated_fraction)
    }),
    run("pool_mean", "resources.pool.mean", Number, Lower, |r| Some(r.resources.pool.mean)),
    run("pool_peak", "resources.pool.peak", Count, Lower, |r| Some(r.resources.pool.peak as f64)),
    run("pool_saturated_fraction", "resources.pool.saturated_fraction", Fraction, Lower, |r| {
        Some(r.resources.pool.saturated_fraction)
    }),
    run("pool_waiting_mean", "resources.pool_waiting_mean", Number, Lower, |r| Some(r.resources.pool_waiting_mean)),
    run("pool_hold_ms_mean", "resources.pool_hold_ms_mean", Ms, Lower, |r| Some(r.resources.pool_hold_ms_mean)),
    // Connections with a life (absent without a pool `connect`).
    run("connections_opened", "resources.connections.opened", Count, Lower, |r| {
        r.resources.connections.as_ref().map(|c| c.opened as f64)
    }),
    run("connection_setup_ms_mean", "resources.connections.setup_ms_mean", Ms, Lower, |r| {
        r.resources.connections.as_ref().map(|c| c.setup_ms_mean)
    }),
    run("connection_setup_share", "resources.connections.setup_share", Fraction, Lower, |r| {
        r.resources.connections.as_ref().map(|c| c.setup_share)
    }),
    // Limiter and bulkhead queues (absent without such a layer). Offered attempts describe the load.
    run("limiter_offered", "limiter_queue.offered", Count, Neither, |r| {
        r.limiter_queue.as_ref().map(|q| q.offered as f64)
    }),
    run("limiter_queued", "limiter_queue.queued", Count, Lower, |r| r.limiter_queue.as_ref().map(|q| q.queued as f64)),
    run("limiter_wait_probability", "limiter_queue.wait_probability", Fraction, Lower, |r| {
        r.limiter_queue.as_ref().map(|q| q.wait_probability)
    }),
    run("limiter_wait_ms_mean", "limiter_queue.wait_ms_mean", Ms, Lower, |r| {
        r.limiter_queue.as_ref().map(|q| q.wait_ms_mean)
    }),
    run("limiter_wait_ms_p95", "limiter_queue.wait_ms_p95", Ms, Lower, |r| {
        r.limiter_queue.as_ref().map(|q| q.wait_ms_p95)
    }),
    run("bulkhead_offered", "bulkhead_queue.offered", Count, Neither, |r| {
        r.bulkhead_queue.as_ref().map(|q| q.offered as f64)
    }),
    run("bulkhead_queued", "bulkhead_queue.queued", Count, Lower, |r| {
        r.bulkhead_queue.as_ref().map(|q| q.queued as f64)
    }),
    run("bulkhead_wait_probability", "bulkhead_queue.wait_probability", Fraction, Lower, |r| {
        r.bulkhead_queue.as_ref().map(|q| q.wait_probability)
    }),
    run("bulkhead_wait_ms_mean", "bulkhead_queue.wait_ms_mean", Ms, Lower, |r| {
        r.bulkhead_queue.as_ref().map(|q| q.wait_ms_mean)
    }),
    run("bulkhead_wait_ms_p95", "bulkhead_queue.wait_ms_p95", Ms, Lower, |r| {
        r.bulkhead_queue.as_ref().map(|q| q.wait_ms_p95)
    }),
    run("business_cost", "business_cost", Cost, Lower, |r| Some(r.business_cost)),
    run("events", "events", Count, Neither, |r| Some(r.events as f64)),
    run("in_flight_at_end", "in_flight_at_end", Count, Neither, |r| Some(r.in_flight_at_end as f64)),
    // The work left at the horizon, per layer: a backlog that never drained.
    run("backlog_queued", "backlog_at_end.queued", Count, Lower, |r| Some(r.backlog_at_end.queued as f64))
        .csv(32, "backlog_queued")
        .column_after("recovery_s", "queued at end", 1.0),
    run("backlog_worker_queue", "backlog_at_end.worker_queue", Count, Lower, |r| {
        Some(r.backlog_at_end.worker_queue as f64)
    }),
    run("backlog_workers_busy", "backlog_at_end.workers_busy", Count, Neither, |r| {
        Some(r.backlog_at_end.workers_busy as f64)
    }),
    run("backlog_layer_queue", "backlog_at_end.layer_queue", Count, Lower, |r| {
        Some(r.backlog_at_end.layer_queue as f64)
    }),
    run("backlog_limiter_queue", "backlog_at_end.limiter_queue", Count, Lower, |r| {
        Some(r.backlog_at_end.limiter_queue as f64)
    }),
    run("backlog_pool_queue", "backlog_at_end.pool_queue", Count, Lower, |r| Some(r.backlog_at_end.pool_queue as f64)),
    run("backlog_pool_busy", "backlog_at_end.pool_busy", Count, Neither, |r| Some(r.backlog_at_end.pool_busy as f64)),
    run("backlog_backoff", "backlog_at_end.backoff", Count, Lower, |r| Some(r.backlog_at_end.backoff as f64)),
    run("backlog_dependency_queue", "backlog_at_end.dependency_queue", Count, Lower, |r| {
        Some(r.backlog_at_end.dependency_queue as f64)
    }),
    run("backlog_dependency_out", "backlog_at_end.dependency_out", Count, Lower, |r| {
        Some(r.backlog_at_end.dependency_out as f64)
    }),
];

/// The requests a figure is taken over (see [`Metric::population`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Population {
    /// Every finished request of the class (or the whole run): counts, ratios, rates, and
    /// figures whose population a policy cannot shrink to look better.
    Requests,
    /// The answered requests only (a latency percentile of answers or of in-time answers):
    /// comparable only between sets that answered about as many ([`answered`]).
    Answers,
}

/// The requests of class `c` that were answered: in time, late, or in time with a wrong
/// value (the recorder's `Cause::WrongAnswer`), which is the population of
/// `latency_answered_ms`. Not a catalogue row: it is a sum of rows (`in_time`, `late`,
/// `cause_wrong_answer`), read to judge whether answer latencies are comparable.
pub fn answered(c: &ClassSummary) -> f64 {
    (c.in_time + c.late + c.causes.wrong_answer) as f64
}

/// The margin of an answered count ([`answered`]): one request, a count's margin.
pub const ANSWERED_MARGIN: f64 = 1.0;

/// Practical-equivalence margins: the catalogue's ([`Metric::margin`]) with a scenario's
/// `statistics.margins` over them. A key is a metric name (every class, for a per-class
/// metric) or `class/metric` (that class only, taking precedence).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Margins {
    overrides: std::collections::BTreeMap<String, f64>,
}

impl Margins {
    /// Margins with `overrides` (keys as a scenario's `statistics.margins` writes them,
    /// already validated) over the catalogue's.
    pub fn new(overrides: std::collections::BTreeMap<String, f64>) -> Margins {
        Margins { overrides }
    }

    /// The margin of `m` for `class` (`None` for a per-run metric).
    pub fn of(&self, m: &Metric, class: Option<&str>) -> f64 {
        let own = class.and_then(|c| self.overrides.get(&format!("{c}/{}", m.name)));
        own.or_else(|| self.overrides.get(m.name)).copied().unwrap_or_else(|| m.margin())
    }

    /// The margin of a metric as sweeps and decisions write it, `[phase:][class/]metric`;
    /// 0 for a name that is no metric (a decision axis: a setting has no noise to tie by).
    pub fn of_path(&self, path: &str) -> f64 {
        let Some(m) = by_path(path) else { return 0.0 };
        let path = path.split_once(':').map_or(path, |(_, p)| p);
        self.of(m, path.split_once('/').map(|(c, _)| c))
    }
}

/// Summary fields that are not metrics, with the reason: no row reads them.
pub(crate) const NOT_METRICS: &[(&str, &str)] = &[
    ("resources.workers.capacity", "the scenario's setting, echoed"),
    ("resources.pool.capacity", "the scenario's setting, echoed"),
    ("dependency.found_in_flight", "a distribution (calls by the number they found in flight)"),
    ("per_instance", "outcomes broken down by instance"),
];

/// The `summary.csv` columns after `policy` and `class`, in their (append-only) order.
pub fn csv_columns() -> Vec<(&'static Metric, &'static str)> {
    let mut cols: Vec<(&'static Metric, CsvColumn)> = CATALOGUE.iter().filter_map(|m| Some((m, m.csv?))).collect();
    cols.sort_by_key(|(_, c)| c.at);
    cols.into_iter().map(|(m, c)| (m, c.name)).collect()
}

/// The report table's columns in order: the first, then each column after the one it
/// follows (a column naming a metric that has none, or a second column after the same one,
/// goes last, in catalogue order; the catalogue's test refuses both).
pub fn table_columns() -> Vec<(&'static Metric, Column)> {
    let mut rest: Vec<(&'static Metric, Column)> = CATALOGUE.iter().filter_map(|m| Some((m, m.column?))).collect();
    let mut out: Vec<(&'static Metric, Column)> = Vec::with_capacity(rest.len());
    let mut last: Option<&str> = None;
    while let Some(i) = rest.iter().position(|(_, c)| c.after == last) {
        let next = rest.remove(i);
        last = Some(next.0.name);
        out.push(next);
    }
    out.extend(rest);
    out
}

/// The metric `name` of `scope`.
pub fn find(scope: Scope, name: &str) -> Option<&'static Metric> {
    of(scope).find(|m| m.name == name)
}

/// The metrics of `scope`, in catalogue order.
pub fn of(scope: Scope) -> impl Iterator<Item = &'static Metric> {
    let rows = if scope == Scope::Dependency { DEPENDENCY_METRICS } else { CATALOGUE };
    rows.iter().filter(move |m| m.scope() == scope)
}

/// The names of the metrics of `scope`, comma-separated (for error messages).
pub fn names(scope: Scope) -> String {
    of(scope).map(|m| m.name).collect::<Vec<_>>().join(", ")
}

mod dependency;
mod path;
pub use dependency::{DEPENDENCY_METRICS, dependency_of, split_dependency};
pub use path::{by_path, value_of};

#[cfg(test)]
mod tests;
