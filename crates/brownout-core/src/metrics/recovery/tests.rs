//! The tracker against window sequences worked by hand.

use super::*;

const W: Time = SECOND;

fn rule() -> RecoveryRule {
    RecoveryRule { tolerance: 0.02, hold: 3, baseline: 2, degraded_below: 0.9, first_is_healthy: false }
}

/// Feed one class with deadline 0.5 s: window k gets `offered[k]` arrivals at its start, of
/// which `in_time[k]` finish in time; then judge everything final by `horizon`.
fn feed(t: &mut Tracker, windows: &[(u64, u64)], horizon: Time) {
    for (k, &(offered, in_time)) in windows.iter().enumerate() {
        let at = k as u64 * W;
        for n in 0..offered {
            t.arrival(at, 0);
            if n < in_time {
                t.in_time(at, 0);
            }
        }
        t.tick(at + W);
    }
    t.tick(horizon);
}

#[test]
fn recovery_runs_from_the_phase_end_to_the_first_of_hold_windows_back() {
    // Phase [2 s, 4 s). Before it, windows 0 and 1: 10 of 10 and 9 of 10, level 19/20 = 0.95,
    // back at >= 0.93. After it: window 4 at 0.5 (not back), 5 at 0.95 (back), 6 at 0.4 (the run
    // breaks), 7, 8, 9 at 0.93, 1.0, 0.94 (back three times): recovered at window 7, 7 s - 4 s = 3 s.
    let mut t = Tracker::new(rule(), W, 0, &[W / 2], &[(2 * W, 4 * W)]);
    let w = [(10, 10), (10, 9), (10, 0), (10, 1), (10, 5), (20, 19), (10, 4), (100, 93), (10, 10), (50, 47)];
    feed(&mut t, &w, 10 * W + W / 2);
    let (share, entries, r) = t.phase(0, 0);
    assert_eq!(r.before_in_time_ratio, 0.95);
    assert_eq!(r.recovered, Some(true));
    assert_eq!(r.recovery_s, 3.0);
    // The last three judged windows: (93 + 10 + 47) / (100 + 10 + 50).
    assert_eq!(r.end_in_time_ratio, 150.0 / 160.0);
    // In the phase: windows 2 and 3, both below 0.9; one entry (window 1 was at 0.9, not below).
    assert_eq!((share, entries), (1.0, 1));
    // The whole run: windows 2, 3, 4, 6 below 0.9 of 10; entries at 2 and at 6.
    assert_eq!(t.whole(0), (0.4, 2));
}

#[test]
fn a_window_not_final_at_the_horizon_is_not_judged_and_no_recovery_is_false() {
    // Deadline 0.5 s: at a horizon of 9.4 s, window 8 ([8 s, 9 s)) is not final (9.5 s), so the
    // windows after the phase are 4..=7, never three in a row back.
    let mut t = Tracker::new(rule(), W, 0, &[W / 2], &[(2 * W, 4 * W)]);
    let w = [(10, 10), (10, 10), (10, 0), (10, 0), (10, 10), (10, 2), (10, 10), (10, 10), (10, 10)];
    feed(&mut t, &w, 9 * W + 4 * W / 10);
    let (_, _, r) = t.phase(0, 0);
    assert_eq!(r.recovered, Some(false));
    assert!(r.recovery_s.is_nan());
    assert_eq!(r.end_in_time_ratio, 22.0 / 30.0);
}

#[test]
fn no_level_before_or_no_window_after_gives_no_value_never_zero() {
    // The phase starts at the first window after a warm-up of 1 s: no baseline window.
    let mut t = Tracker::new(rule(), W, W, &[W / 2], &[(W, 2 * W), (3 * W, 6 * W)]);
    feed(&mut t, &[(10, 10), (10, 10), (10, 10), (10, 10), (10, 10), (10, 10)], 6 * W);
    let (_, _, r) = t.phase(0, 0);
    assert_eq!(r.recovered, None, "no level before the phase");
    assert!(r.before_in_time_ratio.is_nan() && r.recovery_s.is_nan());
    // The second phase ends at the horizon: no judged window after it.
    let (_, _, r) = t.phase(0, 1);
    assert_eq!(r.before_in_time_ratio, 1.0);
    assert_eq!(r.recovered, None);
    assert!(r.end_in_time_ratio.is_nan());
}

#[test]
fn windows_without_arrivals_neither_count_nor_break_a_run() {
    let mut t = Tracker::new(RecoveryRule { hold: 2, ..rule() }, W, 0, &[W / 2], &[(W, 2 * W)]);
    // Window 0 gives the level (1.0); 1 is the phase; after it 2 is not back, 3 is empty, 4 is
    // back, 5 is empty, 6 is back: two back in a row from window 4, 4 s - 2 s = 2 s.
    let w = [(10, 10), (10, 0), (10, 0), (0, 0), (10, 10), (0, 0), (10, 10)];
    feed(&mut t, &w, 8 * W);
    let (_, _, r) = t.phase(0, 0);
    assert_eq!((r.recovered, r.recovery_s), (Some(true), 2.0));
    // Judged: windows 0, 1, 2, 4, 6; below 0.9: 1 and 2, one entry.
    assert_eq!(t.whole(0), (0.4, 1));
}

#[test]
fn adjacent_phases_take_the_level_before_the_episode_not_the_phase_before() {
    // Derived-style phases: before [0, 2 s) (healthy), ramp [2, 4 s), degraded [4, 6 s).
    // Windows 0-1 at 1.0, 2-3 at 0.5, 4-5 at 0, then 6-8 at 0.6. The degraded phase's level
    // before is windows 0-1 (1.0), the ramp's windows being in a phase: 0.6 is not back, so
    // no recovery. (Windows 2-3 would give 0.5, and 0.6 would count as recovered at once.)
    let spans = [(0, 2 * W), (2 * W, 4 * W), (4 * W, 6 * W)];
    let healthy = RecoveryRule { first_is_healthy: true, ..rule() };
    let w = [(10, 10), (10, 10), (10, 5), (10, 5), (10, 0), (10, 0), (10, 6), (10, 6), (10, 6)];
    let mut t = Tracker::new(healthy, W, 0, &[W / 2], &spans);
    feed(&mut t, &w, 9 * W + W / 2);
    let (_, _, ramp) = t.phase(0, 1);
    assert_eq!(ramp.before_in_time_ratio, 1.0);
    let (_, _, degraded) = t.phase(0, 2);
    assert_eq!((degraded.before_in_time_ratio, degraded.recovered), (1.0, Some(false)));
    // Written phases are all alike: the first one's windows give no level either.
    let mut t = Tracker::new(rule(), W, 0, &[W / 2], &spans);
    feed(&mut t, &w, 9 * W + W / 2);
    let (_, _, ramp) = t.phase(0, 1);
    assert_eq!(ramp.recovered, None, "no window before the ramp lies outside every phase");
}
