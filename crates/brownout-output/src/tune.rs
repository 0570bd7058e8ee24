//! A tune folder: the journal of evaluations (`tune-journal.jsonl`, one header line then one
//! line per candidate, in the sweep journal's checksummed format, flushed as each finishes),
//! and the result files rendered from the search: `recommendation.json`, `trace.csv`,
//! `charts/best.{png,svg}` (best feasible objective against runs), the sensitivity runs'
//! tornado charts `charts/sensitivity_*.{png,svg}` and `report.html`.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use brownout_core::decide::recommendation::{Candidate, Recommendation};
use brownout_core::decide::{Lost, Sense};
use brownout_core::tune::sensitivity::TuneSensitivity;
use brownout_core::tune::{Evaluation, Record, Space, Stop};

use crate::charts::style::{self, Unit};
use crate::charts::{Chart, Kind, LegendEntry, LinePanel, LinePanels, Mark, Rendered, Series, render};
use crate::html::{self, escape};
use crate::report::escape::csv_cell;
use crate::write_atomic;
use brownout_core::unstable::store::{frame, unframe};

/// The journal's file name.
pub const JOURNAL: &str = "tune-journal.jsonl";

/// An open tune journal.
pub struct TuneJournal {
    file: File,
}

/// Open `dir`'s journal for the search with hash `hash`: a new one, or with `resume` the one
/// there (its records returned, by setting), after checking it belongs to this search.
pub fn open(dir: &Path, hash: &str, resume: bool) -> Result<(TuneJournal, Vec<Record>)> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(JOURNAL);
    let header = frame("header", &hash)?;
    if std::fs::symlink_metadata(&path).is_err() {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&path)?;
        file.write_all(&header)?;
        return Ok((TuneJournal { file }, Vec::new()));
    }
    if !resume {
        bail!("{} already holds a tune journal: add --resume to continue it, or choose another --out", dir.display());
    }
    let bytes = crate::read_regular(&path)?;
    let (mut records, mut valid) = (Vec::new(), 0usize);
    // Only lines ending in a newline are complete: a kill tears the last one at most.
    for (i, line) in bytes.split_inclusive(|&b| b == b'\n').filter(|l| l.ends_with(b"\n")).enumerate() {
        let at = |why: String| anyhow::anyhow!("{}:{}: {why}", path.display(), i + 1);
        let content = &line[..line.len() - 1];
        if i == 0 {
            let h: String = serde_json::from_slice(unframe(content, "header").map_err(at)?)?;
            if h != hash {
                return Err(at(format!(
                    "cannot resume: this journal is for search {h}, this is {hash}: the spec, scenario or a data file changed"
                )));
            }
        } else {
            let json = unframe(content, "record").map_err(at)?;
            records.push(serde_json::from_slice::<Record>(json).map_err(|e| at(format!("bad record: {e}")))?);
        }
        valid += line.len();
    }
    let mut file = OpenOptions::new().write(true).open(&path)?;
    if valid == 0 {
        file.set_len(0)?;
        file.write_all(&header)?;
    } else {
        file.set_len(valid as u64)?;
    }
    use std::io::Seek;
    file.seek(std::io::SeekFrom::End(0))?;
    Ok((TuneJournal { file }, records))
}

impl TuneJournal {
    /// Append one evaluation as a single write, then flush, so it survives a kill.
    pub fn append(&mut self, r: &Record) -> Result<()> {
        self.file.write_all(&frame("record", r)?)?;
        self.file.flush()?;
        Ok(())
    }
}

/// The known figures of a resumed search, by setting.
pub fn known(records: &[Record]) -> Result<BTreeMap<Vec<u64>, brownout_core::decide::Samples>> {
    let mut out = BTreeMap::new();
    for r in records {
        let (values, samples) = r.read().map_err(|m| anyhow::anyhow!("{JOURNAL}: bad record: {m}"))?;
        out.insert(brownout_core::tune::key(&values), samples);
    }
    Ok(out)
}

