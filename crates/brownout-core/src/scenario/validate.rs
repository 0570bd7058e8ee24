//! Semantic checks of a parsed scenario. Each error carries the path of the offending value
//! (`classes[2].deadline`, `dependency.drift.Brownout.peak`), which `load` resolves to the
//! value's line and column in the file. Linear in the size of the scenario: name lookups go
//! through ordered maps, never through pairwise comparisons.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::names::{check_file_name, file_stem};
use super::{Arrivals, Business, Class, Delay, Drift, Expectation, Latency, PolicySet, Profile, Scenario};
use crate::metrics::catalogue;

mod connlife;
mod graph;
mod margins;
mod scope;
mod services;

/// The most replications a run may ask for (`replications`, `--replications`).
pub const MAX_REPLICATIONS: u32 = 1000;

/// A semantic error: where (a path into the scenario) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// Path of the offending value, e.g. `classes[2].deadline`.
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for Invalid {}

fn bad(path: impl Into<String>, message: impl Into<String>) -> Invalid {
    Invalid { path: path.into(), message: message.into() }
}

/// An error inside a value: (path relative to the value, message).
type Sub = (String, String);

fn sub(path: impl Into<String>, message: impl Into<String>) -> Sub {
    (path.into(), message.into())
}

/// `x >= 0` and finite (NaN fails).
fn non_negative(x: f64) -> bool {
    x >= 0.0 && x.is_finite()
}

/// `x > 0` and finite (NaN fails).
fn positive(x: f64) -> bool {
    x > 0.0 && x.is_finite()
}

/// Semantic checks of everything but data files and plugins (see `load`).
pub fn validate(s: &Scenario) -> Result<(), Invalid> {
    check_file_name(&s.name).map_err(|m| bad("name", format!("name {m} (it names the output folder)")))?;
    if s.horizon.ns() == 0 {
        return Err(bad("horizon", "horizon must be > 0, e.g. \"10m\""));
    }
    if s.warmup >= s.horizon {
        return Err(bad("warmup", "warmup must be shorter than the horizon"));
    }
    if s.window.ns() == 0 {
        return Err(bad("window", "window must be > 0, e.g. \"1s\""));
    }
    if s.horizon.ns() / s.window.ns() > 1_000_000 {
        return Err(bad("window", "window is too small for the horizon (more than 1,000,000 windows)"));
    }
    s.recovery.check().map_err(|(f, m)| bad(format!("recovery.{f}"), m))?;
    if !(1..=MAX_REPLICATIONS).contains(&s.replications) {
        return Err(bad("replications", format!("replications must lie in 1..={MAX_REPLICATIONS}")));
    }
    validate_fleet(s)?;
    let classes = validate_classes(&s.classes)?;
    graph::validate(s)?;
    scope::validate_pools(s)?;
    scope::validate_partitions(s)?;
    connlife::validate_conn_life(s)?;
    for (k, d) in s.deps().iter().enumerate() {
        validate_dependency(d, &s.dep_path(k))?;
    }
    validate_catalogue_and_business(s)?;
    super::fallback::validate_fallbacks(s)?;
    let policies = validate_policies(s, &classes)?;
    scope::validate_scoped_layers(s)?;
    services::validate(s, &classes)?;
    validate_phase_names(s)?;
    super::types::check_phases(s).map_err(|(p, m)| bad(p, m))?;
    // The phases are resolved once: per expectation, they made validation quadratic.
    let phases = super::types::phases_of(s);
    let phase_names: BTreeSet<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    for (k, e) in s.expect.iter().enumerate() {
        validate_expectation(s, e, &classes, &policies).map_err(|(p, m)| bad(format!("expect[{k}]{p}"), m))?;
        if let Some(name) = e.phase.as_deref().filter(|n| !phase_names.contains(n)) {
            super::types::check_phase_name(s, name).map_err(|m| bad(format!("expect[{k}].phase"), m))?;
        }
    }
    if let Some(d) = &s.decide {
        super::validate_decide(d, &|r| resolve_measure(s, &classes, r))
            .map_err(|(p, m)| bad(format!("decide{p}"), m))?;
    }
    if let Some(st) = &s.statistics {
        margins::validate(st, &classes)?;
    }
    super::estimate::check(s).map_err(|r| bad(r.path, r.message))?;
    Ok(())
}

