//! Properties of generated graphs of services that call services (issue 33): the scenarios
//! of `properties.rs` whose classes call a tree of dependencies, up to four levels deep,
//! where every dependency above the bottom level may be a service with its own worker slots,
//! pool, plan (steps of one call or groups of up to eight, joined by All, First or Quorum,
//! optional calls among them) and stack (retries, timeouts, hedges and breakers, some layers
//! scoped to one of its calls), and each policy set may give a service another stack.
//!
//! Each dependency has one caller (the gateway for the top level, else the one service whose
//! plan names it), so an attempt's dependency says which stack sent it: the timeout that
//! bounds it and the attempts allowed along its path are read from the scenario alone.
//!
//! The generator is checked now (`check` accepts what it makes, and it reaches depth 4 and
//! groups of 8); the runs wait for the world to simulate services.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{FileFailurePersistence, TestRunner};

use brownout::policy::PolicySpec;
use brownout::scenario::*;

use crate::properties::{attempt_limit, dependency, recorded, ron, run_all, scenario, stack, timed_stack};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/services.txt"))),
        max_shrink_time: 120_000,
        ..ProptestConfig::default()
    }
}

/// Levels of dependencies below the gateway on the deepest path (the bottom one leaves).
const MAX_DEPTH: usize = 4;
/// Calls in a parallel group, at most.
const MAX_GROUP: usize = 8;
/// Distinct dependencies a service calls, and the top level's width: with a depth of 4 the
/// tree holds at most 2 + 4 + 8 + 16 dependencies.
const WIDTH: usize = 2;
const MAX_NODES: usize = 30;

fn millis(lo: u64, hi: u64) -> impl Strategy<Value = Dur> {
    (lo..=hi).prop_map(Dur::ms)
}

/// A layer of a service's stack (or a gateway's, for the bound on attempts): the policies
/// whose attempts per call the test can bound by hand.
fn service_policy() -> impl Strategy<Value = PolicySpec> {
    prop_oneof![
        (1..=3u32, 0..50u64).prop_map(|(n, b)| ron(&format!("Retry((max_attempts: {n}, backoff: \"{b}ms\"))"))),
        millis(1, 500).prop_map(|t| ron(&format!("Timeout((timeout: \"{}ms\"))", t.ns() / 1_000_000))),
        millis(1, 200).prop_map(|d| ron(&format!("Hedge((delay: \"{}ms\"))", d.ns() / 1_000_000))),
        (1..6u32, 1..2_000u64)
            .prop_map(|(f, d)| ron(&format!("ConsecutiveBreaker((failures: {f}, break_duration: \"{d}ms\"))"))),
    ]
}

/// A stack's layers, each maybe scoped to one of the caller's dependencies (an index picked
/// among them when the tree is built).
fn scoped_stack() -> impl Strategy<Value = Vec<(PolicySpec, Option<prop::sample::Index>)>> {
    prop::collection::vec((service_policy(), prop::option::weighted(0.4, any::<prop::sample::Index>())), 0..4)
}

/// One step of a plan before its callees are known: calls as (which callee, optional,
/// fallback cost in ms), a group or not, and its join.
#[derive(Debug, Clone)]
struct StepDraw {
    group: bool,
    calls: Vec<(prop::sample::Index, bool, u64)>,
    join: u8,
    k: prop::sample::Index,
}

fn step_draw() -> impl Strategy<Value = StepDraw> {
    (
        any::<bool>(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<bool>(), 0..5u64), 1..=MAX_GROUP),
        0..3u8,
        any::<prop::sample::Index>(),
    )
        .prop_map(|(group, calls, join, k)| StepDraw { group, calls, join, k })
}

/// One dependency of the tree before its place is known: as a leaf, the leaf; as a service,
/// its hop, work, workers, pool, plan, stack and cancellation.
#[derive(Debug, Clone)]
struct NodeDraw {
    service: bool,
    callees: usize,
    plan: Vec<StepDraw>,
    stack: Vec<(PolicySpec, Option<prop::sample::Index>)>,
    leaf: Dependency,
    work: Dur,
    hop: Dur,
    slots: u32,
    queue: u32,
    pool: Option<(u32, Dur)>,
    propagate: bool,
}

fn node_draw() -> impl Strategy<Value = NodeDraw> {
    (
        (prop::bool::weighted(0.7), 1..=WIDTH, prop::collection::vec(step_draw(), 1..=2), scoped_stack(), dependency()),
        (millis(0, 5), millis(0, 5), 1..30u32, 0..10u32, prop::option::of((1..12u32, millis(0, 500))), any::<bool>()),
    )
        .prop_map(|((service, callees, plan, stack, leaf), (work, hop, slots, queue, pool, propagate))| NodeDraw {
            service,
            callees,
            plan,
            stack,
            leaf,
            work,
            hop,
            slots,
            queue,
            pool,
            propagate,
        })
}

