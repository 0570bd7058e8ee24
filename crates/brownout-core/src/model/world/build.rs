//! Building a world for one run, in named steps, and the events that start it.

use super::*;
use crate::policy::retry::ReplicaRule;

impl<'m, R: Record, F: Features> World<'m, R, F> {
    pub(super) fn new(m: &'m Model, policy: usize, timeseries: bool) -> Self {
        let s = &m.scenario;
        let n = s.fleet.instances;
        // The gateway's instances, then one per service (`services.rs`).
        let services = services::Svc::instances(m);
        let insts: Vec<Inst> = (0..n + services).map(|instance| build_instance(m, policy, instance)).collect();
        let layout = build_layout(m, policy, &insts[0]);
        let rec = build_recorder(m, policy, &layout, timeseries);
        // Every dependency's replicas in one row (`Upstream::base`).
        let counts: Vec<usize> = s.deps().iter().map(|d| d.replicas.as_ref().map_or(1, |r| r.count as usize)).collect();
        let base: Vec<usize> = counts.iter().scan(0, |at, &n| Some(std::mem::replace(at, *at + n))).collect();
        let replicas: usize = counts.iter().sum();
        let mut w = Self {
            m,
            policy,
            reqs: Slab::new(),
            admitted: Vec::new(),
            first_ids: Vec::new(),
            traffic: Traffic {
                arrivals: m.arrivals.clone(),
                arrival_rng: s.classes.iter().map(|c| stream(m.seed, &format!("arrivals/{}", c.name))).collect(),
                item_rng: s.classes.iter().map(|c| stream(m.seed, &format!("items/{}", c.name))).collect(),
                next_index: vec![0; s.classes.len()],
                pending_reloads: Slab::new(),
                arrived: 0,
            },
            gateway: Gateway { insts, pump: Vec::new(), notices: Slab::new(), next_attempt_id: 0, pool_of: pool_of(s) },
            layout,
            upstream: Upstream {
                calls: Slab::new(),
                base,
                busy: vec![0; replicas],
                queue: vec![VecDeque::new(); replicas],
                codel: vec![Default::default(); replicas],
                shared: vec![Default::default(); replicas],
                in_flight: 0,
                dep_in_flight: if m.graph.is_some() { vec![0; s.deps().len()] } else { Vec::new() },
            },
            plans: Plans::default(),
            svc: services::Svc::new(m),
            draws: Draws::new(m.seed),
            stock: s.catalogue.as_ref().map(|c| Stock::new(c, n, m.seed)),
            last_answers: LastAnswers::new(s, n),
            rec,
            trace: Trace {
                hash: 0xcbf2_9ce4_8422_2325,
                events: Vec::new(),
                limit: 0,
                records: None,
                log: None,
                log_why: None,
            },
            progress: Progress {
                horizon: s.horizon.ns(),
                handled: 0,
                abort: None,
                max_events: s.limits.max_events,
                max_pending: super::max_pending(s.limits.max_in_flight),
            },
            observer: None,
            form: std::marker::PhantomData,
        };
        if let Some(l) = w.layout.limit_layer {
            let limits: Vec<f64> =
                // The gateway's instances: a service's follow them (`services.rs`).
                (w.gateway.insts[..n as usize].iter()).map(|inst| inst.layers[l as usize].last.limit.unwrap_or(0.0)).collect();
            w.rec.start_limits(&limits);
        }
        w
    }

