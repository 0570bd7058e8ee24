//! Why a policy last changed its state, with the figures of that decision.
//!
//! A stateful policy keeps one [`Why`] (a few words, no allocation) that it overwrites at each
//! transition; [`Policy::reason`](super::Policy::reason) formats it only when the world logs a
//! change, so the figures cost nothing when no event log is kept.

use super::breaker::window::Counts;
use crate::engine::Time;

/// The figures of a policy's last state change.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Why {
    /// Nothing decided yet (a fresh policy).
    #[default]
    Fresh,
    /// A rate window's verdict: `trial` for half-open trial calls, else the closed window.
    Rates {
        /// Half-open trial calls (true) or the closed-state window (false).
        trial: bool,
        /// The window's counts at the decision.
        counts: Counts,
        /// Failure percentage that trips (`>=`).
        failure_pct: f64,
        /// Slow-call percentage that trips (`>=`), when there is a slow criterion.
        slow_pct: Option<f64>,
    },
    /// The break ended after `open_for` ns: trial calls may go.
    BreakOver {
        /// How long the breaker was open (ns).
        open_for: Time,
    },
    /// Half-open for `waited` ns without a verdict.
    HalfOpenExpired {
        /// How long the breaker was half-open (ns).
        waited: Time,
    },
    /// `failures` consecutive failures reached `threshold`.
    Consecutive {
        /// Consecutive failures counted.
        failures: u32,
        /// The configured threshold.
        threshold: u32,
    },
    /// A half-open trial call failed (or took longer than `slow`, when set).
    TrialFailed {
        /// The trial's duration (ns), when it failed by being slow.
        slow: Option<(Time, Time)>,
    },
    /// The half-open trial was not executed (an inner layer refused it).
    TrialCancelled,
    /// A measure over a window passed its threshold (strictly, as Sentinel judges).
    Exceeded {
        /// What was measured ("slow-call ratio", "error ratio", "errors").
        what: &'static str,
        /// The measured value.
        value: f64,
        /// The threshold it exceeded.
        threshold: f64,
        /// Calls in the window.
        calls: u64,
    },
    /// `ok` of `needed` trial calls succeeded.
    TrialsPassed {
        /// Successful trials.
        ok: u32,
        /// Trials needed.
        needed: u32,
    },
    /// The latency breaker's trials all finished within its threshold. It judges a trial by
    /// its duration alone, so one that an attempt timeout ended early counts as fast.
    TrialsWithin {
        /// Trials that finished within the threshold.
        ok: u32,
        /// Trials needed.
        needed: u32,
        /// The threshold (ns).
        threshold: Time,
        /// Of the `ok` trials, those an attempt timeout ended.
        timeouts: u32,
        /// How long the last of those ran (ns).
        last_timeout: Time,
    },
    /// A latency percentile over (or back under) its threshold.
    Latency {
        /// The percentile judged, in (0, 1].
        percentile: f64,
        /// The measured value (ns).
        value: Time,
        /// The threshold (ns).
        threshold: Time,
        /// Consecutive windows over the threshold (0 when under).
        windows: u32,
    },
    /// A probe answered successfully within the threshold: recovered.
    ProbeOk {
        /// The probe's duration (ns).
        took: Time,
        /// The threshold (ns).
        threshold: Time,
    },
    /// A concurrency limit moved: `name` limit `from -> to` because of `cause`.
    Limit {
        /// The limiter's name (AIMD, Vegas, ...).
        name: &'static str,
        /// The limit before.
        from: f64,
        /// The limit after.
        to: f64,
        /// What moved it, with its figures when it has some.
        cause: Cause,
    },
}

