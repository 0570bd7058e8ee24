//! Properties of whole runs on randomly generated small scenarios (proptest; failures are
//! persisted in `proptest-regressions/properties.txt`):
//! - conservation: arrivals = sum of outcomes + requests in flight at the horizon;
//! - limits: worker and pool peaks never exceed capacity, and with a limiter as the only
//!   layer the dependency never sees more calls than permits x instances;
//! - common random numbers: with open-loop arrivals every policy set sees as many arrivals,
//!   and every request's draws (key, instance, item, think time, and a call's latency and
//!   error) are the same under every policy set, reloads and closed loops included;
//! - timeouts: no attempt outlasts the per-attempt timeout, with hedges and retries around it;
//! - population: every request that arrived after warm-up counts once in its class and
//!   phase, in time or under one cause, or apart while still within its deadline at the
//!   horizon (warm-up, phases and restarts generated too);
//! - no panic on any generated scenario;
//! - determinism: the same (scenario, seed) gives the same summary and trace twice.
//!
//! Scenario values are built directly, starting from RON-defaulted bases so that a field added
//! later with a serde default does not break the generator. Policy layers are drawn from
//! every layer of every shipped scenario (all policy kinds, their realistic settings) plus
//! parametrised timeouts, retries, breakers and limiters.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde::de::DeserializeOwned;

use std::collections::BTreeMap;

use brownout::engine::Time;
use brownout::model::records::{Origin, Records};
use brownout::model::{Model, RunOptions, RunResult, run_policy, run_policy_recorded};
use brownout::policy::PolicySpec;
use brownout::scenario::*;

/// Cases per property; each case runs every policy set of its scenario (twice for the
/// determinism property). `PROPTEST_CASES=N` runs a longer hunt.
const CASES: u32 = 96;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/properties.txt"))),
        // Each shrink step reruns whole scenarios; cap the search rather than the test.
        max_shrink_time: 120_000,
        ..ProptestConfig::default()
    }
}

pub(crate) fn ron<T: DeserializeOwned>(text: &str) -> T {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ms(lo: u64, hi: u64) -> impl Strategy<Value = Dur> {
    (lo..=hi).prop_map(Dur::ms)
}

fn dur_text(d: Dur) -> String {
    format!("{}ms", d.ns() / 1_000_000)
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
        // At least 1 ms of think time: a closed loop with none, whose requests take no time,
        // never lets virtual time advance, and `check` refuses it (scenario/estimate.rs).
        (1..20u32, ms(1, 500)).prop_map(|(users, think)| Arrivals::ClosedLoop { users, think }),
        (0.0..200.0f64, 0.0..400.0f64)
            .prop_map(|(a, b)| Arrivals::PoissonProfile { points: vec![(Dur::ms(0), a), (Dur::secs(3), b)] }),
    ]
}

