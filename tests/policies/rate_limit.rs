//! `RateLimit`, Envoy's token bucket, against its closed form (issue 34): in any window of
//! length t it admits at most `burst + t / period` (period = 1 s / rate), a property over
//! generated arrival times; under constant overload it admits `burst + floor(T / period)`
//! over T, ±1 (`TokenBucketImpl::consume`, `source/common/common/token_bucket_impl.cc`: the
//! bucket starts full and refills continuously up to `max_tokens`).

use crate::common;

use std::path::Path;

use brownout::model::{Model, RunOptions, run_policy_recorded};
use brownout::scenario::{parse, validate};
use proptest::prelude::*;

/// The times (ns) at which a `RateLimit` layer admitted the requests of a scripted run, read
/// as the starts of the attempts it let through (nothing else stands in their way).
fn admitted(times_ms: &[u64], rate_per_s: f64, burst: u32) -> Vec<u64> {
    let times: Vec<String> = times_ms.iter().map(|t| format!("\"{t}ms\"")).collect();
    let text = format!(
        r#"Scenario(
        name: "bucket", horizon: "100s",
        fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: [{}]), deadline: "5s")],
        dependency: (latency: Constant("1ms")),
        policies: [(name: "p", stack: [(policy: RateLimit((rate_per_s: {rate_per_s:?}, burst: {burst})))])],
    )"#,
        times.join(", ")
    );
    let s = common::scenario(&text);
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let (_, rec) = run_policy_recorded(&model, 0, RunOptions::default()).unwrap();
    let mut t: Vec<u64> = rec.attempts.iter().map(|a| a.start).collect();
    t.sort_unstable();
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_window_admits_more_than_burst_plus_rate_times_its_length(
        gaps in prop::collection::vec(0u64..40, 1..160),
        rate in 1u32..200,
        burst in 1u32..8,
    ) {
        let times: Vec<u64> = gaps.iter().scan(0, |t, g| { *t += g; Some(*t) }).collect();
        let got = admitted(&times, f64::from(rate), burst);
        // Period in whole ns, rounded up (RateLimitConfig::period): 1e9 / rate.
        let period = 1_000_000_000u64.div_ceil(u64::from(rate));
        for i in 0..got.len() {
            for j in i..got.len() {
                let window = got[j] - got[i];
                let count = (j - i + 1) as u64;
                // count <= burst + window / period, in integers: count - burst tokens must have
                // been refilled within the window.
                prop_assert!(
                    count <= u64::from(burst) + window / period,
                    "{count} admitted within {window} ns (rate {rate}/s, burst {burst})"
                );
            }
        }
        // And the bucket is not stingier than that: every arrival finding a token is admitted,
        // so the first `burst` arrivals always pass.
        prop_assert!(got.len() >= times.len().min(burst as usize));
    }
}

#[test]
fn constant_overload_admits_burst_plus_rate_times_the_horizon() {
    // 1,000 a second offered to a bucket of 100 a second, burst 5, for 10 s: 5 + 100 x 10 =
    // 1,005 admitted, give or take the last token (±1).
    let s = common::run_first(
        r#"Scenario(
        name: "overload", horizon: "10s",
        fleet: (workers: (slots: 2000), pool: (max_connections: 2000, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Poisson(rate_per_s: 1000.0), deadline: "5s")],
        dependency: (latency: Constant("1ms")),
        policies: [(name: "p", stack: [(policy: RateLimit((rate_per_s: 100.0, burst: 5)))])],
    )"#,
    );
    let calls = s.dependency.calls as i64;
    assert!((calls - 1005).abs() <= 1, "{calls} calls");
    assert!(s.classes[0].outcomes.rejected > 8000, "{:?}", s.classes[0].outcomes);
}

#[test]
fn a_fleet_wide_bucket_is_shared_by_the_instances() {
    // Two instances, 50 a second each or one shared bucket of 50: over 10 s the fleet admits
    // about 2 x (5 + 500) per instance, or 5 + 500 shared.
    let run = |scope: &str| {
        common::run_first(&format!(
            r#"Scenario(
            name: "fleet", horizon: "10s",
            fleet: (instances: 2, workers: (slots: 2000), pool: (max_connections: 2000, acquire_timeout: "5s")),
            classes: [(name: "api", arrivals: Poisson(rate_per_s: 1000.0), deadline: "5s")],
            dependency: (latency: Constant("1ms")),
            policies: [(name: "p", stack: [(policy: RateLimit((rate_per_s: 50.0, burst: 5)){scope})])],
        )"#
        ))
        .dependency
        .calls as i64
    };
    let local = run("");
    assert!((local - 1010).abs() <= 2, "{local}");
    let shared = run(r#", scope: Fleet(propagation: "0ms")"#);
    assert!((shared - 505).abs() <= 1, "{shared}");
}

#[test]
fn bad_rates_and_bursts_are_refused_naming_the_field() {
    for (policy, field) in [
        ("RateLimit((rate_per_s: 0.0, burst: 1))", "RateLimit.rate_per_s"),
        ("RateLimit((rate_per_s: 2e9, burst: 1))", "RateLimit.rate_per_s"),
        ("RateLimit((rate_per_s: 10.0, burst: 0))", "RateLimit.burst"),
    ] {
        let text = format!(
            r#"Scenario(
            name: "bad", horizon: "1s",
            fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "5s")),
            classes: [(name: "api", arrivals: Poisson(rate_per_s: 1.0), deadline: "1s")],
            dependency: (latency: Constant("1ms")),
            policies: [(name: "p", stack: [(policy: {policy})])],
        )"#
        );
        let s = parse(Path::new("inline.ron"), &text).unwrap_or_else(|e| panic!("{e}"));
        let err = format!("{:?}", validate(&s).unwrap_err());
        assert!(err.contains(field), "{policy}: {err}");
    }
}
