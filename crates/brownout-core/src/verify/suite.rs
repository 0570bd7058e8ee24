//! The verification suite: runs the reference models of `scenarios/verify/` with independent
//! replications and compares each measured quantity with its closed form.
//!
//! Every closed form is computed from the parameters the scenario file states (rates, means,
//! servers, permits, timeouts), so a reader can change a file and see theory and simulation
//! move together. A model whose file no longer fits its theory (say, a queue on the Erlang
//! loss limiter) is an error, not a silent comparison with the wrong formula.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::theory::{self, Interval};
use crate::engine::{counter_u64, label_hash};
use crate::metrics::summary::{ClassSummary, FOUND_BUCKETS, RunSummary};
use crate::model::{Model, RunOptions, run_policy};
use crate::policy::PolicySpec;
use crate::scenario::{self, Arrivals, Latency, Scenario};

/// Confidence level of each printed interval.
pub(crate) const LEVEL: f64 = 0.95;

/// In `--quick` mode the measured span (horizon minus warm-up) is divided by this.
pub(crate) const QUICK_FACTOR: u64 = 4;

const REPLICATION: u64 = label_hash("verify/replication");

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct Options {
    /// Shorter horizons and fewer replications (for the test suite).
    pub quick: bool,
    /// Replications per model (default: 5 quick, 10 full).
    pub replications: Option<usize>,
    /// Root seed; replication `r` runs with a seed derived from (seed, r).
    pub seed: u64,
    /// Folder holding the model files.
    pub dir: PathBuf,
}

/// One comparison of a simulated quantity with its closed form.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// Model file stem, e.g. `mm1`.
    pub model: String,
    /// What is compared, e.g. `mean wait in queue (ms)`.
    pub quantity: String,
    /// The closed form.
    pub expected: f64,
    /// 95 % Student-t interval over the replications.
    pub ci: Interval,
    /// The same at the simultaneous level 1 - 0.05 / checks (Bonferroni), used for the verdict.
    pub family: Interval,
    /// Relative tolerance granted to a biased estimator (0 = none), with `why`.
    pub tolerance: f64,
    /// Why the tolerance exists (empty when there is none).
    pub why: &'static str,
    /// The verdict.
    pub passed: bool,
}

/// What the suite found.
#[derive(Debug, Clone)]
pub struct Report {
    /// Every comparison, in model order.
    pub checks: Vec<CheckResult>,
    /// Replications per model.
    pub replications: usize,
    /// Root seed.
    pub seed: u64,
    /// Quick mode.
    pub quick: bool,
}

impl CheckResult {
    /// A bound judged on every replication (the token bucket's rows) rather than a closed form
    /// judged by its interval: no tolerance, but a reason.
    pub fn is_bound(&self) -> bool {
        self.tolerance == 0.0 && !self.why.is_empty()
    }
}

impl Report {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// A quantity read from one replication's summary.
pub(super) type Estimator = Box<dyn Fn(&RunSummary) -> f64 + Send + Sync>;

/// A comparison before it has been run.
pub(super) struct Check {
    pub(super) quantity: String,
    pub(super) expected: f64,
    pub(super) tolerance: f64,
    pub(super) why: &'static str,
    pub(super) estimate: Estimator,
}

pub(super) fn check(quantity: &str, expected: f64, estimate: Estimator) -> Check {
    Check { quantity: quantity.into(), expected, tolerance: 0.0, why: "", estimate }
}

/// How a model derives its checks from its scenario file.
type Derive = fn(&Scenario) -> Result<Vec<Check>, String>;

/// The models, by file stem, and how each derives its checks from its scenario.
const MODELS: &[(&str, Derive)] = &[
    ("mm1", queue_checks),
    ("mmc", queue_checks),
    ("mmc-workers", worker_queue_checks),
    ("mmc-limiter", limiter_queue_checks),
    ("erlang-b-exp", loss_checks),
    ("erlang-b-lognormal", loss_checks),
    ("little", little_checks),
    ("timeout-exp", timeout_checks),
    ("timeout-lognormal", timeout_checks),
    ("mmck", super::loss_k::mmck_checks),
    ("mg1-ps-exp-50", super::ps::ps_checks),
    ("mg1-ps-exp-80", super::ps::ps_checks),
    ("mg1-ps-lognormal-50", super::ps::ps_checks),
    ("mg1-ps-lognormal-80", super::ps::ps_checks),
    ("graph", super::graph::graph_checks),
    ("services", super::services::services_checks),
];

/// Why the suite could not run. Its `Display` is the message `brownout verify` prints.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SuiteError {
    /// Fewer than two replications: an interval needs a spread.
    Replications {
        /// The replications asked for.
        asked: usize,
    },
    /// A model file did not load.
    Load(scenario::ScenarioError),
    /// A model file no longer fits its closed form, or one of its runs failed.
    Model {
        /// The model file.
        path: PathBuf,
        /// What does not fit, or which replication failed and why.
        reason: String,
    },
}

