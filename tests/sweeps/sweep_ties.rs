//! Issue 18, "ties reported as ties": a sweep's best setting per metric (policy set and
//! condition) and the settings tied with it, as `sweep.json`'s `best` list gives them, must be
//! what runs.csv gives when each setting is compared with the best replication by replication
//! (common random numbers) and tied when the paired 95 % t interval of the difference includes
//! zero, with the t table's t(0.975, 4) for 5 replications. A `sweep.json` from before the
//! list still re-renders, its ties falling back to equal means.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::brownout;

/// t(0.975, 4) from a t table: 5 replications give 4 degrees of freedom.
const T_975_4: f64 = 2.776445;
const REPLICATIONS: usize = 5;

/// A decision axis (permits) and a condition axis (the dependency's mean latency).
const SPEC: &str = r#"SweepSpec(
    name: "ties", base: "erlang.ron", seed: 5, replications: 5,
    metrics: ["api/rejected", "api/ok_ratio", "api/p95_ms", "api/requests"],
    axes: [
        (name: "permits", path: "policies[limit].stack[0].policy.Limiter.permits", values: [2, 3, 4, 40]),
        (name: "mean_ms", path: "dependency.latency.Exponential.mean", values: ["20ms", "40ms"]),
    ],
)"#;

/// Which way each metric improves, from the metric catalogue's documentation (docs/sweep.md):
/// fewer rejections, more requests ok, a lower p95; `requests` is the offered load, neither.
const DIRECTED: [(&str, bool); 3] = [("api/rejected", false), ("api/ok_ratio", true), ("api/p95_ms", false)];

/// Each directed metric's practical-equivalence margin, as the catalogue's rule states it
/// (`Metric::margin`: a count 1, a ratio 0.1 percentage point, milliseconds 1 ms): a setting
/// whose paired interval reaches inside it ties.
fn margin(metric: &str) -> f64 {
    match metric {
        "api/rejected" => 1.0,
        "api/ok_ratio" => 0.001,
        "api/p95_ms" => 1.0,
        _ => unreachable!("{metric}"),
    }
}

/// (metric, policy, mean_ms): a best set's key, as runs.csv writes the numbers.
type Key = (String, String, String);

/// Key to (best permits, tied permits in point order, significant).
type Sets = BTreeMap<Key, (String, Vec<String>, bool)>;

