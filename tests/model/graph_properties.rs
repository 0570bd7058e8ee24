//! Properties of generated service graphs (issue 33): the scenarios of `properties.rs` with
//! one to four dependencies and a call plan per calling class (one to three steps, groups of
//! up to eight calls joined by All, First or Quorum, optional calls among them), restarts
//! and phases included. Every request is counted once (arrivals = outcomes + in flight; each
//! judged request in time or under one cause), and no attempt of any call outlives the
//! per-attempt timeout.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use brownout::scenario::*;

use crate::properties::{attempt_limit, count, recorded, run_all, scenario, stack, timed_stack};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/graph.txt"))),
        max_shrink_time: 120_000,
        ..ProptestConfig::default()
    }
}

/// One call to one of `deps` dependencies, optional or not.
fn call(deps: usize) -> impl Strategy<Value = Step> {
    (0..deps, any::<bool>(), 0..5u64).prop_map(|(d, optional, cost)| {
        let dependency = format!("d{d}");
        if optional { Step::Optional { dependency, cost: Dur::ms(cost) } } else { Step::Call(dependency) }
    })
}

/// One step: a call, or a group of 1 to 8 calls with a join its group can reach.
fn step(deps: usize) -> impl Strategy<Value = Step> {
    prop_oneof![
        call(deps),
        (prop::collection::vec(call(deps), 1..=8), 0..3u8, any::<prop::sample::Index>()).prop_map(|(calls, j, k)| {
            let join = match j {
                0 => Join::All,
                1 => Join::First,
                _ => Join::Quorum(k.index(calls.len()) as u32 + 1),
            };
            Step::Parallel { join, calls }
        }),
    ]
}

/// `s` with its dependency made into `n` named copies (each slowed differently), a plan
/// for every class that calls, and maybe a restart of instance 0 (its calls in flight end
/// with their requests).
fn graph(s: Scenario) -> impl Strategy<Value = Scenario> {
    (1..=4usize).prop_flat_map(move |n| {
        let s = s.clone();
        let plans = prop::collection::vec(prop::collection::vec(step(n), 1..=3), s.classes.len());
        let restart = prop::option::of(1..10u64);
        (plans, prop::collection::vec(0.5..3.0f64, n), restart).prop_map(move |(plans, factors, restart)| {
            let mut s = s.clone();
            if let Some(k) = restart {
                let mut r: Restart = crate::properties::ron(r#"(at: "1ms", instances: [0])"#);
                r.at = Dur(s.horizon.ns() * k / 10);
                s.fleet.restarts = vec![r];
            }
            s.dependencies = factors
                .iter()
                .enumerate()
                .map(|(k, &factor)| {
                    let mut d = s.dependency.clone();
                    d.name = format!("d{k}");
                    if d.drift == Drift::None {
                        d.drift = Drift::Step { at: Dur(0), factor };
                    }
                    d
                })
                .collect();
            s.dependency = Dependency::absent();
            for (c, plan) in s.classes.iter_mut().zip(plans) {
                if c.calls_dependency {
                    c.calls = plan;
                }
            }
            s
        })
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_request_counts_once_and_causes_sum_to_the_failures(s in scenario(stack().boxed()).prop_flat_map(graph), seed in any::<u64>()) {
        for r in run_all(&s, seed) {
            counts_once(&s, &r)?;
            let sum = &r.summary;
            for d in &sum.dependencies {
                prop_assert!(d.peak_in_flight <= sum.dependency.peak_in_flight, "{}", d.name);
            }
            prop_assert!(sum.resources.workers.peak <= s.fleet.workers.slots as u64);
            prop_assert!(sum.resources.pool.peak <= s.fleet.pool.max_connections as u64);
        }
    }

    #[test]
    fn no_attempt_of_any_call_outlives_its_timeout(
        s in scenario(timed_stack().boxed()).prop_flat_map(graph),
        seed in any::<u64>(),
    ) {
        let runs = recorded(&s, seed);
        for (set, r) in s.policies.iter().zip(&runs) {
            let Some(limit) = attempt_limit(&set.stack, s.fleet.pool.acquire_timeout.ns()) else { continue };
            for a in &r.attempts {
                prop_assert!(a.end - a.start <= limit,
                    "policy {}: attempt {:?} lasted {} ns > timeout {} ns", set.name, a, a.end - a.start, limit);
            }
        }
    }
}

/// Every arrival of run `r` of `s` ends under one outcome or is still in flight (calls of
/// plans and services' requests are no requests: they never count here), the judged are the
/// finished and those out at the horizon past their deadline, the causes keyed by dependency
/// are the same causes field by field, and per dependency the attempts and abandoned sum to
/// the summed block. Shared with tests/model/service_properties.rs.
pub(crate) fn counts_once(s: &Scenario, r: &brownout::model::RunResult) -> Result<(), TestCaseError> {
    let sum = &r.summary;
    let finished: u64 = sum.classes.iter().map(|c| c.outcomes.total()).sum();
    prop_assert_eq!(r.requests, finished + sum.in_flight_at_end, "policy {}", sum.policy);
    let requests: u64 = sum.classes.iter().map(|c| c.requests).sum();
    let unfinished: u64 = sum.classes.iter().map(|c| count(&c.causes, "/unfinished")).sum();
    prop_assert_eq!(requests, finished + unfinished);
    for c in &sum.classes {
        prop_assert_eq!(c.requests, c.in_time + c.causes.total(), "class {}", c.class);
        let by_dep = serde_json::to_value(c.causes_by_dependency.iter().map(|d| d.causes).collect::<Vec<_>>()).unwrap();
        let causes = serde_json::to_value(c.causes).unwrap();
        for (field, n) in causes.as_object().unwrap() {
            // A cause that is 0 may be left out (`no_live_upstream`, `connect_timeout`).
            let sum: u64 = by_dep.as_array().unwrap().iter().map(|d| d[field].as_u64().unwrap_or(0)).sum();
            prop_assert_eq!(sum, n.as_u64().unwrap(), "class {} cause {}", c.class, field);
        }
    }
    prop_assert_eq!(sum.dependencies.len(), s.dependencies.len());
    prop_assert_eq!(sum.dependencies.iter().map(|d| d.attempts).sum::<u64>(), sum.dependency.calls);
    prop_assert_eq!(sum.dependencies.iter().map(|d| d.abandoned).sum::<u64>(), sum.dependency.abandoned);
    Ok(())
}
