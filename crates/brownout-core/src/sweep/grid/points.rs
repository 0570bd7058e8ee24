//! A plan's points: the grid product or seeded samples of the axes, the linked axes' values
//! at every point, and each point's validated scenario.

use std::path::Path;

use serde_json::Value;

use super::super::path;
use super::super::spec::{Method, Sample};
use super::axis::Resolved;
use super::{AxisInfo, Kind, Located, err};
use crate::engine::{counter_f64, counter_u64, label_hash};
use crate::model::Model;
use crate::scenario::{self, Scenario};

/// Points of the grid product, first axis slowest. Each axis value is checked alone first,
/// so a bad value is blamed on its axis; except the values a link reads: those make a valid
/// scenario only with the linked values of their point (a share of 0.95 with its partner at
/// `1 - share`, not beside the base's partner), so `link_points` checks them point by point.
pub(super) fn grid_points(
    axes: &[Resolved],
    base: &Value,
    base_path: &Path,
    links: &[super::super::link::Link],
) -> Result<(Vec<AxisInfo>, Vec<Vec<f64>>), Located> {
    let mut infos = Vec::new();
    let mut points: Vec<Vec<f64>> = vec![Vec::new()];
    for a in axes {
        if a.axis.link.is_some() {
            // Filled in per point by `link_points`.
            points.iter_mut().for_each(|p| p.push(f64::NAN));
            infos.push(a.info(Vec::new()));
            continue;
        }
        let values = a.grid_values()?;
        let read_by_link = links.iter().any(|l| l.reads.contains(&a.index));
        for (k, (shown, v)) in values.iter().enumerate().filter(|_| !read_by_link) {
            let mut s = base.clone();
            *path::get_mut(&mut s, &a.steps).map_err(|m| a.fail(m))? = v.clone();
            let unit = a.unit().unwrap_or("");
            to_scenario(s).map_err(|m| {
                let (_, msg) = a.fail(format!("value {shown}{unit}: {m} (base {})", base_path.display()));
                (a.value_path(k), msg)
            })?;
        }
        let shown: Vec<f64> = values.iter().map(|v| v.0).collect();
        points = points.iter().flat_map(|p| shown.iter().map(move |x| [p.as_slice(), &[*x]].concat())).collect();
        infos.push(a.info(shown));
    }
    Ok((infos, points))
}

/// Seeded samples: Latin hypercube strata or independent uniforms, per axis.
pub(super) fn sample_points(
    axes: &[Resolved],
    s: &Sample,
    seed: u64,
) -> Result<(Vec<AxisInfo>, Vec<Vec<f64>>), Located> {
    let n = s.samples as usize;
    if n == 0 {
        return Err(err("sample.samples", "samples must be >= 1"));
    }
    let seed = s.seed.unwrap_or(seed);
    let mut points = vec![Vec::with_capacity(axes.len()); n];
    let mut infos = Vec::new();
    for a in axes {
        if a.axis.link.is_some() {
            points.iter_mut().for_each(|p| p.push(f64::NAN));
            infos.push(a.info(Vec::new()));
            continue;
        }
        let r = a.axis.range.as_ref().ok_or_else(|| a.fail("sampling needs a range, not values".into()))?;
        let label = label_hash(&format!("sweep/sample/{}", a.axis.name));
        let strata = permutation(n, seed, label_hash(&format!("sweep/lhs/{}", a.axis.name)));
        let mut shown = Vec::with_capacity(n);
        for (i, p) in points.iter_mut().enumerate() {
            let u = counter_f64(seed, label, i as u64, 0);
            let u = match s.method {
                Method::Uniform => u,
                Method::LatinHypercube => (strata[i] as f64 + u) / n as f64,
            };
            let x = a.finish(a.along(r, u)?)?.0;
            p.push(x);
            shown.push(x);
        }
        infos.push(a.info(shown));
    }
    Ok((infos, points))
}

