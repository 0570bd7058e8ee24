//! Limiter, bulkhead and retry-budget semantics checked against the libraries' published
//! formulas worked by hand. Index:
//! - aimd_*: a sample sequence through the gate and its limits. The algorithms' own sequences
//!   (Vegas, Gradient2, Envoy's gradient controller) are unit tests beside each algorithm,
//!   since their state machines are crate-private.
//! - bulkhead_*: partition guarantee and borrowing, Wait vs FallbackNow, latency trip, probe.
//! - tps_*, grpc_*, adaptive_*: retry-budget token arithmetic.
//! - prop_*: limits are never exceeded.

use brownout::engine::{MILLISECOND, SECOND, Time};
use brownout::policy::limiter::aimd::AimdConfig;
use brownout::policy::{
    Admission, Attempt, BuildCtx, CallOutcome, ClassId, Completed, Policy, PolicySpec, Refusal, RetryAsk,
};
use proptest::prelude::*;

fn att(now: Time, id: u64, class: ClassId) -> Attempt {
    Attempt::new(now, class, id)
}

fn done(now: Time, id: u64, class: ClassId, admitted_at: Time, outcome: CallOutcome) -> Completed {
    Completed::new(now, class, id, admitted_at, outcome)
}

fn ask(now: Time) -> RetryAsk {
    RetryAsk::new(now, 0, 1, CallOutcome::Error, 0.5)
}

fn ron<T: serde::de::DeserializeOwned>(s: &str) -> T {
    ron::from_str(s).expect("valid RON")
}

fn limit(p: &dyn Policy) -> f64 {
    p.status().limit.expect("limiters report a limit")
}

// ---- AIMD --------------------------------------------------------------------------

#[test]
fn aimd_through_the_gate_increases_when_used_and_backs_off_on_timeout() {
    let cfg: AimdConfig = ron("(initial_limit: 4, min_limit: 1, max_limit: 10)");
    let mut p = PolicySpec::Aimd(cfg).build(&BuildCtx::default());
    for id in 0..4 {
        assert_eq!(p.admit(&att(0, id, 0)), Admission::Admit);
    }
    assert_eq!(p.admit(&att(0, 9, 0)), Admission::Refuse(Refusal::Rejected));
    // Attempt 0 was admitted with 1 in flight: 1*2 < 4 -> hold.
    p.complete(&done(MILLISECOND, 0, 0, 0, CallOutcome::Success));
    assert_eq!(limit(&*p), 4.0);
    // Attempt 2 was admitted with 3 in flight: 6 >= 4 -> 5.
    p.complete(&done(MILLISECOND, 2, 0, 0, CallOutcome::Success));
    assert_eq!(limit(&*p), 5.0);
    // A timeout is a drop: floor(5 * 0.9) = 4.
    p.complete(&done(MILLISECOND, 3, 0, 0, CallOutcome::Timeout));
    assert_eq!(limit(&*p), 4.0);
    // Refused downstream (cancel) is a drop too: floor(3.6) = 3.
    p.cancel(&att(MILLISECOND, 1, 0));
    assert_eq!(limit(&*p), 3.0);
}

// ---- Tiered bulkhead --------------------------------------------------------------

fn ctx() -> BuildCtx {
    BuildCtx::new(vec!["checkout".into(), "browse".into()])
}
const CHECKOUT: ClassId = 0;
const BROWSE: ClassId = 1;

fn bulkhead(extra: &str) -> Box<dyn Policy> {
    let spec: PolicySpec = ron(&format!(
        r#"TieredBulkhead((permits: 10, classes: [
            (name: "checkout", share: 0.3, borrow: false, on_full: Wait("1s")),
            (name: "browse", share: 0.7, on_full: FallbackNow),
        ]{extra}))"#
    ));
    spec.validate(&["checkout", "browse"]).expect("valid");
    spec.build(&ctx())
}

#[test]
fn bulkhead_borrowing_stops_at_the_total_and_checkout_waits_for_the_next_permit() {
    let mut b = bulkhead("");
    // Browse borrows idle permits beyond its ceil(10*0.7) = 7 up to the total of 10.
    for id in 0..10 {
        assert_eq!(b.admit(&att(0, id, BROWSE)), Admission::Admit);
    }
    assert_eq!(b.admit(&att(0, 10, BROWSE)), Admission::Refuse(Refusal::Fallback));
    // Checkout is below its share but the total is full: it waits (hard total).
    assert_eq!(b.admit(&att(0, 11, CHECKOUT)), Admission::Wait { max_wait: SECOND });
    b.complete(&done(MILLISECOND, 0, BROWSE, 0, CallOutcome::Success));
    assert_eq!(b.admit(&att(MILLISECOND, 11, CHECKOUT)), Admission::Admit);
}

