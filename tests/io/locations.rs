//! Validation errors point at the offending value: for bad values of many fields of a copy
//! of `grocery.ron` (whose comments name the same fields), the reported line and column are
//! exactly where the bad value is written, found here by searching the edited text for it.
//! Sweep specs likewise.

use std::path::Path;

use brownout::scenario;
use brownout::sweep::grid;

const GROCERY: &str = include_str!("../../scenarios/grocery.ron");

/// Comments that name the fields below, so a search for a field name finds them first.
const DECOY: &str = "// drifts: peak: 1, deadline: \"1s\", rate_per_s: 5, permits: 3, sigma, slots: none,\n\
                     // instances: none, order_fraction, timeout: \"never\", name: \"checkout\", value: NaN\n";

/// Line and column (1-based, in characters) of the only occurrence of `needle` in `text`,
/// plus `offset` characters.
fn position(text: &str, needle: &str, offset: usize) -> (usize, usize) {
    assert_eq!(text.matches(needle).count(), 1, "{needle:?} must occur once in the fixture");
    let at = text.find(needle).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, text[start..at].chars().count() + 1 + offset)
}

/// `from` (unique in the fixture) replaced by `to`; the bad value is `value`, inside `to`.
struct Case {
    from: &'static str,
    to: &'static str,
    value: &'static str,
    says: &'static str,
}

const fn case(from: &'static str, to: &'static str, value: &'static str, says: &'static str) -> Case {
    Case { from, to, value, says }
}

const CASES: &[Case] = &[
    case("peak: 30.0", "peak: -7.25", "-7.25", "Brownout peak must be > 0"),
    case("horizon: \"30m\"", "horizon: \"0ms\"", "\"0ms\"", "horizon must be > 0"),
    case("warmup: \"2m\"", "warmup: \"45m\"", "\"45m\"", "warmup"),
    case("    window: \"10s\",", "    window: \"0s\",", "\"0s\"", "window must be > 0"),
    case("instances: 10,", "instances: 0,", "0", "fleet.instances"),
    case("slots: 60", "slots: 0", "0", "fleet.workers.slots"),
    case("max_connections: 30", "max_connections: 0", "0", "max_connections"),
    case("deadline: \"800ms\"", "deadline: \"0us\"", "\"0us\"", "class \"search\": deadline must be > 0"),
    case("order_fraction: 0.03", "order_fraction: 1.5", "1.5", "order_fraction"),
    case("rate_per_s: 300.0", "rate_per_s: -300.0", "-300.0", "rate_per_s must be >= 0"),
    case("sigma: 0.5", "sigma: 9.5", "9.5", "work: LogNormal sigma"),
    case("sigma: 0.4", "sigma: 7.5", "7.5", "dependency.latency"),
    case("Constant(0.001)", "Constant(1.5)", "1.5", "dependency.error_rate"),
    case("items: 20000", "items: 0", "0", "catalogue.items"),
    case("zipf: 1.0", "zipf: -1.0", "-1.0", "catalogue.zipf"),
    case("changes_per_hour: 0.5", "changes_per_hour: -0.5", "-0.5", "changes_per_hour"),
    case("substitution_allowance: 0.3", "substitution_allowance: 1.3", "1.3", "substitution_allowance"),
    case("refund_cost: 15.0", "refund_cost: -15.0", "-15.0", "business.refund_cost"),
    case("lost_order_cost: 25.0", "lost_order_cost: NaN", "NaN", "business.lost_order_cost"),
    case("timeout: \"2s\"", "timeout: \"0s\"", "\"0s\"", "Timeout.timeout must be > 0"),
    case("permits: 12", "permits: 0", "0", "Limiter.permits must be >= 1"),
    case("minimumNumberOfCalls: 20", "minimumNumberOfCalls: 0", "0", "minimumNumberOfCalls"),
    case("percentile: 0.95", "percentile: 1.5", "1.5", "LatencyBreaker.percentile"),
    case("share: 0.3", "share: 1.3", "1.3", "TieredBulkhead.classes[browse].share"),
    case("windows: 3, recovery", "windows: 0, recovery", "0", "TieredBulkhead.degrade.windows"),
    case(
        "(name: \"browse\", arrivals: Poisson(rate_per_s: 300.0)",
        "(name: \"checkout\", arrivals: Poisson(rate_per_s: 300.0)",
        "\"checkout\"",
        "defined twice",
    ),
    case("(name: \"search\", arrivals", "(name: \"Browse\", arrivals", "\"Browse\"", "chart file name"),
    case("(name: \"timeout-only\"", "(name: \"..\"", "\"..\"", "policy name"),
    case(
        "classes: [\"browse\", \"search\"]",
        "classes: [\"browse\", \"basket\"]",
        "\"basket\"",
        "unknown class \"basket\"",
    ),
    case("op: Gt, value: 0.5", "op: Gt, value: NaN", "NaN", "value must be a finite number"),
    case(
        "class: \"account\", metric: \"goodput_ratio\", op: Lt",
        "class: \"acct\", metric: \"goodput_ratio\", op: Lt",
        "\"acct\"",
        "unknown class \"acct\"",
    ),
    case("metric: \"cycles\"", "metric: \"cycels\"", "\"cycels\"", "unknown metric"),
    case("than: \"error-breaker\"", "than: \"error-braker\"", "\"error-braker\"", "unknown policy"),
];