fn class(i: usize) -> impl Strategy<Value = Class> {
    let fallbacks = [Fallback::None, Fallback::OnRefusal, Fallback::OnRefusalOrFailure];
    (
        arrivals(),
        ms(1, 3_000),
        prop::bool::weighted(0.85),
        prop::option::weighted(0.2, latency()),
        prop::sample::select(fallbacks.to_vec()),
        prop::option::weighted(0.3, reload()),
        fallback_answer(),
    )
        .prop_map(move |(arrivals, deadline, calls_dependency, work, fallback, reload, answer)| {
            let mut c: Class = ron(r#"(name: "x", arrivals: Poisson(rate_per_s: 1), deadline: "1s")"#);
            c.name = format!("c{i}");
            c.arrivals = arrivals;
            c.deadline = deadline;
            c.calls_dependency = calls_dependency;
            c.work = work;
            c.fallback = fallback;
            c.fallback_answer = answer;
            c.order_fraction = 0.5;
            c.priority = i as u32;
            c.reload = reload;
            c
        })
}

fn fallback_answer() -> impl Strategy<Value = FallbackAnswer> {
    prop_oneof![
        Just(FallbackAnswer::Catalogue),
        (0.0..10.0f64).prop_map(|cost_per_use| FallbackAnswer::FailOpen { cost_per_use }),
        (0.0..10.0f64).prop_map(|cost_per_use| FallbackAnswer::FailClosed { cost_per_use }),
        (0.0..10.0f64, prop::option::of(ms(1, 3_000)))
            .prop_map(|(cost_per_use, max_age)| FallbackAnswer::LastAnswer { cost_per_use, max_age }),
    ]
}

/// Keep only fallbacks that can take effect (validation refuses the others, issue 20).
fn effective_fallbacks(s: &mut Scenario) {
    for c in &mut s.classes {
        if !c.calls_dependency || c.fallback == Fallback::None {
            c.fallback = Fallback::None;
            c.fallback_answer = FallbackAnswer::Catalogue;
        } else if s.catalogue.is_none() && c.fallback_answer == FallbackAnswer::Catalogue {
            c.fallback_answer = FallbackAnswer::FailOpen { cost_per_use: 1.0 };
        }
    }
    // OnRefusal where no layer can refuse: fall back on failures too.
    while let Err(e) = validate(s) {
        let Some(i) = e.path.strip_prefix("classes[").and_then(|p| p.strip_suffix("].fallback")) else { break };
        s.classes[i.parse::<usize>().unwrap()].fallback = Fallback::OnRefusalOrFailure;
    }
}

fn reload() -> impl Strategy<Value = Reload> {
    (ms(1, 1_000), 0.0..=1.0f64, ms(0, 500), 0..4u32).prop_map(|(patience, probability, delay, max_reloads)| Reload {
        patience,
        probability,
        delay,
        max_reloads,
    })
}

fn hedge() -> impl Strategy<Value = PolicySpec> {
    prop_oneof![
        ms(1, 300).prop_map(|d| ron(&format!("Hedge((delay: \"{}\"))", dur_text(d)))),
        (0.5..0.99f64, 1..20u32)
            .prop_map(|(p, n)| ron(&format!("Hedge((latency_percentile: {p}, min_data_points: {n}, period: \"1s\"))"))),
    ]
}

fn timeout() -> impl Strategy<Value = PolicySpec> {
    (ms(1, 500), ms(0, 20))
        .prop_map(|(t, u)| ron(&format!("Timeout((timeout: \"{}\", unwind: \"{}\"))", dur_text(t), dur_text(u))))
}

/// Every policy layer of every shipped scenario that is valid for classes c0 and c1.
fn shipped_policies() -> &'static [PolicySpec] {
    static POOL: OnceLock<Vec<PolicySpec>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut pool = Vec::new();
        for p in crate::common::ron_files("scenarios") {
            let s = load(&p).unwrap_or_else(|e| panic!("{e}"));
            for set in &s.policies {
                for layer in &set.stack {
                    if layer.policy.validate(&["c0", "c1"]).is_ok() && !pool.contains(&layer.policy) {
                        pool.push(layer.policy.clone());
                    }
                }
            }
        }
        assert!(pool.len() >= 10, "expected the shipped scenarios' policies, found {}", pool.len());
        pool
    })
}

fn limiter() -> impl Strategy<Value = PolicySpec> {
    (1..8u32, 0..4u32, ms(0, 200), any::<bool>()).prop_map(|(permits, queue, wait, fb)| {
        let refuse = if fb { "Fallback" } else { "Rejected" };
        // A queue needs a positive wait (validation refuses a queue nothing can wait in).
        let queue = if wait.ns() == 0 { 0 } else { queue };
        ron(&format!(
            "Limiter((permits: {permits}, queue: {queue}, max_wait: \"{}\", refuse_as: {refuse}))",
            dur_text(wait)
        ))
    })
}

fn policy() -> impl Strategy<Value = PolicySpec> {
    prop_oneof![
        1 => timeout(),
        1 => hedge(),
        1 => (1..4u32, ms(0, 100), 0.0..1.0f64, any::<bool>()).prop_map(|(n, b, j, t)| ron(&format!(
            "Retry((max_attempts: {n}, backoff: \"{}\", jitter: {j}, on_timeout: {t}))",
            dur_text(b)
        ))),
        1 => (1..6u32, ms(1, 2_000), 1..3u32).prop_map(|(f, d, p)| ron(&format!(
            "ConsecutiveBreaker((failures: {f}, break_duration: \"{}\", probes: {p}))",
            dur_text(d)
        ))),
        1 => limiter(),
        3 => prop::sample::select(shipped_policies()),
    ]
}