/// The best feasible objective after each evaluation (`None` until one is feasible).
pub fn best_so_far(sense: Sense, done: &[Evaluation]) -> Vec<Option<f64>> {
    let mut best: Option<f64> = None;
    done.iter()
        .map(|e| {
            let m = e.eval.objective.mean;
            if e.eval.feasible && !m.is_nan() && best.is_none_or(|b| sense.better(m, b)) {
                best = Some(m);
            }
            best
        })
        .collect()
}

fn num(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map(|v| format!("{v}")).unwrap_or_default()
}

/// `trace.csv`: evaluation, runs so far, each knob, objective mean, feasible, violation, best
/// feasible objective so far.
pub fn trace_csv(space: &Space, done: &[Evaluation]) -> Vec<u8> {
    let sense = Sense::of(&space.spec.decide).map_or(Sense::Minimize, |(s, _)| s);
    let mut out = String::from("evaluation,runs");
    for d in &space.dims {
        out += &format!(",{}", csv_cell(&d.knob.name));
    }
    out += ",objective,feasible,violation,best_feasible\n";
    for (i, (e, b)) in done.iter().zip(best_so_far(sense, done)).enumerate() {
        out += &format!("{},{}", i + 1, e.runs);
        for v in &e.values {
            out += &format!(",{v}");
        }
        let violation = if e.eval.feasible { Some(0.0) } else { Some(e.eval.violation) };
        out += &format!(",{},{},{},{}\n", num(Some(e.eval.objective.mean)), e.eval.feasible, num(violation), num(b));
    }
    out.into_bytes()
}

fn trace_chart(space: &Space, done: &[Evaluation]) -> Chart {
    let sense = Sense::of(&space.spec.decide).map_or(Sense::Minimize, |(s, _)| s);
    let best = best_so_far(sense, done);
    let step: Vec<(f64, f64)> = done.iter().zip(&best).filter_map(|(e, b)| b.map(|b| (e.runs as f64, b))).collect();
    let feasible: Vec<(f64, f64)> = done
        .iter()
        .filter(|e| e.eval.feasible && e.eval.objective.mean.is_finite())
        .map(|e| (e.runs as f64, e.eval.objective.mean))
        .collect();
    let objective = Sense::of(&space.spec.decide).map_or(String::new(), |(_, o)| o.to_string());
    let line =
        |color, segments, dots| Series { color, dashed: false, segments, band: Vec::new(), dots, best: Vec::new() };
    let max_runs = done.last().map_or(1.0, |e| e.runs as f64);
    // The tuned policy set's own colour, as in the scenario's run and sweep charts.
    let colors = style::PolicyColors::new(space.base.policies.iter().map(|p| p.name.as_str()));
    let own = colors.of(&space.spec.policy);
    Chart {
        stem: "best".into(),
        title: format!("Best feasible {objective} against runs"),
        note: format!("{} candidates; dots: each feasible candidate", done.len()),
        width: 900,
        height: 420,
        legend: vec![
            LegendEntry { label: "best feasible so far".into(), color: own, mark: Mark::Box },
            LegendEntry { label: "feasible candidate".into(), color: style::REFERENCE, mark: Mark::Box },
        ],
        kind: Kind::Lines(LinePanels {
            x_label: "simulation runs".into(),
            x_unit: Unit::Plain,
            x_range: (0.0, max_runs.max(1.0)),
            shade: Vec::new(),
            marks: Vec::new(),
            panels: vec![LinePanel {
                title: objective.clone(),
                y_label: objective,
                unit: Unit::Plain,
                series: vec![line(style::REFERENCE, vec![], false), line(own, vec![step], true)]
                    .into_iter()
                    .chain(feasible.into_iter().map(|p| line(style::REFERENCE, vec![vec![p]], true)))
                    .collect(),
                hlines: Vec::new(),
            }],
        }),
    }
}

fn bounds(b: &brownout_core::decide::Bounds) -> String {
    format!(
        "{} (95 % one-sided bounds {} .. {}, n = {})",
        style::fmt_num(b.mean),
        style::fmt_num(b.lo),
        style::fmt_num(b.hi),
        b.n
    )
}