    /// The first events: each class's first arrival and closed-loop users, the first window
    /// tick, the timers policies ask for when built, and the scripted restarts.
    pub(super) fn schedule_start(&mut self, q: &mut EventQueue<Ev>) {
        let s = &self.m.scenario;
        for c in 0..self.traffic.arrivals.len() {
            let class = c as ClassId;
            for user in 0..self.traffic.arrivals[c].initial_users() {
                let think = self.think(class, user, 0);
                q.schedule_at(think, Ev::User { class, user, k: 0 });
            }
            if let Some(t) = self.traffic.arrivals[c].next(0, &mut self.traffic.arrival_rng[c]) {
                // Scripted times may start at 0; Poisson starts after one gap.
                q.schedule_at(t, Ev::Arrival { class: c as ClassId });
            }
        }
        q.schedule_at(s.window.ns().min(self.progress.horizon), Ev::Tick);
        for (i, inst) in self.gateway.insts.iter_mut().enumerate() {
            for (l, layer) in inst.layers.iter_mut().enumerate() {
                if let Some(t) = layer.last.wake_at {
                    layer.wake = Some(t);
                    layer.wake_generation = layer.wake_generation.wrapping_add(1);
                    let generation = layer.wake_generation;
                    q.schedule_at(t, Ev::Wake { instance: i as u32, layer: l as u8, generation });
                }
            }
        }
        for r in &s.fleet.restarts {
            for (k, &instance) in r.instances.iter().enumerate() {
                let at = r.at.ns().saturating_add((k as Time).saturating_mul(r.interval.ns()));
                q.schedule_at(at, Ev::Restart { instance, policies: r.persistent_policies, cache: r.persistent_cache });
            }
        }
    }
}

/// Policy layer `spec` of the run's policy set, freshly built for `instance`.
pub(super) fn build_layer(m: &Model, spec: &crate::scenario::Layer, layer: usize, instance: u32) -> LayerRt {
    let s = &m.scenario;
    // A service's instance builds its layers as one of its service's fleet.
    let (instance, of) = services::layer_instance(m, instance);
    let ctx = BuildCtx::new(s.classes.iter().map(|c| c.name.clone()).collect())
        .on_instance(instance, of)
        .with_plugins(m.plugins.clone())
        .with_seed(m.seed())
        .at_layer(layer as u32);
    let policy = spec.policy.build(&ctx);
    let last = policy.status();
    let watch = policy.reports_status();
    LayerRt { policy, queue: waitq::WaitQueue::default(), waiting: 0, wake: None, wake_generation: 0, last, watch }
}

/// Instance `instance` (a gateway's, or past them a service's) with idle slots and pool and
/// its own policy stack (every layer of the run's stack: each instance uses its own part).
fn build_instance(m: &Model, policy: usize, instance: u32) -> Inst {
    let s = &m.scenario;
    let gateway = instance < s.fleet.instances;
    Inst {
        workers: 0,
        worker_q: VecDeque::new(),
        worker_waiting: 0,
        conns: 0,
        pool_q: VecDeque::new(),
        pool_waiting: 0,
        own: if gateway { s.fleet.pools.iter().map(|_| OwnPool::default()).collect() } else { Vec::new() },
        idle: if gateway && (0..=s.fleet.pools.len()).any(|p| m.conn_life(policy, p).is_some()) {
            vec![VecDeque::new(); s.deps().len()]
        } else {
            Vec::new()
        },
        layers: (m.run_stack(policy).layers.iter().enumerate()).map(|(j, l)| build_layer(m, l, j, instance)).collect(),
        degraded: 0,
        clients: s.deps().iter().enumerate().map(|(k, d)| build_client(m, k, d, instance)).collect(),
    }
}

/// The dependencies layer `spec` is scoped to, by number (none for a layer of every call).
pub(super) fn scoped_deps<'a>(
    s: &'a crate::scenario::Scenario,
    spec: &'a crate::scenario::Layer,
) -> impl Iterator<Item = u16> + 'a {
    spec.dependencies.iter().filter_map(|n| s.deps().iter().position(|d| &d.name == n).map(|k| k as u16))
}

/// Per dependency, the pool its calls use (`Gateway::pool_of`): empty without `fleet.pools`.
fn pool_of(s: &crate::scenario::Scenario) -> Vec<u8> {
    if s.fleet.pools.is_empty() {
        return Vec::new();
    }
    let own = |d: &crate::scenario::Dependency| s.fleet.pools.iter().position(|p| p.dependency == d.name);
    s.deps().iter().map(|d| own(d).map_or(0, |k| k as u8 + 1)).collect()
}

/// Pool `p`'s size and acquire timeout (ns): 0 the fleet's `pool`, k `fleet.pools[k - 1]`
/// (whose acquire timeout defaults to the fleet pool's).
pub(super) fn pool_spec(s: &crate::scenario::Scenario, p: usize) -> (u32, Time) {
    let shared = &s.fleet.pool;
    match p.checked_sub(1).map(|k| &s.fleet.pools[k]) {
        None => (shared.max_connections, shared.acquire_timeout.ns()),
        Some(own) => (own.max_connections, own.acquire_timeout.unwrap_or(shared.acquire_timeout).ns()),
    }
}