/// A seeded Fisher-Yates shuffle of 0..n from counter draws (modulo bias < n / 2^64).
fn permutation(n: usize, seed: u64, label: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for j in (1..n).rev() {
        let k = (counter_u64(seed, label, j as u64, 0) % (j as u64 + 1)) as usize;
        p.swap(j, k);
    }
    p
}

fn to_scenario(v: Value) -> Result<Scenario, String> {
    let s: Scenario = serde_json::from_value(v).map_err(|e| e.to_string())?;
    scenario::validate(&s).map_err(|e| e.message)?;
    Ok(s)
}

/// The scenario of one point, validated and built once so data files are checked too.
pub(super) fn point_scenario(
    axes: &[Resolved],
    base: &Value,
    point: &[f64],
    seed: u64,
    dir: &Path,
) -> Result<Scenario, Located> {
    let mut v = base.clone();
    for (a, x) in axes.iter().zip(point) {
        *path::get_mut(&mut v, &a.steps).map_err(|m| a.fail(m))? = a.finish(*x)?.1;
    }
    let describe = || {
        let params: Vec<String> = axes.iter().zip(point).map(|(a, x)| format!("{}={x}", a.axis.name)).collect();
        params.join(", ")
    };
    let s = to_scenario(v).map_err(|m| err("axes", format!("point ({}): {m}", describe())))?;
    Model::build(&s, seed, dir).map_err(|m| err("axes", format!("point ({}): {m}", describe())))?;
    Ok(s)
}

pub(super) fn resolved_kinds(axes: &[Resolved]) -> Vec<Kind> {
    axes.iter().map(|a| a.kind).collect()
}

/// Every axis's link, parsed and in evaluation order.
pub(super) fn parse_links(axes: &[Resolved]) -> Result<Vec<super::super::link::Link>, Located> {
    let names: Vec<&str> = axes.iter().map(|a| a.axis.name.as_str()).collect();
    let texts: Vec<Option<&str>> = axes.iter().map(|a| a.axis.link.as_deref()).collect();
    super::super::link::parse_all(&names, &texts)
        .map_err(|(i, m)| err(format!("axes[{i}].link"), format!("axis \"{}\": {m}", names[i])))
}

/// Compute the linked axes' values at every point (rounded as the axis's kind demands) and
/// check each point, its links applied, on the base scenario, so a link giving a bad value,
/// or a point whose linked values do not fit together, is blamed on the link with the point
/// it happened at.
pub(super) fn link_points(
    axes: &[Resolved],
    base: &Value,
    links: &[super::super::link::Link],
    infos: &mut [AxisInfo],
    points: &mut [Vec<f64>],
) -> Result<(), Located> {
    let names: Vec<&str> = axes.iter().map(|a| a.axis.name.as_str()).collect();
    let at = |i: usize| format!("axes[{i}].link");
    if links.is_empty() {
        return Ok(());
    }
    let here = |p: &[f64]| {
        let shown: Vec<String> =
            names.iter().zip(p).filter(|(_, x)| !x.is_nan()).map(|(n, x)| format!("{n}={x}")).collect();
        shown.join(", ")
    };
    for p in points.iter_mut() {
        super::super::link::apply(links, &names, p)
            .map_err(|(i, m)| err(at(i), format!("axis \"{}\" at point ({}): {m}", names[i], here(p))))?;
        for l in links {
            p[l.axis] = axes[l.axis].finish(p[l.axis]).map_err(|(_, m)| err(at(l.axis), m))?.0;
        }
        // Values no link reads were checked alone: a point the scenario refuses is the doing of
        // a link or of the values it reads, so it is blamed on the first link, naming the point.
        let mut s = base.clone();
        for (a, x) in axes.iter().zip(p.iter()) {
            *path::get_mut(&mut s, &a.steps).map_err(|m| a.fail(m))? = a.finish(*x)?.1;
        }
        let first = links[0].axis;
        to_scenario(s).map_err(|m| err(at(first), format!("axis \"{}\" at point ({}): {m}", names[first], here(p))))?;
    }
    for l in links {
        let mut values: Vec<f64> = points.iter().map(|p| p[l.axis]).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        infos[l.axis].values = values;
    }
    Ok(())
}
