//! Resolving a spec into a plan: each axis's values (list, linear or log range, or seeded
//! Latin hypercube / uniform samples), the points, the scenario of every point (set by path,
//! deserialized back and validated), and the numbering of runs, seeds and shards.
//!
//! Every error is found here, before any run starts.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::path::{self, Step};
pub use super::spec::Role;
use super::spec::{self, Axis, AxisValue, Method, Range, Sample, Scale, SpecError, SweepSpec};
use crate::engine::{counter_f64, counter_u64, fmt_time, label_hash};
use crate::model::Model;
use crate::scenario::estimate::{self, SweepSize};
use crate::scenario::{self, Scenario, parse_duration};
use crate::text;

/// What a plan is, as written to `plan.json` and read back by `brownout merge`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlanInfo {
    /// Sweep name.
    pub sweep: String,
    /// Scenario name.
    pub base: String,
    /// Root seed.
    pub seed: u64,
    /// Replications per (point, policy).
    pub replications: u32,
    /// The axes and their values (per grid value, or per point when sampling).
    pub axes: Vec<AxisInfo>,
    /// Every point's value of each axis, in axis order.
    pub points: Vec<Vec<f64>>,
    /// Policy sets run at each point.
    pub policies: Vec<String>,
    /// Metrics recorded per run: the spec's, then any measure of `decide` not among them.
    pub metrics: Vec<String>,
    /// What to recommend, when the spec or the base scenario has a `decide` section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide: Option<super::decide::DecidePlan>,
    /// FNV-1a hash of everything above plus the base scenario, in hex.
    pub hash: String,
    /// Every policy set of the base scenario, in scenario order: the charts colour a policy by
    /// its name among these. Not hashed: the base scenario, which the hash covers, holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenario_policies: Vec<String>,
    /// How each of `metrics` is ranked (its margin; why it is not ranked), from the base
    /// scenario. Not hashed, as `scenario_policies`; empty in plans written before margins,
    /// which rank by the catalogue's margins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<super::best::MetricRule>,
}

/// An axis in the results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AxisInfo {
    /// Name.
    pub name: String,
    /// Path in the scenario.
    pub path: String,
    /// Values as reported (durations in the axis unit); a linked axis's distinct values.
    pub values: Vec<f64>,
    /// The role written in the spec (see [`AxisInfo::role`] for the one in force).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// The link expression of a linked axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The unit of `values` on a duration parameter (`ms`, `s`, ...: the spec's `unit`, `ms`
    /// when none is written); `None` for a plain number (a share, a count of permits). Absent
    /// from older plans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl AxisInfo {
    /// The axis's role: as written, else a decision for a path under `policies`.
    pub fn role(&self) -> Role {
        self.role.unwrap_or_else(|| Role::default_for(&self.path))
    }
}

/// Where one run sits in the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunId {
    /// Point index.
    pub point: usize,
    /// Index into [`PlanInfo::policies`].
    pub policy: usize,
    /// Replication, from 0.
    pub replication: u32,
}

impl PlanInfo {
    /// Total runs: points x policies x replications.
    pub fn runs(&self) -> u64 {
        (self.points.len() * self.policies.len()) as u64 * u64::from(self.replications)
    }

    /// Run `run`'s place: runs are numbered point-major, then policy, then replication.
    pub fn run_id(&self, run: u64) -> RunId {
        let r = u64::from(self.replications);
        let per_point = self.policies.len() as u64 * r;
        RunId {
            point: (run / per_point) as usize,
            policy: ((run % per_point) / r) as usize,
            replication: (run % r) as u32,
        }
    }

    /// The seed of replication `r`: a function of (root seed, r) only, so every point and
    /// policy sees the same traffic in replication r (common random numbers).
    pub fn replication_seed(&self, r: u32) -> u64 {
        counter_u64(self.seed, label_hash("sweep/replication"), u64::from(r), 0)
    }
}

/// A resolved sweep, ready to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The serializable description.
    pub info: PlanInfo,
    /// The scenario of every point.
    pub scenarios: Vec<Scenario>,
    /// Index of each planned policy in the scenario.
    pub policy_index: Vec<usize>,
    /// Folder that resolves the scenario's relative data files.
    pub dir: PathBuf,
}

