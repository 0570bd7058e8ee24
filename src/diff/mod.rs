//! Comparing two result folders (`brownout diff A B`): which figures changed, by which rule,
//! and whether each change is better or worse by the metric catalogue's direction.
//!
//! A folder is a run's (`summary.json`: per policy set, class and phase, one value per figure,
//! or with replications the mean, the 95 % interval and each seed's value) or a sweep's
//! (`sweep.json`: a mean and a 95 % interval per figure over the replications). Each figure is
//! compared by the strongest rule both folders allow ([`Method`]):
//! - both hold every seed's value, on the same seeds (same scenario seed and replication
//!   count): paired by seed, [`crate::stats::paired_ci95`] of B - A with the catalogue's
//!   margin ([`Metric::margin`]): changed when the interval lies beyond the margin;
//! - both have intervals, but not on the same seeds: unpaired, changed when the two 95 %
//!   intervals do not overlap and the means differ by more than the margin (a conservative
//!   test: two intervals that just touch differ at about the 0.5 % level, not 5 %);
//! - otherwise (no replications): a fixed relative threshold, `|B - A| > min_change * |A|`
//!   (when A is 0, any B other than 0), which says nothing about noise.
//!
//! Figures are keyed by sweep point, policy set, class and phase.

mod load;

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::metrics::catalogue::{self, Direction, Metric, Scope, Unit};
use crate::stats::paired_ci95;

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
    /// Phase of the run; `None` for the whole run.
    pub phase: Option<String>,
}

/// One figure of a folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The value (the mean over the replications, where there are some).
    pub value: f64,
    /// 95 % interval (low, high), where replications exist (NaN ends where fewer than two
    /// replications have a value: unknown, so no interval rule finds a change).
    pub ci95: Option<(f64, f64)>,
    /// Each replication's value in the folder's seed order (NaN where it has none); empty
    /// where the folder does not keep them.
    pub values: Vec<f64>,
}

impl Figure {
    /// A figure of one run: no interval, no replications.
    pub fn single(value: f64) -> Self {
        Self { value, ci95: None, values: Vec::new() }
    }
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

/// The rule one figure was compared by (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Paired by seed: Student-t interval of B - A against the metric's margin.
    PairedT,
    /// Unpaired: the two 95 % intervals do not overlap, beyond the margin.
    Intervals,
    /// A fixed relative change (`min_change`), without replications: not a noise test.
    FixedRelative,
}

/// A figure that changed by its rule.
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
    /// The rule that found the change.
    pub rule: Method,
    /// Paired by seed: the mean of B - A over the seeds and its 95 % interval.
    pub diff_ci95: Option<(f64, f64)>,
    /// Paired by seed: the degrees of freedom of that interval (pairs minus one).
    pub df: Option<usize>,
    /// The practical-equivalence margin used (paired and interval rules).
    pub margin: f64,
}

/// How to tell a change from noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Without intervals, the smallest relative change that counts (0.01 = 1 %).
    pub min_change: f64,
    /// Both folders ran on the same seeds, so figures with every seed's value are paired.
    pub paired: bool,
}

/// What two folders differ in.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Diff {
    /// Figures changed by their rule, in key then catalogue order.
    pub changes: Vec<Change>,
    /// Figures compared (present, with a value, in both folders).
    pub compared: usize,
    /// How many figures each rule compared, and the degrees of freedom of the paired ones
    /// (the largest: seeds minus one, fewer where a seed has no value).
    pub methods: BTreeMap<Method, usize>,
    /// The paired rule's degrees of freedom with every seed defined.
    pub df: Option<usize>,
    /// Keys (policy sets, classes, phases, points) only A has.
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
            if !x.value.is_finite() || !y.value.is_finite() {
                continue;
            }
            d.compared += 1;
            let method = method(x, y, rule);
            *d.methods.entry(method).or_default() += 1;
            let change = changed(key, m, x, y, method, rule);
            if method == Method::PairedT {
                d.df = d.df.max(Some(x.values.len().saturating_sub(1)));
            }
            d.changes.extend(change);
        }
    }
    d.only_in_b = b.keys().filter(|k| !a.contains_key(k)).cloned().collect();
    d
}

/// The strongest rule both figures allow.
fn method(x: &Figure, y: &Figure, rule: Rule) -> Method {
    if rule.paired && !x.values.is_empty() && x.values.len() == y.values.len() {
        Method::PairedT
    } else if x.ci95.is_some() && y.ci95.is_some() {
        // Both over replications: an unknown interval (one defined replication) claims nothing.
        Method::Intervals
    } else {
        Method::FixedRelative
    }
}