impl std::fmt::Display for SuiteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SuiteError::Replications { .. } => {
                f.write_str("--replications must be >= 2 (a confidence interval needs a spread)")
            }
            SuiteError::Load(e) => write!(f, "{e}"),
            SuiteError::Model { path, reason } => write!(f, "{}: {reason}", path.display()),
        }
    }
}

impl std::error::Error for SuiteError {}

/// Run the whole suite.
pub fn run(opts: &Options) -> Result<Report, SuiteError> {
    run_observed(opts, &|_| {})
}

/// Replications per model: as asked, else 5 quick and 10 full.
fn replications(opts: &Options) -> usize {
    opts.replications.unwrap_or(if opts.quick { 5 } else { 10 })
}

/// The number of runs [`run`] makes with `opts`: every model, every replication.
pub fn runs(opts: &Options) -> usize {
    (MODELS.len() + 1) * replications(opts) // + the token bucket's (`bucket`)
}

/// As [`run`], telling `finished` each time one run of one model ends (from the thread that
/// ran it), with the number of runs finished so far: for a progress display.
pub fn run_observed(opts: &Options, finished: &(dyn Fn(usize) + Sync)) -> Result<Report, SuiteError> {
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tick = || finished(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
    let replications = replications(opts);
    if replications < 2 {
        return Err(SuiteError::Replications { asked: replications });
    }
    let mut pending = Vec::new();
    for (stem, derive) in MODELS {
        let path = opts.dir.join(format!("{stem}.ron"));
        let mut s = scenario::load(&path).map_err(SuiteError::Load)?;
        super::graph::anchor_data(&mut s, &opts.dir);
        let model = |reason| SuiteError::Model { path: path.clone(), reason };
        let checks = derive(&s).map_err(model)?;
        if opts.quick {
            let measured = (s.horizon.ns() - s.warmup.ns()) / QUICK_FACTOR;
            s.horizon = scenario::Dur(s.warmup.ns() + measured.max(1));
        }
        let runs = replicate(&s, &opts.dir, opts.seed, replications, &tick).map_err(model)?;
        pending.push((stem.to_string(), checks, runs));
    }
    let total: usize = pending.iter().map(|p| p.1.len()).sum();
    let family_level = 1.0 - (1.0 - LEVEL) / total as f64;
    let mut checks = Vec::with_capacity(total);
    for (model, list, runs) in pending {
        for c in list {
            let values: Vec<f64> = runs.iter().map(|r| (c.estimate)(r)).collect();
            let ci = theory::t_interval(&values, LEVEL);
            let family = theory::t_interval(&values, family_level);
            let passed = judge(&family, c.expected, c.tolerance);
            checks.push(CheckResult {
                model: model.clone(),
                quantity: c.quantity,
                expected: c.expected,
                ci,
                family,
                tolerance: c.tolerance,
                why: c.why,
                passed,
            });
        }
    }
    checks.extend(super::bucket::bucket_rows(opts, &tick)?);
    Ok(Report { checks, replications, seed: opts.seed, quick: opts.quick })
}

/// Pass when the closed form lies in the interval, or the estimate is within the relative
/// tolerance of it (for estimators with a known small bias).
pub(crate) fn judge(interval: &Interval, expected: f64, tolerance: f64) -> bool {
    interval.contains(expected) || (interval.mean - expected).abs() <= tolerance * expected.abs()
}

/// The seed of replication `r`: distinct, and a pure function of (root seed, r).
pub(crate) fn replication_seed(seed: u64, r: usize) -> u64 {
    counter_u64(seed, REPLICATION, r as u64, 0)
}

/// Run policy set 0 of `s` once per replication, in parallel; results in replication order.
/// `tick` is called as each run ends.
fn replicate(
    s: &Scenario,
    dir: &Path,
    seed: u64,
    n: usize,
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<RunSummary>, String> {
    (0..n)
        .into_par_iter()
        .map(|r| {
            let rs = replication_seed(seed, r);
            let model = Model::build(s, rs, dir).map_err(|e| e.to_string())?;
            let out = run_policy(&model, 0, RunOptions::default());
            tick();
            out.map(|out| out.summary).map_err(|why| format!("replication {r} (seed {rs}): {why}"))
        })
        .collect()
}

// ---- reading a model's parameters --------------------------------------------------------

pub(super) fn single_class(s: &Scenario) -> Result<f64, String> {
    if s.classes.len() != 1 {
        return Err("a verification model has exactly one class".into());
    }
    match s.classes[0].arrivals {
        Arrivals::Poisson { rate_per_s } if rate_per_s > 0.0 => Ok(rate_per_s),
        _ => Err("the class must have Poisson arrivals with a positive rate".into()),
    }
}

pub(super) fn class0(r: &RunSummary) -> &ClassSummary {
    &r.classes[0]
}

/// Exponential mean in seconds, or an error naming what the model needs.
pub(super) fn exponential_mean_s(l: &Latency) -> Result<f64, String> {
    match l {
        Latency::Exponential { mean } => Ok(secs(mean.ns())),
        _ => Err("the dependency latency must be Exponential for this model".into()),
    }
}

pub(super) fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

pub(super) fn no_extra_delay(s: &Scenario) -> Result<(), String> {
    if !s.fleet.overhead.is_zero() || !s.dependency.hop.is_zero() || s.classes[0].work.is_some() {
        return Err("the model needs zero fleet.overhead, dependency.hop and class work".into());
    }
    if !s.policies[0].stack.is_empty() {
        return Err("the queueing model has no policy (an empty stack)".into());
    }
    Ok(())
}

// ---- the models ------------------------------------------------------------------------------

/// M/M/c: mean wait in queue and probability of waiting against Erlang C.
fn queue_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    let lambda = single_class(s)?;
    let mean_s = exponential_mean_s(&s.dependency.latency)?;
    no_extra_delay(s)?;
    let servers = match &s.dependency.capacity {
        Some(c) if (c.servers as usize) < FOUND_BUCKETS => c.servers,
        _ => {
            return Err(format!("dependency.capacity.servers must be given and below {FOUND_BUCKETS}"));
        }
    };
    let a = lambda * mean_s;
    if a >= servers as f64 {
        return Err(format!("offered load {a} erlangs >= {servers} servers: unstable"));
    }
    let c = servers as usize;
    let waited = move |r: &RunSummary| {
        let found = &r.dependency.found_in_flight;
        let all: u64 = found.iter().sum();
        found[c..].iter().sum::<u64>() as f64 / all.max(1) as f64
    };
    // The end-to-end latency is queue wait plus service; the dependency's own latency is the
    // service alone. Their means differ by the mean wait.
    let wait_ms = |r: &RunSummary| class0(r).latency_ms.mean - r.dependency.latency_ms.mean;
    Ok(vec![
        check(
            &format!("M/M/{servers} mean wait in queue (ms)"),
            theory::mmc_mean_wait(servers, lambda, mean_s) * 1e3,
            Box::new(wait_ms),
        ),
        check(&format!("M/M/{servers} P(wait) (Erlang C)"), theory::erlang_c(servers, a), Box::new(waited)),
    ])
}

/// M/M/c through the worker-slot queue: mean wait for a slot against Erlang C.
fn worker_queue_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    let lambda = single_class(s)?;
    let class = &s.classes[0];
    let mean_s = match (&class.work, class.calls_dependency) {
        (Some(w), false) => exponential_mean_s(w)?,
        _ => return Err("the slot model's class does Exponential work and no call".into()),
    };
    let w = &s.fleet.workers;
    if s.fleet.instances != 1 || w.max_wait.is_none() || w.queue < 1000 {
        return Err("the slot model has one instance and a large slot queue with max_wait".into());
    }
    let wait = theory::mmc_mean_wait(w.slots, lambda, mean_s) * 1e3;
    Ok(vec![check(
        &format!("M/M/{} mean wait for a worker slot (ms)", w.slots),
        wait,
        Box::new(|r: &RunSummary| class0(r).slot_wait_ms_mean),
    )])
}

