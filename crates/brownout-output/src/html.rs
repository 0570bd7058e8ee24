//! `report.html`: one self-contained page (inline SVG charts, inline CSS, no network) with
//! the scenario, the comparison tables, the verdict and every chart.

use crate::charts::Rendered;
use crate::charts::style::{fmt_ms, fmt_num};
use crate::charts::sweep::{self, SweepResult};
use crate::metrics::summary::ScenarioSummary;
use crate::report;

const CSS: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1160px;margin:2em auto;\
padding:0 1em;color:#282828;line-height:1.45}h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{padding:.25em .7em;border-bottom:1px solid #e4e4e4;\
text-align:right}th:first-child,td:first-child{text-align:left}th{background:#f4f4f4}\
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}figcaption{color:#666;font-size:.9em}\
code{background:#f4f4f4;padding:0 .2em}";

/// Escape text for HTML element content and attribute values (control characters, invalid
/// in XML and invisible in HTML, are shown as `\u{..}`).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::report::escape::visible(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A block of text to copy as it is (a ready-to-paste stack): `<pre><code>` with markup
/// escaped and its line breaks kept (other control characters show as `\u{..}`).
pub fn code_block(text: &str) -> String {
    let lines: Vec<String> = text.split('\n').map(escape).collect();
    format!("<pre><code>{}</code></pre>\n", lines.join("\n"))
}

/// A whole page from a title and already-rendered sections.
pub fn page(title: &str, sections: &[String]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{t}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
        t = escape(title)
    );
    for s in sections {
        out.push_str(s);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The run section: description, setup, comparison tables and verdict.
pub fn run_section(description: &str, s: &ScenarioSummary) -> String {
    let mut out = String::new();
    if !description.trim().is_empty() {
        out.push_str(&format!("<p>{}</p>\n", escape(description.trim())));
    }
    let u = &s.setup;
    out.push_str(&format!(
        "<p>Seed {}, horizon {} s, warm-up {} s, window {} s; {} gateway instance(s) with {} worker \
         slots and {} connections each; {} measured seconds.</p>\n",
        s.seed,
        fmt_num(u.horizon_s),
        fmt_num(u.warmup_s),
        fmt_num(u.window_s),
        u.instances,
        u.worker_slots,
        u.pool_connections,
        fmt_num(s.measured_s)
    ));
    let deadlines: Vec<String> =
        u.classes.iter().map(|c| format!("{} {}", escape(&c.name), fmt_ms(c.deadline_ms))).collect();
    out.push_str(&format!("<p>Class deadlines: {}.</p>\n", deadlines.join(", ")));
    out.push_str(&decision_section(s));
    if let Some(note) = report::table::replications_note(s) {
        out.push_str(&format!("<p>{}</p>\n", escape(&note)));
    }
    out.push_str("<h2>Comparison</h2>\n");
    out.push_str(&markdown_to_html(&report::table::markdown(s)));
    let deps = report::dependencies::markdown(s);
    if let Some(body) = deps.trim_start().strip_prefix("## Dependencies") {
        out.push_str(&format!("<h2>Dependencies</h2>\n{}", markdown_to_html(body)));
    }
    out.push_str("<h2>Verdict</h2>\n");
    out.push_str(&markdown_to_html(&report::table::verdicts(s)));
    let slo = report::slo::markdown(s);
    if !slo.is_empty() {
        out.push_str(&format!("<h2 id=\"slo\">SLOs and error budgets</h2>\n{}", markdown_to_html(&slo)));
    }
    let recovery = report::recovery::markdown(s);
    if !recovery.is_empty() {
        out.push_str(&format!("<h2 id=\"recovery\">Recovery and backlog</h2>\n{}", markdown_to_html(&recovery)));
    }
    out
}

/// The run's recommendation (or, without a `decide` section, the incident phase's winners),
/// with the recommended stack ready to paste.
fn decision_section(s: &ScenarioSummary) -> String {
    let mut out = String::from("<section id=\"recommendation\">\n<h2>Recommendation</h2>\n");
    out.push_str(&markdown_to_html(&report::decision::markdown(s)));
    if let Some(stack) = s.decision.as_ref().and_then(|d| d.recommended.as_ref()?.stack.as_ref()) {
        out.push_str(&format!("<p>The recommended stack, ready to paste:</p>\n{}", code_block(stack)));
    }
    out.push_str("</section>\n");
    out
}

/// The sweep section: what was swept and the best setting per policy and metric.
pub fn sweep_section(sw: &SweepResult) -> String {
    let axes: Vec<String> = sw
        .axes
        .iter()
        .map(|a| {
            let vals: Vec<String> = a.values.iter().map(|v| fmt_num(*v)).collect();
            format!("<code>{}</code> ({}) over {}", escape(&a.name), escape(&a.path), vals.join(", "))
        })
        .collect();
    let mut out = format!(
        "<h2>Sweep {}</h2>\n<p>Base scenario <code>{}</code>, seed {}, {} replications per point; axes: {}.</p>\n",
        escape(&sw.sweep),
        escape(&sw.base),
        sw.seed,
        sw.replications,
        axes.join("; ")
    );
    out.push_str(&best_table(sw));
    out.push_str(&sensitivity_tables(&sw.sensitivity));
    out
}

/// Per metric, how much each axis moves it around the anchor (`sweep.json`'s `sensitivity`),
/// widest first: what the tornado charts draw, as numbers.
pub(crate) fn sensitivity_tables(list: &[brownout_core::sweep::sensitivity::Sensitivity]) -> String {
    use brownout_core::sweep::sensitivity::Mover;
    let mut out = String::new();
    for s in list {
        let unit = sweep::unit_of(&s.metric);
        let f = |v: f64| if v.is_nan() { "–".to_string() } else { unit.fmt(v) };
        let anchor: Vec<String> = s.anchor.iter().map(|(k, v)| format!("{k}={}", fmt_num(*v))).collect();
        out.push_str(&format!(
            "<h3>Sensitivity of {} ({})</h3>\n<p>Each axis moved alone, the others held at {} with {} ({}; mean there {}). \
             Width = highest − lowest mean; beyond noise = the paired 95 % interval (by seed) of the highest \
             setting minus the lowest excludes zero.</p>\n\
             <table>\n<tr><th>axis</th><th>role</th><th>lowest</th><th>highest</th><th>width</th><th>beyond noise</th></tr>\n",
            escape(&s.metric),
            escape(&s.role),
            escape(&s.policy),
            escape(&anchor.join(", ")),
            escape(&s.held),
            f(s.anchor_mean)
        ));
        for r in &s.rows {
            let role = match r.mover {
                Mover::Decision => "decision",
                Mover::Condition => "condition",
                Mover::Policy => "policy set",
            };
            let at = |v: f64| {
                let step = r.steps.iter().find(|x| x.mean.to_bits() == v.to_bits());
                step.map_or(f(v), |x| format!("{} at {}", f(v), escape(&x.label)))
            };
            let axis = match r.follows.is_empty() {
                true => escape(&r.axis),
                false => format!("{} ({})", escape(&r.axis), escape(&r.follows.join(", "))),
            };
            out.push_str(&format!(
                "<tr><td>{axis}</td><td>{role}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                at(r.lo),
                at(r.hi),
                f(r.width),
                if r.width.is_nan() {
                    "–"
                } else if r.significant {
                    "yes"
                } else {
                    "no"
                }
            ));
        }
        out.push_str("</table>\n");
    }
    out
}

/// How a sweep's ties were decided: the shared rule with each metric's margin, where the
/// file has best sets judged by it (older files: the charts' account of their rule).
pub fn sweep_rule(sw: &SweepResult) -> String {
    let Some(best) = sw.best.as_ref().filter(|_| sw.replications >= 2) else { return sweep::tie_rule(sw) };
    let mut margins: Vec<String> = Vec::new();
    for b in best {
        let unit =
            crate::metrics::catalogue::by_path(&b.metric).map_or(crate::metrics::catalogue::Unit::Number, |m| m.unit);
        let text = format!("{} ±{}", b.metric, crate::sweep::stats::margin_text(b.margin, unit));
        if !margins.contains(&text) {
            margins.push(text);
        }
    }
    format!(
        "{} replications; rule: {}, a difference within its margin is a tie ({})",
        sw.replications,
        crate::sweep::stats::RULE,
        margins.join(", ")
    )
}

/// The best decision settings per policy and metric (per condition where the sweep has
/// condition axes), ties all listed; none when every axis is a condition.
fn best_table(sw: &SweepResult) -> String {
    if !sw.axes.iter().any(sweep::SweepAxis::is_decision) {
        return "<p>Every axis is a condition: there is no setting to choose per metric; the recommendation \
                weighs the conditions.</p>\n"
            .into();
    }
    let conditions = sw.axes.iter().any(|a| !a.is_decision());
    let mut out = String::new();
    // How ties were decided: a difference claimed without the replications behind it is noise.
    out.push_str(&format!(
        "<p>Best settings{}; {}.</p>\n",
        if conditions { " per condition; across conditions see the recommendation" } else { "" },
        escape(&sweep_rule(sw))
    ));
    let cond_th = if conditions { "<th>condition</th>" } else { "" };
    out.push_str(&format!(
        "<table>\n<tr><th>metric</th><th>policy</th>{cond_th}<th>best mean</th><th>interval</th><th>setting</th></tr>\n"
    ));
    for m in sweep::metrics(sw) {
        for p in sweep::policies(sw) {
            for b in sweep::best(sw, &p, &m) {
                let Some(e) = b.top.metrics.get(&m) else { continue };
                let cond = if conditions { format!("<td>{}</td>", escape(&b.condition)) } else { String::new() };
                let interval = match e.ci() {
                    Some((lo, hi)) => format!("{} .. {}", fmt_num(lo), fmt_num(hi)),
                    None if sw.replications < 2 => "unknown (one replication)".into(),
                    None => "unknown".into(),
                };
                out.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td>{cond}<td>{}</td><td>{interval}</td><td>{}{}</td></tr>\n",
                    escape(&m),
                    escape(&p),
                    fmt_num(e.mean),
                    escape(&sweep::settings_text(sw, &b)),
                    if b.rows.len() > 1 { " (tie)" } else { "" }
                ));
            }
            for (c, why) in sweep::not_comparable(sw, &p, &m) {
                let cond = if conditions { format!("<td>{}</td>", escape(&c)) } else { String::new() };
                out.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td>{cond}<td>–</td><td>–</td><td>no best setting: {}</td></tr>\n",
                    escape(&m),
                    escape(&p),
                    escape(&why)
                ));
            }
        }
    }
    out.push_str("</table>\n");
    out
}

