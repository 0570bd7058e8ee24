//! Time-weighted gauges: mean, peak and time at capacity of a level that changes at events.

use crate::engine::Time;

/// A level over time, integrated from `from` on (the end of warm-up).
#[derive(Debug, Clone, Copy, Default)]
pub struct Gauge {
    /// Current level.
    pub value: f64,
    last: Time,
    from: Time,
    integral: f64,
    saturated_ns: Time,
    cap: f64,
    /// Highest level held from `from` on (-inf until the span has begun).
    peak: f64,
    /// Lowest level held from `from` on (+inf until the span has begun).
    low: f64,
    /// `value` is already among the extremes (it was set from `from` on, or held into the
    /// span): the next `advance` need not look at it again.
    seen: bool,
}

impl Gauge {
    /// A gauge starting at `value`, integrating from `from`, saturated at `cap`.
    pub fn new(value: f64, from: Time, cap: f64) -> Self {
        Self {
            value,
            last: 0,
            from,
            integral: 0.0,
            saturated_ns: 0,
            cap,
            peak: f64::NEG_INFINITY,
            low: f64::INFINITY,
            seen: false,
        }
    }

    /// Set the level before the run starts (nothing is integrated or seen yet): several
    /// sources that make up one level (each instance's limit) set it as one sum, so the sums
    /// part of the way there are never seen as extremes.
    pub fn start_at(&mut self, value: f64) {
        debug_assert!(self.last == 0 && self.integral == 0.0, "a starting level is set before any change");
        self.value = value;
        self.seen = false;
    }

    /// Hold `value` from now on without a change at a time (a level copied from a gauge that
    /// saw the changes): like a starting level, it is yet to be seen.
    pub fn hold(&mut self, value: f64) {
        self.value = value;
        self.seen = false;
    }

    /// Include `value` in the extremes. Plain comparisons rather than `f64::max`/`min`, whose
    /// NaN handling costs extra instructions: a NaN level leaves both unchanged either way.
    #[inline]
    fn see(&mut self, value: f64) {
        if value > self.peak {
            self.peak = value;
        }
        if value < self.low {
            self.low = value;
        }
    }

    /// Highest level held from `from` up to `now`, including the level already held at `from`
    /// (a level taken before the span and held into it is the span's too).
    pub fn peak(&mut self, now: Time) -> f64 {
        self.advance(now);
        if self.peak == f64::NEG_INFINITY { self.value } else { self.peak }
    }

    /// Lowest level held from `from` up to `now` (see [`Gauge::peak`]).
    pub fn low(&mut self, now: Time) -> f64 {
        self.advance(now);
        if self.low == f64::INFINITY { self.value } else { self.low }
    }

    #[inline]
    fn advance(&mut self, now: Time) {
        let start = self.last.max(self.from);
        // The level held over [start, now), a part of the span: one of its extremes
        // candidates, so the level held when the span starts counts before any change (a
        // level set within the span was seen when it was set).
        if now > start && !self.seen {
            self.see(self.value);
            self.seen = true;
        }
        self.accrue(start, now);
        self.last = now;
    }

    /// Integrate the level held over [start, now), a part of the span.
    #[inline(always)]
    fn accrue(&mut self, start: Time, now: Time) {
        if now > start {
            let dt = now - start;
            self.integral += self.value * super::to_f64(dt);
            if self.value >= self.cap {
                self.saturated_ns += dt;
            }
        }
    }

    /// Change the level at `now`.
    #[inline]
    pub fn set(&mut self, now: Time, value: f64) {
        if self.seen {
            // The level was set or held within the span, so `last` is past `from` (and so is
            // `now`): no clamp to the span's start, and the level is among the extremes
            // already. Every change after warm-up takes this way.
            self.accrue(self.last, now);
            self.last = now;
        } else {
            self.advance(now);
            if now < self.from {
                self.value = value;
                return;
            }
            self.seen = true;
        }
        self.value = value;
        self.see(value);
    }

    /// Add `delta` at `now`.
    pub fn add(&mut self, now: Time, delta: f64) {
        self.set(now, self.value + delta);
    }

    /// Integral of the level (level x ns) up to `now`.
    pub fn integral(&mut self, now: Time) -> f64 {
        self.advance(now);
        self.integral
    }

