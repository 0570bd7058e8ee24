//! Charts of saved results: chart descriptions built from `summary.json`, `timeseries.csv` and
//! `sweep.json`, rendered with plotters to SVG and PNG into `DIR/charts/`.
//!
//! Building a chart (choosing series, colours, limits) is separate from drawing it, so the
//! data side is testable without pixels and one drawing routine serves both backends.
//! Rendering is deterministic: no clock, no system fonts (DejaVu Sans is compiled in), and
//! every iteration is over ordered vectors.

pub(crate) mod compare;
pub(crate) mod dep_panels;
pub(crate) mod draw;
pub(crate) mod graph;
pub(crate) mod style;
pub(crate) mod sweep;
pub(crate) mod timeseries;
pub(crate) mod tornado;

#[cfg(test)]
mod end_to_end;

use std::io::Cursor;

use anyhow::{Context, Result, anyhow};
use plotters::prelude::{BitMapBackend, IntoDrawingArea, SVGBackend};
use plotters::style::RGBColor;

use crate::metrics::WindowRow;
use crate::metrics::summary::ScenarioSummary;
use style::Unit;

/// One chart, described but not yet drawn.
#[derive(Debug, Clone)]
pub(crate) struct Chart {
    /// File stem inside `charts/` (`latency` gives `latency.png` and `latency.svg`).
    pub stem: String,
    /// Title drawn at the top.
    pub title: String,
    /// A grey line under the title: line-style keys, colour scales.
    pub note: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Legend entries, drawn in a strip above the plots so they never cover data.
    pub legend: Vec<LegendEntry>,
    /// What to draw.
    pub kind: Kind,
}

/// The colour of a constraint's target line.
pub(crate) const TARGET: RGBColor = RGBColor(200, 50, 50);

/// One legend entry.
#[derive(Debug, Clone)]
pub(crate) struct LegendEntry {
    /// Text.
    pub label: String,
    /// Colour.
    pub color: RGBColor,
    /// Swatch shape.
    pub mark: Mark,
}

/// A legend swatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// A dashed line.
    Dashed,
    /// A filled box.
    Box,
}

/// The chart families.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// Stacked panels of lines sharing an x axis.
    Lines(LinePanels),
    /// One stacked-fraction band per row (breaker state).
    Bands(BandRows),
    /// Panels of horizontal bars, one bar per policy.
    Bars(BarPanels),
    /// Panels of heatmaps over two sweep axes, one per policy, on one colour scale.
    Heatmap(HeatPanels),
    /// One bar per axis from the lowest to the highest mean of a metric (sensitivity).
    Tornado(tornado::Tornado),
    /// The service graph, one panel per policy set.
    Graph(Vec<crate::report::graph::GraphView>),
}

/// Line panels sharing an x axis.
#[derive(Debug, Clone)]
pub(crate) struct LinePanels {
    /// X axis title with unit.
    pub x_label: String,
    /// X tick format.
    pub x_unit: Unit,
    /// X range.
    pub x_range: (f64, f64),
    /// Shaded x spans (warm-up, phases), drawn in order under the lines.
    pub shade: Vec<Shade>,
    /// Labelled instants (recoveries), drawn across every panel, labelled in the first.
    pub marks: Vec<VMark>,
    /// The panels, top to bottom.
    pub panels: Vec<LinePanel>,
}

/// A labelled band across a chart's x span.
#[derive(Debug, Clone)]
pub(crate) struct Shade {
    /// Where the band starts (x units).
    pub from: f64,
    /// Where it ends.
    pub to: f64,
    /// Label written at its top left.
    pub label: String,
    /// Fill.
    pub color: RGBColor,
}

/// A labelled instant on a chart's x axis: a dashed vertical line across every panel, or,
/// without a line, a label alone (an instant that never came, such as a recovery that did not
/// happen, labelled where the wait for it started).
#[derive(Debug, Clone)]
pub(crate) struct VMark {
    /// Where (x units).
    pub x: f64,
    /// Draw the line; `false` draws the label alone.
    pub line: bool,
    /// Label, written at the top of the first panel, one row per mark so labels never overlap.
    pub label: String,
    /// Colour (the policy's).
    pub color: RGBColor,
}

