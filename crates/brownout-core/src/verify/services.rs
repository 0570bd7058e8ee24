//! Services that call services against closed forms (issue 33). Each class of the model calls
//! one chain: the gateway, then services each calling the next (`service.calls: [Call(..)]`),
//! then a leaf. On the way down an attempt into a service passes the service's hop (the round
//! trip, as for a leaf), waits for a worker slot (none here: the slots are far more than can
//! be busy), does the service's own work (`latency`) and runs its plan. So, with `h_k`, `w_k`
//! the hop and work of the k-th service, `a_k` the attempts its stack allows per call and
//! `h_leaf`, `m_leaf` the leaf's hop and mean latency:
//!
//! ```text
//! time per attempt into service k:   T_k = h_k + w_k + a_k T_(k+1),   T_leaf = h_leaf + m_leaf
//! attempts at the leaf per request:  a_gateway x a_1 x ... x a_L                  (total failure)
//!                                    = (r + 1)^(L + 1) with r retries at every layer
//! mean latency of a request:         T_0 (no retry anywhere: sum of the constants + m_leaf)
//! calls in flight at service k:      lambda x T_k     (Little's law, M/G/infinity at each level)
//! ```
//!
//! The first is deterministic: with every call failing (`error_rate: Constant(1.0)` at the
//! leaf) each layer's retry makes all its attempts, every delay is a constant and no backoff
//! is drawn, so every replication counts exactly the product; the class's arrivals stop early
//! enough that every request ends before the horizon, even in `--quick`. The mean latency and
//! the calls in flight at each service are closed forms over Poisson arrivals (the leaf's
//! latency alone is random); Little's law is also checked as the sample-path identity
//! L = lambda W at every service, whatever its calls do, from its own figures.
//!
//! The model is `scenarios/verify/services.ron` (docs/verify.md).

use super::suite::{Check, QUICK_FACTOR, check, secs};
use crate::metrics::summary::RunSummary;
use crate::policy::PolicySpec;
use crate::scenario::{Arrivals, Delay, Dependency, Drift, Latency, Layer, Profile, Scenario, Step};

/// Worker slots a service of the model must have so that no attempt waits for one: the
/// calls in flight at a service are Poisson (M/G/infinity) with a mean of a few, so the
/// chance that this many are busy at once is below any figure the checks could show.
const UNBOUNDED_SLOTS: u32 = 10_000;

/// Why the Little identity rows have a tolerance.
const EDGE_WHY: &str = "edge effects: attempts in flight at the warm-up end and at the horizon";

/// One service on a chain: its dependency index, hop and own work (seconds), and the attempts
/// its stack allows per call of its plan.
#[derive(Debug, Clone, PartialEq)]
struct Level {
    dep: usize,
    hop_s: f64,
    work_s: f64,
    attempts: u32,
}

/// A class's chain: the attempts the gateway allows per call, the services from the top down,
/// and the leaf with its hop and mean latency (seconds).
#[derive(Debug, Clone, PartialEq)]
struct Chain {
    gateway_attempts: u32,
    services: Vec<Level>,
    leaf: usize,
    leaf_hop_s: f64,
    leaf_mean_s: f64,
    /// The leaf's latency is a constant (so is every attempt's time on the chain).
    leaf_constant: bool,
    /// The leaf fails every call (`error_rate: Constant(1.0)`); else it never fails.
    leaf_fails: bool,
}

impl Chain {
    /// T_k for each service from the top, then the leaf's attempt time: `T_k = h_k + w_k +
    /// a_k T_(k+1)`.
    fn attempt_times_s(&self) -> Vec<f64> {
        let mut below = self.leaf_hop_s + self.leaf_mean_s;
        let mut times = vec![below];
        for l in self.services.iter().rev() {
            below = l.hop_s + l.work_s + f64::from(l.attempts) * below;
            times.push(below);
        }
        times.reverse();
        times
    }

    /// A request's time: the gateway's attempts, each the top's attempt time.
    fn request_time_s(&self) -> f64 {
        f64::from(self.gateway_attempts) * self.attempt_times_s()[0]
    }

    /// Attempts that reach the leaf per request: the product of every layer's attempts.
    fn leaf_attempts(&self) -> u64 {
        self.services.iter().fold(u64::from(self.gateway_attempts), |n, l| n * u64::from(l.attempts))
    }

    /// "3 x 3 x 3": each layer's attempts, the gateway's first.
    fn product_text(&self) -> String {
        let mut parts = vec![self.gateway_attempts.to_string()];
        parts.extend(self.services.iter().map(|l| l.attempts.to_string()));
        parts.join(" x ")
    }
}

