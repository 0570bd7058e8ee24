//! Services that call services, simulated (issue 33): each figure here comes from a closed
//! form or a hand count, never from a run of brownout.
//! - Retries multiply through the layers: r retries at each of L layers give (r + 1)^L
//!   attempts at the bottom when every attempt fails.
//! - A chain is a sum: the caller waits its hop, the service's own work, the leaf's hop and
//!   the leaf's latency.
//! - A service's worker slots are an Erlang loss system when nothing waits: with Poisson
//!   calls at λ and mean time in the service 1/μ, the share refused is B(1, ρ) = ρ / (1 + ρ).
//! - Little's law per service: mean calls in it = calls per second × mean time per call.
//! - A caller that gives up cancels the service's calls below when cancellation propagates.

use crate::common;
use brownout::metrics::summary::{DependencyFigures, RunSummary};

fn dep<'a>(s: &'a RunSummary, name: &str) -> &'a DependencyFigures {
    s.dependencies.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("no dependency {name}"))
}

/// A gateway whose one class calls `s0`, a chain of `levels` services `s0 -> s1 -> ..` down
/// to `db`, which fails every call; a `Retry` of 3 attempts at the gateway and in every
/// service.
fn failing_chain(levels: usize) -> String {
    let retry = "[(policy: Retry((max_attempts: 3)))]";
    let mut deps = String::new();
    for k in 0..levels {
        let below = if k + 1 == levels { "db".to_string() } else { format!("s{}", k + 1) };
        deps += &format!(
            r#"(name: "s{k}", latency: Constant("1ms"), service: (workers: (slots: 1000), stack: {retry}, calls: [Call("{below}")])),"#
        );
    }
    format!(
        r#"Scenario(
    name: "chain", horizon: "200s", seed: 3,
    fleet: (workers: (slots: 1000), pool: (max_connections: 1000, acquire_timeout: "1s")),
    classes: [(name: "page", arrivals: Poisson(rate_per_s: 10), deadline: "10s", calls: [Call("s0")])],
    dependencies: [{deps} (name: "db", latency: Constant("1ms"), error_rate: Constant(1.0))],
    policies: [(name: "retries everywhere", stack: {retry})],
)"#
    )
}

#[test]
fn retries_at_every_layer_multiply_to_three_to_the_depth_at_the_bottom() {
    for levels in [1usize, 2] {
        let s = common::run_first(&failing_chain(levels));
        let requests = s.classes[0].requests as f64;
        // Each layer makes 3 attempts per call it is given, and each attempt into a service
        // is one call of that service's plan.
        // (Calls still out at the horizon are counted by their attempts so far: a few apart.)
        let three = |d: &DependencyFigures| d.attempts.abs_diff(3 * d.calls) <= 3 * 3;
        for k in 0..levels {
            let d = dep(&s, &format!("s{k}"));
            assert!(three(d), "s{k}: 3 attempts per call, {} for {}", d.attempts, d.calls);
        }
        let db = dep(&s, "db");
        assert!(three(db), "db: 3 attempts per call of the last service, {} for {}", db.attempts, db.calls);
        // (r + 1)^(L + 1) with the gateway's layer: 9 through one service, 27 through two.
        let expected = 3f64.powi(levels as i32 + 1);
        let per_request = db.attempts as f64 / requests;
        assert!(
            (per_request - expected).abs() < 0.01 * expected,
            "{levels} levels: {per_request} attempts at db per request, expected {expected}"
        );
    }
}

/// One class calling pricing, a service (own work `own`, worker slots `slots`, queue
/// `queue`) that calls tax.
fn chain(own: &str, slots: u32, tax: &str, rate: f64, horizon: &str, extra: &str) -> String {
    let extra = if extra.is_empty() { r#"policies: [(name: "bare")],"# } else { extra };
    format!(
        r#"Scenario(
    name: "chain", horizon: "{horizon}", seed: 11,
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "1s")),
    classes: [(name: "page", arrivals: Poisson(rate_per_s: {rate}), deadline: "10s", calls: [Call("pricing")])],
    dependencies: [
        (name: "pricing", latency: {own}, hop: Constant("1ms"), service: (workers: (slots: {slots}), calls: [Call("tax")])),
        (name: "tax", latency: {tax}),
    ],
    {extra}
)"#
    )
}