/// A `decide` objective or constraint in a scenario: a metric over a known class and phase.
fn resolve_measure(
    s: &Scenario,
    classes: &BTreeMap<&str, usize>,
    r: &crate::metrics::measure::ObjectiveRef,
) -> Result<(), (&'static str, String)> {
    use crate::metrics::measure::ObjectiveRef;
    match r {
        ObjectiveRef::Axis(name) => {
            let known = catalogue::names(catalogue::Scope::Run);
            Err((".metric", format!("unknown metric \"{name}\" (expected one of: {known})")))
        }
        ObjectiveRef::Metric(m) => super::check_measure(s, m, &|c| classes.contains_key(c)),
    }
}

fn validate_fleet(s: &Scenario) -> Result<(), Invalid> {
    let f = &s.fleet;
    if f.instances == 0 {
        return Err(bad("fleet.instances", "fleet.instances must be >= 1"));
    }
    if f.workers.slots == 0 {
        return Err(bad("fleet.workers.slots", "fleet.workers.slots must be >= 1"));
    }
    validate_delay(&f.overhead).map_err(|(p, m)| bad(format!("fleet.overhead.{p}"), format!("fleet.overhead: {m}")))?;
    if let Some(u) = &f.timeout_unwind {
        validate_delay(u)
            .map_err(|(p, m)| bad(format!("fleet.timeout_unwind.{p}"), format!("fleet.timeout_unwind: {m}")))?;
    }
    if f.pool.max_connections == 0 {
        return Err(bad(
            "fleet.pool.max_connections",
            "fleet.pool.max_connections must be >= 1 (a zero pool serves nothing)",
        ));
    }
    let missing = |list: &[u32]| list.iter().position(|&i| i >= f.instances);
    for (k, p) in f.partitions.iter().enumerate() {
        if p.end < p.start {
            return Err(bad(format!("fleet.partitions[{k}].end"), "fleet.partitions: end must not be before start"));
        }
        if let Some(m) = missing(&p.instances) {
            return Err(bad(
                format!("fleet.partitions[{k}].instances[{m}]"),
                format!(
                    "fleet.partitions: instance {} does not exist (instances are 0..{})",
                    p.instances[m], f.instances
                ),
            ));
        }
    }
    for (k, r) in f.restarts.iter().enumerate() {
        if let Some(m) = missing(&r.instances) {
            return Err(bad(
                format!("fleet.restarts[{k}].instances[{m}]"),
                format!(
                    "fleet.restarts: instance {} does not exist (instances are 0..{})",
                    r.instances[m], f.instances
                ),
            ));
        }
    }
    Ok(())
}

