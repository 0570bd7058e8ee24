//! `report.html`'s burn-rate alerts (docs/slo.md): per class with an SLO and each policy set,
//! when each of its multi-window alerts would first have fired on the run's time series
//! (`metrics::slo::first_firing` over the windows as the charts read them back).

use crate::html::{escape, markdown_to_html};
use crate::metrics::WindowRow;
use crate::metrics::slo::{first_firing, window_counts};
use crate::metrics::summary::ScenarioSummary;
use crate::report::escape as md;

/// The alerts' section, or nothing without a class whose SLO has alerts or without rows.
/// `factor` is how many saved windows each row merges.
pub(crate) fn section(summary: &ScenarioSummary, rows: &[WindowRow], factor: u64) -> String {
    let u = &summary.setup;
    let window_s = u.window_s * factor as f64;
    let mut out = String::new();
    for c in &u.classes {
        let Some(slo) = c.slo.as_ref().filter(|s| !s.alerts.is_empty() && !rows.is_empty()) else { continue };
        let mut table = format!(
            "| policy | {} |\n|---|{}\n",
            slo.alerts.iter().map(|a| md::md(&a.name)).collect::<Vec<_>>().join(" | "),
            "---|".repeat(slo.alerts.len())
        );
        for r in &summary.runs {
            let w = window_counts(rows, &r.policy, &c.name, u.warmup_s, window_s, u.horizon_s);
            let cells: Vec<String> = slo
                .alerts
                .iter()
                .map(|a| first_firing(&w, slo.target, a).map_or("never".into(), |t| format!("{t} s")))
                .collect();
            table.push_str(&format!("| {} | {} |\n", md::md(&r.policy), cells.join(" | ")));
        }
        let rules: Vec<String> = slo
            .alerts
            .iter()
            .map(|a| format!("{}: burn > {} over {} s and over {} s", a.name, a.burn, a.long_s, a.short_s))
            .collect();
        out.push_str(&format!(
            "<h3>{}: when each alert would first fire</h3>\n<p>{}. Evaluated at the end of every window of the \
             time series after warm-up: a window's bad requests are those that finished in it not answered \
             within the deadline; a look-back longer than the time since warm-up takes the burn since warm-up.</p>\n{}",
            escape(&c.name),
            escape(&rules.join("; ")),
            markdown_to_html(&table)
        ));
    }
    if out.is_empty() {
        return out;
    }
    format!("<h2 id=\"slo-alerts\">SLO burn-rate alerts</h2>\n{out}")
}
