//! The catalogue against the summary types, and its column orders.

use std::collections::BTreeSet;

use serde_json::Value;

use super::*;
use crate::engine::SECOND;
use crate::metrics::{Recorder, RecorderSetup};

/// A run summary with a breaker, a limiter and one class, every number in it distinct.
fn distinct_summary() -> (RunSummary, Value) {
    let mut r = Recorder::new(RecorderSetup {
        has_breaker: true,
        has_limit: true,
        has_limiter: true,
        has_bulkhead: true,
        costs: (1.0, 1.0, 1.0),
        // A non-catalogue fallback, so the class summary has its fallback answers.
        fallbacks: vec![crate::metrics::FallbackUse::Open(1.0)],
        ..RecorderSetup::one_class(SECOND, SECOND)
    });
    let mut json = serde_json::to_value(r.summary(SECOND, 0, 0)).unwrap();
    // Left out of the JSON when zero, as no call here was cancelled.
    json["dependency"]["cancelled"] = 0.into();
    // Left out when zero, as no nginx upstream refused here.
    json["classes"][0]["causes"]["no_live_upstream"] = 0.into();
    // Left out when zero, and without a pool that sets its connections up.
    json["classes"][0]["causes"]["connect_timeout"] = 0.into();
    json["resources"]["connections"] = serde_json::json!({"opened": 0, "setup_ms_mean": null, "setup_share": null});
    // Absent for a class without an SLO.
    json["classes"][0]["slo"] = serde_json::json!({"burn_rate": 0.5, "budget_used": 0.5});
    // Only a phase's classes have a recovery (`recovered` a flag, the rest real figures).
    json["classes"][0]["recovery"] = serde_json::json!({
        "before_in_time_ratio": null, "recovered": true, "recovery_s": null, "end_in_time_ratio": null
    });
    let mut k = 0;
    renumber(&mut json, &mut k);
    (serde_json::from_value(json.clone()).unwrap(), json)
}

/// Give every number a new value: whole for integer fields, k + 0.5 for real ones (a
/// `null` is a real figure over no sample in the empty run this starts from).
fn renumber(v: &mut Value, k: &mut u64) {
    match v {
        Value::Null => {
            *k += 1;
            *v = Value::from(*k as f64 + 0.5);
        }
        Value::Number(n) => {
            *k += 1;
            *v = if n.is_f64() { Value::from(*k as f64 + 0.5) } else { Value::from(*k) };
        }
        Value::Array(a) => a.iter_mut().for_each(|x| renumber(x, k)),
        Value::Object(o) => o.values_mut().for_each(|x| renumber(x, k)),
        _ => {}
    }
}

