//! The comparison table (terminal and Markdown) and the generated per-class verdict.

use super::escape::{md, md_code};
use super::replicate::{self, Standing};
use crate::metrics::catalogue::{Column, Direction, Metric, Scope, Unit};
use crate::metrics::summary::{ClassInfo, ClassSummary, RunSummary, ScenarioSummary};

/// Class `name` of run `r`, looked for at `at` first: its place in the scenario, the same in
/// every run and in `setup.classes`. A search by name in every cell made the tables quadratic
/// in the classes; by name is the fallback (a class missing from a run).
fn class_at<'a>(r: &'a RunSummary, at: usize, name: &str) -> Option<&'a ClassSummary> {
    r.classes.get(at).filter(|c| c.class == name).or_else(|| r.classes.iter().find(|c| c.class == name))
}

/// The scenario's facts about class `name`, looked for at `at` first (see [`class_at`]).
fn info_at<'a>(s: &'a ScenarioSummary, at: usize, name: &str) -> Option<&'a ClassInfo> {
    s.setup.classes.get(at).filter(|c| c.name == name).or_else(|| s.setup.classes.iter().find(|c| c.name == name))
}

use super::expect::NO_VALUE;

fn f1(v: f64) -> String {
    if v.is_nan() { NO_VALUE.into() } else { format!("{v:.1}") }
}
fn pct(v: f64) -> String {
    if v.is_nan() { NO_VALUE.into() } else { format!("{:.1}%", v * 100.0) }
}
fn int(v: f64) -> String {
    if v.is_nan() { NO_VALUE.into() } else { format!("{v:.0}") }
}

/// How a table cell shows a value of `unit`.
fn fmt(unit: Unit) -> fn(f64) -> String {
    match unit {
        Unit::Fraction => pct,
        Unit::Count => int,
        Unit::Number | Unit::Ms | Unit::S | Unit::PerS | Unit::PerMin | Unit::Cost => f1,
    }
}

/// The catalogue's table columns, in order.
fn columns() -> Vec<(&'static Metric, Column)> {
    crate::metrics::catalogue::table_columns()
}

/// Whether `metric` (a catalogue name) says anything for `class` in this scenario: fallback,
/// staleness and cost figures only where the class has a fallback, one with an age, or a cost;
/// breaker figures only where some policy set has a breaker. Decided from the scenario's
/// facts, so a fallback that served nothing still shows its 0.
pub fn says_something(s: &ScenarioSummary, metric: &str, class: &str) -> bool {
    says(s, metric, s.setup.classes.iter().find(|c| c.name == class))
}

/// [`says_something`] with the class's facts found.
fn says(s: &ScenarioSummary, metric: &str, info: Option<&ClassInfo>) -> bool {
    let fact = |f: fn(&crate::metrics::summary::ClassInfo) -> bool| info.is_none_or(f);
    match metric {
        "fallback_ratio" => fact(|c| c.fallback),
        "staleness_p95_ms" => fact(|c| c.staleness),
        "business_cost" => fact(|c| c.cost),
        "transitions" => s.runs.iter().any(|r| r.breaker.is_some()),
        // Only a phase's figures follow a phase.
        "recovery_s" => s.runs.iter().any(|r| r.classes.iter().any(|c| c.recovery.is_some())),
        // A backlog left at the horizon is news; an empty one in every set is not.
        "backlog_queued" => s.runs.iter().any(|r| r.backlog_at_end.queued > 0),
        _ => true,
    }
}

/// Where a column's metric is read: the class for a per-class metric, the run otherwise.
fn place<'a>(m: &Metric, class: &'a str) -> Option<&'a str> {
    (m.scope() == Scope::Class).then_some(class)
}

/// One cell: the value (the mean and half-width of its 95 % interval when replicated) and the
/// mark of how the set stands: `*` better than every other set, `=` tied for best; no mark
/// without replications, where differences are not tested.
fn cell(s: &ScenarioSummary, p: usize, m: &Metric, col: &Column, (index, class): (usize, &str)) -> String {
    let show = fmt(m.unit);
    let at = place(m, class);
    let Some(reps) = &s.replications else {
        let r = &s.runs[p];
        let c = class_at(r, index, class);
        return show(m.value(r, c).unwrap_or(f64::NAN) / col.per);
    };
    let Some(i) = reps.runs.get(p).and_then(|r| replicate::interval(r, m.name, at)) else { return String::new() };
    if i.mean.is_nan() {
        // No value is never marked best or tied.
        return NO_VALUE.into();
    }
    let half = (i.ci95[1] - i.ci95[0]) / 2.0;
    let mark = match replicate::comparison(reps, m.name, at).map(|c| replicate::standing(c, &s.runs[p].policy)) {
        _ if s.runs.len() < 2 => "",
        Some(Standing::Best) => "*",
        Some(Standing::TiedBest) => "=",
        Some(Standing::Behind | Standing::Unranked) | None => "",
    };
    format!("{} ± {}{mark}", show(i.mean / col.per), show(half / col.per))
}

