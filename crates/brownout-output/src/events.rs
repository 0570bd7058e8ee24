//! The event log file (`--events FILE.jsonl`, one JSON object per line; docs/events.md) and
//! the transition sections of `report.md` and `report.html`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::html::escape;
use crate::metrics::events::{EventLog, LayerEvent};
use crate::runner::ScenarioResult;

/// Transitions `report.md` lists per policy set; the file has them all.
pub const MD_LINES: usize = 20;

/// Transitions the `report.html` table shows per policy set.
pub const HTML_ROWS: usize = 200;

/// Transitions the `report.html` timeline marks per policy set (the page stays small).
pub const TIMELINE_MARKS: usize = 2_000;

/// One line of the event file.
#[derive(Serialize)]
struct Line<'a> {
    t_s: f64,
    policy: &'a str,
    instance: u32,
    fleet: bool,
    layer: u8,
    kind: &'a str,
    what: &'a str,
    from: &'a str,
    to: &'a str,
    reason: &'a str,
    /// The dependencies a layer scoped to dependencies sees (left out for a layer of every
    /// call, so one-dependency logs keep their bytes).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    dependencies: &'a [String],
    /// The service whose stack the layer belongs to (left out for the gateway's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    service: Option<&'a str>,
}

/// Every run's events in one order: by time, then policy set order, then as they happened.
/// The runs whose logs the file and reports show: replication 0's, the run `summary.json`'s
/// `runs` describe (the other replications keep no log).
fn logged(result: &ScenarioResult) -> impl Iterator<Item = &crate::runner::RunMeta> {
    result.runs.iter().filter(|r| r.replication == 0)
}

fn merged(result: &ScenarioResult) -> Vec<(&str, &LayerEvent)> {
    let mut all: Vec<(&str, &LayerEvent)> =
        logged(result).flat_map(|r| r.log.events.iter().map(move |e| (r.policy.as_str(), e))).collect();
    // A stable sort keeps policy set order, then each run's own order, among equal times.
    all.sort_by_key(|(_, e)| e.t);
    all
}

/// The event file's content: one JSON object per line (docs/events.md).
pub fn events_jsonl(result: &ScenarioResult) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (policy, e) in merged(result) {
        let line = Line {
            t_s: e.t as f64 / 1e9,
            policy,
            instance: e.instance,
            fleet: e.fleet,
            layer: e.layer,
            kind: e.kind,
            what: e.aspect.name(),
            from: &e.from,
            to: &e.to,
            reason: &e.reason,
            dependencies: &e.dependencies,
            service: e.service.as_deref(),
        };
        serde_json::to_writer(&mut out, &line)?;
        out.push(b'\n');
    }
    Ok(out)
}

/// Refuse an event file path that cannot be written, before any run: its folder must exist
/// and take a new file, and the path must not be a folder.
pub fn check_writable(path: &Path) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if path.is_dir() {
        bail!("--events {}: is a folder", path.display());
    }
    if !dir.is_dir() {
        bail!("--events {}: folder {} does not exist", path.display(), dir.display());
    }
    tempfile::tempfile_in(dir)
        .with_context(|| format!("--events {}: cannot write in {}", path.display(), dir.display()))?;
    Ok(())
}

/// Write the event file atomically (no half-written file on error).
pub fn write_events(path: &Path, result: &ScenarioResult) -> Result<()> {
    crate::write_atomic(path, &events_jsonl(result)?)
}

/// True when some run kept an event log.
pub fn kept(result: &ScenarioResult) -> bool {
    result.runs.iter().any(|r| r.log.cap > 0)
}

fn when(e: &LayerEvent) -> String {
    format!("{:.3}", e.t as f64 / 1e9)
}

fn place(e: &LayerEvent) -> String {
    let scope = if e.fleet { " (fleet)" } else { "" };
    let service = e.service.as_deref().map(|s| format!("{s}: ")).unwrap_or_default();
    let deps = if e.dependencies.is_empty() { String::new() } else { format!(" [{}]", e.dependencies.join(", ")) };
    format!("{service}{} #{} {}{deps}{scope}", e.instance, e.layer, e.kind)
}

/// What follows the first `shown` transitions of a log in a report: how many more the event
/// file holds (it holds the kept ones, at most `--events-max`), and how many were counted but
/// never written. `None` when the report showed them all.
fn rest(log: &EventLog, shown: usize) -> Option<String> {
    let in_file = log.events.len().saturating_sub(shown);
    let mut parts = Vec::new();
    if in_file > 0 {
        parts.push(format!("{in_file} more in the event file"));
    }
    if log.dropped > 0 {
        parts.push(format!("{} more not written: --events-max {} per policy set", log.dropped, log.cap));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `report.md`'s section: the first transitions of each policy set and where the rest are.
pub fn md_section(result: &ScenarioResult, file: Option<&Path>) -> String {
    let mut out = String::from("\n## Transitions\n\n");
    if let Some(f) = file {
        out.push_str(&format!("Every transition, with its reason, is in `{}` (docs/events.md).\n", f.display()));
    }
    for r in logged(result) {
        let n = r.log.events.len() as u64 + r.log.dropped;
        out.push_str(&format!("\n### {}: {n} transition(s)\n\n", crate::report::escape::md(&r.policy)));
        if r.log.events.is_empty() {
            continue;
        }
        out.push_str("| t (s) | instance, layer | what | from | to | reason |\n|---|---|---|---|---|---|\n");
        for e in r.log.events.iter().take(MD_LINES) {
            let md = crate::report::escape::md;
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                when(e),
                md(&place(e)),
                e.aspect.name(),
                md(&e.from),
                md(&e.to),
                md(&e.reason)
            ));
        }
        if let Some(rest) = rest(&r.log, MD_LINES) {
            out.push_str(&format!("\n({rest})\n"));
        }
    }
    out
}