/// The change of one figure, if its rule finds one.
fn changed(key: &Key, m: &'static Metric, x: &Figure, y: &Figure, method: Method, rule: Rule) -> Option<Change> {
    let relative = (x.value != 0.0).then(|| (y.value - x.value) / x.value.abs());
    let margin = m.margin();
    let (mut diff_ci95, mut df) = (None, None);
    let beyond = match method {
        Method::PairedT => {
            let p = paired_ci95(&y.values, &x.values, margin);
            diff_ci95 = Some((p.diff.ci_lo, p.diff.ci_hi));
            df = p.df;
            p.differs
        }
        Method::Intervals => {
            let ((alo, ahi), (blo, bhi)) = (x.ci95?, y.ci95?);
            (bhi < alo || blo > ahi) && (y.value - x.value).abs() > margin
        }
        Method::FixedRelative => x.value != y.value && relative.is_none_or(|r| r.abs() > rule.min_change),
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
        rule: method,
        diff_ci95,
        df,
        margin: if method == Method::FixedRelative { 0.0 } else { margin },
    })
}

/// The rules a diff used, in words: one line per rule, with how many figures it compared.
pub fn rule_lines(d: &Diff, min_change: f64) -> Vec<String> {
    d.methods
        .iter()
        .map(|(m, n)| {
            let how = match m {
                Method::PairedT => format!(
                    "paired by seed (same seeds in both folders): Student-t 95 % interval of B - A{}, a change when it lies beyond the metric's margin (0.001 for ratios, 0 otherwise)",
                    d.df.map_or(String::new(), |df| format!(" with {df} degrees of freedom"))
                ),
                Method::Intervals => "unpaired (not the same seeds, or no per-seed values): a change when the two 95 % intervals do not overlap and the means differ by more than the metric's margin".to_string(),
                Method::FixedRelative => format!(
                    "fixed relative threshold (no replications): a change when the figure moved by more than {} % of A (--min-change); this is not a test against noise",
                    min_change * 100.0
                ),
            };
            format!("{n} figure(s) {how}")
        })
        .collect()
}

/// A method as documents name it.
pub fn method_name(m: Method) -> &'static str {
    match m {
        Method::PairedT => "paired_t",
        Method::Intervals => "intervals",
        Method::FixedRelative => "fixed_relative",
    }
}

/// A unit as documents and tables name it.
pub fn unit_name(u: Unit) -> &'static str {
    u.name()
}

/// A `--fail-on-regression [policy=SET:][PHASE:][CLASS/]METRIC[:THRESHOLD]` guard. `METRIC` is
/// a catalogue name; `CLASS/` limits it to one class (without it, a per-class metric is
/// guarded in every class); `PHASE:` guards the figure over that phase instead of the whole
/// run; `policy=SET:` limits it to one policy set (without it, every set). THRESHOLD is a
/// relative worsening (`0.05` or `5%`) that is tolerated (default 0: any worsening the rule
/// finds fails).
#[derive(Debug, Clone, PartialEq)]
pub struct Guard {
    /// Only this policy set, when given.
    pub policy: Option<String>,
    /// The phase; `None` for the whole run.
    pub phase: Option<String>,
    /// Only this class, when given.
    pub class: Option<String>,
    /// Catalogue name.
    pub metric: String,
    /// Tolerated relative worsening.
    pub threshold: f64,
}

/// `path` as `[CLASS/]METRIC` if its metric is in the catalogue, or as
/// `dependencies[NAME]/METRIC` (a service graph's dependency, the "class" of its figures).
fn metric_path(path: &str) -> Option<(Option<&str>, &str)> {
    let (class, metric) = match path.split_once('/') {
        Some((c, m)) => (Some(c), m),
        None => (None, path),
    };
    let scope_rows = match class {
        Some(c) if catalogue::split_dependency(path).is_some() || c.starts_with("dependencies[") => {
            catalogue::DEPENDENCY_METRICS
        }
        _ => catalogue::CATALOGUE,
    };
    scope_rows.iter().any(|m| m.name == metric).then_some((class, metric))
}

