//! The sweep journal's contents, without files: the records of finished runs, the header that
//! says which plan and shard a journal belongs to, the checksummed line format, and the checks
//! a record must pass. `output::journal` reads and writes the files.
//!
//! Every journal line is framed with a checksum, `{"header":H,"crc32":C}` or
//! `{"record":R,"crc32":C}`, C being the CRC-32 (IEEE) of the exact bytes of H or R in
//! lower-case hex; the header holds the CRC-32 of `plan.json`'s bytes as `plan`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::grid::PlanInfo;

/// The journal's file name.
pub const JOURNAL: &str = "journal.jsonl";
/// The plan's file name.
pub const PLAN: &str = "plan.json";

/// One finished run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// Run number (see [`PlanInfo::run_id`]).
    pub run: u64,
    /// Seed it ran with.
    pub seed: u64,
    /// Events processed.
    pub events: u64,
    /// Requests that arrived.
    pub requests: u64,
    /// The plan's metrics, in order (`None` for NaN, which JSON cannot hold).
    pub metrics: Vec<Option<f64>>,
    /// Beside each of `metrics` that is a latency of answers
    /// ([`catalogue::Population::Answers`](crate::metrics::catalogue::Population::Answers)), its
    /// class's answered count ([`catalogue::answered`](crate::metrics::catalogue::answered)) in
    /// the same phase, so the best settings compare those latencies only between settings that
    /// answered about as many; `None` for the other metrics. Empty when the plan has no such
    /// metric, and in journals written before it (the counts are then unknown, and such a
    /// metric is ranked as before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered: Vec<Option<u64>>,
    /// The run's content key (see [`super::reuse::run_keys`]): what lets a run with the same
    /// inputs, in this plan or an edited one, take this record. Absent in journals written
    /// before keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The journal's first line: what the journal belongs to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The plan hash.
    pub hash: String,
    /// Shard `k/n` (`0/1` when unsharded).
    pub shard: String,
    /// CRC-32 of `plan.json`'s bytes (see [`plan_bytes`]), in hex.
    pub plan: String,
}

/// CRC-32 (IEEE) of `bytes` as 8 lower-case hex digits.
pub fn checksum(bytes: &[u8]) -> String {
    format!("{:08x}", crc32fast::hash(bytes))
}

/// One journal line (with its newline): `value` under `key`, with its checksum.
pub fn frame<T: Serialize>(key: &str, value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let json = serde_json::to_string(value)?;
    Ok(format!("{{\"{key}\":{json},\"crc32\":\"{}\"}}\n", checksum(json.as_bytes())).into_bytes())
}

/// The JSON under `key` in a framed line, after checking its checksum.
pub fn unframe<'a>(line: &'a [u8], key: &str) -> Result<&'a [u8], String> {
    let open = format!("{{\"{key}\":");
    let not_framed = || format!("not a journal {key} line ({{\"{key}\":...,\"crc32\":...}})");
    let body = line.strip_prefix(open.as_bytes()).ok_or_else(not_framed)?;
    let tail = b",\"crc32\":\"";
    let at = body.windows(tail.len()).rposition(|w| w == tail).ok_or_else(not_framed)?;
    let (json, crc) = (&body[..at], &body[at + tail.len()..]);
    let crc = crc.strip_suffix(b"\"}").ok_or_else(not_framed)?;
    if crc != checksum(json).as_bytes() {
        return Err(format!(
            "checksum mismatch (the line says {}, its content gives {}): the line was changed after brownout wrote it",
            String::from_utf8_lossy(crc),
            checksum(json)
        ));
    }
    Ok(json)
}

/// Is `r` a run of `plan` with the plan's seed and metric count?
pub fn check_record(plan: &PlanInfo, r: &RunRecord) -> Result<(), String> {
    if r.run >= plan.runs() {
        return Err(format!("run {} is not in the plan, which has {} runs", r.run, plan.runs()));
    }
    if r.metrics.len() != plan.metrics.len() {
        return Err(format!("run {} has {} metrics, the plan has {}", r.run, r.metrics.len(), plan.metrics.len()));
    }
    if !r.answered.is_empty() && r.answered.len() != plan.metrics.len() {
        return Err(format!(
            "run {} has {} answered counts, the plan has {} metrics",
            r.run,
            r.answered.len(),
            plan.metrics.len()
        ));
    }
    let want = plan.replication_seed(plan.run_id(r.run).replication);
    if r.seed != want {
        return Err(format!("run {} has seed {}, the plan gives it seed {want}", r.run, r.seed));
    }
    Ok(())
}

