//! The look shared by every chart: embedded font, policy colours, units and tick labels.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Once;

use plotters::style::{FontStyle, RGBColor, register_font};

/// The font family every chart asks for; registered from the embedded DejaVu Sans.
pub const FONT: &str = "sans-serif";

/// Okabe-Ito colours (safe for the common colour-vision deficiencies; its yellow is too pale on
/// white), then Tableau extras; no grey, which the charts keep for reference lines.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(140, 86, 75),
    RGBColor(148, 103, 189),
    RGBColor(188, 189, 34),
];

/// Light grid lines.
pub const GRID: RGBColor = RGBColor(232, 232, 232);
/// Reference lines (deadlines, capacity limits).
pub const REFERENCE: RGBColor = RGBColor(90, 90, 90);
/// Axis and text colour.
pub const INK: RGBColor = RGBColor(40, 40, 40);
/// Warm-up shading.
pub const SHADE: RGBColor = RGBColor(243, 243, 243);
/// Phase bands on time-series charts, alternating so adjacent phases stay apart.
pub const PHASE_SHADES: [RGBColor; 2] = [RGBColor(253, 240, 213), RGBColor(250, 228, 190)];
/// Breaker closed.
pub const CLOSED: RGBColor = RGBColor(200, 230, 201);
/// Breaker half-open.
pub const HALF_OPEN: RGBColor = RGBColor(255, 193, 7);
/// Breaker open.
pub const OPEN: RGBColor = RGBColor(211, 47, 47);

/// Register the embedded font once per process, so charts never need a system font library.
pub fn init_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Both calls only fail on malformed font bytes, which are compiled in and known good.
        let _ = register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// The width in pixels of `text` at `size` in the embedded font (its advance widths, from
/// ab_glyph through plotters), the measure every label here is laid out by.
pub fn text_width(text: &str, size: f64) -> u32 {
    init_font();
    use plotters::style::IntoFont;
    (FONT, size).into_font().box_size(text).map_or(text.chars().count() as u32 * 8, |(w, _)| w)
}

/// `text` cut to at most `room` pixels, ending in "…" when cut.
pub fn fit(text: &str, size: f64, room: u32) -> String {
    if text_width(text, size) <= room {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len())
        .rev()
        .map(|n| format!("{}…", chars[..n].iter().collect::<String>()))
        .find(|t| text_width(t, size) <= room)
        .unwrap_or_default()
}

/// `text` broken at spaces into lines of at most `room` pixels (a word wider than that alone
/// on its line); no lines for empty text.
pub fn wrap(text: &str, size: f64, room: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{line} {word}"), size) <= room => {
                line.push(' ');
                line.push_str(word);
            }
            _ if text.is_empty() => {}
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The palette slot a policy name prefers: the CRC-32 (IEEE, as zlib's `crc32`) of its UTF-8
/// bytes, modulo the palette's size.
pub fn preferred_slot(name: &str) -> usize {
    crc32fast::hash(name.as_bytes()) as usize % PALETTE.len()
}

/// Policy colours chosen by name, so a policy keeps its colour in every chart of a scenario:
/// run, sweep (over any subset of the policy sets), tune and `plot`.
///
/// The rule: the scenario's policy names (its *roster*) are taken in sorted (byte) order; each
/// takes its [`preferred_slot`] if still free, else the next free slot after it (wrapping).
/// So the same roster always gets the same colours, distinct names get distinct colours while
/// the palette has room, and adding or removing a policy moves only names that sort after it
/// and collide with it. Beyond the palette's size, and for a name not on the roster, a name
/// gets its preferred slot.
#[derive(Debug, Clone, Default)]
pub struct PolicyColors {
    slots: BTreeMap<String, usize>,
}

impl PolicyColors {
    /// The colours of a scenario's policy sets, `roster` being every one of their names.
    pub fn new<S: AsRef<str>>(roster: impl IntoIterator<Item = S>) -> Self {
        let names: BTreeSet<String> = roster.into_iter().map(|s| s.as_ref().to_string()).collect();
        let mut taken = [false; PALETTE.len()];
        let mut slots = BTreeMap::new();
        for name in names {
            let want = preferred_slot(&name);
            let free = (0..PALETTE.len()).map(|k| (want + k) % PALETTE.len()).find(|&k| !taken[k]);
            let slot = free.unwrap_or(want);
            taken[slot] = true;
            slots.insert(name, slot);
        }
        Self { slots }
    }

    /// The colour of policy `name`.
    pub fn of(&self, name: &str) -> RGBColor {
        PALETTE[self.slots.get(name).copied().unwrap_or_else(|| preferred_slot(name))]
    }
}

/// What a value measures, which decides its tick labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds, shown as "250 ms" or "1.5 s".
    Ms,
    /// A rate per second.
    PerS,
    /// A fraction 0..1 shown as a percentage.
    Fraction,
    /// A plain number (counts, limits, costs).
    Plain,
}

