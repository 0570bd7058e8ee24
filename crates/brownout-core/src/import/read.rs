//! Reading one section of a library's options: the options merged in the library's order,
//! each key checked against the library's list (unknown is an error, known without an
//! equivalent a warning), and typed values read with their positions.

use super::ImportError;
use super::emit::{Field, Imported, Warning};
use super::tree::{Entry, Node, Pos, Val, at_pos, canon};
use crate::engine::{MICROSECOND, MILLISECOND, SECOND, Time};

/// What the importer does with a known option.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Known {
    /// Mapped to a preset field (or read by the importer itself).
    Read,
    /// No equivalent: warned with this reason.
    Warn(&'static str),
}

/// The options of one section (e.g. a resilience4j instance merged over its base config).
pub(crate) struct Section<'a> {
    /// How messages name the section, e.g. `resilience4j.circuitbreaker`.
    pub what: String,
    entries: Vec<&'a Entry>,
}

impl<'a> Section<'a> {
    /// The entries of `layers` merged in order: a later layer's key replaces an earlier one's.
    pub fn merged(what: impl Into<String>, layers: &[&'a Node]) -> Self {
        let mut entries: Vec<&'a Entry> = Vec::new();
        for n in layers {
            for e in n.entries() {
                match entries.iter_mut().find(|o| canon(&o.key) == canon(&e.key)) {
                    Some(o) => *o = e,
                    None => entries.push(e),
                }
            }
        }
        Section { what: what.into(), entries }
    }

    /// Check every key against `known`: an unknown key is an error at the key, a known one
    /// without an equivalent a warning.
    pub fn check(&self, known: &[(&str, Known)], warnings: &mut Vec<Warning>) -> Result<(), ImportError> {
        for e in &self.entries {
            match known.iter().find(|(k, _)| canon(k) == canon(&e.key)) {
                Some((_, Known::Read)) => {}
                Some((_, Known::Warn(why))) => {
                    warnings.push(Warning { at: e.at, key: e.key.clone(), message: why.to_string() });
                }
                None => {
                    let names: Vec<&str> = known.iter().map(|(k, _)| *k).collect();
                    return Err(at_pos(
                        e.at,
                        format!("unknown {} option \"{}\" (known: {})", self.what, e.key, names.join(", ")),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The entry for `key` (relaxed: case, `-` and `_` ignored).
    pub fn get(&self, key: &str) -> Option<&'a Entry> {
        self.entries.iter().find(|e| canon(&e.key) == canon(key)).copied()
    }
}

/// A layer's fields being built, citing `out`'s file.
pub(crate) struct Fields<'o> {
    pub out: &'o Imported,
    pub fields: Vec<Field>,
}

impl<'o> Fields<'o> {
    pub fn new(out: &'o Imported) -> Self {
        Fields { out, fields: Vec::new() }
    }

    /// Set `name` to `value`, read from `e`.
    pub fn from(&mut self, name: &'static str, value: String, e: &Entry) {
        let origin = self.out.origin(e.at, &e.key);
        self.fields.push(Field { name, value, origin, at: Some(e.value.at) });
    }

    /// Set `name` to `value` for the reason `origin` (a default, a derived value).
    pub fn note(&mut self, name: &'static str, value: String, origin: impl Into<String>) {
        self.fields.push(Field { name, value, origin: origin.into(), at: None });
    }
}

fn wrong(n: &Node, key: &str, want: &str) -> ImportError {
    at_pos(n.at, format!("{key}: expected {want}, found {}", n.kind()))
}

/// Unwrap Envoy's wrapper types (`{value: 10}`).
fn unwrap_value(n: &Node) -> &Node {
    match &n.v {
        Val::Map(es) if es.len() == 1 && es[0].key == "value" => &es[0].value,
        _ => n,
    }
}

/// An integer in `[min, max]` (a quoted number too, as Spring and .NET convert it).
pub(crate) fn int(e: &Entry, min: i64, max: i64) -> Result<i64, ImportError> {
    let n = unwrap_value(&e.value);
    let v = match &n.v {
        Val::Int(i) => *i,
        Val::Str(s) => s.trim().parse().map_err(|_| wrong(n, &e.key, "an integer"))?,
        _ => return Err(wrong(n, &e.key, "an integer")),
    };
    if v < min || v > max {
        return Err(at_pos(n.at, format!("{}: {v} is out of range: expected {min} to {max}", e.key)));
    }
    Ok(v)
}

/// A finite number accepted by `ok`, which says the range in `range`.
pub(crate) fn num(e: &Entry, ok: impl Fn(f64) -> bool, range: &str) -> Result<f64, ImportError> {
    let n = unwrap_value(&e.value);
    let v = match &n.v {
        Val::Int(i) => *i as f64,
        Val::Float(f) => *f,
        Val::Str(s) => s.trim().parse().map_err(|_| wrong(n, &e.key, "a number"))?,
        _ => return Err(wrong(n, &e.key, "a number")),
    };
    if !v.is_finite() || !ok(v) {
        return Err(at_pos(n.at, format!("{}: {v} is out of range: expected {range}", e.key)));
    }
    Ok(v)
}

/// A boolean (`true`/`false`, also quoted).
pub(crate) fn boolean(e: &Entry) -> Result<bool, ImportError> {
    match &e.value.v {
        Val::Bool(b) => Ok(*b),
        Val::Str(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        Val::Str(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(wrong(&e.value, &e.key, "true or false")),
    }
}

/// A string.
pub(crate) fn string(e: &Entry) -> Result<&str, ImportError> {
    match &e.value.v {
        Val::Str(s) => Ok(s),
        _ => Err(wrong(&e.value, &e.key, "a string")),
    }
}

/// One of `choices` (compared ignoring case, `-` and `_`), as its index.
pub(crate) fn choice(e: &Entry, choices: &[&str]) -> Result<usize, ImportError> {
    let s = string(e)?;
    choices
        .iter()
        .position(|c| canon(c) == canon(s))
        .ok_or_else(|| at_pos(e.value.at, format!("{}: \"{s}\" is not one of {}", e.key, choices.join(", "))))
}

/// The most nanoseconds a duration may have (as scenario durations: about 31 years).
const MAX_NS: f64 = 1.0e18;

fn checked_ns(ns: f64, n: &Node, key: &str) -> Result<Time, ImportError> {
    if !ns.is_finite() || !(0.0..=MAX_NS).contains(&ns) {
        return Err(at_pos(n.at, format!("{key}: the duration is negative or too large (at most ~31 years)")));
    }
    Ok(ns.round() as Time)
}

/// A Spring Boot duration: `500ms`, `10s` (units ns, us, ms, s, m, h, d), ISO-8601 `PT10S`,
/// or a bare number of milliseconds.
pub(crate) fn spring_duration(e: &Entry) -> Result<Time, ImportError> {
    let n = &e.value;
    let bad = || {
        at_pos(n.at, format!("{}: expected a duration such as \"500ms\", \"10s\", \"PT10S\" or milliseconds", e.key))
    };
    let s = match &n.v {
        Val::Int(i) if *i >= 0 => return checked_ns(*i as f64 * MILLISECOND as f64, n, &e.key),
        Val::Str(s) => s.trim(),
        _ => return Err(bad()),
    };
    if s.starts_with(['P', 'p']) {
        return iso8601(s).map_or_else(|| Err(bad()), |ns| checked_ns(ns, n, &e.key));
    }
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num.parse().map_err(|_| bad())?;
    let unit_ns = match unit {
        "" | "ms" => MILLISECOND as f64,
        "ns" => 1.0,
        "us" => MICROSECOND as f64,
        "s" => SECOND as f64,
        "m" => 60.0 * SECOND as f64,
        "h" => 3600.0 * SECOND as f64,
        "d" => 86_400.0 * SECOND as f64,
        _ => return Err(bad()),
    };
    checked_ns(value * unit_ns, n, &e.key)
}

/// `java.time.Duration.parse`: `PnDTnHnMn.nS`, in nanoseconds.
fn iso8601(s: &str) -> Option<f64> {
    let upper = s.to_ascii_uppercase();
    let rest = upper.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((d, t)) => (d, t),
        None => (rest, ""),
    };
    let mut total = 0.0;
    if !days.is_empty() {
        total += days.strip_suffix('D')?.parse::<f64>().ok()? * 86_400.0;
    }
    let mut num = String::new();
    for c in time.chars() {
        let scale = match c {
            'H' => 3600.0,
            'M' => 60.0,
            'S' => 1.0,
            _ => {
                num.push(c);
                continue;
            }
        };
        total += num.parse::<f64>().ok()? * scale;
        num.clear();
    }
    (num.is_empty() && (rest.len() > 1 || !days.is_empty())).then_some(total * SECOND as f64)
}

/// An Envoy (protobuf JSON) duration: `"5s"`, `"0.25s"`, or `{seconds: 5, nanos: 0}`.
pub(crate) fn envoy_duration(e: &Entry) -> Result<Time, ImportError> {
    let n = &e.value;
    let bad = || at_pos(n.at, format!("{}: expected a duration such as \"5s\", \"0.25s\" or {{seconds: 5}}", e.key));
    match &n.v {
        Val::Str(s) => {
            let secs: f64 = s.trim().strip_suffix('s').ok_or_else(bad)?.parse().map_err(|_| bad())?;
            checked_ns(secs * SECOND as f64, n, &e.key)
        }
        Val::Map(entries) => {
            let mut ns = 0.0;
            for x in entries {
                let scale = match x.key.as_str() {
                    "seconds" => SECOND as f64,
                    "nanos" => 1.0,
                    _ => return Err(at_pos(x.at, format!("{}: a duration has only seconds and nanos", e.key))),
                };
                ns += int(x, 0, i64::MAX)? as f64 * scale;
            }
            checked_ns(ns, n, &e.key)
        }
        _ => Err(bad()),
    }
}

/// An Istio duration as Istio's resources take it: Go's form, number-unit pairs (`"5m"`,
/// `"1h30m"`, `"0.5s"`; units ns, us, µs, ms, s, m, h), or Envoy's `{seconds, nanos}`.
pub(crate) fn go_duration(e: &Entry) -> Result<Time, ImportError> {
    let n = &e.value;
    let Val::Str(s) = &n.v else { return envoy_duration(e) };
    let bad = || at_pos(n.at, format!("{}: expected a duration such as \"5s\", \"5m\" or \"1h30m\"", e.key));
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut ns = 0.0;
    while !rest.is_empty() {
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
        let value: f64 = rest[..num_end].parse().map_err(|_| bad())?;
        let after = &rest[num_end..];
        let unit_end = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let scale = match &after[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" => MICROSECOND as f64,
            "ms" => MILLISECOND as f64,
            "s" => SECOND as f64,
            "m" => 60.0 * SECOND as f64,
            "h" => 3600.0 * SECOND as f64,
            _ => return Err(bad()),
        };
        ns += value * scale;
        rest = &after[unit_end..];
    }
    checked_ns(ns, n, &e.key)
}

/// A .NET `TimeSpan` as its configuration binder parses it: `[d.]hh:mm[:ss[.fffffff]]`, or a
/// whole number of days.
pub(crate) fn timespan(e: &Entry) -> Result<Time, ImportError> {
    let n = &e.value;
    let bad = || at_pos(n.at, format!("{}: expected a TimeSpan such as \"00:00:30\" or \"00:00:00.500\"", e.key));
    let s = string(e).map_err(|_| bad())?.trim();
    let parts: Vec<&str> = s.split(':').collect();
    let secs = match parts.as_slice() {
        [d] => d.parse::<u64>().map_err(|_| bad())? as f64 * 86_400.0,
        [h, m] | [h, m, _] => {
            let (days, hours) = match h.split_once('.') {
                Some((d, h)) => (d.parse::<u64>().map_err(|_| bad())?, h),
                None => (0, *h),
            };
            let hours: u64 = hours.parse().map_err(|_| bad())?;
            let mins: u64 = m.parse().map_err(|_| bad())?;
            let secs: f64 = parts.get(2).map_or(Ok(0.0), |x| x.parse()).map_err(|_| bad())?;
            if hours > 23 || mins > 59 || !(0.0..60.0).contains(&secs) {
                return Err(bad());
            }
            days as f64 * 86_400.0 + hours as f64 * 3600.0 + mins as f64 * 60.0 + secs
        }
        _ => return Err(bad()),
    };
    checked_ns(secs * SECOND as f64, n, &e.key)
}

/// A duration in milliseconds given as a number (opossum's options).
pub(crate) fn millis(e: &Entry) -> Result<Time, ImportError> {
    let ms = num(e, |v| v >= 0.0, "a non-negative number of milliseconds")?;
    checked_ns(ms * MILLISECOND as f64, &e.value, &e.key)
}

/// The position of `e`'s value.
pub(crate) fn value_at(e: &Entry) -> Pos {
    e.value.at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::tree::yaml;

    fn entry(v: &str) -> Entry {
        let (n, _) = yaml(&format!("k: {v}\n")).unwrap();
        n.entries()[0].clone()
    }

    #[test]
    fn spring_durations_as_spring_reads_them() {
        let ms = |v: &str| spring_duration(&entry(v)).map(|ns| ns as f64 / MILLISECOND as f64);
        assert_eq!(ms("500ms"), Ok(500.0));
        assert_eq!(ms("10s"), Ok(10_000.0));
        assert_eq!(ms("2m"), Ok(120_000.0));
        assert_eq!(ms("1d"), Ok(86_400_000.0));
        assert_eq!(ms("250"), Ok(250.0)); // bare number: milliseconds
        assert_eq!(ms("\"250\""), Ok(250.0));
        assert_eq!(ms("PT10S"), Ok(10_000.0));
        assert_eq!(ms("PT0.5S"), Ok(500.0));
        assert_eq!(ms("PT1M30S"), Ok(90_000.0));
        assert_eq!(ms("P1DT1H"), Ok(90_000_000.0));
        assert!(ms("1.5s").is_err()); // Spring's simple style takes whole numbers only
        assert!(ms("10 seconds").is_err());
        assert!(ms("PT").is_err());
    }

    #[test]
    fn envoy_durations_and_wrappers() {
        assert_eq!(envoy_duration(&entry("5s")), Ok(5 * SECOND));
        assert_eq!(envoy_duration(&entry("0.25s")), Ok(250 * MILLISECOND));
        assert_eq!(envoy_duration(&entry("{seconds: 1, nanos: 500000000}")), Ok(1_500 * MILLISECOND));
        assert!(envoy_duration(&entry("5")).is_err());
        assert_eq!(int(&entry("{value: 10}"), 0, 100), Ok(10));
        let e = int(&entry("{value: 101}"), 0, 100).unwrap_err();
        assert_eq!((e.line, e.col), (1, 12));
    }

    #[test]
    fn istio_durations_as_go_reads_them() {
        assert_eq!(go_duration(&entry("5m")), Ok(300 * SECOND));
        assert_eq!(go_duration(&entry("1h30m")), Ok(5_400 * SECOND));
        assert_eq!(go_duration(&entry("0.5s")), Ok(500 * MILLISECOND));
        assert_eq!(go_duration(&entry("{seconds: 2}")), Ok(2 * SECOND));
        assert!(go_duration(&entry("5")).is_err());
        assert!(go_duration(&entry("5x")).is_err());
    }

    #[test]
    fn timespans_as_dotnet_reads_them() {
        assert_eq!(timespan(&entry("\"00:00:30\"")), Ok(30 * SECOND));
        assert_eq!(timespan(&entry("\"00:00:00.500\"")), Ok(500 * MILLISECOND));
        assert_eq!(timespan(&entry("\"1.02:00:00\"")), Ok((86_400 + 7_200) * SECOND));
        assert_eq!(timespan(&entry("\"00:05\"")), Ok(300 * SECOND));
        assert!(timespan(&entry("\"00:61:00\"")).is_err());
        assert!(timespan(&entry("30")).is_err());
    }
}
