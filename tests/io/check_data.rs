//! `check` refuses everything `run` would: data files (missing, not regular, malformed,
//! unsorted, negative, not numbers), plugins the binary does not register, too many layers,
//! names that cannot be file names. Both exit 2 with the same message, naming the file,
//! line and column, and `run` writes nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SCENARIO: &str = r#"Scenario(
    name: "data", horizon: "10s",
    fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Csv(file: "traffic.csv"), deadline: "1s")],
    dependency: (latency: Empirical(file: "latency.csv"), drift: Csv(file: "drift.csv")),
    policies: [(name: "direct")],
)"#;

const TRAFFIC: &str = "t_s,rate_per_s\n0,5\n10,5\n";
const LATENCY: &str = "latency_ms\n10\n20\n30\n";
const DRIFT: &str = "t_s,latency_ms\n0,20\n5,40\n";

fn brownout(args: &[&str], path: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brownout")).args(args).arg(path).output().unwrap()
}

/// A folder with the scenario (edited by `edit`) and the three data files, `file`
/// replaced by `bytes`.
fn setup(edit: impl Fn(&str) -> String, file: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("traffic.csv", TRAFFIC), ("latency.csv", LATENCY), ("drift.csv", DRIFT)] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    if !file.is_empty() {
        std::fs::write(dir.path().join(file), bytes).unwrap();
    }
    let path = dir.path().join("s.ron");
    std::fs::write(&path, edit(SCENARIO)).unwrap();
    (dir, path)
}

/// `check` and `run` both exit 2 with the same message, containing every `want`; `run`
/// writes nothing.
fn both_refuse(dir: &Path, path: &Path, want: &[String]) -> String {
    let check = brownout(&["check"], path);
    let out = dir.join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_brownout"))
        .arg("run")
        .arg(path)
        .arg("--out")
        .arg(&out)
        .arg("--no-charts")
        .output()
        .unwrap();
    let (c, r) = (String::from_utf8_lossy(&check.stderr), String::from_utf8_lossy(&run.stderr));
    assert_eq!(check.status.code(), Some(2), "check: {c}");
    assert_eq!(run.status.code(), Some(2), "run: {r}");
    assert_eq!(c, r, "check and run say the same");
    for w in want {
        assert!(c.contains(w.as_str()), "want {w:?} in: {c}");
    }
    assert!(!out.exists(), "run writes nothing");
    c.into_owned()
}

fn at(dir: &Path, file: &str, line: usize, col: usize) -> String {
    format!("{}:{line}:{col}: ", dir.join(file).display())
}

fn same(s: &str) -> String {
    s.to_string()
}

