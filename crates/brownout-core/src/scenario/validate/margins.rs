//! `statistics.margins`: each key a catalogue metric, each value a margin the one comparison
//! rule can use.

use std::collections::BTreeMap;

use super::{Invalid, bad};
use crate::metrics::catalogue;

/// Each `statistics.margins` key names a catalogue metric (`metric`, or `class/metric` for a
/// per-class metric of a known class) and each value is a finite margin >= 0.
pub(super) fn validate(
    st: &crate::scenario::types::Statistics,
    classes: &BTreeMap<&str, usize>,
) -> Result<(), Invalid> {
    use catalogue::Scope;
    for (key, &v) in &st.margins {
        let at = format!("statistics.margins.{key}");
        match key.split_once('/') {
            Some((class, name)) => {
                if catalogue::find(Scope::Class, name).is_none() {
                    return Err(bad(
                        at,
                        format!(
                            "statistics.margins: unknown per-class metric \"{name}\" (expected one of: {})",
                            catalogue::names(Scope::Class)
                        ),
                    ));
                }
                if !classes.contains_key(class) {
                    return Err(bad(at, format!("statistics.margins: unknown class \"{class}\" in \"{key}\"")));
                }
            }
            None if catalogue::find(Scope::Class, key).is_none() && catalogue::find(Scope::Run, key).is_none() => {
                return Err(bad(
                    at,
                    format!(
                        "statistics.margins: unknown metric \"{key}\" (expected one of: {}, {}; or CLASS/METRIC)",
                        catalogue::names(Scope::Class),
                        catalogue::names(Scope::Run)
                    ),
                ));
            }
            None => {}
        }
        if !(v.is_finite() && v >= 0.0) {
            return Err(bad(at, format!("statistics.margins: the margin of \"{key}\" must be finite and >= 0")));
        }
    }
    Ok(())
}
