//! `brownout diff A B`: print what changed between two result folders (logic in
//! [`brownout::diff`]), and guard a change in CI with `--fail-on-regression`.

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use super::{Failure, json};
use brownout::diff::{self, Change, Diff, Folder, Guard, Kind, Rule, Verdict};
use brownout::report::escape;

/// Arguments of `brownout diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The first result folder (the baseline).
    a: PathBuf,
    /// The second result folder (the change).
    b: PathBuf,
    /// Without replications, the smallest relative change shown (0.01 = 1 %; `1%` also works).
    #[arg(long, default_value = "0.01", value_parser = parse_fraction)]
    min_change: f64,
    /// Exit 1 when METRIC (or CLASS/METRIC) got worse beyond noise and by more than THRESHOLD
    /// (relative, e.g. 0.05 or 5%; default 0). May be given more than once.
    #[arg(long, value_name = "METRIC[:THRESHOLD]")]
    fail_on_regression: Vec<Guard>,
    /// Print one JSON document on stdout (docs/json.md).
    #[arg(long)]
    json: bool,
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    let (n, scale) = s.strip_suffix('%').map_or((s, 1.0), |n| (n, 0.01));
    match n.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x * scale),
        _ => Err(format!("`{s}`: expected a non-negative number such as 0.01 or 1%")),
    }
}

/// Compare the folders, print the changes, and fail (exit 1) on a guarded regression.
pub fn diff(args: DiffArgs) -> Result<(), Failure> {
    let load = |dir: &PathBuf| diff::load(dir).map_err(|e| Failure::input(format!("error: {e:#}")));
    let folders = load(&args.a).and_then(|a| Ok((a, load(&args.b)?)));
    let (a, b) = match folders {
        Ok(ab) => ab,
        Err(f) => return Err(if args.json { json::fail("diff", f, None) } else { f }),
    };
    if a.kind != b.kind {
        let f = Failure::input(format!(
            "error: {} is a {} folder but {} is a {} folder: diff compares runs with runs, sweeps with sweeps",
            a.dir.display(),
            kind_name(a.kind),
            b.dir.display(),
            kind_name(b.kind)
        ));
        return Err(if args.json { json::fail("diff", f, None) } else { f });
    }
    let d = diff::compare(&a.figures, &b.figures, Rule { min_change: args.min_change });
    let broken: Vec<(&Guard, Vec<&Change>)> =
        args.fail_on_regression.iter().map(|g| (g, g.broken(&d))).filter(|(_, c)| !c.is_empty()).collect();
    let code = if broken.is_empty() { 0 } else { 1 };
    if args.json {
        json::print(&document(&a, &b, &d, args.min_change, &broken, code));
    } else {
        print!("{}", escape::terminal(&text(&a, &b, &d, args.min_change)));
    }
    if broken.is_empty() {
        return Ok(());
    }
    let what: Vec<String> = broken
        .iter()
        .map(|(g, changes)| {
            format!("{} got worse in {} place(s) (allowed {} %)", g.metric, changes.len(), g.threshold * 100.0)
        })
        .collect();
    Err(Failure { code: 1, message: format!("regression: {}", what.join("; ")) })
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Run => "run",
        Kind::Sweep => "sweep",
    }
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::Changed => "changed",
    }
}

/// The rule in words, for both outputs.
fn rule_text(min_change: f64, kind: Kind) -> String {
    match kind {
        Kind::Sweep => "95 % intervals that do not overlap".into(),
        Kind::Run => format!("relative change above {} % (no replications)", min_change * 100.0),
    }
}

/// Where a change is, for people: `point | policy / class`.
fn place(c: &Change) -> String {
    let mut s = String::new();
    if let Some(p) = &c.key.point {
        s.push_str(&format!("[{p}] "));
    }
    s.push_str(&c.key.policy);
    for part in [&c.key.class, &c.key.phase].into_iter().flatten() {
        s.push_str(&format!(" / {part}"));
    }
    s
}

fn text(a: &Folder, b: &Folder, d: &Diff, min_change: f64) -> String {
    let mut out = format!("A: {} (scenario {}, seed {})\n", a.dir.display(), a.scenario, a.seed);
    out.push_str(&format!("B: {} (scenario {}, seed {})\n", b.dir.display(), b.scenario, b.seed));
    if a.scenario != b.scenario {
        out.push_str(&format!(
            "note: different scenarios ({} and {}): figures are compared by policy set and class name\n",
            a.scenario, b.scenario
        ));
    }
    out.push_str(&format!(
        "{} of {} figures changed beyond noise ({})\n",
        d.changes.len(),
        d.compared,
        rule_text(min_change, a.kind)
    ));
    let mut changes: Vec<&Change> = d.changes.iter().collect();
    changes.sort_by(|x, y| diff::by_severity(x, y));
    for c in changes {
        let rel = c.relative.map_or("from 0".into(), |r| format!("{:+.1} %", r * 100.0));
        let ci = |x: Option<(f64, f64)>| x.map_or(String::new(), |(lo, hi)| format!(" [{lo:.4}, {hi:.4}]"));
        out.push_str(&format!(
            "  {:<7} {}  {} ({}): {:.4}{} -> {:.4}{} ({rel})\n",
            verdict_name(c.verdict),
            place(c),
            c.metric,
            c.unit,
            c.a,
            ci(c.a_ci95),
            c.b,
            ci(c.b_ci95)
        ));
    }
    for (side, keys) in [("A", &d.only_in_a), ("B", &d.only_in_b)] {
        for k in keys.iter() {
            let class = k.class.as_deref().map_or(String::new(), |c| format!(" / {c}"));
            out.push_str(&format!("  only in {side}: {}{class}\n", k.policy));
        }
    }
    out
}

fn side(f: &Folder) -> Value {
    json!({ "dir": f.dir.display().to_string(), "kind": kind_name(f.kind), "scenario": f.scenario, "seed": f.seed })
}

fn document(a: &Folder, b: &Folder, d: &Diff, min_change: f64, broken: &[(&Guard, Vec<&Change>)], code: u8) -> Value {
    let regressions: Vec<Value> = broken
        .iter()
        .map(|(g, changes)| {
            json!({
                "metric": g.metric,
                "class": g.class,
                "threshold": g.threshold,
                "changes": changes,
            })
        })
        .collect();
    json!({
        "schema_version": json::SCHEMA_VERSION,
        "command": "diff",
        "ok": code == 0,
        "exit_code": code,
        "a": side(a),
        "b": side(b),
        "same_scenario": a.scenario == b.scenario,
        "rule": { "min_change": min_change, "intervals": a.kind == Kind::Sweep, "text": rule_text(min_change, a.kind) },
        "compared": d.compared,
        "changes": d.changes,
        "only_in_a": d.only_in_a,
        "only_in_b": d.only_in_b,
        "regressions": regressions,
    })
}
