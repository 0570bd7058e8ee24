//! Reading a result folder's figures: a run's `summary.json` or a sweep's `sweep.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::{Figure, Figures, Key};
use crate::metrics::catalog::{self, Scope};
use crate::metrics::summary::ScenarioSummary;
use crate::output::read_regular;

/// What made a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `brownout run`: one value per figure.
    Run,
    /// `brownout sweep`: means with 95 % intervals over replications.
    Sweep,
}

/// A result folder's identity and figures.
#[derive(Debug, Clone)]
pub struct Folder {
    /// Where it is.
    pub dir: PathBuf,
    /// Run or sweep.
    pub kind: Kind,
    /// The scenario's name (a sweep's base scenario).
    pub scenario: String,
    /// Root seed.
    pub seed: u64,
    /// Every figure.
    pub figures: Figures,
}

/// Read the folder `dir`: `summary.json` makes it a run's, `sweep.json` a sweep's; anything
/// else is not a result folder.
pub fn load(dir: &Path) -> Result<Folder> {
    if !dir.is_dir() {
        bail!(
            "{}: not a folder (diff compares two result folders written by `brownout run` or `sweep`)",
            dir.display()
        );
    }
    let (summary, sweep) = (dir.join("summary.json"), dir.join("sweep.json"));
    if summary.exists() {
        let bytes = read_regular(&summary)?;
        let s: ScenarioSummary =
            serde_json::from_slice(&bytes).with_context(|| format!("{}: not a run's summary", summary.display()))?;
        return Ok(Folder {
            dir: dir.to_path_buf(),
            kind: Kind::Run,
            scenario: s.scenario.clone(),
            seed: s.seed,
            figures: of_summary(&s),
        });
    }
    if sweep.exists() {
        let bytes = read_regular(&sweep)?;
        let doc: SweepDoc =
            serde_json::from_slice(&bytes).with_context(|| format!("{}: not a sweep's results", sweep.display()))?;
        return Ok(Folder {
            dir: dir.to_path_buf(),
            kind: Kind::Sweep,
            scenario: doc.base.clone(),
            seed: doc.seed,
            figures: of_sweep(&doc),
        });
    }
    bail!("{}: not a result folder: it has neither summary.json (a run) nor sweep.json (a sweep)", dir.display())
}

/// A run's figures: every catalogue metric the run has, per policy set and per class.
pub fn of_summary(s: &ScenarioSummary) -> Figures {
    let mut out = Figures::new();
    for r in &s.runs {
        let key = |class: Option<&str>| Key {
            point: None,
            policy: r.policy.clone(),
            class: class.map(str::to_string),
            phase: None,
        };
        let single = |v: Option<f64>| v.map(|value| Figure { value, ci95: None });
        let run = catalog::of(Scope::Run).filter_map(|m| Some((m, single(m.read(r, None))?))).collect();
        out.insert(key(None), run);
        for c in &r.classes {
            let figs = catalog::of(Scope::Class).filter_map(|m| Some((m, single(m.read(r, Some(c)))?))).collect();
            out.insert(key(Some(&c.class)), figs);
        }
    }
    out
}

/// The parts of `sweep.json` a diff reads.
#[derive(Deserialize)]
struct SweepDoc {
    base: String,
    seed: u64,
    rows: Vec<SweepRow>,
}

#[derive(Deserialize)]
struct SweepRow {
    params: BTreeMap<String, f64>,
    policy: String,
    metrics: BTreeMap<String, Stat>,
}

#[derive(Deserialize)]
struct Stat {
    mean: Option<f64>,
    ci_lo: Option<f64>,
    ci_hi: Option<f64>,
}

/// A sweep's figures: per point and policy set, each metric's mean and interval.
fn of_sweep(doc: &SweepDoc) -> Figures {
    let mut out = Figures::new();
    for row in &doc.rows {
        let point = row.params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
        for (path, stat) in &row.metrics {
            let (Some(m), Some(value)) = (catalog::by_path(path), stat.mean) else { continue };
            let class = path.split_once('/').map(|(c, _)| c.to_string());
            let key = Key { point: Some(point.clone()), policy: row.policy.clone(), class, phase: None };
            let ci95 = stat.ci_lo.zip(stat.ci_hi);
            out.entry(key).or_default().push((m, Figure { value, ci95 }));
        }
    }
    // Catalogue order within a key, as in a run's figures.
    for figs in out.values_mut() {
        figs.sort_by_key(|(m, _)| catalog::CATALOG.iter().position(|n| std::ptr::eq(n, *m)));
    }
    out
}
