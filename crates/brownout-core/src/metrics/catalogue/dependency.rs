//! The per-dependency rows of the catalogue (issue 33): one dependency's figures of a run with
//! a service graph, named `dependencies[NAME]/metric` in sweeps, `decide` and `diff`.

use super::{Direction, Metric, Read, Unit};
use crate::metrics::summary::{DependencyFigures, RunSummary};
use Direction::{Lower, Neither};
use Unit::{Count, Fraction, Ms, Number};

/// A per-dependency row.
const fn dep(n: &'static str, f: &'static str, u: Unit, d: Direction, read: fn(&DependencyFigures) -> f64) -> Metric {
    super::row(n, f, u, d, Read::Dep(read))
}

/// The figures of one dependency of a service graph (issue 33), read from its entry in a run's
/// `dependencies` and named `dependencies[NAME]/metric` in sweeps, `decide` and `diff`
/// (`dependencies[pricing]/amplification`). Kept apart from [`CATALOGUE`](super::CATALOGUE), whose rows are a
/// run's and a class's figures in `summary.csv` and the report tables: a run without a graph
/// has none of these.
pub static DEPENDENCY_METRICS: &[Metric] = &[
    // Calls and attempts follow the traffic and the retries: neither way is better alone.
    dep("calls", "calls", Count, Neither, |d| d.calls as f64),
    dep("attempts", "attempts", Count, Neither, |d| d.attempts as f64),
    dep("amplification", "amplification", Number, Lower, |d| d.amplification),
    dep("queue_wait_mean_ms", "queue_wait_ms.mean", Ms, Lower, |d| d.queue_wait_ms.mean),
    dep("queue_wait_p95_ms", "queue_wait_ms.p95", Ms, Lower, |d| d.queue_wait_ms.p95),
    dep("queue_wait_p99_ms", "queue_wait_ms.p99", Ms, Lower, |d| d.queue_wait_ms.p99),
    dep("service_mean_ms", "service_ms.mean", Ms, Lower, |d| d.service_ms.mean),
    dep("service_p95_ms", "service_ms.p95", Ms, Lower, |d| d.service_ms.p95),
    dep("service_p99_ms", "service_ms.p99", Ms, Lower, |d| d.service_ms.p99),
    dep("total_mean_ms", "total_ms.mean", Ms, Lower, |d| d.total_ms.mean),
    dep("total_p50_ms", "total_ms.p50", Ms, Lower, |d| d.total_ms.p50),
    dep("total_p95_ms", "total_ms.p95", Ms, Lower, |d| d.total_ms.p95),
    dep("total_p99_ms", "total_ms.p99", Ms, Lower, |d| d.total_ms.p99),
    dep("total_max_ms", "total_ms.max", Ms, Lower, |d| d.total_ms.max),
    dep("peak_in_flight", "peak_in_flight", Count, Lower, |d| d.peak_in_flight as f64),
    dep("mean_in_flight", "mean_in_flight", Number, Lower, |d| d.mean_in_flight),
    dep("abandoned", "abandoned", Count, Lower, |d| d.abandoned as f64),
    dep("pool_saturated_fraction", "pool_saturated_fraction", Fraction, Lower, |d| d.pool_saturated_fraction),
    dep("pool_wait_ms_mean", "pool_wait_ms_mean", Ms, Lower, |d| d.pool_wait_ms_mean),
    // An open breaker is the protection working or the dependency failing: neither way is
    // better alone.
    dep("breaker_open_fraction", "breaker_open_fraction", Fraction, Neither, |d| d.breaker_open_fraction),
];

/// A per-dependency metric as written, `dependencies[NAME]/metric`: `(NAME, metric)`; `None`
/// for any other form (a class's `class/metric`, a run's `metric`).
pub fn split_dependency(written: &str) -> Option<(&str, &str)> {
    let rest = written.strip_prefix("dependencies[")?;
    let (name, metric) = rest.split_once("]/")?;
    (!name.is_empty()).then_some((name, metric))
}

/// One dependency's figures in a run, by name.
pub fn dependency_of<'r>(run: &'r RunSummary, name: &str) -> Option<&'r DependencyFigures> {
    run.dependencies.iter().find(|d| d.name == name)
}