/// The services model: per class, the closed forms its chain allows; then Little's identity
/// at every service.
pub(super) fn services_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    if s.dependencies.is_empty() || !s.fleet.overhead.is_zero() || s.policies.is_empty() {
        return Err("the services model has `dependencies`, zero fleet.overhead and a policy set".into());
    }
    let deps = s.deps();
    let mut callers = vec![0usize; deps.len()];
    let mut checks = Vec::new();
    for (i, c) in s.classes.iter().enumerate() {
        if c.work.is_some() {
            return Err(format!("class {}: no work in the services model", c.name));
        }
        let chain = chain_of(s, i)?;
        for d in chain.services.iter().map(|l| l.dep).chain([chain.leaf]) {
            callers[d] += 1;
            if callers[d] > 1 {
                return Err(format!("dependency {}: on one class's chain only", deps[d].name));
            }
        }
        let name = &c.name;
        let leaf = &deps[chain.leaf].name;
        if chain.leaf_fails {
            ends_in_time(s, &c.arrivals, &chain).map_err(|why| format!("class {name}: {why}"))?;
            let (class, dep) = (i, chain.leaf);
            checks.push(check(
                &format!("{name}: attempts at {leaf} per request = {}", chain.product_text()),
                chain.leaf_attempts() as f64,
                Box::new(move |r: &RunSummary| attempts(r, dep) / r.classes[class].requests as f64),
            ));
            continue;
        }
        let lambda = match c.arrivals {
            Arrivals::Poisson { rate_per_s } if rate_per_s > 0.0 => rate_per_s,
            _ => return Err(format!("class {name}: Poisson arrivals with a positive rate")),
        };
        if chain.gateway_attempts != 1 || chain.services.iter().any(|l| l.attempts != 1) {
            return Err(format!("class {name}: a chain that never fails has no retry"));
        }
        let times = chain.attempt_times_s();
        checks.push(check(
            &format!("{name}: mean = sum of hops and work + {leaf} mean (ms)"),
            chain.request_time_s() * 1e3,
            Box::new(move |r: &RunSummary| r.classes[i].latency_ms.mean),
        ));
        for (l, t) in chain.services.iter().zip(&times) {
            let dep = l.dep;
            checks.push(check(
                &format!("{name}: Little at {}: lambda x T (in flight)", deps[dep].name),
                lambda * t,
                Box::new(move |r: &RunSummary| figures(r, dep).map_or(f64::NAN, |f| f.mean_in_flight)),
            ));
        }
    }
    for (k, d) in deps.iter().enumerate().filter(|(_, d)| d.service.is_some()) {
        let hop_ms = constant_s(&d.hop).ok_or(format!("service {}: a constant hop", d.name))? * 1e3;
        checks.push(Check {
            tolerance: 0.01,
            why: EDGE_WHY,
            ..check(&format!("Little at {}: L / (lambda W)", d.name), 1.0, Box::new(move |r| little(r, k, hop_ms)))
        });
    }
    Ok(checks)
}

/// The chain class `class` calls, read from the scenario and checked to fit the closed forms.
fn chain_of(s: &Scenario, class: usize) -> Result<Chain, String> {
    let deps = s.deps();
    let c = &s.classes[class];
    let index = |name: &str| deps.iter().position(|d| d.name == name).ok_or(format!("no dependency {name}"));
    let [Step::Call(top)] = c.calls.as_slice() else {
        return Err(format!("class {}: a plan of one required call", c.name));
    };
    let sees = |l: &Layer| {
        (l.classes.is_empty() || l.classes.contains(&c.name))
            && (l.dependencies.is_empty() || l.dependencies.contains(top))
    };
    let gateway_attempts = retry_attempts(s.policies[0].stack.iter().filter(|l| sees(l)))
        .map_err(|why| format!("class {}: {why}", c.name))?;
    let mut services = Vec::new();
    let mut dep = index(top)?;
    while let Some(svc) = &deps[dep].service {
        let d = &deps[dep];
        if services.len() > deps.len() {
            return Err(format!("service {}: a chain that ends", d.name));
        }
        let [Step::Call(next)] = svc.calls.as_slice() else {
            return Err(format!("service {}: a plan of one required call", d.name));
        };
        if svc.workers.slots < UNBOUNDED_SLOTS || svc.pool.is_some() {
            return Err(format!(
                "service {}: at least {UNBOUNDED_SLOTS} worker slots and no pool (no wait for either)",
                d.name
            ));
        }
        let fixed = |what: &str, v: Option<f64>| v.ok_or(format!("service {}: a constant {what}", d.name));
        let hop_s = fixed("hop", constant_s(&d.hop))?;
        let work_s = fixed("latency", constant_latency_s(&d.latency))?;
        plain(d)?;
        let stack = s.service_stack(0, dep).unwrap_or_default();
        let attempts = retry_attempts(stack.iter()).map_err(|why| format!("service {}: {why}", d.name))?;
        services.push(Level { dep, hop_s, work_s, attempts });
        dep = index(next)?;
    }
    let d = &deps[dep];
    plain(d)?;
    let leaf_fails = match d.error_rate {
        Profile::Constant(0.0) => false,
        Profile::Constant(1.0) => true,
        _ => return Err(format!("leaf {}: error_rate Constant(0.0) or Constant(1.0)", d.name)),
    };
    let leaf_constant = constant_latency_s(&d.latency).is_some();
    Ok(Chain {
        gateway_attempts,
        services,
        leaf: dep,
        leaf_hop_s: constant_s(&d.hop).ok_or(format!("leaf {}: a constant hop", d.name))?,
        leaf_mean_s: d.latency.mean_ns().ok_or(format!("leaf {}: a latency with a mean", d.name))? / 1e9,
        leaf_constant,
        leaf_fails,
    })
}