fn candidate_html(c: &Candidate) -> String {
    let setting: Vec<String> = c.setting.iter().map(|(k, v)| format!("{k} = {}", style::fmt_setting(*v))).collect();
    let mut out = format!(
        "<p>Setting: <b>{}</b>; objective {}; {}.</p>\n<table><tr><th>constraint</th><th>mean</th><th>lower</th><th>upper</th><th>verdict</th><th>margin</th></tr>\n",
        escape(&setting.join(", ")),
        escape(&bounds(&c.objective)),
        if c.feasible { "feasible".to_string() } else { format!("infeasible (worst shortfall {:.3})", c.violation) }
    );
    for k in &c.constraints {
        out += &format!(
            "<tr><td>{} {} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{:?}</td><td>{}</td></tr>\n",
            escape(&k.metric),
            escape(&k.op),
            k.value,
            style::fmt_num(k.mean),
            style::fmt_num(k.lo),
            style::fmt_num(k.hi),
            k.verdict,
            style::fmt_num(k.margin)
        );
    }
    out + "</table>\n"
}

fn lost_text(r: &Recommendation) -> String {
    match &r.lost {
        Some(Lost::Objective { by, significant: true }) => format!("its objective is worse by {}", style::fmt_num(*by)),
        Some(Lost::Objective { by, significant: false }) => {
            format!("its objective is worse by {}, within the replications' noise (a tie)", style::fmt_num(*by))
        }
        Some(Lost::Infeasible { constraint, by }) => {
            let m = r.runner_up.as_ref().and_then(|c| c.constraints.get(*constraint)).map_or("", |c| c.metric.as_str());
            format!("it fails constraint {m} by {}", style::fmt_num(*by))
        }
        Some(Lost::MoreViolation { by }) => format!("neither is feasible; its shortfall is larger by {by:.3}"),
        None => "-".into(),
    }
}

fn report_html(
    space: &Space,
    r: &Recommendation,
    (stop, done): (Stop, &[Evaluation]),
    chart_svg: &str,
    (sens, tornadoes): (Option<&TuneSensitivity>, &[Rendered]),
) -> String {
    let mut s = String::from("<h2>Recommendation</h2>\n");
    match &r.recommended {
        None => s += "<p>No candidate was evaluated within the budget.</p>\n",
        Some(c) => {
            s += &format!(
                "<p>{} <b>{}</b> of policy set <code>{}</code> ({} candidates, {} runs, {} replications each; stopped: {:?}).</p>\n",
                if r.feasible {
                    "Recommended:"
                } else {
                    "No feasible candidate within the budget (none met every constraint); least violation:"
                },
                escape(&format!("{:?} {}", r.sense, r.objective)),
                escape(&space.spec.policy),
                r.candidates,
                done.last().map_or(0, |e| e.runs),
                r.replications,
                stop
            );
            s += &crate::recommend_html::warnings_html(r);
            s += &candidate_html(c);
            if let Some(stack) = &c.stack {
                s += &format!("<p>Ready-to-paste stack:</p>\n{}", html::code_block(&format!("stack: {stack}")));
            }
        }
    }
    if let Some(u) = &r.runner_up {
        s += &format!("<h3>Runner-up</h3>\n<p>Why it lost: {}.</p>\n", escape(&lost_text(r)));
        s += &candidate_html(u);
    }
    if !r.rule.is_empty() {
        s += &format!("<p>Rule: {}.</p>\n", escape(&r.rule));
    }
    s += &sensitivity_html(sens, tornadoes);
    s += &format!(
        "<h2>Search trace</h2>\n<figure id=\"best\">\n{}\n<figcaption>best feasible objective against runs (<code>charts/best.png</code>, <code>trace.csv</code>)</figcaption>\n</figure>\n",
        chart_svg.find("<svg").map_or(chart_svg, |i| &chart_svg[i..]).trim()
    );
    html::page(&format!("tune {}", space.spec.name), &[s])
}