#[test]
fn bulkhead_without_borrowing_holds_a_class_to_its_share() {
    let mut b = bulkhead("");
    // Checkout (borrow: false) gets ceil(10*0.3) = 3 even with 7 permits idle.
    for id in 0..3 {
        assert_eq!(b.admit(&att(0, id, CHECKOUT)), Admission::Admit);
    }
    assert_eq!(b.admit(&att(0, 3, CHECKOUT)), Admission::Wait { max_wait: SECOND });
    // Browse still has its 7.
    for id in 10..17 {
        assert_eq!(b.admit(&att(0, id, BROWSE)), Admission::Admit);
    }
}

#[test]
fn bulkhead_trips_after_three_slow_windows_and_recovers_through_one_fast_probe() {
    let mut b = bulkhead(r#", degrade: Some((window: "1s", p95_over: "1s", windows: 3, recovery: "5s"))"#);
    assert_eq!(b.admit(&att(0, 1, CHECKOUT)), Admission::Admit);
    assert_eq!(b.status().wake_at, Some(SECOND), "windows start at the first attempt");
    b.admit(&att(0, 2, CHECKOUT));
    b.admit(&att(0, 3, CHECKOUT));
    b.on_wakeup(SECOND); // empty window: count unchanged
    // One slow completion (duration 1.5 s, 2.5 s, 3.5 s > 1 s) in each of the next windows.
    for (k, id) in [(2u64, 1u64), (3, 2), (4, 3)] {
        let t = k * SECOND;
        b.complete(&done(t - SECOND / 2, id, CHECKOUT, 0, CallOutcome::Success));
        assert!(!b.status().degraded, "not before window {k} closes");
        b.on_wakeup(t);
    }
    assert!(b.status().degraded);
    assert_eq!(b.status().wake_at, None);
    let t = 4 * SECOND;
    // Degraded: browse falls back at once, checkout keeps calling.
    assert_eq!(b.admit(&att(t + SECOND / 2, 10, BROWSE)), Admission::Refuse(Refusal::Fallback));
    assert_eq!(b.admit(&att(t + SECOND / 2, 11, CHECKOUT)), Admission::Admit);
    // After recovery (5 s) exactly one browse request is the probe.
    assert_eq!(b.admit(&att(9 * SECOND, 12, BROWSE)), Admission::Admit);
    assert_eq!(b.admit(&att(9 * SECOND, 13, BROWSE)), Admission::Refuse(Refusal::Fallback));
    // A slow probe (3 s) keeps it degraded for another 5 s.
    b.complete(&done(12 * SECOND, 12, BROWSE, 9 * SECOND, CallOutcome::Success));
    assert!(b.status().degraded);
    assert_eq!(b.admit(&att(16 * SECOND, 14, BROWSE)), Admission::Refuse(Refusal::Fallback));
    assert_eq!(b.admit(&att(17 * SECOND, 15, BROWSE)), Admission::Admit);
    // A fast probe ends degradation and restarts the windows.
    let end = 17 * SECOND + 200 * MILLISECOND;
    b.complete(&done(end, 15, BROWSE, 17 * SECOND, CallOutcome::Success));
    assert!(!b.status().degraded);
    assert_eq!(b.status().wake_at, Some(end + SECOND));
    assert_eq!(b.admit(&att(end, 16, BROWSE)), Admission::Admit);
}

#[test]
fn bulkhead_rejects_unknown_class_names() {
    let spec: PolicySpec =
        ron(r#"TieredBulkhead((permits: 4, classes: [(name: "chekout", share: 0.5, on_full: FallbackNow)]))"#);
    let err = spec.validate(&["checkout", "browse"]).unwrap_err().message;
    assert!(err.contains("TieredBulkhead.classes") && err.contains("chekout"), "{err}");
}

// ---- Retry budgets ---------------------------------------------------------------

#[test]
fn tps_budget_reserve_plus_twenty_percent_of_deposits() {
    // ttl 10 s, 1/s, 20 %: deposit 1, withdraw 5, reserve 1*10*5 = 50.
    let spec: PolicySpec = ron(r#"RetryBudget((ttl: "10s", min_per_sec: 1, retry_percent: 0.2))"#);
    let mut fresh = spec.build(&BuildCtx::default());
    let allowed = (0..20).filter(|_| fresh.allow_retry(&ask(0))).count();
    assert_eq!(allowed, 10, "reserve only: 50 / 5");

    let mut b = spec.build(&BuildCtx::default());
    for _ in 0..20 {
        b.on_request(0, 0);
    }
    // 9.5 s later the deposits still count: (50 + 20) / 5 = 14.
    let allowed = (0..20).filter(|_| b.allow_retry(&ask(9_500 * MILLISECOND))).count();
    assert_eq!(allowed, 14);

    let mut late = spec.build(&BuildCtx::default());
    for _ in 0..20 {
        late.on_request(0, 0);
    }
    // 10.5 s later they have expired: back to the reserve.
    let allowed = (0..20).filter(|_| late.allow_retry(&ask(10_500 * MILLISECOND))).count();
    assert_eq!(allowed, 10);
}

#[test]
fn grpc_throttle_allows_retries_only_above_half() {
    let spec: PolicySpec = ron("GrpcThrottle((max_tokens: 10, token_ratio: 0.1))");
    let mut g = spec.build(&BuildCtx::default());
    let fail = |g: &mut Box<dyn Policy>, id| {
        g.complete(&done(0, id, 0, 0, CallOutcome::Error));
    };
    for id in 0..4 {
        fail(&mut g, id);
    }
    assert!(g.allow_retry(&ask(0)), "10 - 4 = 6 > 5");
    fail(&mut g, 4);
    assert!(!g.allow_retry(&ask(0)), "5 is not > 5");
    g.complete(&done(0, 5, 0, 0, CallOutcome::Success));
    assert!(g.allow_retry(&ask(0)), "5.1 > 5");
    // Successes cap at max: 20 of them give 10, then 5 failures leave 5.
    for id in 0..20 {
        g.complete(&done(0, id, 0, 0, CallOutcome::Success));
    }
    for id in 0..5 {
        fail(&mut g, id);
    }
    assert!(!g.allow_retry(&ask(0)));
}

#[test]
fn adaptive_retry_bucket_spends_and_refills() {
    let spec: PolicySpec = ron("AdaptiveRetry(())");
    let mut a = spec.build(&BuildCtx::default());
    // Full bucket 5: retries while > 1: 5 -> 4 -> 3 -> 2 -> 1, then refused.
    let allowed = (0..10).filter(|_| a.allow_retry(&ask(0))).count();
    assert_eq!(allowed, 4);
    // Ten requests add 10 * 0.1 = 1 -> 2: one more retry.
    for _ in 0..10 {
        a.on_request(0, 0);
    }
    assert!(a.allow_retry(&ask(0)));
    assert!(!a.allow_retry(&ask(0)));
}

// ---- Properties --------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Admit,
    Finish { pick: usize, rtt_ms: u64, outcome: u8 },
    Cancel { pick: usize },
    Wake,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Admit),
        3 => (any::<usize>(), 1u64..8000, 0u8..3)
            .prop_map(|(pick, rtt_ms, outcome)| Op::Finish { pick, rtt_ms, outcome }),
        1 => any::<usize>().prop_map(|pick| Op::Cancel { pick }),
        1 => Just(Op::Wake),
    ]
}

