//! SLO arithmetic (docs/slo.md): a class's burn rate and error budget used over a period, and
//! when multi-window burn-rate alerts would first fire on the time series. Plain numbers in and
//! out: the scenario's `slo` is read by `model::slo`.

use super::WindowRow;
use super::summary::{ClassSummary, SloFigures};

/// The figures of `c` over a period of `period_s` measured seconds, for an SLO asking
/// `target` of the requests in time over `window_s` seconds: bad = requests - in_time,
/// burn rate = (bad / requests) / (1 - target), budget used = burn rate * period / window.
/// Both have no value (NaN) without requests.
pub fn figures(c: &ClassSummary, target: f64, window_s: f64, period_s: f64) -> SloFigures {
    if c.requests == 0 {
        return SloFigures { burn_rate: f64::NAN, budget_used: f64::NAN };
    }
    let bad = c.requests.saturating_sub(c.in_time) as f64;
    let burn_rate = bad / c.requests as f64 / (1.0 - target);
    SloFigures { burn_rate, budget_used: burn_rate * period_s / window_s }
}

/// How long the whole window's budget lasts at `burn_rate`, seconds: `window / burn rate`
/// (NaN without a burn rate, infinite at 0).
pub fn exhausted_after_s(burn_rate: f64, window_s: f64) -> f64 {
    if burn_rate.is_nan() { f64::NAN } else { window_s / burn_rate }
}

/// One alert rule in seconds: fires where the burn over the last `long_s` and over the last
/// `short_s` both exceed `burn`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AlertRule {
    /// Name.
    pub name: String,
    /// Burn-rate threshold.
    pub burn: f64,
    /// Long look-back, seconds.
    pub long_s: f64,
    /// Short look-back, seconds.
    pub short_s: f64,
}

/// The time series of one (policy set, class) as the alerts read it: per window after warm-up,
/// its end (seconds), the requests that finished in it and those of them that were bad
/// (finished, not answered within the deadline).
pub fn window_counts(
    rows: &[WindowRow],
    policy: &str,
    class: &str,
    warmup_s: f64,
    window_s: f64,
    horizon_s: f64,
) -> Vec<(f64, u64, u64)> {
    let mut out: Vec<(f64, u64, u64)> = rows
        .iter()
        .filter(|r| r.policy == policy && r.class == class && r.t_s + 1e-9 >= warmup_s)
        .map(|r| {
            let end = (r.t_s + window_s).min(horizon_s);
            let total = r.ok + r.error + r.timeout + r.rejected + r.short_circuited + r.fallback;
            // goodput_per_s is the window's answers within the deadline over its length.
            let good = (r.goodput_per_s * (end - r.t_s)).round().max(0.0) as u64;
            (end, total, total.saturating_sub(good))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// When `rule` first fires on `windows` ([`window_counts`]), seconds (the end of the window at
/// which both look-backs burn faster than the rule's threshold), or `None`. A look-back holds
/// the windows that end within it, at most back to warm-up; one without requests does not burn.
pub fn first_firing(windows: &[(f64, u64, u64)], target: f64, rule: &AlertRule) -> Option<f64> {
    let burn = |k: usize, look: f64| {
        let from = windows[k].0 - look;
        let (mut n, mut bad) = (0u64, 0u64);
        for w in windows[..=k].iter().rev().take_while(|w| w.0 > from + 1e-9) {
            n += w.1;
            bad += w.2;
        }
        if n == 0 { 0.0 } else { bad as f64 / n as f64 / (1.0 - target) }
    };
    (0..windows.len())
        .find(|&k| burn(k, rule.long_s) > rule.burn && burn(k, rule.short_s) > rule.burn)
        .map(|k| windows[k].0)
}