#[test]
fn every_bad_value_is_reported_at_its_own_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grocery.ron");
    let base = format!("{DECOY}{GROCERY}");
    for c in CASES {
        assert_eq!(base.matches(c.from).count(), 1, "{:?} must occur once in grocery.ron", c.from);
        let text = base.replacen(c.from, c.to, 1);
        std::fs::write(&path, &text).unwrap();
        let e = scenario::load(&path).expect_err(c.to);
        let want = position(&text, c.to, c.to.find(c.value).unwrap());
        assert_eq!((e.line, e.col), want, "{}: {e}", c.to);
        assert_eq!(e.file, path);
        assert!(e.message.contains(c.says), "{}: {e}", c.to);
    }
    assert!(CASES.len() >= 30);
    std::fs::write(&path, &base).unwrap();
    scenario::load(&path).expect("the unedited fixture is valid");
}

#[test]
fn a_drift_points_error_points_at_the_point() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("points.ron");
    let drift = "drift: Points([(\"0s\", 1.0), (\"5m\", 4.0),\n                       (\"3m\", 2.0)]),";
    let text = GROCERY.replacen("drift: Brownout(start: \"5m\", ramp: \"5m\", hold: \"10m\", peak: 30.0),", drift, 1);
    std::fs::write(&path, &text).unwrap();
    let e = scenario::load(&path).unwrap_err();
    assert_eq!((e.line, e.col), position(&text, "\"3m\", 2.0", 0), "{e}");
    assert!(e.message.contains("time order"), "{e}");
}

const SPEC: &str = "// permits, peak, metrics: \"x\", replications: 0, steps: 1\n\
SweepSpec(\n    name: \"s\",\n    base: \"grocery.ron\",\n    metrics: [\"checkout/goodput_per_s\", \"business_cost\"],\n    \
policies: [\"tiered\", \"limiter-fallback\"],\n    axes: [\n        \
(name: \"permits\", path: \"policies[limiter-fallback].stack[0].policy.Limiter.permits\", values: [6, 12]),\n        \
(name: \"peak\", path: \"dependency.drift.Brownout.peak\", range: (from: 10, to: 30, steps: 3)),\n    ],\n)\n";

#[test]
fn sweep_spec_errors_point_at_the_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("grocery.ron"), GROCERY).unwrap();
    let path = dir.path().join("sweep.ron");
    let cases: &[(&str, &str, &str, &str)] = &[
        ("steps: 3", "steps: 1", "1)", "steps >= 2"),
        ("\"business_cost\"", "\"business_costs\"", "\"business_costs\"", "unknown run-level metric"),
        ("\"limiter-fallback\"],", "\"limiter-fallbak\"],", "\"limiter-fallbak\"", "unknown policy"),
        ("name: \"s\"", "name: \"..\"", "\"..\"", "name cannot be"),
        ("(name: \"peak\"", "(name: \"permits\"", "\"permits\", path: \"dep", "named twice"),
        (
            "\"dependency.drift.Brownout.peak\"",
            "\"policies[4].stack[0].policy.Limiter.permits\"",
            "\"policies[4].stack[0].policy.Limiter.permits\"",
            "same value as axes[0]",
        ),
        ("\"dependency.drift.Brownout.peak\"", "\"seed\"", "\"seed\"", "seed cannot be swept"),
        ("values: [6, 12]", "values: [0, 12]", "0, 12]", "permits must be >= 1"),
        ("values: [6, 12]", "values: [6, 1.5]", "1.5]", "not a whole number"),
        ("values: [6, 12]", "values: [\"2s\", 12]", "\"2s\"", "is a text"),
        ("to: 30, steps: 3", "to: -30, steps: 3", "(from: 10", "Brownout peak must be > 0"),
    ];
    for &(from, to, value, says) in cases {
        assert_eq!(SPEC.matches(from).count(), 1, "{from:?}");
        let text = SPEC.replacen(from, to, 1);
        std::fs::write(&path, &text).unwrap();
        let e = grid::load(&path).expect_err(to);
        let want = position(&text, value, 0);
        assert_eq!((e.line, e.col), want, "{to}: {e}");
        assert!(e.message.contains(says), "{to}: {e}");
    }
    std::fs::write(&path, SPEC).unwrap();
    grid::load(&path).expect("the unedited spec is valid");
}

#[test]
fn a_hundred_thousand_classes_validate() {
    // Validation is linear (name lookups in ordered maps): before, every class was compared
    // with every earlier one, 5e9 comparisons for 100,000 classes (61 s in release).
    let mut s = scenario::parse(Path::new("many.ron"), GROCERY).unwrap();
    let template = s.classes[2].clone();
    s.classes = (0..100_000).map(|i| scenario::Class { name: format!("c{i}"), ..template.clone() }).collect();
    s.expect.clear();
    for p in &mut s.policies {
        for layer in &mut p.stack {
            layer.classes.clear();
        }
    }
    s.policies.retain(|p| p.name != "tiered");
    // 100,000 busy classes are over the default memory, output and event budgets; validation
    // itself is what this test is about.
    s.limits.max_memory = bytesize::ByteSize::tib(1);
    s.limits.max_output = bytesize::ByteSize::tib(1);
    s.limits.max_events = 1_000_000_000_000;
    let started = std::time::Instant::now();
    scenario::validate(&s).expect("valid");
    let took = started.elapsed().as_secs_f64();
    // Printed, never asserted (no timed assertions in tests): linear validation takes well
    // under a second here, the quadratic one took 61 s.
    eprintln!("validated 100,000 classes in {took:.3} s");
    s.classes[99_999].name = "C5".into();
    let e = scenario::validate(&s).unwrap_err();
    assert_eq!(e.path, "classes[99999].name", "{e}");
}
