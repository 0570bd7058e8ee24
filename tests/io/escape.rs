//! Names are escaped for each output format (issue 15): a `|` cannot split a Markdown table
//! cell, raw HTML never reaches `report.md` or `report.html`, a CSV cell that is a name never
//! starts a formula (CSV keeps names otherwise exact, so they read back), the terminal, HTML
//! and SVG never receive a control character, and two names that share a file-name form both
//! keep their chart.
//!
//! The names are set straight on the parsed scenario, past validation, because this is the
//! defence at the output edge (validation may refuse some of them too).

use std::path::Path;
use std::process::Command;

use brownout::metrics::WindowRow;
use brownout::metrics::summary::ScenarioSummary;
use brownout::model::{Model, RunOptions};
use brownout::output;
use brownout::report::expect::check;
use brownout::runner::run_all;
use brownout::scenario::Scenario;

const ESC: char = '\u{1b}';

const CLASSES: [&str; 5] = ["a|b", "<script>alert(1)</script>", "=HYPERLINK(\"x\")", "\u{1b}[31mred", "a b"];
const POLICIES: [&str; 3] = ["p|1", "=cmd()", "<b>bold</b>\u{1b}]0;title\u{7}"];

fn scenario() -> Scenario {
    let classes: Vec<String> = CLASSES
        .iter()
        .chain(["A_B"].iter())
        .map(|c| format!("(name: {c:?}, arrivals: Poisson(rate_per_s: 10.0), deadline: \"2s\")"))
        .collect();
    let policies: Vec<String> = POLICIES.iter().map(|p| format!("(name: {p:?}, stack: [])")).collect();
    let text = format!(
        r#"Scenario(name: "esc", seed: 1, horizon: "4s", warmup: "1s", window: "1s",
            description: "<script>alert(1)</script> [x](javascript:alert(1)) \u{{1b}}[31m\n# not a heading",
            fleet: (workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "5s")),
            classes: [{}], dependency: (latency: Exponential(mean: "20ms")), policies: [{}])"#,
        classes.join(", "),
        policies.join(", ")
    );
    ron::from_str(&text).unwrap()
}

fn results() -> (Scenario, ScenarioSummary, Vec<WindowRow>) {
    let s = scenario();
    let model = Model::build(&s, 1, Path::new(".")).unwrap();
    let r = run_all(&model, RunOptions::new().with_timeseries(true), false).expect("runs");
    (s, r.summary, r.rows)
}

/// Cells of a Markdown table row, split at `|` not escaped by a backslash.
fn md_cells(row: &str) -> usize {
    let mut n = 0;
    let mut prev = ' ';
    for c in row.chars() {
        if c == '|' && prev != '\\' {
            n += 1;
        }
        prev = c;
    }
    n - 1
}

/// Places where `<` opens a tag: not escaped by a backslash, followed by a letter or `/`, and
/// outside a code span (whose text Markdown shows literally: a run of n backticks opens one,
/// the next run of exactly n closes it).
fn raw_html(md: &str) -> Vec<String> {
    let c: Vec<char> = md.chars().collect();
    let mut out = Vec::new();
    let mut code: Option<usize> = None;
    let mut i = 0;
    while i < c.len() {
        if c[i] == '`' {
            let n = c[i..].iter().take_while(|&&x| x == '`').count();
            code = match code {
                None => Some(n),
                Some(open) if open == n => None,
                keep => keep,
            };
            i += n;
            continue;
        }
        let opens_tag =
            c[i] == '<' && (i == 0 || c[i - 1] != '\\') && c.get(i + 1).is_some_and(|n| n.is_alphabetic() || *n == '/');
        if code.is_none() && opens_tag {
            out.push(c[i..(i + 12).min(c.len())].iter().collect());
        }
        i += 1;
    }
    out
}

#[test]
fn names_are_escaped_in_report_md() {
    let (s, summary, _) = results();
    let md = output::report_md(&s, &summary, &check(&summary, &s.expect), &[]);
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert!(!rows.is_empty());
    // Every row of a table has its header's cell count (columns that say nothing for a
    // scenario are left out, so the count is the header's, not a fixed number).
    let lines: Vec<&str> = md.lines().collect();
    for table in lines.split(|l| !l.starts_with('|')).filter(|t| !t.is_empty()) {
        let header = md_cells(table[0]);
        assert!(header >= 2, "{}", table[0]);
        for r in table {
            assert_eq!(md_cells(r), header, "{r}");
        }
    }
    assert_eq!(raw_html(&md), Vec::<String>::new(), "raw HTML in report.md:\n{md}");
    assert!(!md.contains(ESC) && !md.contains('\u{7}'), "control characters in report.md");
    // The escaped names are still there, readable.
    assert!(md.contains("a\\|b"), "{md}");
    // Issue 32: the description is escaped like a name, its link inert, its lines plain text.
    assert!(!md.contains("[x](javascript"), "a live link in report.md:\n{md}");
    assert!(md.contains("\\[x\\](javascript:alert(1))") && md.contains("\n\\# not a heading"), "{md}");
}