impl Unit {
    /// A tick or value label.
    pub fn fmt(self, v: f64) -> String {
        match self {
            Unit::Ms => fmt_ms(v),
            Unit::PerS => format!("{}/s", fmt_num(v)),
            Unit::Fraction => format!("{}%", fmt_num(v * 100.0)),
            Unit::Plain => fmt_num(v),
        }
    }
}

/// A value axis's range for data spanning `lo..=hi`. A ratio zooms to the data: a tenth of
/// its span (at least one percentage point) each side, ends on a 1-2-5 tick step, clamped to
/// 0..100 %. Anything else starts at 0 with a little headroom (see [`upper`]).
pub fn value_range(unit: Unit, lo: f64, hi: f64) -> (f64, f64) {
    if unit != Unit::Fraction || !lo.is_finite() || !hi.is_finite() || lo > hi {
        return (0.0, upper(hi));
    }
    let margin = ((hi - lo) * 0.1).max(0.01);
    let (a, b) = ((lo - margin).max(0.0), (hi + margin).min(1.0));
    let step = nice_step((b - a) / 5.0);
    (tidy((a / step).floor() * step).max(0.0), tidy((b / step).ceil() * step).min(1.0))
}

/// The 1-2-5 step (times a power of ten) at or above `raw`.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * mag)
}

/// `k * step` without its float noise (0.9200000000000002 becomes 0.92).
fn tidy(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

/// Milliseconds as "250 ms" below one second and "1.5 s" above.
pub fn fmt_ms(v: f64) -> String {
    if v.abs() >= 1000.0 { format!("{} s", fmt_num(v / 1000.0)) } else { format!("{} ms", fmt_num(v)) }
}

/// A number with at most three significant decimals, no trailing zeros, and thousands
/// separators (`1,000,000`): for figures, labels and axes. A setting to type into a scenario
/// is written with [`fmt_setting`].
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" { "0".to_string() } else { thousands(&s) }
}

