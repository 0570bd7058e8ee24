//! The scenario fitted from traces, each value citing its spans, the latency CSV, and the
//! report.

use std::fmt::Write as _;

use super::super::write::{fmt_f, one_line, ron_str};
use super::{Calibrated, Dependency, EMPIRICAL_POINTS, Options, Plan, PlanCall};
use crate::units::Dur;

/// Unix seconds of `ns` from the first span, for comments.
fn unix(c: &Calibrated, rel_ns: u64) -> String {
    format!("{:.3}", (c.t0_ns + rel_ns) as f64 / 1e9)
}

/// The latencies (sorted, ms) as the CSV an `Empirical` latency reads: every one up to
/// `EMPIRICAL_POINTS`, else that many at evenly spaced quantiles (nearest rank of
/// (i + 0.5) / points).
pub(super) fn latency_csv(sorted_ms: &[f64]) -> String {
    let mut s = String::from("latency_ms\n");
    let n = sorted_ms.len();
    let points = n.min(EMPIRICAL_POINTS);
    for i in 0..points {
        let x =
            if n == points { sorted_ms[i] } else { sorted_ms[((i as f64 + 0.5) / points as f64 * n as f64) as usize] };
        writeln!(s, "{}", super::super::round6(x)).ok();
    }
    s
}

/// The latency CSV of each dependency of a graph: `latency-NAME.csv`, NAME the dependency's
/// file stem, `-2`, `-3`, ... after one another already has.
pub(super) fn latency_file_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken = std::collections::BTreeSet::new();
    names
        .map(|name| {
            let stem = crate::scenario::file_stem(name);
            let mut file = format!("latency-{stem}.csv");
            let mut n = 1;
            while !taken.insert(file.clone()) {
                n += 1;
                file = format!("latency-{stem}-{n}.csv");
            }
            file
        })
        .collect()
}

/// The nearest-rank quantile `q` of sorted values.
pub(super) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

pub(super) fn scenario_text(c: &Calibrated, opts: &Options) -> String {
    let span_ns = c.end_ns - c.t0_ns;
    // The horizon in whole milliseconds, covering the last span's end.
    let horizon = span_ns.div_ceil(1_000_000) * 1_000_000;
    let svc = one_line(&format!("{:?}", c.service));
    let mut s = String::new();
    let fitted = if c.graph {
        "// citing its spans: classes[].arrivals (SERVER spans per route), classes[].calls (the CLIENT\n\
         // spans under them), dependencies[].latency and error_rate (each dependency's CLIENT spans).\n\
         // NOT fitted, placeholders to replace"
    } else {
        "// citing its spans: classes[].arrivals (SERVER spans per route), dependency.latency and\n\
         // dependency.error_rate (the dependency's CLIENT spans). NOT fitted, placeholders to replace"
    };
    writeln!(
        s,
        "// Written by `brownout calibrate otlp` (docs/calibrate.md) from OpenTelemetry traces of service.name {svc}:\n\
         // {} spans read, the counted ones from {} to {} (Unix seconds), step {}. Fitted, each value\n\
         {fitted}\n\
         // with your service's: fleet, deadlines, policies.",
        c.spans_read,
        unix(c, 0),
        unix(c, span_ns),
        Dur(c.step_ns)
    )
    .ok();
    s.push_str("//\n// Which routes call which dependencies (parent/child links: a CLIENT span up through its\n");
    if c.graph {
        s.push_str("// parents to the SERVER span it serves), which the classes' call plans below are read from:\n");
    } else {
        s.push_str("// parents to the SERVER span it serves). The scenario models one dependency, the one below;\n");
        s.push_str("// the others and the calls per request are for a multi-dependency call plan:\n");
    }
    if c.links.is_empty() {
        s.push_str("//   (no CLIENT span links to a counted SERVER span)\n");
    }
    for l in &c.links {
        writeln!(
            s,
            "//   class {} -> {}: {:.3} calls per request ({} calls; {} of {} requests call it)",
            one_line(&format!("{:?}", l.class)),
            one_line(&format!("{:?}", l.dependency)),
            l.per_request(),
            l.calls,
            l.requests_calling,
            l.requests
        )
        .ok();
    }
    let called: Vec<String> = c
        .dependencies
        .iter()
        .enumerate()
        .map(|(i, d)| {
            format!(
                "{:?} ({} {}, {} calls{})",
                d.name,
                d.source,
                if d.source == "span name" { "of the CLIENT spans" } else { "attribute" },
                d.calls,
                if i == c.chosen && !c.graph { ", the one written" } else { "" }
            )
        })
        .collect();
    writeln!(s, "// Dependencies called: {}", one_line(&called.join(", "))).ok();
    for w in &c.warnings {
        writeln!(s, "// warning: {}", one_line(w)).ok();
    }
    s.push_str("Scenario(\n    name: \"calibrated\",\n");
    writeln!(
        s,
        "    description: {},",
        ron_str(&format!(
            "Fitted from OpenTelemetry traces of service {} starting at {} (Unix seconds), step {}.",
            c.service,
            unix(c, 0),
            Dur(c.step_ns)
        ))
    )
    .ok();
    writeln!(s, "    seed: 1,\n    horizon: \"{}\",\n    window: \"{}\",", Dur(horizon), Dur(c.step_ns)).ok();
    s.push_str("    fleet: (instances: 1, workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: \"1s\")), // placeholder\n");
    s.push_str("    classes: [\n");
    for r in &c.routes {
        let what = one_line(&format!("SERVER spans of service.name {:?} with {} {:?}", c.service, r.source, r.route));
        writeln!(
            s,
            "        (name: {}, deadline: \"1s\", // deadline: placeholder\n         arrivals: PoissonProfile(points: [ // requests/s: {what}, per step",
            ron_str(&r.class)
        )
        .ok();
        for (at, rate, n, width) in &r.rates {
            writeln!(
                s,
                "            (\"{}\", {}), // {n} spans starting in [{}, {})",
                Dur(*at),
                fmt_f(*rate),
                unix(c, *at),
                unix(c, at + width)
            )
            .ok();
        }
        match c.plans.iter().find(|p| p.class == r.class) {
            None => s.push_str("         ])),\n"),
            Some(p) => plan_text(&mut s, c, p),
        }
    }
    if c.graph {
        s.push_str("    ],\n    dependencies: [\n");
        for (d, (file, _)) in c.dependencies.iter().zip(&c.latency_files) {
            s.push_str("        (\n");
            dependency_text(&mut s, c, d, file, "            ");
            s.push_str("        ),\n");
        }
        s.push_str("    ],\n");
    } else {
        s.push_str("    ],\n    dependency: (\n");
        dependency_text(&mut s, c, &c.dependencies[c.chosen], &opts.latency_file, "        ");
        s.push_str("    ),\n");
    }
    s.push_str("    policies: [(name: \"none\", stack: [])], // placeholder\n)\n");
    s
}