/// Recomputed from runs.csv with the t table.
fn expected(out: &Path) -> (Sets, usize) {
    let mut rd = csv::Reader::from_path(out.join("runs.csv")).unwrap();
    let head = rd.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap_or_else(|| panic!("no column {n}"));
    let (permits, mean_ms, policy, rep) = (col("permits"), col("mean_ms"), col("policy"), col("replication"));
    // (metric, policy, condition) -> settings in point order, each with its values by replication.
    let mut groups: BTreeMap<Key, Vec<(String, Vec<f64>)>> = BTreeMap::new();
    for r in rd.records() {
        let r = r.unwrap();
        for (m, _) in DIRECTED {
            let settings = groups.entry((m.to_string(), r[policy].to_string(), r[mean_ms].to_string())).or_default();
            if settings.last().is_none_or(|(p, _)| p != &r[permits]) {
                settings.push((r[permits].to_string(), Vec::new()));
            }
            let values = &mut settings.last_mut().unwrap().1;
            assert_eq!(r[rep].parse::<usize>().unwrap(), values.len(), "runs.csv is in replication order");
            values.push(r[col(m)].parse().unwrap());
        }
    }
    let mut sets = Sets::new();
    let mut inexact_ties = 0;
    for (key, settings) in groups {
        let higher = DIRECTED.iter().find(|(m, _)| *m == key.0).unwrap().1;
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        let mut best = 0;
        for (i, (_, xs)) in settings.iter().enumerate() {
            let (a, b) = (mean(xs), mean(&settings[best].1));
            if (higher && a > b) || (!higher && a < b) {
                best = i;
            }
        }
        let tied: Vec<String> = settings
            .iter()
            .enumerate()
            .filter(|(i, (_, xs))| {
                let d: Vec<f64> = settings[best].1.iter().zip(xs).map(|(b, x)| b - x).collect();
                let (n, m) = (d.len() as f64, mean(&d));
                let s = (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
                let half = T_975_4 * s / n.sqrt();
                let e = margin(&key.0);
                let tie = *i == best || (m - half <= e && -e <= m + half);
                inexact_ties += usize::from(tie && *i != best && m != 0.0);
                tie
            })
            .map(|(_, (p, _))| p.clone())
            .collect();
        assert!(settings.iter().all(|(_, xs)| xs.len() == REPLICATIONS));
        let significant = tied.len() == 1 && settings.len() > 1;
        sets.insert(key, (settings[best].0.clone(), tied, significant));
    }
    (sets, inexact_ties)
}

/// `sweep.json`'s `best` list in the same shape.
fn written(out: &Path) -> Sets {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    // As runs.csv writes a number: 20, not 20.0.
    let num = |v: &serde_json::Value| format!("{}", v.as_f64().unwrap());
    let permits = |i: &serde_json::Value| num(&rows[i.as_u64().unwrap() as usize]["params"]["permits"]);
    let best = v["best"].as_array().unwrap_or_else(|| panic!("sweep.json has no best list"));
    best.iter()
        .map(|b| {
            let policy = b["policy"].as_str().unwrap().to_string();
            for i in b["tied_rows"].as_array().unwrap() {
                let row = &rows[i.as_u64().unwrap() as usize];
                assert_eq!(row["policy"].as_str(), Some(policy.as_str()), "{b}");
                assert_eq!(row["params"]["mean_ms"], b["condition"]["mean_ms"], "{b}");
            }
            let key = (b["metric"].as_str().unwrap().to_string(), policy, num(&b["condition"]["mean_ms"]));
            let tied = b["tied_rows"].as_array().unwrap().iter().map(permits).collect();
            (key, (permits(&b["best_row"]), tied, b["significant"].as_bool().unwrap()))
        })
        .collect()
}

#[test]
fn sweep_json_ties_settings_whose_paired_interval_reaches_inside_the_margin() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("erlang.ron"), common::erlang_scenario("12s")).unwrap();
    std::fs::write(dir.path().join("ties.ron"), SPEC).unwrap();
    let out = dir.path().join("out");
    let o = brownout(&["sweep", "ties.ron", "-q", "-j", "2", "--out", out.to_str().unwrap()], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let (want, inexact_ties) = expected(&out);
    // 3 directed metrics x 2 policies x 2 conditions; `requests` has no best.
    assert_eq!(want.len(), 12);
    assert_eq!(written(&out), want);
    // Not moot: some setting ties though its mean differs from the best's (equal means alone
    // would not tie it), and some best is better than every other setting.
    assert!(inexact_ties > 0, "{want:?}");
    assert!(want.values().any(|(_, _, significant)| *significant), "{want:?}");
    // `direct` has no limiter: every permits setting is the same run, an exact tie.
    let direct = &want[&("api/p95_ms".to_string(), "direct".to_string(), "40".to_string())];
    assert_eq!(direct.1, ["2", "3", "4", "40"]);

    // The report says how ties are decided.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let rule = "5 replications; rule: paired by seed, Student-t 95 % (df = n−1), a difference within its margin is a tie \
                (api/rejected ±1, api/ok_ratio ±0.1 pt, api/p95_ms ±1 ms)";
    assert!(html.contains(rule), "report.html does not say how ties are decided");

    // A sweep.json from before the list: `plot` re-renders it, ties falling back to equal means.
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("best");
    std::fs::write(out.join("sweep.json"), serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    std::fs::remove_file(out.join("report.html")).unwrap();
    let o = brownout(&["plot", out.to_str().unwrap()], dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains(rule), "an old sweep.json has no paired ties");
    assert!(html.contains("tied: equal means"), "report.html does not say how its ties were decided");
}
