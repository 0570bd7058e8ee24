//! Properties of whole runs on randomly generated small scenarios (proptest; failures are
//! persisted in `proptest-regressions/properties.txt`):
//! - conservation: arrivals = sum of outcomes + requests in flight at the horizon;
//! - limits: worker and pool peaks never exceed capacity, and with a limiter as the only
//!   layer the dependency never sees more calls than permits x instances;
//! - no panic on any generated scenario;
//! - determinism: the same (scenario, seed) gives the same summary and trace twice.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use brownout::model::{Model, RunOptions, RunResult, run_policy};
use brownout::policy::PolicySpec;
use brownout::policy::breaker::consecutive::ConsecutiveConfig;
use brownout::policy::limiter::fixed::{FixedConfig, RefuseAs};
use brownout::policy::retry::RetryConfig;
use brownout::policy::timeout::TimeoutConfig;
use brownout::scenario::*;

/// Cases per property; each case runs every policy set of its scenario (twice for the
/// determinism property).
const CASES: u32 = 96;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/properties.txt",
        ))),
        // Each shrink step reruns whole scenarios; cap the search rather than the test.
        max_shrink_time: 120_000,
        ..ProptestConfig::default()
    }
}

fn ms(lo: u64, hi: u64) -> impl Strategy<Value = Dur> {
    (lo..=hi).prop_map(Dur::ms)
}

fn latency() -> impl Strategy<Value = Latency> {
    prop_oneof![
        ms(0, 300).prop_map(Latency::Constant),
        ms(1, 300).prop_map(|mean| Latency::Exponential { mean }),
        (ms(1, 200), 0.0..2.0f64).prop_map(|(median, sigma)| Latency::LogNormal { median, sigma }),
    ]
}

fn arrivals() -> impl Strategy<Value = Arrivals> {
    prop_oneof![
        (0.0..300.0f64).prop_map(|rate_per_s| Arrivals::Poisson { rate_per_s }),
        prop::collection::vec(ms(0, 5_000), 1..40).prop_map(|mut t| {
            t.sort();
            Arrivals::Scripted { times: t }
        }),
        (1..20u32, ms(0, 500)).prop_map(|(users, think)| Arrivals::ClosedLoop { users, think }),
        (0.0..200.0f64, 0.0..400.0f64).prop_map(|(a, b)| Arrivals::PoissonProfile {
            points: vec![(Dur::ms(0), a), (Dur::secs(3), b)],
        }),
    ]
}

fn class(i: usize) -> impl Strategy<Value = Class> {
    (
        arrivals(),
        ms(1, 3_000),
        prop::bool::weighted(0.85),
        prop::option::weighted(0.2, latency()),
        prop_oneof![
            Just(Fallback::None),
            Just(Fallback::OnRefusal),
            Just(Fallback::OnRefusalOrFailure)
        ],
    )
        .prop_map(
            move |(arrivals, deadline, calls_dependency, work, fallback)| Class {
                name: format!("c{i}"),
                arrivals,
                deadline,
                calls_dependency,
                work,
                fallback,
                order_fraction: 0.5,
                priority: i as u32,
            },
        )
}

fn policy() -> impl Strategy<Value = PolicySpec> {
    prop_oneof![
        (ms(1, 500), ms(0, 20))
            .prop_map(|(timeout, unwind)| PolicySpec::Timeout(TimeoutConfig { timeout, unwind })),
        (1..4u32, ms(0, 100), 0.0..1.0f64, any::<bool>()).prop_map(
            |(max_attempts, backoff, jitter, on_timeout)| PolicySpec::Retry(RetryConfig {
                max_attempts,
                backoff,
                multiplier: 2.0,
                max_backoff: None,
                jitter,
                on_timeout,
            })
        ),
        (1..6u32, ms(1, 2_000), 1..3u32).prop_map(|(failures, break_duration, probes)| {
            PolicySpec::ConsecutiveBreaker(ConsecutiveConfig {
                failures,
                break_duration,
                probes,
            })
        }),
        limiter(),
    ]
}

fn limiter() -> impl Strategy<Value = PolicySpec> {
    (1..8u32, 0..4u32, ms(0, 200), any::<bool>()).prop_map(|(permits, queue, max_wait, fb)| {
        PolicySpec::Limiter(FixedConfig {
            permits,
            queue,
            max_wait,
            refuse_as: if fb {
                RefuseAs::Fallback
            } else {
                RefuseAs::Rejected
            },
        })
    })
}

fn stack() -> impl Strategy<Value = Vec<Layer>> {
    prop::collection::vec(
        policy().prop_map(|policy| Layer {
            policy,
            classes: vec![],
        }),
        0..4,
    )
}

fn dependency() -> impl Strategy<Value = Dependency> {
    (
        latency(),
        prop_oneof![
            Just(Drift::None),
            (ms(0, 5_000), 0.5..20.0f64).prop_map(|(at, factor)| Drift::Step { at, factor }),
        ],
        0.0..0.5f64,
        prop::option::of((1..10u32, 0..20u32)),
        prop::option::weighted(0.3, ms(0, 4_000)),
        ms(0, 5),
    )
        .prop_map(|(latency, drift, err, cap, outage, hop)| Dependency {
            name: "dep".into(),
            latency,
            drift,
            error_rate: Profile::Constant(err),
            modes: outage
                .map(|at| {
                    vec![
                        ModeChange {
                            at,
                            mode: Mode::Unavailable,
                        },
                        ModeChange {
                            at: Dur(at.ns() + 1_000_000_000),
                            mode: Mode::Healthy,
                        },
                    ]
                })
                .unwrap_or_default(),
            capacity: cap.map(|(servers, queue)| Capacity { servers, queue }),
            hop,
        })
}

