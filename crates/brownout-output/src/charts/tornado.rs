//! The sensitivity (tornado) chart: per metric, one horizontal bar per axis from the lowest to
//! the highest mean as that axis moves with the others held at the anchor (`sweep.json`'s
//! `sensitivity` list, computed by `sweep::sensitivity`), widest on top.
//!
//! Text is laid out from the embedded font's metrics ([`style::text_width`]): the axis labels get a
//! column as wide as the widest of them, the notes one as wide as theirs, so neither can run
//! into the bars or the other.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::RGBColor;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, FONT, GRID, INK, Unit, fit, text_width};
use super::sweep::{SweepResult, unit_of};
use super::{Chart, HLine, Kind, LegendEntry, Mark, slug};
use brownout_core::decide::recommendation::ConstraintOut;
use brownout_core::sweep::sensitivity::{Mover, Sensitivity, SensitivityRow};

/// Size of the labels and notes.
pub(crate) const LABEL_SIZE: f64 = 13.0;
/// Height of one bar's row in pixels.
const ROW_H: u32 = 34;
/// Decision axes' bars.
const DECISION: RGBColor = RGBColor(0, 114, 178);
/// Condition axes' bars.
const CONDITION: RGBColor = RGBColor(230, 159, 0);
/// The policy set's bar.
const POLICY: RGBColor = RGBColor(150, 150, 150);

/// A tornado chart's content.
#[derive(Debug, Clone)]
pub(crate) struct Tornado {
    /// Value format.
    pub unit: Unit,
    /// The value axis's title.
    pub x_label: String,
    /// The anchor's mean, drawn as a vertical line (NaN: none).
    pub center: f64,
    /// The rows, top (widest) to bottom.
    pub rows: Vec<TornadoRow>,
    /// Constraint targets, drawn as dashed vertical lines.
    pub targets: Vec<HLine>,
}

/// One bar.
#[derive(Debug, Clone)]
pub(crate) struct TornadoRow {
    /// The axis (and what moves with it).
    pub label: String,
    /// Lowest mean (NaN: no bar).
    pub lo: f64,
    /// Highest mean.
    pub hi: f64,
    /// Colour by what moves: decision, condition or policy set.
    pub color: RGBColor,
    /// Text right of the plot: where the ends are, the width, and whether it is noise.
    pub note: String,
}

/// What every sensitivity chart's file name starts with (then the metric's slug).
pub(crate) const STEM_PREFIX: &str = "sensitivity_";

/// The chart of one metric's sensitivity in sweep `s`.
pub(crate) fn chart(s: &SweepResult, sens: &Sensitivity, targets: &[ConstraintOut]) -> Chart {
    chart_of(&s.sweep, s.replications, sens, targets)
}

/// The chart of one metric's sensitivity in the sweep or tune `name` with `replications`.
pub(crate) fn chart_of(name: &str, replications: u32, sens: &Sensitivity, targets: &[ConstraintOut]) -> Chart {
    let unit = unit_of(&sens.metric);
    let rows: Vec<TornadoRow> = sens.rows.iter().map(|r| row(unit, r)).collect();
    let anchor: Vec<String> =
        sens.anchor.iter().map(|(k, v)| format!("{k}={}", style::fmt_setting(*v))).collect::<Vec<_>>();
    let at =
        if anchor.is_empty() { sens.policy.clone() } else { format!("{} with {}", sens.policy, anchor.join(", ")) };
    let legend = [("decision axis", DECISION), ("condition axis", CONDITION), ("policy set", POLICY)]
        .into_iter()
        .filter(|(_, c)| rows.iter().any(|r| r.color == *c))
        .map(|(label, color)| LegendEntry { label: label.into(), color, mark: Mark::Box })
        .collect();
    Chart {
        stem: format!("{STEM_PREFIX}{}", slug(&sens.metric)),
        title: format!("{name}: what moves {} ({})", sens.metric, sens.role),
        note: format!(
            "bar = lowest to highest mean as one axis moves, the others held at {at} ({}); line = that point's mean; {} replications",
            sens.held, replications
        ),
        width: 1100,
        height: 150 + ROW_H * rows.len().max(1) as u32 + 60,
        legend,
        kind: Kind::Tornado(Tornado {
            unit,
            x_label: format!("{} (mean)", sens.metric),
            center: sens.anchor_mean,
            rows,
            targets: super::sweep::targets_of(targets, &sens.metric, unit),
        }),
    }
}