/// `report.html`'s section: a transition timeline per policy set (a strip with a mark per
/// transition, its reason on hover) and a table of the first transitions with their reasons.
pub fn html_section(result: &ScenarioResult, horizon_s: f64) -> String {
    let mut out = String::from("<h2>Transitions</h2>\n");
    for r in logged(result) {
        let n = r.log.events.len() as u64 + r.log.dropped;
        out.push_str(&format!("<h3>{}: {n} transition(s)</h3>\n", escape(&r.policy)));
        if r.log.events.is_empty() {
            continue;
        }
        out.push_str(&timeline(&r.log.events, horizon_s));
        out.push_str("<table>\n<tr><th>t (s)</th><th>instance, layer</th><th>what</th><th>from</th><th>to</th><th>reason</th></tr>\n");
        for e in r.log.events.iter().take(HTML_ROWS) {
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td style=\"text-align:left\">{}</td></tr>\n",
                when(e),
                escape(&place(e)),
                e.aspect.name(),
                escape(&e.from),
                escape(&e.to),
                escape(&e.reason)
            ));
        }
        out.push_str("</table>\n");
        if let Some(rest) = rest(&r.log, HTML_ROWS) {
            out.push_str(&format!("<p>{}.</p>\n", escape(&rest)));
        }
    }
    out
}

/// A strip 1000 wide for the horizon; each transition is a tick coloured by its new state.
fn timeline(events: &[LayerEvent], horizon_s: f64) -> String {
    let (w, h) = (1000.0, 24.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\">\
         <rect width=\"{w}\" height=\"{h}\" fill=\"#f4f4f4\"/>"
    );
    for e in events.iter().take(TIMELINE_MARKS) {
        let x = if horizon_s > 0.0 { (e.t as f64 / 1e9 / horizon_s * w).clamp(0.0, w) } else { 0.0 };
        let colour = match e.to.as_str() {
            "open" | "degraded" => "#c0392b",
            "half_open" => "#e6a700",
            "closed" | "normal" => "#2e8b57",
            _ => "#3465a4",
        };
        svg.push_str(&format!(
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"2\" y2=\"22\" stroke=\"{colour}\" stroke-width=\"2\"><title>{} s, {}: {} -&gt; {}: {}</title></line>",
            when(e),
            escape(&place(e)),
            escape(&e.from),
            escape(&e.to),
            escape(&e.reason)
        ));
    }
    svg.push_str("</svg>\n");
    format!("<figure>{svg}<figcaption>Transitions over the run (hover a mark for its reason).</figcaption></figure>\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::events::Aspect;

    /// A breaker's opening, in the gateway's stack or in service `service`'s.
    fn opened(service: Option<&str>, dependencies: &[&str]) -> LayerEvent {
        LayerEvent {
            t: 1_500_000_000,
            instance: 0,
            fleet: false,
            layer: 1,
            kind: "consecutive-breaker",
            aspect: Aspect::Breaker,
            from: "closed".into(),
            to: "open".into(),
            reason: "5 failures in a row".into(),
            dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
            service: service.map(str::to_string),
        }
    }

    fn line<'a>(e: &'a LayerEvent) -> Line<'a> {
        Line {
            t_s: e.t as f64 / 1e9,
            policy: "p",
            instance: e.instance,
            fleet: e.fleet,
            layer: e.layer,
            kind: e.kind,
            what: e.aspect.name(),
            from: &e.from,
            to: &e.to,
            reason: &e.reason,
            dependencies: &e.dependencies,
            service: e.service.as_deref(),
        }
    }

    #[test]
    fn a_service_s_layer_is_named_with_its_service_and_the_gateway_s_is_not() {
        // docs/events.md: `tax: 0 #0 timeout` for a service's layer; the gateway's as before.
        let gateway = opened(None, &["pricing"]);
        let service = opened(Some("pricing"), &["tax"]);
        assert_eq!(place(&gateway), "0 #1 consecutive-breaker [pricing]");
        assert_eq!(place(&service), "pricing: 0 #1 consecutive-breaker [tax]");
        let json = |e: &LayerEvent| serde_json::to_value(line(e)).unwrap();
        assert_eq!(json(&service)["service"], "pricing");
        assert_eq!(json(&service)["dependencies"], serde_json::json!(["tax"]));
        // Left out for the gateway's stack, so logs without services keep their bytes.
        assert!(json(&gateway).get("service").is_none());
        assert!(json(&opened(None, &[])).get("dependencies").is_none());
    }
}