    /// Nanoseconds at or above capacity up to `now`.
    pub fn saturated(&mut self, now: Time) -> Time {
        self.advance(now);
        self.saturated_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_saturation_by_hand() {
        // Level 0 on [0,10), 2 on [10,30), 1 on [30,40): integral 40 + 10 = 50 over 40.
        let mut g = Gauge::new(0.0, 0, 2.0);
        g.set(10, 2.0);
        g.set(30, 1.0);
        assert_eq!(g.integral(40), 50.0);
        assert_eq!(g.saturated(40), 20);
        assert_eq!(g.peak(40), 2.0);
    }

    #[test]
    fn the_level_held_when_the_span_starts_is_an_extreme() {
        // Issue 30 item 3. Level 10 from 5, before the span starting at 100; it drops to 9 at
        // 150 and to 0 at 160. Held over the span: 10 on [100,150), 9 on [150,160), 0 after.
        let mut g = Gauge::new(0.0, 100, 10.0);
        g.set(5, 10.0);
        g.set(150, 9.0);
        g.set(160, 0.0);
        assert_eq!((g.peak(200), g.low(200)), (10.0, 0.0));
        assert_eq!(g.saturated(200), 50);
        // A level set before the span and never changed: its only value, both extremes.
        let mut h = Gauge::new(0.0, 100, f64::INFINITY);
        h.set(5, 40.0);
        assert_eq!((h.peak(200), h.low(200)), (40.0, 40.0));
        // A level changed exactly at the span's start held the old value for no time in it.
        let mut k = Gauge::new(0.0, 100, f64::INFINITY);
        k.set(5, 40.0);
        k.set(100, 20.0);
        assert_eq!((k.peak(200), k.low(200)), (20.0, 20.0));
    }

    proptest::proptest! {
        /// The extremes, against their definition: every level set from `from` on, and every
        /// level held for some time within [from, end), taken from the list of changes; with
        /// neither, the level held at the end.
        #[test]
        fn extremes_are_the_levels_held_or_set_in_the_span(
            from in 0u64..50,
            start in 0.0f64..5.0,
            changes in proptest::collection::vec((0u64..10, 0.0f64..5.0), 0..12),
            tail in 0u64..20,
        ) {
            let mut g = Gauge::new(start, from, 3.0);
            // (set at, level), the first level from time 0.
            let mut held = vec![(0u64, start)];
            let mut t = 0;
            for &(dt, v) in &changes {
                t += dt;
                g.set(t, v);
                held.push((t, v));
            }
            let end = t + tail;
            let mut seen: Vec<f64> = Vec::new();
            for (i, &(at, v)) in held.iter().enumerate() {
                let until = held.get(i + 1).map_or(end, |&(next, _)| next.min(end));
                if (i > 0 && at >= from) || at.max(from) < until {
                    seen.push(v);
                }
            }
            let last = held.last().expect("a first level").1;
            let peak = seen.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let low = seen.iter().copied().fold(f64::INFINITY, f64::min);
            let want = if seen.is_empty() { (last, last) } else { (peak, low) };
            proptest::prop_assert_eq!((g.peak(end), g.low(end)), want);
        }
    }

    proptest::proptest! {
        /// Readings between the changes (each moves the gauge's clock without a change, which
        /// may leave it at the span's start with the level held there not yet seen) change no
        /// figure, and the integral and time at capacity are their definitions. Integer levels
        /// and times keep every sum exact.
        #[test]
        fn readings_between_changes_change_no_figure(
            from in 0u64..50,
            start in 0u8..5,
            changes in proptest::collection::vec((0u64..10, 0u8..5, proptest::bool::ANY), 0..12),
            tail in 0u64..20,
        ) {
            let (mut read, mut quiet) = (Gauge::new(f64::from(start), from, 3.0), Gauge::new(f64::from(start), from, 3.0));
            let mut held = vec![(0u64, f64::from(start))];
            let mut t = 0;
            for &(dt, v, reading) in &changes {
                if reading {
                    read.integral(t + dt / 2);
                }
                t += dt;
                read.set(t, f64::from(v));
                quiet.set(t, f64::from(v));
                held.push((t, f64::from(v)));
            }
            let end = t + tail;
            let (mut integral, mut saturated) = (0.0, 0);
            for (i, &(at, v)) in held.iter().enumerate() {
                let until = held.get(i + 1).map_or(end, |&(next, _)| next);
                let dt = until.saturating_sub(at.max(from));
                integral += v * dt as f64;
                saturated += if v >= 3.0 { dt } else { 0 };
            }
            let figures = |g: &mut Gauge| (g.integral(end), g.saturated(end), g.peak(end), g.low(end));
            let want = figures(&mut quiet);
            proptest::prop_assert_eq!(figures(&mut read), want);
            proptest::prop_assert_eq!((want.0, want.1), (integral, saturated));
        }
    }

    #[test]
    fn warmup_is_excluded() {
        let mut g = Gauge::new(5.0, 100, 10.0);
        g.set(150, 1.0);
        assert_eq!(g.integral(200), 5.0 * 50.0 + 50.0);
    }
}
