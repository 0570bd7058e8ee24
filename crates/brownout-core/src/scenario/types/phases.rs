//! Phases: named time windows of a run (an incident's "brownout", "recovery") that every figure
//! is also reported for. Written in the scenario, or derived from the dependency's timeline.
//!
//! A phase's figures are those of the requests that arrive in `[start, end)`, whenever they
//! finish; time-weighted gauges and dependency calls count over `[start, end)`.
//!
//! Derivation, when the scenario names no phase: the *degraded* span is the hull of the drift
//! at its peak factor, the non-healthy modes and the replica slowdowns (factor above 1); the
//! *ramp* runs from the drift's onset (its last point at the starting factor before the peak)
//! to the degraded span; the *recovery* from the degraded span to the drift's return to its
//! final factor; *before* and *after* fill the measured span around them. Each is clipped to
//! `[warmup, horizon)` and dropped when empty. A flat dependency gets no phases; periodic and
//! CSV drifts and the error-rate profile are not used (no single episode to name). With
//! several `dependencies`, the incident spans all of theirs: degraded from the first
//! dependency's degraded span to the last one's, ramping from the earliest onset and
//! recovering until the last return (`derive_all`), so a brownout of any dependency, not only
//! the first, names the phases.

use serde::{Deserialize, Serialize};

use super::{Dependency, Drift, Dur, Mode, Scenario};
use crate::engine::Time;

/// A named time window of the run, reported beside the whole run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// Name (non-empty, unique, without `:`, `/` or control characters, which the
    /// `phase:class/metric` syntax cannot name), e.g. `"brownout"`; expectations and sweep
    /// metrics use it.
    pub name: String,
    /// Start (at or after `warmup`).
    pub start: Dur,
    /// End (after `start`, at most `horizon`); phases must not overlap.
    pub end: Dur,
}

/// Where a run's phases come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseSource {
    /// Written in the scenario's `phases`.
    Scenario,
    /// Derived from the dependency's drift, modes and replica slowdowns.
    Derived,
}

impl PhaseSource {
    /// `"scenario"` or `"derived"`, as `summary.json` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseSource::Scenario => "scenario",
            PhaseSource::Derived => "derived",
        }
    }
}

/// A phase as a run measures it: name, `[start, end)` in ns, and its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPhase {
    /// Name.
    pub name: String,
    /// Start, ns.
    pub start: Time,
    /// End, ns.
    pub end: Time,
    /// Written or derived.
    pub source: PhaseSource,
}

/// Names of the derived phases, in time order.
pub const DERIVED_NAMES: [&str; 5] = ["before", "ramp", "degraded", "recovery", "after"];

/// The phases a run of `s` reports: the scenario's, else those derived from its
/// dependencies' timelines (the incident spans every dependency's: [`derive_all`]).
pub fn phases_of(s: &Scenario) -> Vec<ResolvedPhase> {
    if !s.phases.is_empty() {
        let one = |p: &Phase| ResolvedPhase {
            name: p.name.clone(),
            start: p.start.ns(),
            end: p.end.ns(),
            source: PhaseSource::Scenario,
        };
        return s.phases.iter().map(one).collect();
    }
    derive_all(s.deps(), s.warmup.ns(), s.horizon.ns())
}

/// Checks the scenario's phases: each named once, non-empty, inside `[warmup, horizon]`,
/// none overlapping another. The error is (path, message), the path as `phases[2].end`.
pub(crate) fn check_phases(s: &Scenario) -> Result<(), (String, String)> {
    let mut names = std::collections::BTreeMap::new();
    let mut by_start = std::collections::BTreeMap::new();
    for (k, p) in s.phases.iter().enumerate() {
        let at = |f: &str| format!("phases[{k}].{f}");
        if p.name.trim().is_empty() {
            return Err((at("name"), "phase name must not be empty".into()));
        }
        if let Some(j) = names.insert(p.name.as_str(), k) {
            return Err((at("name"), format!("phase \"{}\" is defined twice (first as phases[{j}])", p.name)));
        }
        if p.end <= p.start {
            let m = format!("phase \"{}\" is empty: end {} must be after start {}", p.name, p.end, p.start);
            return Err((at("end"), m));
        }
        if p.start < s.warmup {
            let m = format!("phase \"{}\" starts at {}, before the warm-up ends ({})", p.name, p.start, s.warmup);
            return Err((at("start"), m));
        }
        if p.end > s.horizon {
            let m = format!("phase \"{}\" ends at {}, after the horizon ({})", p.name, p.end, s.horizon);
            return Err((at("end"), m));
        }
        by_start.insert((p.start, k), k);
    }
    let sorted: Vec<usize> = by_start.into_values().collect();
    for w in sorted.windows(2) {
        let (a, b) = (&s.phases[w[0]], &s.phases[w[1]]);
        if b.start < a.end {
            let m = format!(
                "phase \"{}\" starts at {}, inside phase \"{}\" ({} to {}): phases must not overlap",
                b.name, b.start, a.name, a.start, a.end
            );
            return Err((format!("phases[{}].start", w[1]), m));
        }
    }
    Ok(())
}

