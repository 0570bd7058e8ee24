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
    let result = run_all(&model, RunOptions { timeseries: false, trace_limit: 0, events: 0 }, true)
        .unwrap_or_else(|e| panic!("README.md:{}: {e}", block.line));
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
