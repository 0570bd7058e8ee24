//! Sharded sweeps as a cluster runs them (issue 36): `merge` names the shards that are missing
//! or unfinished and writes nothing, and `sweep --shard` prints the merge command to run once
//! every shard is done, which then works as printed.
//!
//! Expected counts are from the round-robin rule in docs/sweep.md ("runs whose number is K
//! modulo N"): the spec below has 2 points x 2 policies x 3 replications = 12 runs, so each
//! of 3 shards owns 4 of them.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{brownout, erlang_scenario};

const SPEC: &str = r#"SweepSpec(
    name: "small", base: "erlang.ron", seed: 5, replications: 3,
    metrics: ["api/rejected"],
    axes: [(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [1, 3])],
)"#;

/// A folder holding `erlang.ron` and `sweep.ron`.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("erlang.ron"), erlang_scenario("3s")).unwrap();
    std::fs::write(dir.path().join("sweep.ron"), SPEC).unwrap();
    dir
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn shard(dir: &Path, k: u64, out: &str) -> String {
    ok(&brownout(
        &["sweep", "sweep.ron", "-j", "1", "--quiet", "--shard", &format!("{k}/3"), "--out", out, "--resume"],
        dir,
    ))
}

fn refused(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn merge_names_a_shard_no_folder_holds_and_writes_nothing() {
    let dir = setup();
    shard(dir.path(), 0, "r/shard-0");
    shard(dir.path(), 1, "r/shard-1");
    let err = refused(&brownout(&["merge", "r/shard-0", "r/shard-1", "--out", "r/merged"], dir.path()));
    assert!(err.contains("4 of 12 runs are missing"), "{err}");
    assert!(err.contains("shard 2/3: no folder given holds it"), "{err}");
    assert!(!err.contains("shard 0/3") && !err.contains("shard 1/3"), "only the missing shard is named: {err}");
    assert!(!dir.path().join("r/merged").exists(), "nothing written: {err}");
}

#[test]
fn merge_names_an_unfinished_shard_with_its_folder_and_count() {
    let dir = setup();
    for k in 0..3 {
        shard(dir.path(), k, &format!("r/shard-{k}"));
    }
    // Shard 1 killed after its first run: the header and one record are left.
    let journal = dir.path().join("r/shard-1/journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let kept: String = text.split_inclusive('\n').take(2).collect();
    std::fs::write(&journal, kept).unwrap();
    let args = ["merge", "r/shard-0", "r/shard-1", "r/shard-2", "--out", "r/merged"];
    let err = refused(&brownout(&args, dir.path()));
    assert!(err.contains("3 of 12 runs are missing"), "{err}");
    assert!(err.contains("shard 1/3 (r/shard-1): 1 of 4 runs finished"), "{err}");
    assert!(err.contains("--resume"), "the way to finish it: {err}");
    assert!(!err.contains("shard 0/3") && !err.contains("shard 2/3"), "{err}");
    assert!(!dir.path().join("r/merged").exists(), "nothing written: {err}");
    // Finished with --resume, the same merge goes through.
    shard(dir.path(), 1, "r/shard-1");
    ok(&brownout(&args, dir.path()));
}

#[test]
fn a_shard_prints_the_merge_command_that_works_as_printed() {
    let dir = setup();
    let whole = "whole";
    ok(&brownout(&["sweep", "sweep.ron", "-j", "1", "--quiet", "--out", whole], dir.path()));
    let mut printed = Vec::new();
    for k in [2, 0, 1] {
        printed.push(shard(dir.path(), k, &format!("results/shard-{k}")));
    }
    let command = "brownout merge results/shard-0 results/shard-1 results/shard-2 --out results/merged";
    for out in &printed {
        assert!(out.contains(&format!("`{command}`")), "{out}");
    }
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[0], "brownout");
    ok(&brownout(&words[1..], dir.path()));
    for f in ["sweep.json", "sweep.csv", "runs.csv"] {
        let a = std::fs::read(dir.path().join(whole).join(f)).unwrap();
        let b = std::fs::read(dir.path().join("results/merged").join(f)).unwrap();
        assert!(a == b, "{f}: the printed merge differs from the unsharded sweep");
    }
}

#[test]
fn a_shard_folder_name_is_quoted_and_padded_as_given() {
    let dir = setup();
    let out = shard(dir.path(), 1, "my results/part-01");
    let want =
        "brownout merge 'my results/part-00' 'my results/part-01' 'my results/part-02' --out 'my results/merged'";
    assert!(out.contains(want), "{out}");
}

#[test]
fn a_shard_folder_without_its_number_names_the_other_shards() {
    let dir = setup();
    let out = shard(dir.path(), 1, "mine");
    assert!(out.contains("brownout merge mine DIR... --out OUT"), "{out}");
    assert!(out.contains("the folders of shards 0/3 and 2/3"), "{out}");
}

#[test]
fn merge_of_shards_of_different_counts_counts_the_runs_none_holds() {
    let dir = setup();
    // Shard 0/2 holds runs 0, 2, ..., 10; shard 1/3 holds 1, 4, 7, 10: runs 3, 5, 9 and 11 are
    // in neither (12 runs, docs/sweep.md's K-modulo-N rule).
    ok(&brownout(&["sweep", "sweep.ron", "-j", "1", "--quiet", "--shard", "0/2", "--out", "a"], dir.path()));
    shard(dir.path(), 1, "b");
    let err = refused(&brownout(&["merge", "a", "b", "--out", "m"], dir.path()));
    assert!(err.contains("4 of 12 runs are missing"), "{err}");
    assert!(err.contains("4 runs are in no shard given (first: run 3)"), "{err}");
    assert!(err.contains("/2, /3"), "names the shard counts: {err}");
    assert!(!dir.path().join("m").exists(), "nothing written: {err}");
}

/// `merge` reads back what the shards wrote (plan.json's feasibility bounds, the journals'
/// figures), so a figure must come back from JSON bit for bit, or the merged
/// recommendation.json differs from the one-process sweep in its last digit (seen in the Slurm
/// check: 0.9999366199549781 written, 0.999936619954978 read). serde_json parses floats
/// exactly only with its `float_roundtrip` feature.
#[test]
fn a_figure_read_back_from_json_is_the_figure_written() {
    let mut x = 0.9999366199549781_f64;
    let mut bad = Vec::new();
    // The figure above, then a spread of ratios and milliseconds by a fixed recurrence.
    for i in 0..20_000u64 {
        let text = serde_json::to_string(&x).unwrap();
        let back: f64 = serde_json::from_str(&text).unwrap();
        if back.to_bits() != x.to_bits() {
            bad.push(format!("{text} read as {back}"));
        }
        x = ((i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64) / (1u64 << 53) as f64 * 10f64.powi((i % 7) as i32);
    }
    assert!(
        bad.is_empty(),
        "{} of 20000 figures changed on the way back, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(3)]
    );
}