/// Instance `instance`'s client of dependency `d` (id `k`): idle balancer, fresh outlier
/// detector.
fn build_client(m: &Model, k: usize, d: &crate::scenario::Dependency, instance: u32) -> Client {
    let replicas = d.replicas.as_ref().map_or(1, |r| r.count as usize);
    Client {
        outstanding: vec![0; replicas],
        rr: instance,
        outlier: d.replicas.as_ref().and_then(|r| {
            // Salted by the dependency's name as its other draws are (0 for the one
            // `dependency`), so two dependencies' detectors do not enforce alike.
            let label = crate::engine::label_hash("dependency/outlier") ^ m.dep(k as u16).salt();
            let draws = crate::engine::Counter::new(m.seed(), label);
            r.outlier_detection.as_ref().map(|o| crate::model::outlier::Outlier::new(o, r.count, draws, instance, 0))
        }),
        health: d.replicas.as_ref().and_then(|r| {
            let h = r.health_check.as_ref()?;
            Some(crate::model::health::HealthChecks::new(r.count, h.inter.ns(), h.rise, h.fall, 0))
        }),
    }
}

/// Which layers each class passes (each class's calls to each dependency, when a layer is
/// scoped to dependencies), where its retry layer starts, which layers are fleet-wide, and
/// which layers report a breaker state and a limit (read off `first`, a freshly built
/// instance).
fn build_layout(m: &Model, policy: usize, first: &Inst) -> Layout {
    let s = &m.scenario;
    let run = m.run_stack(policy);
    let stack = &run.layers;
    let deps = s.deps();
    // Plan ids: the classes, then the services (`model::graph::Graph`), each with its own rows.
    let services = m.graph.as_ref().map_or(0, |g| g.services.len());
    let ids = s.classes.len() + services;
    // The dependencies plan id `c` calls (a service's, those of its plan).
    let called = |c: usize| -> Vec<String> {
        match m.graph.as_ref().and_then(|g| g.service_dep(c)) {
            None => s.dependencies_called(&s.classes[c]).into_iter().map(str::to_string).collect(),
            Some(d) => {
                let svc = deps[d as usize].service.as_ref().expect("a service");
                let calls =
                    svc.calls.iter().flat_map(|step| step.calls().iter().filter_map(crate::scenario::Step::dependency));
                calls.map(str::to_string).collect()
            }
        }
    };
    // Rows of the layout: one per plan id, or one per (plan id, dependency) when a layer names
    // dependencies (`World::route_of`); without, nothing looks up a call's dependency.
    let stride = if stack.iter().any(|l| !l.dependencies.is_empty()) { deps.len() } else { 0 };
    // A gateway layer sees the classes it names; a service's layer that service's calls.
    let for_class = |i: usize, c: usize| match run.owner[i] {
        None => c < s.classes.len() && (stack[i].classes.is_empty() || stack[i].classes.contains(&s.classes[c].name)),
        Some(k) => c == s.classes.len() + k as usize,
    };
    let for_dep =
        |l: &crate::scenario::Layer, d: &str| l.dependencies.is_empty() || l.dependencies.iter().any(|n| n == d);
    let routes: Vec<(usize, Option<&str>)> = if stride == 0 {
        (0..ids).map(|c| (c, None)).collect()
    } else {
        (0..ids).flat_map(|c| deps.iter().map(move |d| (c, Some(d.name.as_str())))).collect()
    };
    let class_layers: Vec<Vec<u8>> = routes
        .iter()
        .map(|&(c, dep)| {
            let passes = |i: usize| for_class(i, c) && dep.is_none_or(|d| for_dep(&stack[i], d));
            (0..stack.len()).filter(|&i| passes(i)).map(|i| i as u8).collect()
        })
        .collect();
    // At arrival a request hears from the layers of its class that any of its calls pass
    // (`Policy::on_request`: a retry budget's deposit), once. With a plan, each call runs
    // through the class's stack as a request of its own, so every layer it passes wraps the
    // client that sends it and hears of each call as it is sent instead (`call_layers`),
    // scoped to its dependency or not: tower's TpsBudget deposits per request to the service
    // it wraps, Finagle's `RequeueFilter.apply` per request through the filter
    // (`retryBudget.deposit()`), Envoy's retry budget is a share of the cluster's active
    // upstream requests. Only the layers that listen (`Hooks::ON_REQUEST`) are kept: the
    // others would hear nothing.
    let hooks: Vec<Hooks> = first.layers.iter().map(|l| l.policy.hooks()).collect();
    let listens = |i: usize| hooks[i].has(Hooks::ON_REQUEST);
    let planned = |c: usize| m.graph.as_ref().is_some_and(|g| g.plans[c].is_some());
    let arrival_layers: Vec<Vec<u8>> = (0..ids)
        .map(|c| {
            if planned(c) {
                return Vec::new();
            }
            let called = called(c);
            let passes = |i: usize| for_class(i, c) && called.iter().any(|d| for_dep(&stack[i], d));
            (0..stack.len()).filter(|&i| passes(i) && listens(i)).map(|i| i as u8).collect()
        })
        .collect();
    let call_layers: Vec<Vec<u8>> =
        if (0..ids).any(planned) {
            (routes.iter().zip(&class_layers))
                .map(|(&(c, _), ls)| {
                    if planned(c) { ls.iter().copied().filter(|&l| listens(l as usize)).collect() } else { Vec::new() }
                })
                .collect()
        } else {
            Vec::new()
        };
    let inner_start: Vec<u8> = class_layers
        .iter()
        .map(|ls| ls.iter().position(|&l| first.layers[l as usize].policy.is_retry()).unwrap_or(0) as u8)
        .collect();
    // A `Timeout` outside the retry layer times the request, as .NET's total request timeout
    // outside its retry (Polly's outer timeout cancels the attempt in flight and the retry's
    // delay, and no retry starts after it); one inside, or with no retry inside, each attempt.
    let request_timeouts: Vec<Vec<(u8, Time, Time)>> = class_layers
        .iter()
        .zip(&inner_start)
        .zip(&routes)
        .map(|((ls, &start), &(c, _))| {
            (0..start as usize)
                .filter(|&p| matches!(stack[ls[p] as usize].policy, crate::policy::PolicySpec::Timeout(_)))
                .filter_map(|p| {
                    let (t, unwind) = first.layers[ls[p] as usize].policy.attempt_timeout(c as ClassId)?;
                    Some((p as u8, t, unwind))
                })
                .collect()
        })
        .collect();
    let attempt_timeouts = (class_layers.iter().zip(&request_timeouts))
        .map(|(ls, bounds)| {
            let request = |p: usize| bounds.iter().any(|&(at, ..)| at as usize == p);
            let times = |p: usize, l: u8| hooks[l as usize].has(Hooks::ATTEMPT_TIMEOUT) && !request(p);
            ls.iter().enumerate().filter(|&(p, &l)| times(p, l)).map(|(_, &l)| l).collect()
        })
        .collect();
    let depth = class_layers.iter().map(Vec::len).max().unwrap_or(0);
    let replica_rule = class_layers
        .iter()
        .map(|ls| {
            let rule = |&l: &u8| match &stack[l as usize].policy {
                crate::policy::PolicySpec::Retry(r) if r.replica != ReplicaRule::Rebalance => Some(r.replica),
                _ => None,
            };
            ls.iter().rev().find_map(rule).unwrap_or_default()
        })
        .collect();
    // The breaker and limit the recorder follows per instance are the gateway's.
    let gateway = &first.layers[..run.gateway];
    let find = |f: &dyn Fn(&Status) -> bool| gateway.iter().position(|l| f(&l.last)).map(|i| i as u8);
    let route_hooks =
        class_layers.iter().map(|ls| ls.iter().fold(Hooks::NONE, |h, &l| h.with(hooks[l as usize]))).collect();
    let request_timed = request_timeouts.iter().any(|t| !t.is_empty());
    Layout {
        class_layers,
        stride,
        arrival_layers,
        call_layers,
        inner_start,
        request_timeouts,
        attempt_timeouts,
        fleet: (stack.iter().zip(&run.owner))
            .map(|(l, owner)| match l.scope {
                // A service is one instance: its layers are its own.
                _ if owner.is_some() => None,
                Scope::Instance => None,
                Scope::Fleet { propagation } => Some(propagation.ns()),
            })
            .collect(),
        breaker_layer: find(&|st| st.breaker.is_some()),
        limit_layer: find(&|st| st.limit.is_some()),
        kinds: stack.iter().map(|l| l.policy.facts().layer).collect(),
        hooks,
        route_hooks,
        request_timed,
        depth,
        gateway_layers: run.gateway,
        replica_rule,
    }
}