/// Nothing but latency and hop shapes a call's time: no capacity, replicas, modes, drift or
/// transfer.
fn plain(d: &Dependency) -> Result<(), String> {
    if d.capacity.is_some()
        || d.replicas.is_some()
        || !d.modes.is_empty()
        || d.drift != Drift::None
        || d.transfer.ns() != 0
    {
        return Err(format!("dependency {}: no capacity, replicas, modes, drift or transfer", d.name));
    }
    Ok(())
}

/// The attempts a stack allows per call: 1, or a `Retry`'s `max_attempts` that retries every
/// error at once (no backoff, no give-up). Any other layer would change the closed forms.
fn retry_attempts<'a>(layers: impl Iterator<Item = &'a Layer>) -> Result<u32, String> {
    let mut attempts = 1;
    for l in layers {
        match &l.policy {
            PolicySpec::Retry(r) if r.on_error && r.backoff.ns() == 0 && r.give_up == 0.0 && attempts == 1 => {
                attempts = r.max_attempts;
            }
            _ => return Err("at most one layer, a Retry of errors with no backoff and no give-up".into()),
        }
    }
    Ok(attempts)
}

/// The delay in seconds when it is the same for every use.
fn constant_s(d: &Delay) -> Option<f64> {
    match d {
        Delay::Fixed(t) => Some(secs(t.ns())),
        Delay::Random(l) => constant_latency_s(l),
    }
}

fn constant_latency_s(l: &Latency) -> Option<f64> {
    match l {
        Latency::Constant(t) => Some(secs(t.ns())),
        _ => None,
    }
}

/// A chain that fails everywhere is counted exactly only when each of its requests arrives
/// after warm-up and ends before the horizon, even the shortened one of `--quick`: arrivals
/// (a `PoissonProfile`) at rate 0 up to the warm-up's end and from a last point on, that
/// point plus a request's whole (constant) time before the quick horizon.
fn ends_in_time(s: &Scenario, arrivals: &Arrivals, chain: &Chain) -> Result<(), String> {
    if !chain.leaf_constant || chain.services.iter().any(|l| l.attempts == 0) {
        return Err("a leaf that fails every call has a constant latency".into());
    }
    let Arrivals::PoissonProfile { points } = arrivals else {
        return Err("a failing chain's arrivals are a PoissonProfile that stops".into());
    };
    let warmup = s.warmup.ns();
    let quick_horizon = warmup + (s.horizon.ns() - warmup) / QUICK_FACTOR;
    let last = points.last().ok_or("a profile with points")?;
    let idle_before = points.first().is_some_and(|p| p.1 == 0.0)
        && points.iter().filter(|p| p.0.ns() <= warmup).all(|p| p.1 == 0.0)
        && points.iter().any(|p| p.0.ns() >= warmup);
    if !idle_before || last.1 != 0.0 {
        return Err("arrivals at rate 0 up to the warm-up's end and after the last point".into());
    }
    let end = secs(last.0.ns()) + chain.request_time_s();
    if end >= secs(quick_horizon) {
        return Err(format!("its last request ends at {end} s, after the quick horizon {} s", secs(quick_horizon)));
    }
    Ok(())
}

/// The attempts dependency `dep` received.
fn attempts(r: &RunSummary, dep: usize) -> f64 {
    figures(r, dep).map_or(f64::NAN, |f| f.attempts as f64)
}

fn figures(r: &RunSummary, dep: usize) -> Option<&crate::metrics::summary::DependencyFigures> {
    r.dependencies.get(dep)
}