#[test]
fn a_chain_through_a_service_lasts_the_sum_of_its_parts() {
    // 1 ms to pricing and back, its 2 ms of work, 1 ms to tax and back, tax's exponential
    // 5 ms: a mean of 9 ms. 20,000 requests: the mean's standard error is 5 / sqrt(20,000)
    // = 0.035 ms; five of them is 0.18 ms.
    let s = common::run_first(&chain(
        r#"Constant("2ms")"#,
        10000,
        r#"Exponential(mean: "5ms"), hop: Constant("1ms")"#,
        20.0,
        "1000s",
        "",
    ));
    let mean = s.classes[0].latency_ms.mean;
    assert!((mean - 9.0).abs() < 0.18, "mean latency {mean} ms, expected 9 ms");
    // The service's own figures: its time per call is everything below it (8 ms, its hop
    // counted in its total, not its service time).
    let pricing = dep(&s, "pricing");
    assert!((pricing.service_ms.mean - 8.0).abs() < 0.18, "pricing's service {} ms", pricing.service_ms.mean);
}

#[test]
fn a_service_without_a_queue_refuses_as_an_erlang_loss_system() {
    // One slot, no queue: λ = 5/s, mean time in the service 100 ms (its exponential own work;
    // tax answers at once), ρ = 0.5, B(1, 0.5) = 1/3 of the calls refused. Erlang's formula
    // is insensitive to the service time's distribution beyond its mean. 20,000 calls: the
    // share's standard error is sqrt(1/3 · 2/3 / 20,000) = 0.0033; five of them 0.017.
    let s = common::run_first(
        &chain(r#"Exponential(mean: "100ms")"#, 1, r#"Constant("0ms"), hop: Constant("0ms")"#, 5.0, "4000s", "")
            .replace(r#"hop: Constant("1ms"), service"#, "service"),
    );
    let c = &s.classes[0];
    let refused = 1.0 - c.ok_ratio;
    assert!((refused - 1.0 / 3.0).abs() < 0.017, "refused {refused}, expected 1/3");
}

#[test]
fn littles_law_holds_in_a_service() {
    // Four slots and a queue, so no call is refused (a refusal spends only the hop).
    let text = chain(
        r#"LogNormal(median: "20ms", sigma: 0.8)"#,
        4,
        r#"Exponential(mean: "10ms"), hop: Constant("1ms")"#,
        60.0,
        "500s",
        "",
    );
    let s = common::run_first(&text.replace("(slots: 4)", "(slots: 4, queue: 100000)"));
    let pricing = dep(&s, "pricing");
    // Calls per second through it times the mean time each spends in it (queue wait for a
    // slot, work, its calls, the hop back), against the mean number in it.
    // (The measured span, as tests/model/dep_figures.rs reads it: warm-up left out.)
    let secs = s.dependency.calls as f64 / s.dependency.calls_per_s;
    let lambda = pricing.attempts as f64 / secs;
    // Its time in flight is its total (queue wait and service) and the hop back (1 ms).
    let little = lambda * (pricing.total_ms.mean + 1.0) / 1000.0;
    let measured = pricing.mean_in_flight;
    assert!((little - measured).abs() < 0.02 * measured, "L = {measured}, λW = {little}");
    assert!(pricing.queue_wait_ms.mean > 0.0, "four slots at this load make calls wait");
}

#[test]
fn a_caller_that_gives_up_cancels_the_calls_below_when_cancellation_propagates() {
    // Tax takes 500 ms; the gateway gives up on pricing after 50 ms. Without cancellation the
    // service and tax keep working: tax holds λ · 0.5 s = 5 calls on average (Little). With
    // it, pricing's call to tax is cancelled 50 ms (+ 1 ms on the way) after it was sent:
    // about λ · 0.05 s = 0.5.
    let timeout = r#"policies: [(name: "timeout", stack: [(policy: Timeout((timeout: "50ms")))])],"#;
    let text = |cancel: &str| {
        let tax = format!(r#"Constant("500ms"), cancellation: {cancel}"#);
        chain(r#"Constant("0ms")"#, 10000, &tax, 10.0, "400s", timeout)
            .replace(r#"hop: Constant("1ms"), service"#, &format!(r#"cancellation: {cancel}, service"#))
    };
    let kept = common::run_first(&text("KeepWorking"));
    let cancelled = common::run_first(&text(r#"Propagate(delay: "1ms")"#));
    let (k, c) = (dep(&kept, "tax").mean_in_flight, dep(&cancelled, "tax").mean_in_flight);
    assert!((k - 5.0).abs() < 0.25, "without cancellation tax holds {k}");
    assert!((c - 0.5).abs() < 0.1, "with cancellation tax holds {c}");
    // Every page times out either way: the answer is the caller's timeout.
    assert_eq!(kept.classes[0].ok_ratio, 0.0);
    assert_eq!(cancelled.classes[0].ok_ratio, 0.0);
}

#[test]
fn the_event_log_names_a_services_layer_by_its_service() {
    // Tax always fails; pricing's breaker on it (after a retry) opens after 3 failures in a
    // row. The log names pricing, its one instance (0) and the breaker's place in pricing's
    // own stack (1, after the retry), and the dependency the layer is scoped to.
    let text = r#"Scenario(
    name: "log", horizon: "5s", seed: 5,
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "page", arrivals: Poisson(rate_per_s: 20), deadline: "1s", calls: [Call("pricing")])],
    dependencies: [
        (name: "pricing", latency: Constant("1ms"), service: (workers: (slots: 10), calls: [Call("tax")],
            stack: [(policy: Retry((max_attempts: 2))),
                    (policy: ConsecutiveBreaker((failures: 3, break_duration: "1s")), dependencies: ["tax"])])),
        (name: "tax", latency: Constant("1ms"), error_rate: Constant(1.0)),
    ],
    policies: [(name: "gateway bare")],
)"#;
    let s = common::scenario(text);
    let model = brownout::model::Model::build(&s, s.seed, std::path::Path::new(".")).unwrap();
    let opts = brownout::model::RunOptions::new().with_events(50);
    let result = brownout::runner::run_all(&model, opts, false).unwrap();
    let log = &result.runs[0].log;
    let opened = log.events.iter().find(|e| e.to == "open").expect("the breaker opened");
    assert_eq!(opened.service.as_deref(), Some("pricing"));
    assert_eq!((opened.instance, opened.layer), (0, 1));
    assert_eq!(opened.dependencies, ["tax"]);
    // The gateway has no layer: every event is the service's.
    assert!(log.events.iter().all(|e| e.service.as_deref() == Some("pricing")));
}

#[test]
fn a_call_added_to_a_services_plan_leaves_the_other_calls_draws_alone() {
    // Common random numbers through a service: pricing's call to tax draws from the key of
    // (request, call, attempt), so adding an optional call to rates after it changes none of
    // tax's latencies (tax is unbounded: no queue couples them).
    let base = chain(r#"Constant("1ms")"#, 10000, r#"LogNormal(median: "10ms", sigma: 1.0)"#, 50.0, "100s", "");
    let with_rates = base
        .replace(r#"calls: [Call("tax")]"#, r#"calls: [Call("tax"), Optional(dependency: "rates", cost: "1ms")]"#)
        .replace(r#"(name: "tax","#, r#"(name: "rates", latency: Exponential(mean: "7ms")), (name: "tax","#);
    let (a, b) = (common::run_first(&base), common::run_first(&with_rates));
    let (ta, tb) = (dep(&a, "tax"), dep(&b, "tax"));
    assert!(ta.calls > 4000, "{}", ta.calls);
    assert_eq!(ta.calls, tb.calls);
    assert_eq!(format!("{:?}", ta.service_ms), format!("{:?}", tb.service_ms), "tax's latencies moved");
    assert!(dep(&b, "rates").calls > 4000, "rates is called");
}

#[test]
fn a_services_instances_each_have_their_own_slots() {
    // Two instances of one slot each, no queue: calls go to an instance by their key, which
    // splits the Poisson calls (λ = 5/s) into two Poisson streams of 2.5/s; each instance is
    // an Erlang loss system with ρ = 2.5 x 0.1 = 0.25, B(1, 0.25) = 0.2 refused (one
    // instance of one slot refuses 1/3, above). Standard error at 20,000 calls: 0.0028.
    let s = common::run_first(
        &chain(r#"Exponential(mean: "100ms")"#, 1, r#"Constant("0ms"), hop: Constant("0ms")"#, 5.0, "4000s", "")
            .replace(r#"hop: Constant("1ms"), service: (workers"#, "service: (instances: 2, workers"),
    );
    let refused = 1.0 - s.classes[0].ok_ratio;
    assert!((refused - 0.2).abs() < 0.014, "refused {refused}, expected 0.2");
}
