//! Every ```ron block in README.md is checked: a whole scenario (```ron) must load (what
//! `brownout check` does) and pass its own expectations when run; a fragment
//! (```ron fragment TYPE, e.g. `limits: (...)`) must parse as that scenario type.

use std::path::Path;

use brownout::model::{Model, RunOptions};
use brownout::report::expect::check;
use brownout::runner::run_all;
use brownout::scenario;

/// A fenced block: its info string after "ron", its text and its line in README.md.
struct Block {
    info: String,
    text: String,
    line: usize,
}

fn ron_blocks(readme: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in readme.lines().enumerate() {
        match open.as_mut() {
            None => {
                if let Some(info) = line.trim_start().strip_prefix("```ron") {
                    open = Some(Block { info: info.trim().to_string(), text: String::new(), line: i + 1 });
                }
            }
            Some(_) if line.trim_start().starts_with("```") => blocks.push(open.take().unwrap()),
            Some(b) => {
                b.text.push_str(line);
                b.text.push('\n');
            }
        }
    }
    assert!(open.is_none(), "README.md: an unclosed ```ron block");
    blocks
}

fn parse_as<T: serde::de::DeserializeOwned>(text: &str) -> Result<(), String> {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str::<T>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Parse `text` as the scenario type `ty`; None for a type this test does not know.
fn parse_fragment(ty: &str, text: &str) -> Option<Result<(), String>> {
    Some(match ty {
        "Limits" => parse_as::<scenario::Limits>(text),
        "Fleet" => parse_as::<scenario::Fleet>(text),
        "Class" => parse_as::<scenario::Class>(text),
        "Dependency" => parse_as::<scenario::Dependency>(text),
        "Catalogue" => parse_as::<scenario::Catalogue>(text),
        "Business" => parse_as::<scenario::Business>(text),
        "PolicySet" => parse_as::<scenario::PolicySet>(text),
        "Layer" => parse_as::<scenario::Layer>(text),
        "Expectation" => parse_as::<scenario::Expectation>(text),
        "Phases" => parse_as::<Vec<scenario::Phase>>(text),
        "Decide" => parse_as::<scenario::Decide>(text),
        "PolicySpec" => parse_as::<brownout::policy::PolicySpec>(text),
        _ => return None,
    })
}

/// A fragment as written in prose, `field: value,`, reduced to the value.
fn fragment_value(text: &str) -> &str {
    let t = text.trim();
    let t = match t.split_once(':') {
        Some((field, rest)) if field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => rest,
        _ => t,
    };
    t.trim().trim_end_matches(',')
}

fn run_whole(block: &Block, dir: &Path) {
    let path = dir.join(format!("readme-line-{}.ron", block.line));
    std::fs::write(&path, &block.text).unwrap();
    let s = scenario::load(&path).unwrap_or_else(|e| panic!("README.md:{}: {e}", block.line));
    assert!(!s.expect.is_empty(), "README.md:{}: a whole example states expectations", block.line);
    let model = Model::build(&s, s.seed, dir).unwrap();
    let result = run_all(&model, RunOptions::new(), true).unwrap_or_else(|e| panic!("README.md:{}: {e}", block.line));
    for c in check(&result.summary, &s.expect) {
        assert!(c.passed, "README.md:{}: {} (measured {})", block.line, c.statement, c.actual);
    }
}

#[test]
fn every_ron_block_in_the_readme_checks_and_whole_scenarios_pass_their_expectations() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let blocks = ron_blocks(&readme);
    let dir = tempfile::tempdir().unwrap();
    let (mut whole, mut fragments) = (0, 0);
    for block in &blocks {
        let words: Vec<&str> = block.info.split_whitespace().collect();
        match words.as_slice() {
            [] => {
                run_whole(block, dir.path());
                whole += 1;
            }
            ["fragment", ty] => {
                let parsed = parse_fragment(ty, fragment_value(&block.text))
                    .unwrap_or_else(|| panic!("README.md:{}: unknown fragment type {ty}", block.line));
                if let Err(e) = parsed {
                    panic!("README.md:{}: not a valid {ty}: {e}", block.line);
                }
                fragments += 1;
            }
            _ => panic!(
                "README.md:{}: mark a ron block ```ron or ```ron fragment TYPE, not {:?}",
                block.line, block.info
            ),
        }
    }
    assert!(whole >= 1 && fragments >= 1, "{whole} whole blocks, {fragments} fragments");
}

