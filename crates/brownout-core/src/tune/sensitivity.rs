//! Sensitivity for `brownout tune`: a tornado over each knob's whole range. A slope at the
//! optimum would be meaningless (the search stopped because the top is flat there), but the
//! swing of the objective and of each constraint as one knob goes from its range's low end to
//! its high end, the other knobs at the recommended setting, says which knob matters. These
//! runs come after the search, outside its budget, with the tune's replications and seeds
//! (common random numbers); a setting the search already evaluated is not run again. They are
//! a deterministic function of the recommendation, so `--resume` recomputes them and gets the
//! same figures. The rows are the sweep's ([`crate::sweep::sensitivity`]): the same width,
//! the same rule for "beyond noise", the same table and chart.

use super::{Evaluation, SettingError, Space, key};
use crate::decide::recommendation::Recommendation;
use crate::decide::{ObjectiveRef, Samples, Sense, measure_of};
use crate::sweep::sensitivity::{Mover, Sensitivity, row, sort_rows};

/// What the sensitivity runs gave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TuneSensitivity {
    /// The objective's (when it is a metric), then each constraint's; empty without a
    /// recommendation.
    pub metrics: Vec<Sensitivity>,
    /// Runs made for it (settings the search had not evaluated, times the replications).
    pub runs: u64,
    /// Settings evaluated for it, the search's included.
    pub settings: usize,
}

/// The settings to evaluate: for each knob its range's low and high end (an integer knob's
/// integer ends, [`super::space::Dim::at`]), the other knobs at `at`.
pub fn settings(space: &Space, at: &[f64]) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = Vec::new();
    for (i, d) in space.dims.iter().enumerate() {
        for end in [d.at(0.0), d.at(1.0)] {
            let mut v = at.to_vec();
            v[i] = end;
            if !out.iter().any(|o| key(o) == key(&v)) && key(&v) != key(at) {
                out.push(v);
            }
        }
    }
    out
}

/// The tornado of `r`'s recommended setting: `measure` runs a setting's replications (the
/// search's `Space::measure`); settings in `done` are taken from there.
pub fn sensitivity(
    space: &Space,
    r: &Recommendation,
    done: &[Evaluation],
    measure: &mut dyn FnMut(&[f64]) -> Result<Samples, SettingError>,
) -> Result<TuneSensitivity, SettingError> {
    let Some(c) = &r.recommended else { return Ok(TuneSensitivity::default()) };
    let at: Vec<f64> = space.dims.iter().map(|d| c.setting.get(&d.knob.name).copied().unwrap_or(f64::NAN)).collect();
    let mut known: Vec<(Vec<f64>, Samples)> = done.iter().map(|e| (e.values.clone(), e.samples.clone())).collect();
    let mut runs = 0u64;
    let mut sample = |v: &[f64], known: &mut Vec<(Vec<f64>, Samples)>| -> Result<Samples, SettingError> {
        if let Some((_, s)) = known.iter().find(|(x, _)| key(x) == key(v)) {
            return Ok(s.clone());
        }
        let s = measure(v)?;
        runs += u64::from(space.spec.replications);
        known.push((v.to_vec(), s.clone()));
        Ok(s)
    };
    let anchor = sample(&at, &mut known)?;
    let mut ends: Vec<(Samples, Samples)> = Vec::new();
    for (i, d) in space.dims.iter().enumerate() {
        let mut lo = at.clone();
        lo[i] = d.at(0.0);
        let mut hi = at.clone();
        hi[i] = d.at(1.0);
        ends.push((sample(&lo, &mut known)?, sample(&hi, &mut known)?));
    }
    let d = &space.spec.decide;
    let margins = space.base.margins();
    // (metric, role, which figure of the samples: None the objective, Some(k) constraint k).
    let mut wanted: Vec<(String, &str, Option<usize>)> = Vec::new();
    if let Some((_, o)) = Sense::of(d)
        && let Ok(ObjectiveRef::Metric(m)) = ObjectiveRef::parse(o)
    {
        wanted.push((m.path(), "objective", None));
    }
    for (k, con) in d.subject_to.iter().enumerate() {
        if let Ok(m) = measure_of(con).map(|m| m.path())
            && !wanted.iter().any(|w| w.0 == m)
        {
            wanted.push((m, "constraint", Some(k)));
        }
    }
    let pick = |s: &Samples, which: Option<usize>| -> Vec<f64> {
        match which {
            None => s.objective.clone(),
            Some(k) => s.constraints.get(k).cloned().unwrap_or_default(),
        }
    };
    let metrics = wanted
        .into_iter()
        .map(|(metric, role, which)| {
            let margin = margins.of_path(&metric);
            let mut rows: Vec<_> = space
                .dims
                .iter()
                .enumerate()
                .map(|(i, dim)| {
                    // Low end, the recommended setting, high end, in value order, each once.
                    let mut steps: Vec<(f64, Vec<f64>)> = vec![
                        (dim.at(0.0), pick(&ends[i].0, which)),
                        (at[i], pick(&anchor, which)),
                        (dim.at(1.0), pick(&ends[i].1, which)),
                    ];
                    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
                    steps.dedup_by(|a, b| a.0.to_bits() == b.0.to_bits());
                    let labels = steps.iter().map(|(x, _)| format!("{x}")).collect();
                    let sets = steps.into_iter().map(|(_, s)| s).collect();
                    row(&dim.knob.name, Mover::Decision, Vec::new(), labels, sets, margin)
                })
                .collect();
            sort_rows(&mut rows);
            Sensitivity {
                metric,
                role: role.to_string(),
                policy: space.spec.policy.clone(),
                anchor: c.setting.clone(),
                anchor_mean: crate::stats::mean_ci95(&pick(&anchor, which)).mean,
                held: "the other knobs at the recommended setting; each knob at its range's low and high end".into(),
                rows,
            }
        })
        .collect();
    Ok(TuneSensitivity { metrics, runs, settings: 1 + settings(space, &at).len() })
}