/// Which services the policy sets give their own stacks: per set, (which service, stack).
type Overrides = Vec<Vec<(prop::sample::Index, Vec<(PolicySpec, Option<prop::sample::Index>)>)>>;

/// The tree's shape and contents: its depth, the top level's width, a draw per possible
/// dependency (breadth first) and the policy sets' stacks for services.
#[derive(Debug, Clone)]
struct TreeDraw {
    depth: usize,
    tops: usize,
    nodes: Vec<NodeDraw>,
    overrides: Overrides,
}

fn tree_draw() -> impl Strategy<Value = TreeDraw> {
    (
        2..=MAX_DEPTH,
        1..=WIDTH,
        prop::collection::vec(node_draw(), MAX_NODES),
        prop::collection::vec(prop::collection::vec((any::<prop::sample::Index>(), scoped_stack()), 0..3), 3),
    )
        .prop_map(|(depth, tops, nodes, overrides)| TreeDraw { depth, tops, nodes, overrides })
}

/// A plan over `callees` from its draws (a group's quorum within its calls).
fn plan(draws: &[StepDraw], callees: &[String]) -> Vec<Step> {
    let call = |(i, optional, cost): &(prop::sample::Index, bool, u64)| {
        let dependency = callees[i.index(callees.len())].clone();
        if *optional { Step::Optional { dependency, cost: Dur::ms(*cost) } } else { Step::Call(dependency) }
    };
    draws
        .iter()
        .map(|d| {
            if !d.group {
                return call(&d.calls[0]);
            }
            let calls: Vec<Step> = d.calls.iter().map(call).collect();
            let join = match d.join {
                0 => Join::All,
                1 => Join::First,
                _ => Join::Quorum(d.k.index(calls.len()) as u32 + 1),
            };
            Step::Parallel { join, calls }
        })
        .collect()
}

