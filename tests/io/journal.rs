//! Bad sweep folders and CLI file arguments (issue 15): torn, empty, tampered or foreign
//! journals, edited plans, wrong folders. Each case either recovers (the result files equal
//! those of an untouched sweep) or exits 2 naming the file, and never panics.
//!
//! The journal format these cases forge: one JSON object per line, `{"header":H,"crc32":C}`
//! first, then `{"record":R,"crc32":C}`, where C is the CRC-32 (IEEE) of the exact bytes of
//! H or R in lower-case hex; the header's `plan` is the CRC-32 of `plan.json`'s bytes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const BIN: &str = env!("CARGO_BIN_EXE_brownout");

const SCENARIO: &str = r#"Scenario(
    name: "tiny", seed: 3, horizon: "4s", warmup: "1s",
    fleet: (workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 30.0), deadline: "5s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [
        (name: "direct", stack: []),
        (name: "limit", stack: [(policy: Limiter((permits: 2, queue: 0)))]),
    ],
)"#;

const SPEC: &str = r#"SweepSpec(name: "j", base: "tiny.ron", seed: 5, replications: 2,
    metrics: ["api/rejected", "api/requests"],
    axes: [(name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [1, 3])])"#;

/// The untouched sweep: its folder (journal, plan, results), kept for the whole test binary.
fn reference() -> &'static Path {
    static REF: OnceLock<PathBuf> = OnceLock::new();
    REF.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        std::fs::write(dir.join("tiny.ron"), SCENARIO).unwrap();
        std::fs::write(dir.join("sweep.ron"), SPEC).unwrap();
        let o = brownout(&dir, &["sweep", "sweep.ron", "--out", "ref", "-j", "1"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        dir
    })
}

fn brownout(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN).args(args).current_dir(cwd).output().unwrap()
}

fn crc(bytes: &[u8]) -> String {
    format!("{:08x}", crc32fast::hash(bytes))
}

/// A framed journal line (without its newline).
fn frame(key: &str, json: &str) -> String {
    format!("{{\"{key}\":{json},\"crc32\":\"{}\"}}", crc(json.as_bytes()))
}

/// The JSON inside a framed line.
fn inner(line: &str) -> String {
    let start = line.find(':').unwrap() + 1;
    let end = line.rfind(",\"crc32\"").unwrap();
    line[start..end].to_string()
}

/// A case folder `d`: the reference's `tiny.ron`, `sweep.ron`, and `d/out` holding a copy of
/// the reference journal and plan (no result files).
struct Case<'a> {
    dir: &'a Path,
}

impl Case<'_> {
    fn out(&self) -> PathBuf {
        self.dir.join("out")
    }
    fn journal(&self) -> PathBuf {
        self.out().join("journal.jsonl")
    }
    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.journal()).unwrap().lines().map(String::from).collect()
    }
    fn set_lines(&self, lines: &[String]) {
        std::fs::write(self.journal(), lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    }
    fn set_raw(&self, bytes: &[u8]) {
        std::fs::write(self.journal(), bytes).unwrap();
    }
    /// Replace line `i` by `f(line)`.
    fn edit(&self, i: usize, f: impl Fn(&str) -> String) {
        let mut l = self.lines();
        l[i] = f(&l[i]);
        self.set_lines(&l);
    }
    /// Replace record line `i`'s JSON by `f(json)`, with a valid checksum.
    fn forge(&self, i: usize, f: impl Fn(&str) -> String) {
        self.edit(i, |l| frame(if i == 0 { "header" } else { "record" }, &f(&inner(l))));
    }
    fn record(&self, i: usize) -> serde_json::Value {
        serde_json::from_str(&inner(&self.lines()[i])).unwrap()
    }
    fn plan(&self) -> PathBuf {
        self.out().join("plan.json")
    }
}

/// Replace `path` by a symbolic link to `/dev/zero`.
fn zero(path: &Path) {
    std::fs::remove_file(path).ok();
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

#[derive(Clone, Copy)]
enum Cmd {
    /// `sweep sweep.ron --out out --resume`
    Resume,
    /// `merge out --out merged`
    Merge,
    /// Anything else, run in the case folder.
    Args(&'static [&'static str]),
}

#[derive(Clone, Copy)]
enum Expect {
    /// Exit 0 and result files equal to the reference's.
    Recover,
    /// Exit 2 with a message holding both strings (the file, and the reason).
    Refuse(&'static str, &'static str),
}

