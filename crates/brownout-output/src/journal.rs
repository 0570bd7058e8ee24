//! The files of a sweep folder: `plan.json`, the append-only journal of finished runs
//! (`journal.jsonl`: one header line, then one line per run, flushed as each run finishes, in
//! the checksummed format of [`brownout_core::unstable::store`]), and the result files rendered from the
//! journal, always in run order.
//!
//! A kill can tear only the last line (it has no newline yet): reading drops it, so resuming
//! loses at most the runs that were in progress, and a header torn at creation means an empty
//! journal. Any complete line that fails its checksum or the plan is refused, with its line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::report::escape::csv_cell;
use crate::sweep::Shard;
use crate::sweep::grid::PlanInfo;
use crate::sweep::reuse;
use crate::sweep::stats::metric_ci95;
use brownout_core::unstable::store::{
    Header, JOURNAL, PLAN, RunRecord, check_record, checksum, frame, plan_bytes, unframe,
};

/// An open journal, safe to append to from worker threads.
pub struct Journal {
    file: Mutex<File>,
}

impl Journal {
    /// Start a new journal; refuses to overwrite one.
    pub fn create(dir: &Path, header: &Header) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(JOURNAL);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        Self::start(file, &path, header)
    }

    /// Start the journal afresh over one whose header was torn at creation (so it holds no
    /// record).
    pub fn recreate(dir: &Path, header: &Header) -> Result<Self> {
        let path = dir.join(JOURNAL);
        let file = OpenOptions::new().write(true).open(&path).with_context(|| format!("opening {}", path.display()))?;
        file.set_len(0).with_context(|| format!("truncating {}", path.display()))?;
        Self::start(file, &path, header)
    }

    fn start(mut file: File, path: &Path, header: &Header) -> Result<Self> {
        file.write_all(&frame("header", header)?).with_context(|| format!("writing {}", path.display()))?;
        file.flush()?;
        Ok(Self { file: Mutex::new(file) })
    }

    /// Reopen a journal to append after `valid_len` bytes (dropping a torn tail).
    pub fn reopen(dir: &Path, valid_len: u64) -> Result<Self> {
        let path = dir.join(JOURNAL);
        let mut file =
            OpenOptions::new().write(true).open(&path).with_context(|| format!("opening {}", path.display()))?;
        file.set_len(valid_len)?;
        file.seek(std::io::SeekFrom::End(0))?;
        Ok(Self { file: Mutex::new(file) })
    }

    /// Append one record as a single write, then flush, so a finished run survives a kill.
    pub fn append(&self, r: &RunRecord) -> Result<()> {
        let line = frame("record", r)?;
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        f.write_all(&line)?;
        f.flush()?;
        Ok(())
    }
}

/// A journal read back: its header, the records, and the length of its intact prefix.
pub struct Read {
    /// The header; `None` when it was torn at creation (the journal then holds nothing).
    pub header: Option<Header>,
    /// Records in file order.
    pub records: Vec<RunRecord>,
    /// Bytes up to the end of the last complete line.
    pub valid_len: u64,
}

/// Read `dir`'s journal, dropping a torn last line, checking the header with `check_header`
/// (before any record, so a journal of another plan is named as such) and every record
/// against `plan`.
pub fn read_journal(dir: &Path, plan: &PlanInfo, check_header: impl Fn(&Header) -> Result<(), String>) -> Result<Read> {
    let path = dir.join(JOURNAL);
    let bytes = crate::read_regular(&path)?;
    let (mut header, mut records, mut valid_len) = (None, Vec::new(), 0usize);
    // Only lines ending in a newline are complete: a kill tears the last one at most.
    let complete = bytes.split_inclusive(|&b| b == b'\n').filter(|l| l.ends_with(b"\n"));
    for (i, line) in complete.enumerate() {
        let at = |why: String| anyhow::anyhow!("{}:{}: {why}", path.display(), i + 1);
        let content = &line[..line.len() - 1];
        if i == 0 {
            let json = unframe(content, "header").map_err(at)?;
            let h: Header = serde_json::from_slice(json).map_err(|e| at(format!("bad header: {e}")))?;
            check_header(&h).map_err(at)?;
            header = Some(h);
        } else {
            let json = unframe(content, "record").map_err(at)?;
            let r: RunRecord = serde_json::from_slice(json).map_err(|e| at(format!("bad record: {e}")))?;
            check_record(plan, &r).map_err(at)?;
            records.push(r);
        }
        valid_len += line.len();
    }
    Ok(Read { header, records, valid_len: valid_len as u64 })
}

