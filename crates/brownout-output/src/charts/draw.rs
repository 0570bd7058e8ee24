//! Drawing a [`Chart`] on any plotters backend: header and legend strip, then the panels.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, CLOSED, FONT, GRID, HALF_OPEN, INK, OPEN, SHADE, Unit};
use super::{
    BandRow, BandRows, BarPanel, BarPanels, Chart, HeatPanel, HeatPanels, Kind, LegendEntry, LinePanel, LinePanels,
    Mark, TARGET,
};

type Area<DB> = DrawingArea<DB, Shift>;
type Res<DB, T = ()> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

const TITLE_SIZE: f64 = 20.0;
const TEXT_SIZE: f64 = 13.0;
pub(crate) const TICK_SIZE: f64 = 12.0;

fn text(size: f64, color: &RGBColor) -> TextStyle<'static> {
    (FONT, size).into_font().color(color)
}

/// Draw the whole chart.
pub fn chart<DB: DrawingBackend>(root: &Area<DB>, c: &Chart) -> Res<DB> {
    root.fill(&WHITE)?;
    let used = header(root, c)?;
    let (_, body) = root.split_vertically(used);
    match &c.kind {
        Kind::Lines(l) => lines(&body, l),
        Kind::Bands(b) => bands(&body, b),
        Kind::Bars(b) => bars(&body, b),
        Kind::Heatmap(h) => heatmap(&body, h),
        Kind::Tornado(t) => super::tornado::draw(&body, t),
        Kind::Graph(g) => super::graph::draw(&body, g),
    }
}

/// Title, note and the legend strip; returns the height used.
fn header<DB: DrawingBackend>(root: &Area<DB>, c: &Chart) -> Res<DB, u32> {
    let width = root.dim_in_pixel().0 as i32;
    root.draw(&Text::new(
        c.title.clone(),
        (14, 10),
        (FONT, TITLE_SIZE).into_font().style(FontStyle::Bold).color(&INK),
    ))?;
    let mut y = 38;
    // A note wider than the chart is wrapped at spaces (the font's metrics), never cut off.
    for line in style::wrap(&c.note, TEXT_SIZE, (width - 28).max(100) as u32) {
        root.draw(&Text::new(line, (14, y), text(TEXT_SIZE, &RGBColor(100, 100, 100))))?;
        y += 20;
    }
    let mut x = 14;
    let style = text(TEXT_SIZE, &INK);
    for e in &c.legend {
        let (w, _) = root.estimate_text_size(&e.label, &style)?;
        let need = 28 + w as i32 + 18;
        if x > 14 && x + need > width - 10 {
            x = 14;
            y += 20;
        }
        swatch(root, e, x, y + 6)?;
        root.draw(&Text::new(e.label.clone(), (x + 28, y), style.clone()))?;
        x += need;
    }
    if !c.legend.is_empty() {
        y += 22;
    }
    Ok((y + 4) as u32)
}

fn swatch<DB: DrawingBackend>(root: &Area<DB>, e: &LegendEntry, x: i32, y: i32) -> Res<DB> {
    match e.mark {
        Mark::Dashed => root.draw(&DashedPathElement::new(vec![(x, y), (x + 22, y)], 5, 3, e.color.stroke_width(2))),
        Mark::Box => root.draw(&Rectangle::new([(x, y - 6), (x + 22, y + 6)], e.color.filled())),
    }
}

fn lines<DB: DrawingBackend>(body: &Area<DB>, l: &LinePanels) -> Res<DB> {
    let areas = body.split_evenly((l.panels.len().max(1), 1));
    for (k, (a, p)) in areas.iter().zip(&l.panels).enumerate() {
        line_panel(a, l, p, k == 0)?;
    }
    Ok(())
}

/// A line panel's y range: ratios zoom to the data, anything else starts at 0.
pub(crate) fn line_y_range(p: &LinePanel) -> (f64, f64) {
    let (lo, hi) = panel_extent(p);
    style::value_range(p.unit, lo, hi)
}

