//! Resolving a spec into a plan: each axis's values (list, linear or log range, or seeded
//! Latin hypercube / uniform samples), the points, the scenario of every point (set by path,
//! deserialized back and validated), and the numbering of runs, seeds and shards.
//!
//! Every error is found here, before any run starts.

mod axis;
mod points;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::path::{self, Step};
pub use super::spec::Role;
use super::spec::{self, Axis, SpecError, SweepSpec};
use crate::engine::{counter_u64, fmt_time, label_hash};
use crate::scenario::estimate::{self, SweepSize};
use crate::scenario::{self, Scenario};
use crate::text;
use axis::{Resolved, resolve_axis};
use points::{grid_points, link_points, parse_links, point_scenario, resolved_kinds, sample_points};

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

pub(crate) type Located = (String, String);

/// An error at `at`, a path into the spec (`axes[1].path`), located by `spec::located`.
pub(super) fn err(at: impl Into<String>, msg: impl Into<String>) -> Located {
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
    if let Some(dp) = info.decide.as_mut() {
        dp.bounds = super::decide::bounds(&dp.decide, &info.axes, &info.points, &scenarios, &scenario_dir);
    }
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
    use crate::metrics::catalogue::{Scope, find, names};
    let (phase, m) = super::spec::split_phase(written);
    if let Some(p) = phase {
        scenario::check_phase_name(base, p).map_err(|e| format!("metric \"{written}\": {e}"))?;
    }
    if let Some((dependency, name)) = crate::metrics::catalogue::split_dependency(m) {
        scenario::check_dependency_name(base, dependency).map_err(|e| format!("metric \"{m}\": {e}"))?;
        if find(Scope::Dependency, name).is_none() {
            return Err(format!(
                "metric \"{m}\": unknown per-dependency metric \"{name}\" (expected one of: {})",
                names(Scope::Dependency)
            ));
        }
        return Ok(());
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