/// What moved a concurrency limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cause {
    /// A drop (error, timeout or a latency over the threshold): multiplicative decrease.
    Drop,
    /// A success: additive increase.
    Success,
    /// A queue estimate (Vegas): `queue` calls queued against the bounds `alpha`, `beta`.
    Queue {
        /// Estimated queue (limit x (1 - min RTT / RTT)).
        queue: f64,
        /// Lower bound (grow below it).
        alpha: f64,
        /// Upper bound (shrink above it).
        beta: f64,
    },
    /// A gradient of min (or long-term) RTT over the sampled RTT.
    Gradient {
        /// The gradient, in (0, 1] or capped.
        gradient: f64,
        /// The reference RTT (ns).
        reference: Time,
        /// The sampled RTT (ns).
        sample: Time,
    },
    /// A minimum-RTT measurement window began (the limit drops to its minimum meanwhile).
    MinRttStart,
    /// A minimum-RTT measurement window ended with `min_rtt` (ns): the limit is restored.
    MinRttEnd {
        /// The measured minimum RTT (ns).
        min_rtt: Time,
    },
}

impl Why {
    /// The reason as a sentence with its numbers.
    pub fn text(&self) -> String {
        match *self {
            Why::Fresh => "initial state".into(),
            Why::Rates { trial, counts, failure_pct, slow_pct } => rates(trial, counts, failure_pct, slow_pct),
            Why::BreakOver { open_for } => format!("open for {}: half-open trial", dur(open_for)),
            Why::HalfOpenExpired { waited } => format!("half-open for {} without a verdict", dur(waited)),
            Why::Consecutive { failures, threshold } => {
                format!("{failures} consecutive failures >= {threshold}")
            }
            Why::TrialFailed { slow: None } => "half-open trial failed".into(),
            Why::TrialFailed { slow: Some((took, thr)) } => {
                format!("half-open trial took {} > {}", dur(took), dur(thr))
            }
            Why::TrialCancelled => "half-open trial was not executed".into(),
            Why::Exceeded { what, value, threshold, calls } => {
                format!("{what} {} over {calls} calls > {}", fig(value), fig(threshold))
            }
            Why::TrialsPassed { ok, needed } => format!("{ok} of {needed} half-open trials succeeded"),
            Why::TrialsWithin { ok, needed, threshold, timeouts, last_timeout } => {
                let head = format!("{ok} of {needed} half-open trials within {}", dur(threshold));
                match timeouts {
                    0 => head,
                    1 => format!("{head} (1 ended in {} by its attempt timeout, counted as fast)", dur(last_timeout)),
                    n => format!(
                        "{head} ({n} ended by their attempt timeout, the last in {}, counted as fast)",
                        dur(last_timeout)
                    ),
                }
            }
            Why::Latency { percentile, value, threshold, windows } => {
                let p = pname(percentile);
                if windows == 0 {
                    format!("{p} {} <= {}", dur(value), dur(threshold))
                } else {
                    let s = if windows == 1 { "" } else { "s" };
                    format!("{p} {} > {} for {windows} window{s}", dur(value), dur(threshold))
                }
            }
            Why::ProbeOk { took, threshold } => {
                format!("probe answered in {} <= {}: recovered", dur(took), dur(threshold))
            }
            Why::Limit { name, from, to, cause } => {
                let head = format!("{name} limit {} -> {}", num(from), num(to));
                match cause {
                    Cause::Drop => format!("{head} after a drop"),
                    Cause::Success => format!("{head} after a success"),
                    Cause::Queue { queue, alpha, beta } => {
                        format!("{head}: queue estimate {} (alpha {}, beta {})", num(queue), num(alpha), num(beta))
                    }
                    Cause::Gradient { gradient, reference, sample } => format!(
                        "{head}: gradient {gradient:.2} (reference RTT {} / sampled RTT {})",
                        dur(reference),
                        dur(sample)
                    ),
                    Cause::MinRttStart => format!("{head}: measuring the minimum RTT"),
                    Cause::MinRttEnd { min_rtt } => format!("{head}: minimum RTT measured at {}", dur(min_rtt)),
                }
            }
        }
    }
}

