//! Units shared by scenarios, policies and metrics: [`Dur`], a duration as written in
//! scenario files (`"200ms"`, `"6s"`, `"30m"`, `"1.5s"`, `"250us"`), and [`Micros`], a
//! histogram value. A leaf module, so that policies need not import the scenario.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::{MICROSECOND, MILLISECOND, MINUTE, SECOND, Time, fmt_time};

/// A non-negative duration in nanoseconds, parsed from a string with a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Dur(pub Time);

impl Dur {
    /// The duration in nanoseconds.
    pub fn ns(self) -> Time {
        self.0
    }
    /// From milliseconds.
    pub const fn ms(ms: u64) -> Self {
        Dur(ms * MILLISECOND)
    }
    /// From seconds.
    pub const fn secs(s: u64) -> Self {
        Dur(s * SECOND)
    }
}

/// Microseconds: the unit of the HDR histograms' values (`metrics::UsHist`), kept
/// apart from nanosecond [`Time`] so the two are never compared bare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Micros(pub u64);

impl Micros {
    /// Whole microseconds in `t` (rounded down).
    pub const fn from_time(t: Time) -> Self {
        Micros(t / MICROSECOND)
    }
    /// As virtual time (nanoseconds).
    pub const fn to_time(self) -> Time {
        self.0 * MICROSECOND
    }
}

/// Why a duration as written is refused by [`parse_duration`]. Its `Display` is the message
/// a scenario error shows (after the value's file, line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationError {
    /// Written with a minus sign; `hint` is the same duration without it when that parses.
    Negative {
        /// The duration as written (trimmed).
        written: String,
        /// The duration without its sign, when that one is valid.
        hint: Option<String>,
    },
    /// A number with no unit after it.
    NoUnit {
        /// The duration as written (trimmed).
        written: String,
    },
    /// A unit that is not one of ns, us, ms, s, m (min), h, d.
    UnknownUnit {
        /// The duration as written (trimmed).
        written: String,
        /// The unit as written.
        unit: String,
    },
    /// The part before the unit is no number.
    NotANumber {
        /// The duration as written (trimmed).
        written: String,
    },
    /// Beyond about 31 years (10^18 ns), or not finite.
    TooLarge {
        /// The duration as written (trimmed).
        written: String,
    },
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Negative { written, hint } => {
                write!(f, "duration \"{written}\" is negative: durations must be >= 0")?;
                match hint {
                    Some(h) => write!(f, ", e.g. \"{h}\""),
                    None => Ok(()),
                }
            }
            DurationError::NoUnit { written } => {
                write!(f, "duration \"{written}\" has no unit: expected e.g. \"200ms\", \"6s\", \"30m\"")
            }
            DurationError::UnknownUnit { written, unit } => {
                write!(f, "duration \"{written}\" has unknown unit \"{unit}\": expected ns, us, ms, s, m, h or d")
            }
            DurationError::NotANumber { written } => {
                write!(f, "duration \"{written}\" does not start with a number: expected e.g. \"200ms\"")
            }
            DurationError::TooLarge { written } => write!(f, "duration \"{written}\" is too large (at most ~31 years)"),
        }
    }
}

impl std::error::Error for DurationError {}

/// Parse `"<number><unit>"` with unit one of ns, us, ms, s, m, h, d.
pub fn parse_duration(s: &str) -> Result<Time, DurationError> {
    let s = s.trim();
    let written = || s.to_string();
    if let Some(rest) = s.strip_prefix('-') {
        let hint = parse_duration(rest).is_ok().then(|| rest.trim().to_string());
        return Err(DurationError::Negative { written: written(), hint });
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| DurationError::NoUnit { written: written() })?;
    let (num, unit) = s.split_at(split);
    let unit_ns: f64 = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => MICROSECOND as f64,
        "ms" => MILLISECOND as f64,
        "s" => SECOND as f64,
        "m" | "min" => MINUTE as f64,
        "h" => 3600.0 * SECOND as f64,
        // Days: an SLO's window ("30d").
        "d" => 86_400.0 * SECOND as f64,
        other => return Err(DurationError::UnknownUnit { written: written(), unit: other.to_string() }),
    };
    let value: f64 = num.parse().map_err(|_| DurationError::NotANumber { written: written() })?;
    let ns = value * unit_ns;
    if !ns.is_finite() || ns > 1.0e18 {
        return Err(DurationError::TooLarge { written: written() });
    }
    Ok(ns.round() as Time)
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string such as \"200ms\", \"6s\" or \"30m\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                parse_duration(v).map(Dur).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&fmt_time(self.0))
    }
}

// The reference documentation names the type `Dur` and says how one is written.
impl schemars::JsonSchema for Dur {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Dur".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[0-9.]+(ns|us|µs|ms|s|m|min|h)$",
            "description": "A duration: a non-negative number and a unit, one of ns, us, ms, s, m (minutes), h or d (days), e.g. \"200ms\", \"1.5s\", \"30m\"; at most about 31 years.",
        })
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&fmt_time(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_printed_duration_reads_back_exactly() {
        // A tuned timeout lands on any nanosecond; the recommended stack must paste back to
        // the same value, and read as milliseconds, not "96687500ns".
        assert_eq!(crate::engine::fmt_time(96_687_500), "96.6875ms");
        assert_eq!(crate::engine::fmt_time(1_000_001), "1.000001ms");
        assert_eq!(crate::engine::fmt_time(999), "0.000999ms");
        assert_eq!(crate::engine::fmt_time(MINUTE + 1), "60000000001ns");
        let mut t: u64 = 1;
        for _ in 0..2_000 {
            // Spread over 1 ns .. 2 minutes, odd nanosecond counts included.
            t = t.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let d = t % (2 * MINUTE);
            assert_eq!(parse_duration(&crate::engine::fmt_time(d)), Ok(d), "{}", crate::engine::fmt_time(d));
        }
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("200ms"), Ok(200 * MILLISECOND));
        assert_eq!(parse_duration("6s"), Ok(6 * SECOND));
        assert_eq!(parse_duration("30m"), Ok(30 * MINUTE));
        assert_eq!(parse_duration("1.5s"), Ok(1_500 * MILLISECOND));
        assert_eq!(parse_duration("250us"), Ok(250 * MICROSECOND));
        assert!(parse_duration("5").unwrap_err().to_string().contains("no unit"));
        assert_eq!(
            parse_duration("5 parsecs"),
            Err(DurationError::UnknownUnit { written: "5 parsecs".into(), unit: "parsecs".into() })
        );
        assert!(parse_duration("5 parsecs").unwrap_err().to_string().contains("unknown unit"));
        assert!(matches!(parse_duration("1.2.3s"), Err(DurationError::NotANumber { .. })));
        // 10^11 h = 3.6 * 10^23 ns, past the 10^18 ns cap.
        assert!(matches!(parse_duration("100000000000h"), Err(DurationError::TooLarge { .. })));
        assert!(parse_duration("-5s").is_err());
        // Issue 32: a minus sign is not an unknown unit.
        assert_eq!(
            parse_duration("-5ms").unwrap_err().to_string(),
            "duration \"-5ms\" is negative: durations must be >= 0, e.g. \"5ms\""
        );
        assert!(parse_duration("-x").unwrap_err().to_string().ends_with("must be >= 0"));
    }

    #[test]
    fn round_trips_through_display() {
        for t in [0, 5 * MILLISECOND, 6 * SECOND, 30 * MINUTE, 1_500 * MILLISECOND] {
            assert_eq!(parse_duration(&fmt_time(t)), Ok(t));
        }
    }
}