/// The lowest and highest value a panel draws (lines, bands, reference lines).
fn panel_extent(p: &LinePanel) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut see = |v: f64| {
        if v.is_finite() {
            (lo, hi) = (lo.min(v), hi.max(v));
        }
    };
    for s in &p.series {
        s.segments.iter().flatten().for_each(|(_, y)| see(*y));
        s.band.iter().for_each(|(_, l, h)| {
            see(*l);
            see(*h);
        });
    }
    p.hlines.iter().for_each(|h| see(h.y));
    (lo, hi)
}

fn line_panel<DB: DrawingBackend>(a: &Area<DB>, l: &LinePanels, p: &LinePanel, first: bool) -> Res<DB> {
    let (y_min, mut y_max) = line_y_range(p);
    if first && !l.marks.is_empty() {
        // Headroom above the data for the marks' labels, one text row each below the shades'
        // labels, so no label covers a line: the plot is the panel less its caption and x axis.
        let plot_h = (a.dim_in_pixel().1 as f64 - 90.0).max(60.0);
        let need = (l.marks.len() as f64 + 2.0) * (TICK_SIZE + 5.0);
        let share = (need / plot_h).min(0.6);
        y_max = y_min + (y_max - y_min) / (1.0 - share);
    }
    let (x0, x1) = l.x_range;
    let mut chart = ChartBuilder::on(a)
        .caption(&p.title, text(15.0, &INK))
        .margin(8)
        .margin_right(28)
        .x_label_area_size(42)
        .y_label_area_size(86)
        .build_cartesian_2d(x0..x1, y_min..y_max)?;
    for sh in &l.shade {
        chart.draw_series(std::iter::once(Rectangle::new([(sh.from, y_min), (sh.to, y_max)], sh.color.filled())))?;
        chart.draw_series(std::iter::once(Text::new(
            sh.label.clone(),
            (sh.from, y_min + (y_max - y_min) * 0.98),
            text(TICK_SIZE, &RGBColor(120, 120, 120)),
        )))?;
    }
    let xf = |v: &f64| l.x_unit.fmt(*v);
    let yf = |v: &f64| p.unit.fmt(*v);
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .light_line_style(WHITE.mix(0.0))
        .axis_style(INK)
        .x_desc(l.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style(text(TICK_SIZE, &INK))
        .axis_desc_style(text(TEXT_SIZE, &INK))
        .draw()?;
    for h in &p.hlines {
        chart.draw_series(DashedLineSeries::new(vec![(x0, h.y), (x1, h.y)], 8, 5, h.color.stroke_width(1)))?;
        let anchor = Pos::new(HPos::Right, VPos::Bottom);
        chart.draw_series(std::iter::once(Text::new(
            h.label.clone(),
            (x1, h.y),
            text(TICK_SIZE, &h.color).pos(anchor),
        )))?;
    }
    draw_series(&mut chart, p)?;
    marks(&mut chart, l, (y_min, y_max), first)
}

/// The vertical marks over the lines; in the first panel each label on a row of its own
/// below the shades' labels, written leftwards from a mark in the right two fifths so it
/// stays inside the plot.
fn marks<DB: DrawingBackend>(
    chart: &mut ChartContext<DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    l: &LinePanels,
    (y_min, y_max): (f64, f64),
    first: bool,
) -> Res<DB> {
    let (x0, x1) = l.x_range;
    let row_h = chart.plotting_area().dim_in_pixel().1.max(1) as f64;
    // One text row (the tick font and a gap) as a share of the panel's height.
    let row = (TICK_SIZE + 5.0) / row_h * (y_max - y_min);
    for (k, m) in l.marks.iter().enumerate() {
        if m.line {
            let path = vec![(m.x, y_min), (m.x, y_max)];
            chart.draw_series(DashedLineSeries::new(path, 6, 4, m.color.stroke_width(2)))?;
        }
        if !first {
            continue;
        }
        let right = m.x > x0 + 0.6 * (x1 - x0);
        let (h, gap) = if right { (HPos::Right, -6.0) } else { (HPos::Left, 6.0) };
        let px = (x1 - x0) / chart.plotting_area().dim_in_pixel().0.max(1) as f64;
        let y = y_max - row * (1.6 + k as f64);
        chart.draw_series(std::iter::once(Text::new(
            m.label.clone(),
            (m.x + gap * px, y),
            text(TICK_SIZE, &m.color).pos(Pos::new(h, VPos::Top)),
        )))?;
    }
    Ok(())
}

fn draw_series<DB: DrawingBackend>(
    chart: &mut ChartContext<DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    p: &LinePanel,
) -> Res<DB> {
    for s in &p.series {
        if !s.band.is_empty() {
            let mut poly: Vec<(f64, f64)> = s.band.iter().map(|b| (b.0, b.1)).collect();
            poly.extend(s.band.iter().rev().map(|b| (b.0, b.2)));
            chart.draw_series(std::iter::once(Polygon::new(poly, s.color.mix(0.18).filled())))?;
        }
    }
    for s in &p.series {
        for seg in &s.segments {
            let stroke = s.color.stroke_width(2);
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(seg.clone(), 6, 4, stroke))?;
            } else {
                chart.draw_series(LineSeries::new(seg.clone(), stroke))?;
            }
            if s.dots {
                let dots = seg.iter().map(|&pt| Circle::new(pt, 3, s.color.filled()));
                chart.draw_series(dots)?;
            }
        }
        for &b in &s.best {
            chart.draw_series(std::iter::once(Circle::new(b, 9, s.color.stroke_width(3))))?;
        }
    }
    Ok(())
}

