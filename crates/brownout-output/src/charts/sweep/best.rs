//! A sweep's best settings per policy and condition, as `sweep.json`'s `best` list gives
//! them, and the bar chart of the best setting per policy.

use super::super::draw::{TICK_SIZE, bar_columns};
use super::super::style::{fit, fmt_setting, text_width};
use super::super::{Bar, BarPanel, BarPanels, Chart, Kind, policy_legend};
use super::targets::targets_of;
use super::{SweepAxis, SweepResult, SweepRow, better, colors, direction, policies, unit_of};
use crate::metrics::catalogue::Direction;
use brownout_core::decide::recommendation::ConstraintOut;

/// The best settings of one policy in one condition.
#[derive(Debug, Clone)]
pub struct Best<'a> {
    /// The condition axes' values (`axis=value, ...`); empty without condition axes.
    pub condition: String,
    /// The row with the best mean.
    pub top: &'a SweepRow,
    /// Every row tied for best, the best included, in point order (see [`tie_rule`]).
    pub rows: Vec<&'a SweepRow>,
}

/// Per condition (the values of the condition axes), the rows of `policy` tied for the best
/// mean of `metric` over the decision axes, as `sweep.json`'s `best` list gives them (ties by
/// paired intervals); for a file without the list, the rows whose mean equals the best.
/// Empty for a metric with no better direction, or a sweep with no decision axis (a
/// condition is never a setting to choose).
pub fn best<'a>(s: &'a SweepResult, policy: &str, metric: &str) -> Vec<Best<'a>> {
    let Some(sets) = &s.best else { return best_by_equal_means(s, policy, metric) };
    sets.iter()
        .filter(|b| b.policy == policy && b.metric == metric)
        .filter_map(|b| {
            // Indices from a file: one that points nowhere drops the set rather than panicking;
            // a set not comparable has no best row at all.
            let top = s.rows.get(b.best_row?)?;
            let rows = b.tied_rows.iter().map(|&i| s.rows.get(i)).collect::<Option<Vec<_>>>()?;
            Some(Best { condition: axes_text(s, top, false), top, rows })
        })
        .collect()
}

/// Per condition (`axis=value, ...`, empty without condition axes), why `policy` has no best
/// setting on `metric`: a latency of answers whose settings answered different numbers of
/// requests ("not comparable: answered 4,800 vs 12").
pub fn not_comparable(s: &SweepResult, policy: &str, metric: &str) -> Vec<(String, String)> {
    let Some(sets) = &s.best else { return Vec::new() };
    sets.iter()
        .filter(|b| b.policy == policy && b.metric == metric)
        .filter_map(|b| {
            let why = b.unranked.clone()?;
            let condition: Vec<String> = b.condition.iter().map(|(a, v)| format!("{a}={}", fmt_setting(*v))).collect();
            Some((condition.join(", "), why))
        })
        .collect()
}

/// How the best settings' ties were decided, for the notes and the report: "tied: paired
/// 95 % interval reaches inside the metric's margin, N replications", or equal means for a
/// `sweep.json` written before the paired ties.
pub fn tie_rule(s: &SweepResult) -> String {
    match s.best {
        Some(_) if s.replications < 2 => {
            "one replication: no interval, so no setting is shown to differ (every one ties with the best)".into()
        }
        Some(_) => {
            format!(
                "tied: {}, a difference within the metric's margin, {} replications",
                crate::sweep::stats::RULE,
                s.replications
            )
        }
        None => "tied: equal means (a sweep.json from before ties were judged by seed)".to_string(),
    }
}

/// [`best`] for a `sweep.json` without the `best` list: only equal means tie, as the
/// per-replication values it would take to pair them are not in the file.
fn best_by_equal_means<'a>(s: &'a SweepResult, policy: &str, metric: &str) -> Vec<Best<'a>> {
    let up = match direction(metric) {
        Direction::Higher => true,
        Direction::Lower => false,
        Direction::Neither => return Vec::new(),
    };
    if !s.axes.iter().any(SweepAxis::is_decision) {
        return Vec::new();
    }
    let mut out: Vec<(Best, f64)> = Vec::new();
    for r in s.rows.iter().filter(|r| r.policy == policy) {
        let Some(e) = r.metrics.get(metric).filter(|e| !e.mean.is_nan()) else {
            continue;
        };
        let condition = axes_text(s, r, false);
        let Some(at) = out.iter().position(|(b, _)| b.condition == condition) else {
            out.push((Best { condition, top: r, rows: vec![r] }, e.mean));
            continue;
        };
        let (group, top) = &mut out[at];
        if e.mean == *top {
            group.rows.push(r);
        } else if (up && e.mean > *top) || (!up && e.mean < *top) {
            (group.top, group.rows, *top) = (r, vec![r], e.mean);
        }
    }
    out.into_iter().map(|(b, _)| b).collect()
}

