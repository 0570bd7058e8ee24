//! What a run recommends: with a `decide` section, the policy set chosen by
//! [`crate::decide::choose`] over the replications and why; without one, the policy set that
//! wins on in-time success per class during the incident phase, ties as ties.

use super::escape::{md, md_code};
use super::table;
use crate::decide::recommendation::{self, Candidate, ConstraintOut, Label, Recommendation};
use crate::decide::{self, Lost, Measure, ObjectiveRef, Samples, Sense, Verdict};
use crate::metrics::catalogue::{self, Scope};
use crate::metrics::summary::{RunSummary, ScenarioSummary};
use crate::scenario::Scenario;

/// The replicated runs a decision reads: `whole[k * sets + p]` is policy set `p`'s whole-run
/// summary in replication `k`, `phases[ph][k * sets + p]` the same over phase `ph`, whose name
/// is `names[ph]`.
pub struct Replicated<'a> {
    /// Phase names, in `phases` order.
    pub names: &'a [String],
    /// Whole-run summaries, run index `k * sets + p`.
    pub whole: &'a [RunSummary],
    /// Per phase, summaries by run index.
    pub phases: &'a [Vec<RunSummary>],
}

/// Evaluate every policy set of `s` against its `decide` section (none without one) and choose:
/// the `Recommendation` `brownout run` stores in `summary.json` and writes to
/// `recommendation.json` (source `"run"`, each candidate's stack as pretty RON).
pub fn decide_run(s: &Scenario, runs: &Replicated) -> Option<Recommendation> {
    let d = s.decide.as_ref()?;
    let (sense, objective) = Sense::of(d)?;
    let sets = s.policies.len().max(1);
    let reps = runs.whole.len() / sets;
    let objective = match ObjectiveRef::parse(objective) {
        Ok(ObjectiveRef::Metric(m)) => Some(m),
        _ => None,
    };
    let measures: Vec<Option<Measure>> = d.subject_to.iter().map(|c| crate::decide::measure_of(c).ok()).collect();
    let read = |m: Option<&Measure>, i: usize| -> f64 {
        let phase = |name: &str| runs.names.iter().position(|n| n == name).map(|ph| &runs.phases[ph][i]);
        m.and_then(|m| m.read(&runs.whole[i], &phase)).unwrap_or(f64::NAN)
    };
    let samples: Vec<Samples> = (0..s.policies.len())
        .map(|p| {
            let at = |k: usize| k * sets + p;
            Samples {
                objective: (0..reps).map(|k| read(objective.as_ref(), at(k))).collect(),
                constraints: measures.iter().map(|m| (0..reps).map(|k| read(m.as_ref(), at(k))).collect()).collect(),
            }
        })
        .collect();
    let evals: Vec<_> = samples.iter().map(|x| decide::evaluate(d, x)).collect();
    let choice = decide::choose(sense, &evals, &samples, &decide::Rule::of(d, &s.margins()));
    let labels: Vec<Label> = s
        .policies
        .iter()
        .map(|p| Label {
            policy: p.name.clone(),
            setting: Default::default(),
            stack: ron::ser::to_string_pretty(&p.stack, ron::ser::PrettyConfig::default()).ok(),
        })
        .collect();
    Some(recommendation::build("run", d, &labels, &evals, &choice))
}

/// A number as the decision text shows it: percentages for fractions (by the metric name).
fn num(v: f64, fraction: bool) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if fraction {
        format!("{:.2} %", v * 100.0)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.4}")
    }
}

/// Whether the measure written `path` (`[phase:][class/]metric`) is a fraction.
fn is_fraction(path: &str) -> bool {
    let name = path.rsplit(['/', ':']).next().unwrap_or(path);
    [Scope::Class, Scope::Run]
        .iter()
        .filter_map(|&sc| catalogue::find(sc, name))
        .any(|m| m.unit == catalogue::Unit::Fraction)
}

fn constraint_row(c: &ConstraintOut) -> String {
    let f = is_fraction(&c.metric);
    let verdict = match (c.verdict, c.untested) {
        (_, true) => "untested (one seed)",
        (Verdict::Holds, _) => "holds",
        (Verdict::Fails, _) => "fails",
        (Verdict::Unsure, _) => "unsure",
    };
    format!(
        "| {} | {} {} | {} | {} .. {} | {} |\n",
        md_code(&c.metric),
        c.op,
        num(c.value, f),
        num(c.mean, f),
        num(c.lo, f),
        num(c.hi, f),
        verdict
    )
}

fn objective_text(r: &Recommendation, c: &Candidate) -> String {
    let f = is_fraction(&r.objective);
    let b = c.objective;
    if b.n < 2 {
        format!("{} {}", md_code(&r.objective), num(b.mean, f))
    } else {
        format!(
            "{} {} (one-sided 95 % bounds {} .. {})",
            md_code(&r.objective),
            num(b.mean, f),
            num(b.lo, f),
            num(b.hi, f)
        )
    }
}

