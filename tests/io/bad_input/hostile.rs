//! Issue 32's crashes and hangs: inputs `check` accepted that then aborted in an allocation,
//! overflowed the stack, read a device without end, blocked on a FIFO, or ran away; each must
//! now end in exit 0, 1 or 2 within the corpus's limits, a refusal naming the file (and for a
//! value in a RON file its line and column) and the setting that would allow it.

use std::path::Path;
use std::process::Command;

use super::scenarios::BASE;
use super::{Action, Case, brownout, has_location};

/// BASE with each `(from, to)` replaced; every `from` must occur.
fn edits(pairs: &[(&str, &str)]) -> String {
    pairs.iter().fold(BASE.to_string(), |text, (from, to)| {
        assert!(text.contains(from), "{from:?} not in BASE");
        text.replace(from, to)
    })
}

fn scenario(name: &str, text: String) -> Case {
    Case {
        name: format!("hostile {name}"),
        files: vec![("s.ron".into(), text.into_bytes())],
        action: Action::Scenario("s.ron".into()),
        located: true,
    }
}

fn sweep(name: &str, spec: String) -> Case {
    Case {
        name: format!("hostile {name}"),
        files: vec![("sw.ron".into(), spec.into_bytes()), ("s.ron".into(), BASE.as_bytes().to_vec())],
        action: Action::Sweep("sw.ron".into()),
        located: true,
    }
}

/// A sweep spec over BASE with `axes` written in.
fn spec(axes: &str) -> String {
    format!(
        r#"SweepSpec(name: "sw", base: "s.ron", replications: 1, metrics: ["api/ok_ratio"],
    axes: [{axes}])
"#
    )
}

const LIMITER: &str = "(policy: Limiter((permits: 8))),";

/// Every case: each ends in exit 0, 1 or 2 within 10 s and 6 GiB, as the corpus checks.
pub fn cases() -> Vec<Case> {
    let mut out = vec![
        // A 2,000,000,000-bucket window: a 32 GB allocation per layer, SIGABRT in 0.3 s.
        scenario(
            "opossum two billion buckets",
            edits(&[(LIMITER, "(policy: Opossum((rolling_count_buckets: 2000000000))),")]),
        ),
        // .NET's retry layer of a million attempts was not counted against limits.max_attempts.
        scenario(
            "dotnet a million retries",
            edits(&[
                (LIMITER, "(policy: DotnetStandard((max_retry_attempts: 1000000, retry_delay: \"0s\"))),"),
                ("error_rate: Constant(0.01)", "error_rate: Constant(1.0)"),
            ]),
        ),
        // An Import layer reading a device: /dev/zero states size 0 and never ends.
        scenario(
            "import layer dev zero",
            edits(&[(LIMITER, "(policy: Import((file: \"/dev/zero\", library: Resilience4j))),")]),
        ),
        scenario(
            "import layer dev urandom",
            edits(&[(LIMITER, "(policy: Import((file: \"/dev/urandom\", library: Opossum))),")]),
        ),
        scenario("import layer folder", edits(&[(LIMITER, "(policy: Import((file: \".\", library: Envoy))),")])),
        // 1,000,001 windows x 8 classes x 4 policies: a 2.97 GB timeseries.csv, written unwarned.
        scenario("output a million windows", million_windows()),
        // 100,000 phases: 2.1 GB of recorders and 987 MB written from a 6 MB file.
        scenario("phases a hundred thousand", phases(100_000)),
        // A million grid steps: 5.7 GB of points, then SIGABRT; 200,000 reach 5.6 GB.
        sweep(
            "sweep a million steps",
            spec(
                r#"(name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s",
                    range: (from: 1, to: 20, steps: 1000000))"#,
            ),
        ),
        sweep(
            "sweep two hundred thousand steps",
            spec(
                r#"(name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s",
                    range: (from: 1, to: 20, steps: 200000))"#,
            ),
        ),
    ];
    // A linked axis of 100,000 nested parentheses overflowed the stack in evalexpr; a
    // shorter, deeper-than-allowed one and a long flat one are refused as well.
    let links = [
        ("link nested a hundred thousand", format!("{}rate{}", "(".repeat(100_000), ")".repeat(100_000))),
        ("link nested forty", format!("{}rate{}", "(".repeat(40), ")".repeat(40))),
        ("link long sum", vec!["rate"; 10_000].join(" + ")),
        ("link long unary", format!("{}rate", "-".repeat(100_000))),
    ];
    for (name, link) in links {
        out.push(sweep(
            name,
            spec(&format!(
                r#"(name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s", values: [5, 10]),
                   (name: "slots", path: "fleet.workers.slots", link: "{link}")"#
            )),
        ));
    }
    out.extend(reloads());
    // `brownout import` of a device: grew without bound (14 GB after 60 s).
    for library in ["resilience4j", "envoy", "opossum", "dotnet"] {
        out.push(Case {
            name: format!("hostile import {library} dev zero"),
            files: vec![],
            action: Action::Cli(vec!["import".into(), library.into(), "/dev/zero".into()], "/dev/zero".into()),
            located: false,
        });
    }
    out
}