/// A stack from its draws, a scoped layer naming one of `callees`; one `Retry` at most, so
/// the attempts at the bottom of four levels stay within `limits.max_attempts`' default
/// (3 per service level below the gateway's own retries).
fn layers(draws: &[(PolicySpec, Option<prop::sample::Index>)], callees: &[String]) -> Vec<Layer> {
    let first_retry = draws.iter().position(|(p, _)| matches!(p, PolicySpec::Retry(_)));
    draws
        .iter()
        .enumerate()
        .filter(|(k, (p, _))| !matches!(p, PolicySpec::Retry(_)) || Some(*k) == first_retry)
        .map(|(_, (policy, scope))| {
            let mut l: Layer = ron(r#"(policy: Timeout((timeout: "1s")))"#);
            l.policy = policy.clone();
            l.dependencies = scope.iter().map(|i| callees[i.index(callees.len())].clone()).collect();
            l
        })
        .collect()
}

/// The names a plan calls, each once, in order of first call.
fn called(steps: &[Step]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in steps.iter().flat_map(Step::calls) {
        let name = c.dependency().expect("a call").to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// `s` with its classes calling a tree built from `t`, breadth first: the top level `d0`,
/// `d1`.. (called by the classes' plans), each dependency above the bottom a service when
/// its draw says so (the first of each level always, so the tree is `t.depth` deep), whose
/// plan calls new dependencies of the next level, each of those called by it alone.
fn build(mut s: Scenario, t: &TreeDraw, class_plans: &[Vec<StepDraw>]) -> Scenario {
    let tops: Vec<String> = (0..t.tops).map(|k| format!("d{k}")).collect();
    for (c, p) in s.classes.iter_mut().zip(class_plans) {
        if c.calls_dependency {
            c.calls = plan(p, &tops);
        }
    }
    // (name, level) in breadth-first order; each node's draw is its position's.
    let mut queue: Vec<(String, usize)> = tops.iter().map(|n| (n.clone(), 0)).collect();
    let mut deps = Vec::new();
    let mut first_of_level = [true; MAX_DEPTH];
    let mut named = t.tops;
    let mut i = 0;
    while i < queue.len() {
        let (name, level) = queue[i].clone();
        let draw = &t.nodes[i];
        let mut d = draw.leaf.clone();
        d.name = name;
        let service = level + 1 < t.depth && (draw.service || first_of_level[level]);
        first_of_level[level] = false;
        if service {
            // Fresh names the callees would take; the plan keeps those it calls.
            let offered: Vec<String> = (0..draw.callees).map(|k| format!("d{}", named + k)).collect();
            named += draw.callees;
            let calls = plan(&draw.plan, &offered);
            let callees = called(&calls);
            queue.extend(callees.iter().map(|n| (n.clone(), level + 1)));
            let mut svc: Service = ron(r#"(workers: (slots: 1), calls: [Call("x")])"#);
            svc.workers.slots = draw.slots;
            svc.workers.queue = draw.queue;
            svc.pool = draw.pool.map(|(max_connections, acquire)| {
                let mut p: Pool = ron(r#"(max_connections: 1, acquire_timeout: "1s")"#);
                p.max_connections = max_connections;
                p.acquire_timeout = acquire;
                p
            });
            svc.stack = layers(&draw.stack, &callees);
            svc.calls = calls;
            // A service is served by its workers and fails through its calls: no leaf's
            // capacity, replicas, modes or error rate (`check` refuses them).
            d.latency = Latency::Constant(draw.work);
            d.hop = Delay::Fixed(draw.hop);
            d.capacity = None;
            d.replicas = None;
            d.modes = Vec::new();
            d.error_rate = Profile::Constant(0.0);
            d.drift = Drift::None;
            d.cancellation =
                if draw.propagate { Cancellation::Propagate { delay: Dur::ms(1) } } else { Cancellation::default() };
            d.service = Some(svc);
        }
        deps.push(d);
        i += 1;
    }
    let services: Vec<(String, Vec<String>)> =
        deps.iter().filter_map(|d| d.service.as_ref().map(|svc| (d.name.clone(), called(&svc.calls)))).collect();
    for (set, draws) in s.policies.iter_mut().zip(&t.overrides) {
        set.services.clear();
        for (which, stack) in draws {
            let (name, callees) = &services[which.index(services.len())];
            if set.services.iter().all(|o| &o.service != name) {
                set.services.push(ServiceStack { service: name.clone(), stack: layers(stack, callees) });
            }
        }
    }
    s.dependencies = deps;
    s.dependency = Dependency::absent();
    s
}

/// Scenarios with services from a base whose first policy set's stack is `first`.
fn services(first: BoxedStrategy<Vec<Layer>>) -> impl Strategy<Value = Scenario> {
    (scenario(first), tree_draw(), prop::collection::vec(prop::collection::vec(step_draw(), 1..=3), 2))
        .prop_map(|(s, t, class_plans)| build(s, &t, &class_plans))
}

/// Each dependency's caller: `None` for the gateway, else the service (an index into
/// `s.dependencies`) whose plan calls it. In a generated tree there is one.
fn callers(s: &Scenario) -> Vec<Option<usize>> {
    let mut of = vec![None; s.dependencies.len()];
    for (k, d) in s.dependencies.iter().enumerate() {
        for name in d.service.iter().flat_map(|svc| called(&svc.calls)) {
            let j = s.dependencies.iter().position(|e| e.name == name).expect("a callee");
            of[j] = Some(k);
        }
    }
    of
}

/// The layers of set `set` that see a call to dependency `dep`: the gateway's (of class
/// `class`) for the top level, else its caller's stack in that set, each unscoped or scoped
/// to `dep`.
fn stack_for<'a>(s: &'a Scenario, set: usize, class: &str, dep: usize, caller: Option<usize>) -> Vec<&'a Layer> {
    let name = &s.dependencies[dep].name;
    let layers: &[Layer] = match caller {
        None => &s.policies[set].stack,
        Some(k) => s.service_stack(set, k).expect("a service"),
    };
    layers
        .iter()
        .filter(|l| l.classes.is_empty() || l.classes.iter().any(|c| c == class))
        .filter(|l| l.dependencies.is_empty() || l.dependencies.contains(name))
        .collect()
}

/// Attempts a stack may send per call: the product of its retries' `max_attempts`, twice
/// for a hedge (one hedged attempt per attempt, as tower's `Hedge` sends at most one);
/// None when a layer's attempts are not bounded here (the presets that expand into retries).
fn attempts_per_call(layers: &[&Layer]) -> Option<u64> {
    layers.iter().try_fold(1u64, |n, l| match &l.policy {
        PolicySpec::Retry(r) => Some(n * u64::from(r.max_attempts)),
        PolicySpec::Hedge(_) => Some(n * 2),
        PolicySpec::Timeout(_) | PolicySpec::ConsecutiveBreaker(_) | PolicySpec::Limiter(_) => Some(n),
        _ => None,
    })
}

/// How many times `steps` names dependency `name`.
fn calls_to(steps: &[Step], name: &str) -> u64 {
    steps.iter().flat_map(Step::calls).filter(|c| c.dependency() == Some(name)).count() as u64
}

/// The attempts one request of class `class` may send to each dependency in set `set`:
/// the calls of its caller's plan to it times the attempts its caller's stack allows per call,
/// times the attempts that reach its caller; None where a layer on the way is not bounded.
fn attempt_bounds(s: &Scenario, set: usize, class: usize) -> Vec<Option<u64>> {
    let callers = callers(s);
    let c = &s.classes[class];
    let mut bound: Vec<Option<u64>> = vec![None; s.dependencies.len()];
    // Breadth first: a caller comes before its callees.
    for (k, d) in s.dependencies.iter().enumerate() {
        let per_call = attempts_per_call(&stack_for(s, set, &c.name, k, callers[k]));
        bound[k] = match callers[k] {
            None => per_call.map(|a| a * calls_to(&c.calls, &d.name)),
            Some(p) => {
                let plan = &s.dependencies[p].service.as_ref().expect("a service").calls;
                bound[p].zip(per_call).map(|(above, a)| above * a * calls_to(plan, &d.name))
            }
        };
    }
    bound
}

/// The depth of the tree and its widest group.
fn shape(s: &Scenario) -> (usize, usize) {
    let callers = callers(s);
    let depth = (0..s.dependencies.len())
        .map(|mut k| {
            let mut n = 1;
            while let Some(p) = callers[k] {
                n += 1;
                k = p;
            }
            n
        })
        .max()
        .unwrap_or(0);
    let plans = s
        .classes
        .iter()
        .map(|c| &c.calls)
        .chain(s.dependencies.iter().filter_map(|d| d.service.as_ref().map(|v| &v.calls)));
    let widest = plans.flat_map(|p| p.iter().map(|st| st.calls().len())).max().unwrap_or(0);
    (depth, widest)
}

proptest! {
    #![proptest_config(config(64))]

    /// What the generator makes is a scenario `check` accepts, from its text as from memory.
    #[test]
    fn generated_service_graphs_pass_check(s in services(stack().boxed())) {
        validate(&s).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let text = ron::ser::to_string_pretty(&s, ron::ser::PrettyConfig::default()).unwrap();
        if let Err(e) = load_text(Path::new("generated.ron"), &text) {
            return Err(TestCaseError::fail(format!("{e}\n{text}")));
        }
        let callers = callers(&s);
        for (k, d) in s.dependencies.iter().enumerate() {
            // A tree: every dependency below the top has one caller, a service.
            if let Some(p) = callers[k] {
                prop_assert!(s.dependencies[p].service.is_some(), "{} called by a leaf", d.name);
            }
        }
    }
}

/// The generator reaches the sizes the properties are about: services four levels deep and
/// groups of eight calls (over 64 draws of a fixed seed).
#[test]
fn the_generator_reaches_depth_four_and_groups_of_eight() {
    let mut runner = TestRunner::deterministic();
    let strategy = services(stack().boxed());
    let (mut depth, mut widest, mut scoped, mut overridden) = (0, 0, 0, 0);
    for _ in 0..64 {
        let s = strategy.new_tree(&mut runner).unwrap().current();
        let (d, w) = shape(&s);
        depth = depth.max(d);
        widest = widest.max(w);
        scoped += s
            .dependencies
            .iter()
            .filter_map(|d| d.service.as_ref())
            .flat_map(|v| &v.stack)
            .filter(|l| !l.dependencies.is_empty())
            .count();
        overridden += s.policies.iter().map(|p| p.services.len()).sum::<usize>();
    }
    assert_eq!(depth, MAX_DEPTH);
    assert_eq!(widest, MAX_GROUP);
    assert!(scoped > 0 && overridden > 0, "scoped layers {scoped}, policy sets' service stacks {overridden}");
}

/// The bound on attempts by hand: a gateway retry of 3 over a service with a retry of 2
/// and a hedge, whose plan calls its leaf twice: 3 x (2 x 2) x 2 = 24 at the leaf.
#[test]
fn attempt_bounds_multiply_down_the_path() {
    let s: Scenario = ron(r#"Scenario(
        name: "b", horizon: "1s",
        fleet: (workers: (slots: 1), pool: (max_connections: 1, acquire_timeout: "1s")),
        classes: [(name: "c0", arrivals: Poisson(rate_per_s: 1), deadline: "1s", calls: [Call("s")])],
        dependencies: [
            (name: "s", latency: Constant("1ms"), service: (workers: (slots: 1),
                stack: [(policy: Retry((max_attempts: 2))), (policy: Hedge((delay: "5ms")), dependencies: ["leaf"])],
                calls: [Call("leaf"), Call("leaf")])),
            (name: "leaf", latency: Constant("1ms")),
        ],
        policies: [(name: "p0", stack: [(policy: Retry((max_attempts: 3)))]),
                   (name: "p1", services: [(service: "s", stack: [])])],
    )"#);
    assert_eq!(attempt_bounds(&s, 0, 0), vec![Some(3), Some(24)]);
    // The second set's empty stack for s: one attempt per call, twice.
    assert_eq!(attempt_bounds(&s, 1, 0), vec![Some(1), Some(2)]);
    assert_eq!(callers(&s), vec![None, Some(0)]);
}

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn every_request_counts_once_through_services(s in services(stack().boxed()), seed in any::<u64>()) {
        for r in run_all(&s, seed) {
            // Services' requests and their calls are no requests of the gateway's.
            crate::graph_properties::counts_once(&s, &r)?;
        }
    }

    #[test]

    fn no_attempt_at_any_layer_outlives_its_timeout_nor_exceeds_the_path_s_attempts(
        s in services(timed_stack().boxed()),
        seed in any::<u64>(),
    ) {
        let callers = callers(&s);
        let runs = recorded(&s, seed);
        for (set, r) in runs.iter().enumerate() {
            let name = &s.policies[set].name;
            // Per attempt: the timeout of the stack that sent it, after at most the wait for a
            // connection of its caller's pool (a service without a pool never waits).
            for a in &r.attempts {
                let dep = usize::from(a.dependency);
                // A service's attempts carry its plan id (after the classes) and its own
                // request's key: its layers name no class.
                let class = s.classes.get(a.class as usize).map_or("", |c| c.name.as_str());
                let acquire = match callers[dep] {
                    None => s.fleet.pool.acquire_timeout.ns(),
                    Some(k) => s.dependencies[k].service.as_ref().unwrap().pool.as_ref().map_or(0, |p| p.acquire_timeout.ns()),
                };
                let layers: Vec<Layer> = stack_for(&s, set, class, dep, callers[dep]).into_iter().cloned().collect();
                let Some(limit) = attempt_limit(&layers, acquire) else { continue };
                prop_assert!(a.end - a.start <= limit,
                    "policy {name}: attempt {a:?} to {} lasted {} ns > timeout {limit} ns",
                    s.dependencies[dep].name, a.end - a.start);
            }
            // Per request and dependency: no more attempts than the path allows.
            let mut sent: BTreeMap<(u32, u64, u16), u64> = BTreeMap::new();
            for a in &r.attempts {
                *sent.entry((a.class as u32, a.key, a.dependency)).or_default() += 1;
            }
            let mut requests: BTreeMap<(u32, u64), u64> = BTreeMap::new();
            for q in &r.requests {
                *requests.entry((q.class as u32, q.key)).or_default() += 1;
            }
            let bounds: Vec<Vec<Option<u64>>> = (0..s.classes.len()).map(|c| attempt_bounds(&s, set, c)).collect();
            for ((class, key, dep), n) in sent {
                // A service's own request makes one call per call of its plan to each of
                // its callees, each bounded by its stack: checked below per service request.
                let Some(bounds) = bounds.get(class as usize) else {
                    let k = class as usize - s.classes.len();
                    let svc = s.dependencies.iter().filter_map(|d| d.service.as_ref()).nth(k).expect("a service");
                    let own: Vec<&Layer> = s.service_stack(set, s.dependencies.iter().position(|d| d.service.as_ref() == Some(svc)).unwrap()).unwrap()
                        .iter().filter(|l| l.dependencies.is_empty() || l.dependencies.contains(&s.dependencies[usize::from(dep)].name)).collect();
                    if let Some(per_call) = attempts_per_call(&own) {
                        let bound = per_call * calls_to(&svc.calls, &s.dependencies[usize::from(dep)].name);
                        prop_assert!(n <= bound, "policy {name}: a request of service {k} sent {n} attempts > {bound}");
                    }
                    continue;
                };
                let Some(bound) = bounds[usize::from(dep)] else { continue };
                let same_key = requests.get(&(class, key)).copied().unwrap_or(1);
                prop_assert!(n <= bound * same_key,
                    "policy {name}: request {key} of class {class} sent {n} attempts to {} > {bound}",
                    s.dependencies[usize::from(dep)].name);
            }
        }
    }
}