/// How an axis's values become scenario values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Kind {
    /// A duration; reported values are in units of `unit_ns` nanoseconds.
    Duration {
        /// Nanoseconds per reported unit.
        unit_ns: f64,
    },
    /// An integer field: values are rounded.
    Integer,
    /// A floating-point field.
    Float,
}

impl Kind {
    /// The scenario value of reported value `x` (already rounded by the plan).
    pub fn scenario_value(self, x: f64) -> Value {
        match self {
            Kind::Duration { unit_ns } => Value::String(fmt_time((x * unit_ns).round() as u64)),
            Kind::Integer => Value::from(x.round() as i64),
            Kind::Float => Value::from(x),
        }
    }
}

/// An axis resolved against the base scenario.
struct Resolved<'a> {
    /// Index in the spec's `axes`.
    index: usize,
    axis: &'a Axis,
    steps: Vec<Step>,
    kind: Kind,
}

pub(crate) type Located = (String, String);

/// An error at `at`, a path into the spec (`axes[1].path`), located by `spec::located`.
fn err(at: impl Into<String>, msg: impl Into<String>) -> Located {
    (at.into(), msg.into())
}

/// Load a spec file and resolve it; every error names the spec file, line and column.
pub fn load(spec_path: &Path) -> Result<Plan, SpecError> {
    let text = crate::sweep::spec::read_text(spec_path, "sweep spec")?;
    let spec = spec::parse(spec_path, &text)?;
    let dir = spec_path.parent().unwrap_or(Path::new("."));
    resolve(&spec, dir).map_err(|(at, msg)| spec::located(spec_path, &text, &at, msg))
}

/// Resolve a parsed spec whose relative paths start at `dir`. An error is (text of the spec
/// to point at, message).
pub(crate) fn resolve(spec: &SweepSpec, dir: &Path) -> Result<Plan, Located> {
    let base_path = dir.join(&spec.base);
    let base = scenario::load(&base_path).map_err(|e| err("base", format!("base scenario: {e}")))?;
    check_header(spec, &base)?;
    let seed = spec.seed.unwrap_or(base.seed);
    let json = serde_json::to_value(&base).map_err(|e| err("base", e.to_string()))?;
    let resolved =
        spec.axes.iter().enumerate().map(|(i, a)| resolve_axis(i, a, &json)).collect::<Result<Vec<_>, _>>()?;
    check_axis_paths(&resolved, &json)?;
    let (policy_index, policies) = select_policies(spec, &base)?;
    check_size(spec, &base, &json, policies.len())?;
    let links = parse_links(&resolved)?;
    let (mut axes, mut points) = match &spec.sample {
        None => grid_points(&resolved, &json, &base_path, &links)?,
        Some(s) => sample_points(&resolved, s, seed)?,
    };
    link_points(&resolved, &json, &links, &mut axes, &mut points)?;
    let (metrics, decide) = super::decide::plan(spec, &base, &json, &axes, &resolved_kinds(&resolved))?;
    let scenario_dir = base_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let scenarios = points
        .iter()
        .map(|p| point_scenario(&resolved, &json, p, seed, &scenario_dir))
        .collect::<Result<Vec<_>, _>>()?;
    let mut info = PlanInfo {
        sweep: spec.name.clone(),
        base: base.name.clone(),
        seed,
        replications: spec.replications,
        axes,
        points,
        policies,
        metrics,
        decide,
        hash: String::new(),
        scenario_policies: Vec::new(),
        rules: Vec::new(),
    };
    // A data file's bytes are inputs too: a changed file is a changed plan, so `--resume`
    // takes only the runs whose keys (which hold the digests as well) still match. Left out
    // without data files, so those plans keep their hashes.
    let files = super::reuse::data_digests(&base, &scenario_dir, &mut Default::default())
        .map_err(|e| err("base", format!("base scenario: {e:#}")))?;
    let canonical = if files.is_empty() {
        serde_json::to_string(&(&info, &json))
    } else {
        serde_json::to_string(&(&info, &json, &files))
    }
    .map_err(|e| err("", e.to_string()))?;
    info.hash = format!("{:016x}", label_hash(&canonical));
    info.scenario_policies = base.policies.iter().map(|p| p.name.clone()).collect();
    info.rules = super::best::metric_rules(&base, &info.metrics);
    Ok(Plan { info, scenarios, policy_index, dir: scenario_dir })
}