/// `s` (a number as [`fmt_num`] writes it) with its integer digits grouped by three with
/// commas, so 769050 reads 769,050; anything else (NaN, inf) unchanged.
fn thousands(s: &str) -> String {
    let (sign, rest) = s.strip_prefix('-').map_or(("", s), |r| ("-", r));
    let (int, frac) = rest.split_once('.').map_or((rest, None), |(i, f)| (i, Some(f)));
    if int.len() <= 3 || !int.bytes().all(|b| b.is_ascii_digit()) {
        return s.to_string();
    }
    let mut out = String::from(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// A setting's value as a scenario takes it: [`fmt_num`]'s rounding without separators.
pub fn fmt_setting(v: f64) -> String {
    fmt_num(v).replace(',', "")
}

/// The upper end of a value axis: a little headroom above the data, never an empty range.
pub fn upper(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 { max * 1.08 } else { 1.0 }
}

/// A sequential colour for `t` in 0..1 (dark blue to yellow, perceptually ordered like viridis).
pub fn sequential(t: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 5] =
        [(68.0, 1.0, 84.0), (59.0, 82.0, 139.0), (33.0, 145.0, 140.0), (94.0, 201.0, 98.0), (253.0, 231.0, 37.0)];
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let pos = t * (STOPS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(STOPS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_numbers_get_thousands_separators() {
        assert_eq!(fmt_num(769_050.0), "769,050");
        assert_eq!(fmt_num(1_000_000.0), "1,000,000");
        assert_eq!(fmt_num(-12_345.4), "-12,345");
        assert_eq!(fmt_num(999.0), "999");
        assert_eq!(fmt_num(1234.0), "1,234");
        assert_eq!(fmt_num(12.5), "12.5");
        assert_eq!(Unit::PerS.fmt(2500.0), "2,500/s");
        assert_eq!(fmt_ms(1_500_000.0), "1,500 s");
    }

    #[test]
    fn milliseconds_switch_to_seconds_at_one_second() {
        assert_eq!(fmt_ms(250.0), "250 ms");
        assert_eq!(fmt_ms(999.0), "999 ms");
        assert_eq!(fmt_ms(1000.0), "1 s");
        assert_eq!(fmt_ms(1500.0), "1.5 s");
        assert_eq!(fmt_ms(6000.0), "6 s");
    }

    #[test]
    fn numbers_drop_trailing_zeros() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(12.50), "12.5");
        assert_eq!(fmt_num(2.0), "2");
        assert_eq!(fmt_num(0.125), "0.125");
        assert_eq!(Unit::Fraction.fmt(0.25), "25%");
        assert_eq!(Unit::PerS.fmt(40.0), "40/s");
    }

    #[test]
    fn preferred_slots_are_crc32_of_the_name_modulo_ten() {
        // Python's zlib.crc32: 0x2017154e, 0xf7e4ed10, 0x8b6bc2de, 0xbc8b7ae4, 0x9a099ac7, whose
        // decimal values end in 4, 8, 2, 2, 1.
        let slots: Vec<usize> = ["direct", "breaker", "limit-4", "tiered", "timeout-only"].map(preferred_slot).into();
        assert_eq!(slots, [4, 8, 2, 2, 1]);
    }

    #[test]
    fn colliding_names_take_the_next_free_slot_in_sorted_order() {
        // All four prefer slot 2; sorted: fifo, limit-4, tiered, timeout take 2, 3, 4, 5.
        let c = PolicyColors::new(["timeout", "tiered", "limit-4", "fifo"]);
        let got: Vec<RGBColor> = ["fifo", "limit-4", "tiered", "timeout"].map(|n| c.of(n)).into();
        assert_eq!(got, [PALETTE[2], PALETTE[3], PALETTE[4], PALETTE[5]]);
        // Order of the roster does not matter; a name that collides with nobody (a: slot 7)
        // changes nothing for the others.
        let d = PolicyColors::new(["a", "fifo", "limit-4", "tiered", "timeout"]);
        assert!(["fifo", "limit-4", "tiered", "timeout"].iter().all(|n| c.of(n) == d.of(n)));
        assert_eq!(d.of("a"), PALETTE[7]);
    }

    #[test]
    fn distinct_names_get_distinct_colours_while_the_palette_has_room() {
        let names: Vec<String> = (0..PALETTE.len()).map(|i| format!("policy-{i}")).collect();
        let c = PolicyColors::new(&names);
        let colours: BTreeSet<(u8, u8, u8)> = names.iter().map(|n| c.of(n)).map(|k| (k.0, k.1, k.2)).collect();
        assert_eq!(colours.len(), PALETTE.len());
        // An eleventh name, sorted last, finds no free slot and shares its preferred one (2).
        let more = PolicyColors::new(names.iter().map(String::as_str).chain(["zzz"]));
        assert_eq!(more.of("zzz"), PALETTE[2]);
    }

    #[test]
    fn sequential_ends_are_the_stop_colours() {
        assert_eq!(sequential(0.0), RGBColor(68, 1, 84));
        assert_eq!(sequential(1.0), RGBColor(253, 231, 37));
        // Halfway is exactly the middle stop.
        assert_eq!(sequential(0.5), RGBColor(33, 145, 140));
    }
}