fn layer(policy: PolicySpec) -> Layer {
    let mut l: Layer = ron(r#"(policy: Timeout((timeout: "1s")))"#);
    l.policy = policy;
    l
}

pub(crate) fn stack() -> impl Strategy<Value = Vec<Layer>> {
    prop::collection::vec(policy().prop_map(layer), 0..4)
}

pub(crate) fn dependency() -> impl Strategy<Value = Dependency> {
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
        .prop_map(|(latency, drift, err, cap, outage, hop)| {
            let mut d: Dependency = ron(r#"(latency: Constant("1ms"))"#);
            d.latency = latency;
            d.drift = drift;
            d.error_rate = Profile::Constant(err);
            d.modes = outage
                .map(|at| {
                    let back = Dur(at.ns() + 1_000_000_000);
                    vec![ModeChange { at, mode: Mode::Unavailable }, ModeChange { at: back, mode: Mode::Healthy }]
                })
                .unwrap_or_default();
            d.capacity = cap.map(|(servers, queue)| Capacity {
                servers,
                queue,
                discipline: Default::default(),
                max_wait: None,
                codel: None,
                sharing: Default::default(),
            });
            d.hop = brownout::scenario::Delay::Fixed(hop);
            d
        })
}

fn fleet() -> impl Strategy<Value = Fleet> {
    (1..4u32, 1..30u32, 0..10u32, prop::option::of(ms(0, 500)), 1..12u32, ms(0, 500), ms(0, 10)).prop_map(
        |(instances, slots, queue, max_wait, connections, acquire, overhead)| {
            let mut f: Fleet = ron(r#"(workers: (slots: 1), pool: (max_connections: 1, acquire_timeout: "1s"))"#);
            f.instances = instances;
            f.workers.slots = slots;
            f.workers.queue = queue;
            f.workers.max_wait = max_wait;
            f.pool.max_connections = connections;
            f.pool.acquire_timeout = acquire;
            f.overhead = brownout::scenario::Delay::Fixed(overhead);
            f
        },
    )
}

fn classes() -> impl Strategy<Value = Vec<Class>> {
    prop_oneof![class(0).prop_map(|c| vec![c]), (class(0), class(1)).prop_map(|(a, b)| vec![a, b])]
}

/// A small scenario (warm-up 0, so every arrival is measured) with 1-3 policy sets.
pub(crate) fn scenario(first_stack: BoxedStrategy<Vec<Layer>>) -> impl Strategy<Value = Scenario> {
    (ms(500, 8_000), fleet(), classes(), dependency(), first_stack, prop::collection::vec(stack(), 0..2), any::<bool>())
        .prop_map(|(horizon, fleet, classes, dependency, first, more, cat)| {
            let mut s: Scenario = ron(BASE);
            s.horizon = horizon;
            s.fleet = fleet;
            s.classes = classes;
            s.dependency = dependency;
            s.policies[0].stack = first;
            for (i, stack) in more.into_iter().enumerate() {
                let mut set = s.policies[0].clone();
                set.name = format!("p{}", i + 1);
                set.stack = stack;
                s.policies.push(set);
            }
            if !cat {
                s.catalogue = None;
            }
            effective_fallbacks(&mut s);
            s
        })
        // Presets expand into several layers when the model is built (`DotnetStandard` into
        // five); a set past `MAX_LAYERS` is bad input, refused by `check`, not
        // a scenario whose runs these properties are about.
        .prop_filter("every policy set fits MAX_LAYERS once its presets expand", |s| {
            s.policies
                .iter()
                .all(|p| p.stack.iter().map(|l| expanded_len(&l.policy)).sum::<usize>() <= brownout::model::MAX_LAYERS)
        })
}

/// The layers a policy becomes when the model is built.
fn expanded_len(p: &PolicySpec) -> usize {
    p.preset_layers().map_or(1, |layers| layers.len())
}

const BASE: &str = r#"Scenario(
    name: "prop",
    horizon: "1s",
    window: "500ms",
    fleet: (workers: (slots: 1), pool: (max_connections: 1, acquire_timeout: "1s")),
    classes: [(name: "c0", arrivals: Poisson(rate_per_s: 1), deadline: "1s")],
    dependency: (latency: Constant("1ms")),
    catalogue: (items: 50, changes_per_hour: 600, ttl: "2s"),
    policies: [(name: "p0", stack: [])],
)"#;

/// A scenario of [`scenario`] with a warm-up of 0 to 30 % of its horizon, one to three
/// phases that cover the measured span, and maybe a restart of instance 0.
pub(crate) fn phased_scenario() -> impl Strategy<Value = Scenario> {
    let cuts = prop::collection::vec(1..10u64, 0..3);
    (scenario(stack().boxed()), 0..4u64, cuts, prop::option::of(1..10u64)).prop_map(|(mut s, warm, cuts, restart)| {
        let h = s.horizon.ns();
        let warmup = h * warm / 10;
        s.warmup = Dur(warmup);
        let mut points: Vec<Time> = cuts.iter().map(|&k| warmup + (h - warmup) * k / 10).collect();
        points.extend([warmup, h]);
        points.sort_unstable();
        points.dedup();
        s.phases = points
            .windows(2)
            .enumerate()
            .map(|(i, w)| Phase { name: format!("ph{i}"), start: Dur(w[0]), end: Dur(w[1]) })
            .collect();
        if let Some(k) = restart {
            let mut r: Restart = ron(r#"(at: "1ms", instances: [0])"#);
            r.at = Dur(h * k / 10);
            s.fleet.restarts = vec![r];
        }
        s
    })
}

/// A count in `x`'s JSON at `pointer` (read this way, the population property also builds
/// against a summary without the field, and fails there).
pub(crate) fn count(x: &impl serde::Serialize, pointer: &str) -> u64 {
    let v = serde_json::to_value(x).unwrap();
    v.pointer(pointer).and_then(serde_json::Value::as_u64).unwrap_or_else(|| panic!("no count at {pointer}"))
}

pub(crate) fn run_all(s: &Scenario, seed: u64) -> Vec<RunResult> {
    validate(s).unwrap_or_else(|e| panic!("generated scenario must be valid: {e:?}"));
    let model = Model::build(s, seed, Path::new(".")).expect("builds");
    (0..s.policies.len()).map(|p| run_policy(&model, p, RunOptions::default()).expect("within the limits")).collect()
}

pub(crate) fn recorded(s: &Scenario, seed: u64) -> Vec<Records> {
    validate(s).unwrap_or_else(|e| panic!("generated scenario must be valid: {e:?}"));
    let model = Model::build(s, seed, Path::new(".")).expect("builds");
    (0..s.policies.len())
        .map(|p| run_policy_recorded(&model, p, RunOptions::default()).expect("within the limits").1)
        .collect()
}

/// A stack with a timeout somewhere, and hedges, retries or other layers around it.
pub(crate) fn timed_stack() -> impl Strategy<Value = Vec<Layer>> {
    let other = prop_oneof![3 => hedge(), 2 => policy(), 1 => timeout()];
    (prop::collection::vec(other, 0..4), timeout(), any::<prop::sample::Index>()).prop_map(|(mut layers, t, at)| {
        let at = at.index(layers.len() + 1);
        layers.insert(at, t);
        layers.into_iter().map(layer).collect()
    })
}

/// The shortest per-attempt timeout of a stack (layers here apply to every class), as a bound
/// on an attempt from its start: a timeout that starts once a connection is held
/// (`starts: Connection`) bounds it only after the wait for one, itself at most the pool's
/// `acquire` timeout.
pub(crate) fn attempt_limit(stack: &[Layer], acquire: u64) -> Option<u64> {
    stack
        .iter()
        .filter_map(|l| match &l.policy {
            PolicySpec::Timeout(t) => Some(match t.starts {
                brownout::policy::timeout::TimeoutStart::Attempt => t.timeout.ns(),
                brownout::policy::timeout::TimeoutStart::Connection => t.timeout.ns() + acquire,
                // The first byte within it of the connection, the body within it of the first
                // byte.
                brownout::policy::timeout::TimeoutStart::Inactivity => 2 * t.timeout.ns() + acquire,
            }),
            _ => None,
        })
        .min()
}

/// The dependency of issue 15's defect 1 now and then: every call fails until a time, then
/// calls succeed but get much slower, so a hedge sent after a failing call is the slow one.
fn failing_then_slow() -> impl Strategy<Value = Dependency> {
    (dependency(), ms(0, 3_000), 2.0..40.0f64, any::<bool>()).prop_map(|(mut d, at, factor, turn)| {
        if turn {
            d.error_rate = Profile::Points(vec![(Dur(0), 1.0), (at, 1.0), (at, 0.0)]);
            d.drift = Drift::Step { at, factor };
        }
        d
    })
}

/// Who a request is across policy sets: class, then (0, n) for the n-th open-loop arrival,
/// (1, user, k) for a closed-loop user's k-th request, (2, key reloaded, reload number).
type Identity = (u16, u8, u64, u64);

/// Every request's key, instance, item and think time, by identity.
fn draws(r: &Records) -> BTreeMap<Identity, (u64, u32, u32, u64)> {
    r.requests
        .iter()
        .map(|q| {
            let (id, think) = match q.origin {
                Origin::Arrival(n) => ((q.class, 0, n, 0), 0),
                Origin::User { user, k, think } => ((q.class, 1, user as u64, k as u64), think),
                Origin::Reload { of, number } => ((q.class, 2, of, number as u64), 0),
            };
            (id, (q.key, q.instance, q.item, think))
        })
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn conservation_and_capacity(s in scenario(stack().boxed()), seed in any::<u64>()) {
        let runs = run_all(&s, seed);
        // Common random numbers: open-loop arrivals do not depend on the policy.
        let open = s.classes.iter().all(|c| !matches!(c.arrivals, Arrivals::ClosedLoop { .. }) && c.reload.is_none());
        if open {
            prop_assert!(runs.iter().all(|r| r.requests == runs[0].requests));
        }
        for r in runs {
            let sum = &r.summary;
            let finished: u64 = sum.classes.iter().map(|c| c.outcomes.total()).sum();
            prop_assert_eq!(r.requests, finished + sum.in_flight_at_end,
                "policy {}: arrivals = outcomes + in flight", sum.policy);
            // Judged: the finished, and those out at the horizon past their deadline.
            let requests: u64 = sum.classes.iter().map(|c| c.requests).sum();
            let unfinished: u64 = sum.classes.iter().map(|c| count(&c.causes, "/unfinished")).sum();
            prop_assert_eq!(requests, finished + unfinished);
            prop_assert!(sum.resources.workers.peak <= s.fleet.workers.slots as u64);
            prop_assert!(sum.resources.pool.peak <= s.fleet.pool.max_connections as u64);
        }
    }

    /// Issue 30: every request that arrived after warm-up is counted exactly once in its class
    /// and in the phase it arrived in, in time or under one cause (`unfinished` for one still
    /// out at the horizon past its deadline), or apart as still within its deadline. The
    /// arrivals are counted from the per-request records, independently of the recorder.
    #[test]
    fn every_measured_request_counts_once_in_its_class_and_phase(s in phased_scenario(), seed in any::<u64>()) {
        validate(&s).unwrap_or_else(|e| panic!("generated scenario must be valid: {e:?}"));
        let model = Model::build(&s, seed, Path::new(".")).expect("builds");
        let (warm, h) = (s.warmup.ns(), s.horizon.ns());
        for p in 0..s.policies.len() {
            let (r, rec) = run_policy_recorded(&model, p, RunOptions::default()).expect("within the limits");
            prop_assert_eq!(r.requests, rec.requests.len() as u64);
            prop_assert_eq!(r.phases.len(), s.phases.len());
            let mut pending_all = 0;
            for (c, class) in r.summary.classes.iter().enumerate() {
                let arrived: Vec<Time> =
                    rec.requests.iter().filter(|q| q.class as usize == c && q.arrived >= warm).map(|q| q.arrived).collect();
                let pending = count(class, "/in_flight_within_deadline");
                pending_all += pending;
                prop_assert_eq!(class.requests + pending, arrived.len() as u64, "policy {} class {}", p, c);
                prop_assert_eq!(class.requests, class.in_time + class.causes.total());
                // Only a request that arrived less than a deadline before the horizon can be
                // still within it.
                let deadline = s.classes[c].deadline.ns();
                prop_assert!(pending <= arrived.iter().filter(|&&a| h - a < deadline).count() as u64);
                let (mut requests, mut in_time, mut pendings) = (0, 0, 0);
                for (k, ph) in s.phases.iter().enumerate() {
                    let (start, end) = (ph.start.ns(), ph.end.ns());
                    // A phase ending at the horizon holds the arrivals at the horizon too.
                    let n = arrived.iter().filter(|&&a| a >= start && (a < end || end == h)).count() as u64;
                    let pc = &r.phases[k].classes[c];
                    prop_assert_eq!(pc.requests + count(pc, "/in_flight_within_deadline"), n, "phase {}", k);
                    prop_assert_eq!(pc.requests, pc.in_time + pc.causes.total(), "phase {}", k);
                    requests += pc.requests;
                    in_time += pc.in_time;
                    pendings += count(pc, "/in_flight_within_deadline");
                }
                // The phases cover the measured span: each request is in exactly one.
                prop_assert_eq!((requests, in_time, pendings), (class.requests, class.in_time, pending));
            }
            prop_assert!(pending_all <= r.summary.in_flight_at_end);
        }
    }

    #[test]
    fn a_lone_limiter_bounds_the_dependency(
        s in scenario(limiter().prop_map(|p| vec![layer(p)]).boxed()),
        seed in any::<u64>(),
    ) {
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
    fn no_attempt_outlasts_its_timeout(
        s in scenario(timed_stack().boxed()).prop_flat_map(|s| (Just(s), failing_then_slow())).prop_map(|(mut s, d)| {
            s.dependency = d;
            s
        }),
        seed in any::<u64>(),
    ) {
        let runs = recorded(&s, seed);
        for (set, r) in s.policies.iter().zip(&runs) {
            let Some(limit) = attempt_limit(&set.stack, s.fleet.pool.acquire_timeout.ns()) else { continue };
            for a in &r.attempts {
                // The timeout runs from asking for a connection; the unwind comes after.
                prop_assert!(a.end - a.start <= limit,
                    "policy {}: attempt {:?} lasted {} ns > timeout {} ns", set.name, a, a.end - a.start, limit);
            }
        }
    }

    #[test]
    fn every_request_draws_the_same_under_every_policy_set(s in scenario(stack().boxed()), seed in any::<u64>()) {
        let runs = recorded(&s, seed);
        let first = draws(&runs[0]);
        // A call's plan depends on its start only through drift, modes and the error profile.
        let timeless = matches!(s.dependency.drift, Drift::None) && s.dependency.modes.is_empty();
        let calls = |r: &Records| -> BTreeMap<_, _> {
            r.calls.iter().map(|c| ((c.class, c.key, c.attempt, if timeless { 0 } else { c.start }), (c.latency, c.error))).collect()
        };
        let first_calls = calls(&runs[0]);
        for (p, r) in runs.iter().enumerate().skip(1) {
            let other = draws(r);
            let arrivals = |d: &BTreeMap<Identity, _>| d.keys().filter(|k| k.1 == 0).count();
            prop_assert_eq!(arrivals(&first), arrivals(&other), "policy {}: open-loop arrivals", p);
            for (id, d) in &other {
                if let Some(f) = first.get(id) {
                    prop_assert_eq!(f, d, "policy {}: request {:?}", p, id);
                } else {
                    prop_assert!(id.1 != 0, "policy {}: open-loop arrival {:?} only here", p, id);
                }
            }
            for (k, v) in calls(r) {
                if let Some(f) = first_calls.get(&k) {
                    prop_assert_eq!(*f, v, "policy {}: call {:?}", p, k);
                }
            }
        }
        // A reload asks for the item of the request it reloads.
        for r in &runs {
            let items: BTreeMap<(u16, u64), u32> = r.requests.iter().map(|q| ((q.class, q.key), q.item)).collect();
            for q in &r.requests {
                if let Origin::Reload { of, .. } = q.origin {
                    prop_assert_eq!(Some(&q.item), items.get(&(q.class, of)));
                }
            }
        }
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
