//! README's "## Performance" table quotes figures; BENCHMARKS.md's current section, written by
//! `scripts/benchmarks.sh`, is where they are measured. Every row of README's table must name
//! a measure of that section with the same command, and every number README quotes for it must
//! be one of the numbers measured there, so a figure cannot outlive a new measurement.

/// The rows (`| a | b | c |` cells, header and rule skipped) of the first table after the
/// line `start` in `text`, up to the next line beginning with `## `.
fn table_after(text: &str, start: &str, file: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines().skip_while(|l| l.trim() != start);
    assert!(lines.next().is_some(), "{file}: no line `{start}`");
    let rows: Vec<Vec<String>> = lines
        .take_while(|l| !l.starts_with("## "))
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim().trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect();
    assert!(rows.len() > 2, "{file}: no table under `{start}`");
    rows.into_iter().skip(2).collect()
}

/// The numbers written in `cell` (`3.67`, `1,087`, `57`), as written, digits grouped by
/// commas kept whole.
fn numbers(cell: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = cell.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let inner = (c == '.' || c == ',') && !cur.is_empty() && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if c.is_ascii_digit() || inner {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn numbers_are_read_as_written() {
    assert_eq!(numbers("57–73× faster"), ["57", "73"]);
    assert_eq!(numbers("3.67 M/s (median of 5; 3.54–3.75), +1.2 %"), ["3.67", "5", "3.54", "3.75", "1.2"]);
    assert_eq!(numbers("1,087,468 requests, then 2."), ["1,087,468", "2"]);
}

#[test]
fn every_performance_figure_in_the_readme_is_measured_in_benchmarks_md() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let bench = std::fs::read_to_string(format!("{root}/BENCHMARKS.md")).unwrap();
    let quoted = table_after(&readme, "## Performance", "README.md");
    let measured = table_after(&bench, "## Current figures", "BENCHMARKS.md");
    let mut wrong = Vec::new();
    for row in &quoted {
        let [measure, figure, command] = &row[..] else {
            panic!("README.md: a Performance row of {} cells", row.len())
        };
        let Some(m) = measured.iter().find(|m| m.first() == Some(measure)) else {
            wrong.push(format!("`{measure}`: no such measure in BENCHMARKS.md's current figures"));
            continue;
        };
        if m.get(2) != Some(command) {
            wrong.push(format!("`{measure}`: command `{command}`, BENCHMARKS.md has `{}`", m[2]));
        }
        let there = numbers(&m[1]);
        for n in numbers(figure) {
            if !there.contains(&n) {
                wrong.push(format!("`{measure}`: {n} is not measured (BENCHMARKS.md: {})", m[1]));
            }
        }
    }
    assert!(wrong.is_empty(), "README.md's Performance table against BENCHMARKS.md:\n{}", wrong.join("\n"));
}

/// BENCHMARKS.md holds the current figures; the history lives in docs/benchmarks-history.md.
/// A merge once brought the whole history back inside the current section: no section of
/// the one may be a section of the other.
#[test]
fn benchmarks_md_holds_no_section_of_the_history() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let current = std::fs::read_to_string(root.join("BENCHMARKS.md")).unwrap();
    let history = std::fs::read_to_string(root.join("docs/benchmarks-history.md")).unwrap();
    let past: std::collections::BTreeSet<&str> = history.lines().filter(|l| l.starts_with("## ")).collect();
    let both: Vec<&str> = current.lines().filter(|l| l.starts_with("## ") && past.contains(l)).collect();
    assert!(both.is_empty(), "sections of docs/benchmarks-history.md in BENCHMARKS.md: {both:#?}");
}