/// `name` is one of the run's phases, or an error listing them.
pub(crate) fn check_phase_name(s: &Scenario, name: &str) -> Result<(), String> {
    let all = phases_of(s);
    if all.iter().any(|p| p.name == name) {
        return Ok(());
    }
    let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
    Err(match names.is_empty() {
        true => format!(
            "unknown phase \"{name}\": the scenario has no phases (write `phases`, or give the dependency a drift)"
        ),
        false => format!("unknown phase \"{name}\" (phases: {})", names.join(", ")),
    })
}

/// The drift's breakpoints (time, factor), piecewise linear and constant outside, or `None`
/// for a drift without a single episode (none, periodic, CSV).
fn drift_points(d: &Drift) -> Option<Vec<(Time, f64)>> {
    match d {
        Drift::Step { at, factor } => Some(vec![(at.ns(), 1.0), (at.ns(), *factor)]),
        Drift::Ramp { start, end, from, to } => Some(vec![(start.ns(), *from), (end.ns(), *to)]),
        Drift::Points(p) => Some(p.iter().map(|&(t, f)| (t.ns(), f)).collect()),
        Drift::Brownout { start, ramp, hold, peak } => {
            let (s, r) = (start.ns(), ramp.ns());
            let up = s.saturating_add(r);
            let down = up.saturating_add(hold.ns());
            Some(vec![(s, 1.0), (up, *peak), (down, *peak), (down.saturating_add(r), 1.0)])
        }
        Drift::None | Drift::Periodic { .. } | Drift::Csv { .. } => None,
    }
}

/// A drift episode: onset, peak span `[p0, p1)` and return to the final factor (`Time::MAX`
/// when it never ends).
struct Episode {
    onset: Time,
    peak: (Time, Time),
    back: Time,
}

fn drift_episode(pts: &[(Time, f64)]) -> Option<Episode> {
    let (first, last) = (pts.first()?.1, pts.last()?.1);
    let peak = pts.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    if peak <= first {
        return None;
    }
    let i0 = pts.iter().position(|p| p.1 == peak)?;
    let i1 = pts.iter().rposition(|p| p.1 == peak)?;
    let onset = pts[..i0].iter().rev().find(|p| p.1 == first).map_or(pts[0].0, |p| p.0);
    if i1 + 1 == pts.len() {
        return Some(Episode { onset, peak: (pts[i0].0, Time::MAX), back: Time::MAX });
    }
    let back = pts[i1..].iter().find(|p| p.1 == last).map_or(Time::MAX, |p| p.0);
    Some(Episode { onset, peak: (pts[i0].0, pts[i1].0), back })
}

/// Intervals where the mode is not healthy or a replica is slowed.
fn jumps(d: &Dependency) -> Vec<(Time, Time)> {
    let mut out = Vec::new();
    let mut bad_since: Option<Time> = None;
    for m in &d.modes {
        match (m.mode, bad_since) {
            (Mode::Healthy, Some(s)) => {
                out.push((s, m.at.ns()));
                bad_since = None;
            }
            (Mode::Slow(_) | Mode::Unavailable, None) => bad_since = Some(m.at.ns()),
            _ => {}
        }
    }
    if let Some(s) = bad_since {
        out.push((s, Time::MAX));
    }
    let slow = d.replicas.iter().flat_map(|r| &r.slow).filter(|s| s.factor > 1.0 && s.end > s.start);
    out.extend(slow.map(|s| (s.start.ns(), s.end.ns())));
    out
}

