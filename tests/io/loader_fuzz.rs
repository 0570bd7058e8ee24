//! Fuzzing the scenario loader: arbitrary text and mutated copies of the shipped scenario
//! files (byte flips, deletions, duplications, nasty numbers) go through `scenario::parse`,
//! `scenario::validate` and `Model::build`. Each must return an error or a valid scenario:
//! never panic. Failures are persisted in `proptest-regressions/loader_fuzz.txt`.
//!
//! Run with `-- --nocapture` to see how many inputs ran, how long they took and how many got
//! how far (parse error, semantic error, build error, accepted).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use brownout::model::Model;
use brownout::scenario;

const ARBITRARY_CASES: u32 = 5_000;
const MUTATED_CASES: u32 = 20_000;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/loader_fuzz.txt"))),
        ..ProptestConfig::default()
    }
}

/// What one fuzz test saw.
#[derive(Default)]
struct Stats {
    /// How far inputs got: parse error, semantic error, build error, accepted.
    stages: [AtomicU64; 4],
    /// The slowest single input, for the record (not asserted: timing is not a test result).
    slowest: Mutex<Duration>,
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Every shipped scenario file's text (top level and `verify/`).
fn seeds() -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    for folder in ["scenarios", "scenarios/verify"] {
        let paths = crate::common::ron_files(folder);
        // A scenario with Import layers is valid only once `load` has read the imported files.
        files.extend(
            paths.iter().map(|p| std::fs::read(p).unwrap()).filter(|t| !t.windows(8).any(|w| w == b"Import((")),
        );
    }
    assert!(files.len() >= 5, "expected the shipped scenarios");
    files
}

/// Parse, validate and build; any outcome but a panic is acceptable.
fn exercise(text: &str, stats: &Stats) {
    let started = Instant::now();
    let path = Path::new("fuzz.ron");
    let stage = match scenario::parse(path, text) {
        Err(e) => {
            // The message must say where: a located error, not a bare string.
            assert_eq!(e.file, path);
            0
        }
        Ok(s) => match scenario::validate(&s) {
            Err(_) => 1,
            Ok(()) => match Model::build(&s, s.seed, &scenarios_dir()) {
                Err(_) => 2,
                Ok(_) => 3,
            },
        },
    };
    stats.stages[stage].fetch_add(1, Ordering::Relaxed);
    let took = started.elapsed();
    let mut slowest = stats.slowest.lock().unwrap();
    *slowest = (*slowest).max(took);
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, xor: u8 },
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize, to: usize },
    Number { nth: usize, with: &'static str },
}

const NASTY: &[&str] = &[
    "0",
    "-1",
    "-0",
    "1e308",
    "1e309",
    "NaN",
    "inf",
    "-inf",
    "4294967296",
    "18446744073709551616",
    "99999999999999999999999",
    "0.0",
    "1e-320",
    "0x10",
    "1_000",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        (any::<usize>(), 1..64usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 1..64usize, any::<usize>()).prop_map(|(at, len, to)| Mutation::Duplicate { at, len, to }),
        (any::<usize>(), prop::sample::select(NASTY)).prop_map(|(nth, with)| Mutation::Number { nth, with }),
    ]
}

fn apply(text: &mut Vec<u8>, m: &Mutation) {
    let n = text.len();
    if n == 0 {
        return;
    }
    match *m {
        Mutation::Flip { at, xor } => text[at % n] ^= xor,
        Mutation::Delete { at, len } => {
            let a = at % n;
            text.drain(a..(a + len).min(n));
        }
        Mutation::Duplicate { at, len, to } => {
            let a = at % n;
            let piece = text[a..(a + len).min(n)].to_vec();
            let t = to % (n + 1);
            text.splice(t..t, piece);
        }
        Mutation::Number { nth, with } => {
            // Replace the nth run of digits (and dots) with a nasty number.
            let runs: Vec<(usize, usize)> = digit_runs(text);
            if let Some(&(a, b)) = runs.get(nth % runs.len().max(1)) {
                text.splice(a..b, with.bytes());
            }
        }
    }
}

fn digit_runs(text: &[u8]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_digit() {
            let start = i;
            while i < text.len() && (text[i].is_ascii_digit() || text[i] == b'.') {
                i += 1;
            }
            runs.push((start, i));
        } else {
            i += 1;
        }
    }
    runs
}

fn report(what: &str, started: Instant, stats: &Stats) {
    let s: Vec<u64> = stats.stages.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    eprintln!(
        "loader fuzz ({what}): {} inputs in {:.2} s (parse errors {}, semantic errors {}, \
         build errors {}, accepted {}); slowest input {:?}",
        s.iter().sum::<u64>(),
        started.elapsed().as_secs_f64(),
        s[0],
        s[1],
        s[2],
        s[3],
        *stats.slowest.lock().unwrap()
    );
}

#[test]
fn arbitrary_text_never_panics_the_loader() {
    let (started, stats) = (Instant::now(), Stats::default());
    let mut runner = proptest::test_runner::TestRunner::new(config(ARBITRARY_CASES));
    // Unicode soup, and RON-flavoured soup that gets further into the parser.
    let text = prop_oneof![
        any::<String>(),
        "[()\\[\\]:,\" a-zA-Z0-9_.\\-]{0,300}",
        "Scenario\\((name|horizon|fleet|classes|dependency|policies|seed|\\(|\\)|\\[|\\]|:|,|\"[0-9]{1,4}(ms|s)\"|[0-9]{1,3}| ){0,80}\\)",
    ];
    runner
        .run(&text, |t| {
            exercise(&t, &stats);
            Ok(())
        })
        .unwrap();
    report("arbitrary text", started, &stats);
}

#[test]
fn mutated_scenarios_never_panic_the_loader() {
    let files = seeds();
    // Each unmutated file must load: the mutations start from valid scenarios.
    for f in &files {
        let text = String::from_utf8(f.clone()).unwrap();
        let s = scenario::parse(Path::new("seed.ron"), &text).expect("shipped scenario parses");
        scenario::validate(&s).expect("shipped scenario is valid");
    }
    let (started, stats) = (Instant::now(), Stats::default());
    let mut runner = proptest::test_runner::TestRunner::new(config(MUTATED_CASES));
    let strategy = (0..files.len(), prop::collection::vec(mutation(), 1..6));
    runner
        .run(&strategy, |(i, ms)| {
            let mut bytes = files[i].clone();
            for m in &ms {
                apply(&mut bytes, m);
            }
            exercise(&String::from_utf8_lossy(&bytes), &stats);
            Ok(())
        })
        .unwrap();
    report("mutated scenarios", started, &stats);
    // Not vacuous: mutations must reach validation and the model builder too.
    assert!(stats.stages[1].load(Ordering::Relaxed) > 0);
    assert!(stats.stages[3].load(Ordering::Relaxed) > 0);
}

#[test]
fn mutations_do_what_they_say() {
    let mut t = b"abc 12 x 3.5".to_vec();
    apply(&mut t, &Mutation::Number { nth: 1, with: "NaN" });
    assert_eq!(t, b"abc 12 x NaN");
    apply(&mut t, &Mutation::Delete { at: 0, len: 4 });
    assert_eq!(t, b"12 x NaN");
    apply(&mut t, &Mutation::Duplicate { at: 0, len: 2, to: 8 });
    assert_eq!(t, b"12 x NaN12");
    apply(&mut t, &Mutation::Flip { at: 0, xor: 0x01 });
    assert_eq!(t, b"02 x NaN12");
}