type Mutate = fn(&Case);

fn set_metrics(j: &str, metrics: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(j).unwrap();
    v["metrics"] = serde_json::from_str(metrics).unwrap();
    serde_json::to_string(&v).unwrap()
}

fn set_field(j: &str, key: &str, value: serde_json::Value) -> String {
    let mut v: serde_json::Value = serde_json::from_str(j).unwrap();
    v[key] = value;
    serde_json::to_string(&v).unwrap()
}

fn flip_digit(s: &str) -> String {
    // Change the last digit before the checksum: a metric or count value.
    let end = s.rfind(",\"crc32\"").unwrap();
    let at = s[..end].rfind(|c: char| c.is_ascii_digit()).unwrap();
    let d = s.as_bytes()[at];
    let new = if d == b'9' { '8' } else { (d + 1) as char };
    format!("{}{new}{}", &s[..at], &s[at + 1..])
}

const J: &str = "journal.jsonl";
const P: &str = "plan.json";

#[rustfmt::skip]
fn cases() -> Vec<(&'static str, Cmd, Mutate, Expect)> {
    use Cmd::*;
    use Expect::*;
    vec![
        // Headers torn at creation: nothing was journaled yet, so resuming starts afresh.
        ("empty journal", Resume, |c| c.set_raw(b""), Recover),
        ("header torn after 1 byte", Resume, |c| c.set_raw(b"{"), Recover),
        ("header torn mid-way", Resume, |c| { let h = c.lines()[0].clone(); c.set_raw(&h.as_bytes()[..h.len() / 2]); }, Recover),
        ("header torn before its newline", Resume, |c| { let h = c.lines()[0].clone(); c.set_raw(h.as_bytes()); }, Recover),
        ("header of zero bytes (disk full)", Resume, |c| c.set_raw(&[0; 40]), Recover),
        ("header only", Resume, |c| { let h = c.lines()[0].clone(); c.set_lines(&[h]); }, Recover),
        ("no journal at all", Resume, |c| std::fs::remove_file(c.journal()).unwrap(), Recover),
        // Headers that are complete but wrong are refused.
        ("blank header line", Resume, |c| c.set_raw(b"\n"), Refuse(J, ":1")),
        ("header checksum mismatch", Resume, |c| c.edit(0, |l| l.replacen("0/1", "0/2", 1)), Refuse(J, "checksum")),
        ("header of another shard", Resume, |c| c.forge(0, |j| j.replacen("0/1", "1/2", 1)), Refuse(J, "cannot resume")),
        // An edited spec: its runs take the finished records whose inputs (keys) are unchanged.
        ("header of another plan", Resume, |c| c.forge(0, |j| set_field(j, "hash", "0123456789abcdef".into())), Recover),
        ("header of another plan, no record fits", Resume, |c| { c.forge(0, |j| set_field(j, "hash", "0123456789abcdef".into())); for i in 1..c.lines().len() { c.forge(i, |j| set_field(j, "key", "0".repeat(32).into())); } }, Refuse(J, "none of the journal's")),
        ("header of another sweep", Resume, |c| { let t = std::fs::read_to_string(c.plan()).unwrap(); std::fs::write(c.plan(), t.replacen("\"j\"", "\"k\"", 1)).unwrap(); let crc = crc(&std::fs::read(c.plan()).unwrap()); c.forge(0, |j| set_field(&set_field(j, "hash", "0123456789abcdef".into()), "plan", crc.clone().into())); }, Refuse(J, "of sweep")),
        ("header of another plan.json", Resume, |c| c.forge(0, |j| set_field(j, "plan", "00000000".into())), Refuse(J, "cannot resume")),
        ("header without checksum (old format)", Resume, |c| c.edit(0, inner), Refuse(J, ":1")),
        ("header of binary garbage", Resume, |c| c.set_raw(b"\xff\xfe\x00garbage\n"), Refuse(J, ":1")),
        ("header with unknown field", Resume, |c| c.forge(0, |j| set_field(j, "extra", 1.into())), Refuse(J, ":1")),
        ("header that is a record", Resume, |c| { let l = c.lines(); c.set_lines(&l[1..]); }, Refuse(J, ":1")),
        // A kill tears only the last record: it is dropped and its run redone.
        ("last record torn mid-way", Resume, |c| { let l = c.lines(); let mut t = l[..l.len() - 1].join("\n"); t.push('\n'); t.push_str(&l[l.len() - 1][..20]); c.set_raw(t.as_bytes()); }, Recover),
        ("last record torn before its newline", Resume, |c| { let l = c.lines(); let t = l.join("\n"); c.set_raw(t.as_bytes()); }, Recover),
        ("last record torn after 1 byte", Resume, |c| { let l = c.lines(); let t = l[..l.len() - 1].join("\n") + "\n{"; c.set_raw(t.as_bytes()); }, Recover),
        ("last record torn into zeros", Resume, |c| { let mut t = std::fs::read(c.journal()).unwrap(); t.extend([0u8; 30]); c.set_raw(&t); }, Recover),
        ("half the records lost", Resume, |c| { let l = c.lines(); c.set_lines(&l[..l.len() / 2]); }, Recover),
        ("records in another order", Resume, |c| { let mut l = c.lines(); l[1..].reverse(); c.set_lines(&l); }, Recover),
        ("a record journaled twice", Resume, |c| { let mut l = c.lines(); l.push(l[2].clone()); c.set_lines(&l); }, Recover),
        // Complete records that are wrong are refused, naming the line.
        ("tampered metric (checksum)", Resume, |c| c.edit(3, flip_digit), Refuse("journal.jsonl:4", "checksum")),
        ("tampered last record (checksum)", Resume, |c| { let n = c.lines().len(); c.edit(n - 1, flip_digit); }, Refuse(J, "checksum")),
        ("checksum in upper case", Resume, |c| c.edit(2, |l| l.to_uppercase()), Refuse("journal.jsonl:3", "")),
        ("checksum field missing", Resume, |c| c.edit(2, inner), Refuse("journal.jsonl:3", "")),
        ("checksum of the wrong length", Resume, |c| c.edit(2, |l| l.replacen("\"crc32\":\"", "\"crc32\":\"0", 1)), Refuse("journal.jsonl:3", "checksum")),
        ("too few metrics", Resume, |c| c.forge(2, |j| set_metrics(j, "[1.0]")), Refuse("journal.jsonl:3", "metrics")),
        ("no metrics", Resume, |c| c.forge(2, |j| set_metrics(j, "[]")), Refuse("journal.jsonl:3", "metrics")),
        ("too many metrics", Resume, |c| c.forge(2, |j| set_metrics(j, "[1.0, 2.0, 3.0]")), Refuse("journal.jsonl:3", "metrics")),
        ("metric as a string", Resume, |c| c.forge(2, |j| set_metrics(j, "[\"1\", 2.0]")), Refuse("journal.jsonl:3", "")),
        ("run beyond the plan", Resume, |c| c.forge(2, |j| set_field(j, "run", 999.into())), Refuse("journal.jsonl:3", "run 999")),
        ("negative run", Resume, |c| c.forge(2, |j| set_field(j, "run", (-1).into())), Refuse("journal.jsonl:3", "")),
        ("seed not the plan's", Resume, |c| c.forge(2, |j| set_field(j, "seed", 12345.into())), Refuse("journal.jsonl:3", "seed")),
        ("unknown field in a record", Resume, |c| c.forge(2, |j| set_field(j, "note", "x".into())), Refuse("journal.jsonl:3", "")),
        ("record that is not JSON", Resume, |c| c.edit(2, |_| frame("record", "not json")), Refuse("journal.jsonl:3", "")),
        ("record that is a header", Resume, |c| { let h = c.lines()[0].clone(); c.edit(2, |_| h.clone()); }, Refuse("journal.jsonl:3", "")),
        ("blank line between records", Resume, |c| c.edit(2, |l| format!("\n{l}")), Refuse("journal.jsonl:3", "")),
        ("carriage return after a record", Resume, |c| c.edit(2, |l| format!("{l}\r")), Refuse("journal.jsonl:3", "")),
        ("NUL bytes in a middle line", Resume, |c| c.edit(2, |l| "\0".repeat(l.len())), Refuse("journal.jsonl:3", "")),
        ("one run twice with different results", Resume, |c| { let mut l = c.lines(); let r = c.record(2); l.push(frame("record", &set_metrics(&serde_json::to_string(&r).unwrap(), "[0.0, 0.0]"))); c.set_lines(&l); }, Refuse(J, "twice")),
        ("journal is a folder", Resume, |c| { std::fs::remove_file(c.journal()).unwrap(); std::fs::create_dir(c.journal()).unwrap(); }, Refuse(J, "")),
        // A link to an endless device must be refused, not read until memory runs out.
        ("journal is /dev/zero", Resume, |c| zero(&c.journal()), Refuse(J, "not a regular file")),
        ("merge: journal is /dev/zero", Merge, |c| zero(&c.journal()), Refuse(J, "not a regular file")),
        ("merge: plan.json is /dev/zero", Merge, |c| zero(&c.plan()), Refuse(P, "not a regular file")),
        ("plot of summary.json at /dev/zero", Args(&["plot", "out"]), |c| zero(&c.out().join("summary.json")), Refuse("summary.json", "not a regular file")),
        ("plot of sweep.json at /dev/zero", Args(&["plot", "out"]), |c| zero(&c.out().join("sweep.json")), Refuse("sweep.json", "not a regular file")),
        // The plan: rewritten from the spec by --resume, checked against the journal by merge.
        ("edited plan.json, resumed", Resume, |c| { let t = std::fs::read_to_string(c.plan()).unwrap(); std::fs::write(c.plan(), t.replace("api/requests", "api/ok")).unwrap(); }, Recover),
        ("edited plan.json, merged", Merge, |c| { let t = std::fs::read_to_string(c.plan()).unwrap(); std::fs::write(c.plan(), t.replace("api/requests", "api/ok")).unwrap(); }, Refuse(P, "checksum")),
        ("plan.json with another point", Merge, |c| { let t = std::fs::read_to_string(c.plan()).unwrap(); std::fs::write(c.plan(), t.replacen("3.0", "4.0", 1)).unwrap(); }, Refuse(P, "checksum")),
        ("plan.json re-indented", Merge, |c| { let t = std::fs::read_to_string(c.plan()).unwrap(); std::fs::write(c.plan(), t.replace("  ", "    ")).unwrap(); }, Refuse(P, "checksum")),
        ("plan.json empty", Merge, |c| std::fs::write(c.plan(), "").unwrap(), Refuse(P, "")),
        ("plan.json not JSON", Merge, |c| std::fs::write(c.plan(), "{ nope").unwrap(), Refuse(P, "")),
        ("plan.json missing", Merge, |c| std::fs::remove_file(c.plan()).unwrap(), Refuse(P, "")),
        ("plan.json a folder", Merge, |c| { std::fs::remove_file(c.plan()).unwrap(); std::fs::create_dir(c.plan()).unwrap(); }, Refuse(P, "")),
        ("merge: plan with too few metrics", Merge, |c| { let t = std::fs::read_to_string(c.plan()).unwrap(); std::fs::write(c.plan(), t.replace("\"api/rejected\",", "")).unwrap(); }, Refuse(P, "checksum")),
        ("merge: empty journal", Merge, |c| c.set_raw(b""), Refuse(J, "no header")),
        ("merge: torn header", Merge, |c| c.set_raw(b"{\"header\":{\"ha"), Refuse(J, "no header")),
        ("merge: torn last record", Merge, |c| { let l = c.lines(); let t = l.join("\n"); c.set_raw(t.as_bytes()); }, Refuse("", "missing")),
        ("merge: tampered record", Merge, |c| c.edit(3, flip_digit), Refuse("journal.jsonl:4", "checksum")),
        ("merge: too few metrics", Merge, |c| c.forge(2, |j| set_metrics(j, "[1.0]")), Refuse("journal.jsonl:3", "metrics")),
        ("merge: seed not the plan's", Merge, |c| c.forge(1, |j| set_field(j, "seed", 1.into())), Refuse("journal.jsonl:2", "seed")),
        ("merge: no journal", Merge, |c| std::fs::remove_file(c.journal()).unwrap(), Refuse(J, "")),
        ("merge: intact", Merge, |_| {}, Recover),
        // CLI file arguments.
        ("spec missing", Args(&["sweep", "nope.ron", "--out", "x"]), |_| {}, Refuse("nope.ron", "")),
        ("spec is a folder", Args(&["sweep", "out", "--out", "x"]), |_| {}, Refuse("out", "")),
        ("sweep --out is a file", Args(&["sweep", "sweep.ron", "--out", "tiny.ron"]), |_| {}, Refuse("tiny.ron", "")),
        ("sweep --out .", Args(&["sweep", "sweep.ron", "--out", "."]), |_| {}, Refuse(".", "folder")),
        ("sweep --out ..", Args(&["sweep", "sweep.ron", "--out", ".."]), |_| {}, Refuse("..", "folder")),
        ("sweep --out ending in ..", Args(&["sweep", "sweep.ron", "--out", "out/.."]), |_| {}, Refuse("..", "folder")),
        ("run --out .", Args(&["run", "tiny.ron", "--out", "."]), |_| {}, Refuse(".", "folder")),
        ("run --out is a file", Args(&["run", "tiny.ron", "--out", "tiny.ron"]), |_| {}, Refuse("tiny.ron", "")),
        ("run --out is a sweep folder", Args(&["run", "tiny.ron", "--out", "out"]), |_| {}, Refuse("out", "results of a sweep")),
        ("merge --out is a file", Args(&["merge", "out", "--out", "tiny.ron"]), |_| {}, Refuse("tiny.ron", "")),
        ("merge of a missing folder", Args(&["merge", "nowhere", "--out", "m"]), |_| {}, Refuse("nowhere", "")),
        ("plot of a missing folder", Args(&["plot", "nowhere"]), |_| {}, Refuse("nowhere", "")),
        ("plot of a torn summary.json", Args(&["plot", "out"]), |c| std::fs::write(c.out().join("summary.json"), "{\"scen").unwrap(), Refuse("summary.json", "")),
        ("plot of a torn sweep.json", Args(&["plot", "out"]), |c| std::fs::write(c.out().join("sweep.json"), "{\"sw").unwrap(), Refuse("sweep.json", "")),
        ("shard out of range", Args(&["sweep", "sweep.ron", "--out", "s", "--shard", "3/2"]), |_| {}, Refuse("3/2", "")),
        ("resume with a shard the journal is not", Args(&["sweep", "sweep.ron", "--out", "out", "--resume", "--shard", "0/2"]), |_| {}, Refuse(J, "cannot resume")),
        ("new sweep over a journal", Args(&["sweep", "sweep.ron", "--out", "out"]), |_| {}, Refuse("out", "--resume")),
    ]
}

