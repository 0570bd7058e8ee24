//! What a decision measures: a catalogue metric, optionally per class and over a phase, or (in
//! sweeps and `tune`) the value of a decision axis.

use super::catalogue::{self, Metric, Scope};
use super::summary::RunSummary;

/// A catalogue metric, per class or per run, over the whole run or a phase.
#[derive(Debug, Clone, Copy)]
pub struct Measure<'a> {
    /// Phase name; `None` for the whole run.
    pub phase: Option<&'a str>,
    /// Class for per-class metrics.
    pub class: Option<&'a str>,
    /// Dependency for per-dependency metrics (`dependencies[pricing]/amplification`).
    pub dependency: Option<&'a str>,
    /// The catalogue row.
    pub metric: &'static Metric,
}

/// An objective as written: a measure, or a name that is not a metric (a sweep axis).
#[derive(Debug, Clone, Copy)]
pub enum ObjectiveRef<'a> {
    /// A catalogue metric.
    Metric(Measure<'a>),
    /// A bare name that is no run-level metric: a decision axis in a sweep or `tune`.
    Axis(&'a str),
}

impl<'a> ObjectiveRef<'a> {
    /// Parse `[phase:][class/]metric` or `[phase:]dependencies[NAME]/metric`; a bare name that
    /// is no run-level metric is an axis name.
    pub fn parse(written: &'a str) -> Result<ObjectiveRef<'a>, ObjectiveError> {
        let (phase, rest) = match written.split_once(':') {
            Some((p, r)) => (Some(p), r),
            None => (None, written),
        };
        if let Some((dependency, name)) = catalogue::split_dependency(rest) {
            let metric = catalogue::find(Scope::Dependency, name).ok_or_else(|| ObjectiveError::Unknown {
                metric: name.to_string(),
                expected: catalogue::names(Scope::Dependency),
            })?;
            return Ok(ObjectiveRef::Metric(Measure { phase, class: None, dependency: Some(dependency), metric }));
        }
        let (class, name) = match rest.split_once('/') {
            Some((c, m)) => (Some(c), m),
            None => (None, rest),
        };
        let scope = if class.is_some() { Scope::Class } else { Scope::Run };
        match catalogue::find(scope, name) {
            Some(metric) => Ok(ObjectiveRef::Metric(Measure { phase, class, dependency: None, metric })),
            None if phase.is_none() && class.is_none() && catalogue::find(Scope::Class, name).is_none() => {
                Ok(ObjectiveRef::Axis(name))
            }
            None if class.is_none() && catalogue::find(Scope::Class, name).is_some() => {
                Err(ObjectiveError::NeedsClass { metric: name.to_string() })
            }
            None if class.is_some() && catalogue::find(Scope::Run, name).is_some() => {
                Err(ObjectiveError::TakesNoClass { metric: name.to_string(), phase: phase.map(str::to_string) })
            }
            None => Err(ObjectiveError::Unknown { metric: name.to_string(), expected: catalogue::names(scope) }),
        }
    }
}

/// Why an objective as written names no measure ([`ObjectiveRef::parse`]). Its `Display` is
/// the message the command line prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObjectiveError {
    /// A per-class metric written without a class.
    NeedsClass {
        /// The metric's name.
        metric: String,
    },
    /// A run-level metric written with a class.
    TakesNoClass {
        /// The metric's name.
        metric: String,
        /// The phase it was written with, if any.
        phase: Option<String>,
    },
    /// No metric of that name at that scope.
    Unknown {
        /// The name as written.
        metric: String,
        /// The catalogue's names at that scope, comma-separated.
        expected: String,
    },
}

impl std::fmt::Display for ObjectiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObjectiveError::NeedsClass { metric } => {
                write!(f, "\"{metric}\" is a per-class metric: write it as \"CLASS/{metric}\"")
            }
            ObjectiveError::TakesNoClass { metric, phase } => {
                let phase = phase.as_ref().map_or(String::new(), |p| format!("{p}:"));
                write!(f, "\"{metric}\" is a run-level metric and takes no class: write it as \"{phase}{metric}\"")
            }
            ObjectiveError::Unknown { metric, expected } => {
                write!(f, "unknown metric \"{metric}\" (expected one of: {expected})")
            }
        }
    }
}

impl std::error::Error for ObjectiveError {}

impl<'a> Measure<'a> {
    /// Written as sweep metrics are: `[phase:][class/]metric`, `[phase:]dependencies[NAME]/metric`.
    pub fn path(&self) -> String {
        let mut s = String::new();
        if let Some(p) = self.phase {
            s.push_str(p);
            s.push(':');
        }
        if let Some(c) = self.class {
            s.push_str(c);
            s.push('/');
        }
        if let Some(d) = self.dependency {
            s.push_str(&format!("dependencies[{d}]/"));
        }
        s.push_str(self.metric.name);
        s
    }

    /// The value in a run: `whole` is the whole run's summary, `phase` finds a phase's. `None`
    /// for an unknown class or phase, or a figure that is not a number (NaN).
    pub fn read<'r>(&self, whole: &'r RunSummary, phase: &dyn Fn(&str) -> Option<&'r RunSummary>) -> Option<f64> {
        let run = match self.phase {
            None => whole,
            Some(p) => phase(p)?,
        };
        if let Some(d) = self.dependency {
            return self.metric.read_dependency(catalogue::dependency_of(run, d)?).filter(|v| !v.is_nan());
        }
        let class = match self.class {
            None => None,
            Some(c) => Some(run.classes.iter().find(|k| k.class == c)?),
        };
        self.metric.value(run, class).filter(|v| !v.is_nan())
    }
}
