//! `brownout tune`: search a policy set's knobs for the setting a `decide` section asks for,
//! with a real optimizer (argmin's Nelder-Mead, restarted) under a budget of runs.
//!
//! - [`spec`]: the tune file (RON).
//! - [`space`]: the spec resolved against the scenario; a setting's scenario and figures.
//! - `search`: the simplex search, its trace, and the journal replay hooks.
//! - [`sensitivity`]: after the search, each knob at its range's ends (a tornado).
//!
//! Feasibility is `decide::evaluate`'s (one-sided 95 % bounds over the replications, the
//! same seeds for every candidate), and the recommendation is `decide::choose` over every
//! candidate evaluated, written in the one shape of `recommendation.json`.

pub(crate) mod search;
pub mod sensitivity;
pub mod space;
pub mod spec;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::decide::recommendation::{self, Label, Recommendation};
use crate::decide::{Evaluated, Samples, Sense, choose};
pub use search::{Evaluation, Hooks, Stop, key, search};
pub use space::{SettingError, Space, load};

/// One journaled evaluation: the setting and its figures, each number as its shortest
/// round-trip decimal text (`None` for NaN). Text, because a JSON number read back may differ
/// in the last bit, and a replayed search must see exactly the figures it saw.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Knob values, in knob order.
    pub values: Vec<String>,
    /// Objective per replication.
    pub objective: Vec<Option<String>>,
    /// Per constraint, its value per replication.
    pub constraints: Vec<Vec<Option<String>>>,
}

fn text(v: &[f64]) -> Vec<Option<String>> {
    v.iter().map(|x| x.is_finite().then(|| x.to_string())).collect()
}

/// A figure of a tune journal's record that does not read back as a number ([`Record::read`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordError {
    /// The text where a number was expected.
    NotANumber(String),
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::NotANumber(s) => write!(f, "\"{s}\" is not a number"),
        }
    }
}

impl std::error::Error for RecordError {}

fn number(s: &str) -> Result<f64, RecordError> {
    s.parse::<f64>().map_err(|_| RecordError::NotANumber(s.to_string()))
}

fn numbers(v: &[Option<String>]) -> Result<Vec<f64>, RecordError> {
    v.iter().map(|x| x.as_deref().map_or(Ok(f64::NAN), number)).collect()
}

impl Record {
    /// The record of an evaluation.
    pub fn of(e: &Evaluation) -> Record {
        Record {
            values: e.values.iter().map(f64::to_string).collect(),
            objective: text(&e.samples.objective),
            constraints: e.samples.constraints.iter().map(|c| text(c)).collect(),
        }
    }

    /// The setting and the figures it holds.
    pub fn read(&self) -> Result<(Vec<f64>, Samples), RecordError> {
        let values = self.values.iter().map(|v| number(v)).collect::<Result<_, _>>()?;
        let constraints = self.constraints.iter().map(|c| numbers(c)).collect::<Result<_, _>>()?;
        Ok((values, Samples { objective: numbers(&self.objective)?, constraints }))
    }
}

/// The recommendation over every candidate evaluated (`source: "tune"`): the choice is
/// `decide::choose`'s; the recommended and runner-up get their ready-to-paste stacks.
pub fn recommend(space: &Space, done: &[Evaluation]) -> Recommendation {
    let sense = Sense::of(&space.spec.decide).map_or(Sense::Minimize, |(s, _)| s);
    let evals: Vec<Evaluated> = done.iter().map(|e| e.eval.clone()).collect();
    let samples: Vec<Samples> = done.iter().map(|e| e.samples.clone()).collect();
    let rule = crate::decide::Rule::of(&space.spec.decide, &space.base.margins());
    let choice = choose(sense, &evals, &samples, &rule);
    let shown = [choice.recommended, choice.runner_up];
    let labels: Vec<Label> = done
        .iter()
        .enumerate()
        .map(|(k, e)| Label {
            policy: space.spec.policy.clone(),
            setting: setting(space, &e.values),
            stack: shown
                .contains(&Some(k))
                .then(|| space.scenario(&e.values).ok().map(|s| space.stack_ron(&s)))
                .flatten(),
        })
        .collect();
    let mut r = recommendation::build("tune", &space.spec.decide, &labels, &evals, &choice);
    let ranges = space.dims.iter().map(|d| (d.knob.name.clone(), (d.from, d.to))).collect();
    r.flags = recommendation::flags(&space.spec.decide, &labels, &evals, &choice, &ranges, &rule);
    // Knobs that set policies alone leave the base scenario's traffic and dependency to every
    // candidate, so its bounds hold for all of them; a knob elsewhere could move them.
    if space.dims.iter().all(|d| d.knob.path.starts_with("policies[")) {
        r.bounds =
            crate::decide::feasible::ceilings_for(&space.base, &space.spec.decide, &space.dir).unwrap_or_default();
    }
    r
}

/// Knob name to value.
pub fn setting(space: &Space, values: &[f64]) -> BTreeMap<String, f64> {
    space.dims.iter().zip(values).map(|(d, &v)| (d.knob.name.clone(), v)).collect()
}