fn fleet() -> impl Strategy<Value = Fleet> {
    (
        1..4u32,
        1..30u32,
        0..10u32,
        prop::option::of(ms(0, 500)),
        1..12u32,
        ms(0, 500),
        ms(0, 10),
    )
        .prop_map(
            |(instances, slots, queue, max_wait, max_connections, acquire, overhead)| Fleet {
                instances,
                workers: Workers {
                    slots,
                    queue,
                    max_wait,
                },
                pool: Pool {
                    max_connections,
                    acquire_timeout: acquire,
                },
                overhead,
            },
        )
}

/// A small scenario (warm-up 0, so every arrival is measured) with 1-3 policy sets.
fn scenario(first_stack: BoxedStrategy<Vec<Layer>>) -> impl Strategy<Value = Scenario> {
    (
        ms(500, 8_000),
        fleet(),
        prop::collection::vec(0..2usize, 1..=2).prop_flat_map(|v| {
            v.iter()
                .enumerate()
                .map(|(i, _)| class(i))
                .collect::<Vec<_>>()
        }),
        dependency(),
        first_stack,
        prop::collection::vec(stack(), 0..2),
        any::<bool>(),
    )
        .prop_map(|(horizon, fleet, classes, dependency, first, more, cat)| {
            let mut policies = vec![PolicySet {
                name: "p0".into(),
                stack: first,
            }];
            for (i, stack) in more.into_iter().enumerate() {
                policies.push(PolicySet {
                    name: format!("p{}", i + 1),
                    stack,
                });
            }
            Scenario {
                name: "prop".into(),
                description: String::new(),
                seed: 1,
                horizon,
                warmup: Dur(0),
                window: Dur::ms(500),
                fleet,
                classes,
                dependency,
                catalogue: cat.then(|| Catalogue {
                    items: 50,
                    zipf: 1.0,
                    changes_per_hour: 600.0,
                    ttl: Some(Dur::secs(2)),
                    shared_cache: false,
                    prewarm: true,
                }),
                business: None,
                policies,
                expect: vec![],
                limits: Limits::default(),
            }
        })
}

fn run_all(s: &Scenario, seed: u64) -> Vec<RunResult> {
    validate(s).unwrap_or_else(|e| panic!("generated scenario must be valid: {e:?}"));
    let model = Model::build(s, seed, Path::new(".")).expect("builds");
    (0..s.policies.len())
        .map(|p| run_policy(&model, p, RunOptions::default()))
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn conservation_and_capacity(s in scenario(stack().boxed()), seed in any::<u64>()) {
        for r in run_all(&s, seed) {
            let sum = &r.summary;
            prop_assert!(r.aborted.is_none(), "{:?}", r.aborted);
            let finished: u64 = sum.classes.iter().map(|c| c.outcomes.total()).sum();
            prop_assert_eq!(r.requests, finished + sum.in_flight_at_end,
                "policy {}: arrivals = outcomes + in flight", sum.policy);
            let requests: u64 = sum.classes.iter().map(|c| c.requests).sum();
            prop_assert_eq!(requests, finished);
            prop_assert!(sum.resources.workers.peak <= s.fleet.workers.slots as u64);
            prop_assert!(sum.resources.pool.peak <= s.fleet.pool.max_connections as u64);
        }
    }

    #[test]
    fn a_lone_limiter_bounds_the_dependency(s in scenario(limiter().prop_map(|policy| {
        vec![Layer { policy, classes: vec![] }]
    }).boxed()), seed in any::<u64>()) {
        let permits = match &s.policies[0].stack[0].policy {
            PolicySpec::Limiter(c) => c.permits as u64,
            _ => unreachable!("the first stack is a lone limiter"),
        };
        let r = &run_all(&s, seed)[0];
        // Each admitted attempt holds its permit until its call completes (no timeout
        // layer abandons a call), so calls in flight <= permits on every instance.
        prop_assert!(r.summary.dependency.peak_in_flight <= permits * s.fleet.instances as u64,
            "peak {} > {} permits x {} instances",
            r.summary.dependency.peak_in_flight, permits, s.fleet.instances);
    }

    #[test]
    fn same_scenario_and_seed_give_the_same_summary(s in scenario(stack().boxed()), seed in any::<u64>()) {
        let a = run_all(&s, seed);
        let b = run_all(&s, seed);
        for (x, y) in a.iter().zip(&b) {
            prop_assert_eq!(x.trace_hash, y.trace_hash);
            // JSON, so that a NaN would compare equal to itself rather than hide behind f64's ==.
            prop_assert_eq!(
                serde_json::to_string(&x.summary).unwrap(),
                serde_json::to_string(&y.summary).unwrap()
            );
        }
    }
}
