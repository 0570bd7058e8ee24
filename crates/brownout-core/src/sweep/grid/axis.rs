//! One axis resolved against the base scenario: its path, the kind of value it sets
//! (duration, integer, float), and how written values become reported and scenario values.

use serde_json::Value;

use super::super::path::{self, Step};
use super::super::spec::{Axis, AxisValue, Range, Scale};
use super::{AxisInfo, Kind, Located, err};
use crate::engine::fmt_time;
use crate::scenario::parse_duration;

fn unit_ns(index: usize, axis: &Axis) -> Result<f64, Located> {
    let unit = axis.unit.as_deref().unwrap_or("ms");
    parse_duration(&format!("1{unit}")).map(|ns| ns as f64).map_err(|_| {
        err(
            format!("axes[{index}].unit"),
            format!("axis \"{}\": unknown unit \"{unit}\" (ns, us, ms, s, m or h)", axis.name),
        )
    })
}

/// An axis resolved against the base scenario.
pub(super) struct Resolved<'a> {
    /// Index in the spec's `axes`.
    pub(super) index: usize,
    pub(super) axis: &'a Axis,
    pub(super) steps: Vec<Step>,
    pub(super) kind: Kind,
}

pub(super) fn resolve_axis<'a>(index: usize, axis: &'a Axis, base: &Value) -> Result<Resolved<'a>, Located> {
    let at = || format!("axes[{index}].path");
    let steps = path::parse(&axis.path).map_err(|m| err(at(), format!("axis \"{}\": {m}", axis.name)))?;
    let mut probe = base.clone();
    let current = path::get_mut(&mut probe, &steps)
        .map_err(|m| err(at(), format!("axis \"{}\": bad path \"{}\": {m}", axis.name, axis.path)))?;
    let written: Vec<&AxisValue> = match &axis.range {
        Some(r) => vec![&r.from, &r.to],
        None => axis.values.iter().collect(),
    };
    let texts = written.iter().any(|v| matches!(v, AxisValue::Text(_)));
    let integral = written.iter().all(|v| matches!(v, AxisValue::Num(x) if x.fract() == 0.0));
    let kind = match &*current {
        Value::String(s) if parse_duration(s).is_ok() => Kind::Duration { unit_ns: unit_ns(index, axis)? },
        Value::Number(n) if n.is_f64() => Kind::Float,
        Value::Number(_) => Kind::Integer,
        Value::Null if texts || axis.unit.is_some() => Kind::Duration { unit_ns: unit_ns(index, axis)? },
        Value::Null if integral && axis.range.is_none() && axis.link.is_none() => Kind::Integer,
        Value::Null => Kind::Float,
        other => {
            return Err(err(
                at(),
                format!(
                    "axis \"{}\": \"{}\" is {}, not a number or a duration",
                    axis.name,
                    axis.path,
                    match other {
                        Value::String(s) => format!("the text \"{s}\""),
                        Value::Bool(_) => "a boolean".into(),
                        Value::Array(_) => "a list (index it, e.g. [0])".into(),
                        _ => "an object (name a field or variant inside it)".into(),
                    }
                ),
            ));
        }
    };
    if axis.link.is_some() && (!axis.values.is_empty() || axis.range.is_some()) {
        let msg = format!("axis \"{}\": a linked axis takes its values from `link`: drop values and range", axis.name);
        return Err(err(format!("axes[{index}].link"), msg));
    }
    if axis.link.is_none() && axis.values.is_empty() == axis.range.is_none() {
        return Err(err(format!("axes[{index}]"), format!("axis \"{}\": give either values or a range", axis.name)));
    }
    Ok(Resolved { index, axis, steps, kind })
}