#[test]
fn bad_journals_plans_and_folders_recover_or_exit_2() {
    let reference = reference();
    let cases = cases();
    assert!(cases.len() >= 50, "{} cases", cases.len());
    let mut failures = Vec::new();
    for (name, cmd, mutate, expect) in cases {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["tiny.ron", "sweep.ron"] {
            std::fs::copy(reference.join(f), d.join(f)).unwrap();
        }
        std::fs::create_dir(d.join("out")).unwrap();
        for f in ["journal.jsonl", "plan.json"] {
            std::fs::copy(reference.join("ref").join(f), d.join("out").join(f)).unwrap();
        }
        mutate(&Case { dir: d });
        let o = match cmd {
            Cmd::Resume => brownout(d, &["sweep", "sweep.ron", "--out", "out", "--resume", "-j", "1"]),
            Cmd::Merge => brownout(d, &["merge", "out", "--out", "merged"]),
            Cmd::Args(a) => brownout(d, a),
        };
        let err = String::from_utf8_lossy(&o.stderr);
        let verdict = match expect {
            Expect::Recover => {
                let res = d.join(if matches!(cmd, Cmd::Merge) { "merged" } else { "out" });
                let same = ["sweep.csv", "runs.csv"]
                    .iter()
                    .all(|f| std::fs::read(res.join(f)).ok() == std::fs::read(reference.join("ref").join(f)).ok());
                if o.status.code() != Some(0) {
                    Err(format!("exit {:?}: {err}", o.status.code()))
                } else if !same {
                    Err("recovered, but the result files differ from the reference".into())
                } else {
                    Ok(())
                }
            }
            Expect::Refuse(file, why) => {
                if o.status.code() != Some(2) {
                    Err(format!("exit {:?}, want 2: {err}", o.status.code()))
                } else if !err.contains(file) || !err.contains(why) || err.contains("panicked") {
                    Err(format!("message lacks {file:?} or {why:?}: {err}"))
                } else {
                    Ok(())
                }
            }
        };
        if let Err(e) = verdict {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
}