/// The run's metrics recorder.
fn build_recorder<R: Record>(m: &Model, policy: usize, layout: &Layout, timeseries: bool) -> R {
    let s = &m.scenario;
    let b = s.business.as_ref();
    let phases = crate::scenario::phases_of(s);
    let spans: Vec<(Time, Time)> = phases.iter().map(|p| (p.start, p.end)).collect();
    // The derived `before` phase is the healthy span a later phase's level before comes from.
    let first_is_healthy = phases.first().is_some_and(|p| {
        p.source == crate::scenario::PhaseSource::Derived && p.name == crate::scenario::DERIVED_NAMES[0]
    });
    let setup = RecorderSetup {
        policy: s.policies[policy].name.clone(),
        classes: s.classes.iter().map(|c| c.name.clone()).collect(),
        deadlines: s.classes.iter().map(|c| c.deadline.ns()).collect(),
        instances: s.fleet.instances,
        slots: s.fleet.workers.slots,
        connections: s.pool_connections(),
        warmup: s.warmup.ns(),
        horizon: s.horizon.ns(),
        window: s.window.ns(),
        has_breaker: layout.breaker_layer.is_some(),
        has_limit: layout.limit_layer.is_some(),
        has_limiter: layout.kinds.contains(&LayerKind::Limiter),
        has_bulkhead: layout.kinds.contains(&LayerKind::Bulkhead),
        costs: b.map_or((0.0, 0.0, 0.0), |b| (b.substitution_cost, b.refund_cost, b.lost_order_cost)),
        fallbacks: s.classes.iter().map(|c| crate::model::fallback::recorded_as(c.fallback_answer)).collect(),
        timeseries,
        recovery: Some(crate::metrics::RecoveryRule {
            tolerance: s.recovery.tolerance,
            hold: s.recovery.hold,
            baseline: s.recovery.baseline,
            degraded_below: s.recovery.degraded_below,
            first_is_healthy,
        }),
    };
    let mut rec = R::build(setup, &spans);
    if let Some(g) = &m.graph {
        let names: Vec<String> = s.deps().iter().map(|d| d.name.clone()).collect();
        // Each class's plan, call by call in the order written (`Link::flat` numbers them so).
        let plans: Vec<Vec<crate::metrics::PlanCallInfo>> = g
            .plans
            .iter()
            .map(|p| {
                let steps = p.as_deref().unwrap_or(&[]);
                let calls = steps.iter().enumerate().flat_map(|(k, st)| st.calls.iter().map(move |c| (k, c)));
                calls
                    .map(|(k, c)| crate::metrics::PlanCallInfo {
                        step: k as u32,
                        dependency: s.deps()[c.dep as usize].name.clone(),
                        optional: c.optional,
                    })
                    .collect()
            })
            .collect();
        rec.set_graph(&names, &plans);
        let pools = pool_of(s);
        for d in 0..names.len() {
            let pool = pools.get(d).copied().unwrap_or(0);
            let size = pool_spec(s, pool as usize).0;
            rec.graph(crate::metrics::GraphEvent::UsesPool { dep: d as u16, pool, size });
        }
        for (l, spec) in m.run_stack(policy).layers.iter().enumerate() {
            let (kind, breaker) = (spec.policy.kind(), layout.kinds[l] == LayerKind::Breaker);
            for dep in scoped_deps(s, spec) {
                rec.graph(crate::metrics::GraphEvent::LayerScoped { dep, kind, breaker });
            }
        }
    }
    rec
}
