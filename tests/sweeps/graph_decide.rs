//! `decide` over a service graph's figures (issue 33), through the shipped sweep
//! scenarios/sweeps/checkout-flat.ron: it chooses the pricing timeout and pricing's own pool
//! under a constraint on checkout's in-time ratio and one on a per-dependency figure
//! (`brownout:dependencies[pricing]/mean_in_flight`). The recommendation must be the smallest
//! pool for which some timeout meets every constraint by its one-sided 95 % bound, recomputed
//! here from runs.csv with the t table's value, and its timeout one that does. Index:
//! - `checkout_flat_recommends_the_smallest_pricing_pool_that_holds`
//! - `bad_dependency_constraints_are_refused_at_their_line`: a constraint on an unknown
//!   dependency, on an unknown per-dependency metric, or with both `class` and `dependency`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::brownout;

/// t(0.95, 2) from a t table: 3 replications give 2 degrees of freedom.
const T_95_2: f64 = 2.919986;
const IN_TIME: &str = "brownout:checkout/in_time_ratio";
const OK: &str = "checkout/ok_ratio";
const IN_FLIGHT: &str = "brownout:dependencies[pricing]/mean_in_flight";

fn spec() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sweeps/checkout-flat.ron")
}

/// One-sided 95 % bounds (low, high) of `xs`.
fn bounds(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let s = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    (mean - T_95_2 * s / n.sqrt(), mean + T_95_2 * s / n.sqrt())
}

/// Per (pool, timeout) from runs.csv: whether every constraint of the spec holds.
fn feasible(out: &Path) -> BTreeMap<(u32, u32), bool> {
    let mut rd = csv::Reader::from_path(out.join("runs.csv")).unwrap();
    let head = rd.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap_or_else(|| panic!("no column {n}"));
    let (t, p, a, b, c) = (col("pricing_timeout"), col("pricing_pool"), col(IN_TIME), col(OK), col(IN_FLIGHT));
    let mut values: BTreeMap<(u32, u32), [Vec<f64>; 3]> = BTreeMap::new();
    for r in rd.records() {
        let r = r.unwrap();
        let key = (r[p].parse::<f64>().unwrap() as u32, r[t].parse::<f64>().unwrap() as u32);
        let v = values.entry(key).or_default();
        for (k, i) in [a, b, c].into_iter().enumerate() {
            v[k].push(r[i].parse().unwrap());
        }
    }
    values
        .into_iter()
        .map(|(key, [in_time, ok, in_flight])| {
            assert_eq!(in_time.len(), 3);
            let holds = bounds(&in_time).0 >= 0.99 && bounds(&ok).0 >= 0.5 && bounds(&in_flight).1 <= 8.0;
            (key, holds)
        })
        .collect()
}

#[test]
fn checkout_flat_recommends_the_smallest_pricing_pool_that_holds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o =
        brownout(&["sweep", spec().to_str().unwrap(), "-q", "-j", "2", "--out", out.to_str().unwrap()], Path::new("."));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let holds = feasible(&out);
    assert!(holds.values().any(|h| !h), "every setting holds: the question would be moot: {holds:?}");
    let want = holds.iter().filter(|(_, h)| **h).map(|((pool, _), _)| *pool).min().expect("some setting holds");
    assert!(holds.keys().any(|(pool, _)| *pool < want), "the smallest pool holds: moot: {holds:?}");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("recommendation.json")).unwrap()).unwrap();
    assert_eq!(r["feasible"], true, "{r}");
    let setting = &r["recommended"]["setting"];
    assert_eq!(setting["pricing_pool"].as_f64(), Some(f64::from(want)), "{r}\n{holds:?}");
    let timeout = setting["pricing_timeout"].as_f64().unwrap() as u32;
    assert_eq!(holds.get(&(want, timeout)), Some(&true), "{r}\n{holds:?}");
    assert_eq!(r["constraints"][2]["metric"], IN_FLIGHT, "{r}");
}

/// The spec with `from` replaced by `to`, refused with exit 2 at the line of `to`, saying `why`.
fn refused(from: &str, to: &str, why: &str) {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(spec()).unwrap().replace("../checkout-flat.ron", "checkout-flat.ron");
    assert!(text.contains(from));
    let text = text.replace(from, to);
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/checkout-flat.ron");
    std::fs::copy(base, dir.path().join("checkout-flat.ron")).unwrap();
    let (path, out) = (dir.path().join("spec.ron"), dir.path().join("out"));
    std::fs::write(&path, &text).unwrap();
    let o = brownout(&["sweep", path.to_str().unwrap(), "-q", "--out", out.to_str().unwrap()], Path::new("."));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let line = text.lines().position(|l| l.contains(to)).unwrap() + 1;
    assert!(err.contains(&format!("{}:{line}:", path.display())), "want line {line}: {err}");
    assert!(err.contains(why), "want {why}: {err}");
    assert!(!out.exists());
}

#[test]
fn bad_dependency_constraints_are_refused_at_their_line() {
    let c = "(dependency: \"pricing\", metric: \"mean_in_flight\"";
    refused(c, "(dependency: \"shipping\", metric: \"mean_in_flight\"", "unknown dependency \"shipping\"");
    refused(
        c,
        "(dependency: \"pricing\", metric: \"in_time_ratio\"",
        "unknown per-dependency metric \"in_time_ratio\"",
    );
    refused(c, "(dependency: \"pricing\", class: \"checkout\", metric: \"mean_in_flight\"", "not both");
}