/// L / (lambda W) at dependency `dep`: its mean attempts in flight over its attempts per
/// second times the time from sending one to its answer (its `total_ms` and the hop). The
/// measured span is the summed block's calls over its rate.
fn little(r: &RunSummary, dep: usize, hop_ms: f64) -> f64 {
    let Some(f) = figures(r, dep) else { return f64::NAN };
    let span_s = r.dependency.calls as f64 / r.dependency.calls_per_s;
    f.mean_in_flight / (f.attempts as f64 / span_s * (f.total_ms.mean + hop_ms) / 1e3)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn model() -> Scenario {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/verify/services.ron");
        crate::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn chain_times_and_products_by_hand() {
        // Gateway 3 attempts; service A (hop 1 ms, work 2 ms, 2 attempts) calls B (hop 1 ms,
        // work 1 ms, 3 attempts) calls a leaf (hop 1 ms, 4 ms).
        let chain = Chain {
            gateway_attempts: 3,
            services: vec![
                Level { dep: 0, hop_s: 0.001, work_s: 0.002, attempts: 2 },
                Level { dep: 1, hop_s: 0.001, work_s: 0.001, attempts: 3 },
            ],
            leaf: 2,
            leaf_hop_s: 0.001,
            leaf_mean_s: 0.004,
            leaf_constant: true,
            leaf_fails: true,
        };
        // T_leaf = 5 ms; T_B = 1 + 1 + 3 x 5 = 17 ms; T_A = 1 + 2 + 2 x 17 = 37 ms.
        let t = chain.attempt_times_s();
        for (got, want) in t.iter().zip([0.037, 0.017, 0.005]) {
            assert!((got - want).abs() < 1e-12, "{t:?}");
        }
        assert!((chain.request_time_s() - 0.111).abs() < 1e-12);
        assert_eq!(chain.leaf_attempts(), 18);
        assert_eq!(chain.product_text(), "3 x 2 x 3");
    }

    #[test]
    fn the_model_file_gives_the_hand_figures() {
        // scenarios/verify/services.ron: r = 2 retries (3 attempts) at the gateway and in each
        // service; fail1 has L = 1 service, fail2 L = 2: (r + 1)^(L + 1) = 9 and 27. chain:
        // front (hop 2 ms, work 3 ms) calls leaf (hop 1 ms, exponential mean 10 ms) at
        // 100/s: mean 2 + 3 + 1 + 10 = 16 ms; in flight at front 100 x 0.016 = 1.6.
        let s = model();
        let checks = services_checks(&s).unwrap_or_else(|e| panic!("{e}"));
        let rows: Vec<(&str, f64)> = checks.iter().map(|c| (c.quantity.as_str(), c.expected)).collect();
        let want = [
            ("chain: mean = sum of hops and work + leaf mean (ms)", 16.0),
            ("chain: Little at front: lambda x T (in flight)", 1.6),
            ("fail1: attempts at db1 per request = 3 x 3", 9.0),
            ("fail2: attempts at db2 per request = 3 x 3 x 3", 27.0),
            ("Little at front: L / (lambda W)", 1.0),
            ("Little at s1: L / (lambda W)", 1.0),
            ("Little at s2a: L / (lambda W)", 1.0),
            ("Little at s2b: L / (lambda W)", 1.0),
        ];
        assert_eq!(rows.len(), want.len(), "{rows:?}");
        for ((q, e), (wq, we)) in rows.iter().zip(want) {
            assert_eq!(*q, wq);
            assert!((e - we).abs() < 1e-9, "{q}: {e} vs {we}");
        }
        assert!(checks.iter().filter(|c| c.quantity.starts_with("Little at")).all(|c| c.tolerance == 0.01));
    }

    #[test]
    fn a_model_off_its_closed_form_is_refused() {
        let edit = |f: &dyn Fn(&mut Scenario)| {
            let mut s = model();
            f(&mut s);
            services_checks(&s).err().expect("refused")
        };
        let find = |s: &Scenario, n: &str| s.dependencies.iter().position(|d| d.name == n).unwrap();
        // A backoff makes the time per request a draw of the retry's schedule.
        let why = edit(&|s| {
            let k = find(s, "s1");
            let svc = s.dependencies[k].service.as_mut().unwrap();
            let PolicySpec::Retry(r) = &mut svc.stack[0].policy else { panic!() };
            r.backoff = crate::units::Dur::ms(5);
        });
        assert!(why.contains("no backoff"), "{why}");
        // Arrivals that never stop leave requests in flight at the horizon.
        let why = edit(&|s| s.classes[1].arrivals = Arrivals::Poisson { rate_per_s: 20.0 });
        assert!(why.contains("PoissonProfile"), "{why}");
        // Too few worker slots make attempts wait.
        let why = edit(&|s| {
            let k = find(s, "front");
            s.dependencies[k].service.as_mut().unwrap().workers.slots = 4;
        });
        assert!(why.contains("worker slots"), "{why}");
        // A profile that still sends at the quick horizon.
        let why = edit(&|s| {
            let Arrivals::PoissonProfile { points } = &mut s.classes[1].arrivals else { panic!() };
            let last = points.len() - 1;
            points[last].0 = crate::units::Dur::secs(108);
        });
        assert!(why.contains("quick horizon"), "{why}");
    }
}