#[test]
fn a_fragment_of_the_wrong_type_is_refused() {
    // The fragment check can fail: a limits excerpt is not a Fleet, and a misspelt field is
    // refused.
    let limits = "limits: (max_memory: \"4GiB\", max_events: 20000000000),";
    assert!(parse_fragment("Limits", fragment_value(limits)).unwrap().is_ok());
    assert!(parse_fragment("Fleet", fragment_value(limits)).unwrap().is_err());
    assert!(parse_fragment("Limits", "(max_memroy: \"4GiB\")").unwrap().is_err());
}

// ---- figures: the README's grocery section quotes the golden report, never stale copies ----

/// The golden report a README table or figure comes from.
fn golden_report(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/golden").join(name).join("report.md");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The table of `class` in the report's comparison, over the whole run (`phase` None) or in
/// the phase whose section starts `**during PHASE`.
fn golden_table(report: &str, phase: Option<&str>, class: &str) -> Option<String> {
    let lines: Vec<&str> = report.lines().collect();
    let mut i = lines.iter().position(|l| *l == "## Comparison")?;
    if let Some(p) = phase {
        let start = format!("**during {p} ");
        i += lines[i..].iter().position(|l| l.starts_with(&start))?;
    }
    let heading = format!("### {class}");
    i += lines[i..].iter().position(|l| *l == heading)?;
    let first = i + lines[i..].iter().position(|l| l.starts_with('|'))?;
    let n = lines[first..].iter().take_while(|l| l.starts_with('|')).count();
    Some(lines[first..first + n].join("\n"))
}

/// A golden block's marker: the golden report's name, the phase (None: the whole run), the class.
type Marker = (String, Option<String>, String);

/// README blocks `<!-- golden NAME[ PHASE]: CLASS -->` ... `<!-- /golden -->`: (the marker's
/// fields, the line range of the text between the markers).
fn golden_blocks(readme: &str) -> Vec<(Marker, std::ops::Range<usize>)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(spec) = l.strip_prefix("<!-- golden ").and_then(|r| r.strip_suffix(" -->")) else { continue };
        let (source, class) = spec.split_once(": ").unwrap_or_else(|| panic!("README.md:{}: `{l}`", i + 1));
        let mut words = source.split_whitespace();
        let name = words.next().unwrap().to_string();
        let phase = words.next().map(str::to_string);
        let end = i + lines[i..].iter().position(|l| *l == "<!-- /golden -->").expect("a closed golden block");
        out.push(((name, phase, class.to_string()), i + 1..end));
    }
    out
}

#[test]
fn the_readme_tables_are_the_golden_reports_tables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = golden_blocks(&readme);
    assert!(blocks.len() >= 3, "README.md quotes the grocery tables: {} blocks", blocks.len());
    let mut lines: Vec<String> = readme.lines().map(str::to_string).collect();
    // Replace from the last block up, so earlier ranges stay valid.
    for ((name, phase, class), range) in blocks.iter().rev() {
        let want = golden_table(&golden_report(name), phase.as_deref(), class)
            .unwrap_or_else(|| panic!("docs/golden/{name}/report.md has no {class} table for {phase:?}"));
        let have = lines[range.clone()].join("\n");
        if std::env::var_os("BROWNOUT_BLESS").is_some() {
            lines.splice(range.clone(), want.lines().map(str::to_string));
        } else {
            assert_eq!(
                have,
                want,
                "README.md:{}: the {class} table differs from docs/golden/{name}/report.md \
                 (BROWNOUT_BLESS=1 cargo test --profile ci --test docs readme:: rewrites it)",
                range.start + 1
            );
        }
    }
    if std::env::var_os("BROWNOUT_BLESS").is_some() {
        std::fs::write(root.join("README.md"), lines.join("\n") + "\n").unwrap();
    }
}

/// The figures of `text`: (value, decimals, is a percentage), commas of thousands removed.
fn figures(text: &str) -> Vec<(f64, usize, bool, String)> {
    figures_in(text, false)
}

