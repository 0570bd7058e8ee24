//! Loading a scenario: parse with a located error, then validate every value before any
//! run starts. Errors name the file, the line and column, and what was expected.

use std::fmt;
use std::path::{Path, PathBuf};

use super::{Arrivals, Drift, Latency, Profile, Scenario};

/// A scenario that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: usize,
    /// 1-based column, when known.
    pub col: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.col, self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Read, parse and validate a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: 0,
        col: 0,
        message: format!("cannot read the file: {e}"),
    })?;
    let scenario = parse(path, &text)?;
    validate(&scenario).map_err(|(needle, message)| locate(path, &text, &needle, message))?;
    Ok(scenario)
}

/// Parse scenario text (no semantic checks). `path` is only used in messages.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str::<Scenario>(text)
        .map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            line: e.position.line,
            col: e.position.col,
            message: explain(&e.code.to_string()),
        })
}

fn explain(raw: &str) -> String {
    if raw.contains("Unexpected missing field") || raw.contains("missing field") {
        format!("{raw} (every required field must be given; see README's scenario format)")
    } else {
        raw.to_string()
    }
}

/// Point at the first occurrence of `needle` in the text (the offending field or value).
fn locate(path: &Path, text: &str, needle: &str, message: String) -> ScenarioError {
    let (mut line, mut col) = (0, 0);
    if !needle.is_empty() {
        if let Some(offset) = text.find(needle) {
            let before = &text[..offset];
            line = before.matches('\n').count() + 1;
            col = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        }
    }
    ScenarioError { file: path.to_path_buf(), line, col, message }
}

type Invalid = (String, String);

fn bad(needle: impl Into<String>, msg: impl Into<String>) -> Invalid {
    (needle.into(), msg.into())
}