/// "axis=value, axis=value" over the decision axes (`decision`) or the condition axes.
fn axes_text(s: &SweepResult, r: &SweepRow, decision: bool) -> String {
    s.axes
        .iter()
        .filter(|a| a.is_decision() == decision)
        .filter_map(|a| r.params.get(&a.name).map(|v| format!("{}={}", a.name, fmt_setting(*v))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The decision setting of `r`: "axis=value, axis=value" over the decision axes.
pub fn decision_setting(s: &SweepResult, r: &SweepRow) -> String {
    axes_text(s, r, true)
}

/// The tied best settings, joined: "a=1 | a=2".
pub fn settings_text(s: &SweepResult, b: &Best) -> String {
    b.rows.iter().map(|r| decision_setting(s, r)).collect::<Vec<_>>().join(" | ")
}

/// Why a sweep has no best setting for `metric`, or what the ring marks.
pub(super) fn best_note(s: &SweepResult, metric: &str) -> String {
    if direction(metric) == Direction::Neither {
        "no best setting (neither is better)".to_string()
    } else if !s.axes.iter().any(SweepAxis::is_decision) {
        "no best setting: every axis is a condition (see the recommendation)".to_string()
    } else {
        let mut note = format!("ring = best setting ({}; ties all ringed)", better(metric));
        note.push_str(&unranked_notes(s, &[metric.to_string()]));
        note
    }
}

/// "; m, policy @ condition: no best setting, not comparable: answered 4,800 vs 12" for each
/// group of `metrics` with no best setting, so a missing ring or bar is not read as no data.
fn unranked_notes(s: &SweepResult, metrics: &[String]) -> String {
    let pols = policies(s);
    let mut out = String::new();
    for m in metrics {
        for p in &pols {
            for (c, why) in not_comparable(s, p, m) {
                let at = if c.is_empty() { p.clone() } else { format!("{p} @ {c}") };
                out.push_str(&format!("; {m}, {at}: no best setting, {why}"));
            }
        }
    }
    out
}

pub(super) fn best_chart(s: &SweepResult, names: &[String], targets: &[ConstraintOut]) -> Chart {
    let pols = policies(s);
    let colors = colors(s);
    let panels: Vec<BarPanel> = names
        .iter()
        .map(|m| BarPanel {
            title: format!("{m} ({})", better(m)),
            unit: unit_of(m),
            bars: pols
                .iter()
                .flat_map(|p| {
                    let colors = &colors;
                    best(s, p, m).into_iter().filter_map(move |b| {
                        let e = b.top.metrics.get(m)?;
                        Some(Bar {
                            label: if b.condition.is_empty() { p.clone() } else { format!("{p} @ {}", b.condition) },
                            color: colors.of(p),
                            value: e.mean,
                            ci: e.ci(),
                            note: b.rows.iter().map(|r| decision_setting(s, r)).collect::<Vec<_>>().join(SEP),
                        })
                    })
                })
                .collect(),
            targets: targets_of(targets, m, unit_of(m)),
        })
        .collect();
    // The drawing's grid: two columns, or one panel the full width.
    let mut panels = panels;
    let panel_w = 1100 / panels.len().clamp(1, 2) as u32;
    panels.iter_mut().for_each(|p| thin_notes(p, panel_w));
    let rows = panels.len().div_ceil(2) as u32;
    let bars = panels.iter().map(|p| p.bars.len()).max().unwrap_or(1) as u32;
    let conditions = s.axes.iter().any(|a| !a.is_decision());
    // A group with no best setting gets no bar; the note says why.
    let unranked = unranked_notes(s, &super::metrics(s));
    Chart {
        stem: "sweep_best".into(),
        title: format!("{}: best setting per policy", s.sweep),
        note: format!(
            "bar = best mean over the decision axes{}, whisker = its confidence interval, text = the setting (ties listed as room allows, the rest counted; all in the report; {})",
            if conditions { " per condition (across conditions: see the recommendation)" } else { "" },
            tie_rule(s)
        ) + &unranked,
        width: 1100,
        height: 100 + rows * (70 + 30 * bars),
        legend: policy_legend(&pols, &colors),
        kind: Kind::Bars(BarPanels { columns: 2, panels }),
    }
}

/// Between tied settings in a bar's note.
const SEP: &str = " | ";

/// Turn each bar's settings (joined by [`SEP`]) into its note, " at a=1 | a=2 (tie)", keeping
/// as many tied settings as fit in the room the drawing leaves after the bar in a panel
/// `width` pixels wide (the font's metrics, [`bar_columns`]) and counting the rest
/// (" at a=1 +5 tied"), so no note runs past its panel into the next.
pub(super) fn thin_notes(panel: &mut BarPanel, width: u32) {
    let (_, plot_w) = bar_columns(panel, width);
    // The x range keeps the bars within the first 55 % of the plot at most (bar_x_range).
    let room = (plot_w * 0.45) as u32;
    for bar in &mut panel.bars {
        let all: Vec<String> = bar.note.split(SEP).map(String::from).collect();
        let note = |k: usize| match (k, all.len()) {
            (_, 1) => format!(" at {}", all[0]),
            (k, n) if k == n => format!(" at {} (tie)", all.join(SEP)),
            (k, n) => format!(" at {} +{} tied", all[..k].join(SEP), n - k),
        };
        let width_of = |t: &str| text_width(&format!("  {}{t}", panel.unit.fmt(bar.value)), TICK_SIZE);
        let best = (1..=all.len()).rev().map(note).find(|t| width_of(t) <= room);
        let lead = text_width(&format!("  {}", panel.unit.fmt(bar.value)), TICK_SIZE);
        bar.note = best.unwrap_or_else(|| fit(&note(1), TICK_SIZE, room.saturating_sub(lead)));
    }
}