/// Records keyed by run, checking that duplicates agree and that every run is there.
pub fn complete(plan: &PlanInfo, records: Vec<RunRecord>) -> Result<Vec<RunRecord>, String> {
    let mut by_run: BTreeMap<u64, RunRecord> = BTreeMap::new();
    for r in records {
        if r.run >= plan.runs() {
            return Err(format!("journal holds run {} but the plan has {} runs", r.run, plan.runs()));
        }
        if by_run.get(&r.run).is_some_and(|old| *old != r) {
            return Err(format!("run {} appears twice with different results", r.run));
        }
        by_run.insert(r.run, r);
    }
    let missing = plan.runs() - by_run.len() as u64;
    if missing > 0 {
        let first = (0..plan.runs()).find(|i| !by_run.contains_key(i)).unwrap_or(0);
        return Err(format!(
            "{missing} of {} runs are missing (first: run {first}); run the missing shards or --resume",
            plan.runs()
        ));
    }
    Ok(by_run.into_values().collect())
}

/// The bytes of `plan.json` for `plan`.
pub fn plan_bytes(plan: &PlanInfo) -> Result<Vec<u8>, serde_json::Error> {
    let mut bytes = serde_json::to_vec_pretty(plan)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// A tiny plan and its records for unit tests here and in `brownout-output` (whose journal
/// tests read what this module frames); not part of the API.
#[doc(hidden)]
pub mod fixtures {
    use super::*;
    use crate::sweep::grid::AxisInfo;

    /// A one-point, one-policy, two-replication plan.
    pub fn plan() -> PlanInfo {
        PlanInfo {
            sweep: "s".into(),
            base: "b".into(),
            seed: 9,
            replications: 2,
            axes: vec![AxisInfo {
                name: "x".into(),
                path: "a.x".into(),
                values: vec![0.5],
                role: None,
                link: None,
                unit: None,
            }],
            points: vec![vec![0.5]],
            policies: vec!["p".into()],
            metrics: vec!["m".into()],
            decide: None,
            scenario_policies: Vec::new(),
            rules: Vec::new(),
            hash: "h".into(),
        }
    }

    /// Run `run` of [`plan`] with metric value `m`.
    pub fn rec(run: u64, m: f64) -> RunRecord {
        let p = plan();
        let seed = p.replication_seed(p.run_id(run).replication);
        RunRecord { run, seed, events: 10, requests: 5, metrics: vec![Some(m)], answered: Vec::new(), key: None }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{plan, rec};
    use super::*;

    #[test]
    fn completeness_and_duplicates() {
        let p = plan();
        assert!(complete(&p, vec![rec(1, 3.0)]).unwrap_err().to_string().contains("1 of 2 runs are missing"));
        let dup = complete(&p, vec![rec(0, 1.0), rec(1, 3.0), rec(0, 2.0)]);
        assert!(dup.unwrap_err().to_string().contains("twice"));
        let ok = complete(&p, vec![rec(1, 3.0), rec(0, 1.0), rec(1, 3.0)]).unwrap();
        assert_eq!(ok.iter().map(|r| r.run).collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn framed_lines_carry_their_checksum() {
        // CRC-32 (IEEE) of "123456789" is cbf43926, the standard check value.
        assert_eq!(checksum(b"123456789"), "cbf43926");
        let line = frame("record", &rec(1, 3.0)).unwrap();
        let json = unframe(&line[..line.len() - 1], "record").unwrap();
        assert_eq!(serde_json::from_slice::<RunRecord>(json).unwrap(), rec(1, 3.0));
        let mut bad = line.clone();
        let at = bad.iter().position(|&b| b == b'3').unwrap();
        bad[at] = b'4';
        assert!(unframe(&bad[..bad.len() - 1], "record").unwrap_err().contains("checksum mismatch"));
        assert!(unframe(&line[..line.len() - 1], "header").is_err());
    }

    #[test]
    fn records_must_fit_the_plan() {
        let p = plan();
        assert!(check_record(&p, &rec(1, 3.0)).is_ok());
        let few = RunRecord { metrics: vec![], ..rec(1, 3.0) };
        assert!(check_record(&p, &few).unwrap_err().contains("0 metrics"));
        let seed = RunRecord { seed: rec(1, 3.0).seed ^ 1, ..rec(1, 3.0) };
        assert!(check_record(&p, &seed).unwrap_err().contains("seed"));
        assert!(check_record(&p, &rec(2, 1.0)).unwrap_err().contains("not in the plan"));
    }
}