/// Reload chains `check` accepted: certain reloads with no delay and no end ran for hours
/// (no memory, but 4,294,967,296 requests an arrival), and reloads waiting 10 minutes at
/// 100,000 arrivals a second, with `max_in_flight` raised past the pending-events guard,
/// filled memory (8 GiB after 23 s). Both at the default `max_events`; each is now refused
/// by the budget, located at the reload field.
fn reloads() -> Vec<Case> {
    let reload = "reload: (patience: \"300ms\", probability: 0.2, delay: \"50ms\", max_reloads: 2)";
    let chain = |delay: &str| {
        format!("reload: (patience: \"1ns\", probability: 1.0, delay: \"{delay}\", max_reloads: 4294967295)")
    };
    vec![
        scenario(
            "reload chain without end",
            edits(&[
                (reload, &chain("0s")),
                ("horizon: \"2s\"", "horizon: \"1h\""),
                ("max_events: 100000000", "max_events: 20000000000"),
            ]),
        ),
        scenario(
            "reload chain ten minutes apart",
            edits(&[
                (reload, &chain("10m")),
                ("horizon: \"2s\"", "horizon: \"1h\""),
                ("rate_per_s: 20", "rate_per_s: 100000"),
                ("max_in_flight: 100000", "max_in_flight: 1000000000000"),
                ("max_events: 100000000", "max_events: 20000000000"),
            ]),
        ),
    ]
}

/// The reload cases alone, to see them fail on an older build (`BROWNOUT_BAD_INPUT_BIN`).
#[test]
fn reload_chains_end_within_the_limits() {
    for case in reloads() {
        let (problems, accepted) = super::judge(&case);
        assert!(problems.is_empty(), "{}: {}", case.name, problems.join("; "));
        assert!(!accepted, "{}: accepted", case.name);
    }
}

/// BASE run over 1,000,000 s in 1 s windows with 8 classes and 4 policy sets, at almost no
/// traffic: few events, but a time-series row per window, class and set.
fn million_windows() -> String {
    let classes: String = (0..7)
        .map(|i| format!("(name: \"k{i}\", arrivals: Poisson(rate_per_s: 0.0001), deadline: \"500ms\"),"))
        .collect();
    edits(&[
        ("horizon: \"2s\"", "horizon: \"1000000s\""),
        ("window: \"500ms\"", "window: \"1s\""),
        ("replications: 2", "replications: 1"),
        ("rate_per_s: 20", "rate_per_s: 0.0001"),
        ("    classes: [\n", &format!("    classes: [\n{classes}\n")),
        ("    policies: [\n", "    policies: [\n(name: \"x1\", stack: []), (name: \"x2\", stack: []),\n"),
    ])
}

/// BASE over 200 s with `n` back-to-back phases of 1 ms from 1 s on.
fn phases(n: u64) -> String {
    let list: String =
        (0..n).map(|i| format!("(name: \"p{i}\", start: \"{}ms\", end: \"{}ms\"),", 1000 + i, 1001 + i)).collect();
    edits(&[
        ("horizon: \"2s\"", "horizon: \"200s\""),
        ("    classes: [", &format!("    phases: [{list}],\n    classes: [")),
    ])
}

/// Make a FIFO at `path` (no writer ever opens it).
fn fifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().expect("run mkfifo").success();
    assert!(ok, "mkfifo {}", path.display());
}

