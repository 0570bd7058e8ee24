//! A tune spec resolved against its scenario: the knobs (paths checked, ranges checked, each
//! end validated), the decision checked against the scenario's classes and phases, and how a
//! setting becomes a scenario and a candidate's replicated figures.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use super::spec::{self, AxisValue, Knob, TuneSpec};
use crate::decide::{Measure, ObjectiveRef, Samples};
use crate::engine::{counter_u64, fmt_time, label_hash};
use crate::metrics::catalogue;
use crate::model::{Model, RunOptions, run_policy};
use crate::scenario::{self, Scenario, parse_duration};
use crate::sweep::SpecError;
use crate::sweep::grid::Kind;
use crate::sweep::path::{self, Step, Unclaimed};

/// A knob resolved against the base scenario.
#[derive(Debug, Clone)]
pub struct Dim {
    /// The knob as written.
    pub knob: Knob,
    steps: Vec<Step>,
    /// How a value becomes the scenario's: a duration (values in seconds, rounded to the
    /// nanosecond), an integer (asked for, or the field is one: values rounded) or a float.
    pub kind: Kind,
    /// The range's first end, in the knob's values (seconds on a duration).
    pub from: f64,
    /// The range's last end.
    pub to: f64,
}

/// A duration knob's values are seconds.
const SECONDS: Kind = Kind::Duration { unit_ns: 1e9 };

/// A resolved tune: everything needed to evaluate a setting.
#[derive(Debug, Clone)]
pub struct Space {
    /// The spec.
    pub spec: TuneSpec,
    /// The base scenario.
    pub base: Scenario,
    json: Value,
    /// Index of the tuned policy set in the scenario.
    pub policy_index: usize,
    /// The knobs, in spec order.
    pub dims: Vec<Dim>,
    /// Root seed.
    pub seed: u64,
    /// Folder that resolves the scenario's relative data files.
    pub dir: PathBuf,
    /// Hash of the spec (budget aside, so a resumed search may be given more) and the base
    /// scenario, in hex: a journal of another search is refused.
    pub hash: String,
    /// The wall-clock budget in nanoseconds, if any.
    pub wall_ns: Option<u64>,
}

type Located = (String, String);

fn err(at: impl Into<String>, msg: impl Into<String>) -> Located {
    (at.into(), msg.into())
}

/// Load a spec file and resolve it; every error names the spec file, line and column.
pub fn load(spec_path: &Path) -> Result<Space, SpecError> {
    let text = crate::sweep::spec::read_text(spec_path, "tune spec")?;
    let spec = spec::parse(spec_path, &text)?;
    let dir = spec_path.parent().unwrap_or(Path::new("."));
    resolve(spec, dir).map_err(|(at, msg)| crate::sweep::spec::located(spec_path, &text, &at, msg))
}