/// Rows of cells for one class: header first.
/// `index` is the class's place in the scenario.
fn class_table(s: &ScenarioSummary, index: usize, class: &str) -> Vec<Vec<String>> {
    let mut cols = columns();
    let info = info_at(s, index, class);
    cols.retain(|(m, _)| says(s, m.name, info));
    let mut out =
        vec![std::iter::once("policy".to_string()).chain(cols.iter().map(|(_, c)| c.title.to_string())).collect()];
    for (p, r) in s.runs.iter().enumerate().filter(|(_, r)| class_at(r, index, class).is_some()) {
        out.push(
            std::iter::once(r.policy.clone())
                .chain(cols.iter().map(|(m, col)| cell(s, p, m, col, (index, class))))
                .collect(),
        );
    }
    out
}

/// What the marks mean and the rule that set them, or why there are none; `code` quotes
/// symbols (Markdown's backticks).
fn legend(s: &ScenarioSummary, code: &str) -> String {
    let q = |x: &str| format!("{code}{x}{code}");
    match &s.replications {
        None => format!("one seed: differences not tested; use {}", q("--replications")),
        Some(r) => format!(
            "mean ± half-width of the 95 % interval over {} seeds; {} better than every other policy set, \
             {} tied for best; rule: {}, a difference within its margin is a tie ({})",
            r.count,
            q("*"),
            q("="),
            crate::stats::RULE,
            margins_text(s)
        ),
    }
}

/// Each table column's margin (`in time ±0.1 pt`), as the comparisons used it; a column
/// whose classes have different margins lists each.
pub fn margins_text(s: &ScenarioSummary) -> String {
    let Some(r) = &s.replications else { return String::new() };
    let mut parts = Vec::new();
    for (m, col) in columns() {
        let mut seen: Vec<f64> = Vec::new();
        for c in r.comparisons.iter().filter(|c| c.metric == m.name) {
            if !seen.iter().any(|x| x.to_bits() == c.margin.to_bits()) {
                seen.push(c.margin);
            }
        }
        if seen.is_empty() {
            continue;
        }
        let list: Vec<String> = seen.iter().map(|&x| format!("±{}", crate::stats::margin_text(x, m.unit))).collect();
        parts.push(format!("{} {}", col.title, list.join(" or ")));
    }
    parts.join(", ")
}

/// Why a column of class `class` is not ranked (no star, no tie), one line per column:
/// `answer p95 ms not ranked: not comparable: answered 1,200 vs 35`.
fn unranked_notes(s: &ScenarioSummary, index: usize, class: &str) -> Vec<String> {
    let Some(r) = &s.replications else { return Vec::new() };
    if s.runs.len() < 2 {
        return Vec::new();
    }
    let info = info_at(s, index, class);
    columns()
        .into_iter()
        .filter(|(m, _)| says(s, m.name, info))
        .filter_map(|(m, col)| {
            let c = replicate::comparison(r, m.name, place(m, class))?;
            let why = c.unranked.as_deref()?;
            let why = why.strip_prefix("not ranked: ").unwrap_or(why);
            Some(format!("{} not ranked: {why}", col.title))
        })
        .collect()
}

/// What a replicated run did, for the report's setup paragraph; `None` with one seed.
pub fn replications_note(s: &ScenarioSummary) -> Option<String> {
    let r = s.replications.as_ref()?;
    Some(format!(
        "Every policy set ran on the same {} seeds (the root seed and seeds derived from it); tables and \
         verdict give means over them, charts show the root seed's run.",
        r.count
    ))
}

pub(crate) fn class_names(s: &ScenarioSummary) -> Vec<String> {
    s.runs.first().map(|r| r.classes.iter().map(|c| c.class.clone()).collect()).unwrap_or_default()
}

