//! Comparing two result folders (`brownout diff A B`): which figures changed beyond noise, and
//! whether each change is better or worse by the metric catalogue's direction.
//!
//! A folder is a run's (`summary.json`: one value per figure) or a sweep's (`sweep.json`: a
//! mean and a 95 % interval per figure over the replications). The noise rule:
//! - both figures have intervals: changed when the intervals do not overlap;
//! - otherwise: changed when `|B - A| > min_change * |A|` (relative to A; when A is 0, any
//!   B other than 0 is a change).
//!
//! Figures are keyed by policy set, class, phase and sweep point; `summary.json` has no phases
//! yet, so `phase` is always `None` until it does.

mod load;

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::metrics::catalog::{Direction, Metric, Unit};

pub use load::{Folder, Kind, load};

/// Where a figure belongs: one value per key and metric.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Key {
    /// Sweep point's parameters (`name=value, ...`); `None` in a run folder.
    pub point: Option<String>,
    /// Policy set.
    pub policy: String,
    /// Class, for per-class metrics.
    pub class: Option<String>,
    /// Phase of the run, when the summary has phases.
    pub phase: Option<String>,
}

/// One figure of a folder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// The value (a sweep's mean over replications).
    pub value: f64,
    /// 95 % interval (low, high), where replications exist.
    pub ci95: Option<(f64, f64)>,
}

/// How a changed figure moved, by the catalogue's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Moved the way the metric improves.
    Better,
    /// Moved the way the metric worsens.
    Worse,
    /// The metric has no better direction (load, settings).
    Changed,
}

/// A figure that changed beyond noise.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// Where.
    #[serde(flatten)]
    pub key: Key,
    /// Catalogue name.
    pub metric: &'static str,
    /// Its unit, as docs/json.md names it.
    pub unit: &'static str,
    /// A's figure.
    pub a: f64,
    /// B's figure.
    pub b: f64,
    /// A's interval, where replications exist.
    pub a_ci95: Option<(f64, f64)>,
    /// B's interval, where replications exist.
    pub b_ci95: Option<(f64, f64)>,
    /// `(B - A) / |A|`; `None` when A is 0.
    pub relative: Option<f64>,
    /// Better, worse or just changed.
    pub verdict: Verdict,
}

/// How to tell a change from noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Without intervals, the smallest relative change that counts (0.01 = 1 %).
    pub min_change: f64,
}

/// What two folders differ in.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Diff {
    /// Figures changed beyond noise, in key then catalogue order.
    pub changes: Vec<Change>,
    /// Figures compared (present in both folders).
    pub compared: usize,
    /// Keys (policy sets, classes, points) only A has.
    pub only_in_a: Vec<Key>,
    /// Keys only B has.
    pub only_in_b: Vec<Key>,
}

/// The figures of a folder: by key, then by metric in catalogue order.
pub type Figures = BTreeMap<Key, Vec<(&'static Metric, Figure)>>;

/// Compare the figures of A and B under `rule`.
pub fn compare(a: &Figures, b: &Figures, rule: Rule) -> Diff {
    let mut d = Diff::default();
    for (key, fa) in a {
        let Some(fb) = b.get(key) else {
            d.only_in_a.push(key.clone());
            continue;
        };
        for (m, x) in fa {
            let Some((_, y)) = fb.iter().find(|(n, _)| std::ptr::eq(*n, *m)) else { continue };
            d.compared += 1;
            if let Some(change) = changed(key, m, *x, *y, rule) {
                d.changes.push(change);
            }
        }
    }
    d.only_in_b = b.keys().filter(|k| !a.contains_key(k)).cloned().collect();
    d
}

/// The change of one figure, if it is more than noise.
fn changed(key: &Key, m: &'static Metric, x: Figure, y: Figure, rule: Rule) -> Option<Change> {
    if x.value == y.value || !x.value.is_finite() || !y.value.is_finite() {
        return None;
    }
    let relative = (x.value != 0.0).then(|| (y.value - x.value) / x.value.abs());
    let beyond = match (x.ci95, y.ci95) {
        (Some((alo, ahi)), Some((blo, bhi))) => bhi < alo || blo > ahi,
        _ => relative.is_none_or(|r| r.abs() > rule.min_change),
    };
    if !beyond {
        return None;
    }
    let up = y.value > x.value;
    let verdict = match m.direction {
        Direction::Neither => Verdict::Changed,
        Direction::Higher if up => Verdict::Better,
        Direction::Lower if !up => Verdict::Better,
        _ => Verdict::Worse,
    };
    Some(Change {
        key: key.clone(),
        metric: m.name,
        unit: unit_name(m.unit),
        a: x.value,
        b: y.value,
        a_ci95: x.ci95,
        b_ci95: y.ci95,
        relative,
        verdict,
    })
}

/// A unit as documents and tables name it.
pub fn unit_name(u: Unit) -> &'static str {
    match u {
        Unit::Count => "count",
        Unit::Number => "number",
        Unit::Ms => "ms",
        Unit::PerS => "per_s",
        Unit::PerMin => "per_min",
        Unit::Fraction => "fraction",
        Unit::Cost => "cost",
    }
}

/// A `--fail-on-regression METRIC[:THRESHOLD]` guard: `METRIC` is a catalogue name, or
/// `CLASS/METRIC` for one class; THRESHOLD a relative worsening (`0.05` or `5%`) that is
/// tolerated (default 0: any worsening beyond noise fails).
#[derive(Debug, Clone, PartialEq)]
pub struct Guard {
    /// Only this class, when given.
    pub class: Option<String>,
    /// Catalogue name.
    pub metric: String,
    /// Tolerated relative worsening.
    pub threshold: f64,
}