fn resolve(spec: TuneSpec, dir: &Path) -> Result<Space, Located> {
    scenario::check_file_name(&spec.name).map_err(|m| err("name", format!("name {m} (it names the output folder)")))?;
    let base_path = dir.join(&spec.base);
    let base = scenario::load(&base_path).map_err(|e| err("base", format!("base scenario: {e}")))?;
    if spec.replications < 2 {
        return Err(err("replications", "replications must be >= 2: a constraint needs an interval"));
    }
    if spec.budget.runs < u64::from(spec.replications) {
        return Err(err("budget.runs", format!("budget.runs must allow one candidate ({} runs)", spec.replications)));
    }
    let wall_ns = match &spec.budget.wall {
        None => None,
        Some(w) => Some(parse_duration(w).map_err(|m| err("budget.wall", format!("budget.wall: {m}")))?),
    };
    let policy_index = base.policies.iter().position(|p| p.name == spec.policy).ok_or_else(|| {
        let names: Vec<&str> = base.policies.iter().map(|p| p.name.as_str()).collect();
        err(
            "policy",
            format!("unknown policy \"{}\" (the scenario has: {})", spec.policy, crate::text::listing(&names)),
        )
    })?;
    if spec.knobs.is_empty() {
        return Err(err("knobs", "a tune needs at least one knob (a decision to search); there is nothing to tune"));
    }
    let json = serde_json::to_value(&base).map_err(|e| err("base", e.to_string()))?;
    let dims = spec
        .knobs
        .iter()
        .enumerate()
        .map(|(i, k)| resolve_knob(i, k, &json, (&spec.policy, policy_index)))
        .collect::<Result<Vec<_>, _>>()?;
    // As a sweep refuses two axes on one value: the later knob would overwrite the earlier.
    let mut claimed = path::Claimed::default();
    for (i, d) in dims.iter().enumerate() {
        let at = format!("knobs[{i}].path");
        match claimed.claim(&json, &d.steps, i) {
            Ok(_) => {}
            Err(Unclaimed::Bad(m)) => return Err(err(at, m)),
            Err(Unclaimed::Taken(j)) => {
                let msg = format!(
                    "knob \"{}\" sets the same value as knobs[{j}] (\"{}\"): one knob per value",
                    d.knob.name, dims[j].knob.path
                );
                return Err(err(at, msg));
            }
        }
    }
    check_decide(&spec, &base)?;
    let seed = spec.seed.unwrap_or(base.seed);
    let scenario_dir = base_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut hashed = serde_json::to_value(&spec).map_err(|e| err("", e.to_string()))?;
    hashed["budget"] = Value::Null;
    // A data file's bytes are inputs too (see `sweep::grid`): left out without data files, so
    // those searches keep their hashes.
    let files = crate::sweep::reuse::data_digests(&base, &scenario_dir, &mut Default::default())
        .map_err(|e| err("base", format!("base scenario: {e:#}")))?;
    let canonical = if files.is_empty() {
        serde_json::to_string(&(&hashed, &json, seed))
    } else {
        serde_json::to_string(&(&hashed, &json, seed, &files))
    };
    let hash = format!("{:016x}", label_hash(&canonical.unwrap_or_default()));
    let space = Space { spec, base, json, policy_index, dims, seed, dir: scenario_dir, hash, wall_ns };
    // Each knob's ends as the search reaches them (an integer knob's rounded inward), the
    // others at the base values, must make a valid scenario.
    for (i, d) in space.dims.iter().enumerate() {
        for end in [d.at(0.0), d.at(1.0)] {
            let mut v = space.json.clone();
            *path::get_mut(&mut v, &d.steps).map_err(|m| err(format!("knobs[{i}].path"), m))? = d.value(end);
            let bad = |m: String| {
                err(format!("knobs[{i}].range"), format!("knob \"{}\" = {}: {m}", d.knob.name, d.show(end)))
            };
            let s = to_scenario(v).map_err(bad)?;
            Model::build(&s, seed, &space.dir).map_err(|e| bad(e.to_string()))?;
        }
    }
    Ok(space)
}