impl std::str::FromStr for Guard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (policy, rest) = match s.strip_prefix("policy=") {
            Some(r) => match r.split_once(':') {
                Some((p, rest)) if !p.is_empty() => (Some(p.to_string()), rest),
                _ => return Err(format!("`{s}`: expected policy=SET: before the metric")),
            },
            None => (None, s),
        };
        let mut parts: Vec<&str> = rest.split(':').collect();
        // The last part is a threshold unless it names a metric.
        let threshold = match parts.as_slice() {
            [.., last] if parts.len() > 1 && metric_path(last).is_none() => {
                let t = parse_threshold(last)?;
                parts.pop();
                t
            }
            _ => 0.0,
        };
        let (phase, path) = match parts.as_slice() {
            [path] => (None, *path),
            [phase, path] if !phase.is_empty() => (Some(phase.to_string()), *path),
            _ => return Err(format!("`{s}`: expected [policy=SET:][PHASE:][CLASS/]METRIC[:THRESHOLD]")),
        };
        let Some((class, metric)) = metric_path(path) else {
            let metric = path.rsplit('/').next().unwrap_or(path);
            return Err(format!("unknown metric `{metric}`; the catalogue's metrics are listed in README.md"));
        };
        let dependency = class.is_some_and(|c| c.starts_with("dependencies["));
        if class.is_some() && !dependency && catalogue::find(Scope::Class, metric).is_none() {
            return Err(format!("`{metric}` is a per-run metric: it takes no CLASS/"));
        }
        if class == Some("") {
            return Err(format!("`{s}`: empty class before `/{metric}`"));
        }
        Ok(Self { policy, phase, class: class.map(str::to_string), metric: metric.to_string(), threshold })
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

impl std::fmt::Display for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if let Some(p) = &self.policy {
            write!(f, "policy={p}:")?;
        }
        if let Some(p) = &self.phase {
            write!(f, "{p}:")?;
        }
        if let Some(c) = &self.class {
            write!(f, "{c}/")?;
        }
        write!(f, "{}", self.metric)?;
        if self.threshold > 0.0 {
            write!(f, ":{}%", self.threshold * 100.0)?;
        }
        Ok(())
    }
}

/// A guard that watches no figure compared in both folders ([`Guard::check`]): it must not
/// pass unseen. Its `Display` is the message `brownout diff` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unseen {
    /// The guard as written.
    pub guard: String,
    /// Why it sees nothing: the first reason found.
    pub why: String,
}

impl std::fmt::Display for Unseen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "guard `{}` watches no figure: {}", self.guard, self.why)
    }
}

impl std::error::Error for Unseen {}

impl Guard {
    /// Whether the figure `metric` at `key` is one this guard watches.
    fn watches(&self, key: &Key, metric: &str) -> bool {
        metric == self.metric
            && key.phase == self.phase
            && self.policy.as_ref().is_none_or(|p| *p == key.policy)
            && match &self.class {
                Some(c) => key.class.as_ref() == Some(c),
                // A dependency's figures are guarded only when named (`dependencies[NAME]/`):
                // its `amplification` is not the run's.
                None => !key.class.as_ref().is_some_and(|k| k.starts_with("dependencies[")),
            }
    }