/// A sweep folder's journal opened for appending, with the runs it already holds.
pub struct Opened {
    /// The journal, positioned after its last complete line.
    pub journal: Journal,
    /// The runs it already holds, in file order.
    pub done: Vec<RunRecord>,
    /// Its header had been torn when it was created, so it was started afresh.
    pub restarted: bool,
}

/// Open `dir`'s journal for the sweep `plan`: a new one, or with `resume` the one there,
/// after checking that its header is `header` (this plan and shard).
pub fn open(dir: &Path, plan: &PlanInfo, header: &Header, resume: bool) -> Result<Opened> {
    let fresh = |journal| Opened { journal, done: Vec::new(), restarted: false };
    if std::fs::symlink_metadata(dir.join(JOURNAL)).is_err() {
        return Ok(fresh(Journal::create(dir, header)?));
    }
    if !resume {
        bail!("{} already holds a sweep journal: add --resume to continue it, or choose another --out", dir.display());
    }
    let same = |h: &Header| {
        if h == header {
            return Ok(());
        }
        Err(format!(
            "cannot resume: this journal is for plan {} shard {} (plan.json checksum {}), this is plan {} shard {} (checksum {}): the spec or scenario changed",
            h.hash, h.shard, h.plan, header.hash, header.shard, header.plan
        ))
    };
    let read = read_journal(dir, plan, same)?;
    if read.header.is_none() {
        return Ok(Opened { restarted: true, ..fresh(Journal::recreate(dir, header)?) });
    }
    Ok(Opened { journal: Journal::reopen(dir, read.valid_len)?, done: read.records, restarted: false })
}

/// What a `--resume` after a spec edit took from the journal of the earlier plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// Runs of this plan that took a finished record of the earlier one (equal keys).
    pub kept: usize,
    /// Finished runs of the earlier plan that no run of this one (and shard) matches.
    pub dropped: usize,
}

/// The header of `dir`'s journal: `None` without a journal or with a torn header.
fn peek_header(dir: &Path) -> Result<Option<Header>> {
    let path = dir.join(JOURNAL);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let bytes = crate::read_regular(&path)?;
    let Some(end) = bytes.iter().position(|&b| b == b'\n') else { return Ok(None) };
    let at = |why: String| anyhow::anyhow!("{}:1: {why}", path.display());
    let json = unframe(&bytes[..end], "header").map_err(at)?;
    Ok(Some(serde_json::from_slice(json).map_err(|e| at(format!("bad header: {e}")))?))
}

/// [`open`], except that with `resume` a journal of an earlier plan of the same sweep and
/// shard (the spec was edited) is taken over: each run of this plan that `shard` owns and
/// whose key (`keys`, in run order) a finished record has takes that record, renumbered, and
/// the journal is rewritten for this plan. Refused as [`open`] does when the journal is of
/// another sweep or shard, when `plan.json` is not the one it started with, or when not one
/// finished run would be kept (another seed, base scenario, data file or metrics: a new `--out` then
/// keeps the old results).
pub fn open_reusing(
    dir: &Path,
    plan: &PlanInfo,
    header: &Header,
    resume: bool,
    keys: &[String],
    shard: Shard,
) -> Result<(Opened, Option<Carried>)> {
    let old = match peek_header(dir)? {
        Some(h) if resume && h.hash != header.hash && h.shard == header.shard => h,
        _ => return Ok((open(dir, plan, header, resume)?, None)),
    };
    let refuse = |why: String| anyhow::anyhow!("{}: cannot resume: {why}", dir.join(JOURNAL).display());
    let (old_plan, crc) = read_plan(dir)?;
    if crc != old.plan {
        return Err(refuse(format!(
            "{} was changed after the journal was started (checksum {crc}, the journal says {}), so its runs cannot be matched",
            dir.join(PLAN).display(),
            old.plan
        )));
    }
    if old_plan.sweep != plan.sweep {
        return Err(refuse(format!("this journal is of sweep \"{}\", not \"{}\"", old_plan.sweep, plan.sweep)));
    }
    let read = read_journal(dir, &old_plan, |_| Ok(()))?;
    let done = reuse::carry_over(keys, |run| shard.owns(run), &read.records);
    let used: BTreeSet<&str> = done.iter().filter_map(|r| r.key.as_deref()).collect();
    let old_runs: BTreeMap<u64, Option<&str>> = read.records.iter().map(|r| (r.run, r.key.as_deref())).collect();
    let dropped = old_runs.values().filter(|k| k.is_none_or(|k| !used.contains(k))).count();
    if done.is_empty() && !old_runs.is_empty() {
        return Err(refuse(format!(
            "the spec changed (plan {} -> {}) and none of the journal's {} finished runs has inputs it still uses (another seed, base scenario, data file or metrics?): choose another --out",
            old.hash,
            header.hash,
            old_runs.len()
        )));
    }
    let mut bytes = frame("header", header)?;
    for r in &done {
        bytes.extend(frame("record", r)?);
    }
    crate::write_atomic(&dir.join(JOURNAL), &bytes)?;
    let journal = Journal::reopen(dir, bytes.len() as u64)?;
    let carried = Carried { kept: done.len(), dropped };
    Ok((Opened { journal, done, restarted: false }, Some(carried)))
}