fn rates(trial: bool, c: Counts, failure_pct: f64, slow_pct: Option<f64>) -> String {
    let over = if trial { "trial calls" } else { "calls" };
    let n = c.total;
    let (f, s) = (c.failure_pct(), c.slow_pct());
    if c.total > 0 && f >= failure_pct {
        return format!("failure rate {} % over {n} {over} >= {} %", num(f), num(failure_pct));
    }
    if let Some(t) = slow_pct.filter(|&t| c.total > 0 && s >= t) {
        return format!("slow-call rate {} % over {n} {over} >= {} %", num(s), num(t));
    }
    let slow = slow_pct.map_or(String::new(), |t| format!(", slow-call rate {} % < {} %", num(s), num(t)));
    format!("failure rate {} % over {n} {over} < {} %{slow}", num(f), num(failure_pct))
}

/// "p95" for 0.95, "p99.9" for 0.999.
fn pname(p: f64) -> String {
    let v = p * 100.0;
    if (v - v.round()).abs() < 1e-9 { format!("p{}", v.round() as i64) } else { format!("p{}", trim(v)) }
}

/// A figure with at most one decimal and thousands separators: 62, 12.5, 1,312.
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let r = (v * 10.0).round() / 10.0;
    let whole = r.trunc().abs() as u64;
    let tenth = ((r.abs() - whole as f64) * 10.0).round() as u64;
    let sign = if r < 0.0 { "-" } else { "" };
    let frac = if tenth == 0 { String::new() } else { format!(".{tenth}") };
    format!("{sign}{}{frac}", grouped(whole))
}

/// A ratio or count: up to two decimals, no trailing zeros.
fn fig(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A duration in ms below 10 s ("1,312 ms"), else in s ("30 s").
pub(crate) fn dur(ns: Time) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 10_000.0 { format!("{} ms", num(ms)) } else { format!("{} s", num(ms / 1000.0)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MILLISECOND, SECOND};

    #[test]
    fn numbers_read_as_the_issue_writes_them() {
        assert_eq!(num(1312.0), "1,312");
        assert_eq!(num(62.5), "62.5");
        assert_eq!(num(1_000_000.0), "1,000,000");
        assert_eq!(dur(1312 * MILLISECOND), "1,312 ms");
        assert_eq!(dur(30 * SECOND), "30 s");
        assert_eq!(pname(0.95), "p95");
        assert_eq!(pname(0.999), "p99.9");
    }

    #[test]
    fn a_rate_verdict_names_the_rule_that_decided() {
        let c = Counts { total: 10, failed: 6, slow: 1 };
        let open = Why::Rates { trial: false, counts: c, failure_pct: 50.0, slow_pct: Some(100.0) };
        assert_eq!(open.text(), "failure rate 60 % over 10 calls >= 50 %");
        let c = Counts { total: 4, failed: 0, slow: 3 };
        let slow = Why::Rates { trial: true, counts: c, failure_pct: 50.0, slow_pct: Some(75.0) };
        assert_eq!(slow.text(), "slow-call rate 75 % over 4 trial calls >= 75 %");
        let c = Counts { total: 4, failed: 1, slow: 0 };
        let close = Why::Rates { trial: true, counts: c, failure_pct: 50.0, slow_pct: None };
        assert_eq!(close.text(), "failure rate 25 % over 4 trial calls < 50 %");
    }

    #[test]
    fn limits_and_latencies_carry_their_figures() {
        let w = Why::Limit { name: "AIMD", from: 40.0, to: 36.0, cause: Cause::Drop };
        assert_eq!(w.text(), "AIMD limit 40 -> 36 after a drop");
        let l = Why::Latency { percentile: 0.95, value: 1312 * MILLISECOND, threshold: SECOND, windows: 3 };
        assert_eq!(l.text(), "p95 1,312 ms > 1,000 ms for 3 windows");
        assert_eq!(Why::BreakOver { open_for: 30 * SECOND }.text(), "open for 30 s: half-open trial");
    }
}