/// The fields of dependency `d` (name, latency from `file`, error rate), each line after
/// `indent`.
fn dependency_text(s: &mut String, c: &Calibrated, d: &Dependency, file: &str, indent: &str) {
    let span_ns = c.end_ns - c.t0_ns;
    let who = one_line(&format!("CLIENT spans of service.name {:?} with {} {:?}", c.service, d.source, d.name));
    writeln!(s, "{indent}name: {}, // {} of the CLIENT spans", ron_str(&d.name), d.source).ok();
    let written = if d.latencies_ms.len() <= EMPIRICAL_POINTS {
        "every one".to_string()
    } else {
        format!("{EMPIRICAL_POINTS} evenly spaced quantiles")
    };
    writeln!(
        s,
        "{indent}latency: Empirical(file: {}), // endTimeUnixNano - startTimeUnixNano of the {} {who} ({written})",
        ron_str(file),
        d.calls
    )
    .ok();
    writeln!(s, "{indent}error_rate: Points([ // share of the step's {who} whose status.code is 2 (ERROR)").ok();
    for (at, share, errors, calls) in &d.error_rate {
        // The last step runs to the last span's end (it is the one two steps would overrun).
        let to = if at + 2 * c.step_ns > span_ns { span_ns } else { at + c.step_ns };
        writeln!(
            s,
            "{indent}    (\"{}\", {}), // {errors} of {calls} calls starting in [{}, {})",
            Dur(*at),
            fmt_f(*share),
            unix(c, *at),
            unix(c, to)
        )
        .ok();
    }
    writeln!(s, "{indent}]),").ok();
}

/// What the spans say of one call of a plan, for its comment.
fn call_evidence(c: &Calibrated, p: &Plan, k: &PlanCall) -> String {
    let name = &c.dependencies[k.dependency].name;
    let nth = if k.nth == 0 { String::new() } else { format!(" (call {} to it)", k.nth + 1) };
    let verdict = if k.optional {
        format!("Optional: {} of those requests still answered without ERROR", k.tolerated)
    } else if k.failed == 0 {
        "required: no call failed, so no failure shows it tolerated".to_string()
    } else {
        format!("required: only {} of those requests answered without ERROR", k.tolerated)
    };
    format!("{name:?}{nth} in {} of {} requests, {} of them ERROR, {verdict}", k.present, p.requests, k.failed)
}