/// Dotted paths of the numeric fields and of the arrays under `v` (arrays not entered).
fn fields(v: &Value, at: &str, numbers: &mut BTreeSet<String>, arrays: &mut BTreeSet<String>) {
    match v {
        // A flag is read as 1 or 0 (`recovered`).
        Value::Number(_) | Value::Bool(_) => {
            numbers.insert(at.to_string());
        }
        Value::Array(_) => {
            arrays.insert(at.to_string());
        }
        Value::Object(o) => {
            for (name, x) in o {
                let path = if at.is_empty() { name.clone() } else { format!("{at}.{name}") };
                fields(x, &path, numbers, arrays);
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, name| &v[name])
}

#[test]
fn every_summary_field_has_a_row_that_reads_it() {
    let (run, json) = distinct_summary();
    let class_json = &json["classes"][0];
    for scope in [Scope::Class, Scope::Run] {
        let root = if scope == Scope::Class { class_json } else { &json };
        let (mut numbers, mut arrays) = (BTreeSet::new(), BTreeSet::new());
        fields(root, "", &mut numbers, &mut arrays);
        arrays.remove("classes");
        let rows: BTreeSet<String> = of(scope).map(|m| m.field.to_string()).collect();
        let not: BTreeSet<String> = NOT_METRICS.iter().map(|(f, _)| f.to_string()).collect();
        let missing: Vec<&String> =
            numbers.iter().chain(&arrays).filter(|f| !rows.contains(*f) && !not.contains(*f)).collect();
        assert!(missing.is_empty(), "{scope:?} summary fields without a catalogue row: {missing:?}");
        let stale: Vec<&String> = rows.iter().filter(|f| !numbers.contains(*f)).collect();
        assert!(stale.is_empty(), "{scope:?} rows naming no numeric summary field: {stale:?}");
        // Each row reads the field it names.
        for m in of(scope) {
            let v = at(root, m.field);
            let want = v.as_f64().or_else(|| v.as_bool().map(|b| if b { 1.0 } else { 0.0 })).unwrap();
            assert_eq!(m.read(&run, run.classes.first()), Some(want), "{}", m.name);
        }
    }
}

#[test]
fn names_csv_columns_and_table_positions_are_unique() {
    for scope in [Scope::Class, Scope::Run] {
        let names: BTreeSet<&str> = of(scope).map(|m| m.name).collect();
        assert_eq!(names.len(), of(scope).count(), "{scope:?}");
    }
    let csv: Vec<&str> = CATALOGUE.iter().filter_map(|m| Some(m.csv?.name)).collect();
    assert_eq!(csv.iter().collect::<BTreeSet<_>>().len(), csv.len());
    // Numbered 0, 1, 2, ... with no gap or repeat: a new column takes the next number.
    let mut at: Vec<u16> = CATALOGUE.iter().filter_map(|m| Some(m.csv?.at)).collect();
    at.sort();
    assert_eq!(at, (0..at.len() as u16).collect::<Vec<_>>());
}

#[test]
fn table_columns_form_one_chain_from_the_first() {
    let with: Vec<&Metric> = CATALOGUE.iter().filter(|m| m.column.is_some()).collect();
    let titles: BTreeSet<&str> = with.iter().map(|m| m.column.unwrap().title).collect();
    assert_eq!(titles.len(), with.len(), "two columns with one title");
    // Exactly one first column, and no two columns after the same one, so the order is
    // one chain; every column is on it (a column after a metric without one is not).
    assert_eq!(with.iter().filter(|m| m.column.unwrap().after.is_none()).count(), 1);
    let afters: Vec<&str> = with.iter().filter_map(|m| m.column.unwrap().after).collect();
    assert_eq!(afters.iter().collect::<BTreeSet<_>>().len(), afters.len(), "two columns after one: {afters:?}");
    let chain = table_columns();
    assert_eq!(chain.len(), with.len());
    for pair in chain.windows(2) {
        assert_eq!(pair[1].1.after, Some(pair[0].0.name), "{} is not on the chain", pair[1].0.name);
    }
}

#[test]
fn every_latency_of_answers_is_ranked_only_between_comparable_sets() {
    // The per-class latencies taken over answers (in time or all answers), wherever their
    // field sits: ranking one between sets that answered different numbers would reward
    // refusing the slow requests.
    for name in ["in_time_p95_ms", "answered_p95_ms", "answered_p999_ms"] {
        assert_eq!(find(Scope::Class, name).unwrap().population(), Population::Answers, "{name}");
    }
    for name in ["p95_ms", "failed_p95_ms", "staleness_p95_ms", "slot_wait_ms_mean"] {
        assert_eq!(find(Scope::Class, name).unwrap().population(), Population::Requests, "{name}");
    }
}

#[test]
fn a_part_the_run_lacks_reads_as_none_and_counts_as_zero() {
    let (mut run, _) = distinct_summary();
    run.breaker = None;
    let m = find(Scope::Run, "transitions").unwrap();
    assert_eq!(m.read(&run, None), None);
    assert_eq!(m.value(&run, None), Some(0.0));
    assert_eq!(value_of(&run, "c/requests"), Some(run.classes[0].requests as f64));
    assert_eq!(value_of(&run, "nope/requests"), None);
    assert_eq!(value_of(&run, "requests"), None, "a per-class metric needs its class");
}