/// The three result files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// `sweep.json`.
    pub json: Vec<u8>,
    /// `sweep.csv`.
    pub csv: Vec<u8>,
    /// `runs.csv`.
    pub runs_csv: Vec<u8>,
}

fn num(x: f64) -> String {
    if x.is_finite() { format!("{x}") } else { String::new() }
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    sweep: &'a str,
    base: &'a str,
    seed: u64,
    replications: u32,
    axes: &'a [crate::sweep::grid::AxisInfo],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    scenario_policies: &'a [String],
    rows: Vec<JsonRow<'a>>,
    /// The rule the best settings were judged by (`stats::RULE`); each best set has its margin.
    rule: &'static str,
    best: Vec<crate::sweep::best::BestSet>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sensitivity: Vec<crate::sweep::sensitivity::Sensitivity>,
    /// Metrics with no best settings, and why (a cost that does not price failures).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_ranked: Vec<NotRanked<'a>>,
}

/// A metric `sweep.json` ranks no setting on.
#[derive(Serialize)]
struct NotRanked<'a> {
    metric: &'a str,
    why: &'a str,
}

#[derive(Serialize)]
struct JsonRow<'a> {
    point: usize,
    params: BTreeMap<&'a str, f64>,
    policy: &'a str,
    replications: u32,
    metrics: BTreeMap<&'a str, JsonStat>,
}

#[derive(Serialize)]
struct JsonStat {
    mean: f64,
    ci_lo: f64,
    ci_hi: f64,
}

/// The aggregate of one (point, policy) group: its `sweep.csv` line and `sweep.json` row.
fn aggregate<'a>(plan: &'a PlanInfo, group: usize, recs: &[RunRecord]) -> (Vec<String>, JsonRow<'a>) {
    let (point, policy) = (group / plan.policies.len(), group % plan.policies.len());
    let params = &plan.points[point];
    let mut line: Vec<String> = vec![point.to_string()];
    line.extend(params.iter().map(|x| num(*x)));
    line.extend([csv_cell(&plan.policies[policy]), plan.replications.to_string()]);
    let mut metrics = BTreeMap::new();
    for (k, m) in plan.metrics.iter().enumerate() {
        let xs: Vec<f64> = recs.iter().map(|x| x.metrics[k].unwrap_or(f64::NAN)).collect();
        // A ratio's interval stays in [0, 1]; a metric outside the catalogue is not clamped.
        let unit = crate::metrics::catalogue::by_path(m).map_or(crate::metrics::catalogue::Unit::Number, |c| c.unit);
        let ci = metric_ci95(unit, &xs);
        line.extend([num(ci.mean), num(ci.ci_lo), num(ci.ci_hi)]);
        let stat = JsonStat { mean: ci.mean, ci_lo: ci.ci_lo, ci_hi: ci.ci_hi };
        metrics.insert(m.as_str(), stat);
    }
    let names = plan.axes.iter().map(|a| a.name.as_str());
    let row = JsonRow {
        point,
        params: names.zip(params.iter().copied()).collect(),
        policy: &plan.policies[policy],
        replications: plan.replications,
        metrics,
    };
    (line, row)
}

