//! Limiter, bulkhead and retry-budget semantics checked against the libraries' published
//! formulas worked by hand. Index:
//! - aimd_*, vegas_*, gradient2_*: sample sequences and their limits.
//! - envoy_*: the gradient controller's min_rtt window, periodic update and re-measurement.
//! - bulkhead_*: partition guarantee and borrowing, Wait vs FallbackNow, latency trip, probe.
//! - tps_*, grpc_*, adaptive_*: retry-budget token arithmetic.
//! - prop_*: limits are never exceeded.

use brownout::engine::{MILLISECOND, SECOND, Time};
use brownout::policy::limiter::aimd::AimdConfig;
use brownout::policy::limiter::envoy_gradient::{EnvoyGradient, EnvoyGradientConfig};
use brownout::policy::limiter::fixed::RefuseAs;
use brownout::policy::limiter::gate::{LimitAlgorithm, Sample};
use brownout::policy::limiter::gradient2::{Gradient2, Gradient2Config};
use brownout::policy::limiter::vegas::{Vegas, VegasConfig};
use brownout::policy::{
    Admission, Attempt, BuildCtx, CallOutcome, ClassId, Completed, Policy, PolicySpec, Refusal, RetryAsk,
};
use brownout::scenario::Dur;
use proptest::prelude::*;

fn att(now: Time, id: u64, class: ClassId) -> Attempt {
    Attempt::new(now, class, id)
}

fn done(now: Time, id: u64, class: ClassId, admitted_at: Time, outcome: CallOutcome) -> Completed {
    Completed::new(now, class, id, admitted_at, outcome)
}

