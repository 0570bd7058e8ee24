//! The dependency's latency fits: from a histogram's buckets (Prometheus's
//! `histogram_quantile`) or from quantile series (a log-normal), with the drift per step.

use super::*;

/// One row of the fit report: the step's time (ms from the first sample), and per report
/// quantile the data's value and the fitted shape's (ms; NaN where the data has none).
pub(super) type ReportRow = (u64, Vec<(f64, f64, f64)>);

/// What a latency fit gives: base, drift points, report rows, and the base's source text.
pub(super) type Fit = (Base, Vec<(u64, f64)>, Vec<ReportRow>, String);

/// Prometheus's `histogram_quantile` on one step's cumulative buckets (upper bound in the
/// metric's unit, count), sorted by bound with `+Inf` last: the bucket holding rank q * total,
/// linear within it from the previous bound (0 for the first); in the `+Inf` bucket, the
/// largest finite bound (promql/quantile.go, bucketQuantile).
pub(super) fn bucket_quantile(q: f64, b: &[(f64, f64)]) -> f64 {
    let total = b.last().map_or(0.0, |x| x.1);
    if total <= 0.0 || b.len() < 2 {
        return f64::NAN;
    }
    let rank = q * total;
    let i = b.iter().position(|x| x.1 >= rank).unwrap_or(b.len() - 1);
    if i == b.len() - 1 {
        return b[b.len() - 2].0;
    }
    if i == 0 && b[0].0 <= 0.0 {
        return b[0].0;
    }
    let (start, below) = if i == 0 { (0.0, 0.0) } else { (b[i - 1].0, b[i - 1].1) };
    let (end, count) = (b[i].0, b[i].1 - below);
    if count <= 0.0 {
        return end;
    }
    start + (end - start) * ((rank - below) / count)
}

/// A histogram's buckets per step: for each step time, the (bound, cumulative count) list
/// sorted by bound, summed over the histograms selected; a step with a NaN, a missing bucket
/// or counts that fall as the bound grows is skipped with its reason.
pub(super) fn buckets_per_step(
    ss: &[&Series],
    sel: &Selector,
    step_ms: u64,
    skipped: &mut Vec<Skip>,
) -> Result<BTreeMap<i64, Vec<(f64, f64)>>, CalibrateError> {
    let mut by_le: BTreeMap<u64, (f64, Vec<Values>)> = BTreeMap::new();
    for s in ss {
        let le = &s.labels["le"];
        let bound = match le.as_str() {
            "+Inf" | "Inf" | "inf" => f64::INFINITY,
            x => x.parse::<f64>().map_err(|_| at_series(s, format!("le=\"{le}\" is not a bucket bound")))?,
        };
        if bound.is_nan() {
            return Err(at_series(s, "le=\"NaN\" is not a bucket bound"));
        }
        let key = if bound.is_infinite() { u64::MAX } else { ordered(bound) };
        by_le.entry(key).or_insert_with(|| (bound, Vec::new())).1.push(values(s, step_ms, false, skipped));
    }
    if !by_le.values().any(|(b, _)| b.is_infinite()) {
        return Err(at_series(
            ss[0],
            format!(
                "the histogram {sel} selects has no le=\"+Inf\" bucket, so its total is unknown: select the +Inf bucket too"
            ),
        ));
    }
    if by_le.len() < 2 {
        return Err(at_series(
            ss[0],
            format!("the histogram {sel} selects has only the +Inf bucket: no latency can be read from it"),
        ));
    }
    let name = format!("histogram {sel}");
    let sums: Vec<(f64, BTreeMap<i64, f64>)> =
        by_le.values().map(|(bound, per)| (*bound, summed(per, &format!("{name} le={bound}"), skipped))).collect();
    let times: BTreeSet<i64> = sums.iter().flat_map(|(_, m)| m.keys().copied()).collect();
    let mut out = BTreeMap::new();
    'step: for t in times {
        let mut b = Vec::with_capacity(sums.len());
        for (bound, m) in &sums {
            let Some(v) = m.get(&t) else {
                skipped.push(Skip {
                    series: name.clone(),
                    t_s: t as f64 / 1000.0,
                    reason: format!("bucket le={bound} has no usable sample: step left out"),
                });
                continue 'step;
            };
            b.push((*bound, *v));
        }
        if let Some(w) = b.windows(2).find(|w| w[1].1 < w[0].1) {
            skipped.push(Skip {
                series: name.clone(),
                t_s: t as f64 / 1000.0,
                reason: format!(
                    "buckets not monotonic (le={} counts {}, le={} counts {}): step left out",
                    w[0].0, w[0].1, w[1].0, w[1].1
                ),
            });
            continue;
        }
        if b.last().is_none_or(|x| x.1 <= 0.0) {
            skipped.push(Skip {
                series: name.clone(),
                t_s: t as f64 / 1000.0,
                reason: "no observations in the step".into(),
            });
            continue;
        }
        out.insert(t, b);
    }
    Ok(out)
}