fn check_header(spec: &SweepSpec, base: &Scenario) -> Result<(), Located> {
    scenario::check_file_name(&spec.name).map_err(|m| err("name", format!("name {m} (it names the output folder)")))?;
    if spec.replications == 0 {
        return Err(err("replications", "replications must be >= 1"));
    }
    if spec.metrics.is_empty() {
        return Err(err("metrics", "name at least one metric to aggregate"));
    }
    // A metric named twice would give sweep.csv two columns of one name.
    let mut seen = std::collections::BTreeMap::new();
    for (k, m) in spec.metrics.iter().enumerate() {
        check_metric(m, base).map_err(|msg| err(format!("metrics[{k}]"), msg))?;
        if let Some(j) = seen.insert(m.as_str(), k) {
            return Err(err(format!("metrics[{k}]"), format!("metric \"{m}\" is named twice (first as metrics[{j}])")));
        }
    }
    let mut names = std::collections::BTreeMap::new();
    for (i, a) in spec.axes.iter().enumerate() {
        if let Some(j) = names.insert(a.name.as_str(), i) {
            return Err(err(
                format!("axes[{i}].name"),
                format!("axis \"{}\" is named twice (first as axes[{j}])", a.name),
            ));
        }
    }
    Ok(())
}

/// Two axes setting one value would label rows with values that were overwritten, and the
/// scenario's seed is not a parameter: every run's seed derives from the sweep's seed and
/// its replication (common random numbers), so sweeping it would change nothing.
fn check_axis_paths(axes: &[Resolved], base: &Value) -> Result<(), Located> {
    let mut claimed = path::Claimed::default();
    for a in axes {
        let at = format!("axes[{}].path", a.index);
        let canonical = match claimed.claim(base, &a.steps, a.index) {
            Ok(c) => c,
            Err(path::Unclaimed::Bad(m)) => return Err(err(at, m)),
            Err(path::Unclaimed::Taken(j)) => {
                return Err(err(
                    at,
                    format!(
                        "axis \"{}\" sets the same value as axes[{j}] (\"{}\"): one axis per value",
                        a.axis.name, axes[j].axis.path
                    ),
                ));
            }
        };
        if canonical == [Step::Key("seed".into())] {
            return Err(err(
                at,
                format!(
                    "axis \"{}\": the seed cannot be swept: each replication's seed derives from the sweep's `seed` (common random numbers); use `replications` for more seeds",
                    a.axis.name
                ),
            ));
        }
    }
    Ok(())
}

/// Refuse a sweep too large for the base scenario's `limits.max_memory` before any point is
/// built; points are counted before duplicate grid values are dropped.
fn check_size(spec: &SweepSpec, base: &Scenario, json: &Value, policies: usize) -> Result<(), Located> {
    let count = |a: &Axis| match (&a.range, &a.link) {
        (_, Some(_)) => 1.0,
        (Some(r), None) => f64::from(r.steps),
        (None, None) => a.values.len() as f64,
    };
    let points = match &spec.sample {
        Some(s) => f64::from(s.samples),
        None => spec.axes.iter().map(count).product(),
    };
    let size = SweepSize {
        points,
        axes: spec.axes.len(),
        policies,
        replications: spec.replications,
        metrics: spec.metrics.len(),
        scenario_bytes: json.to_string().len(),
    };
    // Point at the largest factor: the replications, the samples, or the longest axis.
    let widest = spec.axes.iter().enumerate().max_by(|(_, a), (_, b)| count(a).total_cmp(&count(b)));
    let at = match (&spec.sample, widest) {
        _ if f64::from(spec.replications) >= points => "replications".to_string(),
        (Some(_), _) => "sample.samples".to_string(),
        (None, Some((i, _))) => format!("axes[{i}]"),
        (None, None) => "axes".to_string(),
    };
    estimate::check_sweep(base, &size).map_err(|m| err(at, m))
}

