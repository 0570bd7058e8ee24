//! A sweep's recommendation: which decision setting (and policy set) to use, judged in every
//! condition. Candidates are (decision axes' values, policy set); each is evaluated per
//! condition point over the replications with [`crate::decide::evaluate`], combined by
//! [`crate::decide::worst_case`] and chosen by [`crate::decide::choose`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::grid::{AxisInfo, Kind, PlanInfo, Role};
use super::path;
use super::spec::SweepSpec;
use super::store::RunRecord;
use crate::decide::recommendation::{self, ConstraintOut, Label, Recommendation};
use crate::decide::{self, Bounds, Evaluated, ObjectiveRef, Samples, Sense};
use crate::metrics::decision::Ceiling;
use crate::report::replicate::answers_unranked;
use crate::scenario::{self, Decide, PolicySet, Scenario};

/// What the plan keeps to recommend after the runs (in `plan.json`, so `merge` can too).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DecidePlan {
    /// The objective and constraints.
    pub decide: Decide,
    /// The base scenario's policy sets (JSON), to print a recommended stack.
    pub sets: Vec<Value>,
    /// How each axis's values are written into the scenario.
    pub kinds: Vec<Kind>,
    /// The feasibility bound of each constraint no candidate in any condition could pass
    /// (`bounds`), as `run` and `tune` give them. Not hashed (set after the plan's hash,
    /// from the scenarios the hash covers); absent in plans written before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<Ceiling>,
}

/// One candidate in one condition, for the report's per-condition table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionRow {
    /// Index of the candidate (into [`SweepDecision::labels`]).
    pub candidate: usize,
    /// The condition axes' values.
    pub condition: BTreeMap<String, f64>,
    /// The evaluation in that condition.
    pub eval: Evaluated,
}

/// One row of the per-condition table as written to `recommendation.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionOut<'a> {
    /// The candidate's policy set.
    pub policy: &'a str,
    /// The candidate's decision setting.
    pub setting: &'a BTreeMap<String, f64>,
    /// The condition axes' values.
    pub condition: &'a BTreeMap<String, f64>,
    /// The objective in this condition.
    pub objective: Bounds,
    /// Every constraint holds in this condition.
    pub feasible: bool,
    /// Worst relative shortfall in this condition.
    pub violation: f64,
    /// Each constraint judged in this condition.
    pub constraints: Vec<ConstraintOut>,
}

/// The recommendation and the table behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepDecision {
    /// What `recommendation.json` holds.
    pub recommendation: Recommendation,
    /// Every candidate's policy and setting, in candidate order.
    pub labels: Vec<Label>,
    /// Every candidate in every condition.
    pub conditions: Vec<ConditionRow>,
    /// What was decided.
    pub decide: Decide,
}

type Located = (String, String);

/// The plan's metrics (the spec's, then `decide`'s measures not among them) and what it keeps
/// to decide. `decide` is the spec's, else the base scenario's; its objective may name a
/// decision axis.
pub(crate) fn plan(
    spec: &SweepSpec,
    base: &Scenario,
    json: &Value,
    axes: &[AxisInfo],
    kinds: &[Kind],
) -> Result<(Vec<String>, Option<DecidePlan>), Located> {
    let mut metrics = spec.metrics.clone();
    let Some(d) = spec.decide.as_ref().or(base.decide.as_ref()) else { return Ok((metrics, None)) };
    let resolve = |r: &ObjectiveRef| -> Result<(), (&'static str, String)> {
        match r {
            ObjectiveRef::Axis(name) => match axes.iter().find(|a| a.name == *name) {
                Some(a) if a.role() == Role::Decision => Ok(()),
                Some(_) => Err((
                    ".metric",
                    format!("axis \"{name}\" is a condition, not a decision: it cannot be the objective"),
                )),
                None => {
                    let known: Vec<String> =
                        axes.iter().filter(|a| a.role() == Role::Decision).map(|a| a.name.clone()).collect();
                    Err((
                        ".metric",
                        format!(
                            "unknown metric or decision axis \"{name}\" (decision axes: {}; metrics: {})",
                            known.join(", "),
                            crate::metrics::catalogue::names(crate::metrics::catalogue::Scope::Run)
                        ),
                    ))
                }
            },
            ObjectiveRef::Metric(m) => scenario::check_measure(base, m, &|c| base.classes.iter().any(|k| k.name == c)),
        }
    };
    let from_spec = spec.decide.is_some();
    decide::validate(d, &resolve).map_err(|(p, m)| {
        if from_spec { (format!("decide{p}"), m) } else { ("base".into(), format!("base scenario's decide{p}: {m}")) }
    })?;
    for m in measures(d) {
        if !metrics.contains(&m) {
            metrics.push(m);
        }
    }
    let sets = json.get("policies").and_then(Value::as_array).cloned().unwrap_or_default();
    Ok((metrics, Some(DecidePlan { decide: d.clone(), sets, kinds: kinds.to_vec(), bounds: Vec::new() })))
}

