//! The fitted scenario's RON text, each value with its source, and the fit report.

use super::*;

/// A time from the first sample, as a scenario duration.
pub(super) fn dur_ms(ms: u64) -> String {
    Dur(ms * 1_000_000).to_string()
}

/// A RON string literal.
pub(super) fn ron_str(s: &str) -> String {
    ron::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A comment's text on one line.
pub(super) fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

pub(super) fn scenario_text(
    c: &Calibrated,
    opts: &Options,
    cites: &BTreeMap<String, Vec<String>>,
    base_cite: &str,
    t_end: i64,
    quiet_end: i64,
) -> String {
    let horizon = (t_end - c.t0_ms) as u64 + c.step_ms;
    let at = |rel: u64| (c.t0_ms + rel as i64) as f64 / 1000.0;
    let mut s = String::new();
    s.push_str("// Written by `brownout calibrate prometheus` (docs/openmetrics.md). Fitted from the data, each\n");
    s.push_str("// value citing its series and sample time (Unix seconds): classes[].arrivals,\n");
    s.push_str("// dependency.latency and dependency.drift. NOT fitted, placeholders to replace with your\n");
    s.push_str("// service's: fleet, deadlines, policies.\n");
    s.push_str("Scenario(\n    name: \"calibrated\",\n");
    writeln!(
        s,
        "    description: {},",
        ron_str(&format!(
            "Fitted from Prometheus data starting at {:.3} (Unix seconds), step {}.",
            c.t0_ms as f64 / 1000.0,
            dur_ms(c.step_ms)
        ))
    )
    .ok();
    writeln!(s, "    seed: 1,\n    horizon: \"{}\",\n    window: \"{}\",", dur_ms(horizon), dur_ms(c.step_ms)).ok();
    s.push_str("    fleet: (instances: 1, workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: \"1s\")), // placeholder\n");
    s.push_str("    classes: [\n");
    for (name, points) in &c.arrivals {
        let src = one_line(&cites[name].join(", "));
        writeln!(s, "        (name: {}, deadline: \"1s\", // deadline: placeholder\n         arrivals: PoissonProfile(points: [ // requests/s from {src}", ron_str(name)).ok();
        for (t, v) in points {
            writeln!(s, "            (\"{}\", {}), // {src} @ {:.3}", dur_ms(*t), fmt_f(*v), at(*t)).ok();
        }
        s.push_str("         ])),\n");
    }
    s.push_str("    ],\n    dependency: (\n");
    let cite = one_line(base_cite);
    match &c.base {
        Base::Empirical(_) => {
            writeln!(s, "        latency: Empirical(file: {}), // {cite}", ron_str(&opts.latency_file)).ok();
        }
        Base::LogNormal { median_ms, sigma } => {
            writeln!(
                s,
                "        latency: LogNormal(median: \"{}\", sigma: {}), // {cite}",
                fmt_ms(*median_ms),
                fmt_f(*sigma)
            )
            .ok();
        }
    }
    writeln!(
        s,
        "        drift: Points([ // median at each step over the base median (quiet until {})",
        dur_ms((quiet_end - c.t0_ms) as u64)
    )
    .ok();
    for (t, f) in &c.drift {
        writeln!(s, "            (\"{}\", {}), // median @ {:.3}", dur_ms(*t), fmt_f(*f), at(*t)).ok();
    }
    s.push_str("        ]),\n    ),\n");
    s.push_str("    policies: [(name: \"none\", stack: [])], // placeholder\n)\n");
    s
}

/// A number as RON reads it back (always with a decimal point).
pub(super) fn fmt_f(x: f64) -> String {
    let t = format!("{x}");
    if t.contains(['.', 'e', 'E']) { t } else { format!("{t}.0") }
}

/// Milliseconds as a scenario duration, to the microsecond.
pub(super) fn fmt_ms(ms: f64) -> String {
    Dur((ms * 1000.0).round().max(1.0) as u64 * 1000).to_string()
}

pub(super) fn report_text(c: &Calibrated, rows: &[ReportRow], base_cite: &str) -> String {
    let mut s = String::from("# Calibration fit\n\n");
    writeln!(s, "Base latency: {base_cite}.\n").ok();
    match &c.base {
        Base::Empirical(v) => {
            writeln!(s, "Empirical distribution of {} points (median {:.3} ms).\n", v.len(), v[v.len() / 2]).ok()
        }
        Base::LogNormal { median_ms, sigma } => writeln!(s, "LogNormal(median {median_ms} ms, sigma {sigma}).\n").ok(),
    };
    s.push_str("Per step: the data's latency quantiles beside the fitted shape's (base latency times the step's drift factor), ms. ");
    s.push_str("The median matches by construction; the others say how well the shape holds.\n\n");
    let qs: Vec<f64> = rows.first().map(|r| r.1.iter().map(|x| x.0).collect()).unwrap_or_default();
    s.push_str("| t |");
    for q in &qs {
        write!(s, " data p{0} | fitted p{0} | error |", q * 100.0).ok();
    }
    s.push_str("\n|---|");
    s.push_str(&"---|---|---|".repeat(qs.len()));
    s.push('\n');
    let mut worst = vec![0.0f64; qs.len()];
    for (t, q) in rows {
        write!(s, "| {} |", dur_ms(*t)).ok();
        for (i, (_, d, f)) in q.iter().enumerate() {
            let e = (f - d) / d;
            if e.is_finite() {
                worst[i] = worst[i].max(e.abs());
                write!(s, " {d:.3} | {f:.3} | {:+.1} % |", e * 100.0).ok();
            } else {
                write!(s, " – | {f:.3} | – |").ok();
            }
        }
        s.push('\n');
    }
    s.push('\n');
    for (q, w) in qs.iter().zip(&worst) {
        writeln!(s, "- largest error at p{}: {:.1} %", q * 100.0, w * 100.0).ok();
    }
    if !c.skipped.is_empty() {
        writeln!(s, "\n## Skipped ({})\n", c.skipped.len()).ok();
        for k in &c.skipped {
            writeln!(s, "- {k}").ok();
        }
    }
    s
}
