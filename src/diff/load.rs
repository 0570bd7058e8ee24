//! Reading a result folder's figures: a run's `summary.json` (whole run and phases, with each
//! replication's value where it has replications) or a sweep's `sweep.json` (means and
//! intervals).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::{Figure, Figures, Key};
use crate::metrics::catalogue::{self, Metric, Scope};
use crate::metrics::summary::{ClassSummary, ScenarioSummary};
use crate::output::{journal, read_regular};
use crate::report::replicate;

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
    /// Each replication's seed, in the order of [`Figure::values`](super::Figure::values);
    /// empty without replications (and for a sweep, whose figures keep no per-seed values).
    pub seeds: Vec<u64>,
    /// The phases whose figures the folder holds, in its order.
    pub phases: Vec<String>,
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
        let mut s: ScenarioSummary =
            serde_json::from_slice(&bytes).with_context(|| format!("{}: not a run's summary", summary.display()))?;
        for r in s.replications.iter_mut().chain(s.phases.iter_mut().filter_map(|p| p.replications.as_mut())) {
            replicate::sort_for_lookup(r);
        }
        return Ok(Folder {
            dir: dir.to_path_buf(),
            kind: Kind::Run,
            scenario: s.scenario.clone(),
            seed: s.seed,
            seeds: s.replications.as_ref().map(|r| r.seeds.clone()).unwrap_or_default(),
            phases: s.phases.iter().map(|p| p.name.clone()).collect(),
            figures: of_summary(&s),
        });
    }
    if sweep.exists() {
        let bytes = read_regular(&sweep)?;
        let doc: SweepDoc =
            serde_json::from_slice(&bytes).with_context(|| format!("{}: not a sweep's results", sweep.display()))?;
        let per_seed = journal_values(dir, doc.rows.len());
        let figures = of_sweep(&doc, per_seed.as_ref().map(|p| &p.1));
        let mut phases: Vec<String> = figures.keys().filter_map(|k| k.phase.clone()).collect();
        phases.sort();
        phases.dedup();
        return Ok(Folder {
            dir: dir.to_path_buf(),
            kind: Kind::Sweep,
            scenario: doc.base.clone(),
            seed: doc.seed,
            seeds: per_seed.map(|p| p.0).unwrap_or_default(),
            phases,
            figures,
        });
    }
    bail!("{}: not a result folder: it has neither summary.json (a run) nor sweep.json (a sweep)", dir.display())
}

/// A run's figures: every catalogue metric the run has, per policy set and per class, over
/// the whole run and over each phase. With replications, a figure is the mean over them, with
/// its interval and each seed's value; without, replication 0's value.
pub fn of_summary(s: &ScenarioSummary) -> Figures {
    let mut out = Figures::new();
    let whole = (None, s.runs.as_slice(), s.replications.as_ref());
    let phases = s.phases.iter().map(|p| (Some(p.name.as_str()), p.runs.as_slice(), p.replications.as_ref()));
    for (phase, runs, reps) in std::iter::once(whole).chain(phases) {
        for r in runs {
            let key = |class: Option<&str>| Key {
                point: None,
                policy: r.policy.clone(),
                class: class.map(str::to_string),
                phase: phase.map(str::to_string),
            };
            let replicated = reps.and_then(|x| x.runs.iter().find(|p| p.policy == r.policy));
            // A part the run lacks (no breaker) is no figure; otherwise the replications' figure
            // where there are some.
            let figure = |m: &Metric, class: Option<&ClassSummary>| -> Option<Figure> {
                let single = m.read(r, class)?;
                let Some(rep) = replicated else { return Some(Figure::single(single)) };
                let i = replicate::interval(rep, m.name, class.map(|c| c.class.as_str()))?;
                Some(Figure { value: i.mean, ci95: Some((i.ci95[0], i.ci95[1])), values: i.values.clone() })
            };
            let run = catalogue::of(Scope::Run).filter_map(|m| Some((m, figure(m, None)?))).collect();
            out.insert(key(None), run);
            for c in &r.classes {
                let figs = catalogue::of(Scope::Class).filter_map(|m| Some((m, figure(m, Some(c))?))).collect();
                out.insert(key(Some(&c.class)), figs);
            }
            // A service graph's dependencies, keyed `dependencies[NAME]` as sweeps and `decide`
            // name their figures. Replications keep no interval of these, so with replications
            // they are left out rather than compared by one seed's value.
            if replicated.is_none() {
                for d in &r.dependencies {
                    let figs = catalogue::of(Scope::Dependency)
                        .filter_map(|m| Some((m, Figure::single(m.read_dependency(d)?))))
                        .collect();
                    out.insert(key(Some(&format!("dependencies[{}]", d.name))), figs);
                }
            }
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

/// Each replication's value by (`sweep.json` row, metric path), read from the folder's plan
/// and journal (rows are the plan's (point, policy) groups in run order), with the
/// replications' seeds. `None`, so the sweep is compared by its intervals, when the folder has
/// no readable plan and complete journal, or one replication.
type PerSeed = (Vec<u64>, BTreeMap<(usize, String), Vec<f64>>);

fn journal_values(dir: &Path, rows: usize) -> Option<PerSeed> {
    let (plan, _) = journal::read_plan(dir).ok()?;
    let records = journal::read_journal(dir, &plan, |_| Ok(())).ok()?.records;
    let records = crate::unstable::store::complete(&plan, records).ok()?;
    let reps = plan.replications as usize;
    if reps < 2 || rows != plan.points.len() * plan.policies.len() {
        return None;
    }
    let mut out: BTreeMap<(usize, String), Vec<f64>> = BTreeMap::new();
    for r in &records {
        let id = plan.run_id(r.run);
        let row = id.point * plan.policies.len() + id.policy;
        for (k, path) in plan.metrics.iter().enumerate() {
            let values = out.entry((row, path.clone())).or_insert_with(|| vec![f64::NAN; reps]);
            values[id.replication as usize] = r.metrics.get(k).copied().flatten().unwrap_or(f64::NAN);
        }
    }
    let seeds = (0..plan.replications).map(|k| plan.replication_seed(k)).collect();
    Some((seeds, out))
}

/// A sweep's figures: per point and policy set, each metric's mean and interval, and each
/// replication's value where `per_seed` has them.
fn of_sweep(doc: &SweepDoc, per_seed: Option<&BTreeMap<(usize, String), Vec<f64>>>) -> Figures {
    let mut out = Figures::new();
    for (i, row) in doc.rows.iter().enumerate() {
        let point = row.params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
        for (path, stat) in &row.metrics {
            let (Some(m), Some(value)) = (catalogue::by_path(path), stat.mean) else { continue };
            // `phase:class/metric`, `class/metric` or `metric`.
            let (phase, rest) = path.split_once(':').map_or((None, path.as_str()), |(p, r)| (Some(p.to_string()), r));
            let class = rest.split_once('/').map(|(c, _)| c.to_string());
            let key = Key { point: Some(point.clone()), policy: row.policy.clone(), class, phase };
            let ci95 = stat.ci_lo.zip(stat.ci_hi);
            let values = per_seed.and_then(|v| v.get(&(i, path.clone()))).cloned().unwrap_or_default();
            out.entry(key).or_default().push((m, Figure { value, ci95, values }));
        }
    }
    // Catalogue order within a key, as in a run's figures.
    for figs in out.values_mut() {
        figs.sort_by_key(|(m, _)| catalogue::CATALOGUE.iter().position(|n| std::ptr::eq(n, *m)));
    }
    out
}
