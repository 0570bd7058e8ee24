//! Integer virtual time in nanoseconds.

/// Virtual time and durations, in nanoseconds. 2^64 ns is about 584 years.
pub type Time = u64;

/// One microsecond in [`Time`] units.
pub const MICROSECOND: Time = 1_000;
/// One millisecond in [`Time`] units.
pub const MILLISECOND: Time = 1_000_000;
/// One second in [`Time`] units.
pub const SECOND: Time = 1_000_000_000;
/// One minute in [`Time`] units.
pub const MINUTE: Time = 60 * SECOND;

/// A time as fractional milliseconds, for reports.
#[inline]
pub fn ms_f64(t: Time) -> f64 {
    t as f64 / MILLISECOND as f64
}

/// A compact human form that reads back exactly: `750ms`, `2s`, `12m`, `250us`; a time
/// below a minute that is no whole number of microseconds (a tuned timeout) in decimal
/// milliseconds, `96.6875ms`, written from the integers, so no digit is invented; longer ones
/// in nanoseconds.
pub fn fmt_time(t: Time) -> String {
    if t == 0 {
        "0s".into()
    } else if t.is_multiple_of(MINUTE) {
        format!("{}m", t / MINUTE)
    } else if t.is_multiple_of(SECOND) {
        format!("{}s", t / SECOND)
    } else if t.is_multiple_of(MILLISECOND) {
        format!("{}ms", t / MILLISECOND)
    } else if t.is_multiple_of(MICROSECOND) {
        format!("{}us", t / MICROSECOND)
    } else if t < MINUTE {
        let frac = format!("{:06}", t % MILLISECOND);
        format!("{}.{}ms", t / MILLISECOND, frac.trim_end_matches('0'))
    } else {
        format!("{t}ns")
    }
}