/// [`figures`], keeping numbers glued to letters (a scenario's `"800ms"`) when `glued`.
fn figures_in(text: &str, glued: bool) -> Vec<(f64, usize, bool, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len()
            && (b[j].is_ascii_digit()
                || ((b[j] == b',' || b[j] == b'.') && j + 1 < b.len() && b[j + 1].is_ascii_digit()))
        {
            j += 1;
        }
        let raw = &text[i..j];
        let plain = raw.replace(',', "");
        let decimals = plain.split_once('.').map_or(0, |(_, d)| d.len());
        let rest = text[j..].trim_start_matches(' ');
        let pct = rest.starts_with('%');
        // A number glued to letters is a name or a duration of the file ("r02", "10m"), not a figure.
        let unit_ok = glued || !text[j..].starts_with(|c: char| c.is_ascii_alphabetic());
        if let (Ok(v), true) = (plain.parse::<f64>(), unit_ok) {
            out.push((v, decimals, pct, raw.to_string()));
        }
        i = j;
    }
    out
}

/// Whether a README figure is one of `sources`' figures as printed, or rounded from one (a
/// fraction may be quoted as a percentage).
fn quoted_from(fig: (f64, usize, bool), sources: &[(f64, usize, bool, String)]) -> bool {
    let (x, d, pct) = fig;
    let round = |y: f64| (y * 10f64.powi(d as i32)).round() / 10f64.powi(d as i32);
    sources.iter().any(|&(y, yd, ypct, _)| {
        let same = yd >= d && (round(y) - x).abs() < 1e-9 && ypct == pct;
        let fraction = pct && !ypct && y <= 1.0 && yd >= 2 && (round(y * 100.0) - x).abs() < 1e-9;
        same || fraction
    })
}

#[test]
fn every_figure_in_the_readme_grocery_section_comes_from_its_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme.find("## What the grocery scenario shows").unwrap();
    let end = start + readme[start..].find("\n## ").unwrap();
    let mut sources = Vec::new();
    for f in [
        "docs/golden/grocery/report.md",
        "docs/golden/grocery-overload/report.md",
        "scenarios/grocery.ron",
        "scenarios/grocery-overload.ron",
    ] {
        sources.extend(figures_in(&std::fs::read_to_string(root.join(f)).unwrap(), true));
    }
    let mut stale = Vec::new();
    let mut in_block = false;
    for (n, line) in readme[start..end].lines().enumerate() {
        in_block = (in_block || line.starts_with("<!-- golden ")) && line != "<!-- /golden -->";
        // Tables are checked whole above; pictures' file names and markers are not figures.
        if in_block || line.starts_with("![") || line.starts_with("<!--") {
            continue;
        }
        for (v, d, pct, raw) in figures(line) {
            // Small whole numbers are counts and times of the prose ("minute 5", "six"), read
            // from the scenario by any reader; every measured figure has a decimal, a % or 3+ digits.
            if d == 0 && !pct && v < 100.0 {
                continue;
            }
            if !quoted_from((v, d, pct), &sources) {
                stale.push(format!(
                    "README.md:{}: {raw}{}",
                    readme[..start].lines().count() + n + 1,
                    if pct { "%" } else { "" }
                ));
            }
        }
    }
    assert!(stale.is_empty(), "figures quoted from no golden report or scenario:\n{}", stale.join("\n"));
}

#[test]
fn the_figure_check_finds_a_stale_figure() {
    let sources = figures("| error-breaker | 34.7% | 10.5 | 804 |\n- PASS x (measured 0.6986)");
    assert!(quoted_from((804.0, 0, false), &sources));
    assert!(quoted_from((34.7, 1, true), &sources));
    assert!(quoted_from((35.0, 0, true), &sources), "rounded from 34.7%");
    assert!(quoted_from((70.0, 0, true), &sources), "0.6986 quoted as a percentage");
    assert!(!quoted_from((808.0, 0, false), &sources), "the old transition count");
    assert!(!quoted_from((34.8, 1, true), &sources));
    assert_eq!(figures("771,475 and 3.67 M requests, 5 ms")[0].0, 771_475.0);
}
