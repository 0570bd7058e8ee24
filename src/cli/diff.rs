//! `brownout diff A B`: print what changed between two result folders (logic in
//! [`brownout::diff`]), and guard a change in CI with `--fail-on-regression`.

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use super::{Failure, json};
use brownout::diff::{self, Change, Diff, Folder, Guard, Kind, Method, Rule, Verdict};
use brownout::report::escape;

/// Arguments of `brownout diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The first result folder (the baseline).
    a: PathBuf,
    /// The second result folder (the change).
    b: PathBuf,
    /// Without replications, the smallest relative change shown (0.01 = 1 %; `1%` also works):
    /// a fixed threshold, not a test against noise. Folders with replications on the same seeds
    /// are compared paired by seed, on other seeds by their 95 % intervals.
    #[arg(long, default_value = "0.01", value_parser = parse_fraction)]
    min_change: f64,
    /// Exit 1 when METRIC got worse by the rule and by more than THRESHOLD (relative, e.g. 0.05
    /// or 5%; default 0). `CLASS/` limits it to one class, `PHASE:` guards that phase instead of
    /// the whole run, `policy=SET:` one policy set. A guard that watches no figure (an unknown
    /// set, phase or class, folders of different scenarios) exits 2. May be given more than once.
    #[arg(long, value_name = "[policy=SET:][PHASE:][CLASS/]METRIC[:THRESHOLD]")]
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

/// Compare the folders, print the changes, and fail (exit 1) on a guarded regression; a guard
/// that watches no figure is bad input (exit 2), never a pass.
pub fn diff(args: DiffArgs) -> Result<(), Failure> {
    let fail = |f: Failure| if args.json { json::fail("diff", f, None) } else { f };
    let load = |dir: &PathBuf| diff::load(dir).map_err(|e| Failure::input(format!("error: {e:#}")));
    let (a, b) = load(&args.a).and_then(|a| Ok((a, load(&args.b)?))).map_err(fail)?;
    if a.kind != b.kind {
        return Err(fail(Failure::input(format!(
            "error: {} is a {} folder but {} is a {} folder: diff compares runs with runs, sweeps with sweeps",
            a.dir.display(),
            kind_name(a.kind),
            b.dir.display(),
            kind_name(b.kind)
        ))));
    }
    let rule = Rule { min_change: args.min_change, paired: !a.seeds.is_empty() && a.seeds == b.seeds };
    let d = diff::compare(&a.figures, &b.figures, rule);
    let checked: Vec<(&Guard, Vec<&Change>)> = args
        .fail_on_regression
        .iter()
        .map(|g| g.check(&a, &b, &d).map(|c| (g, c)))
        .collect::<Result<_, diff::Unseen>>()
        .map_err(|why| fail(Failure::input(format!("error: --fail-on-regression: {why}"))))?;
    let broken: Vec<(&Guard, Vec<&Change>)> = checked.into_iter().filter(|(_, c)| !c.is_empty()).collect();
    let code = if broken.is_empty() { 0 } else { 1 };
    if args.json {
        json::print(&document(&a, &b, &d, args.min_change, &broken, code));
    } else {
        print!("{}", escape::terminal(&text(&a, &b, &d, args.min_change)));
    }
    if broken.is_empty() {
        return Ok(());
    }
    let what: Vec<String> =
        broken.iter().flat_map(|(g, changes)| changes.iter().map(move |c| regression(g, c))).collect();
    Err(Failure { code: 1, message: format!("regression:\n{}", what.join("\n")) })
}

/// One broken guard's change in words: the policy set, class, phase, both values and the
/// interval the rule judged by.
fn regression(g: &Guard, c: &Change) -> String {
    let class = c.key.class.as_deref().map_or(String::new(), |k| format!(", class {k}"));
    let phase = c.key.phase.as_deref().map_or(", whole run".to_string(), |p| format!(", phase {p}"));
    let point = c.key.point.as_deref().map_or(String::new(), |p| format!(" [{p}]"));
    let rel = c.relative.map_or("from 0".into(), |r| format!("{:+.2} %", r * 100.0));
    let allowed = if g.threshold > 0.0 { format!(" (allowed {} %)", g.threshold * 100.0) } else { String::new() };
    format!(
        "  {g}: policy set {}{point}{class}{phase}: {} {} -> {} ({rel}){allowed}; {}",
        c.key.policy,
        c.metric,
        num(c.a),
        num(c.b),
        evidence(c)
    )
}

/// What backs a change: the paired interval, the two intervals, or the fixed threshold.
fn evidence(c: &Change) -> String {
    match (c.rule, c.diff_ci95) {
        (Method::PairedT, Some((lo, hi))) => format!(
            "B - A = {} [{}, {}] (paired by seed, 95 %, {} df, margin {})",
            num(c.b - c.a),
            num(lo),
            num(hi),
            c.df.map_or("no".into(), |d| d.to_string()),
            c.margin
        ),
        (Method::Intervals, _) => format!(
            "95 % intervals A [{}], B [{}] do not overlap (unpaired, margin {})",
            pair(c.a_ci95),
            pair(c.b_ci95),
            c.margin
        ),
        _ => "beyond the fixed relative threshold (no replications: not a test against noise)".into(),
    }
}