/// Every file brownout reads, named as a FIFO (which blocked `open` forever) or as a link to
/// /dev/zero (read without end): each command must refuse it at once with exit 2, naming it.
#[test]
fn fifos_and_devices_are_refused_wherever_a_file_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let s = |x: &str| x.to_string();
    let d = |x: &str| dir.join(x).display().to_string();
    std::fs::write(dir.join("s.ron"), BASE).unwrap();
    fifo(&dir.join("fifo.ron"));
    fifo(&dir.join("rates.csv"));
    fifo(&dir.join("app.yml"));
    let rates = BASE.replace("Poisson(rate_per_s: 20)", "Csv(file: \"rates.csv\")");
    std::fs::write(dir.join("csv.ron"), rates).unwrap();
    let import = BASE.replace(LIMITER, "(policy: Import((file: \"app.yml\", library: Resilience4j))),");
    std::fs::write(dir.join("import.ron"), import).unwrap();
    std::fs::write(dir.join("sw.ron"), spec("").replace("\"s.ron\"", "\"fifo.ron\"")).unwrap();
    // Result folders whose files are FIFOs or links to /dev/zero, for diff, plot and merge.
    for (folder, file) in [("fifo-run", "summary.json"), ("zero-run", "summary.json"), ("fifo-sweep", "plan.json")] {
        std::fs::create_dir(dir.join(folder)).unwrap();
        let at = dir.join(folder).join(file);
        if folder.starts_with("fifo") {
            fifo(&at);
        } else {
            std::os::unix::fs::symlink("/dev/zero", &at).unwrap();
        }
    }
    let commands: Vec<(Vec<String>, &str)> = vec![
        (vec![s("check"), d("fifo.ron")], "fifo.ron"),
        (vec![s("run"), d("fifo.ron"), s("--out"), d("out")], "fifo.ron"),
        (vec![s("check"), d("csv.ron")], "rates.csv"),
        (vec![s("check"), d("import.ron")], "app.yml"),
        (vec![s("import"), s("resilience4j"), d("app.yml")], "app.yml"),
        (vec![s("sweep"), d("fifo.ron"), s("--out"), d("out")], "fifo.ron"),
        (vec![s("sweep"), d("sw.ron"), s("--out"), d("out")], "fifo.ron"),
        (vec![s("diff"), d("fifo-run"), d("zero-run")], "summary.json"),
        (vec![s("diff"), d("zero-run"), d("fifo-run")], "summary.json"),
        (vec![s("plot"), d("fifo-run")], "summary.json"),
        (vec![s("plot"), d("zero-run")], "summary.json"),
        (vec![s("merge"), d("fifo-sweep"), d("fifo-sweep"), s("--out"), d("out")], "plan.json"),
    ];
    let mut problems = Vec::new();
    for (args, names) in &commands {
        let e = brownout(args, dir);
        if e.code != Some(2) || !e.stderr.contains(names) {
            problems.push(format!("{}: expected exit 2 naming {names}: {}", args.join(" "), e.describe()));
        }
        if dir.join("out").exists() {
            problems.push(format!("{}: wrote the output folder", args.join(" ")));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The refusals name the setting that would allow the input, at the value to blame.
#[test]
fn hostile_refusals_name_the_limit_that_would_allow_them() {
    let limits = [
        ("opossum two billion buckets", "limits.max_memory"),
        ("dotnet a million retries", "limits.max_attempts"),
        ("output a million windows", "limits.max_output"),
        ("phases a hundred thousand", "limits.max_memory"),
    ];
    let all = cases();
    for (name, limit) in limits {
        let case = all.iter().find(|c| c.name == format!("hostile {name}")).expect(name);
        let tmp = tempfile::tempdir().unwrap();
        for (file, bytes) in &case.files {
            std::fs::write(tmp.path().join(file), bytes).unwrap();
        }
        let e = brownout(&["check".into(), "s.ron".into()], tmp.path());
        assert_eq!(e.code, Some(2), "{name}: {}", e.describe());
        assert!(e.stderr.contains(limit) && has_location(&e.stderr, "s.ron"), "{name}: {}", e.stderr);
    }
}