/// Render the result files from a complete, run-ordered record list.
pub(crate) fn render(plan: &PlanInfo, records: &[RunRecord]) -> Result<Rendered> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> = vec!["point".into()];
    head.extend(plan.axes.iter().map(|a| csv_cell(&a.name)));
    head.extend(["policy".into(), "replications".into()]);
    for m in &plan.metrics {
        head.extend([format!("{m}_mean"), format!("{m}_ci_lo"), format!("{m}_ci_hi")].map(|h| csv_cell(&h)));
    }
    csv.write_record(&head)?;
    let mut rows = Vec::new();
    // Complete and run-ordered: each chunk of R records is one (point, policy).
    for (group, recs) in records.chunks(plan.replications as usize).enumerate() {
        let (line, row) = aggregate(plan, group, recs);
        csv.write_record(&line)?;
        rows.push(row);
    }
    let doc = JsonDoc {
        sweep: &plan.sweep,
        base: &plan.base,
        seed: plan.seed,
        replications: plan.replications,
        axes: &plan.axes,
        scenario_policies: &plan.scenario_policies,
        rows,
        // Ties need the per-replication values, which only the records hold: decided here.
        best: crate::sweep::best::best_sets(plan, records),
        rule: crate::sweep::stats::RULE,
        not_ranked: plan
            .metrics
            .iter()
            .zip(&plan.rules)
            .filter_map(|(m, r)| Some(NotRanked { metric: m, why: r.unranked.as_deref()? }))
            .collect(),
        sensitivity: crate::sweep::sensitivity::sensitivities(plan, records),
    };
    let mut json = serde_json::to_vec_pretty(&doc)?;
    json.push(b'\n');
    Ok(Rendered { json, csv: csv.into_inner()?, runs_csv: runs_csv(plan, records)? })
}

fn runs_csv(plan: &PlanInfo, records: &[RunRecord]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> = vec!["run".into(), "point".into()];
    head.extend(plan.axes.iter().map(|a| csv_cell(&a.name)));
    head.extend(["policy", "replication", "seed", "events", "requests"].map(String::from));
    head.extend(plan.metrics.iter().map(|m| csv_cell(m)));
    w.write_record(&head)?;
    for rec in records {
        let id = plan.run_id(rec.run);
        let mut line = vec![rec.run.to_string(), id.point.to_string()];
        line.extend(plan.points[id.point].iter().map(|x| num(*x)));
        line.extend([
            csv_cell(&plan.policies[id.policy]),
            id.replication.to_string(),
            rec.seed.to_string(),
            rec.events.to_string(),
            rec.requests.to_string(),
        ]);
        line.extend(rec.metrics.iter().map(|m| m.map_or(String::new(), num)));
        w.write_record(&line)?;
    }
    Ok(w.into_inner()?)
}

/// Write `plan.json`.
pub fn write_plan(dir: &Path, plan: &PlanInfo) -> Result<()> {
    crate::write_atomic(&dir.join(PLAN), &plan_bytes(plan)?)
}

/// Read `plan.json` and its checksum (to compare with the journal header's `plan`).
pub fn read_plan(dir: &Path) -> Result<(PlanInfo, String)> {
    let path = dir.join(PLAN);
    let bytes = crate::read_regular(&path)?;
    let plan: PlanInfo = serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", path.display()))?;
    let shape_ok = plan.replications > 0
        && !plan.policies.is_empty()
        && !plan.points.is_empty()
        && plan.points.iter().all(|p| p.len() == plan.axes.len());
    if !shape_ok {
        bail!("{}: the plan has no runs, or points that do not match its axes", path.display());
    }
    Ok((plan, checksum(&bytes)))
}

/// Write the result files into `dir`; returns their paths.
pub(crate) fn write_results(dir: &Path, files: &Rendered) -> Result<Vec<PathBuf>> {
    let out = [
        (dir.join("sweep.json"), &files.json),
        (dir.join("sweep.csv"), &files.csv),
        (dir.join("runs.csv"), &files.runs_csv),
    ];
    for (path, bytes) in &out {
        crate::write_atomic(path, bytes)?;
    }
    Ok(out.into_iter().map(|(p, _)| p).collect())
}

/// `recommendation.json`: the recommendation's fields, plus the per-condition table behind it.
/// A sweep's recommendation file, in its folder when the spec has a `decide` section.
const RECOMMENDATION: &str = "recommendation.json";

fn write_recommendation(dir: &Path, d: &crate::sweep::decide::SweepDecision) -> Result<PathBuf> {
    #[derive(Serialize)]
    struct File<'a> {
        #[serde(flatten)]
        recommendation: &'a brownout_core::decide::recommendation::Recommendation,
        conditions: Vec<crate::sweep::decide::ConditionOut<'a>>,
    }
    let file = File { recommendation: &d.recommendation, conditions: d.condition_table() };
    let path = dir.join(RECOMMENDATION);
    let mut bytes = serde_json::to_vec_pretty(&file)?;
    bytes.push(b'\n');
    crate::write_atomic(&path, &bytes)?;
    Ok(path)
}

