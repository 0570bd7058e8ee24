//! Data-file cases (CSV traffic, latency samples, drift), sweep specs and command lines.

use super::scenarios::edit;
use super::{Action, Case};

/// CSV contents for a `t_s,rate_per_s` or `t_s,latency_ms` file, each a bad file.
const CSVS: &[(&str, &str)] = &[
    ("empty", ""),
    ("header only", "t_s,COL\n"),
    ("wrong header", "time,value\n0,5\n"),
    ("one column", "t_s\n0\n1\n"),
    ("unsorted", "t_s,COL\n1,5\n0,5\n"),
    ("negative", "t_s,COL\n0,-5\n1,-5\n"),
    ("negative time", "t_s,COL\n-1,5\n1,5\n"),
    ("non-numeric", "t_s,COL\n0,five\n"),
    ("NaN", "t_s,COL\n0,NaN\n1,5\n"),
    ("inf", "t_s,COL\n0,inf\n1,5\n"),
    ("huge value", "t_s,COL\n0,1e300\n1,1e300\n"),
    ("huge time", "t_s,COL\n0,5\n1e30,5\n"),
    ("ragged", "t_s,COL\n0,5,7\n1\n"),
    ("binary", "\u{0}\u{1}\u{2}\u{fffd}\n\u{0}"),
    ("quote", "t_s,COL\n\"0,5\n"),
    ("blank lines", "t_s,COL\n\n\n"),
    ("crlf zero", "t_s,COL\r\n0,0\r\n1,0\r\n"),
];

fn scenario_with(name: String, text: String, data: Vec<(String, Vec<u8>)>) -> Case {
    let mut files = vec![("s.ron".to_string(), text.into_bytes())];
    files.extend(data);
    Case { name, files, action: Action::Scenario("s.ron".into()), located: false }
}

/// Each bad CSV as arrival rates, latency samples and drift; plus missing files, a folder,
/// and `/dev/zero`.
pub fn csvs() -> Vec<Case> {
    let rate = |file: &str| edit("Poisson(rate_per_s: 20)", &format!("Csv(file: \"{file}\")"));
    let latency = |file: &str| edit("LogNormal(median: \"20ms\", sigma: 0.5)", &format!("Empirical(file: \"{file}\")"));
    let drift = |file: &str| edit("hop: \"1ms\",", &format!("hop: \"1ms\", drift: Csv(file: \"{file}\"),"));
    let mut out = Vec::new();
    for (n, body) in CSVS {
        let file = |col: &str| vec![("d.csv".to_string(), body.replace("COL", col).into_bytes())];
        out.push(scenario_with(format!("csv rates {n}"), rate("d.csv"), file("rate_per_s")));
        out.push(scenario_with(format!("csv latency {n}"), latency("d.csv"), file("latency_ms")));
        out.push(scenario_with(format!("csv drift {n}"), drift("d.csv"), file("latency_ms")));
    }
    for (n, path) in [("missing", "nothing.csv"), ("folder", "."), ("dev zero", "/dev/zero"), ("dev null", "/dev/null")]
    {
        out.push(scenario_with(format!("csv rates {n}"), rate(path), vec![]));
        out.push(scenario_with(format!("csv latency {n}"), latency(path), vec![]));
        out.push(scenario_with(format!("csv drift {n}"), drift(path), vec![]));
    }
    let column = edit("LogNormal(median: \"20ms\", sigma: 0.5)", "Empirical(file: \"d.csv\", column: \"nope\")");
    out.push(scenario_with(
        "csv latency unknown column".into(),
        column,
        vec![("d.csv".into(), b"latency_ms\n5\n".to_vec())],
    ));
    out
}

/// A valid sweep over BASE's rate; each case edits it.
const SPEC: &str = r#"SweepSpec(
    name: "sw",
    base: "s.ron",
    replications: 2,
    metrics: ["api/ok_ratio", "dependency_peak_in_flight"],
    axes: [
        (name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s", values: [5, 10]),
    ],
)
"#;