fn check_metric(written: &str, base: &Scenario) -> Result<(), String> {
    use crate::metrics::catalog::{Scope, find, names};
    let (phase, m) = super::spec::split_phase(written);
    if let Some(p) = phase {
        scenario::check_phase_name(base, p).map_err(|e| format!("metric \"{written}\": {e}"))?;
    }
    match m.split_once('/') {
        Some((class, name)) => {
            if !base.classes.iter().any(|c| c.name == class) {
                let names: Vec<&str> = base.classes.iter().map(|c| c.name.as_str()).collect();
                return Err(format!("metric \"{m}\": unknown class \"{class}\" (classes: {})", text::listing(&names)));
            }
            if find(Scope::Class, name).is_none() && find(Scope::Run, name).is_some() {
                return Err(format!(
                    "metric \"{m}\": \"{name}\" is a run-level metric and takes no class: write it as \"{name}\""
                ));
            }
            if find(Scope::Class, name).is_none() {
                return Err(format!(
                    "metric \"{m}\": unknown per-class metric \"{name}\" (expected one of: {})",
                    names(Scope::Class)
                ));
            }
        }
        None if find(Scope::Run, m).is_none() => {
            return Err(format!(
                "unknown run-level metric \"{m}\" (expected one of: {}; per-class metrics are written class/metric)",
                names(Scope::Run)
            ));
        }
        None => {}
    }
    Ok(())
}

fn select_policies(spec: &SweepSpec, base: &Scenario) -> Result<(Vec<usize>, Vec<String>), Located> {
    let all: Vec<&str> = base.policies.iter().map(|p| p.name.as_str()).collect();
    if spec.policies.is_empty() {
        return Ok(((0..all.len()).collect(), all.iter().map(|s| s.to_string()).collect()));
    }
    let mut index = Vec::new();
    for (k, name) in spec.policies.iter().enumerate() {
        let i = all.iter().position(|p| p == name).ok_or_else(|| {
            err(
                format!("policies[{k}]"),
                format!("unknown policy \"{name}\" (the scenario has: {})", text::listing(&all)),
            )
        })?;
        if index.contains(&i) {
            return Err(err(format!("policies[{k}]"), format!("policy \"{name}\" is listed twice")));
        }
        index.push(i);
    }
    Ok((index, spec.policies.clone()))
}

fn unit_ns(index: usize, axis: &Axis) -> Result<f64, Located> {
    let unit = axis.unit.as_deref().unwrap_or("ms");
    parse_duration(&format!("1{unit}")).map(|ns| ns as f64).map_err(|_| {
        err(
            format!("axes[{index}].unit"),
            format!("axis \"{}\": unknown unit \"{unit}\" (ns, us, ms, s, m or h)", axis.name),
        )
    })
}

fn resolve_axis<'a>(index: usize, axis: &'a Axis, base: &Value) -> Result<Resolved<'a>, Located> {
    let at = || format!("axes[{index}].path");
    let steps = path::parse(&axis.path).map_err(|m| err(at(), format!("axis \"{}\": {m}", axis.name)))?;
    let mut probe = base.clone();
    let current = path::get_mut(&mut probe, &steps)
        .map_err(|m| err(at(), format!("axis \"{}\": bad path \"{}\": {m}", axis.name, axis.path)))?;
    let written: Vec<&AxisValue> = match &axis.range {
        Some(r) => vec![&r.from, &r.to],
        None => axis.values.iter().collect(),
    };
    let texts = written.iter().any(|v| matches!(v, AxisValue::Text(_)));
    let integral = written.iter().all(|v| matches!(v, AxisValue::Num(x) if x.fract() == 0.0));
    let kind = match &*current {
        Value::String(s) if parse_duration(s).is_ok() => Kind::Duration { unit_ns: unit_ns(index, axis)? },
        Value::Number(n) if n.is_f64() => Kind::Float,
        Value::Number(_) => Kind::Integer,
        Value::Null if texts || axis.unit.is_some() => Kind::Duration { unit_ns: unit_ns(index, axis)? },
        Value::Null if integral && axis.range.is_none() && axis.link.is_none() => Kind::Integer,
        Value::Null => Kind::Float,
        other => {
            return Err(err(
                at(),
                format!(
                    "axis \"{}\": \"{}\" is {}, not a number or a duration",
                    axis.name,
                    axis.path,
                    match other {
                        Value::String(s) => format!("the text \"{s}\""),
                        Value::Bool(_) => "a boolean".into(),
                        Value::Array(_) => "a list (index it, e.g. [0])".into(),
                        _ => "an object (name a field or variant inside it)".into(),
                    }
                ),
            ));
        }
    };
    if axis.link.is_some() && (!axis.values.is_empty() || axis.range.is_some()) {
        let msg = format!("axis \"{}\": a linked axis takes its values from `link`: drop values and range", axis.name);
        return Err(err(format!("axes[{index}].link"), msg));
    }
    if axis.link.is_none() && axis.values.is_empty() == axis.range.is_none() {
        return Err(err(format!("axes[{index}]"), format!("axis \"{}\": give either values or a range", axis.name)));
    }
    Ok(Resolved { index, axis, steps, kind })
}