/// A knob is a decision: a value inside the searched policy set (`policy` by name and index).
/// Anything else (traffic, the dependency) is a condition tune must not choose.
fn resolve_knob(i: usize, k: &Knob, base: &Value, policy: (&str, usize)) -> Result<Dim, Located> {
    let at = format!("knobs[{i}].path");
    let steps = path::parse(&k.path).map_err(|m| err(&at, format!("knob \"{}\": {m}", k.name)))?;
    // A dependency's own pool on the gateway (`fleet.pools[pricing]`) is sized by the caller as
    // a bulkhead is, and only the searched set runs: a decision too.
    let inside = match steps.as_slice() {
        [Step::Key(root), Step::Named(n), ..] => root == "policies" && n == policy.0,
        [Step::Key(root), Step::Index(j), ..] => root == "policies" && *j == policy.1,
        [Step::Key(fleet), Step::Key(pools), _, ..] => fleet == "fleet" && pools == "pools",
        _ => false,
    };
    if !inside {
        return Err(err(
            &at,
            format!(
                "knob \"{}\": \"{}\" is not a decision: a knob must lie under policies[{}] (the searched policy set) \
                 or fleet.pools[DEPENDENCY]; conditions such as traffic or the dependency belong on a sweep axis",
                k.name, k.path, policy.0
            ),
        ));
    }
    let mut probe = base.clone();
    let current = path::get_mut(&mut probe, &steps)
        .map_err(|m| err(&at, format!("knob \"{}\": bad path \"{}\": {m}", k.name, k.path)))?;
    let texts = [&k.range.from, &k.range.to].iter().any(|v| matches!(v, AxisValue::Text(_)));
    // As a sweep axis's: a duration field, or an unset optional one given duration text.
    let kind = match &*current {
        Value::String(t) if parse_duration(t).is_ok() => SECONDS,
        Value::Null if texts => SECONDS,
        Value::Number(n) if k.integer || !n.is_f64() => Kind::Integer,
        Value::Null if k.integer => Kind::Integer,
        Value::Number(_) | Value::Null => Kind::Float,
        _ => {
            let msg = format!("knob \"{}\": \"{}\" is not a number or a duration", k.name, k.path);
            return Err(err(&at, msg));
        }
    };
    if k.integer && kind == SECONDS {
        let msg = format!(
            "knob \"{}\": \"{}\" is a duration, whose values are seconds, not counts: drop `integer`",
            k.name, k.path
        );
        return Err(err(format!("knobs[{i}].integer"), msg));
    }
    let range = format!("knobs[{i}].range");
    let end = |v: &AxisValue| -> Result<f64, Located> {
        let fail = |m: String| err(&range, format!("knob \"{}\": {m}", k.name));
        match (kind, v) {
            (Kind::Duration { unit_ns }, AxisValue::Text(t)) => {
                parse_duration(t).map(|ns| ns as f64 / unit_ns).map_err(|m| fail(m.to_string()))
            }
            (Kind::Duration { unit_ns }, AxisValue::Num(x)) if x.is_finite() => {
                if *x < 0.0 {
                    return Err(fail(format!("{x} s is a negative duration")));
                }
                if *x * unit_ns > 1e18 {
                    return Err(fail(format!("{x} s is too large a duration")));
                }
                Ok((x * unit_ns).round() / unit_ns)
            }
            (_, AxisValue::Num(x)) => Ok(*x),
            (_, AxisValue::Text(t)) => Err(fail(format!("\"{t}\" is a text, but \"{}\" holds a number", k.path))),
        }
    };
    let (from, to) = (end(&k.range.from)?, end(&k.range.to)?);
    if !(from.is_finite() && to.is_finite() && from < to) {
        return Err(err(range, format!("knob \"{}\": range needs finite from < to", k.name)));
    }
    // Rounding would have nowhere to go: 2.5 clamped into [3, 2].
    if kind == Kind::Integer && from.ceil() > to.floor() {
        let msg =
            format!("knob \"{}\": the range {from} .. {to} holds no whole number, and the knob is an integer", k.name);
        return Err(err(range, msg));
    }
    Ok(Dim { knob: k.clone(), steps, kind, from, to })
}

/// The objective may be a metric or a knob; constraints are metrics over known classes and
/// phases.
fn check_decide(spec: &TuneSpec, base: &Scenario) -> Result<(), Located> {
    let resolve = |r: &ObjectiveRef| -> Result<(), (&'static str, String)> {
        match r {
            ObjectiveRef::Axis(name) if spec.knobs.iter().any(|k| k.name == *name) => Ok(()),
            ObjectiveRef::Axis(name) => Err((
                ".metric",
                format!("unknown metric or knob \"{name}\" (metrics: {})", catalogue::names(catalogue::Scope::Run)),
            )),
            ObjectiveRef::Metric(m) => scenario::check_measure(base, m, &|c| base.classes.iter().any(|k| k.name == c)),
        }
    };
    crate::decide::validate(&spec.decide, &resolve).map_err(|(p, m)| err(format!("decide{p}"), m))
}

fn to_scenario(v: Value) -> Result<Scenario, String> {
    let s: Scenario = serde_json::from_value(v).map_err(|e| e.to_string())?;
    scenario::validate(&s).map_err(|e| e.message)?;
    Ok(s)
}

impl Dim {
    /// The knob's value at `u` in [0, 1] (clamped), rounded for integer knobs.
    pub fn at(&self, u: f64) -> f64 {
        let x = self.from + (self.to - self.from) * u.clamp(0.0, 1.0);
        match self.kind {
            Kind::Integer => x.round().clamp(self.from.ceil(), self.to.floor()),
            Kind::Duration { unit_ns } => ((x * unit_ns).round() / unit_ns).clamp(self.from, self.to),
            Kind::Float => x,
        }
    }

    /// Where `x` lies in [0, 1].
    pub fn unit(&self, x: f64) -> f64 {
        (x - self.from) / (self.to - self.from)
    }

    fn value(&self, x: f64) -> Value {
        self.kind.scenario_value(x)
    }

    /// A value as the scenario has it: a duration as text (`"150ms"`), else the number.
    fn show(&self, x: f64) -> String {
        match self.kind {
            Kind::Duration { unit_ns } => fmt_time((x * unit_ns).round() as u64),
            Kind::Integer | Kind::Float => x.to_string(),
        }
    }
}