/// The charts, each an inline SVG figure.
pub fn charts_section(charts: &[Rendered]) -> String {
    if charts.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Charts</h2>\n");
    for c in charts {
        out.push_str(&format!(
            "<figure id=\"{}\">\n{}\n<figcaption>{} (<code>charts/{}.png</code>)</figcaption>\n</figure>\n",
            escape(&c.stem),
            strip_xml_declaration(&c.svg).trim(),
            escape(&c.title),
            escape(&c.stem)
        ));
    }
    out
}

/// An XML declaration is not allowed inside HTML; the `<svg>` element is.
fn strip_xml_declaration(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

/// The small Markdown subset that `report::table` emits: `### ` headings, pipe tables,
/// `- ` list items and paragraphs, with `**bold**` and `` `code` `` inline.
pub fn markdown_to_html(md: &str) -> String {
    let mut out = String::new();
    let mut in_table = false;
    let mut in_list = false;
    for line in md.lines() {
        let t = line.trim();
        let is_row = t.starts_with('|');
        if in_table && !is_row {
            out.push_str("</table>\n");
            in_table = false;
        }
        if in_list && !t.starts_with("- ") {
            out.push_str("</ul>\n");
            in_list = false;
        }
        if is_row {
            let cells = split_cells(t);
            if cells.iter().all(|c| c.chars().all(|ch| ch == '-')) {
                continue; // the header separator
            }
            let tag = if in_table { "td" } else { "th" };
            if !in_table {
                out.push_str("<table>\n");
                in_table = true;
            }
            out.push_str("<tr>");
            for c in cells {
                out.push_str(&format!("<{tag}>{}</{tag}>", inline(c)));
            }
            out.push_str("</tr>\n");
        } else if let Some(h) = t.strip_prefix("### ") {
            out.push_str(&format!("<h3>{}</h3>\n", inline(h)));
        } else if let Some(item) = t.strip_prefix("- ") {
            if !in_list {
                out.push_str("<ul>\n");
                in_list = true;
            }
            out.push_str(&format!("<li>{}</li>\n", inline(item)));
        } else if !t.is_empty() {
            out.push_str(&format!("<p>{}</p>\n", inline(t)));
        }
    }
    if in_table {
        out.push_str("</table>\n");
    }
    if in_list {
        out.push_str("</ul>\n");
    }
    out
}

/// The cells of a table row: split at each `|` that no backslash escapes, trimmed.
fn split_cells(row: &str) -> Vec<&str> {
    let inner = row.strip_prefix('|').unwrap_or(row);
    let inner = if inner.ends_with('|') && !inner.ends_with("\\|") { &inner[..inner.len() - 1] } else { inner };
    let mut cells = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in inner.char_indices() {
        if c == '|' && !escaped {
            cells.push(inner[start..i].trim());
            start = i + 1;
        }
        escaped = c == '\\' && !escaped;
    }
    cells.push(inner[start..].trim());
    cells
}

/// Escape (a backslash-escaped character becomes a numeric reference, so it is shown as
/// itself and never read as a marker), then turn paired `**` into `<strong>` and paired
/// backticks into `<code>`.
fn inline(s: &str) -> String {
    let mut e = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&n)) if n.is_ascii_punctuation() => {
                e.push_str(&format!("&#{};", u32::from(n)));
                chars.next();
            }
            _ => e.push_str(&escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    let e = pair(&e, "**", "strong");
    pair(&e, "`", "code")
}