#[test]
fn the_valid_data_scenario_passes_check() {
    let (_dir, path) = setup(same, "", b"");
    let o = brownout(&["check"], &path);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bad_cells_are_located_in_the_data_file() {
    // (file, contents, line, column of the bad cell, what the message says)
    let cases: &[(&str, &str, usize, usize, &str)] = &[
        ("traffic.csv", "t_s,rate_per_s\n0,5\n1,-2\n", 3, 3, "rate_per_s: -2 must be"),
        ("traffic.csv", "t_s,rate_per_s\n0,5\n1, abc\n", 3, 4, "\"abc\" is not a number"),
        ("traffic.csv", "t_s,rate_per_s\n0,5\n10,2\n4,1\n", 4, 1, "time order"),
        ("traffic.csv", "t_s,rate_per_s\n0,NaN\n", 2, 3, "rate_per_s: NaN must be"),
        ("traffic.csv", "t_s,rate_per_s\n0,5\n1,2,3\n", 3, 1, "3 fields but the header has 2"),
        ("traffic.csv", "time,rate\n0,5\n", 1, 1, "no column \"t_s\""),
        ("traffic.csv", "t_s,rate_per_s\n", 1, 1, "no data rows"),
        ("traffic.csv", "t_s,rate_per_s\n2e9,5\n", 2, 1, "t_s: 2000000000 must be"),
        ("latency.csv", "latency_ms\n10\n-1\n", 3, 1, "latency_ms: -1 must be"),
        ("latency.csv", "latency_ms\n10\n\"1,5\"\n", 3, 1, "is not a number"),
        ("drift.csv", "t_s,latency_ms\n0,20\n5,40\n3,50\n", 4, 1, "time order"),
        ("drift.csv", "t_s,latency_ms\n0,20\n5,inf\n", 3, 3, "latency_ms: inf must be"),
    ];
    for &(file, text, line, col, says) in cases {
        let (dir, path) = setup(same, file, text.as_bytes());
        let reference = match file {
            "traffic.csv" => "classes[0].arrivals.Csv.file",
            "latency.csv" => "dependency.latency.Empirical.file",
            _ => "dependency.drift.Csv.file",
        };
        both_refuse(dir.path(), &path, &[at(dir.path(), file, line, col), same(says), same(reference)]);
    }
}

#[test]
fn files_that_cannot_be_read_are_refused_naming_the_reference() {
    let (dir, path) = setup(same, "", b"");
    std::fs::remove_file(dir.path().join("traffic.csv")).unwrap();
    // The scenario names the file on line 4, column 49 (where the string starts).
    let s_pos = format!("{}:4:49", path.display());
    both_refuse(dir.path(), &path, &[same("traffic.csv: cannot read the data file"), s_pos.clone()]);

    std::fs::create_dir(dir.path().join("traffic.csv")).unwrap();
    both_refuse(dir.path(), &path, &[same("traffic.csv: the data file is not a regular file"), s_pos]);

    let (dir, path) = setup(|s| s.replace("\"traffic.csv\"", "\"/dev/zero\""), "", b"");
    both_refuse(dir.path(), &path, &[same("/dev/zero: the data file is not a regular file")]);

    let (dir, path) = setup(same, "latency.csv", b"latency_ms\n1\n\xff\xfe\n");
    both_refuse(dir.path(), &path, &[at(dir.path(), "latency.csv", 3, 1), same("not UTF-8")]);
}

#[test]
fn a_data_file_error_does_not_echo_the_file() {
    let header = format!("{},rate_per_s\n0,5\n", "SECRET".repeat(50));
    let (dir, path) = setup(same, "traffic.csv", header.as_bytes());
    let msg = both_refuse(dir.path(), &path, &[same("no column \"t_s\""), same("the header has 2 columns")]);
    assert!(!msg.contains("SECRET"), "{msg}");
    let (dir, path) = setup(same, "traffic.csv", format!("t_s,rate_per_s\n0,{}\n", "SECRET".repeat(9)).as_bytes());
    let msg = both_refuse(dir.path(), &path, &[same("is not a number")]);
    assert!(!msg.contains("SECRET"), "{msg}");
    // Issue 32: a short first line (here /etc/passwd's) was quoted as the header's names.
    let passwd = b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
    let (dir, path) = setup(same, "traffic.csv", passwd);
    let msg = both_refuse(dir.path(), &path, &[same("no column \"t_s\""), same("the header has 1 column")]);
    assert!(!msg.contains("root:x") && !msg.contains("/bin/bash") && !msg.contains("daemon"), "{msg}");
}

#[test]
fn a_drift_csv_over_a_zero_median_is_refused() {
    let (dir, path) = setup(same, "latency.csv", b"latency_ms\n0\n0\n5\n");
    both_refuse(dir.path(), &path, &[same("latency.csv: the median"), same("dependency.latency.Empirical.file")]);
}

#[test]
fn plugins_layer_counts_and_names_are_refused_alike() {
    // The binary registers no plugins: the layer is refused at its name (line 6, col 64).
    let plugin =
        |s: &str| s.replace("(name: \"direct\")", "(name: \"direct\", stack: [(policy: Plugin((name: \"ewma\")))])");
    let (dir, path) = setup(plugin, "", b"");
    both_refuse(dir.path(), &path, &[format!("{}:6:64: ", path.display()), same("unknown plugin \"ewma\"")]);

    let nine = ["(policy: Timeout((timeout: \"1s\")))"; 9].join(", ");
    let layers = move |s: &str| s.replace("(name: \"direct\")", &format!("(name: \"direct\", stack: [{nine}])"));
    let (dir, path) = setup(layers, "", b"");
    both_refuse(dir.path(), &path, &[format!("{}:6:40: ", path.display()), same("9 layers; at most 8")]);

    for bad in [".", "..", "a/b", "a\\\\b", "a\u{0}b", "a\u{1b}[31m", "a\tb", ""] {
        let name = move |s: &str| s.replace("name: \"data\"", &format!("name: \"{bad}\""));
        let (dir, path) = setup(name, "", b"");
        both_refuse(dir.path(), &path, &[format!("{}:2:11: ", path.display()), same("name ")]);
    }
    let two = |s: &str| {
        s.replace(
            "deadline: \"1s\")]",
            "deadline: \"1s\"),\n               (name: \"a b\", arrivals: Poisson(rate_per_s: 1.0), deadline: \"1s\"),\n               (name: \"A_B\", arrivals: Poisson(rate_per_s: 1.0), deadline: \"1s\")]",
        )
    };
    let (dir, path) = setup(two, "", b"");
    both_refuse(dir.path(), &path, &[format!("{}:6:23: ", path.display()), same("chart file name \"a_b\"")]);
}

#[test]
fn oversized_files_are_refused_before_reading() {
    // A sparse file one byte over the limit: refused from its size, nothing read.
    let (dir, path) = setup(same, "", b"");
    let big = std::fs::File::create(dir.path().join("traffic.csv")).unwrap();
    big.set_len(256 * 1024 * 1024 + 1).unwrap();
    both_refuse(dir.path(), &path, &[same("traffic.csv: the data file is larger than the limit of 256 MiB")]);
    // The scenario file itself is bounded too.
    let o = brownout(&["check"], Path::new("/dev/zero"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/dev/zero: the scenario file is not a regular file"));
}