/// An order-keeping key of a finite non-negative bound (and of negatives, sign-folded).
pub(super) fn ordered(x: f64) -> u64 {
    let b = x.to_bits();
    if x.is_sign_negative() { !b } else { b | (1 << 63) }
}

/// The histogram fit: the quiet steps' buckets summed give the base distribution, each step's
/// median over the base median its drift factor. Bounds are taken as seconds (Prometheus's
/// base unit, `_seconds` histograms) unless the name says `_milliseconds` or `_ms`.
pub(super) fn fit_histogram(
    ss: &[&Series],
    sel: &Selector,
    step_ms: u64,
    t0: i64,
    quiet_end: i64,
    skipped: &mut Vec<Skip>,
) -> Result<Fit, CalibrateError> {
    let steps = buckets_per_step(ss, sel, step_ms, skipped)?;
    let ms = ss[0].name().map_or(1000.0, |n| {
        if n.contains("_milliseconds") || n.contains("_ms_") || n.ends_with("_ms") { 1.0 } else { 1000.0 }
    });
    let quiet: Vec<&Vec<(f64, f64)>> = steps.iter().filter(|(t, _)| **t < quiet_end).map(|(_, b)| b).collect();
    if quiet.is_empty() {
        return Err(at_series(
            ss[0],
            "no usable step in the quiet period (--quiet-until): the base latency cannot be read",
        ));
    }
    let mut sum = quiet[0].clone();
    for b in &quiet[1..] {
        for (a, x) in sum.iter_mut().zip(b.iter()) {
            a.1 += x.1;
        }
    }
    let n = EMPIRICAL_POINTS as f64;
    let points: Vec<f64> =
        (0..EMPIRICAL_POINTS).map(|i| round6(bucket_quantile((i as f64 + 0.5) / n, &sum) * ms)).collect();
    let base_median = bucket_quantile(0.5, &sum) * ms;
    if base_median.is_nan() || base_median <= 0.0 {
        return Err(at_series(
            ss[0],
            "the quiet period's median latency is 0: no drift factor can be taken against it",
        ));
    }
    let mut drift = Vec::new();
    let mut rows = Vec::new();
    for (t, b) in &steps {
        let med = bucket_quantile(0.5, b) * ms;
        if med.is_nan() || med <= 0.0 {
            skipped.push(Skip {
                series: format!("histogram {sel}"),
                t_s: *t as f64 / 1000.0,
                reason: "median latency 0: no drift factor".into(),
            });
            continue;
        }
        let factor = med / base_median;
        let rel = (*t - t0) as u64;
        drift.push((rel, round6(factor)));
        let q = REPORT_QUANTILES
            .iter()
            .map(|&q| (q, bucket_quantile(q, b) * ms, bucket_quantile(q, &sum) * ms * factor))
            .collect();
        rows.push((rel, q));
    }
    let cite = format!(
        "histogram_quantile over the buckets of {sel} ({} series), summed over the {} quiet steps before {}",
        ss.len(),
        quiet.len(),
        Dur(((quiet_end - t0) as u64) * 1_000_000)
    );
    Ok((Base::Empirical(points), drift, rows, cite))
}