/// The feasibility bounds of `d`'s constraints over a sweep's points (`scenarios[p]` is point
/// p's, `dir` resolves their data files): a candidate must meet a constraint in every
/// condition, so a constraint's bound is the least, over the conditions, of the best bound
/// any decision setting reaches there (`decide::feasible`). Where every decision axis sets a
/// policy, the settings of one condition share its traffic and dependency, so one point per
/// condition is computed. No bound where any point has none (the reason of the first such).
pub(crate) fn bounds(
    d: &Decide,
    axes: &[AxisInfo],
    points: &[Vec<f64>],
    scenarios: &[Scenario],
    dir: &std::path::Path,
) -> Vec<Ceiling> {
    let conditions: Vec<usize> = (0..axes.len()).filter(|&i| axes[i].role() == Role::Condition).collect();
    let on_policies = axes.iter().all(|a| a.role() == Role::Condition || a.path.starts_with("policies["));
    // Points grouped by condition, in order of first appearance.
    let mut groups: Vec<(Vec<u64>, Vec<usize>)> = Vec::new();
    for (p, point) in points.iter().enumerate() {
        let key: Vec<u64> = conditions.iter().map(|&i| point[i].to_bits()).collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ps)) if !on_policies => ps.push(p),
            Some(_) => {}
            None => groups.push((key, vec![p])),
        }
    }
    let mut per_group: Vec<Vec<Ceiling>> = Vec::new();
    for (_, ps) in &groups {
        let mut best: Option<Vec<Ceiling>> = None;
        for &p in ps {
            let Some(s) = scenarios.get(p) else { return Vec::new() };
            let Ok(c) = crate::decide::feasible::ceilings_for(s, d, dir) else { return Vec::new() };
            best = Some(match best {
                None => c,
                // The best any setting of this condition reaches.
                Some(b) => {
                    b.into_iter().zip(c).map(|(x, y)| if y.best > x.best || x.best.is_nan() { y } else { x }).collect()
                }
            });
        }
        per_group.extend(best);
    }
    let Some(first) = per_group.first().cloned() else { return Vec::new() };
    first
        .into_iter()
        .enumerate()
        .map(|(k, c)| {
            let all: Vec<&Ceiling> = per_group.iter().filter_map(|g| g.get(k)).collect();
            if let Some(none) = all.iter().find(|x| x.best.is_nan()) {
                return (*none).clone();
            }
            let worst = all.into_iter().min_by(|a, b| a.best.total_cmp(&b.best)).cloned().unwrap_or(c);
            let mut out = worst;
            if groups.len() > 1 {
                out.why.push_str(", in the condition where it is lowest");
            }
            out
        })
        .collect()
}

/// The metric paths `d` reads: the objective (unless an axis), then each constraint's.
fn measures(d: &Decide) -> Vec<String> {
    let objective = Sense::of(d).and_then(|(_, o)| match ObjectiveRef::parse(o) {
        Ok(ObjectiveRef::Metric(m)) => Some(m.path()),
        _ => None,
    });
    let constraints = d.subject_to.iter().filter_map(|c| crate::decide::measure_of(c).ok().map(|m| m.path()));
    objective.into_iter().chain(constraints).collect()
}

impl SweepDecision {
    /// The per-condition table, candidate by candidate.
    pub fn condition_table(&self) -> Vec<ConditionOut<'_>> {
        let d = &self.decide;
        self.conditions
            .iter()
            .map(|c| {
                let l = &self.labels[c.candidate];
                ConditionOut {
                    policy: &l.policy,
                    setting: &l.setting,
                    condition: &c.condition,
                    objective: c.eval.objective,
                    feasible: c.eval.feasible,
                    violation: c.eval.violation,
                    constraints: recommendation::constraints_out(d, &c.eval.constraints),
                }
            })
            .collect()
    }
}

