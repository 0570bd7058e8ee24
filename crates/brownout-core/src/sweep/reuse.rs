//! Sweeps never redo work: every run gets a content key, and runs with equal keys are run
//! once.
//!
//! A run's result is a function of its point's scenario without the other policy sets, its
//! one policy set, its replication seed and the metrics asked for: each set runs alone on
//! the common random numbers of its seed, and nothing in a world reads another set
//! (`tests/sweeps/sweep_reuse.rs` checks this on every shipped scenario). So a sweep axis that
//! moves one set's parameter leaves the other sets' runs equal at every value, and a
//! `--resume` after a spec edit can take every finished run whose inputs did not change.
//! The key hashes exactly those inputs, in canonical JSON, so whatever else a point's
//! scenario holds (a field that might couple sets one day) is in the key too.

use std::collections::BTreeMap;

use anyhow::{Context, Result, anyhow};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::grid::Plan;
use super::run_one;
use super::store::RunRecord;

/// Bumped when a run's inputs gain something the key must cover; with brownout's version it
/// keeps a journal written by another build from lending its records.
const KEY_FORMAT: &str = "brownout-run-key/1";

/// What a run's key hashes.
#[derive(Serialize)]
struct KeyInputs<'a> {
    format: &'static str,
    version: &'static str,
    /// The point's scenario holding only the run's policy set.
    scenario: &'a Value,
    seed: u64,
    metrics: &'a [String],
    /// The data files the point's scenario reads, by name, with a digest of their bytes: the
    /// scenario names a file, the run reads what it holds. Left out when there are none, so
    /// keys of scenarios without data files are what they were.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    files: &'a BTreeMap<String, String>,
}

/// The data files `s` reads from `dir` (`scenario::data_files`), each with 32 hex digits of
/// XXH3-128 over its bytes; `cache` keeps the digests of files already read.
pub(crate) fn data_digests(
    s: &crate::scenario::Scenario,
    dir: &std::path::Path,
    cache: &mut BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for file in crate::scenario::data_files(s) {
        let digest = match cache.get(&file) {
            Some(d) => d.clone(),
            None => {
                let path = dir.join(&file);
                let bytes = crate::fsread::read_capped(&path, crate::scenario::data::MAX_DATA_BYTES)
                    .with_context(|| format!("reading data file {}", path.display()))?;
                let d = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes));
                cache.insert(file.clone(), d.clone());
                d
            }
        };
        out.insert(file, digest);
    }
    Ok(out)
}

/// Every run's content key, in run order: 32 hex digits of XXH3-128 over the canonical JSON
/// of (the point's scenario with only the run's policy set, the replication seed, the
/// metrics, the digests of the data files it reads). Runs with equal keys give equal records
/// but for their run number.
pub fn run_keys(plan: &Plan) -> Result<Vec<String>> {
    let info = &plan.info;
    let mut per_set = Vec::with_capacity(info.points.len() * info.policies.len());
    let mut cache = BTreeMap::new();
    let mut files = Vec::with_capacity(info.points.len());
    for (point, scenario) in plan.scenarios.iter().enumerate() {
        files.push(data_digests(scenario, &plan.dir, &mut cache).with_context(|| format!("point {point}"))?);
        let json = serde_json::to_value(scenario).with_context(|| format!("point {point}: scenario to JSON"))?;
        let Value::Object(mut fields) = json else {
            return Err(anyhow!("point {point}: the scenario is not a JSON object"));
        };
        let Some(Value::Array(sets)) = fields.remove("policies") else {
            return Err(anyhow!("point {point}: the scenario has no policies list"));
        };
        for &index in &plan.policy_index {
            let mut alone = fields.clone();
            alone.insert("policies".into(), Value::Array(vec![sets[index].clone()]));
            per_set.push(Value::Object(alone));
        }
    }
    let seeds: Vec<u64> = (0..info.replications).map(|r| info.replication_seed(r)).collect();
    (0..info.runs())
        .map(|run| {
            let id = info.run_id(run);
            let inputs = KeyInputs {
                format: KEY_FORMAT,
                version: env!("CARGO_PKG_VERSION"),
                scenario: &per_set[id.point * info.policies.len() + id.policy],
                seed: seeds[id.replication as usize],
                metrics: &info.metrics,
                files: &files[id.point],
            };
            let bytes = serde_json::to_vec(&inputs)?;
            Ok(format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes)))
        })
        .collect()
}

/// What a sweep call does with its pending runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schedule {
    /// Runs to simulate, in run order: the first pending run of each key not yet finished.
    pub execute: Vec<u64>,
    /// Pending runs that take the record of an executed run with the same key, by that run.
    pub followers: BTreeMap<u64, Vec<u64>>,
    /// Pending runs whose key a finished record already has: that record, renumbered.
    pub copied: Vec<RunRecord>,
}

