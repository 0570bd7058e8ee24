//! A metric as sweeps, `decide` and `diff` write it: `metric` per run, `class/metric` per
//! class, `dependencies[NAME]/metric` per dependency, each with an optional `phase:` first.

use super::Metric;
use super::{Scope, dependency_of, find, split_dependency};
use crate::metrics::summary::RunSummary;

/// The metric a sweep names: `class/metric` per class, `dependencies[NAME]/metric` per
/// dependency, plain per run.
pub fn by_path(path: &str) -> Option<&'static Metric> {
    // A sweep metric may start with its phase (`brownout:authorize/goodput_ratio`).
    let path = path.split_once(':').map_or(path, |(_, m)| m);
    if let Some((_, m)) = split_dependency(path) {
        return find(Scope::Dependency, m);
    }
    match path.split_once('/') {
        Some((_, m)) => find(Scope::Class, m),
        None => find(Scope::Run, path),
    }
}

/// The value of a sweep's metric in `run` (see [`by_path`] and [`Metric::value`]); `None` for
/// an unknown class or metric.
pub fn value_of(run: &RunSummary, path: &str) -> Option<f64> {
    if let Some((name, m)) = split_dependency(path) {
        return find(Scope::Dependency, m)?.read_dependency(dependency_of(run, name)?);
    }
    match path.split_once('/') {
        Some((class, m)) => find(Scope::Class, m)?.value(run, Some(run.classes.iter().find(|k| k.class == class)?)),
        None => find(Scope::Run, path)?.value(run, None),
    }
}