/// The quantile-series fit: a log-normal whose median is the quiet steps' median of the 0.5
/// series and whose sigma is the quiet steps' median of ln(q_p / q_0.5) / z_p over the
/// highest quantile p; each step's 0.5 value over the base median is its drift factor.
pub(super) fn fit_quantiles(
    qs: &[(f64, String, Vec<&Series>)],
    step_ms: u64,
    t0: i64,
    quiet_end: i64,
    skipped: &mut Vec<Skip>,
) -> Result<Fit, CalibrateError> {
    use statrs::distribution::{ContinuousCDF, Normal};
    let unit = |s: &Series| {
        s.name().map_or(1000.0, |n| if n.contains("_milliseconds") || n.ends_with("_ms") { 1.0 } else { 1000.0 })
    };
    let mut per_q: Vec<(f64, BTreeMap<i64, f64>, String)> = Vec::new();
    for (q, sel, ss) in qs {
        // Several series are one split in time by a label (brownout's `phase`): merged, as
        // long as no two have a sample at the same time (quantiles do not add up).
        let mut m: BTreeMap<i64, f64> = BTreeMap::new();
        for s in ss {
            for (t, v) in values(s, step_ms, false, skipped).0 {
                if m.insert(t, v * unit(s)).is_some() {
                    let x = s.samples.iter().find(|x| x.t_ms == t).copied().unwrap_or(s.samples[0]);
                    return Err(at_sample(
                        s,
                        &x,
                        format!(
                            "the selector of quantile {q} matches {} series with samples at the same time; quantiles do not add up: select one",
                            ss.len()
                        ),
                    ));
                }
            }
        }
        let name = if ss.len() == 1 { ss[0].describe() } else { format!("{sel} ({} series split in time)", ss.len()) };
        per_q.push((*q, m, name));
    }
    per_q.sort_by(|a, b| a.0.total_cmp(&b.0));
    let med_i = per_q.iter().position(|x| x.0 == 0.5).unwrap_or(0);
    let hi = per_q.len() - 1;
    let hi = if hi == med_i { 0 } else { hi };
    let z = Normal::standard().inverse_cdf(per_q[hi].0);
    let quiet_meds: Vec<f64> = per_q[med_i].1.range(..quiet_end).map(|(_, v)| *v).filter(|v| *v > 0.0).collect();
    let quiet_sig: Vec<f64> = per_q[med_i]
        .1
        .range(..quiet_end)
        .filter_map(|(t, m)| per_q[hi].1.get(t).map(|h| (h / m).ln() / z))
        .filter(|s| s.is_finite() && *s >= 0.0)
        .collect();
    let (Some(median), Some(sigma)) = (median_of(quiet_meds), median_of(quiet_sig)) else {
        return Err(at_series(
            qs.iter().find(|x| x.0 == 0.5).map_or(qs[0].2[0], |x| x.2[0]),
            "no usable step in the quiet period (--quiet-until): the base latency cannot be read",
        ));
    };
    let sigma = round6(sigma.min(5.0));
    let median = round6(median);
    let mut drift = Vec::new();
    let mut rows = Vec::new();
    for (t, m) in &per_q[med_i].1 {
        if m.is_nan() || *m <= 0.0 {
            continue;
        }
        let factor = m / median;
        let rel = (*t - t0) as u64;
        drift.push((rel, round6(factor)));
        let q = per_q
            .iter()
            .map(|(q, series, _)| {
                let fitted = median * factor * (sigma * Normal::standard().inverse_cdf(*q)).exp();
                (*q, series.get(t).copied().unwrap_or(f64::NAN), fitted)
            })
            .collect();
        rows.push((rel, q));
    }
    let cite = format!(
        "LogNormal: median = median of {} over the quiet steps before {}; sigma = median of ln({} / median) / {z:.4}",
        per_q[med_i].2,
        Dur(((quiet_end - t0) as u64) * 1_000_000),
        per_q[hi].2
    );
    Ok((Base::LogNormal { median_ms: median, sigma }, drift, rows, cite))
}

pub(super) fn median_of(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}
