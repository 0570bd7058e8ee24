//! Recovery settings: how the per-window in-time ratio is judged after a phase ends, and when a
//! window counts as degraded.

use serde::{Deserialize, Serialize};

/// How recovery after each phase and time degraded are judged (see docs/metastable.md). Every
/// figure is taken from the per-window in-time ratio of a class: the in-time requests among
/// those that arrived in the window `[k·window, (k+1)·window)`, known once the window's end plus
/// the class's deadline has passed (a window not known by the horizon is left out; so is a
/// window without arrivals, or one starting before the warm-up ends).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Recovery {
    /// A window after the phase is back when its in-time ratio is at least the level before
    /// the phase minus this (a fraction in 0..1; default 0.02, two percentage points).
    pub tolerance: f64,
    /// The class has recovered once this many consecutive windows with arrivals are back
    /// (>= 1; default 3); `recovery_s` runs from the phase's end to the first of them.
    pub hold: u32,
    /// The level before the phase is the in-time ratio over the requests that arrived in the
    /// last `baseline` judged windows that end by the phase's start and lie in no other phase
    /// (the derived `before` phase excepted: it is the healthy span before the episode), so
    /// adjacent phases (`degraded` after `ramp`) are measured against the level before the
    /// episode (>= 1; default 10). A phase with no such window has no level before it, so no
    /// recovery.
    pub baseline: u32,
    /// A window is degraded when its in-time ratio is below this (a fraction in 0..1; default
    /// 0.9): `degraded_fraction` is the share of such windows, `degraded_entries` the number of
    /// times the class went from a window that is not degraded into one that is.
    pub degraded_below: f64,
}

impl Default for Recovery {
    fn default() -> Self {
        Recovery { tolerance: 0.02, hold: 3, baseline: 10, degraded_below: 0.9 }
    }
}

impl Recovery {
    /// The defaults: left out of a saved scenario, so files and sweep plans from before the
    /// section existed keep their bytes.
    pub fn is_default(&self) -> bool {
        *self == Recovery::default()
    }

    /// Checks each value; the error is (field, message).
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        if !(0.0..=1.0).contains(&self.tolerance) {
            return Err(("tolerance", format!("recovery.tolerance must lie in 0..=1, not {}", self.tolerance)));
        }
        if self.hold == 0 {
            return Err(("hold", "recovery.hold must be >= 1 window".into()));
        }
        if self.baseline == 0 {
            return Err(("baseline", "recovery.baseline must be >= 1 window".into()));
        }
        if !(0.0..=1.0).contains(&self.degraded_below) {
            let m = format!("recovery.degraded_below must lie in 0..=1, not {}", self.degraded_below);
            return Err(("degraded_below", m));
        }
        Ok(())
    }
}