/// One panel of lines.
#[derive(Debug, Clone)]
pub(crate) struct LinePanel {
    /// Panel caption.
    pub title: String,
    /// Y axis title.
    pub y_label: String,
    /// Y tick format.
    pub unit: Unit,
    /// Lines.
    pub series: Vec<Series>,
    /// Horizontal reference lines (deadlines, capacities).
    pub hlines: Vec<HLine>,
}

/// One line, possibly broken into segments where data is missing.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// Colour (the policy's).
    pub color: RGBColor,
    /// Dashed instead of solid.
    pub dashed: bool,
    /// Connected runs of (x, y).
    pub segments: Vec<Vec<(f64, f64)>>,
    /// Confidence band (x, low, high), drawn shaded under the line.
    pub band: Vec<(f64, f64, f64)>,
    /// Draw a dot at every point.
    pub dots: bool,
    /// Points to mark with a ring (the best settings, ties all marked).
    pub best: Vec<(f64, f64)>,
}

/// A horizontal reference line.
#[derive(Debug, Clone)]
pub(crate) struct HLine {
    /// Height.
    pub y: f64,
    /// Label drawn at its right end.
    pub label: String,
    /// Colour.
    pub color: RGBColor,
}

/// Rows of stacked fraction bands over time.
#[derive(Debug, Clone)]
pub(crate) struct BandRows {
    /// X axis title with unit.
    pub x_label: String,
    /// X range.
    pub x_range: (f64, f64),
    /// The rows, top to bottom.
    pub rows: Vec<BandRow>,
}

/// One band row: per window, the fraction of instance-time open and half-open.
#[derive(Debug, Clone)]
pub(crate) struct BandRow {
    /// Row caption (policy label).
    pub label: String,
    /// Caption colour (the policy's).
    pub color: RGBColor,
    /// (x start, x end, open fraction, half-open fraction).
    pub cells: Vec<(f64, f64, f64, f64)>,
}

/// Panels of horizontal bars.
#[derive(Debug, Clone)]
pub(crate) struct BarPanels {
    /// Panels per row of the grid.
    pub columns: usize,
    /// The panels.
    pub panels: Vec<BarPanel>,
}

/// One bar panel.
#[derive(Debug, Clone)]
pub(crate) struct BarPanel {
    /// Caption.
    pub title: String,
    /// Value format.
    pub unit: Unit,
    /// Bars, top to bottom.
    pub bars: Vec<Bar>,
    /// Constraint targets, drawn as dashed vertical lines across the bars.
    pub targets: Vec<HLine>,
}

/// One bar.
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    /// Category label (policy).
    pub label: String,
    /// Colour.
    pub color: RGBColor,
    /// Length.
    pub value: f64,
    /// Confidence interval drawn as a whisker.
    pub ci: Option<(f64, f64)>,
    /// Extra text after the value (the best setting).
    pub note: String,
}

/// Heatmap panels over two axes.
#[derive(Debug, Clone)]
pub(crate) struct HeatPanels {
    /// X axis title.
    pub x_label: String,
    /// Y axis title.
    pub y_label: String,
    /// X tick labels (one per column).
    pub x_ticks: Vec<String>,
    /// Y tick labels (one per row, bottom to top).
    pub y_ticks: Vec<String>,
    /// Cell value format.
    pub unit: Unit,
    /// Colour scale shared by all panels: (lowest, highest).
    pub scale: (f64, f64),
    /// Caption over the colour bar: the metric's unit.
    pub bar_title: String,
    /// Panels per row of the grid.
    pub columns: usize,
    /// One panel per policy.
    pub panels: Vec<HeatPanel>,
}