/// Semantic checks. On failure returns (text to locate, message).
pub fn validate(s: &Scenario) -> Result<(), Invalid> {
    if s.name.trim().is_empty() || s.name.contains(['/', '\\']) {
        return Err(bad("name", "name must be non-empty and contain no path separator"));
    }
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
    let f = &s.fleet;
    if f.instances == 0 {
        return Err(bad("instances", "fleet.instances must be >= 1"));
    }
    if f.workers.slots == 0 {
        return Err(bad("slots", "fleet.workers.slots must be >= 1"));
    }
    if f.pool.max_connections == 0 {
        return Err(bad("max_connections", "fleet.pool.max_connections must be >= 1 (a zero pool serves nothing)"));
    }
    for p in &f.partitions {
        if p.end < p.start {
            return Err(bad("partitions", "fleet.partitions: end must not be before start"));
        }
        if let Some(i) = p.instances.iter().find(|&&i| i >= f.instances) {
            return Err(bad(
                "partitions",
                format!("fleet.partitions: instance {i} does not exist (instances are 0..{})", f.instances),
            ));
        }
    }
    for r in &f.restarts {
        if let Some(i) = r.instances.iter().find(|&&i| i >= f.instances) {
            return Err(bad(
                "restarts",
                format!("fleet.restarts: instance {i} does not exist (instances are 0..{})", f.instances),
            ));
        }
    }
    if s.classes.is_empty() {
        return Err(bad("classes", "at least one class is required"));
    }
    for (i, c) in s.classes.iter().enumerate() {
        if s.classes[..i].iter().any(|o| o.name == c.name) {
            return Err(bad(format!("\"{}\"", c.name), format!("class \"{}\" is defined twice", c.name)));
        }
        let at = format!("\"{}\"", c.name);
        if c.deadline.ns() == 0 {
            return Err(bad(at, format!("class \"{}\": deadline must be > 0", c.name)));
        }
        if !(0.0..=1.0).contains(&c.order_fraction) {
            return Err(bad(at, format!("class \"{}\": order_fraction must lie in [0, 1]", c.name)));
        }
        validate_arrivals(&c.arrivals).map_err(|m| bad(at.clone(), format!("class \"{}\": {m}", c.name)))?;
        if let Some(r) = &c.reload {
            if !(0.0..=1.0).contains(&r.probability) {
                return Err(bad(at, format!("class \"{}\": reload.probability must lie in [0, 1]", c.name)));
            }
            if r.patience.ns() == 0 {
                return Err(bad(at, format!("class \"{}\": reload.patience must be > 0", c.name)));
            }
        }
        if let Some(w) = &c.work {
            validate_latency(w).map_err(|m| bad(at.clone(), format!("class \"{}\": work: {m}", c.name)))?;
        }
    }
    let d = &s.dependency;
    validate_latency(&d.latency).map_err(|m| bad("latency", format!("dependency.latency: {m}")))?;
    validate_drift(&d.drift).map_err(|m| bad("drift", format!("dependency.drift: {m}")))?;
    validate_profile(&d.error_rate, 0.0, 1.0).map_err(|m| bad("error_rate", format!("dependency.error_rate: {m}")))?;
    if d.modes.windows(2).any(|w| w[1].at < w[0].at) {
        return Err(bad("modes", "dependency.modes must be in time order"));
    }
    if let Some(r) = &d.replicas {
        if r.count == 0 || r.count > 10_000 {
            return Err(bad("replicas", "dependency.replicas.count must lie in 1..=10000"));
        }
        for sl in &r.slow {
            if sl.replica >= r.count {
                return Err(bad("slow", format!("dependency.replicas.slow: replica {} does not exist", sl.replica)));
            }
            if sl.end < sl.start || !(sl.factor > 0.0 && sl.factor.is_finite()) {
                return Err(bad("slow", "dependency.replicas.slow: needs start <= end and factor > 0"));
            }
        }
    }
    if let Some(c) = &d.capacity {
        if c.servers == 0 {
            return Err(bad("servers", "dependency.capacity.servers must be >= 1"));
        }
    }
    if let Some(c) = &s.catalogue {
        if c.items == 0 {
            return Err(bad("items", "catalogue.items must be >= 1"));
        }
        if !(c.zipf >= 0.0 && c.zipf.is_finite()) {
            return Err(bad("zipf", "catalogue.zipf must be >= 0"));
        }
        if !(c.changes_per_hour >= 0.0 && c.changes_per_hour.is_finite()) {
            return Err(bad("changes_per_hour", "catalogue.changes_per_hour must be >= 0"));
        }
    }
    if let Some(b) = &s.business {
        for (name, p) in [
            ("substitution_allowance", b.substitution_allowance),
            ("degraded_substitution_allowance", b.degraded_substitution_allowance),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(bad(name, format!("business.{name} must lie in [0, 1]")));
            }
        }
    }
    if s.policies.is_empty() {
        return Err(bad("policies", "at least one policy set is required (an empty stack means no protection)"));
    }
    for (i, p) in s.policies.iter().enumerate() {
        let at = format!("\"{}\"", p.name);
        if s.policies[..i].iter().any(|o| o.name == p.name) {
            return Err(bad(at, format!("policy \"{}\" is defined twice", p.name)));
        }
        for layer in &p.stack {
            for c in &layer.classes {
                if !s.classes.iter().any(|k| &k.name == c) {
                    return Err(bad(format!("\"{c}\""), format!("policy \"{}\" names unknown class \"{c}\"", p.name)));
                }
            }
            layer
                .policy
                .validate(&s.classes.iter().map(|c| c.name.as_str()).collect::<Vec<_>>())
                .map_err(|m| bad(at.clone(), format!("policy \"{}\": {m}", p.name)))?;
        }
    }
    for e in &s.expect {
        if e.value.is_some() == e.than.is_some() {
            return Err(bad(
                format!("\"{}\"", e.metric),
                format!("expectation on \"{}\": give exactly one of `value` or `than`", e.metric),
            ));
        }
        if let Some(t) = &e.than {
            if !s.policies.iter().any(|p| &p.name == t) {
                return Err(bad(format!("\"{t}\""), format!("expectation compares with unknown policy \"{t}\"")));
            }
        }
        if !s.policies.iter().any(|p| p.name == e.policy) {
            return Err(bad(format!("\"{}\"", e.policy), format!("expectation names unknown policy \"{}\"", e.policy)));
        }
        if let Some(c) = &e.class {
            if !s.classes.iter().any(|k| &k.name == c) {
                return Err(bad(format!("\"{c}\""), format!("expectation names unknown class \"{c}\"")));
            }
        }
        if !crate::report::expect::known_metric(&e.metric, e.class.is_some()) {
            return Err(bad(
                format!("\"{}\"", e.metric),
                format!(
                    "expectation: unknown metric \"{}\" (expected one of: {})",
                    e.metric,
                    crate::report::expect::metric_names(e.class.is_some())
                ),
            ));
        }
    }
    super::budget::check(s).map_err(|r| bad(r.needle, r.message))?;
    Ok(())
}