fn bands<DB: DrawingBackend>(body: &Area<DB>, b: &BandRows) -> Res<DB> {
    let n = b.rows.len().max(1);
    // The last row also carries the x axis, so it gets the extra height.
    let row_h = (body.dim_in_pixel().1 as i32 - 42) / n as i32;
    let mut rest = body.clone();
    for (i, row) in b.rows.iter().enumerate() {
        let last = i + 1 == b.rows.len();
        let (a, r) = if last { (rest.clone(), rest.clone()) } else { rest.split_vertically(row_h) };
        band_row(&a, b, row, last)?;
        rest = r;
    }
    Ok(())
}

fn band_row<DB: DrawingBackend>(a: &Area<DB>, b: &BandRows, row: &BandRow, last: bool) -> Res<DB> {
    let (x0, x1) = b.x_range;
    let mut chart = ChartBuilder::on(a)
        .caption(&row.label, text(TEXT_SIZE, &row.color))
        .margin(6)
        .margin_right(28)
        .x_label_area_size(if last { 42 } else { 0 })
        .y_label_area_size(86)
        .build_cartesian_2d(x0..x1, 0f64..1f64)?;
    let cells = row.cells.iter().flat_map(|&(c0, c1, open, half)| {
        let mid = (open + half).min(1.0);
        [
            Rectangle::new([(c0, 0.0), (c1, open)], OPEN.filled()),
            Rectangle::new([(c0, open), (c1, mid)], HALF_OPEN.filled()),
            Rectangle::new([(c0, mid), (c1, 1.0)], CLOSED.filled()),
        ]
    });
    chart.draw_series(cells)?;
    let xf = |v: &f64| style::fmt_num(*v);
    let yf = |v: &f64| Unit::Fraction.fmt(*v);
    chart
        .configure_mesh()
        .disable_mesh()
        .axis_style(INK)
        .x_desc(b.x_label.as_str())
        .y_desc("instances")
        .y_labels(3)
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style(text(TICK_SIZE, &INK))
        .axis_desc_style(text(TICK_SIZE, &INK))
        .draw()
}

fn grid<DB: DrawingBackend>(body: &Area<DB>, count: usize, columns: usize) -> Vec<Area<DB>> {
    let cols = columns.clamp(1, count.max(1));
    let rows = count.div_ceil(cols).max(1);
    body.split_evenly((rows, cols))
}

fn bars<DB: DrawingBackend>(body: &Area<DB>, b: &BarPanels) -> Res<DB> {
    let areas = grid(body, b.panels.len(), b.columns);
    for (a, p) in areas.iter().zip(&b.panels) {
        bar_panel(a, p)?;
    }
    Ok(())
}