/// One heatmap.
#[derive(Debug, Clone)]
pub(crate) struct HeatPanel {
    /// Caption (policy label).
    pub title: String,
    /// Caption colour.
    pub color: RGBColor,
    /// `cells[x][y]`; `None` where the sweep has no row.
    pub cells: Vec<Vec<Option<f64>>>,
    /// The best cells, outlined (ties and one per condition).
    pub best: Vec<(usize, usize)>,
    /// Where the constraints on the metric part cells that meet them from cells that do not:
    /// cell edges as (from, to) corners, cell `(i, j)` spanning corners `i..=i+1` by
    /// `j..=j+1`; drawn dashed in the [`TARGET`] colour.
    pub target_edges: Vec<Edge>,
}

/// A cell edge of a heatmap: its two corners, `(column, row)` each, from low to high.
pub(crate) type Edge = ((usize, usize), (usize, usize));

/// A chart drawn to both formats.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    /// File stem.
    pub stem: String,
    /// Title (alt text in reports).
    pub title: String,
    /// The SVG document.
    pub svg: String,
    /// The PNG file bytes.
    pub png: Vec<u8>,
}

/// Draw a chart to SVG and PNG, in memory.
pub(crate) fn render(chart: &Chart) -> Result<Rendered> {
    style::init_font();
    let size = (chart.width, chart.height);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw::chart(&root, chart).map_err(|e| anyhow!("drawing {} (svg): {e}", chart.stem))?;
        root.present().map_err(|e| anyhow!("drawing {} (svg): {e}", chart.stem))?;
    }
    let mut rgb = vec![0u8; chart.width as usize * chart.height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw::chart(&root, chart).map_err(|e| anyhow!("drawing {} (png): {e}", chart.stem))?;
        root.present().map_err(|e| anyhow!("drawing {} (png): {e}", chart.stem))?;
    }
    let img = image::RgbImage::from_raw(chart.width, chart.height, rgb)
        .ok_or_else(|| anyhow!("{}: pixel buffer has the wrong size", chart.stem))?;
    let mut png = Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png).with_context(|| format!("encoding {}.png", chart.stem))?;
    // Control characters in a name are not allowed in XML: show them as `\u{..}` text.
    let svg = if svg.chars().any(|c| c.is_control() && !"\n\r\t".contains(c)) {
        svg.lines().map(crate::report::escape::visible).collect::<Vec<_>>().join("\n")
    } else {
        svg
    };
    Ok(Rendered { stem: chart.stem.clone(), title: chart.title.clone(), svg, png: png.into_inner() })
}

/// Render every chart of a run (time series, then per-class comparisons); `scenario`, when
/// at hand, gives the graph chart the services' calls and stacks.
pub(crate) fn run_charts(
    summary: &ScenarioSummary,
    rows: &[WindowRow],
    scenario: Option<&crate::scenario::Scenario>,
) -> Result<Vec<Rendered>> {
    let mut charts = timeseries::charts(summary, rows);
    charts.extend(compare::charts(summary));
    charts.extend(graph::charts_with(summary, scenario));
    charts.extend(dep_panels::charts(summary));
    charts.iter().map(render).collect()
}

/// Longest slug kept whole; file names must stay under the usual 255-byte limit.
const SLUG_MAX: usize = 64;

/// A file-name-safe version of a label (letters, digits, `-`; everything else `_`). A long
/// label is cut and given the CRC-32 of the whole label, so two long labels stay apart.
pub(crate) fn slug(s: &str) -> String {
    let slug: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '_' }).collect();
    if slug.len() <= SLUG_MAX {
        return slug;
    }
    format!("{}-{:08x}", &slug[..SLUG_MAX], crc32fast::hash(s.as_bytes()))
}

/// Legend entries for policies, each in its colour by name.
pub(crate) fn policy_legend(policies: &[String], colors: &style::PolicyColors) -> Vec<LegendEntry> {
    policies.iter().map(|p| LegendEntry { label: p.clone(), color: colors.of(p), mark: Mark::Box }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_short_file_names() {
        assert_eq!(slug("Checkout API"), "checkout_api");
        let (a, b) = ("x".repeat(300), format!("{}y", "x".repeat(299)));
        assert_eq!(slug(&a).len(), SLUG_MAX + 9);
        assert_ne!(slug(&a), slug(&b));
        assert!(slug(&a).starts_with(&"x".repeat(SLUG_MAX)));
    }
}
