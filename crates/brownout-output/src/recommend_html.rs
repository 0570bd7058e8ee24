//! The sweep report's recommendation section (top of `report.html`), from `recommendation.json`:
//! the recommended setting and stack, the objective and each constraint with its interval and
//! verdict, the runner-up and why it lost, and the per-condition table behind the choice.

use crate::html::escape;
use crate::sweep::decide::{candidate_text, constraint_text, lost_text};
use brownout_core::decide::recommendation::{Candidate, ConstraintOut, Recommendation};

/// The section, or `None` for a file that is not a sweep's recommendation.
pub fn section(json: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(json).ok()?;
    if v.get("source")?.as_str()? != "sweep" {
        return None;
    }
    let r: Recommendation = serde_json::from_value(v.clone()).ok()?;
    let c = r.recommended.as_ref()?;
    let mut out = String::from("<h2>Recommendation</h2>\n");
    let sense = serde_json::to_value(r.sense).ok()?.as_str().unwrap_or_default().to_string();
    out.push_str(&format!(
        "<p><strong>{}</strong> — {sense} <code>{}</code> (mean {}), each constraint judged by its one-sided 95 % bound over {} replications, worst case over the conditions; {} candidates. {}</p>\n",
        escape(&candidate_text(c)),
        escape(&r.objective),
        num(c.objective.mean),
        r.replications,
        r.candidates,
        if r.feasible {
            "It meets every constraint in every condition."
        } else {
            "No candidate meets every constraint in every condition: this one has the least worst-case violation."
        }
    ));
    if let Some(stack) = &c.stack {
        out.push_str(&crate::html::code_block(stack));
    }
    out.push_str(&warnings_html(&r));
    out.push_str(&constraints_table(&r.constraints));
    if let Some(l) = lost_text(&r) {
        out.push_str(&format!("<p>{}</p>\n", escape(&l)));
    }
    out.push_str(&conditions_table(&v));
    Some(out)
}

/// The recommendation's warnings (`decide::recommendation::warnings`: a constraint no policy
/// can meet, the edge of a range, a constraint that never bound or does not move), as a
/// list; empty without any.
pub fn warnings_html(r: &Recommendation) -> String {
    let warnings = brownout_core::decide::recommendation::warnings(r);
    if warnings.is_empty() {
        return String::new();
    }
    let items: String = warnings.iter().map(|f| format!("<li>Warning: {}</li>\n", escape(f))).collect();
    format!("<ul class=\"flags\">\n{items}</ul>\n")
}

fn num(x: f64) -> String {
    if x.is_finite() { format!("{x:.4}") } else { "–".into() }
}

fn constraints_table(cs: &[ConstraintOut]) -> String {
    if cs.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<table>\n<tr><th>constraint</th><th>mean</th><th>one-sided 95 % bounds</th><th>margin</th><th>verdict</th></tr>\n",
    );
    for k in cs {
        out.push_str(&format!(
            "<tr><td>{} {} {}</td><td>{}</td><td>{} .. {}</td><td>{}</td><td>{:?}{}</td></tr>\n",
            escape(&k.metric),
            escape(&k.op),
            k.value,
            num(k.mean),
            num(k.lo),
            num(k.hi),
            num(k.margin),
            k.verdict,
            if k.untested { " (one replication)" } else { "" }
        ));
    }
    out.push_str("</table>\n");
    out
}

/// Every candidate in every condition, as in the file's `conditions`.
fn conditions_table(v: &serde_json::Value) -> String {
    let Some(rows) = v.get("conditions").and_then(|c| c.as_array()).filter(|r| !r.is_empty()) else {
        return String::new();
    };
    let mut out = String::from(
        "<h3>Per condition</h3>\n<table>\n<tr><th>candidate</th><th>condition</th><th>objective</th><th>constraints</th><th>feasible</th></tr>\n",
    );
    for row in rows {
        let cand: Option<Candidate> = serde_json::from_value(serde_json::json!({
            "policy": row["policy"], "setting": row["setting"], "objective": {"n": 0, "mean": 0.0, "lo": 0.0, "hi": 0.0},
            "constraints": [], "feasible": false, "violation": 0.0
        }))
        .ok();
        let condition: Vec<String> = row["condition"]
            .as_object()
            .map(|o| o.iter().map(|(k, x)| format!("{k}={x}")).collect())
            .unwrap_or_default();
        let cons: Vec<String> = serde_json::from_value::<Vec<ConstraintOut>>(row["constraints"].clone())
            .unwrap_or_default()
            .iter()
            .map(|k| escape(&constraint_text(k)))
            .collect();
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(&cand.map(|c| candidate_text(&c)).unwrap_or_default()),
            escape(&condition.join(", ")),
            num(row["objective"]["mean"].as_f64().unwrap_or(f64::NAN)),
            cons.join("<br>"),
            if row["feasible"].as_bool() == Some(true) { "yes" } else { "no" }
        ));
    }
    out.push_str("</table>\n");
    out
}