/// A class's plan after its arrivals: `calls: [..]` with the spans that decided each step,
/// or `calls_dependency: false` when no call is made by more than half of its requests.
fn plan_text(s: &mut String, c: &Calibrated, p: &Plan) {
    s.push_str("         ]),\n");
    if p.steps.is_empty() {
        writeln!(
            s,
            "         calls_dependency: false), // no CLIENT span is under more than half of its {} requests",
            p.requests
        )
        .ok();
        return;
    }
    writeln!(
        s,
        "         calls: [ // the CLIENT spans under its SERVER spans: calls that overlap in time run in parallel, the others in turn; {} of {} requests call exactly so",
        p.matching, p.requests
    )
    .ok();
    let names: Vec<String> = c.dependencies.iter().map(|d| d.name.clone()).collect();
    for step in &p.steps {
        let one = Plan { steps: vec![step.clone()], ..p.clone() };
        let text = one.ron(&names);
        let why: Vec<String> = step.iter().map(|k| call_evidence(c, p, k)).collect();
        writeln!(s, "             {}, // {}", &text[1..text.len() - 1], one_line(&why.join("; "))).ok();
    }
    s.push_str("         ]),\n");
}

pub(super) fn report_text(c: &Calibrated) -> String {
    let mut s = String::from("# Calibration from traces\n\n");
    writeln!(
        s,
        "Service {:?}: {} spans read; counted spans from {} to {} (Unix seconds), step {}.",
        c.service,
        c.spans_read,
        unix(c, 0),
        unix(c, c.end_ns - c.t0_ns),
        Dur(c.step_ns)
    )
    .ok();
    for (svc, n) in &c.other_services {
        writeln!(s, "Not read: {n} spans of service {svc:?}.").ok();
    }
    s.push_str(
        "\n## Routes (classes)\n\n| class | route | named by | requests | mean requests/s |\n|---|---|---|---|---|\n",
    );
    let secs = (c.end_ns - c.t0_ns) as f64 / 1e9;
    for r in &c.routes {
        writeln!(
            s,
            "| {} | {} | {} | {} | {:.3} |",
            md(&r.class),
            md(&r.route),
            r.source,
            r.requests,
            r.requests as f64 / secs
        )
        .ok();
    }
    s.push_str("\n## Dependencies (CLIENT spans)\n\n| dependency | named by | calls | errors | error share | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|---|---|\n");
    for (i, d) in c.dependencies.iter().enumerate() {
        let q = |p: f64| quantile(&d.latencies_ms, p);
        writeln!(
            s,
            "| {}{} | {} | {} | {} | {:.4} | {:.3} | {:.3} | {:.3} | {:.3} |",
            md(&d.name),
            if i == c.chosen && !c.graph { " (written)" } else { "" },
            d.source,
            d.calls,
            d.errors,
            d.errors as f64 / d.calls as f64,
            q(0.5),
            q(0.9),
            q(0.99),
            q(1.0)
        )
        .ok();
    }
    s.push_str("\n## Calls per request (parent/child links)\n\n| class | dependency | calls | per request | requests calling |\n|---|---|---|---|---|\n");
    for l in &c.links {
        writeln!(
            s,
            "| {} | {} | {} | {:.3} | {} of {} |",
            md(&l.class),
            md(&l.dependency),
            l.calls,
            l.per_request(),
            l.requests_calling,
            l.requests
        )
        .ok();
    }
    if c.graph {
        s.push_str("\n## Call plans (CLIENT spans that overlap in time run in parallel)\n\n| class | plan | requests calling exactly so |\n|---|---|---|\n");
        let names: Vec<String> = c.dependencies.iter().map(|d| d.name.clone()).collect();
        for p in &c.plans {
            let plan = if p.steps.is_empty() { "no call (calls_dependency: false)".into() } else { p.ron(&names) };
            writeln!(s, "| {} | {} | {} of {} |", md(&p.class), md(&plan), p.matching, p.requests).ok();
        }
    }
    if !c.warnings.is_empty() {
        writeln!(s, "\n## Warnings ({})\n", c.warnings.len()).ok();
        for w in &c.warnings {
            writeln!(s, "- {}", one_line(w)).ok();
        }
    }
    if !c.skipped.is_empty() {
        writeln!(s, "\n## Skipped ({})\n", c.skipped.len()).ok();
        for k in &c.skipped {
            writeln!(s, "- {}", one_line(&k.to_string())).ok();
        }
    }
    s
}

/// A table cell: markup escaped, on one line.
fn md(s: &str) -> String {
    crate::report::escape::md(s)
}