    /// The changes that break this guard: worse, on its figures, by more than its threshold
    /// (a worsening from 0 always counts). Use [`Guard::check`] to also know that it watched
    /// anything.
    pub fn broken<'d>(&self, d: &'d Diff) -> Vec<&'d Change> {
        d.changes
            .iter()
            .filter(|c| self.watches(&c.key, c.metric) && c.verdict == Verdict::Worse)
            .filter(|c| c.relative.is_none_or(|r| r.abs() > self.threshold))
            .collect()
    }

    /// [`Guard::broken`], once the guard is known to watch at least one figure compared in
    /// both folders; otherwise why it watches nothing (a guard that cannot see its figure must
    /// not pass).
    pub fn check<'d>(&self, a: &Folder, b: &Folder, d: &'d Diff) -> Result<Vec<&'d Change>, Unseen> {
        let value = |f: &Folder, key: &Key| {
            f.figures.get(key)?.iter().find(|(m, _)| m.name == self.metric).map(|(_, x)| x.value)
        };
        if a.scenario != b.scenario {
            return Err(Unseen { guard: self.to_string(), why: self.why_unseen(a, b) });
        }
        let seen = a
            .figures
            .keys()
            .filter(|k| self.watches(k, &self.metric))
            .any(|k| value(a, k).is_some_and(f64::is_finite) && value(b, k).is_some_and(f64::is_finite));
        if seen {
            return Ok(self.broken(d));
        }
        Err(Unseen { guard: self.to_string(), why: self.why_unseen(a, b) })
    }

    /// Why the guard watches nothing, naming the first reason found.
    fn why_unseen(&self, a: &Folder, b: &Folder) -> String {
        if a.scenario != b.scenario {
            return format!(
                "the folders hold different scenarios ({} and {}), so no figure of one is the other's",
                a.scenario, b.scenario
            );
        }
        let names = |f: &Folder, part: fn(&Key) -> Option<&str>| -> Vec<String> {
            let mut v: Vec<String> = f.figures.keys().filter_map(|k| part(k).map(str::to_string)).collect();
            v.dedup();
            v.sort();
            v.dedup();
            v
        };
        let listing = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
        for f in [a, b] {
            let dir = f.dir.display();
            if let Some(p) = &self.policy {
                let sets = names(f, |k| Some(k.policy.as_str()));
                if !sets.contains(p) {
                    return format!("{dir} has no policy set `{p}` (its sets: {})", listing(&sets));
                }
            }
            if let Some(p) = &self.phase
                && !f.phases.contains(p)
            {
                let why = match f.kind {
                    Kind::Sweep => " (a sweep has the phases its spec's metrics name)",
                    Kind::Run => "",
                };
                return format!("{dir} has no phase `{p}` (its phases: {}){why}", listing(&f.phases));
            }
            if let Some(c) = &self.class {
                let classes = names(f, |k| k.class.as_deref());
                if !classes.contains(c) {
                    return format!("{dir} has no class `{c}` (its classes: {})", listing(&classes));
                }
            }
        }
        format!("`{}` has no value in both folders where the guard looks (a figure over no sample)", self.metric)
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
    use crate::metrics::catalogue::find;

    fn key() -> Key {
        Key { point: None, policy: "p".into(), class: Some("c".into()), phase: None }
    }

    fn with(metric: &str, x: Figure, y: Figure, paired: bool) -> Diff {
        let m = find(Scope::Class, metric).unwrap();
        let fa = Figures::from([(key(), vec![(m, x)])]);
        let fb = Figures::from([(key(), vec![(m, y)])]);
        compare(&fa, &fb, Rule { min_change: 0.01, paired })
    }

    fn one(metric: &str, a: f64, b: f64, ci: Option<((f64, f64), (f64, f64))>) -> Diff {
        let fig = |v, c| Figure { value: v, ci95: c, values: Vec::new() };
        with(metric, fig(a, ci.map(|c| c.0)), fig(b, ci.map(|c| c.1)), false)
    }

    /// A figure over replications with these per-seed values (mean and interval by stats).
    fn reps(values: &[f64]) -> Figure {
        let ci = crate::stats::mean_ci95(values);
        Figure { value: ci.mean, ci95: Some((ci.ci_lo, ci.ci_hi)), values: values.to_vec() }
    }

    #[test]
    fn a_change_within_the_threshold_is_noise() {
        // 100 -> 100.9 is 0.9 %, under 1 %; 100 -> 101.1 is 1.1 %, over it.
        assert!(one("p95_ms", 100.0, 100.9, None).changes.is_empty());
        let d = one("p95_ms", 100.0, 101.1, None);
        assert_eq!(d.changes.len(), 1);
        assert_eq!(d.changes[0].verdict, Verdict::Worse, "p95 went up: lower is better");
        assert_eq!(d.changes[0].rule, Method::FixedRelative);
        assert!((d.changes[0].relative.unwrap() - 0.011).abs() < 1e-12);
        assert_eq!(d.methods, BTreeMap::from([(Method::FixedRelative, 1)]));
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
        // 2 ms apart with tight, disjoint intervals, beyond p95's 1 ms margin: a change.
        let d = one("p95_ms", 100.0, 102.0, Some(((99.9, 100.1), (101.9, 102.1))));
        assert_eq!((d.changes.len(), d.changes[0].rule), (1, Method::Intervals));
        // 0.5 ms apart with disjoint intervals is inside that margin: a tie.
        assert!(one("p95_ms", 100.0, 100.5, Some(((99.9, 100.1), (100.4, 100.6)))).changes.is_empty());
        // A ratio 0.0005 apart with disjoint intervals is inside its 0.001 margin: a tie.
        assert!(one("in_time_ratio", 0.9, 0.9005, Some(((0.8999, 0.9001), (0.9004, 0.9006)))).changes.is_empty());
    }

    #[test]
    fn the_same_seeds_are_compared_pair_by_pair() {
        // A: 0.90, 0.80, 0.95, 0.85, 0.70 over five seeds; B is each seed's value minus 0.01.
        // The seeds spread 0.70..0.95, so the two intervals overlap almost whole, but every
        // pair moved by -0.01 exactly: B - A is -0.01 with an interval of width 0 (4 df),
        // beyond the 0.001 margin of a ratio: worse.
        let a = [0.90, 0.80, 0.95, 0.85, 0.70];
        let b: Vec<f64> = a.iter().map(|v| v - 0.01).collect();
        let d = with("in_time_ratio", reps(&a), reps(&b), true);
        assert_eq!(d.changes.len(), 1, "{d:?}");
        let c = &d.changes[0];
        assert_eq!((c.rule, c.df, c.verdict, c.margin), (Method::PairedT, Some(4), Verdict::Worse, 0.001));
        let (lo, hi) = c.diff_ci95.unwrap();
        assert!((lo + 0.01).abs() < 1e-12 && (hi + 0.01).abs() < 1e-12, "{c:?}");
        assert_eq!(d.df, Some(4));
        // Unpaired (other seeds), the same figures are within noise: the intervals overlap.
        assert!(with("in_time_ratio", reps(&a), reps(&b), false).changes.is_empty());
        // Identical per-seed values: no change.
        assert!(with("in_time_ratio", reps(&a), reps(&a), true).changes.is_empty());
        // A move of 0.0005 on every seed is inside the margin: a tie.
        let tiny: Vec<f64> = a.iter().map(|v| v - 0.0005).collect();
        assert!(with("in_time_ratio", reps(&a), reps(&tiny), true).changes.is_empty());
    }

    #[test]
    fn guards_parse_with_policy_phase_class_and_threshold() {
        let g: Guard = "checkout/p95_ms:5%".parse().unwrap();
        let want = |policy: Option<&str>, phase: Option<&str>, class: Option<&str>, metric: &str, t: f64| Guard {
            policy: policy.map(Into::into),
            phase: phase.map(Into::into),
            class: class.map(Into::into),
            metric: metric.into(),
            threshold: t,
        };
        assert_eq!(g, want(None, None, Some("checkout"), "p95_ms", 0.05));
        assert_eq!("p95_ms:0.1".parse::<Guard>().unwrap().threshold, 0.1);
        assert_eq!(
            "incident:query/in_time_ratio:1%".parse::<Guard>().unwrap(),
            want(None, Some("incident"), Some("query"), "in_time_ratio", 0.01)
        );
        assert_eq!("incident:p95_ms".parse::<Guard>().unwrap(), want(None, Some("incident"), None, "p95_ms", 0.0));
        assert_eq!(
            "policy=guarded:incident:query/in_time_ratio".parse::<Guard>().unwrap(),
            want(Some("guarded"), Some("incident"), Some("query"), "in_time_ratio", 0.0)
        );
        assert_eq!(
            "policy=guarded:goodput_per_s:2%".parse::<Guard>().unwrap(),
            want(Some("guarded"), None, None, "goodput_per_s", 0.02)
        );
        // Shown as written.
        assert_eq!(
            "policy=g:incident:query/in_time_ratio:1%".parse::<Guard>().unwrap().to_string(),
            "policy=g:incident:query/in_time_ratio:1%"
        );
        for bad in ["nonsense", "p95_ms:-1", "p95_ms:abc", "a:b:p95_ms", "policy=:p95_ms", "/p95_ms"] {
            assert!(bad.parse::<Guard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn guards_break_on_worsening_beyond_their_threshold() {
        let d = one("p95_ms", 100.0, 104.0, None);
        assert_eq!("c/p95_ms:5%".parse::<Guard>().unwrap().broken(&d).len(), 0, "4 % is within 5 %");
        assert_eq!("c/p95_ms:3%".parse::<Guard>().unwrap().broken(&d).len(), 1);
        assert_eq!("p95_ms:3%".parse::<Guard>().unwrap().broken(&d).len(), 1, "every class");
        assert_eq!("policy=p:c/p95_ms".parse::<Guard>().unwrap().broken(&d).len(), 1);
        assert_eq!("policy=q:c/p95_ms".parse::<Guard>().unwrap().broken(&d).len(), 0, "another set");
        assert_eq!("other/p95_ms".parse::<Guard>().unwrap().broken(&d).len(), 0, "another class");
        assert_eq!("incident:c/p95_ms".parse::<Guard>().unwrap().broken(&d).len(), 0, "a phase, not the run");
        assert_eq!("goodput_per_s".parse::<Guard>().unwrap().broken(&d).len(), 0, "another metric");
    }
}