impl Resolved<'_> {
    fn info(&self, values: Vec<f64>) -> AxisInfo {
        AxisInfo {
            name: self.axis.name.clone(),
            path: self.axis.path.clone(),
            values,
            role: self.axis.role,
            link: self.axis.link.clone(),
            unit: self.unit().map(str::to_string),
        }
    }

    /// The unit reported values are in: the spec's (default `ms`) on a duration, none on a
    /// plain number. Part of the plan's hash, rightly: the same numbers in another unit are
    /// other scenarios.
    fn unit(&self) -> Option<&str> {
        match self.kind {
            Kind::Duration { .. } => Some(self.axis.unit.as_deref().unwrap_or("ms")),
            Kind::Integer | Kind::Float => None,
        }
    }

    fn fail(&self, msg: String) -> Located {
        err(format!("axes[{}]", self.index), format!("axis \"{}\": {msg}", self.axis.name))
    }

    /// Where grid value `k` is written: its entry in `values`, or the axis's `range`.
    fn value_path(&self, k: usize) -> String {
        match self.axis.range {
            Some(_) => format!("axes[{}].range", self.index),
            None => format!("axes[{}].values[{k}]", self.index),
        }
    }

    /// A written value in the axis's reporting unit.
    fn raw(&self, v: &AxisValue) -> Result<f64, Located> {
        match (self.kind, v) {
            (Kind::Duration { unit_ns }, AxisValue::Text(s)) => {
                parse_duration(s).map(|ns| ns as f64 / unit_ns).map_err(|m| self.fail(m))
            }
            (Kind::Duration { .. }, AxisValue::Num(x)) if self.axis.unit.is_none() => {
                Err(self.fail(format!("{x} is a plain number on a duration: write \"{x}ms\" or give the axis a unit")))
            }
            (_, AxisValue::Num(x)) if x.is_finite() => Ok(*x),
            (_, AxisValue::Num(x)) => Err(self.fail(format!("{x} is not a finite number"))),
            (_, AxisValue::Text(s)) => {
                Err(self.fail(format!("\"{s}\" is a text but \"{}\" holds a number", self.axis.path)))
            }
        }
    }

    /// A value in axis units to (reported value, scenario value). Integers and durations
    /// are rounded (durations to the nanosecond), so the reported value is the one used.
    fn finish(&self, x: f64) -> Result<(f64, Value), Located> {
        match self.kind {
            Kind::Duration { unit_ns } => {
                let ns = (x * unit_ns).round();
                if !(0.0..=1.0e18).contains(&ns) {
                    return Err(self.fail(format!("duration {x} is negative or too large")));
                }
                Ok((ns / unit_ns, Value::String(fmt_time(ns as u64))))
            }
            Kind::Integer => {
                let n = x.round();
                if !(-9.0e15..=9.0e15).contains(&n) {
                    return Err(self.fail(format!("{x} is out of range")));
                }
                Ok((n, Value::from(n as i64)))
            }
            Kind::Float => Ok((x, Value::from(x))),
        }
    }

    /// Position `u` in [0, 1] along the range, on its scale.
    fn along(&self, r: &Range, u: f64) -> Result<f64, Located> {
        let (a, b) = (self.raw(&r.from)?, self.raw(&r.to)?);
        Ok(match r.scale {
            Scale::Linear => a + (b - a) * u,
            Scale::Log if a > 0.0 && b > 0.0 => a * (b / a).powf(u),
            Scale::Log => return Err(self.fail("a Log range needs both ends > 0".into())),
        })
    }

    /// The grid values (reported, scenario value), duplicates after rounding removed.
    fn grid_values(&self) -> Result<Vec<(f64, Value)>, Located> {
        let mut out: Vec<(f64, Value)> = Vec::new();
        if let Some(r) = &self.axis.range {
            if r.steps < 2 {
                let msg = format!("axis \"{}\": a range needs steps >= 2 (the number of values)", self.axis.name);
                return Err(err(format!("axes[{}].range.steps", self.index), msg));
            }
            for i in 0..r.steps {
                let x = self.along(r, f64::from(i) / f64::from(r.steps - 1))?;
                let v = self.finish(x)?;
                if out.last().is_none_or(|l| l.0 != v.0) {
                    out.push(v);
                }
            }
        } else {
            for (k, w) in self.axis.values.iter().enumerate() {
                let here = |(_, m): Located| (self.value_path(k), m);
                let x = self.raw(w).map_err(here)?;
                if self.kind == Kind::Integer && x.fract() != 0.0 {
                    return Err(here(self.fail(format!("{x} is not a whole number"))));
                }
                out.push(self.finish(x).map_err(here)?);
            }
        }
        Ok(out)
    }
}