/// Where a candidate's objective comes from.
enum Source {
    Axis(usize),
    Metric(usize),
}

/// Recommend from a complete, run-ordered set of records; `None` without a `decide`.
pub fn recommend(info: &PlanInfo, records: &[RunRecord]) -> Option<SweepDecision> {
    let dp = info.decide.as_ref()?;
    let d = &dp.decide;
    let (sense, written) = Sense::of(d)?;
    let metric = |p: &str| info.metrics.iter().position(|m| m == p);
    let objective = match ObjectiveRef::parse(written).ok()? {
        ObjectiveRef::Axis(name) => Source::Axis(info.axes.iter().position(|a| a.name == name)?),
        ObjectiveRef::Metric(m) => Source::Metric(metric(&m.path())?),
    };
    let cons: Vec<usize> =
        d.subject_to.iter().map(|c| metric(&crate::decide::measure_of(c).ok()?.path())).collect::<Option<_>>()?;
    let decision: Vec<usize> = (0..info.axes.len()).filter(|&i| info.axes[i].role() == Role::Decision).collect();
    let r = info.replications as usize;
    let value =
        |run: usize, k: usize| records.get(run).and_then(|x| x.metrics.get(k).copied().flatten()).unwrap_or(f64::NAN);
    // Candidates in order of first appearance: point order, then policy order.
    let mut keys: Vec<(Vec<u64>, usize)> = Vec::new();
    let mut per: Vec<Vec<(usize, Evaluated, Samples)>> = Vec::new();
    for (p, point) in info.points.iter().enumerate() {
        for k in 0..info.policies.len() {
            let key = (decision.iter().map(|&i| point[i].to_bits()).collect::<Vec<_>>(), k);
            let c = keys.iter().position(|x| *x == key).unwrap_or_else(|| {
                keys.push(key);
                per.push(Vec::new());
                keys.len() - 1
            });
            let first = (p * info.policies.len() + k) * r;
            let s = Samples {
                objective: (0..r)
                    .map(|i| match objective {
                        Source::Axis(a) => point[a],
                        Source::Metric(m) => value(first + i, m),
                    })
                    .collect(),
                constraints: cons.iter().map(|&m| (0..r).map(|i| value(first + i, m)).collect()).collect(),
            };
            per[c].push((p, decide::evaluate(d, &s), s));
        }
    }
    let combined: Vec<Evaluated> = per
        .iter()
        .map(|v| decide::worst_case(sense, &v.iter().map(|(_, e, _)| e.clone()).collect::<Vec<_>>()))
        .collect();
    let samples: Vec<Samples> = per.iter().map(|v| worst_samples(sense, v)).collect();
    let rule = decide::Rule::new(d, &|p| info.margin_of(p));
    let unranked = match objective {
        Source::Metric(m) if super::answers_metric(&info.metrics[m]) => {
            fewer_answers(info, records, m, &keys, &per, &combined)
        }
        _ => vec![None; per.len()],
    };
    // Ranked only among the candidates whose answers are comparable; the others stay in the
    // tables, and a flag says why they could not win.
    let kept: Vec<usize> = (0..per.len()).filter(|&c| unranked[c].is_none()).collect();
    let pick = |v: &[Evaluated]| kept.iter().map(|&c| v[c].clone()).collect::<Vec<_>>();
    let kept_samples: Vec<Samples> = kept.iter().map(|&c| samples[c].clone()).collect();
    let mut choice = decide::choose(sense, &pick(&combined), &kept_samples, &rule);
    choice.recommended = choice.recommended.map(|c| kept[c]);
    choice.runner_up = choice.runner_up.map(|c| kept[c]);
    let labels: Vec<Label> = keys
        .iter()
        .zip(&per)
        .map(|((_, k), v)| {
            let point = &info.points[v[0].0];
            let setting = decision.iter().map(|&i| (info.axes[i].name.clone(), point[i])).collect();
            Label { policy: info.policies[*k].clone(), setting, stack: stack(info, dp, *k, point) }
        })
        .collect();
    let conditions = per
        .iter()
        .enumerate()
        .flat_map(|(c, v)| {
            v.iter().map(move |(p, e, _)| ConditionRow {
                candidate: c,
                condition: (0..info.axes.len())
                    .filter(|&i| info.axes[i].role() == Role::Condition)
                    .map(|i| (info.axes[i].name.clone(), info.points[*p][i]))
                    .collect(),
                eval: e.clone(),
            })
        })
        .collect();
    let mut recommendation = recommendation::build("sweep", d, &labels, &combined, &choice);
    // The free decision axes' ranges: a linked axis follows another and has no range of its own.
    let ranges: recommendation::Ranges = decision
        .iter()
        .filter(|&&i| info.axes[i].link.is_none())
        .map(|&i| {
            let values = info.points.iter().map(|p| p[i]);
            let lo = values.clone().fold(f64::INFINITY, f64::min);
            (info.axes[i].name.clone(), (lo, values.fold(f64::NEG_INFINITY, f64::max)))
        })
        .collect();
    recommendation.flags = recommendation::flags(d, &labels, &combined, &choice, &ranges, &rule);
    let left_out: Vec<(usize, &String)> =
        unranked.iter().enumerate().filter_map(|(c, w)| Some((c, w.as_ref()?))).collect();
    if let Some(&(c, why)) = left_out.first() {
        recommendation.flags.push(format!(
            "{} of {} candidates were not ranked on {}, a latency of answers: they answered fewer requests than \
             the candidate that answered the most, and answering less would look faster (e.g. {}: {why})",
            left_out.len(),
            labels.len(),
            recommendation.objective,
            setting_text(&labels[c].policy, &labels[c].setting),
        ));
    }
    recommendation.bounds = dp.bounds.clone();
    Some(SweepDecision { recommendation, labels, conditions, decide: d.clone() })
}