fn row(unit: Unit, r: &SensitivityRow) -> TornadoRow {
    let label = match r.follows.is_empty() {
        true => r.axis.clone(),
        false => format!("{} ({})", r.axis, r.follows.join(", ")),
    };
    let color = match r.mover {
        Mover::Decision => DECISION,
        Mover::Condition => CONDITION,
        Mover::Policy => POLICY,
    };
    let end = |v: f64| {
        r.steps.iter().find(|s| s.mean.to_bits() == v.to_bits()).map_or(String::new(), |s| format!(" at {}", s.label))
    };
    let note = if r.width.is_nan() {
        "– (fewer than two settings with a value)".to_string()
    } else {
        let noise = if r.significant { "" } else { ", within noise" };
        if r.width == 0.0 {
            return TornadoRow {
                label,
                lo: r.lo,
                hi: r.hi,
                color,
                note: format!("{} at every value: width 0{noise}", unit.fmt(r.lo)),
            };
        }
        format!(
            "{}{} .. {}{}: width {}{noise}",
            unit.fmt(r.lo),
            end(r.lo),
            unit.fmt(r.hi),
            end(r.hi),
            unit.fmt(r.width)
        )
    };
    TornadoRow { label, lo: r.lo, hi: r.hi, color, note }
}

/// Every sensitivity chart of a sweep, one per metric in the file's list.
pub(crate) fn charts(s: &SweepResult, targets: &[ConstraintOut]) -> Vec<Chart> {
    s.sensitivity.iter().filter(|x| !x.rows.is_empty()).map(|x| chart(s, x, targets)).collect()
}

/// Where the parts of a tornado chart go, in pixels from the body's left: the labels'
/// column, the plot, the notes' column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Layout {
    /// Right end of the label column (labels end 8 px before it).
    pub label_w: u32,
    /// The plot's left and right ends.
    pub plot: (u32, u32),
    /// Left end of the notes.
    pub note_x: u32,
}

impl Tornado {
    /// The columns for a body `width` pixels wide: labels as wide as the widest label, notes
    /// as wide as the widest note, the plot between (at least a third of the width; past
    /// that, labels and notes are cut with "…" until they fit, see [`Tornado::fitted`]).
    pub(crate) fn layout(&self, width: u32) -> Layout {
        let widest =
            |f: &dyn Fn(&TornadoRow) -> &str| self.rows.iter().map(|r| text_width(f(r), LABEL_SIZE)).max().unwrap_or(0);
        let room = width.saturating_sub(width / 3 + 40);
        let label_w = (widest(&|r| &r.label) + 24).min(room / 2);
        let note_w = (widest(&|r| &r.note) + 16).min(room - label_w);
        let plot = (label_w, width.saturating_sub(note_w + 12));
        Layout { label_w, plot, note_x: plot.1 + 10 }
    }

    /// The rows with labels and notes cut ("…") to their columns in `layout`.
    pub(crate) fn fitted(&self, layout: Layout, width: u32) -> Vec<(String, String)> {
        let label_room = layout.label_w.saturating_sub(16);
        let note_room = width.saturating_sub(layout.note_x + 4);
        self.rows.iter().map(|r| (fit(&r.label, LABEL_SIZE, label_room), fit(&r.note, LABEL_SIZE, note_room))).collect()
    }

    /// The value range: every bar, the anchor and the targets, padded.
    fn range(&self) -> (f64, f64) {
        let vals =
            self.rows.iter().flat_map(|r| [r.lo, r.hi]).chain([self.center]).chain(self.targets.iter().map(|t| t.y));
        let (lo, hi) =
            vals.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
        if !lo.is_finite() {
            return (0.0, 1.0);
        }
        // As every value axis: a ratio zoomed to the data, anything else from 0.
        if self.unit == Unit::Fraction || lo >= 0.0 {
            return style::value_range(self.unit, lo, hi);
        }
        let pad = if hi > lo { (hi - lo) * 0.08 } else { lo.abs().max(1.0) * 0.1 };
        (lo - pad, hi + pad)
    }
}

