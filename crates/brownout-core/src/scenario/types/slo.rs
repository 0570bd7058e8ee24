//! A class's service-level objective (docs/slo.md).

use super::*;

/// A service-level objective on in-time success: at least `target` of the class's requests
/// are in time, over a rolling `window`. The summary gives the burn rate and the share of the
/// window's error budget each phase and the run consumed; the report says when each of the
/// `alerts` would first have fired on the time series.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// The objective: the fraction of requests in time, strictly between 0 and 1 (0.999).
    pub target: f64,
    /// The SLO's window, whose error budget is `(1 - target)` of its requests (`"30d"`).
    pub window: Dur,
    /// Multi-window burn-rate alerts evaluated on the time series (default: the SRE
    /// workbook's page at 14.4 over 1 h and 5 min, and ticket at 6 over 6 h and 30 min).
    #[serde(default = "default_alerts")]
    pub alerts: Vec<BurnAlert>,
}

/// A multi-window burn-rate alert: it fires at the end of the first window where the burn
/// rate over the last `long` and over the last `short` both exceed `burn`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BurnAlert {
    /// Its name in the report (`"page"`).
    pub name: String,
    /// The burn rate it fires above (> 0): 1 spends the budget exactly over the SLO window.
    pub burn: f64,
    /// The long look-back (> 0; runs are short: over a look-back longer than the time since
    /// warm-up, the burn is taken since warm-up).
    pub long: Dur,
    /// The short look-back (> 0, at most `long`), which makes the alert stop soon after the
    /// burn does.
    pub short: Dur,
}

/// The SRE workbook's (chapter 5) page and ticket alerts for a 30-day SLO.
pub fn default_alerts() -> Vec<BurnAlert> {
    let alert = |name: &str, burn: f64, long_min: u64, short_min: u64| BurnAlert {
        name: name.into(),
        burn,
        long: Dur(long_min * crate::engine::MINUTE),
        short: Dur(short_min * crate::engine::MINUTE),
    };
    vec![alert("page", 14.4, 60, 5), alert("ticket", 6.0, 360, 30)]
}

impl Slo {
    /// Check every value; the error is (path under `slo`, message).
    pub fn check(&self) -> Result<(), (String, String)> {
        if !(self.target > 0.0 && self.target < 1.0) {
            return Err((
                "target".into(),
                format!("slo.target must lie strictly between 0 and 1, got {}", self.target),
            ));
        }
        if self.window.ns() == 0 {
            return Err(("window".into(), "slo.window must be > 0".into()));
        }
        for (k, a) in self.alerts.iter().enumerate() {
            let at = |f: &str| format!("alerts[{k}].{f}");
            if a.name.trim().is_empty() {
                return Err((at("name"), "slo alert name must not be empty".into()));
            }
            if self.alerts[..k].iter().any(|b| b.name == a.name) {
                return Err((at("name"), format!("slo alert \"{}\" is defined twice", a.name)));
            }
            if !(a.burn.is_finite() && a.burn > 0.0) {
                return Err((at("burn"), format!("slo alert burn must be > 0, got {}", a.burn)));
            }
            if a.short.ns() == 0 || a.short.ns() > a.long.ns() {
                return Err((at("short"), "slo alert short must be > 0 and at most long".into()));
            }
        }
        Ok(())
    }
}