/// Why each candidate may not win on the objective, metric `m`, a latency of answers: in some
/// condition it answered fewer requests than the candidate that answered the most there, beyond
/// the run report's margin ([`answers_unranked`], the one rule). Only the candidates that can
/// win are judged (the feasible ones, or all when none is feasible); `None` for the others
/// and for records without answered counts (journals from before them).
fn fewer_answers(
    info: &PlanInfo,
    records: &[RunRecord],
    m: usize,
    keys: &[(Vec<u64>, usize)],
    per: &[Vec<(usize, Evaluated, Samples)>],
    combined: &[Evaluated],
) -> Vec<Option<String>> {
    let r = info.replications as usize;
    let counts = |p: usize, k: usize| -> Vec<f64> {
        let row = p * info.policies.len() + k;
        super::best::answered_of(records, &[row], r, m).remove(0)
    };
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let any_feasible = combined.iter().any(|e| e.feasible);
    let pool: Vec<usize> = (0..per.len()).filter(|&c| !any_feasible || combined[c].feasible).collect();
    let condition = |p: usize| -> Vec<u64> {
        (0..info.axes.len())
            .filter(|&i| info.axes[i].role() == Role::Condition)
            .map(|i| info.points[p][i].to_bits())
            .collect()
    };
    let mut out = vec![None; per.len()];
    for &c in &pool {
        for (p, _, _) in &per[c] {
            let mine = counts(*p, keys[c].1);
            // The most answered in this condition among the candidates that can win.
            let top = pool
                .iter()
                .flat_map(|&o| {
                    per[o]
                        .iter()
                        .filter(|(q, _, _)| condition(*q) == condition(*p))
                        .map(move |(q, _, _)| counts(*q, keys[o].1))
                })
                .filter(|xs| mean(xs).is_finite())
                .max_by(|a, b| mean(a).total_cmp(&mean(b)));
            let Some(top) = top.filter(|t| mean(t) > mean(&mine)) else { continue };
            if out[c].is_none() {
                out[c] = answers_unranked(&[top, mine]);
            }
        }
    }
    out
}

/// Per replication, the worst objective over the conditions: the paired samples behind a
/// worst-case comparison.
fn worst_samples(sense: Sense, per: &[(usize, Evaluated, Samples)]) -> Samples {
    let r = per.iter().map(|(_, _, s)| s.objective.len()).max().unwrap_or(0);
    let objective = (0..r)
        .map(|i| {
            let xs = per.iter().filter_map(|(_, _, s)| s.objective.get(i).copied()).filter(|x| !x.is_nan());
            xs.reduce(|a, b| if sense.better(a, b) { b } else { a }).unwrap_or(f64::NAN)
        })
        .collect();
    Samples { objective, constraints: Vec::new() }
}