/// The report's "Sensitivity" section: what was run, then per metric the sweep's table and
/// tornado chart.
fn sensitivity_html(sens: Option<&TuneSensitivity>, tornadoes: &[Rendered]) -> String {
    let Some(sens) = sens else {
        return "<h2>Sensitivity</h2>\n<p>Not estimated (<code>--no-sensitivity</code>).</p>\n".into();
    };
    let mut s = format!(
        "<h2>Sensitivity</h2>\n<p>After the search, each knob was run at its range's low and high end, the other knobs at \
         the recommended setting, with the search's replications and seeds: {} settings, {} runs outside the budget. \
         A slope at the optimum would read flat; the swing over a knob's whole range says which knob matters.</p>\n",
        sens.settings, sens.runs
    );
    s += &html::sensitivity_tables(&sens.metrics);
    for c in tornadoes {
        s += &format!(
            "<figure>\n{}\n<figcaption><code>charts/{}.png</code></figcaption>\n</figure>\n",
            c.svg.find("<svg").map_or(c.svg.as_str(), |i| &c.svg[i..]).trim(),
            c.stem
        );
    }
    s
}

/// Write the result files into `dir`; returns their paths. `sens` is the sensitivity runs'
/// result (`None` when skipped).
pub fn write(
    dir: &Path,
    space: &Space,
    r: &Recommendation,
    stop: Stop,
    done: &[Evaluation],
    sens: Option<&TuneSensitivity>,
) -> Result<Vec<PathBuf>> {
    let chart = render(&trace_chart(space, done))?;
    let targets = r.recommended.as_ref().map_or(&[][..], |c| &c.constraints[..]);
    let tornadoes: Vec<Rendered> = sens
        .map_or(&[][..], |s| &s.metrics[..])
        .iter()
        .filter(|m| !m.rows.is_empty())
        .map(|m| render(&crate::charts::tornado::chart_of(&space.spec.name, space.spec.replications, m, targets)))
        .collect::<Result<_>>()?;
    let report = report_html(space, r, (stop, done), &chart.svg, (sens, &tornadoes));
    let mut files = vec![
        ("recommendation.json".to_string(), serde_json::to_vec_pretty(r)?),
        ("trace.csv".to_string(), trace_csv(space, done)),
        ("charts/best.png".to_string(), chart.png.clone()),
        ("charts/best.svg".to_string(), chart.svg.clone().into_bytes()),
        ("report.html".to_string(), report.into_bytes()),
    ];
    for c in &tornadoes {
        files.push((format!("charts/{}.png", c.stem), c.png.clone()));
        files.push((format!("charts/{}.svg", c.stem), c.svg.clone().into_bytes()));
    }
    let mut out = Vec::new();
    for (name, bytes) in files {
        let p = dir.join(name);
        write_atomic(&p, &bytes)?;
        out.push(p);
    }
    remove_other_tornadoes(dir, &tornadoes)?;
    Ok(out)
}

/// Remove the sensitivity charts in `dir/charts` other than `kept`: those of an earlier tune
/// in this folder (`--resume --no-sensitivity`, or a metric no longer asked for), which would
/// show sensitivity runs this tune did not make. The folder is locked and claimed for a tune,
/// so every chart in it is one brownout wrote.
fn remove_other_tornadoes(dir: &Path, kept: &[Rendered]) -> Result<()> {
    let charts = dir.join("charts");
    let Ok(entries) = std::fs::read_dir(&charts) else { return Ok(()) };
    for e in entries {
        let e = e.with_context(|| format!("listing {}", charts.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".png").or_else(|| name.strip_suffix(".svg")) else { continue };
        let other = stem.starts_with(crate::charts::tornado::STEM_PREFIX) && !kept.iter().any(|c| c.stem == stem);
        if other && e.file_type().is_ok_and(|t| t.is_file()) {
            std::fs::remove_file(e.path()).with_context(|| format!("removing {}", e.path().display()))?;
        }
    }
    Ok(())
}