fn sweep_on(name: &str, spec: String, base: String) -> Case {
    Case {
        name: format!("sweep {name}"),
        files: vec![("sw.ron".into(), spec.into_bytes()), ("s.ron".into(), base.into_bytes())],
        action: Action::Sweep("sw.ron".into()),
        located: true,
    }
}

const AXIS: &str = r#"(name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s", values: [5, 10]),"#;

/// Sweep specs with bad or huge axes, samples, replications, metrics and policies.
pub fn sweeps() -> Vec<Case> {
    let base = super::scenarios::BASE.to_string();
    let spec = |from: &str, to: &str| {
        assert_eq!(SPEC.matches(from).count(), 1, "SPEC must contain {from:?} once");
        SPEC.replacen(from, to, 1)
    };
    let axis = |a: &str| spec(AXIS, a);
    let range = |r: &str| axis(&format!("(name: \"rate\", path: \"classes[api].arrivals.Poisson.rate_per_s\", {r}),"));
    let grid = r#"(name: "a", path: "classes[api].arrivals.Poisson.rate_per_s", range: (from: 1, to: 20, steps: 3000)),
        (name: "b", path: "dependency.latency.LogNormal.sigma", range: (from: 0.1, to: 1, steps: 3000)),"#;
    let mut out = vec![
        sweep("valid control", SPEC.into()),
        sweep("replications 0", spec("replications: 2", "replications: 0")),
        sweep("replications 4e9", spec("replications: 2", "replications: 4294967295")),
        sweep("replications -1", spec("replications: 2", "replications: -1")),
        sweep("grid 3000 x 3000", axis(grid)),
        sweep("steps 4294967295", range("range: (from: 1, to: 20, steps: 4294967295)")),
        sweep("steps 1", range("range: (from: 1, to: 20, steps: 1)")),
        sweep("steps 0", range("range: (from: 1, to: 20, steps: 0)")),
        sweep("log range from 0", range("range: (from: 0, to: 20, steps: 3, scale: Log)")),
        sweep("range NaN", range("range: (from: NaN, to: 20, steps: 3)")),
        sweep("range inf", range("range: (from: 1, to: inf, steps: 3)")),
        sweep("range 1e300", range("range: (from: 1, to: 1e300, steps: 3)")),
        sweep("range negative", range("range: (from: -10, to: -1, steps: 3)")),
        sweep("values and range", range("values: [1], range: (from: 1, to: 2, steps: 2)")),
        sweep("neither values nor range", range("unit: \"s\"")),
        sweep(
            "samples 4e9",
            spec("axes: [", "sample: (method: LatinHypercube, samples: 4294967295),\n    axes: [")
                .replace("values: [5, 10]", "range: (from: 1, to: 20)"),
        ),
        sweep(
            "samples 0",
            spec("axes: [", "sample: (method: Uniform, samples: 0),\n    axes: [")
                .replace("values: [5, 10]", "range: (from: 1, to: 20)"),
        ),
        sweep("sample values", spec("axes: [", "sample: (method: Uniform, samples: 3),\n    axes: [")),
        sweep("unknown path", axis(r#"(name: "x", path: "classes[api].nothing", values: [1]),"#)),
        sweep("path to text", axis(r#"(name: "x", path: "name", values: [1]),"#)),
        sweep("path index huge", axis(r#"(name: "x", path: "classes[99999999999999999999].priority", values: [1]),"#)),
        sweep("path garbage", axis(r#"(name: "x", path: "[[[", values: [1]),"#)),
        sweep("duration plain number", axis(r#"(name: "x", path: "horizon", values: [5]),"#)),
        sweep("duration huge", axis(r#"(name: "x", path: "horizon", values: ["1000000000h"]),"#)),
        sweep("duration bad unit", axis(r#"(name: "x", path: "horizon", values: [1], unit: "parsec"),"#)),
        sweep("integer fraction", axis(r#"(name: "x", path: "fleet.instances", values: [1.5]),"#)),
        sweep("integer huge", axis(r#"(name: "x", path: "fleet.instances", values: [1e18]),"#)),
        sweep("instances 1e9", axis(r#"(name: "x", path: "fleet.instances", values: [1000000000]),"#)),
        sweep("rate 1e9", axis(r#"(name: "x", path: "classes[api].arrivals.Poisson.rate_per_s", values: [1e9]),"#)),
        sweep("rate negative", axis(r#"(name: "x", path: "classes[api].arrivals.Poisson.rate_per_s", values: [-1]),"#)),
        sweep("seed axis", axis(r#"(name: "x", path: "seed", values: [1, 2]),"#)),
        sweep("axis twice", spec(AXIS, &format!("{AXIS}\n        {AXIS}"))),
        sweep("unknown metric", spec("\"api/ok_ratio\"", "\"api/bogus\"")),
        sweep("unknown class metric", spec("\"api/ok_ratio\"", "\"nobody/ok_ratio\"")),
        sweep("no metrics", spec("[\"api/ok_ratio\", \"dependency_peak_in_flight\"]", "[]")),
        sweep("unknown policy", spec("replications: 2,", "replications: 2, policies: [\"nobody\"],")),
        sweep("policy twice", spec("replications: 2,", "replications: 2, policies: [\"direct\", \"direct\"],")),
        sweep("missing base", spec("base: \"s.ron\"", "base: \"nothing.ron\"")),
        sweep("base is a folder", spec("base: \"s.ron\"", "base: \".\"")),
        sweep("base dev zero", spec("base: \"s.ron\"", "base: \"/dev/zero\"")),
        sweep("name empty", spec("name: \"sw\"", "name: \"\"")),
        sweep("unknown field", spec("replications: 2,", "replications: 2, colour: 1,")),
        sweep("truncated", SPEC[..SPEC.len() / 2].to_string()),
    ];
    out.extend(decisions(&spec));
    out.push(sweep_on("base invalid", SPEC.into(), base.replace("slots: 4", "slots: 0")));
    let tiny = base.replace("max_events: 100000000", "max_events: 100000000, max_memory: \"1MiB\"");
    out.push(sweep_on("memory tiny", SPEC.into(), tiny));
    out
}

/// The permits of the guarded set's limiter, a decision axis.
const PERMITS: &str =
    r#"(name: "permits", path: "policies[guarded].stack[1].policy.Limiter.permits", values: [4, 8]),"#;

/// Issue 18's decisions in a sweep: objectives, constraints, roles and linked axes.
fn decisions(spec: &dyn Fn(&str, &str) -> String) -> Vec<Case> {
    let axes = |more: &str| spec(AXIS, &format!("{AXIS}\n        {PERMITS}\n        {more}"));
    let decide = |d: &str| spec("replications: 2,", &format!("replications: 2,\n    decide: {d},"));
    let link = |l: &str| {
        axes(&format!("(name: \"l\", path: \"policies[guarded].stack[0].policy.Retry.max_attempts\", link: \"{l}\"),"))
    };
    vec![
        sweep(
            "decide valid control",
            decide(
                r#"(minimize: "dependency_peak_in_flight", subject_to: [(class: "api", metric: "ok_ratio", op: Ge, value: 0.5)])"#,
            ),
        ),
        sweep("decide unknown metric", decide(r#"(minimize: "api/bogus_ratio")"#)),
        sweep("decide unknown class", decide(r#"(maximize: "nobody/ok_ratio")"#)),
        sweep(
            "decide unknown phase",
            decide(
                r#"(minimize: "dependency_calls", subject_to: [(class: "api", metric: "ok_ratio", phase: "storm", op: Ge, value: 0.5)])"#,
            ),
        ),
        sweep(
            "decide constraint NaN",
            decide(
                r#"(minimize: "dependency_calls", subject_to: [(class: "api", metric: "ok_ratio", op: Ge, value: NaN)])"#,
            ),
        ),
        sweep("decide both senses", decide(r#"(minimize: "dependency_calls", maximize: "api/ok_ratio")"#)),
        sweep("decide no objective", decide("(subject_to: [])")),
        sweep("link valid control", link("permits / 4")),
        sweep("link to itself", link("l + 1")),
        sweep("link unknown axis", link("nobody * 2")),
        sweep("link invalid value", link("0 - permits")),
        sweep("link not a number", link("\\\"text\\\"")),
        sweep("link garbage", link("((")),
        sweep(
            "link cycle",
            axes(
                r#"(name: "l", path: "policies[guarded].stack[0].policy.Retry.max_attempts", link: "m"),
        (name: "m", path: "policies[guarded].stack[0].policy.Retry.multiplier", link: "l"),"#,
            ),
        ),
        sweep("link and values", link("permits\", values: [1, 2], unit: \"ms")),
        sweep(
            "role unknown",
            axes(r#"(name: "r", path: "policies[guarded].stack[0].policy.Retry.jitter", values: [0.1], role: Knob),"#),
        ),
    ]
}

/// `brownout tune FILE` on BASE: a valid spec, then each edit.
const TUNE: &str = r#"TuneSpec(
    name: "tu",
    base: "s.ron",
    replications: 2,
    policy: "guarded",
    knobs: [
        (name: "permits", path: "policies[guarded].stack[1].policy.Limiter.permits", range: (from: 1, to: 16), integer: true),
    ],
    decide: (minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", op: Ge, value: 0.2)]),
    budget: (runs: 4),
)
"#;

/// Tune specs: issue 18's bad inputs (no decision to search, unknown metric or phase) and
/// bad knobs, budgets and fields.
pub fn tunes() -> Vec<Case> {
    let spec = |from: &str, to: &str| {
        assert_eq!(TUNE.matches(from).count(), 1, "TUNE must contain {from:?} once");
        TUNE.replacen(from, to, 1)
    };
    let knob = |k: &str| {
        spec(
            r#"(name: "permits", path: "policies[guarded].stack[1].policy.Limiter.permits", range: (from: 1, to: 16), integer: true),"#,
            k,
        )
    };
    let decide = |d: &str| {
        spec(r#"(minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", op: Ge, value: 0.2)])"#, d)
    };
    let cases = [
        ("valid control", TUNE.to_string()),
        ("no knobs", knob("")),
        (
            "condition knob",
            knob(r#"(name: "rate", path: "classes[api].arrivals.Poisson.rate_per_s", range: (from: 1, to: 30)),"#),
        ),
        ("other policy's knob", knob(r#"(name: "q", path: "policies[direct].stack", range: (from: 1, to: 3)),"#)),
        (
            "knob path missing",
            knob(r#"(name: "p", path: "policies[guarded].stack[1].policy.Limiter.nope", range: (from: 1, to: 3)),"#),
        ),
        (
            "knob range reversed",
            knob(r#"(name: "p", path: "policies[guarded].stack[1].policy.Limiter.permits", range: (from: 9, to: 3)),"#),
        ),
        (
            "knob range NaN",
            knob(
                r#"(name: "p", path: "policies[guarded].stack[1].policy.Limiter.permits", range: (from: NaN, to: 3)),"#,
            ),
        ),
        (
            "knob range invalid end",
            knob(r#"(name: "p", path: "policies[guarded].stack[1].policy.Limiter.permits", range: (from: 0, to: 3)),"#),
        ),
        ("unknown metric", decide(r#"(minimize: "api/bogus_ratio")"#)),
        // No candidate can meet it, so the run budget runs out as a search restarts: the
        // search must end with the runs it has, never inside the optimiser.
        (
            "infeasible control",
            decide(r#"(minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", op: Le, value: 0.0)])"#),
        ),
        (
            "unknown phase",
            decide(
                r#"(minimize: "permits", subject_to: [(class: "api", metric: "ok_ratio", phase: "storm", op: Ge, value: 0.2)])"#,
            ),
        ),
        ("unknown policy", spec("policy: \"guarded\"", "policy: \"nobody\"")),
        ("replications 1", spec("replications: 2", "replications: 1")),
        ("budget below one candidate", spec("budget: (runs: 4)", "budget: (runs: 1)")),
        ("budget wall garbage", spec("budget: (runs: 4)", "budget: (runs: 4, wall: \"soon\")")),
        ("unknown field", spec("replications: 2,", "replications: 2, colour: 1,")),
        ("missing base", spec("base: \"s.ron\"", "base: \"nothing.ron\"")),
        ("truncated", TUNE[..TUNE.len() / 2].to_string()),
    ];
    cases
        .into_iter()
        .map(|(name, text)| Case {
            name: format!("tune {name}"),
            files: vec![
                ("tu.ron".into(), text.into_bytes()),
                ("s.ron".into(), super::scenarios::BASE.as_bytes().to_vec()),
            ],
            action: Action::Tune("tu.ron".into()),
            located: true,
        })
        .collect()
}

/// A sweep case on the valid base scenario.
fn sweep(name: &str, spec: String) -> Case {
    sweep_on(name, spec, super::scenarios::BASE.to_string())
}

/// Command lines: `{dir}` is the case's folder, which holds a valid `s.ron`.
pub fn commands() -> Vec<Case> {
    let lines: &[(&str, &[&str], &str)] = &[
        ("no arguments", &[], "Usage"),
        ("unknown subcommand", &["explode"], "explode"),
        ("unknown flag", &["run", "{dir}/s.ron", "--frobnicate"], "--frobnicate"),
        ("run missing file", &["run", "{dir}/nothing.ron", "--out", "{dir}/out"], "nothing.ron"),
        ("check missing file", &["check", "{dir}/nothing.ron"], "nothing.ron"),
        ("check folder", &["check", "{dir}"], "{dir}"),
        ("run folder", &["run", "{dir}", "--out", "{dir}/out"], "{dir}"),
        ("check dev null", &["check", "/dev/null"], "/dev/null"),
        ("check dev zero", &["check", "/dev/zero"], "/dev/zero"),
        ("seed negative", &["run", "{dir}/s.ron", "--seed", "-1", "--out", "{dir}/out"], "-1"),
        ("seed too big", &["run", "{dir}/s.ron", "--seed", "18446744073709551616", "--out", "{dir}/out"], "--seed"),
        ("seed text", &["run", "{dir}/s.ron", "--seed", "abc", "--out", "{dir}/out"], "--seed"),
        ("run no file", &["run"], "Usage"),
        ("sweep missing spec", &["sweep", "{dir}/nothing.ron", "--out", "{dir}/out"], "nothing.ron"),
        (
            "sweep spec dev zero",
            &["sweep", "/dev/zero", "--out", "{dir}/out"],
            "/dev/zero: the sweep spec is not a regular file",
        ),
        ("sweep jobs text", &["sweep", "{dir}/s.ron", "-j", "many", "--out", "{dir}/out"], "many"),
        ("sweep shard reversed", &["sweep", "{dir}/s.ron", "--shard", "3/2", "--out", "{dir}/out"], "3/2"),
        ("sweep shard text", &["sweep", "{dir}/s.ron", "--shard", "x", "--out", "{dir}/out"], "shard"),
        ("sweep a scenario", &["sweep", "{dir}/s.ron", "--out", "{dir}/out"], "s.ron"),
        ("merge nothing", &["merge", "--out", "{dir}/out"], "Usage"),
        ("merge missing", &["merge", "{dir}/a", "{dir}/b", "--out", "{dir}/out"], "{dir}/a"),
        ("plot missing", &["plot", "{dir}/nothing"], "nothing"),
        ("verify unknown flag", &["verify", "--frobnicate"], "--frobnicate"),
        ("out is a file", &["run", "{dir}/s.ron", "--out", "{dir}/s.ron"], "s.ron"),
    ];
    lines
        .iter()
        .map(|(n, args, mention)| Case {
            name: format!("cli {n}"),
            files: vec![("s.ron".into(), super::scenarios::BASE.as_bytes().to_vec())],
            action: Action::Cli(args.iter().map(|a| a.to_string()).collect(), mention.to_string()),
            located: false,
        })
        .collect()
}

/// Issue 32's nonsense in sweep and tune specs: a metric named twice (two `sweep.csv`
/// columns of one name), constraints on a fraction outside [0, 1], a business objective over
/// a base without a `business` section, a class given to a run-level metric. Each refused.
pub fn nonsense() -> Vec<Case> {
    let spec = |from: &str, to: &str| {
        assert_eq!(SPEC.matches(from).count(), 1, "SPEC must contain {from:?} once");
        SPEC.replacen(from, to, 1)
    };
    let decide = |d: &str| spec("replications: 2,", &format!("replications: 2,\n    decide: {d},"));
    let base = super::scenarios::BASE;
    let no_business = super::scenarios::without_business();
    let tune = |from: &str, to: &str| {
        assert_eq!(TUNE.matches(from).count(), 1, "TUNE must contain {from:?} once");
        TUNE.replacen(from, to, 1)
    };
    let mut out = vec![
        sweep(
            "nonsense metric twice",
            spec("\"dependency_peak_in_flight\"]", "\"dependency_peak_in_flight\", \"api/ok_ratio\"]"),
        ),
        sweep(
            "nonsense phase metric twice",
            spec("\"dependency_peak_in_flight\"]", "\"dependency_peak_in_flight\", \"dependency_peak_in_flight\"]"),
        ),
        sweep(
            "nonsense constraint ratio 2",
            decide(
                r#"(minimize: "dependency_calls", subject_to: [(class: "api", metric: "in_time_ratio", op: Ge, value: 2.0)])"#,
            ),
        ),
        sweep(
            "nonsense constraint ratio negative",
            decide(
                r#"(minimize: "dependency_calls", subject_to: [(class: "api", metric: "ok_ratio", op: Le, value: -0.5)])"#,
            ),
        ),
        sweep("nonsense class on run metric", spec("\"api/ok_ratio\"", "\"api/amplification\"")),
        sweep_on("nonsense business without business", decide(r#"(minimize: "business_cost")"#), no_business.clone()),
    ];
    let tunes = [
        ("nonsense constraint ratio 2", tune("op: Ge, value: 0.2", "op: Ge, value: 2.0"), base.to_string()),
        (
            "nonsense business without business",
            tune("minimize: \"permits\"", "minimize: \"business_cost\""),
            no_business,
        ),
    ];
    out.extend(tunes.into_iter().map(|(name, text, base)| Case {
        name: format!("tune {name}"),
        files: vec![("tu.ron".into(), text.into_bytes()), ("s.ron".into(), base.into_bytes())],
        action: Action::Tune("tu.ron".into()),
        located: true,
    }));
    out
}

/// Cut points per shipped file.
const CUTS: usize = 6;

/// Every shipped scenario, sweep and tune spec cut short at token boundaries (after a `,`,
/// `(`, `[` or `:`), evenly spread over the file: each must be refused at its end, located.
pub fn truncations() -> Vec<Case> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("scenarios folder") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "ron") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("shipped file");
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        // The value starts on the first line that begins with its type's name.
        let (head, kind) = text
            .lines()
            .scan(0, |at, line| {
                let start = *at;
                *at += line.len() + 1;
                Some((start, line))
            })
            .find(|(_, line)| line.starts_with(|c: char| c.is_ascii_uppercase()))
            .map(|(start, line)| (start + line.find('(').unwrap_or(0), line.split('(').next().unwrap_or("")))
            .expect("a shipped file holds a value");
        let action: fn(String) -> Action = match kind {
            "SweepSpec" => Action::Sweep,
            "TuneSpec" => Action::Tune,
            // A cut scenario fails in parsing: `check` reads it as `run` would.
            _ => Action::Check,
        };
        let ends: Vec<usize> = text
            .char_indices()
            .filter(|&(i, c)| i > head && ",([:".contains(c))
            .map(|(i, c)| i + c.len_utf8())
            .collect();
        let step = (ends.len() / CUTS).max(1);
        for &end in ends.iter().step_by(step).take(CUTS) {
            out.push(Case {
                name: format!("truncated {rel} at byte {end}"),
                files: vec![("t.ron".into(), text.as_bytes()[..end].to_vec())],
                action: action("t.ron".into()),
                located: true,
            });
        }
    }
    out
}