/// Derive phases from the dependency's timeline (see the module docs).
pub fn derive(d: &Dependency, warmup: Time, horizon: Time) -> Vec<ResolvedPhase> {
    derive_all(std::slice::from_ref(d), warmup, horizon)
}

/// Derive phases from several dependencies' timelines: the incident is the union of theirs.
/// It is degraded from the first moment any dependency is (a mode, a slowed replica or a
/// drift at its peak) to the last, ramps from the earliest drift onset and recovers until
/// the last drift is back; with one dependency, [`derive()`].
pub fn derive_all(deps: &[Dependency], warmup: Time, horizon: Time) -> Vec<ResolvedPhase> {
    let episodes: Vec<Episode> =
        deps.iter().filter_map(|d| drift_points(&d.drift).and_then(|p| drift_episode(&p))).collect();
    let mut spans: Vec<(Time, Time)> = deps.iter().flat_map(jumps).collect();
    spans.extend(episodes.iter().map(|e| e.peak));
    let Some(deg0) = spans.iter().map(|s| s.0).min() else { return Vec::new() };
    let deg1 = spans.iter().map(|s| s.1).max().unwrap_or(Time::MAX);
    let ramp0 = episodes.iter().map(|e| e.onset).fold(deg0, Time::min);
    let rec1 = episodes.iter().map(|e| e.back).fold(deg1, Time::max);
    let bounds = [(warmup, ramp0), (ramp0, deg0), (deg0, deg1), (deg1, rec1), (rec1, horizon)];
    DERIVED_NAMES
        .iter()
        .zip(bounds)
        .filter_map(|(name, (a, b))| {
            let (start, end) = (a.max(warmup), b.min(horizon));
            (start < end).then(|| ResolvedPhase { name: name.to_string(), start, end, source: PhaseSource::Derived })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SECOND;

    fn dep(drift: Drift) -> Dependency {
        let text = "(latency: Constant(\"10ms\"))";
        Dependency { drift, ..ron::from_str(text).unwrap() }
    }

    fn spans(p: &[ResolvedPhase]) -> Vec<(&str, u64, u64)> {
        p.iter().map(|p| (p.name.as_str(), p.start / SECOND, p.end / SECOND)).collect()
    }

    #[test]
    fn brownout_drift_gives_five_phases_by_hand() {
        // Ramp up 100..160 s, hold to 400 s, ramp down to 460 s; measured 60..600 s.
        let d = dep(Drift::Brownout { start: Dur::secs(100), ramp: Dur::secs(60), hold: Dur::secs(240), peak: 30.0 });
        let p = derive(&d, 60 * SECOND, 600 * SECOND);
        let want = [
            ("before", 60, 100),
            ("ramp", 100, 160),
            ("degraded", 160, 400),
            ("recovery", 400, 460),
            ("after", 460, 600),
        ];
        assert_eq!(spans(&p), want);
    }

    #[test]
    fn a_step_degrades_to_the_horizon_and_warmup_clips() {
        let d = dep(Drift::Step { at: Dur::secs(30), factor: 5.0 });
        assert_eq!(spans(&derive(&d, 60 * SECOND, 100 * SECOND)), [("degraded", 60, 100)]);
        assert_eq!(spans(&derive(&d, 0, 100 * SECOND)), [("before", 0, 30), ("degraded", 30, 100)]);
    }

    #[test]
    fn a_flat_or_improving_dependency_has_no_phases() {
        assert!(derive(&dep(Drift::None), 0, 100 * SECOND).is_empty());
        assert!(derive(&dep(Drift::Step { at: Dur::secs(5), factor: 0.5 }), 0, 100 * SECOND).is_empty());
    }

    #[test]
    fn modes_widen_the_degraded_span() {
        let mut d = dep(Drift::None);
        d.modes = ron::from_str("[(at: \"20s\", mode: Unavailable), (at: \"50s\", mode: Healthy)]").unwrap();
        assert_eq!(spans(&derive(&d, 0, 100 * SECOND)), [("before", 0, 20), ("degraded", 20, 50), ("after", 50, 100)]);
    }
}