/// Checks every class; returns the index of each class name.
fn validate_classes(classes: &[Class]) -> Result<BTreeMap<&str, usize>, Invalid> {
    if classes.is_empty() {
        return Err(bad("classes", "at least one class is required"));
    }
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    let mut stems: BTreeMap<String, usize> = BTreeMap::new();
    for (i, c) in classes.iter().enumerate() {
        let at = |field: &str| format!("classes[{i}].{field}");
        let name = &c.name;
        check_file_name(name).map_err(|m| bad(at("name"), format!("class name {m} (it names chart files)")))?;
        if let Some(j) = names.insert(name, i) {
            return Err(bad(at("name"), format!("class \"{name}\" is defined twice (first as classes[{j}])")));
        }
        if let Some(j) = stems.insert(file_stem(name), i) {
            return Err(bad(
                at("name"),
                format!(
                    "classes \"{}\" and \"{name}\" would share the chart file name \"{}\": rename one",
                    classes[j].name,
                    file_stem(name)
                ),
            ));
        }
        if c.deadline.ns() == 0 {
            return Err(bad(at("deadline"), format!("class \"{name}\": deadline must be > 0")));
        }
        if !(0.0..=1.0).contains(&c.order_fraction) {
            return Err(bad(at("order_fraction"), format!("class \"{name}\": order_fraction must lie in [0, 1]")));
        }
        validate_arrivals(&c.arrivals)
            .map_err(|(p, m)| bad(at(&format!("arrivals.{p}")), format!("class \"{name}\": {m}")))?;
        if let Some(r) = &c.reload {
            if !(0.0..=1.0).contains(&r.probability) {
                return Err(bad(
                    at("reload.probability"),
                    format!("class \"{name}\": reload.probability must lie in [0, 1]"),
                ));
            }
            if r.patience.ns() == 0 {
                return Err(bad(at("reload.patience"), format!("class \"{name}\": reload.patience must be > 0")));
            }
        }
        if let Some(slo) = &c.slo {
            slo.check().map_err(|(p, m)| bad(at(&format!("slo.{p}")), format!("class \"{name}\": {m}")))?;
        }
        if let Some(w) = &c.work {
            validate_latency(w)
                .map_err(|(p, m)| bad(at(&format!("work.{p}")), format!("class \"{name}\": work: {m}")))?;
        }
    }
    Ok(names)
}

/// The first point out of time order, or with a value failing `ok`: (path under `prefix`,
/// message); `what` is (no points, out of order, bad value) messages.
fn check_points(prefix: &str, pts: &[(super::Dur, f64)], ok: impl Fn(f64) -> bool, what: [&str; 3]) -> Result<(), Sub> {
    if pts.is_empty() {
        return Err(sub(prefix, what[0]));
    }
    if let Some(k) = pts.windows(2).position(|w| w[1].0 < w[0].0) {
        return Err(sub(format!("{prefix}[{}][0]", k + 1), what[1]));
    }
    if let Some(k) = pts.iter().position(|p| !ok(p.1)) {
        return Err(sub(format!("{prefix}[{k}][1]"), what[2]));
    }
    Ok(())
}