fn sample(rtt_ms: u64, inflight: u32, did_drop: bool) -> Sample {
    Sample { now: 0, start: 0, rtt: rtt_ms * MILLISECOND, inflight, did_drop }
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

// ---- Vegas -------------------------------------------------------------------------

fn vegas(smoothing: f64) -> Vegas {
    let cfg = VegasConfig {
        initial_limit: 20,
        max_concurrency: 1000,
        smoothing,
        probe_multiplier: 1000, // no probe within these sequences (>= 0.5*1000*20 samples)
        queue: 0,
        max_wait: Dur::ms(0),
        refuse_as: RefuseAs::Rejected,
    };
    Vegas::limiter(&cfg, &BuildCtx::default()).algorithm().clone()
}

#[test]
fn vegas_sequence_matches_the_published_rules() {
    let mut v = vegas(1.0);
    v.update(&sample(100, 20, false)); // first sample: rtt_noload = 100 ms, limit held
    assert_eq!(v.limit(), 20.0);
    // queue = ceil(20 * (1 - 100/100)) = 0 <= threshold 1 -> + beta (6 * 1) = 26.
    v.update(&sample(100, 20, false));
    assert_eq!(v.limit(), 26.0);
    // queue = ceil(26 * (1 - 100/200)) = 13 > beta 6 -> - 1 = 25.
    v.update(&sample(200, 26, false));
    assert_eq!(v.limit(), 25.0);
    // queue = ceil(25 * (1 - 100/125)) = 5: 3 <= 5 <= 6 -> hold.
    v.update(&sample(125, 25, false));
    assert_eq!(v.limit(), 25.0);
    // queue = ceil(25 * (1 - 100/105)) = ceil(1.19) = 2: 1 < 2 < 3 -> + 1 = 26.
    v.update(&sample(105, 25, false));
    assert_eq!(v.limit(), 26.0);
    // A drop decreases by log10root(26) = 1.
    v.update(&sample(100, 26, true));
    assert_eq!(v.limit(), 25.0);
    // App-limited: 12 * 2 < 25 -> hold even with no queue.
    v.update(&sample(100, 12, false));
    assert_eq!(v.limit(), 25.0);
}

#[test]
fn vegas_smoothing_blends_old_and_new() {
    let mut v = vegas(0.5);
    v.update(&sample(100, 20, false));
    // Target 26 -> 0.5 * 20 + 0.5 * 26 = 23.
    v.update(&sample(100, 20, false));
    assert_eq!(v.limit(), 23.0);
}

// ---- Gradient2 ---------------------------------------------------------------------

#[test]
fn gradient2_sequence_matches_the_published_formula() {
    let cfg: Gradient2Config = ron("(min_limit: 1)");
    let mut g: Gradient2 = Gradient2::limiter(&cfg).algorithm().clone();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    // long = 100; gradient = min(1, 1.5) = 1; 20*0.8 + (20+4)*0.2 = 20.8.
    g.update(&sample(100, 20, false));
    assert!(close(g.estimated(), 20.8), "{}", g.estimated());
    // long = 200; gradient = min(1, 1.5*200/300) = 1; 20.8*0.8 + 24.8*0.2 = 21.6.
    g.update(&sample(300, 20, false));
    assert!(close(g.estimated(), 21.6), "{}", g.estimated());
    // long = 1300/3; gradient = 1.5*(1300/3)/900 = 13/18; new = 21.6*13/18 + 4 = 19.6;
    // 21.6*0.8 + 19.6*0.2 = 21.2. didDrop is ignored.
    g.update(&sample(900, 21, true));
    assert!(close(g.estimated(), 21.2), "{}", g.estimated());
    // long = 1310/4 = 327.5 > 2 * 10 -> decays to 311.125; app-limited (5 < 10.6): hold.
    g.update(&sample(10, 5, false));
    assert!(close(g.estimated(), 21.2));
    assert!((g.long_rtt() - 311.125 * MILLISECOND as f64).abs() < 1e-3);
    // Warm-up mean ignores the decay: long = 2110/5 = 422; gradient = 1.5*422/800 = 0.79125;
    // new = 21.2*0.79125 + 4 = 20.7745; 21.2*0.8 + 20.7745*0.2 = 21.1149.
    g.update(&sample(800, 21, false));
    assert!(close(g.estimated(), 21.1149), "{}", g.estimated());
    assert_eq!(g.limit(), 21.0);
}

// ---- Envoy gradient controller ---------------------------------------------------

fn envoy() -> EnvoyGradient {
    let cfg: EnvoyGradientConfig = ron(r#"(concurrency_update_interval: "100ms", min_rtt_calc_interval: "60s",
            request_count: 5, jitter: 0.0)"#);
    EnvoyGradient::new(&cfg, &BuildCtx::default())
}

/// Admit one attempt at `at` and complete it `rtt_us` microseconds later.
fn envoy_call(e: &mut EnvoyGradient, id: u64, at: Time, rtt_us: u64) {
    assert_eq!(e.admit(&att(at, id, 0)), Admission::Admit);
    e.complete(&done(at + rtt_us * 1000, id, 0, at, CallOutcome::Success));
}

#[test]
fn envoy_min_rtt_window_then_gradient_updates() {
    let mut e = envoy();
    for id in 1..=3 {
        assert_eq!(e.admit(&att(0, id, 0)), Admission::Admit);
    }
    // The min_rtt window pins the limit to min_concurrency = 3.
    assert_eq!(e.admit(&att(0, 4, 0)), Admission::Refuse(Refusal::Rejected));
    assert!(e.in_min_rtt_window());
    for id in 1..=3 {
        e.complete(&done(MILLISECOND, id, 0, 0, CallOutcome::Success));
    }
    envoy_call(&mut e, 5, MILLISECOND, 1000);
    envoy_call(&mut e, 6, MILLISECOND, 1000); // 5th sample ends the window at 2 ms
    assert!(!e.in_min_rtt_window());
    assert_eq!(e.min_rtt(), brownout::units::Micros(1000));
    assert_eq!(e.limit(), 3);
    assert_eq!(e.status().wake_at, Some(102 * MILLISECOND));
    // Sample 1000 us: gradient = 1250/1000 = 1.25; 3*1.25 = 3.75; + sqrt(3.75) = 5.69 -> 5.
    envoy_call(&mut e, 7, 10 * MILLISECOND, 1000);
    e.on_wakeup(102 * MILLISECOND);
    assert_eq!(e.limit(), 5);
    // Sample 2000 us: gradient 0.625; 3.125 + sqrt(3.125) = 4.89 -> 4.
    envoy_call(&mut e, 8, 110 * MILLISECOND, 2000);
    e.on_wakeup(202 * MILLISECOND);
    assert_eq!(e.limit(), 4);
    // No samples: no change.
    e.on_wakeup(302 * MILLISECOND);
    assert_eq!(e.limit(), 4);
}

#[test]
fn envoy_remeasures_min_rtt_after_five_updates_at_the_minimum() {
    let mut e = envoy();
    for id in 1..=5 {
        envoy_call(&mut e, id, 0, 1000);
    }
    // The window ended at 1 ms, so the updates fall at 101 ms, 201 ms, ...
    assert_eq!(e.limit(), 3);
    let mut t = 101 * MILLISECOND;
    // 10 ms samples: gradient clamps to 0.5; 3*0.5 + sqrt(1.5) = 2.72 -> clamped to 3.
    for (id, k) in (100..).zip(1..=5) {
        envoy_call(&mut e, id, t - 20 * MILLISECOND, 10_000);
        e.on_wakeup(t);
        assert_eq!(e.limit(), 3);
        if k < 5 {
            assert_eq!(e.status().wake_at, Some(t + 100 * MILLISECOND));
        }
        t += 100 * MILLISECOND;
    }
    let fifth = t - 100 * MILLISECOND;
    // The fifth update at the minimum asks for a min_rtt window at once.
    assert_eq!(e.status().wake_at, Some(fifth));
    e.on_wakeup(fifth);
    assert!(e.in_min_rtt_window());
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