/// Points of the grid product, first axis slowest. Each axis value is checked alone first,
/// so a bad value is blamed on its axis; except the values a link reads: those make a valid
/// scenario only with the linked values of their point (a share of 0.95 with its partner at
/// `1 - share`, not beside the base's partner), so `link_points` checks them point by point.
fn grid_points(
    axes: &[Resolved],
    base: &Value,
    base_path: &Path,
    links: &[super::link::Link],
) -> Result<(Vec<AxisInfo>, Vec<Vec<f64>>), Located> {
    let mut infos = Vec::new();
    let mut points: Vec<Vec<f64>> = vec![Vec::new()];
    for a in axes {
        if a.axis.link.is_some() {
            // Filled in per point by `link_points`.
            points.iter_mut().for_each(|p| p.push(f64::NAN));
            infos.push(a.info(Vec::new()));
            continue;
        }
        let values = a.grid_values()?;
        let read_by_link = links.iter().any(|l| l.reads.contains(&a.index));
        for (k, (shown, v)) in values.iter().enumerate().filter(|_| !read_by_link) {
            let mut s = base.clone();
            *path::get_mut(&mut s, &a.steps).map_err(|m| a.fail(m))? = v.clone();
            let unit = a.unit().unwrap_or("");
            to_scenario(s).map_err(|m| {
                let (_, msg) = a.fail(format!("value {shown}{unit}: {m} (base {})", base_path.display()));
                (a.value_path(k), msg)
            })?;
        }
        let shown: Vec<f64> = values.iter().map(|v| v.0).collect();
        points = points.iter().flat_map(|p| shown.iter().map(move |x| [p.as_slice(), &[*x]].concat())).collect();
        infos.push(a.info(shown));
    }
    Ok((infos, points))
}

/// Seeded samples: Latin hypercube strata or independent uniforms, per axis.
fn sample_points(axes: &[Resolved], s: &Sample, seed: u64) -> Result<(Vec<AxisInfo>, Vec<Vec<f64>>), Located> {
    let n = s.samples as usize;
    if n == 0 {
        return Err(err("sample.samples", "samples must be >= 1"));
    }
    let seed = s.seed.unwrap_or(seed);
    let mut points = vec![Vec::with_capacity(axes.len()); n];
    let mut infos = Vec::new();
    for a in axes {
        if a.axis.link.is_some() {
            points.iter_mut().for_each(|p| p.push(f64::NAN));
            infos.push(a.info(Vec::new()));
            continue;
        }
        let r = a.axis.range.as_ref().ok_or_else(|| a.fail("sampling needs a range, not values".into()))?;
        let label = label_hash(&format!("sweep/sample/{}", a.axis.name));
        let strata = permutation(n, seed, label_hash(&format!("sweep/lhs/{}", a.axis.name)));
        let mut shown = Vec::with_capacity(n);
        for (i, p) in points.iter_mut().enumerate() {
            let u = counter_f64(seed, label, i as u64, 0);
            let u = match s.method {
                Method::Uniform => u,
                Method::LatinHypercube => (strata[i] as f64 + u) / n as f64,
            };
            let x = a.finish(a.along(r, u)?)?.0;
            p.push(x);
            shown.push(x);
        }
        infos.push(a.info(shown));
    }
    Ok((infos, points))
}

