//! The comparison table (terminal and Markdown) and the generated per-class verdict.

use super::escape::{md, md_code};
use crate::metrics::catalog::{CATALOG, Column, Direction, Metric, Unit};
use crate::metrics::summary::{ClassSummary, RunSummary, ScenarioSummary};

fn f1(v: f64) -> String {
    format!("{v:.1}")
}
fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}
fn int(v: f64) -> String {
    format!("{v:.0}")
}

/// How a table cell shows a value of `unit`.
fn fmt(unit: Unit) -> fn(f64) -> String {
    match unit {
        Unit::Fraction => pct,
        Unit::Count => int,
        Unit::Number | Unit::Ms | Unit::PerS | Unit::PerMin | Unit::Cost => f1,
    }
}

/// The catalogue's table columns, in order.
fn columns() -> Vec<(&'static Metric, Column)> {
    let mut cols: Vec<(&'static Metric, Column)> = CATALOG.iter().filter_map(|m| Some((m, m.column?))).collect();
    cols.sort_by_key(|(_, c)| c.pos);
    cols
}

/// Rows of cells for one class: header first. The best value per column carries a `*`
/// (none in a column whose metric has no better direction).
fn class_table(s: &ScenarioSummary, class: &str) -> Vec<Vec<String>> {
    let cols = columns();
    let mut out =
        vec![std::iter::once("policy".to_string()).chain(cols.iter().map(|(_, c)| c.title.to_string())).collect()];
    let pairs: Vec<(&RunSummary, &ClassSummary)> =
        s.runs.iter().filter_map(|r| r.classes.iter().find(|c| c.class == class).map(|c| (r, c))).collect();
    let get = |m: &Metric, col: &Column, r: &RunSummary, c: &ClassSummary| m.value(r, Some(c)).unwrap_or(0.0) / col.per;
    let best: Vec<Option<f64>> = cols
        .iter()
        .map(|(m, col)| {
            let vals = pairs.iter().map(|(r, c)| get(m, col, r, c));
            match m.direction {
                Direction::Higher => Some(vals.fold(f64::MIN, f64::max)),
                Direction::Lower => Some(vals.fold(f64::MAX, f64::min)),
                Direction::Neither => None,
            }
        })
        .collect();
    for (r, c) in &pairs {
        let mut row = vec![r.policy.clone()];
        for ((m, col), b) in cols.iter().zip(&best) {
            let v = get(m, col, r, c);
            let mark = if pairs.len() > 1 && Some(v) == *b { "*" } else { "" };
            row.push(format!("{}{mark}", fmt(m.unit)(v)));
        }
        out.push(row);
    }
    out
}

fn class_names(s: &ScenarioSummary) -> Vec<String> {
    s.runs.first().map(|r| r.classes.iter().map(|c| c.class.clone()).collect()).unwrap_or_default()
}

/// The terminal table: one block per class, columns aligned.
pub fn terminal(s: &ScenarioSummary) -> String {
    let mut out = String::new();
    for class in class_names(s) {
        let rows = class_table(s, &class);
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
    }
    out.push_str("(* = best in column)\n");
    if let Some(p) = s.key_phase() {
        out.push_str(&format!("\n-- {} --\n{}", p.title(), terminal(&s.phase_view(p))));
    }
    out
}

/// The same tables in Markdown.
pub fn markdown(s: &ScenarioSummary) -> String {
    let mut out = String::new();
    for class in class_names(s) {
        let rows = class_table(s, &class);
        out.push_str(&format!("\n### {}\n\n", md(&class)));
        out.push_str(&format!("| {} |\n", rows[0].join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(rows[0].len())));
        for row in &rows[1..] {
            out.push_str(&format!("| {} | {} |\n", md(&row[0]), row[1..].join(" | ")));
        }
    }
    out.push_str("\n`*` marks the best value in each column.\n");
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

/// One sentence per class: which policy maximised goodput, at what staleness and cost.
pub fn verdict(s: &ScenarioSummary) -> String {
    let mut out = String::new();
    for class in class_names(s) {
        let mut best: Option<(&RunSummary, &ClassSummary)> = None;
        let mut worst: Option<(&RunSummary, &ClassSummary)> = None;
        for r in &s.runs {
            if let Some(c) = r.classes.iter().find(|c| c.class == class) {
                if best.is_none_or(|(_, b)| c.goodput_per_s > b.goodput_per_s) {
                    best = Some((r, c));
                }
                if worst.is_none_or(|(_, w)| c.goodput_per_s < w.goodput_per_s) {
                    worst = Some((r, c));
                }
            }
        }
        if let (Some((br, bc)), Some((wr, wc))) = (best, worst) {
            out.push_str(&format!(
                "- **{}**: {} maximised goodput at {:.1}/s ({:.1}% answered within the deadline, \
                 {:.1}% from cache, staleness p95 {:.1} s, business cost {:.1}); the worst was {} at {:.1}/s.\n",
                md(&class),
                md_code(&br.policy),
                bc.goodput_per_s,
                bc.goodput_ratio * 100.0,
                bc.fallback_ratio * 100.0,
                bc.staleness_ms.p95 / 1000.0,
                bc.business_cost,
                md_code(&wr.policy),
                wc.goodput_per_s,
            ));
        }
    }
    out
}