impl std::str::FromStr for Guard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (path, threshold) = match s.rsplit_once(':') {
            Some((p, t)) => (p, parse_threshold(t)?),
            None => (s, 0.0),
        };
        let (class, metric) = match path.split_once('/') {
            Some((c, m)) => (Some(c.to_string()), m),
            None => (None, path),
        };
        if !crate::metrics::catalog::CATALOG.iter().any(|m| m.name == metric) {
            return Err(format!("unknown metric `{metric}`; the catalogue's metrics are listed in README.md"));
        }
        Ok(Self { class, metric: metric.to_string(), threshold })
    }
}

fn parse_threshold(t: &str) -> Result<f64, String> {
    let (number, scale) = match t.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (t, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x * scale),
        _ => Err(format!("threshold `{t}`: expected a non-negative number such as 0.05 or 5%")),
    }
}

impl Guard {
    /// The changes that break this guard: worse, on its metric (and class), by more than
    /// its threshold (a worsening from 0 always counts).
    pub fn broken<'d>(&self, d: &'d Diff) -> Vec<&'d Change> {
        d.changes
            .iter()
            .filter(|c| c.metric == self.metric && c.verdict == Verdict::Worse)
            .filter(|c| self.class.is_none() || c.key.class == self.class)
            .filter(|c| c.relative.is_none_or(|r| r.abs() > self.threshold))
            .collect()
    }
}

/// Order changes worst first for a reader: worse, then changed, then better.
pub fn by_severity(a: &Change, b: &Change) -> Ordering {
    let rank = |v: Verdict| match v {
        Verdict::Worse => 0,
        Verdict::Changed => 1,
        Verdict::Better => 2,
    };
    rank(a.verdict).cmp(&rank(b.verdict))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::catalog::{Scope, find};

    fn key() -> Key {
        Key { point: None, policy: "p".into(), class: Some("c".into()), phase: None }
    }

    fn one(metric: &str, a: f64, b: f64, ci: Option<((f64, f64), (f64, f64))>) -> Diff {
        let m = find(Scope::Class, metric).unwrap();
        let fig = |v, c| Figure { value: v, ci95: c };
        let fa = Figures::from([(key(), vec![(m, fig(a, ci.map(|c| c.0)))])]);
        let fb = Figures::from([(key(), vec![(m, fig(b, ci.map(|c| c.1)))])]);
        compare(&fa, &fb, Rule { min_change: 0.01 })
    }

    #[test]
    fn a_change_within_the_threshold_is_noise() {
        // 100 -> 100.9 is 0.9 %, under 1 %; 100 -> 101.1 is 1.1 %, over it.
        assert!(one("p95_ms", 100.0, 100.9, None).changes.is_empty());
        let d = one("p95_ms", 100.0, 101.1, None);
        assert_eq!(d.changes.len(), 1);
        assert_eq!(d.changes[0].verdict, Verdict::Worse, "p95 went up: lower is better");
        assert!((d.changes[0].relative.unwrap() - 0.011).abs() < 1e-12);
    }

    #[test]
    fn direction_decides_better_or_worse() {
        assert_eq!(one("goodput_per_s", 10.0, 20.0, None).changes[0].verdict, Verdict::Better);
        assert_eq!(one("goodput_per_s", 20.0, 10.0, None).changes[0].verdict, Verdict::Worse);
        assert_eq!(one("requests", 20.0, 10.0, None).changes[0].verdict, Verdict::Changed);
        // From 0 there is no relative change: any other value counts.
        let d = one("timeout", 0.0, 1.0, None);
        assert_eq!((d.changes[0].relative, d.changes[0].verdict), (None, Verdict::Worse));
    }

    #[test]
    fn intervals_decide_when_both_have_them() {
        // 10 % apart, but the intervals overlap: noise.
        assert!(one("p95_ms", 100.0, 110.0, Some(((90.0, 110.0), (100.0, 120.0)))).changes.is_empty());
        // 0.5 % apart with tight, disjoint intervals: a change.
        assert_eq!(one("p95_ms", 100.0, 100.5, Some(((99.9, 100.1), (100.4, 100.6)))).changes.len(), 1);
    }

    #[test]
    fn guards_parse_and_break_on_worsening_beyond_their_threshold() {
        let g: Guard = "checkout/p95_ms:5%".parse().unwrap();
        assert_eq!(g, Guard { class: Some("checkout".into()), metric: "p95_ms".into(), threshold: 0.05 });
        assert_eq!("p95_ms:0.1".parse::<Guard>().unwrap().threshold, 0.1);
        assert!("nonsense".parse::<Guard>().is_err());
        assert!("p95_ms:-1".parse::<Guard>().is_err());
        let d = one("p95_ms", 100.0, 104.0, None);
        assert_eq!("c/p95_ms:5%".parse::<Guard>().unwrap().broken(&d).len(), 0, "4 % is within 5 %");
        assert_eq!("c/p95_ms:3%".parse::<Guard>().unwrap().broken(&d).len(), 1);
        assert_eq!("other/p95_ms".parse::<Guard>().unwrap().broken(&d).len(), 0, "another class");
        assert_eq!("goodput_per_s".parse::<Guard>().unwrap().broken(&d).len(), 0, "another metric");
    }
}