fn bar_panel<DB: DrawingBackend>(a: &Area<DB>, p: &BarPanel) -> Res<DB> {
    let n = p.bars.len();
    let rows = n.max(2);
    let (y_area, plot_w) = bar_columns(p, a.dim_in_pixel().0);
    let (lo, x_max) = bar_x_range(p, plot_w);
    // A label wider than its column is cut with "…" (the font's metrics), never drawn over the bars.
    let labels: Vec<String> =
        p.bars.iter().map(|b| style::fit(&b.label, TICK_SIZE, y_area.saturating_sub(LABEL_GAP))).collect();
    // A zoomed ratio axis starts above 0: bars start at the axis.
    let base = lo.max(0.0);
    let mut chart = ChartBuilder::on(a)
        .caption(&p.title, text(15.0, &INK))
        .margin(8)
        .margin_right(16)
        .x_label_area_size(30)
        .y_label_area_size(y_area)
        // plotters integer ranges include their end, so `0..rows - 1` makes exactly `rows`
        // segments; a one-segment range has no height to map to (bars came out `height="-10"`).
        .build_cartesian_2d(lo..x_max, (0..rows - 1).into_segmented())?;
    // Segment k counts from the bottom; the first bar sits at the top.
    let name = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(k) if *k < rows && rows - 1 - k < n => labels[rows - 1 - k].clone(),
        _ => String::new(),
    };
    // The room left for value labels past 100 % gets no ticks: a ratio never reaches there.
    let xf = |v: &f64| if p.unit == Unit::Fraction && *v > 1.0 + 1e-9 { String::new() } else { p.unit.fmt(*v) };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(GRID)
        .light_line_style(WHITE.mix(0.0))
        .axis_style(INK)
        .x_labels(5)
        .y_labels(rows)
        .x_label_formatter(&xf)
        .y_label_formatter(&name)
        .label_style(text(TICK_SIZE, &INK))
        .draw()?;
    for t in &p.targets {
        let (bottom, top) = (SegmentValue::Exact(0), SegmentValue::Exact(rows));
        chart.draw_series(DashedLineSeries::new(
            vec![(t.y, bottom), (t.y, top.clone())],
            8,
            5,
            t.color.stroke_width(2),
        ))?;
        let anchor = Pos::new(HPos::Left, VPos::Top);
        chart.draw_series(std::iter::once(Text::new(
            format!(" {}", t.label),
            (t.y, top),
            text(TICK_SIZE, &t.color).pos(anchor),
        )))?;
    }
    for (i, bar) in p.bars.iter().enumerate() {
        let k = rows - 1 - i;
        let mut r = Rectangle::new(
            [(base, SegmentValue::Exact(k)), (bar.value, SegmentValue::Exact(k + 1))],
            bar.color.filled(),
        );
        r.set_margin(5, 5, 0, 0);
        chart.draw_series(std::iter::once(r))?;
        let mut end = bar.value;
        if let Some((c0, c1)) = bar.ci {
            let mid = SegmentValue::CenterOf(k);
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(c0, mid.clone()), (c1, mid)],
                INK.stroke_width(2),
            )))?;
            end = end.max(c1);
        }
        let label = value_label(p, bar);
        let anchor = Pos::new(HPos::Left, VPos::Center);
        chart.draw_series(std::iter::once(Text::new(
            label,
            (end, SegmentValue::CenterOf(k)),
            text(TICK_SIZE, &INK).pos(anchor),
        )))?;
    }
    Ok(())
}

/// A bar panel's x range: from 0 (or the lowest negative value), or for a ratio zoomed to the
/// bars, whiskers and target lines ([`style::value_range`]), to an end that leaves room for
/// the labels.
pub(crate) fn bar_x_range(p: &BarPanel, plot_w: f64) -> (f64, f64) {
    if p.unit != Unit::Fraction || p.bars.is_empty() {
        return (p.bars.iter().map(|b| b.value).fold(0.0, f64::min), bar_x_max(p, plot_w));
    }
    // A constraint's target is drawn where its value is, so the range holds it too.
    let ends = p
        .bars
        .iter()
        .flat_map(|b| [b.value, b.ci.map_or(b.value, |c| c.0), b.ci.map_or(b.value, |c| c.1)])
        .chain(p.targets.iter().map(|t| t.y));
    let (lo, hi) = ends.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    let (a, b) = style::value_range(Unit::Fraction, lo, hi);
    let widest = p.bars.iter().map(|b| label_share(p, b, plot_w)).fold(0.0, f64::max);
    (a, a + (b - a) / (1.0 - widest))
}