#[test]
fn names_are_escaped_in_report_html() {
    let (s, summary, rows) = results();
    let dir = tempfile::tempdir().unwrap();
    output::pages::write_run(dir.path(), &s.description, &summary, &rows).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(!html.contains("<script>") && !html.contains("<b>bold"), "raw HTML in report.html");
    assert!(html.contains("&lt;script&gt;"));
    assert!(!html.contains(ESC), "control characters in report.html");
    for e in std::fs::read_dir(dir.path().join("charts")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "svg") {
            let svg = std::fs::read_to_string(&p).unwrap();
            assert!(!svg.contains(ESC) && !svg.contains("<script"), "{}", p.display());
        }
    }
    // The table keeps one cell per column: a `|` in a name does not split it. Every row of
    // a table has its header's cell count.
    let cells = |row: &str| row.matches("<td>").count() + row.matches("<th>").count();
    for table in html.split("<table").skip(1) {
        let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("<tr>")).collect();
        let Some(first) = rows.first() else { continue };
        for row in &rows {
            assert_eq!(cells(row), cells(first), "{row}");
        }
    }
}

/// Every name cell of a CSV file (columns `policy` and `class`).
fn name_cells(bytes: &[u8]) -> Vec<String> {
    let mut r = csv::Reader::from_reader(bytes);
    let head = r.headers().unwrap().clone();
    let cols: Vec<usize> =
        head.iter().enumerate().filter(|(_, h)| ["policy", "class"].contains(h)).map(|(i, _)| i).collect();
    assert_eq!(cols.len(), 2);
    r.records()
        .flat_map(|rec| cols.iter().map(move |&i| rec.as_ref().unwrap()[i].to_string()).collect::<Vec<_>>())
        .collect()
}

#[test]
fn names_never_start_a_formula_in_csv() {
    let (_, summary, rows) = results();
    for (file, bytes) in [
        ("summary.csv", output::summary_csv(&summary).unwrap()),
        ("timeseries.csv", output::timeseries_csv(&rows).unwrap()),
    ] {
        let cells = name_cells(&bytes);
        assert!(!cells.is_empty());
        for c in &cells {
            assert!(!c.starts_with(['=', '+', '-', '@', '\t', '\r']), "{file}: formula cell {c:?}");
        }
        assert!(cells.contains(&"'=cmd()".to_string()), "{file}: {cells:?}");
    }
}

#[test]
fn saved_time_series_reads_back_the_same_names() {
    let (_, summary, rows) = results();
    let dir = tempfile::tempdir().unwrap();
    output::write_atomic(&dir.path().join("summary.json"), &output::summary_json(&summary).unwrap()).unwrap();
    output::write_atomic(&dir.path().join("timeseries.csv"), &output::timeseries_csv(&rows).unwrap()).unwrap();
    let (_, back) = output::pages::load_run(dir.path()).unwrap();
    let names = |rows: &[WindowRow]| rows.iter().map(|r| (r.policy.clone(), r.class.clone())).collect::<Vec<_>>();
    assert_eq!(names(&back), names(&rows));
}

#[test]
fn colliding_class_names_keep_both_charts() {
    let (_, summary, rows) = results();
    let dir = tempfile::tempdir().unwrap();
    let paths = output::pages::write_run(dir.path(), "", &summary, &rows).unwrap();
    let goodput: Vec<&String> = paths.iter().filter(|p| p.starts_with("charts/goodput_")).collect();
    let distinct: std::collections::BTreeSet<&String> = goodput.iter().copied().collect();
    assert_eq!(goodput.len(), CLASSES.len() + 1, "{paths:?}");
    assert_eq!(distinct.len(), goodput.len(), "two classes share a chart file: {paths:?}");
    for p in &paths {
        assert!(dir.path().join(p).exists(), "{p}");
    }
}

#[test]
fn terminal_never_receives_control_characters() {
    // An escape sequence in a file name comes back in the error message.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad\u{1b}[2J\u{1b}]0;pwned\u{7}.ron");
    std::fs::write(&path, "Scenario(").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_brownout")).arg("check").arg(&path).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad"), "{err}");
    assert!(!err.contains(ESC) && !err.contains('\u{7}'), "control characters reach the terminal: {err:?}");
}