fn num(x: f64) -> String {
    if x.is_finite() { format!("{x:.4}") } else { "–".into() }
}

fn pair(p: Option<(f64, f64)>) -> String {
    p.map_or("–".into(), |(lo, hi)| format!("{}, {}", num(lo), num(hi)))
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

/// Where a change is, for people: `[point] policy / class @ phase`.
fn place(c: &Change) -> String {
    let mut s = String::new();
    if let Some(p) = &c.key.point {
        s.push_str(&format!("[{p}] "));
    }
    s.push_str(&c.key.policy);
    if let Some(class) = &c.key.class {
        s.push_str(&format!(" / {class}"));
    }
    if let Some(phase) = &c.key.phase {
        s.push_str(&format!(" @ {phase}"));
    }
    s
}

/// Why the seeds do or do not pair, for the header.
fn pairing(a: &Folder, b: &Folder) -> String {
    match (a.seeds.is_empty(), b.seeds.is_empty()) {
        (false, false) if a.seeds == b.seeds => {
            let from = if a.kind == Kind::Sweep { " (each run's value from journal.jsonl)" } else { "" };
            format!("both on the same {} seeds: paired by seed{from}", a.seeds.len())
        }
        (false, false) => format!(
            "replications on different seeds ({} and {}: another scenario seed or replication count): unpaired",
            a.seeds.len(),
            b.seeds.len()
        ),
        (true, true) if a.kind == Kind::Sweep => {
            "sweep folders without a complete journal (or one replication): compared by their 95 % intervals".into()
        }
        (true, true) => "no replications in either folder".into(),
        (true, false) => format!("only B has replications (rerun A with --replications {})", b.seeds.len()),
        (false, true) => format!("only A has replications (rerun B with --replications {})", a.seeds.len()),
    }
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
    out.push_str(&format!("seeds: {}\n", pairing(a, b)));
    for line in diff::rule_lines(d, min_change) {
        out.push_str(&format!("rule: {line}\n"));
    }
    out.push_str(&format!("{} of {} figures changed by these rules\n", d.changes.len(), d.compared));
    let mut changes: Vec<&Change> = d.changes.iter().collect();
    changes.sort_by(|x, y| diff::by_severity(x, y));
    for c in changes {
        let rel = c.relative.map_or("from 0".into(), |r| format!("{:+.1} %", r * 100.0));
        let ci = |x: Option<(f64, f64)>| x.map_or(String::new(), |p| format!(" [{}]", pair(Some(p))));
        let paired = match (c.rule, c.diff_ci95) {
            (Method::PairedT, Some(p)) => format!(", B - A [{}]", pair(Some(p))),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  {:<7} {}  {} ({}): {}{} -> {}{} ({rel}{paired})\n",
            verdict_name(c.verdict),
            place(c),
            c.metric,
            c.unit,
            num(c.a),
            ci(c.a_ci95),
            num(c.b),
            ci(c.b_ci95)
        ));
    }
    for (side, keys) in [("A", &d.only_in_a), ("B", &d.only_in_b)] {
        for k in keys.iter() {
            let class = k.class.as_deref().map_or(String::new(), |c| format!(" / {c}"));
            let phase = k.phase.as_deref().map_or(String::new(), |p| format!(" @ {p}"));
            out.push_str(&format!("  only in {side}: {}{class}{phase}\n", k.policy));
        }
    }
    out
}

fn side(f: &Folder) -> Value {
    json!({
        "dir": f.dir.display().to_string(),
        "kind": kind_name(f.kind),
        "scenario": f.scenario,
        "seed": f.seed,
        "seeds": f.seeds,
        "phases": f.phases,
    })
}

fn document(a: &Folder, b: &Folder, d: &Diff, min_change: f64, broken: &[(&Guard, Vec<&Change>)], code: u8) -> Value {
    let regressions: Vec<Value> = broken
        .iter()
        .map(|(g, changes)| {
            json!({
                "guard": g.to_string(),
                "policy": g.policy,
                "phase": g.phase,
                "class": g.class,
                "metric": g.metric,
                "threshold": g.threshold,
                "changes": changes,
            })
        })
        .collect();
    let methods: serde_json::Map<String, Value> =
        d.methods.iter().map(|(m, n)| (diff::method_name(*m).to_string(), json!(n))).collect();
    json!({
        "schema_version": json::SCHEMA_VERSION,
        "command": "diff",
        "ok": code == 0,
        "exit_code": code,
        "a": side(a),
        "b": side(b),
        "same_scenario": a.scenario == b.scenario,
        "rule": {
            "paired": !a.seeds.is_empty() && a.seeds == b.seeds,
            "methods": methods,
            "df": d.df,
            "min_change": min_change,
            "text": diff::rule_lines(d, min_change),
        },
        "compared": d.compared,
        "changes": d.changes,
        "only_in_a": d.only_in_a,
        "only_in_b": d.only_in_b,
        "regressions": regressions,
    })
}