/// Room between a bar label and the axis: plotters' tick and its gap.
pub(crate) const LABEL_GAP: u32 = 14;

/// A bar panel `width` pixels wide: the width of its label column (the widest label as the
/// font measures it, plus [`LABEL_GAP`], 50 to 240 px) and of its plot.
pub(crate) fn bar_columns(p: &BarPanel, width: u32) -> (u32, f64) {
    let widest = p.bars.iter().map(|b| style::text_width(&b.label, TICK_SIZE)).max().unwrap_or(32);
    let y_area = (widest + LABEL_GAP).clamp(50, 240);
    (y_area, (width as f64 - y_area as f64 - 24.0).max(50.0))
}

/// A bar's value label as drawn after its end.
pub(crate) fn value_label(p: &BarPanel, b: &super::Bar) -> String {
    format!("  {}{}", p.unit.fmt(b.value), b.note)
}

/// The share of the plot width a bar's value label takes (the font's metrics, at most 70%).
fn label_share(p: &BarPanel, b: &super::Bar, plot_w: f64) -> f64 {
    (f64::from(style::text_width(&value_label(p, b), TICK_SIZE)) / plot_w).min(0.7)
}

/// The x range end that leaves room for every bar's value label after its end.
fn bar_x_max(p: &BarPanel, plot_w: f64) -> f64 {
    let ends: Vec<(f64, f64)> = p
        .bars
        .iter()
        .map(|b| {
            let end = b.ci.map_or(b.value, |c| c.1.max(b.value)).max(0.0);
            (end, label_share(p, b, plot_w))
        })
        .collect();
    let widest = ends.iter().map(|e| e.1).fold(0.0, f64::max);
    // A target line must fall inside the range too.
    let top = ends.iter().map(|e| e.0).chain(p.targets.iter().map(|t| t.y)).fold(0.0, f64::max);
    // All-zero panels still need a range (`upper` gives 0..1), with room for their labels.
    let mut x_max = if top > 0.0 { 0.0 } else { style::upper(0.0) / (1.0 - widest) };
    for (end, frac) in ends {
        x_max = x_max.max(end * 1.08 / (1.0 - frac));
    }
    p.targets.iter().map(|t| t.y * 1.08).fold(x_max, f64::max)
}

/// Width of the colour bar strip at a heatmap's right.
const BAR_STRIP: u32 = 120;

fn heatmap<DB: DrawingBackend>(body: &Area<DB>, h: &HeatPanels) -> Res<DB> {
    let width = body.dim_in_pixel().0;
    let (plots, strip) = body.split_horizontally(width.saturating_sub(BAR_STRIP));
    let areas = grid(&plots, h.panels.len(), h.columns);
    for (a, p) in areas.iter().zip(&h.panels) {
        heat_panel(a, h, p)?;
    }
    color_bar(&strip, h)
}

impl HeatPanels {
    /// The colour bar's ticks, bottom to top: the scale's low end, middle and high end, each
    /// with its label in the metric's unit; none when no cell has a value.
    pub(crate) fn bar_ticks(&self) -> Vec<(f64, String)> {
        let (lo, hi) = self.scale;
        if !(lo.is_finite() && hi.is_finite()) {
            return Vec::new();
        }
        [lo, (lo + hi) / 2.0, hi].into_iter().map(|v| (v, self.unit.fmt(v))).collect()
    }
}