/// Why the runner-up lost, in words.
fn lost_text(r: &Recommendation, lost: &Lost) -> String {
    match lost {
        Lost::Objective { by, significant: true } => {
            format!(
                "its {} is worse by {} (paired 95 % interval excludes zero)",
                md_code(&r.objective),
                num(*by, is_fraction(&r.objective))
            )
        }
        Lost::Objective { by, significant: false } => format!(
            "it ties on {} (difference {}, not distinguishable over the replications); the earlier policy set is named",
            md_code(&r.objective),
            num(*by, is_fraction(&r.objective))
        ),
        Lost::Infeasible { constraint, by } => {
            let c = r.runner_up.as_ref().and_then(|u| u.constraints.get(*constraint));
            match c {
                Some(c) => format!(
                    "it does not meet {} {} {} (short by {})",
                    md_code(&c.metric),
                    c.op,
                    num(c.value, is_fraction(&c.metric)),
                    num(*by, is_fraction(&c.metric))
                ),
                None => "it does not meet a constraint".into(),
            }
        }
        Lost::MoreViolation { by } => {
            format!("it misses its constraints by more (worst relative shortfall larger by {by:.4})")
        }
    }
}

/// The recommendation in Markdown (the subset `report.html` converts): the chosen policy set,
/// its objective, each constraint with its interval and verdict, the runner-up and why it lost.
pub fn recommendation_markdown(r: &Recommendation) -> String {
    let Some(c) = &r.recommended else { return "No policy set to recommend.\n".into() };
    let sense = if r.sense == Sense::Minimize { "minimize" } else { "maximize" };
    let mut out = if r.feasible {
        format!(
            "**Recommended: {}**: it meets every constraint and has the best objective ({sense} {}).\n\n",
            md_code(&c.policy),
            objective_text(r, c)
        )
    } else {
        format!(
            "**No policy set meets every constraint; closest: {}** (least worst-case shortfall; {sense} {}).\n\n",
            md_code(&c.policy),
            objective_text(r, c)
        )
    };
    for line in recommendation::warnings(r) {
        out.push_str(&format!("{}.\n\n", md(&capitalized(&line))));
    }
    if !c.constraints.is_empty() {
        out.push_str("| constraint | target | mean | one-sided 95 % bounds | verdict |\n|---|---|---|---|---|\n");
        for k in &c.constraints {
            out.push_str(&constraint_row(k));
        }
        out.push('\n');
    }
    if let (Some(u), Some(lost)) = (&r.runner_up, &r.lost) {
        out.push_str(&format!(
            "Runner-up {} ({}): {}.\n\n",
            md_code(&u.policy),
            objective_text(r, u),
            lost_text(r, lost)
        ));
    }
    if r.replications < 2 {
        out.push_str("One seed: no interval could be estimated, verdicts are untested; use `--replications`.\n");
    } else {
        out.push_str(&format!("Judged over {} replications; rule: {}.\n", r.replications, r.rule));
    }
    out
}

/// `text` with its first letter upper case.
fn capitalized(text: &str) -> String {
    let mut c = text.chars();
    c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// Without a `decide` section: per class, who wins on in-time success during the incident
/// phase ([`ScenarioSummary::key_phase`]; the whole run when there is none), ties as ties.
pub fn winners_markdown(s: &ScenarioSummary) -> String {
    let Some(metric) = catalogue::find(Scope::Class, "in_time_ratio") else { return String::new() };
    let (view, when) = match s.key_phase() {
        Some(p) => (s.phase_view(p), md(&p.title())),
        None => (s.clone(), "over the whole run".to_string()),
    };
    let mut out = format!("No `decide` section: the policy set that wins on in-time success {when}, per class.\n\n");
    for class in table::class_names(&view) {
        let sets: Vec<usize> =
            (0..view.runs.len()).filter(|&p| view.runs[p].classes.iter().any(|c| c.class == class)).collect();
        if sets.is_empty() {
            continue;
        }
        let (top, _) = table::ranking(&view, &sets, metric, &class);
        let names: Vec<String> = top
            .iter()
            .map(|&p| format!("{} at {}", md_code(&view.runs[p].policy), table::said(&view, p, metric, &class)))
            .collect();
        let line = match names.len() {
            0 => "no policy set has a value (no request)".to_string(),
            1 if sets.len() > 1 => format!("{} wins", names[0]),
            1 => format!("{} (the only policy set)", names[0]),
            _ => format!("{} tie", names.join(", ")),
        };
        out.push_str(&format!("- **{}**: {line}.\n", md(&class)));
    }
    if s.replications.is_none() && s.runs.len() > 1 {
        out.push_str("\nOne seed: only equal values tie; use `--replications` to test the differences.\n");
    }
    out
}

/// The decision section's Markdown: the recommendation, or the incident-phase winners.
pub fn markdown(s: &ScenarioSummary) -> String {
    match &s.decision {
        Some(r) => recommendation_markdown(r),
        None => winners_markdown(s),
    }
}

/// The same for a terminal: Markdown markers dropped.
pub fn terminal(s: &ScenarioSummary) -> String {
    let text = markdown(s).replace("**", "").replace('`', "");
    let mut out = String::from("\n== Recommendation ==\n");
    for line in text.lines() {
        if line.starts_with("|---") {
            continue;
        }
        let line = line.strip_prefix("| ").map_or(line.to_string(), |l| l.trim_end_matches(" |").replace(" | ", "  "));
        out.push_str(&line);
        out.push('\n');
    }
    out
}