/// The terminal table: one block per class, columns aligned.
pub fn terminal(s: &ScenarioSummary) -> String {
    let mut out = String::new();
    for (index, class) in class_names(s).into_iter().enumerate() {
        let rows = class_table(s, index, &class);
        let widths: Vec<usize> =
            (0..rows[0].len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
        out.push_str(&format!("\n== {class} ==\n"));
        for row in &rows {
            let line: Vec<String> =
                row.iter()
                    .enumerate()
                    .map(|(i, cell)| {
                        if i == 0 { format!("{cell:<w$}", w = widths[i]) } else { format!("{cell:>w$}", w = widths[i]) }
                    })
                    .collect();
            out.push_str(line.join("  ").trim_end());
            out.push('\n');
        }
        for note in unranked_notes(s, index, &class) {
            out.push_str(&format!("({note})\n"));
        }
    }
    out.push_str(&format!("({})\n", legend(s, "")));
    if let Some(p) = s.key_phase() {
        out.push_str(&format!("\n-- {} --\n{}", p.title(), terminal(&s.phase_view(p))));
    }
    out
}

/// The same tables in Markdown.
pub fn markdown(s: &ScenarioSummary) -> String {
    let mut out = String::new();
    for (index, class) in class_names(s).into_iter().enumerate() {
        let rows = class_table(s, index, &class);
        out.push_str(&format!("\n### {}\n\n", md(&class)));
        out.push_str(&format!("| {} |\n", rows[0].join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(rows[0].len())));
        for row in &rows[1..] {
            out.push_str(&format!("| {} | {} |\n", md(&row[0]), row[1..].join(" | ")));
        }
        let notes = unranked_notes(s, index, &class);
        if !notes.is_empty() {
            out.push('\n');
            for note in notes {
                out.push_str(&format!("{}.\n", md(&note)));
            }
        }
    }
    out.push_str(&format!("\n{}.\n", legend(s, "`")));
    if let Some(p) = s.key_phase() {
        out.push_str(&format!("\n**{}**\n{}", md(&p.title()), markdown(&s.phase_view(p))));
    }
    out
}

/// `Phases (from the scenario): brownout 20m-32m.`, or `(derived from the dependency's
/// timeline)`: the sentence reports give before the tables.
pub fn phases_line(s: &ScenarioSummary) -> String {
    let t = |x: f64| crate::engine::fmt_time((x * 1e9).round() as crate::engine::Time);
    let list: Vec<String> = s.phases.iter().map(|p| format!("{} {}-{}", p.name, t(p.start_s), t(p.end_s))).collect();
    let derived = s.phases.iter().any(|p| p.source == "derived");
    let how = if derived { "derived from the dependency's timeline" } else { "from the scenario" };
    format!("Phases ({how}): {}.", list.join(", "))
}

/// Policy set `p`'s figure: its mean over the replications, or its one run's value.
fn figure(s: &ScenarioSummary, p: usize, m: &Metric, class: &str) -> Option<f64> {
    match &s.replications {
        Some(reps) => replicate::interval(reps.runs.get(p)?, m.name, place(m, class)).map(|i| i.mean),
        None => {
            let r = s.runs.get(p)?;
            m.value(r, r.classes.iter().find(|c| c.class == class))
        }
    }
}

/// A figure as the verdict says it, divided by `per` (1000: milliseconds as seconds): with the
/// half-width of its interval when replicated.
fn said_per(s: &ScenarioSummary, p: usize, m: &Metric, class: &str, per: f64) -> String {
    let show = fmt(m.unit);
    let interval = s.replications.as_ref().and_then(|r| replicate::interval(r.runs.get(p)?, m.name, place(m, class)));
    match interval {
        Some(i) if i.mean.is_nan() => NO_VALUE.into(),
        Some(i) => format!("{} ± {}", show(i.mean / per), show((i.ci95[1] - i.ci95[0]) / 2.0 / per)),
        None => show(figure(s, p, m, class).unwrap_or(f64::NAN) / per),
    }
}

pub(crate) fn said(s: &ScenarioSummary, p: usize, m: &Metric, class: &str) -> String {
    said_per(s, p, m, class, 1.0)
}

/// The sets tied for best on `m` (best first) and the worst set not among them. Replicated:
/// the paired comparison decides; one seed: only equal values tie. A set without a value
/// (NaN) is ranked nowhere, neither best, tied nor worst; none has a value: no best at all
/// (an empty list).
pub(crate) fn ranking(s: &ScenarioSummary, sets: &[usize], m: &Metric, class: &str) -> (Vec<usize>, Option<usize>) {
    let value = |p: usize| figure(s, p, m, class).unwrap_or(f64::NAN);
    let better = |a: f64, b: f64| if m.direction == Direction::Lower { a < b } else { a > b };
    let valued: Vec<usize> = sets.iter().copied().filter(|&p| !value(p).is_nan()).collect();
    let sets = valued.as_slice();
    let Some(&first) = sets.first() else { return (Vec::new(), None) };
    let mut best = first;
    for &p in sets {
        if better(value(p), value(best)) {
            best = p;
        }
    }
    let comparison = s.replications.as_ref().and_then(|r| replicate::comparison(r, m.name, place(m, class)));
    if let Some(c) = comparison {
        best = sets.iter().copied().find(|&p| s.runs[p].policy == c.best).unwrap_or(best);
    }
    let tied = |p: usize| match comparison {
        Some(c) => p == best || replicate::standing(c, &s.runs[p].policy) == Standing::TiedBest,
        None => value(p) == value(best),
    };
    let mut top = vec![best];
    top.extend(sets.iter().copied().filter(|&p| p != best && tied(p)));
    let mut worst: Option<usize> = None;
    for &p in sets.iter().filter(|&&p| !tied(p)) {
        if worst.is_none_or(|w| better(value(w), value(p))) {
            worst = Some(p);
        }
    }
    (top, worst)
}

/// The whole run's verdict and, where the run has an incident phase ([`ScenarioSummary::key_phase`]),
/// the same verdict over that phase, so the report does not judge by the whole-run average alone.
pub fn verdicts(s: &ScenarioSummary) -> String {
    let mut out = verdict(s);
    if let Some(p) = s.key_phase() {
        out.push_str(&format!("\n**{}**:\n\n{}", md(&p.title()), verdict(&s.phase_view(p))));
    }
    out
}

/// One sentence per class on the table's first column (its headline): which policy set was
/// best, with its fallback share, staleness and cost; which tie with it; the worst.
/// Never names one set both best and worst.
pub fn verdict(s: &ScenarioSummary) -> String {
    let Some((headline, _)) = columns().into_iter().next() else { return String::new() };
    let extra = |name: &str| crate::metrics::catalogue::find(Scope::Class, name);
    let (Some(fallback), Some(stale), Some(cost)) =
        (extra("fallback_ratio"), extra("staleness_p95_ms"), extra("business_cost"))
    else {
        return String::new();
    };
    let mut out = String::new();
    for (index, class) in class_names(s).into_iter().enumerate() {
        let sets: Vec<usize> = (0..s.runs.len()).filter(|&p| class_at(&s.runs[p], index, &class).is_some()).collect();
        if sets.is_empty() {
            continue;
        }
        let (top, worst) = ranking(s, &sets, headline, &class);
        let title = md(headline.column.map_or(headline.name, |c| c.title));
        let Some(&b) = top.first() else {
            out.push_str(&format!("- **{}**: no policy set has a value for {title} (no request).\n", md(&class)));
            continue;
        };
        // The headline is the in-time ratio; these say what that success was made of and cost
        // (each only where the class has it).
        let info = info_at(s, index, &class);
        let shown = |m: &Metric| says(s, m.name, info);
        let parts: Vec<String> = [
            shown(fallback).then(|| format!("{} answered by a fallback", said(s, b, fallback, &class))),
            shown(stale).then(|| format!("staleness p95 {} s", said_per(s, b, stale, &class, 1000.0))),
            shown(cost).then(|| format!("business cost {}", said(s, b, cost, &class))),
        ]
        .into_iter()
        .flatten()
        .collect();
        let details = parts.join(", ");
        let paren = |text: String| if details.is_empty() { text } else { format!("{text} ({details})") };
        let who = |p: usize| md_code(&s.runs[p].policy);
        let mut line = if sets.len() == 1 {
            paren(format!("{} had {title} {}", who(b), said(s, b, headline, &class)))
        } else if top.len() == 1 {
            paren(format!("{} was best on {title} at {}", who(b), said(s, b, headline, &class)))
        } else {
            let names: Vec<String> =
                top.iter().map(|&p| format!("{} at {}", who(p), said(s, p, headline, &class))).collect();
            let tie = format!("{} tie for best on {title}", names.join(", "));
            if details.is_empty() { tie } else { format!("{tie} ({details} for {})", who(b)) }
        };
        if let Some(w) = worst {
            line.push_str(&format!("; the worst was {} at {}", who(w), said(s, w, headline, &class)));
        }
        out.push_str(&format!("- **{}**: {line}.\n", md(&class)));
    }
    if s.replications.is_none() && s.runs.len() > 1 {
        out.push_str("\nOne seed: differences not tested; use `--replications`.\n");
    }
    out
}
