//! Sensitivity for `brownout tune`: none is estimated. A Nelder-Mead search leaves no grid (its
//! candidates move every knob at once), and one-at-a-time steps around its best candidate
//! measure a slope where the search stopped because the slope is flat: at an interior optimum
//! every knob would read as irrelevant. The report says so and names the sweep that answers
//! the question (docs/tune.md, "Sensitivity").

use super::Space;
use crate::decide::recommendation::Recommendation;

/// The report's sentence: why a tune shows no sensitivity, and the sweep axes (one per knob,
/// around the recommended setting) whose `sweep.json` and report hold it.
pub fn needs_a_sweep(space: &Space, r: &Recommendation) -> String {
    let at = r.recommended.as_ref().map(|c| &c.setting);
    let axes: Vec<String> = space
        .dims
        .iter()
        .map(|d| {
            let around = at.and_then(|s| s.get(&d.knob.name)).map_or(String::new(), |v| format!(", around {v}"));
            format!("{} ({}{around})", d.knob.name, d.knob.path)
        })
        .collect();
    format!(
        "Sensitivity needs a sweep: a simplex search has no grid, and steps around its best candidate \
         would measure the flat top of the optimum. Run `brownout sweep` with one axis per knob: {}; \
         its report ranks what moves the objective and each constraint (tornado charts).",
        axes.join("; ")
    )
}
