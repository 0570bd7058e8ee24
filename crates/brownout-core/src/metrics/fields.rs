//! The `summary.json` field tables of docs/json.md, generated from the catalogue (name, unit,
//! direction, `summary.csv` column) and the summary types' own documentation (the meaning),
//! so the document cannot drift from the code: `tests/docs/json_fields.rs` compares them, and
//! `BROWNOUT_BLESS=1` rewrites the document's generated part.

use serde_json::Value;

use super::catalogue::{self, Direction, Metric, NOT_METRICS, Scope};
use super::summary::{ClassSummary, RunSummary};

/// The two tables, per class and per run, in Markdown: a row per catalogue metric (in
/// catalogue order), preceded by a row for each object it sits in (`latency_ms` before
/// `latency_ms.p95`), then the run's fields that are not metrics, with the reason.
pub fn markdown() -> String {
    let class = schemars::schema_for!(ClassSummary);
    let run = schemars::schema_for!(RunSummary);
    let mut out = String::new();
    for (scope, schema, heading) in [
        (Scope::Class, class.as_value(), "Per class (`runs[].classes[]`; per-class catalogue names)"),
        (Scope::Run, run.as_value(), "Per policy set (`runs[]`; per-run catalogue names)"),
    ] {
        out.push_str(&format!("#### {heading}\n\n"));
        out.push_str("| field | catalogue name | unit | better | `summary.csv` | meaning |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        let mut open: Vec<String> = Vec::new();
        for m in catalogue::of(scope) {
            let parents = parents(m.field);
            for p in parents.iter().filter(|p| !open.contains(p)) {
                out.push_str(&format!("| `{p}` | | | | | {} |\n", cell(&meaning(schema, p))));
            }
            open = parents;
            out.push_str(&row(m, &meaning(schema, m.field)));
        }
        if scope == Scope::Run {
            for (field, why) in NOT_METRICS {
                let text = format!("{} Not a metric: {why}.", sentence(&meaning(schema, field)));
                out.push_str(&format!("| `{field}` | – | | | | {} |\n", cell(&text)));
            }
        }
        for (list, items) in GRAPH_LISTS.iter().filter(|(l, _)| scope_of_list(l) == scope) {
            out.push_str(&list_rows(schema, list, items));
        }
        out.push('\n');
    }
    out.pop();
    out
}

/// The lists a run with a service graph adds (absent without one), each with its items'
/// fields in the order written: not metrics, since a metric names one figure per run or class
/// and these are one per dependency.
const GRAPH_LISTS: &[(&str, &[&str])] = &[
    ("causes_by_dependency", &["dependency", "causes"]),
    ("calls", &["step", "dependency", "optional", "outcomes", "cancelled", "critical_ms", "critical_share"]),
    (
        "dependencies",
        &[
            "name",
            "calls",
            "attempts",
            "amplification",
            "queue_wait_ms",
            "service_ms",
            "total_ms",
            "peak_in_flight",
            "mean_in_flight",
            "abandoned",
            "pool_saturated_fraction",
            "pool_wait_ms_mean",
            "breaker_open_fraction",
            "layers",
        ],
    ),
];

/// Which table a graph list belongs to.
fn scope_of_list(list: &str) -> Scope {
    if list == "dependencies" { Scope::Run } else { Scope::Class }
}

/// The rows of one graph list: the list, then each of its items' fields (`list[].field`).
fn list_rows(root: &Value, list: &str, items: &[&str]) -> String {
    let why = if list == "dependencies" {
        "Not a run's metric: one entry per dependency, with a service graph only; sweeps, `decide` and `diff` name an entry's figures `dependencies[NAME]/metric`, with the names in the second column."
    } else {
        "Not a metric: one entry per dependency or call, with a service graph only."
    };
    let text = format!("{} {why}", sentence(&meaning(root, list)));
    let mut out = format!("| `{list}` | – | | | | {} |\n", cell(&text));
    let item = object(
        root,
        root.get("properties").and_then(|p| p.get(list)).and_then(|l| l.get("items")).unwrap_or(&Value::Null),
    );
    for field in items {
        let doc = item.and_then(|o| o.get("properties")?.get(*field)?.get("description")?.as_str()).unwrap_or("");
        // The per-dependency metrics read from this field (`total_ms` gives `total_p95_ms`, ..).
        let named: Vec<String> = if list == "dependencies" {
            catalogue::of(Scope::Dependency)
                .filter(|m| m.field == *field || m.field.starts_with(&format!("{field}.")))
                .map(|m| format!("`{}`", m.name))
                .collect()
        } else {
            Vec::new()
        };
        let name = if named.is_empty() { "–".to_string() } else { named.join(", ") };
        out.push_str(&format!("| `{list}[].{field}` | {name} | | | | {} |\n", cell(doc)));
    }
    out
}

/// One metric's row.
fn row(m: &Metric, meaning: &str) -> String {
    let better = match m.direction {
        Direction::Higher => "higher",
        Direction::Lower => "lower",
        Direction::Neither => "neither",
    };
    let csv = m.csv.map_or(String::new(), |c| format!("`{}`", c.name));
    format!("| `{}` | `{}` | {} | {better} | {csv} | {} |\n", m.field, m.name, m.unit.name(), cell(meaning))
}

/// The objects a dotted field sits in, outermost first: `a.b.c` gives `a`, `a.b`.
fn parents(field: &str) -> Vec<String> {
    field.match_indices('.').map(|(i, _)| field[..i].to_string()).collect()
}

/// The documentation of the field at dotted `path` in `root`'s schema (empty if it has none).
fn meaning(root: &Value, path: &str) -> String {
    let mut at = root;
    let mut text = "";
    for name in path.split('.') {
        let Some(field) = object(root, at).and_then(|o| o.get("properties")?.get(name)) else { return String::new() };
        text = field.get("description").and_then(Value::as_str).unwrap_or("");
        at = field;
    }
    text.to_string()
}

/// The object schema `s` describes, through a `$ref` and an `Option`'s `anyOf`.
fn object<'a>(root: &'a Value, s: &'a Value) -> Option<&'a Value> {
    if s.get("properties").is_some() {
        return Some(s);
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next()?;
        return object(root, root.get("$defs")?.get(name)?);
    }
    let any = s.get("anyOf").or_else(|| s.get("oneOf"))?.as_array()?;
    any.iter().find_map(|x| object(root, x))
}

/// Documentation as one table cell: one line, a `|` escaped.
fn cell(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// `text` ending with a full stop.
fn sentence(text: &str) -> String {
    let t = text.trim_end();
    if t.ends_with('.') { t.to_string() } else { format!("{t}.") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_its_meaning_from_the_types() {
        let md = markdown();
        let class = schemars::schema_for!(ClassSummary);
        let run = schemars::schema_for!(RunSummary);
        for m in catalogue::CATALOGUE {
            let root = if m.scope() == Scope::Class { class.as_value() } else { run.as_value() };
            assert!(!meaning(root, m.field).is_empty(), "{} ({}) has no documentation", m.name, m.field);
            assert!(md.contains(&format!("| `{}` | `{}` |", m.field, m.name)), "{}", m.name);
        }
        // Read off summary/class.rs: the doc of `LatencyMs::p95` and of the optional
        // `fallback_answers`' `cost`.
        assert_eq!(meaning(class.as_value(), "latency_ms.p95"), "95th percentile.");
        assert!(meaning(class.as_value(), "fallback_answers.cost").starts_with("Their cost: uses times"));
        // The graph lists' items are read through the list's `items` (summary/deps.rs).
        assert!(md.contains("| `dependencies[].attempts` | `attempts` | | | | Attempts sent to it"), "{md}");
        // A latency block names every per-dependency figure read from it.
        assert!(md.contains("| `dependencies[].total_ms` | `total_mean_ms`, `total_p50_ms`, `total_p95_ms`"), "{md}");
        assert!(md.contains("| `dependencies[].name` | – |"), "{md}");
        assert!(md.contains("| `causes_by_dependency[].dependency` | – | | | | The dependency whose call"), "{md}");
    }
}