impl Schedule {
    /// Runs that take another run's record instead of being simulated.
    pub fn reused(&self) -> usize {
        self.copied.len() + self.followers.values().map(Vec::len).sum::<usize>()
    }
}

/// Plan `pending` (in run order) given the finished records `done`. With `reuse` false every
/// pending run is simulated (the check that reuse changes no byte of the results).
pub fn schedule(pending: &[u64], keys: &[String], done: &[RunRecord], reuse: bool) -> Schedule {
    if !reuse {
        return Schedule { execute: pending.to_vec(), ..Schedule::default() };
    }
    let finished: BTreeMap<&str, &RunRecord> = done.iter().filter_map(|r| r.key.as_deref().map(|k| (k, r))).collect();
    let mut first: BTreeMap<&str, u64> = BTreeMap::new();
    let mut s = Schedule::default();
    for &run in pending {
        let key = keys[run as usize].as_str();
        if let Some(rec) = finished.get(key) {
            s.copied.push(RunRecord { run, ..(*rec).clone() });
        } else if let Some(&leader) = first.get(key) {
            s.followers.entry(leader).or_default().push(run);
        } else {
            first.insert(key, run);
            s.execute.push(run);
        }
    }
    s
}

/// Carry out `schedule` on a pool of `threads` threads: hand each copied record to `keep`
/// first, then simulate each run of `execute` and hand its record, and its followers'
/// copies, to `keep` as it finishes. `on_done` hears of every record with whether it was
/// reused. Records carry their key. Stops at the first failed run.
pub fn execute(
    plan: &Plan,
    keys: &[String],
    schedule: &Schedule,
    threads: usize,
    keep: &(dyn Fn(&RunRecord) -> Result<()> + Sync),
    on_done: &(dyn Fn(&RunRecord, bool) + Sync),
) -> Result<()> {
    for rec in &schedule.copied {
        keep(rec)?;
        on_done(rec, true);
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build()?;
    pool.install(|| {
        schedule.execute.par_iter().with_max_len(1).try_for_each(|&run| {
            let rec = RunRecord { key: Some(keys[run as usize].clone()), ..run_one(plan, run)? };
            keep(&rec)?;
            on_done(&rec, false);
            for &other in schedule.followers.get(&run).into_iter().flatten() {
                let copy = RunRecord { run: other, ..rec.clone() };
                keep(&copy)?;
                on_done(&copy, true);
            }
            Ok(())
        })
    })
}

/// Records of another plan's journal (`old`) that fit runs of this plan: for each run that
/// `owns` and whose key a record has, that record renumbered, in run order. Records without
/// a key (journals from before keys) fit nothing.
pub fn carry_over(keys: &[String], owns: impl Fn(u64) -> bool, old: &[RunRecord]) -> Vec<RunRecord> {
    let by_key: BTreeMap<&str, &RunRecord> = old.iter().filter_map(|r| r.key.as_deref().map(|k| (k, r))).collect();
    (0..keys.len() as u64)
        .filter(|&run| owns(run))
        .filter_map(|run| by_key.get(keys[run as usize].as_str()).map(|r| RunRecord { run, ..(*r).clone() }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(run: u64, key: &str) -> RunRecord {
        RunRecord {
            run,
            seed: 1,
            events: 2,
            requests: 3,
            metrics: vec![Some(0.5)],
            answered: Vec::new(),
            key: Some(key.into()),
        }
    }

    #[test]
    fn equal_keys_run_once_and_finished_keys_not_at_all() {
        let keys: Vec<String> = ["a", "b", "a", "c", "b", "a"].map(String::from).to_vec();
        let done = [rec(3, "c")];
        let s = schedule(&[0, 1, 2, 4, 5], &keys, &done, true);
        assert_eq!(s.execute, vec![0, 1]);
        assert_eq!(s.followers, BTreeMap::from([(0, vec![2, 5]), (1, vec![4])]));
        assert!(s.copied.is_empty());
        assert_eq!(s.reused(), 3);
        let s = schedule(&[1, 3, 4], &keys, &[rec(0, "b"), rec(2, "c")], true);
        assert_eq!((s.execute.len(), s.reused()), (0, 3));
        assert_eq!(s.copied.iter().map(|r| r.run).collect::<Vec<_>>(), vec![1, 3, 4]);
        assert_eq!(s.copied[1], rec(3, "c"));
        let plain = schedule(&[0, 1, 2], &keys, &done, false);
        assert_eq!((plain.reused(), plain.execute), (0, vec![0, 1, 2]));
    }

    #[test]
    fn carry_over_renumbers_by_key_within_the_shard() {
        let keys: Vec<String> = ["x", "y", "x", "z"].map(String::from).to_vec();
        let old = [rec(7, "x"), rec(8, "z"), RunRecord { key: None, ..rec(9, "y") }];
        let got = carry_over(&keys, |r| r != 2, &old);
        assert_eq!(got, vec![rec(0, "x"), rec(3, "z")]);
    }
}
