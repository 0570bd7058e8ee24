//! The sweep spec file (RON, `deny_unknown_fields`): which scenario, which parameters to
//! vary and how, how many replications, which policies and metrics. Loading only parses;
//! [`super::grid`] resolves it against the scenario and checks every value.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A whole sweep spec.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// Name; the default output folder is `output/<name>/`.
    pub name: String,
    /// The scenario file, relative to the spec file.
    pub base: String,
    /// Root seed (default: the scenario's). Replication `r` runs with a seed derived from
    /// (this seed, r) only, the same for every point and policy (common random numbers).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Replications per (point, policy).
    #[serde(default = "one")]
    pub replications: u32,
    /// Policy sets to run, by name (empty = all of the scenario's).
    #[serde(default)]
    pub policies: Vec<String>,
    /// Metrics to aggregate: `class/metric` per class, plain for run-level metrics; a
    /// `phase:` prefix measures over that phase (`brownout:authorize/goodput_ratio`).
    pub metrics: Vec<String>,
    /// The parameters to vary.
    pub axes: Vec<Axis>,
    /// Random sampling of the axes' ranges instead of their grid product.
    #[serde(default)]
    pub sample: Option<Sample>,
    /// What to recommend: an objective (a metric, or a decision axis's name) and constraints
    /// (default: the base scenario's `decide`, else none).
    #[serde(default)]
    pub decide: Option<crate::scenario::Decide>,
}

fn one() -> u32 {
    1
}

/// One varied parameter.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// Column name in the results.
    pub name: String,
    /// Where the parameter lives, e.g. `dependency.drift.Ramp.to`.
    pub path: String,
    /// Explicit values (numbers, or duration strings such as `"2s"`).
    #[serde(default)]
    pub values: Vec<AxisValue>,
    /// A range instead of explicit values.
    #[serde(default)]
    pub range: Option<Range>,
    /// Unit of plain numbers on a duration parameter, and of the reported values
    /// (`ns`, `us`, `ms`, `s`, `m`, `h`; default `ms`).
    #[serde(default)]
    pub unit: Option<String>,
    /// Decision (a setting to choose) or condition (an environment to hold in); default: a
    /// path under `policies` or `fleet.pools` is a decision, anything else a condition.
    #[serde(default)]
    pub role: Option<Role>,
    /// An expression over other axes' names (`"1 - authorize_share"`) computing this axis's
    /// value at every point, instead of values or a range.
    #[serde(default)]
    pub link: Option<String>,
}

/// What an axis is to a recommendation.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Role {
    /// A setting the recommendation chooses.
    Decision,
    /// An environment the choice must hold in (worst case over its values).
    Condition,
}

impl Role {
    /// The role of an axis at `path` when none is written: policies are decisions, and so are
    /// the gateway's pools of single dependencies (`fleet.pools[pricing]`), sized by the caller
    /// as a bulkhead is.
    pub fn default_for(path: &str) -> Role {
        if path.starts_with("policies") || path.starts_with("fleet.pools[") { Role::Decision } else { Role::Condition }
    }
}

/// A value as written: a number or a duration string.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum AxisValue {
    /// A plain number.
    Num(f64),
    /// A duration such as `"250ms"`.
    Text(String),
}

/// A range of values, ends included.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Range {
    /// First value.
    pub from: AxisValue,
    /// Last value.
    pub to: AxisValue,
    /// Number of grid values (>= 2); not used when sampling.
    #[serde(default)]
    pub steps: u32,
    /// Spacing: linear or logarithmic.
    #[serde(default)]
    pub scale: Scale,
}

/// How a range is spaced.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub enum Scale {
    /// Equal differences.
    #[default]
    Linear,
    /// Equal ratios (both ends > 0).
    Log,
}

/// Seeded random sampling of the axes' ranges.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// Latin hypercube or independent uniform draws.
    pub method: Method,
    /// Number of points.
    pub samples: u32,
    /// Seed of the sampling (default: the sweep's seed).
    #[serde(default)]
    pub seed: Option<u64>,
}

/// Sampling methods.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Method {
    /// One point in each of `samples` equal strata of every axis, strata paired at random.
    LatinHypercube,
    /// Independent uniform draws (on the log scale for `Log` ranges).
    Uniform,
}

/// A sweep metric's phase (before the first `:`) and the metric itself (`class/metric` or a
/// run-level name): `"brownout:authorize/goodput_ratio"` gives `(Some("brownout"),
/// "authorize/goodput_ratio")`.
pub fn split_phase(metric: &str) -> (Option<&str>, &str) {
    match metric.split_once(':') {
        Some((phase, m)) => (Some(phase), m),
        None => (None, metric),
    }
}

/// A spec that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// The spec file.
    pub file: PathBuf,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        // Line 0: the error is about the whole file, which has no position to give.
        match self.line {
            0 => write!(f, "{}: {}", self.file.display(), self.message),
            _ => write!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.col, self.message),
        }
    }
}

impl std::error::Error for SpecError {}

/// A spec file's text (`what` names it in messages), bounded like a scenario file: a spec at
/// /dev/zero must not be read without end.
pub(crate) fn read_text(path: &Path, what: &str) -> Result<String, SpecError> {
    crate::scenario::data::bounded_text(path, what).map_err(|e| SpecError {
        file: e.file,
        line: e.line,
        col: e.col,
        message: e.message,
    })
}

/// Parse spec text; `path` is only used in messages.
pub fn parse(path: &Path, text: &str) -> Result<SweepSpec, SpecError> {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str::<SweepSpec>(text)
        .map_err(|e| SpecError {
            file: path.to_path_buf(),
            line: e.position.line,
            col: e.position.col,
            message: e.code.to_string(),
        })
}

/// An error at `at`, a path into the spec (`axes[1].range.steps`), located at the line and
/// column of that value in the spec text (or of the nearest enclosing value written).
pub fn located(path: &Path, text: &str, at: &str, message: String) -> SpecError {
    let ((line, col), _) = crate::scenario::locate::locate(text, at).unwrap_or(((0, 0), false));
    SpecError { file: path.to_path_buf(), line, col, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numbers_durations_and_ranges() {
        let s = parse(
            Path::new("x.ron"),
            r#"SweepSpec(name: "s", base: "b.ron", replications: 3, metrics: ["api/ok"],
                axes: [
                  (name: "p", path: "a.b", values: [1, 2.5, "3s"]),
                  (name: "q", path: "a.c", range: (from: "1s", to: 8, steps: 4, scale: Log), unit: "s"),
                ],
                sample: (method: LatinHypercube, samples: 10))"#,
        )
        .unwrap();
        assert_eq!(s.axes[0].values, vec![AxisValue::Num(1.0), AxisValue::Num(2.5), AxisValue::Text("3s".into())]);
        let r = s.axes[1].range.as_ref().unwrap();
        assert_eq!((r.steps, r.scale), (4, Scale::Log));
        assert_eq!(s.sample.unwrap().samples, 10);
    }

    #[test]
    fn unknown_field_is_located() {
        let e = parse(Path::new("x.ron"), "SweepSpec(name: \"s\",\n base: \"b\", bogus: 1, metrics: [], axes: [])")
            .unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("bogus"), "{e}");
    }
}