/// Policy set `k` with the decision axes under `policies` set to `point`'s values, as RON.
fn stack(info: &PlanInfo, dp: &DecidePlan, k: usize, point: &[f64]) -> Option<String> {
    let name = Value::from(info.policies.get(k)?.as_str());
    let at = dp.sets.iter().position(|s| s.get("name") == Some(&name))?;
    let mut root = serde_json::json!({ "policies": dp.sets });
    for (i, a) in info.axes.iter().enumerate() {
        if a.role() != Role::Decision {
            continue;
        }
        let Ok(steps) = path::parse(&a.path) else { continue };
        // Axes on other policy sets do not touch this one.
        if let Ok(slot) = path::get_mut(&mut root, &steps) {
            *slot = dp.kinds.get(i)?.scenario_value(point[i]);
        }
    }
    let set: PolicySet = serde_json::from_value(root["policies"][at].take()).ok()?;
    ron::ser::to_string_pretty(&set, ron::ser::PrettyConfig::default()).ok()
}

/// A candidate as people read it: `tiered with authorize_share=0.8, refund_share=0.2`.
pub fn candidate_text(c: &recommendation::Candidate) -> String {
    setting_text(&c.policy, &c.setting)
}

/// `policy with axis=value, ...`, or the policy alone without a setting.
fn setting_text(policy: &str, setting: &BTreeMap<String, f64>) -> String {
    let setting: Vec<String> = setting.iter().map(|(k, v)| format!("{k}={v}")).collect();
    match setting.is_empty() {
        true => policy.to_string(),
        false => format!("{policy} with {}", setting.join(", ")),
    }
}

/// One constraint's line: `brownout:authorize/in_time_ratio >= 0.99: mean 0.995, bound 0.993 (holds)`.
pub fn constraint_text(c: &ConstraintOut) -> String {
    let bound = if c.op.starts_with('>') { c.lo } else { c.hi };
    let verdict = match c.verdict {
        decide::Verdict::Holds => "holds",
        decide::Verdict::Fails => "fails",
        decide::Verdict::Unsure => "unsure: more replications would tell",
    };
    let untested = if c.untested { ", one replication: untested" } else { "" };
    format!(
        "{} {} {}: mean {:.4}, one-sided 95 % bound {:.4} ({verdict}{untested})",
        c.metric, c.op, c.value, c.mean, bound
    )
}

/// Why the runner-up lost, in words.
pub fn lost_text(r: &Recommendation) -> Option<String> {
    let u = r.runner_up.as_ref()?;
    let why = match r.lost.as_ref()? {
        decide::Lost::Objective { by, significant: true } => format!("its objective is worse by {by:.4}"),
        decide::Lost::Objective { by, significant: false } => {
            format!("a tie: its objective differs by {by:.4}, within the replications' noise")
        }
        decide::Lost::Infeasible { constraint, by } => {
            let m = r.constraints.get(*constraint).map_or("a constraint", |c| c.metric.as_str());
            format!("it misses {m} by {by:.4} in its worst condition")
        }
        decide::Lost::MoreViolation { by } => format!("its worst-case violation is larger by {by:.4}"),
    };
    Some(format!("runner-up {}: {why}", candidate_text(u)))
}

/// The short recommendation printed after a sweep.
pub fn summary_text(r: &Recommendation) -> String {
    let sense = match r.sense {
        Sense::Minimize => "minimize",
        Sense::Maximize => "maximize",
    };
    let Some(c) = &r.recommended else { return format!("no recommendation ({sense} {}): no candidates", r.objective) };
    let verdict = if r.feasible {
        "meets every constraint in every condition"
    } else {
        "no candidate meets every constraint: this one has the least worst-case violation"
    };
    let mut out = format!("recommended ({sense} {}): {}; {verdict}", r.objective, candidate_text(c));
    for k in &r.constraints {
        out.push_str(&format!("\n  {}", constraint_text(k)));
    }
    if let Some(l) = lost_text(r) {
        out.push_str(&format!("\n  {l}"));
    }
    for f in recommendation::warnings(r) {
        out.push_str(&format!("\n  warning: {f}"));
    }
    out.push_str(&format!("\n  rule: {}", r.rule));
    out
}