/// M/M/c through a limiter's queue: mean wait for a permit against Erlang C.
fn limiter_queue_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    let lambda = single_class(s)?;
    let mean_s = exponential_mean_s(&s.dependency.latency)?;
    if s.fleet.instances != 1 || s.dependency.capacity.is_some() || !s.dependency.hop.is_zero() {
        return Err("the limiter-queue model has one instance, an infinite dependency, no hop".into());
    }
    if !s.fleet.overhead.is_zero() {
        return Err("the limiter-queue model needs zero fleet.overhead".into());
    }
    let permits = match s.policies[0].stack.as_slice() {
        [layer] => match &layer.policy {
            PolicySpec::Limiter(c) if c.queue >= 1000 && c.max_wait.ns() > 0 => c.permits,
            _ => return Err("the only layer is a Limiter with a large queue and max_wait".into()),
        },
        _ => return Err("the limiter-queue model's stack is exactly one Limiter".into()),
    };
    // As in the M/M/c model: end-to-end latency minus the dependency's own latency.
    let wait_ms = |r: &RunSummary| class0(r).latency_ms.mean - r.dependency.latency_ms.mean;
    Ok(vec![check(
        &format!("M/M/{permits} mean wait for a limiter permit (ms)"),
        theory::mmc_mean_wait(permits, lambda, mean_s) * 1e3,
        Box::new(wait_ms),
    )])
}