type Area<DB> = DrawingArea<DB, Shift>;
type Res<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draw a tornado chart's body.
pub(crate) fn draw<DB: DrawingBackend>(body: &Area<DB>, t: &Tornado) -> Res<DB> {
    let (width, height) = body.dim_in_pixel();
    let lay = t.layout(width);
    let texts = t.fitted(lay, width);
    let (x0, x1) = t.range();
    let (top, bottom) = (30i32, height as i32 - 50);
    let (p0, p1) = (lay.plot.0 as i32, lay.plot.1 as i32);
    let px = |v: f64| p0 + ((v - x0) / (x1 - x0) * f64::from(p1 - p0)).round() as i32;
    let style = (FONT, LABEL_SIZE).into_font().color(&INK);
    let small = (FONT, 12.0).into_font().color(&INK);
    // Grid and ticks.
    for k in 0..=5 {
        let v = x0 + (x1 - x0) * f64::from(k) / 5.0;
        body.draw(&PathElement::new(vec![(px(v), top), (px(v), bottom)], GRID.stroke_width(1)))?;
        let at = Pos::new(HPos::Center, VPos::Top);
        body.draw(&Text::new(t.unit.fmt(v), (px(v), bottom + 6), small.clone().pos(at)))?;
    }
    body.draw(&PathElement::new(vec![(p0, bottom), (p1, bottom)], INK.stroke_width(1)))?;
    let at = Pos::new(HPos::Center, VPos::Top);
    body.draw(&Text::new(t.x_label.clone(), ((p0 + p1) / 2, bottom + 26), style.clone().pos(at)))?;
    for (i, (r, (label, note))) in t.rows.iter().zip(&texts).enumerate() {
        let y = top + ROW_H as i32 * i as i32 + ROW_H as i32 / 2;
        let right = Pos::new(HPos::Right, VPos::Center);
        body.draw(&Text::new(label.clone(), (lay.label_w as i32 - 8, y), style.clone().pos(right)))?;
        if r.lo.is_finite() && r.hi.is_finite() {
            // A zero width still shows: a 2 px bar at its value.
            let (a, b) = (px(r.lo), px(r.hi).max(px(r.lo) + 2));
            body.draw(&Rectangle::new([(a, y - 10), (b, y + 10)], r.color.filled()))?;
        }
        let left = Pos::new(HPos::Left, VPos::Center);
        body.draw(&Text::new(note.clone(), (lay.note_x as i32, y), style.clone().pos(left)))?;
    }
    if t.center.is_finite() {
        body.draw(&PathElement::new(vec![(px(t.center), top - 6), (px(t.center), bottom)], INK.stroke_width(2)))?;
    }
    for h in &t.targets {
        let x = px(h.y);
        body.draw(&DashedPathElement::new(vec![(x, top - 6), (x, bottom)], 8, 5, h.color.stroke_width(2)))?;
        let at = Pos::new(HPos::Left, VPos::Bottom);
        body.draw(&Text::new(format!(" {}", h.label), (x, top - 8), (FONT, 12.0).into_font().color(&h.color).pos(at)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tornado(labels: &[&str], notes: &[&str]) -> Tornado {
        let rows = labels
            .iter()
            .zip(notes)
            .map(|(l, n)| TornadoRow { label: l.to_string(), lo: 0.1, hi: 0.9, color: DECISION, note: n.to_string() })
            .collect();
        Tornado { unit: Unit::Fraction, x_label: "x".into(), center: 0.5, rows, targets: Vec::new() }
    }

    /// The label column, the plot and the notes do not overlap, and every text fits its
    /// column as the font measures it, long texts cut with "…".
    #[test]
    fn labels_and_notes_keep_to_their_columns() {
        let long = "authorize_share (refund_share = 1 - authorize_share, and a great deal more text than fits)";
        let note = "50% at 0.5 .. 99.9% at 0.9: width 49.9% and then a very long tail of words that cannot fit";
        for (labels, notes) in [(vec!["a", long], vec!["n", note]), (vec!["depth"], vec!["1% .. 2%: width 1%"])] {
            let t = tornado(&labels, &notes);
            let width = 1100;
            let lay = t.layout(width);
            assert!(lay.label_w <= lay.plot.0 && lay.plot.0 < lay.plot.1 && lay.plot.1 < lay.note_x, "{lay:?}");
            assert!(lay.plot.1 - lay.plot.0 >= width / 3, "{lay:?}");
            for (label, note) in t.fitted(lay, width) {
                assert!(text_width(&label, LABEL_SIZE) + 8 <= lay.label_w, "{label}");
                assert!(lay.note_x + text_width(&note, LABEL_SIZE) <= width, "{note}");
            }
        }
        // A short label is never cut.
        let t = tornado(&["depth"], &["n"]);
        assert_eq!(t.fitted(t.layout(1100), 1100)[0].0, "depth");
    }

    #[test]
    fn the_fonts_metrics_measure_text() {
        // Wider text measures wider; "…" is shorter than the text it replaces.
        assert!(text_width("WWWW", LABEL_SIZE) > text_width("iiii", LABEL_SIZE));
        assert!(text_width("", LABEL_SIZE) < text_width("a", LABEL_SIZE));
    }
}