/// Why a setting of the knobs could not be measured ([`Space::scenario`], [`Space::measure`]).
/// Its `Display` is the message `brownout tune` prints after the setting.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SettingError {
    /// The knob values give no valid scenario (a path that does not resolve, or a value the
    /// scenario's validation refuses).
    Invalid(String),
    /// The scenario is valid but its model does not build.
    Build(crate::model::BuildError),
    /// A replication stopped (a run limit was reached).
    Run {
        /// The replication.
        replication: u32,
        /// Its seed.
        seed: u64,
        /// Why it stopped.
        error: crate::model::RunError,
    },
}

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingError::Invalid(m) => f.write_str(m),
            SettingError::Build(e) => write!(f, "{e}"),
            SettingError::Run { replication, seed, error } => {
                write!(f, "replication {replication} (seed {seed}): {error}")
            }
        }
    }
}

impl std::error::Error for SettingError {}

impl Space {
    /// The knob values at a point of the unit cube.
    pub fn setting(&self, u: &[f64]) -> Vec<f64> {
        self.dims.iter().zip(u).map(|(d, &x)| d.at(x)).collect()
    }

    /// The scenario with `values` set (validated).
    pub fn scenario(&self, values: &[f64]) -> Result<Scenario, SettingError> {
        let mut v = self.json.clone();
        for (d, &x) in self.dims.iter().zip(values) {
            *path::get_mut(&mut v, &d.steps).map_err(SettingError::Invalid)? = d.value(x);
        }
        to_scenario(v).map_err(SettingError::Invalid)
    }

    /// The tuned policy set's stack in `s`, as RON ready to paste.
    pub fn stack_ron(&self, s: &Scenario) -> String {
        let pretty = ron::ser::PrettyConfig::new().depth_limit(6).indentor("  ".to_string());
        ron::ser::to_string_pretty(&s.policies[self.policy_index].stack, pretty).unwrap_or_default()
    }

    /// Replication `r`'s seed: the one a sweep with this root seed gives replication `r`, so
    /// a tune and a sweep over the same knobs see the same traffic.
    pub fn replication_seed(&self, r: u32) -> u64 {
        counter_u64(self.seed, label_hash("sweep/replication"), u64::from(r), 0)
    }

    /// Run the setting's replications (in parallel on the current rayon pool) and read the
    /// objective and every constraint in each.
    pub fn measure(&self, values: &[f64]) -> Result<Samples, SettingError> {
        let s = self.scenario(values)?;
        let d = &self.spec.decide;
        let objective = d.minimize.as_deref().or(d.maximize.as_deref()).unwrap_or_default();
        let per_rep: Vec<(f64, Vec<f64>)> = (0..self.spec.replications)
            .into_par_iter()
            .with_max_len(1)
            .map(|r| self.one(&s, values, objective, r))
            .collect::<Result<_, SettingError>>()?;
        let mut out = Samples { objective: Vec::new(), constraints: vec![Vec::new(); d.subject_to.len()] };
        for (o, cs) in per_rep {
            out.objective.push(o);
            for (k, c) in cs.into_iter().enumerate() {
                out.constraints[k].push(c);
            }
        }
        Ok(out)
    }

    fn one(&self, s: &Scenario, values: &[f64], objective: &str, r: u32) -> Result<(f64, Vec<f64>), SettingError> {
        let seed = self.replication_seed(r);
        let model = Model::build(s, seed, &self.dir).map_err(SettingError::Build)?;
        let result = run_policy(&model, self.policy_index, RunOptions::default())
            .map_err(|error| SettingError::Run { replication: r, seed, error })?;
        let phases = scenario::phases_of(model.scenario());
        let phase = |p: &str| phases.iter().position(|x| x.name == p).and_then(|k| result.phases.get(k));
        let read = |m: &Measure| m.read(&result.summary, &phase).unwrap_or(f64::NAN);
        let o = match ObjectiveRef::parse(objective) {
            Ok(ObjectiveRef::Metric(m)) => read(&m),
            Ok(ObjectiveRef::Axis(name)) => {
                self.dims.iter().position(|d| d.knob.name == name).map_or(f64::NAN, |i| values[i])
            }
            Err(_) => f64::NAN,
        };
        let cs =
            self.spec.decide.subject_to.iter().map(|c| crate::decide::measure_of(c).map_or(f64::NAN, |m| read(&m)));
        Ok((o, cs.collect()))
    }
}