fn validate_arrivals(a: &Arrivals) -> Result<(), Sub> {
    match a {
        Arrivals::Poisson { rate_per_s } if !non_negative(*rate_per_s) => {
            Err(sub("Poisson.rate_per_s", format!("Poisson rate_per_s must be >= 0, got {rate_per_s}")))
        }
        Arrivals::PoissonProfile { points } => {
            let what = [
                "PoissonProfile needs at least one point",
                "PoissonProfile points must be in time order",
                "PoissonProfile rates must be >= 0",
            ];
            check_points("PoissonProfile.points", points, non_negative, what)
        }
        Arrivals::ClosedLoop { users, .. } if *users == 0 => {
            Err(sub("ClosedLoop.users", "ClosedLoop users must be >= 1"))
        }
        Arrivals::Scripted { times } => match times.windows(2).position(|w| w[1] < w[0]) {
            Some(k) => Err(sub(format!("Scripted.times[{}]", k + 1), "Scripted times must be in time order")),
            None => Ok(()),
        },
        Arrivals::Diurnal { mean_rate_per_s, amplitude, period, .. } => {
            if !non_negative(*mean_rate_per_s) {
                Err(sub("Diurnal.mean_rate_per_s", "Diurnal mean_rate_per_s must be >= 0"))
            } else if !(0.0..=1.0).contains(amplitude) {
                Err(sub("Diurnal.amplitude", "Diurnal amplitude must lie in [0, 1]"))
            } else if period.ns() == 0 {
                Err(sub("Diurnal.period", "Diurnal period must be > 0"))
            } else {
                Ok(())
            }
        }
        Arrivals::Periodic { rate_per_s, .. } if !(*rate_per_s > 0.0 && *rate_per_s <= 1e9) => {
            Err(sub("Periodic.rate_per_s", "Periodic rate_per_s must be > 0 and at most 1e9 (one per ns)"))
        }
        Arrivals::Burst { base_rate_per_s, multiplier, .. } => {
            if !non_negative(*base_rate_per_s) {
                Err(sub("Burst.base_rate_per_s", "Burst base_rate_per_s must be >= 0"))
            } else if !non_negative(*multiplier) {
                Err(sub("Burst.multiplier", "Burst multiplier must be >= 0"))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

fn validate_latency(l: &Latency) -> Result<(), Sub> {
    match l {
        Latency::Exponential { mean } if mean.ns() == 0 => Err(sub("Exponential.mean", "Exponential mean must be > 0")),
        Latency::LogNormal { median, .. } if median.ns() == 0 => {
            Err(sub("LogNormal.median", "LogNormal median must be > 0"))
        }
        Latency::LogNormal { sigma, .. } if !(*sigma >= 0.0 && *sigma <= 5.0) => {
            Err(sub("LogNormal.sigma", format!("LogNormal sigma must lie in [0, 5], got {sigma}")))
        }
        _ => Ok(()),
    }
}

/// A drawn delay has the checks of a latency; a fixed one is valid by its type.
fn validate_delay(d: &Delay) -> Result<(), Sub> {
    match d {
        Delay::Fixed(_) => Ok(()),
        Delay::Random(l) => validate_latency(l),
    }
}

fn validate_drift(d: &Drift) -> Result<(), Sub> {
    match d {
        Drift::Step { factor, .. } if !positive(*factor) => Err(sub("Step.factor", "Step factor must be > 0")),
        Drift::Ramp { start, end, .. } if end < start => {
            Err(sub("Ramp.end", "Ramp end must not be before its start (drift times out of order)"))
        }
        Drift::Ramp { from, .. } if !positive(*from) => Err(sub("Ramp.from", "Ramp factors must be > 0")),
        Drift::Ramp { to, .. } if !positive(*to) => Err(sub("Ramp.to", "Ramp factors must be > 0")),
        Drift::Brownout { peak, .. } if !positive(*peak) => Err(sub("Brownout.peak", "Brownout peak must be > 0")),
        Drift::Periodic { period, .. } if period.ns() == 0 => {
            Err(sub("Periodic.period", "Periodic needs period > 0 and duration <= period"))
        }
        Drift::Periodic { period, duration, .. } if duration > period => {
            Err(sub("Periodic.duration", "Periodic needs period > 0 and duration <= period"))
        }
        Drift::Periodic { factor, .. } if !positive(*factor) => {
            Err(sub("Periodic.factor", "Periodic factor must be > 0"))
        }
        Drift::Points(p) => {
            let what =
                ["Points needs at least one point", "drift points must be in time order", "drift factors must be > 0"];
            check_points("Points", p, positive, what)
        }
        _ => Ok(()),
    }
}

fn validate_profile(p: &Profile, lo: f64, hi: f64) -> Result<(), Sub> {
    let in_range = |v: f64| v >= lo && v <= hi;
    match p {
        Profile::Constant(v) if !in_range(*v) => Err(sub("Constant", format!("value {v} must lie in [{lo}, {hi}]"))),
        Profile::Points(pts) => {
            let range = format!("values must lie in [{lo}, {hi}]");
            check_points(
                "Points",
                pts,
                in_range,
                ["Points needs at least one point", "points must be in time order", &range],
            )
        }
        _ => Ok(()),
    }
}

/// The base latency's median is 0 (a drift CSV divides by it); data-file medians are
/// checked when the file is read.
fn zero_median(l: &Latency) -> bool {
    matches!(l, Latency::Constant(d) if d.ns() == 0)
}

fn validate_dependency(d: &super::Dependency, prefix: &str) -> Result<(), Invalid> {
    let at = |p: &str| format!("{prefix}.{p}");
    validate_latency(&d.latency)
        .map_err(|(p, m)| bad(at(&format!("latency.{p}")), format!("dependency.latency: {m}")))?;
    validate_delay(&d.hop).map_err(|(p, m)| bad(at(&format!("hop.{p}")), format!("dependency.hop: {m}")))?;
    validate_drift(&d.drift).map_err(|(p, m)| bad(at(&format!("drift.{p}")), format!("dependency.drift: {m}")))?;
    if matches!(d.drift, Drift::Csv { .. }) && zero_median(&d.latency) {
        return Err(bad(at("latency"), "dependency.drift: a Csv drift needs a base latency with a median > 0"));
    }
    validate_profile(&d.error_rate, 0.0, 1.0)
        .map_err(|(p, m)| bad(at(&format!("error_rate.{p}")), format!("dependency.error_rate: {m}")))?;
    if let Some(k) = d.modes.windows(2).position(|w| w[1].at < w[0].at) {
        return Err(bad(at(&format!("modes[{}].at", k + 1)), "dependency.modes must be in time order"));
    }
    if let Some(r) = &d.replicas {
        if r.count == 0 || r.count > 10_000 {
            return Err(bad(at("replicas.count"), "dependency.replicas.count must lie in 1..=10000"));
        }
        for (k, sl) in r.slow.iter().enumerate() {
            let here = |f: &str| at(&format!("replicas.slow[{k}].{f}"));
            if sl.replica >= r.count {
                return Err(bad(
                    here("replica"),
                    format!("dependency.replicas.slow: replica {} does not exist", sl.replica),
                ));
            }
            if sl.end < sl.start {
                return Err(bad(here("end"), "dependency.replicas.slow: needs start <= end and factor > 0"));
            }
            if !positive(sl.factor) {
                return Err(bad(here("factor"), "dependency.replicas.slow: needs start <= end and factor > 0"));
            }
        }
        if let Some(o) = &r.outlier_detection {
            o.check().map_err(|(f, m)| bad(at(&format!("replicas.outlier_detection.{f}")), m))?;
        }
        if let Some(h) = &r.health_check {
            h.check().map_err(|(f, m)| bad(at(&format!("replicas.health_check.{f}")), m))?;
        }
    }
    if d.capacity.as_ref().is_some_and(|c| c.servers == 0) {
        return Err(bad(at("capacity.servers"), "dependency.capacity.servers must be >= 1"));
    }
    if let Some(c) = &d.capacity {
        if c.max_wait.is_some_and(|w| w.ns() == 0) {
            return Err(bad(at("capacity.max_wait"), "dependency.capacity.max_wait must be > 0 (or left out)"));
        }
        if let Some(k) = &c.codel {
            if k.target.ns() == 0 {
                return Err(bad(at("capacity.codel.target"), "dependency.capacity.codel.target must be > 0"));
            }
            if k.interval < k.target {
                return Err(bad(at("capacity.codel.interval"), "dependency.capacity.codel.interval must be >= target"));
            }
        }
        validate_sharing(c).map_err(|(p, m)| bad(at(&format!("capacity.{p}")), m))?;
    }
    Ok(())
}

/// Sharing (`capacity.sharing`) puts every call present in service, so nothing waits: the
/// settings that order or shed waiting calls cannot be honoured beside it, and the
/// scalability law's coefficients must lie in its range.
fn validate_sharing(c: &super::Capacity) -> Result<(), (String, String)> {
    use super::{Discipline, Sharing};
    if c.sharing.is_queue() {
        return Ok(());
    }
    let why = "under sharing every call present is in service and none waits; leave it out";
    if c.discipline == Discipline::Lifo {
        return Err(("discipline".into(), format!("dependency.capacity.discipline: Lifo orders waiting calls: {why}")));
    }
    if c.max_wait.is_some() {
        return Err(("max_wait".into(), format!("dependency.capacity.max_wait sheds calls that waited: {why}")));
    }
    if c.codel.is_some() {
        return Err(("codel".into(), format!("dependency.capacity.codel sheds calls that waited: {why}")));
    }
    if let Sharing::Usl { sigma, kappa } = c.sharing {
        if !(0.0..=1.0).contains(&sigma) {
            return Err((
                "sharing.Usl.sigma".into(),
                "dependency.capacity.sharing: Usl's sigma must be in [0, 1]".into(),
            ));
        }
        if !(kappa >= 0.0 && kappa.is_finite()) {
            return Err((
                "sharing.Usl.kappa".into(),
                "dependency.capacity.sharing: Usl's kappa must be >= 0 and finite".into(),
            ));
        }
    }
    Ok(())
}

fn validate_catalogue_and_business(s: &Scenario) -> Result<(), Invalid> {
    if let Some(c) = &s.catalogue {
        if c.items == 0 {
            return Err(bad("catalogue.items", "catalogue.items must be >= 1"));
        }
        if !non_negative(c.zipf) {
            return Err(bad("catalogue.zipf", "catalogue.zipf must be >= 0"));
        }
        if !non_negative(c.changes_per_hour) {
            return Err(bad("catalogue.changes_per_hour", "catalogue.changes_per_hour must be >= 0"));
        }
    }
    if let Some(b) = &s.business {
        validate_business(b)?;
    }
    Ok(())
}

fn validate_business(b: &Business) -> Result<(), Invalid> {
    for (name, p) in [
        ("substitution_allowance", b.substitution_allowance),
        ("degraded_substitution_allowance", b.degraded_substitution_allowance),
    ] {
        if !(0.0..=1.0).contains(&p) {
            return Err(bad(format!("business.{name}"), format!("business.{name} must lie in [0, 1]")));
        }
    }
    for (name, cost) in [
        ("substitution_cost", b.substitution_cost),
        ("refund_cost", b.refund_cost),
        ("lost_order_cost", b.lost_order_cost),
    ] {
        if !non_negative(cost) {
            return Err(bad(
                format!("business.{name}"),
                format!("business.{name} must be a finite number >= 0, got {cost}"),
            ));
        }
    }
    Ok(())
}

/// Checks every policy set; returns the index of each policy name.
fn validate_policies<'a>(
    s: &'a Scenario,
    classes: &BTreeMap<&str, usize>,
) -> Result<BTreeMap<&'a str, usize>, Invalid> {
    if s.policies.is_empty() {
        return Err(bad("policies", "at least one policy set is required (an empty stack means no protection)"));
    }
    let class_names: Vec<&str> = s.classes.iter().map(|c| c.name.as_str()).collect();
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, p) in s.policies.iter().enumerate() {
        let name = &p.name;
        check_file_name(name).map_err(|m| bad(format!("policies[{i}].name"), format!("policy name {m}")))?;
        if let Some(j) = names.insert(name, i) {
            return Err(bad(
                format!("policies[{i}].name"),
                format!("policy \"{name}\" is defined twice (first as policies[{j}])"),
            ));
        }
        validate_stack(i, p, classes, &class_names)?;
    }
    Ok(names)
}

fn validate_stack(
    i: usize,
    p: &PolicySet,
    classes: &BTreeMap<&str, usize>,
    class_names: &[&str],
) -> Result<(), Invalid> {
    validate_layers(&p.stack, &format!("policies[{i}].stack"), &format!("policy \"{}\"", p.name), classes, class_names)
}

/// The layers of a stack at `at` (a policy set's, or a service's), `who` naming its owner
/// in messages: at most `MAX_LAYERS` once presets expand, known classes, valid configs.
fn validate_layers(
    stack: &[super::Layer],
    at: &str,
    who: &str,
    classes: &BTreeMap<&str, usize>,
    class_names: &[&str],
) -> Result<(), Invalid> {
    let layers: usize = stack.iter().map(|l| l.policy.layer_count()).sum();
    if layers > super::MAX_LAYERS {
        return Err(bad(at, format!("{who} has {layers} layers; at most {} are supported", super::MAX_LAYERS)));
    }
    for (j, layer) in stack.iter().enumerate() {
        let at = format!("{at}[{j}]");
        if let Some(k) = layer.classes.iter().position(|c| !classes.contains_key(c.as_str())) {
            let c = &layer.classes[k];
            return Err(bad(format!("{at}.classes[{k}]"), format!("{who} names unknown class \"{c}\"")));
        }
        layer.policy.validate(class_names).map_err(|e| {
            let path = if e.field.is_empty() { format!("{at}.policy") } else { format!("{at}.policy.{}", e.field) };
            bad(path, format!("{who}: {}", e.message))
        })?;
    }
    Ok(())
}

/// Phase names are written in metrics as `phase:class/metric`, so a `:` or `/` in one makes
/// it unnameable; a control character would reach reports and terminals as-is.
fn validate_phase_names(s: &Scenario) -> Result<(), Invalid> {
    for (k, p) in s.phases.iter().enumerate() {
        let why = if p.name.contains([':', '/']) {
            "must not contain `:` or `/` (metrics name a phase as `phase:class/metric`)"
        } else if p.name.chars().any(crate::text::is_unseen) {
            "must not contain control characters (newline, tab, escape, NUL, bidirectional overrides)"
        } else {
            continue;
        };
        let shown = crate::text::visible(&p.name);
        return Err(bad(format!("phases[{k}].name"), format!("phase name \"{shown}\" {why}")));
    }
    Ok(())
}

/// Checks one expectation; the error path is relative to it (`.value`, `.class`, ...).
fn validate_expectation(
    s: &Scenario,
    e: &Expectation,
    classes: &BTreeMap<&str, usize>,
    policies: &BTreeMap<&str, usize>,
) -> Result<(), Sub> {
    if e.value.is_some() == e.than.is_some() {
        let m = format!("expectation on \"{}\": give exactly one of `value` or `than`", e.metric);
        return Err(sub(if e.value.is_some() { ".value" } else { "" }, m));
    }
    if let Some(v) = e.value.filter(|v| !v.is_finite()) {
        return Err(sub(".value", format!("expectation on \"{}\": value must be a finite number, got {v}", e.metric)));
    }
    if !e.factor.is_finite() {
        return Err(sub(".factor", format!("expectation on \"{}\": factor must be a finite number", e.metric)));
    }
    if let Some(t) = e.than.as_deref().filter(|t| !policies.contains_key(t)) {
        return Err(sub(".than", format!("expectation compares with unknown policy \"{t}\"")));
    }
    if !policies.contains_key(e.policy.as_str()) {
        return Err(sub(".policy", format!("expectation names unknown policy \"{}\"", e.policy)));
    }
    if let Some(c) = e.class.as_deref().filter(|c| !classes.contains_key(c)) {
        return Err(sub(".class", format!("expectation names unknown class \"{c}\"")));
    }
    let scope = if e.class.is_some() { catalogue::Scope::Class } else { catalogue::Scope::Run };
    let Some(metric) = catalogue::find(scope, &e.metric) else {
        let hint = match (scope, catalogue::find(catalogue::Scope::Run, &e.metric)) {
            (catalogue::Scope::Class, Some(_)) => {
                format!("\"{}\" is a run-level metric and takes no class: remove `class`", e.metric)
            }
            _ => format!("unknown metric \"{}\" (expected one of: {})", e.metric, catalogue::names(scope)),
        };
        return Err(sub(".metric", format!("expectation: {hint}")));
    };
    if let Some(v) = e.value {
        super::check_fraction(metric, v).map_err(|m| sub(".value", format!("expectation: {m}")))?;
    }
    super::check_business(s, metric).map_err(|m| sub(".metric", format!("expectation: {m}")))
}