/// A seeded Fisher-Yates shuffle of 0..n from counter draws (modulo bias < n / 2^64).
fn permutation(n: usize, seed: u64, label: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for j in (1..n).rev() {
        let k = (counter_u64(seed, label, j as u64, 0) % (j as u64 + 1)) as usize;
        p.swap(j, k);
    }
    p
}

fn to_scenario(v: Value) -> Result<Scenario, String> {
    let s: Scenario = serde_json::from_value(v).map_err(|e| e.to_string())?;
    scenario::validate(&s).map_err(|e| e.message)?;
    Ok(s)
}

/// The scenario of one point, validated and built once so data files are checked too.
fn point_scenario(axes: &[Resolved], base: &Value, point: &[f64], seed: u64, dir: &Path) -> Result<Scenario, Located> {
    let mut v = base.clone();
    for (a, x) in axes.iter().zip(point) {
        *path::get_mut(&mut v, &a.steps).map_err(|m| a.fail(m))? = a.finish(*x)?.1;
    }
    let describe = || {
        let params: Vec<String> = axes.iter().zip(point).map(|(a, x)| format!("{}={x}", a.axis.name)).collect();
        params.join(", ")
    };
    let s = to_scenario(v).map_err(|m| err("axes", format!("point ({}): {m}", describe())))?;
    Model::build(&s, seed, dir).map_err(|m| err("axes", format!("point ({}): {m}", describe())))?;
    Ok(s)
}

fn resolved_kinds(axes: &[Resolved]) -> Vec<Kind> {
    axes.iter().map(|a| a.kind).collect()
}

/// Every axis's link, parsed and in evaluation order.
fn parse_links(axes: &[Resolved]) -> Result<Vec<super::link::Link>, Located> {
    let names: Vec<&str> = axes.iter().map(|a| a.axis.name.as_str()).collect();
    let texts: Vec<Option<&str>> = axes.iter().map(|a| a.axis.link.as_deref()).collect();
    super::link::parse_all(&names, &texts)
        .map_err(|(i, m)| err(format!("axes[{i}].link"), format!("axis \"{}\": {m}", names[i])))
}

/// Compute the linked axes' values at every point (rounded as the axis's kind demands) and
/// check each point, its links applied, on the base scenario, so a link giving a bad value,
/// or a point whose linked values do not fit together, is blamed on the link with the point
/// it happened at.
fn link_points(
    axes: &[Resolved],
    base: &Value,
    links: &[super::link::Link],
    infos: &mut [AxisInfo],
    points: &mut [Vec<f64>],
) -> Result<(), Located> {
    let names: Vec<&str> = axes.iter().map(|a| a.axis.name.as_str()).collect();
    let at = |i: usize| format!("axes[{i}].link");
    if links.is_empty() {
        return Ok(());
    }
    let here = |p: &[f64]| {
        let shown: Vec<String> =
            names.iter().zip(p).filter(|(_, x)| !x.is_nan()).map(|(n, x)| format!("{n}={x}")).collect();
        shown.join(", ")
    };
    for p in points.iter_mut() {
        super::link::apply(links, &names, p)
            .map_err(|(i, m)| err(at(i), format!("axis \"{}\" at point ({}): {m}", names[i], here(p))))?;
        for l in links {
            p[l.axis] = axes[l.axis].finish(p[l.axis]).map_err(|(_, m)| err(at(l.axis), m))?.0;
        }
        // Values no link reads were checked alone: a point the scenario refuses is the doing of
        // a link or of the values it reads, so it is blamed on the first link, naming the point.
        let mut s = base.clone();
        for (a, x) in axes.iter().zip(p.iter()) {
            *path::get_mut(&mut s, &a.steps).map_err(|m| a.fail(m))? = a.finish(*x)?.1;
        }
        let first = links[0].axis;
        to_scenario(s).map_err(|m| err(at(first), format!("axis \"{}\" at point ({}): {m}", names[first], here(p))))?;
    }
    for l in links {
        let mut values: Vec<f64> = points.iter().map(|p| p[l.axis]).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        infos[l.axis].values = values;
    }
    Ok(())
}