impl Resolved<'_> {
    pub(super) fn info(&self, values: Vec<f64>) -> AxisInfo {
        AxisInfo {
            name: self.axis.name.clone(),
            path: self.axis.path.clone(),
            values,
            role: self.axis.role,
            link: self.axis.link.clone(),
            unit: self.unit().map(str::to_string),
        }
    }

    /// The unit reported values are in: the spec's (default `ms`) on a duration, none on a
    /// plain number. Part of the plan's hash, rightly: the same numbers in another unit are
    /// other scenarios.
    pub(super) fn unit(&self) -> Option<&str> {
        match self.kind {
            Kind::Duration { .. } => Some(self.axis.unit.as_deref().unwrap_or("ms")),
            Kind::Integer | Kind::Float => None,
        }
    }

    pub(super) fn fail(&self, msg: String) -> Located {
        err(format!("axes[{}]", self.index), format!("axis \"{}\": {msg}", self.axis.name))
    }

    /// Where grid value `k` is written: its entry in `values`, or the axis's `range`.
    pub(super) fn value_path(&self, k: usize) -> String {
        match self.axis.range {
            Some(_) => format!("axes[{}].range", self.index),
            None => format!("axes[{}].values[{k}]", self.index),
        }
    }

    /// A written value in the axis's reporting unit.
    pub(super) fn raw(&self, v: &AxisValue) -> Result<f64, Located> {
        match (self.kind, v) {
            (Kind::Duration { unit_ns }, AxisValue::Text(s)) => {
                parse_duration(s).map(|ns| ns as f64 / unit_ns).map_err(|m| self.fail(m.to_string()))
            }
            (Kind::Duration { .. }, AxisValue::Num(x)) if self.axis.unit.is_none() => {
                Err(self.fail(format!("{x} is a plain number on a duration: write \"{x}ms\" or give the axis a unit")))
            }
            (_, AxisValue::Num(x)) if x.is_finite() => Ok(*x),
            (_, AxisValue::Num(x)) => Err(self.fail(format!("{x} is not a finite number"))),
            (_, AxisValue::Text(s)) => {
                Err(self.fail(format!("\"{s}\" is a text but \"{}\" holds a number", self.axis.path)))
            }
        }
    }

    /// A value in axis units to (reported value, scenario value). Integers and durations
    /// are rounded (durations to the nanosecond), so the reported value is the one used.
    pub(super) fn finish(&self, x: f64) -> Result<(f64, Value), Located> {
        match self.kind {
            Kind::Duration { unit_ns } => {
                let ns = (x * unit_ns).round();
                if !(0.0..=1.0e18).contains(&ns) {
                    return Err(self.fail(format!("duration {x} is negative or too large")));
                }
                Ok((ns / unit_ns, Value::String(fmt_time(ns as u64))))
            }
            Kind::Integer => {
                let n = x.round();
                if !(-9.0e15..=9.0e15).contains(&n) {
                    return Err(self.fail(format!("{x} is out of range")));
                }
                Ok((n, Value::from(n as i64)))
            }
            Kind::Float => Ok((x, Value::from(x))),
        }
    }

    /// Position `u` in [0, 1] along the range, on its scale.
    pub(super) fn along(&self, r: &Range, u: f64) -> Result<f64, Located> {
        let (a, b) = (self.raw(&r.from)?, self.raw(&r.to)?);
        Ok(match r.scale {
            Scale::Linear => a + (b - a) * u,
            Scale::Log if a > 0.0 && b > 0.0 => a * (b / a).powf(u),
            Scale::Log => return Err(self.fail("a Log range needs both ends > 0".into())),
        })
    }

    /// The grid values (reported, scenario value), duplicates after rounding removed.
    pub(super) fn grid_values(&self) -> Result<Vec<(f64, Value)>, Located> {
        let mut out: Vec<(f64, Value)> = Vec::new();
        if let Some(r) = &self.axis.range {
            if r.steps < 2 {
                let msg = format!("axis \"{}\": a range needs steps >= 2 (the number of values)", self.axis.name);
                return Err(err(format!("axes[{}].range.steps", self.index), msg));
            }
            for i in 0..r.steps {
                let x = self.along(r, f64::from(i) / f64::from(r.steps - 1))?;
                let v = self.finish(x)?;
                if out.last().is_none_or(|l| l.0 != v.0) {
                    out.push(v);
                }
            }
        } else {
            for (k, w) in self.axis.values.iter().enumerate() {
                let here = |(_, m): Located| (self.value_path(k), m);
                let x = self.raw(w).map_err(here)?;
                if self.kind == Kind::Integer && x.fract() != 0.0 {
                    return Err(here(self.fail(format!("{x} is not a whole number"))));
                }
                out.push(self.finish(x).map_err(here)?);
            }
        }
        Ok(out)
    }
}