/// Mean of a latency distribution in seconds, where it has a closed form.
pub(super) fn latency_mean_s(l: &Latency) -> Result<f64, String> {
    match l {
        Latency::Exponential { mean } => Ok(secs(mean.ns())),
        Latency::LogNormal { median, sigma } => Ok(theory::lognormal_mean(secs(median.ns()), *sigma)),
        Latency::Constant(d) => Ok(secs(d.ns())),
        Latency::Empirical { .. } => Err("Empirical latency has no closed-form mean here".into()),
    }
}

/// A no-queue limiter as an Erlang loss system: rejection probability against Erlang B.
fn loss_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    let lambda = single_class(s)?;
    let mean_s = latency_mean_s(&s.dependency.latency)?;
    if s.fleet.instances != 1 || s.dependency.capacity.is_some() {
        return Err("the loss model has one instance and an infinite dependency".into());
    }
    let permits = match s.policies[0].stack.as_slice() {
        [layer] => match &layer.policy {
            PolicySpec::Limiter(c) if c.queue == 0 || c.max_wait.ns() == 0 => c.permits,
            _ => return Err("the loss model's only layer is a Limiter with no queue".into()),
        },
        _ => return Err("the loss model's stack is exactly one Limiter".into()),
    };
    let rejected = |r: &RunSummary| {
        let c = class0(r);
        c.outcomes.rejected as f64 / c.requests.max(1) as f64
    };
    Ok(vec![check(
        &format!("loss P(rejected), {permits} permits (Erlang B)"),
        theory::erlang_b(permits, lambda * mean_s),
        Box::new(rejected),
    )])
}

/// Little's law at the gateway and at the dependency (sample-path identities).
fn little_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    single_class(s)?;
    let instances = s.fleet.instances as f64;
    const WHY: &str = "edge effects: requests in flight at the warm-up end and at the horizon";
    let gateway = move |r: &RunSummary| {
        // Every request holds a worker slot from arrival to answer (no slot queue), so the
        // slots in use across the fleet are the requests in the system.
        let c = class0(r);
        let l = r.resources.workers.mean * instances;
        l / (c.throughput_per_s * c.latency_ms.mean / 1e3)
    };
    // A call counts in flight from its sending to its answer reaching the caller: its queue
    // wait and service (`time_ms`) and its network round trip (`hop`, fixed in the model).
    let hop_ms = s.dependency.hop.mean_ns().unwrap_or(0.0) / 1e6;
    let dependency = move |r: &RunSummary| {
        let d = &r.dependency;
        d.mean_in_flight / (d.calls_per_s * (d.time_ms.mean + hop_ms) / 1e3)
    };
    Ok(vec![
        Check { tolerance: 0.01, why: WHY, ..check("Little gateway: L / (lambda W)", 1.0, Box::new(gateway)) },
        Check { tolerance: 0.01, why: WHY, ..check("Little dependency: L / (lambda W)", 1.0, Box::new(dependency)) },
    ])
}

