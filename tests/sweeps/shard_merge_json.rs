//! `sweep --shard K/N --json` end to end: each shard's document gives the `brownout merge`
//! command (`merge`, as the text form prints it), and that command, run as given once every
//! shard is done, merges them into the same results as the whole sweep.

use crate::common;

use std::path::Path;

use common::{brownout, document, erlang_scenario};

/// 2 points x 2 policies x 2 replications = 8 runs, 2 per shard of 4.
const SPEC: &str = r#"SweepSpec(
    name: "small", base: "erlang.ron", seed: 7, replications: 2,
    metrics: ["api/rejected"],
    axes: [(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [1, 3])],
)"#;

#[test]
fn the_merge_command_a_json_shard_gives_merges_the_shards_into_the_whole_sweep() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("erlang.ron"), erlang_scenario("3s")).unwrap();
    std::fs::write(dir.path().join("sweep.ron"), SPEC).unwrap();
    let mut commands = Vec::new();
    for k in 0..4 {
        let out = format!("r/shard-{k}");
        let o = brownout(
            &["sweep", "sweep.ron", "-q", "-j", "1", "--shard", &format!("{k}/4"), "--out", &out, "--json"],
            dir.path(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let doc = document(&o);
        assert_eq!(doc["shard"], format!("{k}/4"));
        assert_eq!(doc["runs"]["planned"], 8);
        let hint = doc["merge"].as_str().unwrap_or_else(|| panic!("no merge in {doc}"));
        // The command between backticks: every shard's folder by the same pattern.
        let command = hint.split('`').nth(1).unwrap_or_else(|| panic!("no command in {hint:?}")).to_string();
        commands.push(command);
    }
    assert!(commands.iter().all(|c| *c == commands[0]), "{commands:?}");
    assert_eq!(commands[0], "brownout merge r/shard-0 r/shard-1 r/shard-2 r/shard-3 --out r/merged");
    let args: Vec<&str> = commands[0].split(' ').skip(1).collect();
    let o = brownout(&args, dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The whole sweep in one go: the same runs (each run's seed is its number's), so the
    // same sweep.csv.
    let o = brownout(&["sweep", "sweep.ron", "-q", "-j", "1", "--out", "whole", "--json"], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(document(&o)["merge"].is_null());
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    assert_eq!(read("r/merged/sweep.csv"), read("whole/sweep.csv"));
    assert!(Path::new(&dir.path().join("r/merged/sweep.json")).exists());
}