/// What [`write_sweep`] wrote.
#[derive(Debug)]
pub struct SweepWritten {
    /// The result files, in the order written.
    pub files: Vec<PathBuf>,
    /// How many chart files (and `report.html`) were drawn.
    pub charts: usize,
    /// The charts drawn (their PNG paths, relative to the folder; each has its SVG beside it).
    pub chart_files: Vec<String>,
    /// The recommendation written to `recommendation.json`, if the sweep decides.
    pub recommendation: Option<brownout_core::decide::recommendation::Recommendation>,
}

/// Write a finished sweep's results into `dir`: `plan.json`, the result files rendered from
/// `records` (complete and in run order), then the sweep curves, heatmaps and the best setting
/// per policy, drawn from the files just written.
pub fn write_sweep(dir: &Path, plan: &PlanInfo, records: &[RunRecord]) -> Result<SweepWritten> {
    let files = render(plan, records)?;
    write_plan(dir, plan)?;
    let mut files = write_results(dir, &files)?;
    let decision = crate::sweep::decide::recommend(plan, records);
    if let Some(d) = &decision {
        files.push(write_recommendation(dir, d)?);
    }
    let chart_files = crate::pages::plot_dir(dir)?;
    let charts = chart_files.len();
    // Written in place: what an earlier render wrote that this one does not is removed.
    let mut written: BTreeSet<String> =
        chart_files.iter().flat_map(|c| [c.clone(), c.replace(".png", ".svg")]).collect();
    if decision.is_some() {
        written.insert(RECOMMENDATION.into());
    }
    crate::folder::prune(dir, |f| f.starts_with("charts/") || f == RECOMMENDATION, &written)?;
    Ok(SweepWritten { files, charts, chart_files, recommendation: decision.map(|d| d.recommendation) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use brownout_core::unstable::store::fixtures::{plan, rec};

    #[test]
    fn renders_mean_and_interval_by_hand() {
        // Values 1 and 3: mean 2, s = sqrt(2), half = t(0.975, 1) * s / sqrt(2) = 12.7062.
        let r = render(&plan(), &[rec(0, 1.0), rec(1, 3.0)]).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&r.json).unwrap();
        let m = &v["rows"][0]["metrics"]["m"];
        assert_eq!(m["mean"], 2.0);
        assert!((m["ci_hi"].as_f64().unwrap() - 14.7062).abs() < 1e-4);
        assert!((m["ci_lo"].as_f64().unwrap() + 10.7062).abs() < 1e-4);
        assert_eq!(v["rows"][0]["params"]["x"], 0.5);
        let csv = String::from_utf8(r.csv).unwrap();
        assert!(csv.starts_with("point,x,policy,replications,m_mean,m_ci_lo,m_ci_hi\n0,0.5,p,2,2,"));
        let runs = String::from_utf8(r.runs_csv).unwrap();
        let row = format!("1,0,0.5,p,1,{},10,5,3", rec(1, 3.0).seed);
        assert_eq!(runs.lines().nth(2), Some(row.as_str()));
    }

    #[test]
    fn sweep_json_lists_the_base_scenarios_policy_sets() {
        // The charts colour policies by name among these (charts::style::PolicyColors).
        let mut p = plan();
        p.scenario_policies = vec!["q".into(), "p".into()];
        let r = render(&p, &[rec(0, 1.0), rec(1, 3.0)]).unwrap();
        let v: crate::charts::sweep::SweepResult = serde_json::from_slice(&r.json).unwrap();
        assert_eq!(v.scenario_policies, ["q", "p"]);
    }

    #[test]
    fn torn_tail_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let header = Header { hash: "h".into(), shard: "0/1".into(), plan: "0".into() };
        let j = Journal::create(dir.path(), &header).unwrap();
        j.append(&rec(0, 1.0)).unwrap();
        drop(j);
        let path = dir.path().join(JOURNAL);
        let intact = std::fs::metadata(&path).unwrap().len();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"run\":1,").unwrap();
        let r = read_journal(dir.path(), &plan(), |_| Ok(())).unwrap();
        assert_eq!((r.header, r.records, r.valid_len), (Some(header.clone()), vec![rec(0, 1.0)], intact));
        let j = Journal::reopen(dir.path(), r.valid_len).unwrap();
        j.append(&rec(1, 3.0)).unwrap();
        assert_eq!(read_journal(dir.path(), &plan(), |_| Ok(())).unwrap().records, vec![rec(0, 1.0), rec(1, 3.0)]);
        assert!(Journal::create(dir.path(), &header).is_err());
    }
}