/// The timeout race: fraction of timeouts against the latency distribution's tail.
fn timeout_checks(s: &Scenario) -> Result<Vec<Check>, String> {
    single_class(s)?;
    no_extra_delay_except_policy(s)?;
    let t = match s.policies[0].stack.as_slice() {
        [layer] => match &layer.policy {
            PolicySpec::Timeout(c) => secs(c.timeout.ns()),
            _ => return Err("the timeout model's only layer is a Timeout".into()),
        },
        _ => return Err("the timeout model's stack is exactly one Timeout".into()),
    };
    let (expected, law) = match &s.dependency.latency {
        Latency::Exponential { mean } => (theory::exponential_tail(t, secs(mean.ns())), "exponential tail"),
        Latency::LogNormal { median, sigma } => {
            (theory::lognormal_tail(t, secs(median.ns()), *sigma), "log-normal tail")
        }
        _ => return Err("the timeout model needs Exponential or LogNormal latency".into()),
    };
    let timed_out = |r: &RunSummary| {
        let c = class0(r);
        c.outcomes.timeout as f64 / c.requests.max(1) as f64
    };
    Ok(vec![check(&format!("P(timeout) at {} ms ({law})", t * 1e3), expected, Box::new(timed_out))])
}

fn no_extra_delay_except_policy(s: &Scenario) -> Result<(), String> {
    if !s.dependency.hop.is_zero() || s.dependency.capacity.is_some() || !s.dependency.modes.is_empty() {
        return Err("the timeout model needs no hop, no capacity limit and no modes".into());
    }
    Ok(())
}

// ---- the table ---------------------------------------------------------------------------------

/// The pass/fail table as printed by `brownout verify`.
pub fn render(report: &Report) -> String {
    let mut out = format!(
        "brownout verify: {} checks, {} replications each, seed {}{}\n\n",
        report.checks.len(),
        report.replications,
        report.seed,
        if report.quick { " (quick)" } else { "" }
    );
    out += &format!(
        "{:<20} {:<44} {:>10} {:>10} {:>23} {:>23}  verdict\n",
        "model", "quantity", "theory", "estimate", "95% CI", "simultaneous CI"
    );
    for c in &report.checks {
        let verdict = match (c.passed, c.tolerance > 0.0 && !c.family.contains(c.expected)) {
            (true, true) => format!("PASS (within {:.1}%)", c.tolerance * 100.0),
            (true, false) => "PASS".to_string(),
            (false, _) => "FAIL".to_string(),
        };
        out += &format!(
            "{:<20} {:<44} {:>10.5} {:>10.5} {:>23} {:>23}  {verdict}\n",
            c.model,
            c.quantity,
            c.expected,
            c.ci.mean,
            span(&c.ci),
            span(&c.family),
        );
    }
    // Bounds are judged on every replication, not by an interval: they are no part of the
    // Bonferroni family (`run_observed` sizes it the same way).
    let family = report.checks.iter().filter(|c| !c.is_bound()).count();
    out += &format!(
        "\nVerdict: the closed form lies in the simultaneous interval (Bonferroni: each at \
         {:.4}, so all {} hold together with 95 % confidence).\n",
        1.0 - (1.0 - LEVEL) / family.max(1) as f64,
        family
    );
    for c in report.checks.iter().filter(|c| c.tolerance > 0.0) {
        out += &format!("Tolerance {:.1}% for \"{}\": {}.\n", c.tolerance * 100.0, c.quantity, c.why);
    }
    if let Some(c) = report.checks.iter().find(|c| c.is_bound()) {
        out += &format!("Bounds ({} rows): {}.\n", c.model, c.why);
    }
    let failed = report.checks.iter().filter(|c| !c.passed).count();
    out += &if failed == 0 {
        "All checks passed.\n".to_string()
    } else {
        format!("{failed} check(s) FAILED (seed {}; rerun with --seed to reproduce).\n", report.seed)
    };
    out
}

fn span(i: &Interval) -> String {
    format!("[{:.5}, {:.5}]", i.lo, i.hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_uses_the_interval_then_the_tolerance() {
        let i = Interval { mean: 1.02, lo: 1.015, hi: 1.025 };
        assert!(!judge(&i, 1.0, 0.0), "1.0 lies outside [1.015, 1.025]");
        assert!(judge(&i, 1.0, 0.03), "2 % off is within a 3 % tolerance");
        assert!(!judge(&i, 1.0, 0.01), "2 % off is beyond a 1 % tolerance");
        assert!(judge(&i, 1.02, 0.0));
    }

    #[test]
    fn replication_seeds_are_distinct() {
        let seeds: Vec<u64> = (0..100).map(|r| replication_seed(1, r)).collect();
        for (i, a) in seeds.iter().enumerate() {
            assert!(!seeds[i + 1..].contains(a));
        }
        assert_ne!(replication_seed(1, 0), replication_seed(2, 0));
    }
}
