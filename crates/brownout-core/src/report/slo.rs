//! The SLO section of the reports (docs/slo.md): per class with an SLO, each policy set's
//! burn rate and error budget used over the run and each phase, and a sentence for the phase
//! that matters most ("api: `direct` burns 95 % of its 30-day budget in 21 minutes").

use super::escape;
use crate::metrics::summary::{ClassSummary, RunSummary, ScenarioSummary, SloSetup};

/// `seconds` as a reader says it: "21 minutes", "1.5 hours", "30 days".
pub fn span(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "never".into();
    }
    let (v, unit) = if seconds >= 2.0 * 86_400.0 {
        (seconds / 86_400.0, "day")
    } else if seconds >= 2.0 * 3600.0 {
        (seconds / 3600.0, "hour")
    } else if seconds >= 120.0 {
        (seconds / 60.0, "minute")
    } else {
        (seconds, "second")
    };
    let text = format!("{v:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {unit}{}", if text == "1" { "" } else { "s" })
}

/// A fraction as a percentage for prose ("95 %", "0.3 %", "–" for no value).
pub(crate) fn percent(f: f64) -> String {
    if f.is_nan() {
        return "–".into();
    }
    let p = f * 100.0;
    if p >= 10.0 {
        format!("{p:.0} %")
    } else if p >= 0.1 {
        format!("{p:.1} %")
    } else if p > 0.0 {
        // Two significant digits of a small share (0.00046 %).
        let decimals = (1.0 - p.log10().floor()).clamp(0.0, 12.0) as usize;
        format!("{p:.decimals$} %")
    } else {
        "0 %".into()
    }
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "–".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The sentence for one class of one run over a period of `period_s` seconds, made from its
/// figures: the share of the window's budget it burned, in how long, and how long the whole
/// budget would last at that burn.
pub fn sentence(class: &str, policy: &str, c: &ClassSummary, slo: &SloSetup, period_s: f64) -> String {
    let Some(f) = c.slo else { return String::new() };
    if f.burn_rate.is_nan() {
        return format!("{}: {} had no requests, so no burn rate.", escape::md(class), escape::md_code(policy));
    }
    let lasts = crate::metrics::slo::exhausted_after_s(f.burn_rate, slo.window_s);
    format!(
        "{}: {} burns {} of its {} budget in {} (burn rate {}; at this rate the whole budget lasts {}).",
        escape::md(class),
        escape::md_code(policy),
        percent(f.budget_used),
        span(slo.window_s).replace(' ', "-").trim_end_matches('s'),
        span(period_s),
        number(f.burn_rate),
        span(lasts)
    )
}

/// The section as Markdown; empty when no class has an SLO.
pub fn markdown(s: &ScenarioSummary) -> String {
    let classes: Vec<(usize, SloSetup)> =
        s.setup.classes.iter().enumerate().filter_map(|(i, c)| c.slo.clone().map(|slo| (i, slo))).collect();
    if classes.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "Burn rate = (bad / requests) / (1 − target), bad = requests not in time; budget used = burn rate × \
         period / SLO window (the window's requests taken at the period's rate).\n",
    );
    let mut periods: Vec<(String, &[RunSummary])> = vec![("run".into(), &s.runs)];
    for p in &s.phases {
        periods.push((p.name.clone(), &p.runs));
    }
    for (i, slo) in classes {
        let name = &s.setup.classes[i].name;
        out.push_str(&format!(
            "\n### {}: {} in time over {}\n\n| policy | period | requests | bad | burn rate | budget used |\n|---|---|---|---|---|---|\n",
            escape::md(name),
            percent(slo.target).replace(" %", "%"),
            span(slo.window_s)
        ));
        for (k, run) in s.runs.iter().enumerate() {
            for (period, runs) in &periods {
                let Some(c) = runs.get(k).and_then(|r| r.classes.get(i)) else { continue };
                let f =
                    c.slo.unwrap_or(crate::metrics::summary::SloFigures { burn_rate: f64::NAN, budget_used: f64::NAN });
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} |\n",
                    escape::md(&run.policy),
                    escape::md(period),
                    c.requests,
                    c.requests.saturating_sub(c.in_time),
                    number(f.burn_rate),
                    percent(f.budget_used)
                ));
            }
        }
        // The sentence for the phase that matters most, else the run.
        let key = s.key_phase();
        let (runs, secs) = match key {
            Some(p) => (&p.runs, p.end_s - p.start_s),
            None => (&s.runs, s.measured_s),
        };
        out.push('\n');
        if let Some(p) = key {
            out.push_str(&format!("During {}:\n\n", escape::md(&p.name)));
        }
        for r in runs.iter() {
            if let Some(c) = r.classes.get(i) {
                out.push_str(&format!("- {}\n", sentence(name, &r.policy, c, &slo, secs)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_a_person_says_them() {
        assert_eq!(span(21.0 * 60.0), "21 minutes");
        assert_eq!(span(30.0 * 86_400.0), "30 days");
        assert_eq!(span(3600.0), "60 minutes");
        assert_eq!(span(5400.0 * 2.0), "3 hours");
        assert_eq!(span(1.0), "1 second");
        assert_eq!(span(f64::INFINITY), "never");
    }

    #[test]
    fn shares_keep_two_significant_digits_when_small() {
        assert_eq!(percent(0.95), "95 %");
        assert_eq!(percent(0.0123), "1.2 %");
        assert_eq!(percent(4.62962962962963e-06), "0.00046 %");
        assert_eq!(percent(0.0), "0 %");
        assert_eq!(percent(f64::NAN), "–");
    }
}
