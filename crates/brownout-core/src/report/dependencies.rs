//! The per-dependency table of the reports (issue 33): in a run with several dependencies,
//! each policy set's figures at each edge (calls, attempts, amplification, latency there, in
//! flight) and, per class, the causes each dependency is blamed for. Empty for a scenario with
//! one dependency, whose reports keep their bytes.

use super::escape::md;
use crate::metrics::summary::{Causes, DependencyFigures, RunSummary, ScenarioSummary};

/// "–" for a figure without a value, as every table shows it.
const NO_VALUE: &str = "–";

fn num(v: f64, decimals: usize) -> String {
    if v.is_nan() { NO_VALUE.into() } else { format!("{v:.decimals$}") }
}

const HEAD: [&str; 10] = [
    "policy",
    "dependency",
    "calls",
    "attempts",
    "ampl.",
    "wait p95 ms",
    "service p50 ms",
    "total p99 ms",
    "in flight mean",
    "peak",
];

/// The rows (header first), or none when no run has several dependencies.
fn rows(s: &ScenarioSummary) -> Vec<Vec<String>> {
    if s.runs.iter().all(|r| r.dependencies.len() < 2) {
        return Vec::new();
    }
    let mut rows = vec![HEAD.iter().map(|h| h.to_string()).collect()];
    for r in &s.runs {
        for d in &r.dependencies {
            rows.push(row(r, d));
        }
    }
    rows
}

fn row(r: &RunSummary, d: &DependencyFigures) -> Vec<String> {
    vec![
        r.policy.clone(),
        d.name.clone(),
        d.calls.to_string(),
        d.attempts.to_string(),
        num(d.amplification, 2),
        num(d.queue_wait_ms.p95, 1),
        num(d.service_ms.p50, 1),
        num(d.total_ms.p99, 1),
        num(d.mean_in_flight, 2),
        d.peak_in_flight.to_string(),
    ]
}

/// Per class and policy set, the non-zero causes each dependency is blamed for, each part
/// `pricing: late 412, dependency_error 3` with the dependency's name shown by `name`
/// (`(no call)` for the causes of no call).
fn blame_lines(s: &ScenarioSummary, name: impl Fn(&str) -> String) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for r in s.runs.iter().filter(|r| r.dependencies.len() >= 2) {
        for c in &r.classes {
            let parts: Vec<String> = c
                .causes_by_dependency
                .iter()
                .map(|d| {
                    format!("{}: {}", name(d.dependency.as_deref().unwrap_or("(no call)")), causes_text(&d.causes))
                })
                .collect();
            if !parts.is_empty() {
                out.push((c.class.clone(), r.policy.clone(), parts));
            }
        }
    }
    out
}

/// Per class with a plan and policy set, each call's share of the critical path:
/// `0: pricing 40.0%`.
fn critical_lines(s: &ScenarioSummary) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for r in s.runs.iter().filter(|r| r.dependencies.len() >= 2) {
        for c in r.classes.iter().filter(|c| !c.calls.is_empty()) {
            let shares = c
                .calls
                .iter()
                .map(|k| {
                    let v = if k.critical_share.is_nan() {
                        NO_VALUE.into()
                    } else {
                        format!("{:.1}%", k.critical_share * 100.0)
                    };
                    format!("{}: {} {v}", k.step, k.dependency)
                })
                .collect();
            out.push((c.class.clone(), r.policy.clone(), shares));
        }
    }
    out
}

/// The non-zero causes, by their JSON names.
fn causes_text(c: &Causes) -> String {
    let v = serde_json::to_value(c).expect("causes serialize");
    let fields = v.as_object().expect("an object");
    let parts: Vec<String> =
        fields.iter().filter_map(|(k, n)| n.as_u64().filter(|&n| n > 0).map(|n| format!("{k} {n}"))).collect();
    parts.join(", ")
}

/// The terminal section: the table with columns aligned, then the causes by dependency.
pub fn terminal(s: &ScenarioSummary) -> String {
    let rows = rows(s);
    if rows.is_empty() {
        return String::new();
    }
    let widths: Vec<usize> =
        (0..HEAD.len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::from("\n== dependencies ==\n");
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| if i < 2 { format!("{c:<w$}", w = widths[i]) } else { format!("{c:>w$}", w = widths[i]) })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    for (class, policy, parts) in blame_lines(s, str::to_string) {
        out.push_str(&format!("causes of {class} / {policy}: {}\n", parts.join("; ")));
    }
    for (class, policy, shares) in critical_lines(s) {
        out.push_str(&format!("critical path of {class} / {policy}: {}\n", shares.join(", ")));
    }
    out
}

/// The Markdown section (`## Dependencies`), or nothing with one dependency.
pub fn markdown(s: &ScenarioSummary) -> String {
    markdown_with(s, None)
}

/// As [`markdown`], the graph's edges read with `scenario` (the one the summary is of), so a
/// service's calls are listed too (`graph::markdown_with`).
pub fn markdown_with(s: &ScenarioSummary, scenario: Option<&crate::scenario::Scenario>) -> String {
    let rows = rows(s);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Dependencies\n\n");
    out.push_str(&format!("| {} |\n|{}\n", HEAD.join(" | "), "---|".repeat(HEAD.len())));
    for row in &rows[1..] {
        out.push_str(&format!("| {} | {} | {} |\n", md(&row[0]), md(&row[1]), row[2..].join(" | ")));
    }
    let blame = blame_lines(s, md);
    if !blame.is_empty() {
        out.push_str(
            "\nCauses by dependency (the failed call's, or for a late answer the call that ended the last step):\n\n",
        );
        for (class, policy, parts) in blame {
            out.push_str(&format!("- {} / {}: {}\n", md(&class), md(&policy), parts.join("; ")));
        }
    }
    let critical = critical_lines(s);
    if !critical.is_empty() {
        out.push_str("\nShare of the request's time on each call's critical path (step: dependency):\n\n");
        for (class, policy, shares) in critical {
            let shares: Vec<String> = shares.iter().map(|x| md(x)).collect();
            out.push_str(&format!("- {} / {}: {}\n", md(&class), md(&policy), shares.join(", ")));
        }
    }
    out.push_str(&super::graph::markdown_with(s, scenario));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::summary::DependencyCauses;

    #[test]
    fn causes_text_names_the_non_zero_causes() {
        let c = Causes { late: 4, dependency_error: 2, ..Causes::default() };
        assert_eq!(causes_text(&c), "dependency_error 2, late 4");
        let d = DependencyCauses { dependency: None, causes: c };
        assert_eq!(d.causes.total(), 6);
    }
}