/// The gradient from the scale's low end (bottom) to its high end, labelled at both ends and
/// the middle, under the unit's name.
fn color_bar<DB: DrawingBackend>(a: &Area<DB>, h: &HeatPanels) -> Res<DB> {
    let ticks = h.bar_ticks();
    if ticks.is_empty() {
        return Ok(());
    }
    let (top, bottom) = (40, (a.dim_in_pixel().1 as i32 - 60).clamp(80, 420));
    let (x0, x1) = (12, 34);
    a.draw(&Text::new(h.bar_title.clone(), (x0, top - 24), text(TEXT_SIZE, &INK)))?;
    const STEPS: i32 = 64;
    for k in 0..STEPS {
        let (y0, y1) = (bottom - (bottom - top) * (k + 1) / STEPS, bottom - (bottom - top) * k / STEPS);
        let t = (f64::from(k) + 0.5) / f64::from(STEPS);
        a.draw(&Rectangle::new([(x0, y0), (x1, y1)], style::sequential(t).filled()))?;
    }
    a.draw(&Rectangle::new([(x0, top), (x1, bottom)], INK.stroke_width(1)))?;
    let anchor = Pos::new(HPos::Left, VPos::Center);
    for (i, (_, label)) in ticks.iter().enumerate() {
        let y = bottom - (bottom - top) * i as i32 / 2;
        a.draw(&PathElement::new(vec![(x1, y), (x1 + 4, y)], INK.stroke_width(1)))?;
        a.draw(&Text::new(label.clone(), (x1 + 8, y), text(TICK_SIZE, &INK).pos(anchor)))?;
    }
    Ok(())
}

fn heat_panel<DB: DrawingBackend>(a: &Area<DB>, h: &HeatPanels, p: &HeatPanel) -> Res<DB> {
    let (nx, ny) = (h.x_ticks.len(), h.y_ticks.len());
    let mut chart = ChartBuilder::on(a)
        .caption(&p.title, text(15.0, &p.color))
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d((0..nx.saturating_sub(1)).into_segmented(), (0..ny.saturating_sub(1)).into_segmented())?;
    let tick = |ticks: &[String], v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(k) => ticks.get(*k).cloned().unwrap_or_default(),
        _ => String::new(),
    };
    let xf = |v: &SegmentValue<usize>| tick(&h.x_ticks, v);
    let yf = |v: &SegmentValue<usize>| tick(&h.y_ticks, v);
    chart
        .configure_mesh()
        .disable_mesh()
        .axis_style(INK)
        .x_labels(nx)
        .y_labels(ny)
        .x_desc(h.x_label.as_str())
        .y_desc(h.y_label.as_str())
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style(text(TICK_SIZE, &INK))
        .axis_desc_style(text(TEXT_SIZE, &INK))
        .draw()?;
    let (lo, hi) = h.scale;
    for (i, col) in p.cells.iter().enumerate() {
        for (j, v) in col.iter().enumerate() {
            let corners = [
                (SegmentValue::Exact(i), SegmentValue::Exact(j)),
                (SegmentValue::Exact(i + 1), SegmentValue::Exact(j + 1)),
            ];
            let Some(v) = v else {
                chart.draw_series(std::iter::once(Rectangle::new(corners, SHADE.filled())))?;
                continue;
            };
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
            let mut cell = Rectangle::new(corners, style::sequential(t).filled());
            cell.set_margin(1, 1, 1, 1);
            chart.draw_series(std::iter::once(cell))?;
            // Dark cells get white text; the scale's bright end gets black.
            let ink = if t < 0.6 { WHITE } else { BLACK };
            let anchor = Pos::new(HPos::Center, VPos::Center);
            chart.draw_series(std::iter::once(Text::new(
                h.unit.fmt(*v),
                (SegmentValue::CenterOf(i), SegmentValue::CenterOf(j)),
                text(TICK_SIZE, &ink).pos(anchor),
            )))?;
        }
    }
    for &(i, j) in &p.best {
        let corners = [
            (SegmentValue::Exact(i), SegmentValue::Exact(j)),
            (SegmentValue::Exact(i + 1), SegmentValue::Exact(j + 1)),
        ];
        chart.draw_series(std::iter::once(Rectangle::new(corners, OPEN.stroke_width(4))))?;
    }
    // Dashed, so the target's boundary does not read as a best cell's solid outline.
    for &((x0, y0), (x1, y1)) in &p.target_edges {
        let ends = vec![
            (SegmentValue::Exact(x0), SegmentValue::Exact(y0)),
            (SegmentValue::Exact(x1), SegmentValue::Exact(y1)),
        ];
        chart.draw_series(std::iter::once(DashedPathElement::new(ends, 8, 5, TARGET.stroke_width(3))))?;
    }
    Ok(())
}
