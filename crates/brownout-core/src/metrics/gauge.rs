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
    /// Highest level seen after `from`.
    pub peak: f64,
    /// Lowest level seen after `from`.
    pub low: f64,
}

impl Gauge {
    /// A gauge starting at `value`, integrating from `from`, saturated at `cap`.
    pub fn new(value: f64, from: Time, cap: f64) -> Self {
        Self { value, last: 0, from, integral: 0.0, saturated_ns: 0, cap, peak: value, low: value }
    }

    #[inline]
    fn advance(&mut self, now: Time) {
        let start = self.last.max(self.from);
        if now > start {
            let dt = now - start;
            self.integral += self.value * super::to_f64(dt);
            if self.value >= self.cap {
                self.saturated_ns += dt;
            }
        }
        self.last = now;
    }

    /// Change the level at `now`.
    #[inline]
    pub fn set(&mut self, now: Time, value: f64) {
        self.advance(now);
        self.value = value;
        if now >= self.from {
            // Plain comparisons rather than `f64::max`/`min`, whose NaN handling costs extra
            // instructions: the result is the same, a NaN level leaves both unchanged either way.
            if value > self.peak {
                self.peak = value;
            }
            if value < self.low {
                self.low = value;
            }
        }
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
        assert_eq!(g.peak, 2.0);
    }

    #[test]
    fn warmup_is_excluded() {
        let mut g = Gauge::new(5.0, 100, 10.0);
        g.set(150, 1.0);
        assert_eq!(g.integral(200), 5.0 * 50.0 + 50.0);
    }
}