/// Drive a policy with `ops`; `check` sees (in flight, policy) after every admission.
fn drive(p: &mut dyn Policy, ops: &[Op], classes: u16, check: &dyn Fn(usize, &dyn Policy)) {
    let mut open: Vec<(u64, Time, ClassId)> = Vec::new();
    let (mut now, mut next) = (0, 0u64);
    for o in ops {
        now += MILLISECOND;
        match *o {
            Op::Admit => {
                let class = (next % classes as u64) as ClassId;
                if p.admit(&att(now, next, class)) == Admission::Admit {
                    open.push((next, now, class));
                    check(open.len(), p);
                }
                next += 1;
            }
            Op::Finish { pick, rtt_ms, outcome } if !open.is_empty() => {
                let (id, at, class) = open.remove(pick % open.len());
                let outcome = [CallOutcome::Success, CallOutcome::Error, CallOutcome::Timeout][outcome as usize];
                now = now.max(at + rtt_ms * MILLISECOND);
                p.complete(&done(now, id, class, at, outcome));
            }
            Op::Cancel { pick } if !open.is_empty() => {
                let (id, _, class) = open.remove(pick % open.len());
                p.cancel(&att(now, id, class));
            }
            Op::Wake => {
                if let Some(t) = p.status().wake_at {
                    now = now.max(t);
                    p.on_wakeup(now);
                }
            }
            _ => {}
        }
    }
}

fn limiters() -> Vec<PolicySpec> {
    vec![
        ron("Aimd((initial_limit: 5, min_limit: 1, max_limit: 12))"),
        ron("Vegas((initial_limit: 5, max_concurrency: 12, probe_multiplier: 2))"),
        ron("Gradient2((initial_limit: 5, min_limit: 2, max_concurrency: 12))"),
        ron(r#"EnvoyGradient((concurrency_update_interval: "5ms", min_rtt_calc_interval: "1s",
                request_count: 3, max_concurrency_limit: 12))"#),
    ]
}

proptest! {
    #[test]
    fn prop_a_limiter_never_admits_beyond_its_floored_limit(ops in prop::collection::vec(op(), 1..300)) {
        for spec in limiters() {
            let mut p = spec.build(&BuildCtx::default());
            drive(&mut *p, &ops, 1, &|n, p| {
                let lim = p.status().limit.unwrap().floor() as usize;
                assert!(n <= lim, "{}: {n} in flight, limit {lim}", spec.kind());
            });
        }
    }

    #[test]
    fn prop_the_bulkhead_never_exceeds_its_permits(ops in prop::collection::vec(op(), 1..300)) {
        let mut b = bulkhead(r#", degrade: Some((window: "20ms", p95_over: "1s", windows: 2, recovery: "50ms"))"#);
        drive(&mut *b, &ops, 3, &|n, _| assert!(n <= 10, "{n} in flight of 10 permits"));
    }
}