fn validate_arrivals(a: &Arrivals) -> Result<(), String> {
    match a {
        Arrivals::Poisson { rate_per_s } if !(*rate_per_s >= 0.0 && rate_per_s.is_finite()) => {
            Err(format!("Poisson rate_per_s must be >= 0, got {rate_per_s}"))
        }
        Arrivals::PoissonProfile { points } => {
            if points.is_empty() {
                return Err("PoissonProfile needs at least one point".into());
            }
            if points.windows(2).any(|w| w[1].0 < w[0].0) {
                return Err("PoissonProfile points must be in time order".into());
            }
            if points.iter().any(|p| !(p.1 >= 0.0 && p.1.is_finite())) {
                return Err("PoissonProfile rates must be >= 0".into());
            }
            Ok(())
        }
        Arrivals::ClosedLoop { users, .. } if *users == 0 => Err("ClosedLoop users must be >= 1".into()),
        Arrivals::Scripted { times } if times.windows(2).any(|w| w[1] < w[0]) => {
            Err("Scripted times must be in time order".into())
        }
        Arrivals::Diurnal { mean_rate_per_s, amplitude, period, .. } => {
            if !(*mean_rate_per_s >= 0.0 && mean_rate_per_s.is_finite()) {
                Err("Diurnal mean_rate_per_s must be >= 0".into())
            } else if !(0.0..=1.0).contains(amplitude) {
                Err("Diurnal amplitude must lie in [0, 1]".into())
            } else if period.ns() == 0 {
                Err("Diurnal period must be > 0".into())
            } else {
                Ok(())
            }
        }
        Arrivals::Burst { base_rate_per_s, multiplier, .. } => {
            if !(*base_rate_per_s >= 0.0 && base_rate_per_s.is_finite()) {
                Err("Burst base_rate_per_s must be >= 0".into())
            } else if !(*multiplier >= 0.0 && multiplier.is_finite()) {
                Err("Burst multiplier must be >= 0".into())
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

fn validate_latency(l: &Latency) -> Result<(), String> {
    match l {
        Latency::Exponential { mean } if mean.ns() == 0 => Err("Exponential mean must be > 0".into()),
        Latency::LogNormal { median, sigma } => {
            if median.ns() == 0 {
                Err("LogNormal median must be > 0".into())
            } else if !(*sigma >= 0.0 && *sigma <= 5.0) {
                Err(format!("LogNormal sigma must lie in [0, 5], got {sigma}"))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

fn validate_drift(d: &Drift) -> Result<(), String> {
    let ok = |f: f64| f > 0.0 && f.is_finite();
    match d {
        Drift::Step { factor, .. } if !ok(*factor) => Err("Step factor must be > 0".into()),
        Drift::Ramp { start, end, from, to } => {
            if end < start {
                Err("Ramp end must not be before its start (drift times out of order)".into())
            } else if !ok(*from) || !ok(*to) {
                Err("Ramp factors must be > 0".into())
            } else {
                Ok(())
            }
        }
        Drift::Brownout { peak, .. } if !ok(*peak) => Err("Brownout peak must be > 0".into()),
        Drift::Periodic { period, duration, factor } => {
            if period.ns() == 0 || duration > period {
                Err("Periodic needs period > 0 and duration <= period".into())
            } else if !ok(*factor) {
                Err("Periodic factor must be > 0".into())
            } else {
                Ok(())
            }
        }
        Drift::Points(p) => {
            if p.is_empty() {
                Err("Points needs at least one point".into())
            } else if p.windows(2).any(|w| w[1].0 < w[0].0) {
                Err("drift points must be in time order".into())
            } else if p.iter().any(|x| !ok(x.1)) {
                Err("drift factors must be > 0".into())
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

fn validate_profile(p: &Profile, lo: f64, hi: f64) -> Result<(), String> {
    let in_range = |v: f64| v >= lo && v <= hi;
    match p {
        Profile::Constant(v) if !in_range(*v) => Err(format!("value {v} must lie in [{lo}, {hi}]")),
        Profile::Points(pts) => {
            if pts.is_empty() {
                Err("Points needs at least one point".into())
            } else if pts.windows(2).any(|w| w[1].0 < w[0].0) {
                Err("points must be in time order".into())
            } else if pts.iter().any(|x| !in_range(x.1)) {
                Err(format!("values must lie in [{lo}, {hi}]"))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}