fn pair(s: &str, marker: &str, tag: &str) -> String {
    let parts: Vec<&str> = s.split(marker).collect();
    // An odd count of parts means every marker has a partner.
    if parts.len() < 3 || parts.len().is_multiple_of(2) {
        return s.to_string();
    }
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            let close = if i % 2 == 1 { "" } else { "/" };
            out.push_str(&format!("<{close}{tag}>"));
        }
        out.push_str(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_become_header_then_data_cells() {
        let md = "\n### api\n\n| policy | ok |\n|---|---|\n| a<b | 1.0%* |\n\nend\n";
        assert_eq!(
            markdown_to_html(md),
            "<h3>api</h3>\n<table>\n<tr><th>policy</th><th>ok</th></tr>\n\
             <tr><td>a&lt;b</td><td>1.0%*</td></tr>\n</table>\n<p>end</p>\n"
        );
    }

    #[test]
    fn verdict_markup_becomes_strong_and_code() {
        assert_eq!(
            markdown_to_html("- **api**: `direct` won\n"),
            "<ul>\n<li><strong>api</strong>: <code>direct</code> won</li>\n</ul>\n"
        );
    }

    #[test]
    fn escaped_markdown_stays_literal() {
        let html = markdown_to_html("| policy | x |\n|---|---|\n| a\\|b | \\*1\\* \\<b> |\n");
        assert!(html.contains("<td>a&#124;b</td><td>&#42;1&#42; &#60;b&gt;</td>"), "{html}");
        assert_eq!(split_cells("| a \\| b | c |"), vec!["a \\| b", "c"]);
    }

    /// A recommendation from `source` whose stack spans lines and holds markup.
    fn recommendation(source: &str) -> crate::metrics::decision::Recommendation {
        use crate::metrics::decision::{Bounds, Candidate, Recommendation, Sense};
        let c = Candidate {
            policy: "p".into(),
            setting: Default::default(),
            stack: Some("[\n    (policy: Timeout(\"1s\")),\n]<b>".into()),
            objective: Bounds { n: 2, mean: 1.0, lo: 0.5, hi: 1.5 },
            constraints: Vec::new(),
            feasible: true,
            violation: 0.0,
        };
        Recommendation {
            source: source.into(),
            sense: Sense::Minimize,
            objective: "business_cost".into(),
            recommended: Some(c),
            feasible: true,
            constraints: Vec::new(),
            runner_up: None,
            lost: None,
            replications: 2,
            candidates: 1,
            bounds: Vec::new(),
            flags: Vec::new(),
            rule: String::new(),
        }
    }

    #[test]
    fn ready_to_paste_stacks_keep_their_line_breaks() {
        // The stack as RON prints it, lines and all; only markup is escaped.
        let want = "<pre><code>[\n    (policy: Timeout(&quot;1s&quot;)),\n]&lt;b&gt;</code></pre>";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/golden/grocery/summary.json");
        let mut s: ScenarioSummary = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        s.decision = Some(recommendation("run"));
        let run = run_section("", &s);
        assert!(run.contains(want) && !run.contains("\\u{a}"), "{run}");
        let sweep = crate::recommend_html::section(&serde_json::to_vec(&recommendation("sweep")).unwrap()).unwrap();
        assert!(sweep.contains(want) && !sweep.contains("\\u{a}"), "{sweep}");
        // Other control characters still show as text.
        assert_eq!(code_block("a\u{1b}[2J\r\n"), "<pre><code>a\\u{1b}[2J\\u{d}\n</code></pre>\n");
    }

    #[test]
    fn unpaired_markers_stay_literal() {
        assert_eq!(inline("a ` b"), "a ` b");
    }
}
