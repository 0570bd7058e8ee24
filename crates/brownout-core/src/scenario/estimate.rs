//! Up-front estimates of what a scenario or a sweep will allocate and how many events a run
//! will handle, checked against the scenario's `limits` before anything is built.
//!
//! A run that would not fit must stop at once with a message that says why and which field
//! raises the limit, not abort in an allocation or spin for hours. The estimates count what
//! is certain: the state allocated per instance, class, item and window, the rows kept for
//! the time series, and the events every request must cause at its expected arrival count.
//! They leave out what depends on the run (queues, retries that may not happen, data files),
//! so a refused scenario is one that could not have run within its limits, and the run's own
//! guards (`max_in_flight`, `max_events`) still stop what only shows up while running. Users'
//! reloads are the exception: counted at their most (every answer bad), as the file bounds
//! them, since a chain of them is what ran away without a guard noticing in time.

use bytesize::ByteSize;

use super::{Arrivals, Scenario};
use crate::engine::{SECOND, Time};
use graph::{class_calls, deepest_attempts, held_calls, stack_attempts};

/// Bytes of one gateway instance's own state: its worker and pool queues, its gauges and
/// tallies in the recorder, its load-balancing counters.
const INSTANCE_BYTES: f64 = 512.0;
/// Bytes of one policy layer in one instance: the boxed policy and its wait queue.
const LAYER_BYTES: f64 = 512.0;
/// Bytes of one class in one run: its accumulators (latency lists and histograms per
/// outcome), window figures, arrival generator, streams, and its share of the summary and the
/// replication statistics kept until the report is written. Measured: 5,000 idle classes x 2
/// policy sets x 2 replications peak at 469 MB, 23.4 KB a class and run.
const CLASS_BYTES: f64 = 24.0 * 1024.0;
/// Bytes of one phase in one run besides its classes: a phase keeps a whole recorder (its
/// classes counted at [`CLASS_BYTES`] each) and its summary. Measured: 5,000 phases of one
/// class x 2 policy sets x 2 replications peak at 855 MB, 42 KB a phase and run.
const PHASE_BYTES: f64 = 16.0 * 1024.0;
/// Bytes written per time-series row (`timeseries.csv`, 27 columns). Measured: 150 bytes a
/// row for a class with traffic (the bad-input corpus's base scenario), 93 for an idle one.
const OUTPUT_ROW_BYTES: f64 = 160.0;
/// Bytes `summary.json` holds per run summary (whole run or phase) and per class in it, and
/// what replication statistics add to each (an interval per metric, a comparison per metric
/// with a direction). Measured: 1,000 classes x 2 sets x 2 replications write 49.8 MB; 1,000
/// phases of one class, 94.4 MB; 2,000 phases of five classes without replications, 58.7 MB.
const SUMMARY_BYTES: f64 = 4.0 * 1024.0;
const SUMMARY_CLASS_BYTES: f64 = 3.0 * 1024.0;
const REPLICATED_SUMMARY_BYTES: f64 = 16.0 * 1024.0;
const REPLICATED_CLASS_BYTES: f64 = 24.0 * 1024.0;
/// Bytes of one catalogue item in one run (true stock history) and shared by runs (alias
/// table entry, 12 bytes, plus its weight while the table is built).
const ITEM_RUN_BYTES: f64 = 16.0;
const ITEM_SHARED_BYTES: f64 = 20.0;
/// Bytes of one cache slot (a stamp per item per cache).
const CACHE_SLOT_BYTES: f64 = 8.0;
/// Bytes of one outcome in a breaker's count window, per instance.
const SAMPLE_BYTES: f64 = 16.0;
/// Bytes of one pending event in the queue (a closed-loop user waits as one).
const EVENT_BYTES: f64 = 32.0;
/// Bytes of one reload waiting in its slab (besides its event). Measured: a run held at
/// 8,000,000 pending reloads by the pending-events guard peaks at 510 MB, 64 bytes each.
const RELOAD_BYTES: f64 = 32.0;
/// Bytes of one request alive in the slab.
const REQUEST_BYTES: f64 = 256.0;
/// Text of one time-series row once written as CSV (about 25 numbers).
const ROW_TEXT_BYTES: f64 = 256.0;

/// Bytes a point of a sweep holds per byte of its scenario's JSON text (the built `Scenario`
/// and what building it leaves). Measured: sweeps of 1,000 and of 4,000 points over the
/// bad-input corpus's base scenario (1.8 KB of JSON) peak at 58 and 194 MB, 45 KB a point.
const SCENARIO_BYTES_PER_JSON_BYTE: f64 = 24.0;

/// Why a scenario is refused: the path of the value to point at and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Path of the value behind the refusal (`fleet.instances`, `classes[2]`), as validation
    /// errors carry it.
    pub path: String,
    /// What is over which limit, and how to raise it.
    pub message: String,
}

fn refuse(path: impl Into<String>, message: impl Into<String>) -> Refusal {
    Refusal { path: path.into(), message: message.into() }
}

/// What running a scenario is estimated to need.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Bytes of one run's state, rows not counted (what a sweep run holds).
    pub run_bytes: f64,
    /// Bytes held while every policy set runs at once and keeps its time series.
    pub memory: f64,
    /// Events of one run: every request's certain events plus window ticks.
    pub events: f64,
    /// Bytes a run writes: the time series and the summary (its largest files).
    pub output: f64,
    /// Path of the value behind the largest memory term.
    pub memory_blame: String,
    /// Path of the value behind the largest events term.
    pub events_blame: String,
}

/// The term of a sum that contributes most, and what in the file it comes from.
#[derive(Default)]
struct Largest {
    path: String,
    amount: f64,
}

impl Largest {
    fn add(&mut self, path: impl Into<String>, amount: f64) -> f64 {
        if amount > self.amount || self.path.is_empty() {
            *self = Largest { path: path.into(), amount };
        }
        amount
    }
}

/// Estimate a validated scenario's memory and events. Refuses outright what has no finite
/// estimate (a closed loop whose users never spend any time).
pub fn estimate(s: &Scenario) -> Result<Estimate, Refusal> {
    estimate_with(s, &[])
}

/// Request rates a class reads from its data file: (class index, rows of `t_s`, `rate_per_s`).
pub type ClassRates = (usize, Vec<(f64, f64)>);

/// The request rates of every class whose arrivals live in a data file, in class order.
pub type DataRates = [ClassRates];

/// [`estimate`], with the request rates of the classes whose arrivals live in data files.
pub fn estimate_with(s: &Scenario, rates: &DataRates) -> Result<Estimate, Refusal> {
    let horizon = s.horizon.ns();
    let windows = (horizon / s.window.ns().max(1) + 1) as f64;
    let instances = f64::from(s.fleet.instances);
    let policies = s.policies.len() as f64;
    let (mut memory, mut events) = (Largest::default(), Largest::default());
    // Per-run terms are counted once per policy set: the sets run at once.
    let widest =
        s.policies.iter().enumerate().map(|(i, p)| (layer_bytes(&p.stack), i)).max_by(|a, b| a.0.total_cmp(&b.0));
    let replicas: f64 = s.deps().iter().map(|d| d.replicas.as_ref().map_or(1.0, |r| f64::from(r.count))).sum();
    let mut run = memory.add("fleet.instances", instances * (INSTANCE_BYTES + 4.0 * replicas) * policies);
    if let Some((bytes, i)) = widest {
        run += memory.add(format!("policies[{i}]"), instances * bytes * policies);
    }
    let classes = s.classes.len() as f64;
    run += memory.add("classes", classes * CLASS_BYTES * policies);
    // Each phase keeps a recorder of every class and its summary, per run.
    let phases = s.phases.len() as f64;
    run += memory.add("phases", phases * (PHASE_BYTES + classes * CLASS_BYTES) * policies);
    let mut shared = 0.0;
    let mut count = events.add("horizon", windows * (1.0 + instances));
    if let Some(c) = &s.catalogue {
        let items = f64::from(c.items);
        let caches = if c.shared_cache { 1.0 } else { instances };
        shared = items * ITEM_SHARED_BYTES;
        run +=
            memory.add("catalogue.items", (items * (ITEM_RUN_BYTES + caches * CACHE_SLOT_BYTES)) * policies + shared);
        // Each item's stock changes are stepped through when it is looked at.
        count += events.add("catalogue.changes_per_hour", items * c.changes_per_hour * hours(horizon));
    }
    for (i, c) in s.classes.iter().enumerate() {
        let at = format!("classes[{i}]");
        let (requests, waiting) =
            class_requests(s, c, i, rates).map_err(|m| refuse(&at, format!("class \"{}\": {m}", c.name)))?;
        // A request with a plan holds a child request per call of its widest step.
        let mut held = waiting * (EVENT_BYTES + REQUEST_BYTES) * (1.0 + held_calls(s, c));
        if let Arrivals::Scripted { times } = &c.arrivals {
            held += times.len() as f64 * 8.0;
        }
        run += memory.add(&at, held * policies);
        let per_request = events_per_request(s, c);
        count += events.add(&at, requests * per_request);
        if let Some(r) = &c.reload {
            // Counted at their most (every answer bad): the file sets that bound, and a chain
            // a run cannot stop early is what ran away.
            let reloads = requests * (reload_multiplier(r, horizon) - 1.0);
            count += events.add(format!("{at}.reload.max_reloads"), reloads * per_request);
            // Little's law: reloads arrive at reloads / horizon a second and each waits `delay`,
            // as an event and a slab entry; never more than all of them.
            let waiting = (reloads / secs(horizon).max(f64::MIN_POSITIVE) * secs(r.delay.ns())).min(reloads);
            run += memory.add(format!("{at}.reload.delay"), waiting * (EVENT_BYTES + RELOAD_BYTES) * policies);
        }
    }
    // Window rows stream to disk as windows close; the charts keep at most MAX_CHART_WINDOWS
    // (coalesced) rows per class and policy.
    let charted = windows.min(crate::metrics::MAX_CHART_WINDOWS as f64);
    let name_bytes: f64 = s.classes.iter().map(|c| c.name.len() as f64).sum::<f64>() / classes.max(1.0);
    let policy_bytes: f64 = s.policies.iter().map(|p| p.name.len() as f64).sum();
    let row = std::mem::size_of::<crate::metrics::WindowRow>() as f64 + ROW_TEXT_BYTES + name_bytes;
    let rows = memory.add("horizon", charted * classes * (policies * row + policy_bytes));
    // Further replications keep no rows; counted as if all ran at once, as the policy sets are.
    let more = f64::from(s.replications.max(1) - 1);
    // Blamed when fewer replications would save more than dropping the largest other term
    // would (that term counts once per replication).
    let replicated = more * (run - shared);
    if replicated > memory.amount * (1.0 + more) {
        memory.add("replications", replicated);
    }
    Ok(Estimate {
        run_bytes: (run - shared) / policies.max(1.0) + shared,
        memory: run + rows + replicated,
        events: count,
        output: output_bytes(s, windows),
        memory_blame: memory.path,
        events_blame: events.path,
    })
}

/// Bytes a run of `s` writes: a time-series row per window, class and policy set, and
/// `summary.json`'s figures per policy set for the whole run and each phase.
fn output_bytes(s: &Scenario, windows: f64) -> f64 {
    let (classes, policies) = (s.classes.len() as f64, s.policies.len() as f64);
    let series = windows * classes * policies * OUTPUT_ROW_BYTES;
    let (fixed, class) = match s.replications {
        0 | 1 => (SUMMARY_BYTES, SUMMARY_CLASS_BYTES),
        _ => (SUMMARY_BYTES + REPLICATED_SUMMARY_BYTES, SUMMARY_CLASS_BYTES + REPLICATED_CLASS_BYTES),
    };
    let summaries = policies * (1.0 + s.phases.len() as f64) * (fixed + classes * class);
    series + summaries
}

/// Check a validated scenario against its limits: memory, events, output, attempts per request.
pub fn check(s: &Scenario) -> Result<(), Refusal> {
    check_with(s, &[])
}

/// [`check`], with the request rates read from data files, once they have been read.
pub fn check_with(s: &Scenario, rates: &DataRates) -> Result<(), Refusal> {
    check_limits(&s.limits)?;
    check_attempts(s)?;
    let e = estimate_with(s, rates)?;
    let limit = s.limits.max_memory.as_u64() as f64;
    // Reloads waiting grow with the rate as the events do: when the events are over their
    // limit too, the rate is the cause, and the events message names it.
    let rate_bound = e.memory_blame.ends_with(".reload.delay") && e.events > s.limits.max_events as f64;
    if e.memory > limit && !rate_bound {
        return Err(refuse(
            e.memory_blame.clone(),
            format!(
                "this scenario is estimated to need {} of memory ({}), over limits.max_memory ({}); \
                 shrink it, or raise the limit with `limits: (max_memory: \"{}\")`",
                bytes(e.memory),
                memory_parts(s, &e.memory_blame),
                s.limits.max_memory.display().iec(),
                bytes(round_up(e.memory * 1.25)),
            ),
        ));
    }
    let limit = s.limits.max_output.as_u64() as f64;
    if e.output > limit {
        let windows = s.horizon.ns() / s.window.ns().max(1) + 1;
        // The time series grows with the horizon, the summary with the phases.
        let series = windows as f64 * OUTPUT_ROW_BYTES * (s.classes.len() * s.policies.len()) as f64;
        let blame = if series * 2.0 >= e.output { "horizon" } else { "phases" };
        return Err(refuse(
            blame,
            format!(
                "a run of this scenario is estimated to write {} ({windows} windows x {} classes x {} policies \
                 of time series, and {} phases in the summary), over limits.max_output ({}); lengthen the \
                 window or shorten the horizon, or raise the limit with `limits: (max_output: \"{}\")`",
                bytes(e.output),
                s.classes.len(),
                s.policies.len(),
                s.phases.len(),
                s.limits.max_output.display().iec(),
                bytes(round_up(e.output * 1.25)),
            ),
        ));
    }
    if e.events > s.limits.max_events as f64 {
        // The limit is a u64: past it no setting allows the run, so none is suggested.
        let suggested = round_up(e.events * 1.25);
        let raise = if suggested < u64::MAX as f64 {
            format!(", or raise the limit with `limits: (max_events: {suggested:.0})`")
        } else {
            format!(" (no limits.max_events can allow it: the largest is {})", u64::MAX)
        };
        let estimate = if e.events.is_finite() {
            format!("{} events", count(e.events))
        } else {
            "more events than a number can hold (a rate or a duration overflows)".into()
        };
        let reloads = e.events_blame.ends_with(".reload.max_reloads");
        return Err(refuse(
            e.events_blame,
            format!(
                "a run of this scenario is estimated to handle {estimate} (arrivals over the horizon times \
                 the events each request causes{}), over limits.max_events ({}); shorten the horizon or lower \
                 the rates{}{raise}",
                if reloads { ", reloads counted at their most: every answer bad" } else { "" },
                s.limits.max_events,
                if reloads { ", reload.max_reloads or reload.probability" } else { "" },
            ),
        ));
    }
    Ok(())
}

/// A count for a message: digits up to a quadrillion, beyond that scientific (`1.000e300`)
/// rather than hundreds of digits. Never for a setting to paste: integer fields take digits.
fn count(x: f64) -> String {
    if x.abs() < 1e15 { format!("{x:.0}") } else { format!("{x:.3e}") }
}

/// `x` rounded up to two significant digits, for a limit to suggest.
fn round_up(x: f64) -> f64 {
    if !(x > 0.0 && x.is_finite()) {
        return x;
    }
    let unit = 10f64.powi(x.log10().floor() as i32 - 1);
    (x / unit).ceil() * unit
}

/// Requests in flight beyond this would need hundreds of terabytes; the run's guard on
/// pending events (4 x the limit) must not overflow either.
const MAX_IN_FLIGHT_CEILING: u64 = 1_000_000_000_000;

fn check_limits(l: &super::Limits) -> Result<(), Refusal> {
    if l.max_in_flight == 0 || l.max_in_flight > MAX_IN_FLIGHT_CEILING {
        return Err(refuse("limits.max_in_flight", "limits.max_in_flight must lie in 1..=1000000000000"));
    }
    if l.max_events == 0 {
        return Err(refuse("limits.max_events", "limits.max_events must be >= 1"));
    }
    if l.max_attempts == 0 {
        return Err(refuse("limits.max_attempts", "limits.max_attempts must be >= 1"));
    }
    if l.max_memory.as_u64() == 0 {
        return Err(refuse("limits.max_memory", "limits.max_memory must be > 0, e.g. \"4GiB\""));
    }
    if l.max_output.as_u64() == 0 {
        return Err(refuse("limits.max_output", "limits.max_output must be > 0, e.g. \"4GiB\""));
    }
    Ok(())
}

/// The sizes of a sweep, known before its points are built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepSize {
    /// Points (the grid product before duplicates are dropped, or the samples).
    pub points: f64,
    /// Axes.
    pub axes: usize,
    /// Policy sets run at each point.
    pub policies: usize,
    /// Replications per point and policy.
    pub replications: u32,
    /// Metrics recorded per run.
    pub metrics: usize,
    /// Bytes of the base scenario as JSON (each point holds a copy).
    pub scenario_bytes: usize,
}

impl SweepSize {
    /// Runs: points x policies x replications.
    pub fn runs(&self) -> f64 {
        self.points * self.policies as f64 * f64::from(self.replications)
    }

    /// Bytes the plan, the journal and the result files hold, plus one run of the base.
    pub fn memory(&self, base: &Estimate) -> f64 {
        // Each point holds its scenario as a built `Scenario`, whose strings, lists and boxed
        // layers take far more than its JSON text.
        let point = self.scenario_bytes as f64 * SCENARIO_BYTES_PER_JSON_BYTE + 48.0 + 16.0 * self.axes as f64;
        // A record in memory, its journal line and its runs.csv line, and its place in the to-do list.
        let run = 160.0 + 64.0 * self.metrics as f64;
        self.points * point + self.runs() * run + base.run_bytes
    }
}

/// Check a sweep's size against the base scenario's `limits.max_memory`. The message says
/// which number to lower and which field raises the limit.
pub fn check_sweep(base: &Scenario, size: &SweepSize) -> Result<(), String> {
    let e = estimate(base).map_err(|r| r.message)?;
    let need = size.memory(&e);
    let limit = base.limits.max_memory.as_u64() as f64;
    if need > limit {
        return Err(format!(
            "this sweep has {} points x {} policies x {} replications = {} runs and is estimated to need \
             {} of memory, over limits.max_memory ({}) of the base scenario; use fewer steps, samples or \
             replications, or raise the limit in the base scenario with `limits: (max_memory: \"{}\")`",
            count(size.points),
            size.policies,
            size.replications,
            count(size.runs()),
            bytes(need),
            base.limits.max_memory.display().iec(),
            bytes(round_up(need * 1.25)),
        ));
    }
    Ok(())
}

fn bytes(b: f64) -> String {
    if b >= 1.8e19 {
        return format!("{b:.3e} B");
    }
    ByteSize::b(b.ceil() as u64).display().iec().to_string()
}

fn hours(t: Time) -> f64 {
    t as f64 / (3600.0 * SECOND as f64)
}

fn secs(t: Time) -> f64 {
    t as f64 / SECOND as f64
}

/// The largest terms of the memory estimate, for the message.
fn memory_parts(s: &Scenario, blame: &str) -> String {
    let windows = (s.horizon.ns() / s.window.ns().max(1) + 1).min(crate::metrics::MAX_CHART_WINDOWS);
    let mut parts = vec![format!("{} instances", s.fleet.instances)];
    if let Some(c) = &s.catalogue {
        parts.push(format!("{} items", c.items));
    }
    parts.push(format!("{windows} windows x {} classes x {} policies", s.classes.len(), s.policies.len()));
    if s.replications > 1 {
        parts.push(format!("{} replications", s.replications));
    }
    if blame.ends_with(".reload.delay") {
        parts.push("reloads waiting out their delay, counted at their most: every answer bad".into());
    }
    parts.join(", ")
}

/// Memory of one instance's layers for the stack; windows of outcomes grow with their size.
fn layer_bytes(stack: &[super::Layer]) -> f64 {
    stack.iter().map(|l| LAYER_BYTES + SAMPLE_BYTES * l.policy.facts().window_samples).sum()
}

/// Expected requests of a class over the horizon, and how many wait as users at once.
fn class_requests(s: &Scenario, c: &super::Class, index: usize, rates: &DataRates) -> Result<(f64, f64), String> {
    let h = s.horizon.ns();
    Ok(match &c.arrivals {
        Arrivals::Poisson { rate_per_s } => (rate_per_s * secs(h), 0.0),
        Arrivals::PoissonProfile { points } => {
            (profile_integral(points.iter().map(|(t, r)| (t.ns() as f64, *r)), h), 0.0)
        }
        Arrivals::Diurnal { mean_rate_per_s, .. } => (mean_rate_per_s * secs(h), 0.0),
        Arrivals::Burst { base_rate_per_s, at, duration, multiplier } => {
            let inside = secs(h.min(at.ns().saturating_add(duration.ns())).saturating_sub(at.ns()));
            (base_rate_per_s * secs(h) + base_rate_per_s * (multiplier - 1.0).max(0.0) * inside, 0.0)
        }
        Arrivals::Scripted { times } => (times.iter().filter(|t| t.ns() <= h).count() as f64, 0.0),
        Arrivals::Periodic { rate_per_s, phase } => {
            (if phase.ns() > h { 0.0 } else { (secs(h - phase.ns()) * rate_per_s).floor() + 1.0 }, 0.0)
        }
        // The rates live in a data file: counted once `load` has read it.
        // `load` lists the rates in class order: a search, not a scan per class.
        Arrivals::Csv { .. } => match rates.binary_search_by_key(&index, |(i, _)| *i).ok().map(|k| &rates[k]) {
            Some((_, rows)) => (profile_integral(rows.iter().map(|(t, r)| (t * SECOND as f64, *r)), h), 0.0),
            None => (0.0, 0.0),
        },
        Arrivals::ClosedLoop { users, think } => {
            let users = f64::from(*users);
            match cycle(s, c, think.ns()) {
                Some(ns) if ns <= 0.0 => {
                    return Err("ClosedLoop with zero think time and requests that take no time (no latency, \
                                work or fleet.overhead) would send infinitely many requests at one instant; \
                                give think > 0 or a latency"
                        .into());
                }
                Some(ns) => (users * (secs(h) / (ns / SECOND as f64)).max(1.0), users),
                None => (users, users),
            }
        }
    })
}

/// Mean time of one closed-loop cycle in ns: think, local work, overhead and the
/// dependency's latency, or with a call plan the plan's steps one after the other (a group
/// of `All` its slowest call's mean, of `First` its fastest, of `Quorum(k)` the k-th
/// fastest); None when a data file holds a latency.
fn cycle(s: &Scenario, c: &super::Class, think: Time) -> Option<f64> {
    let mut t = think as f64 + s.fleet.overhead.mean_ns()?;
    if let Some(w) = &c.work {
        t += w.mean_ns()?;
    }
    let call = |d: &super::Dependency| Some(d.latency.mean_ns()? + 2.0 * d.hop.mean_ns()?);
    if c.calls_dependency && c.calls.is_empty() {
        t += call(s.primary())?;
    } else if c.calls_dependency {
        for step in &c.calls {
            let mut means = Vec::new();
            for x in step.calls() {
                let d = s.deps().iter().find(|d| Some(d.name.as_str()) == x.dependency())?;
                means.push(call(d)?);
            }
            means.sort_by(f64::total_cmp);
            let k = match step {
                super::Step::Parallel { join: super::Join::First, .. } => 1,
                super::Step::Parallel { join: super::Join::Quorum(k), .. } => *k as usize,
                _ => means.len(),
            };
            t += means.get(k.clamp(1, means.len().max(1)) - 1).copied().unwrap_or(0.0);
        }
    }
    Some(t)
}

/// Requests of a piecewise-linear rate (constant outside its points) over `[0, h]`.
fn profile_integral(points: impl Iterator<Item = (f64, f64)>, h: Time) -> f64 {
    let points: Vec<(f64, f64)> = points.collect();
    let Some(first) = points.first() else { return 0.0 };
    let h = h as f64;
    let mut total = first.1 * first.0.min(h);
    for w in points.windows(2) {
        let (t0, r0, t1, r1) = (w[0].0, w[0].1, w[1].0, w[1].1);
        if t0 >= h || t1 <= t0 {
            continue;
        }
        let end = t1.min(h);
        let r_end = r0 + (r1 - r0) * (end - t0) / (t1 - t0);
        total += (r0 + r_end) / 2.0 * (end - t0);
    }
    let last = points[points.len() - 1];
    total += last.1 * (h - last.0).max(0.0);
    total / SECOND as f64
}

/// Requests one arrival of a class with `reload` may make if every answer is bad: the first
/// and, with probability `p` each, up to `max_reloads` more (a geometric sum), no more of
/// them than `delay`s fit in the horizon.
fn reload_multiplier(r: &super::Reload, horizon: Time) -> f64 {
    let fit = horizon.checked_div(r.delay.ns()).unwrap_or(u64::MAX);
    let n = f64::from(r.max_reloads).min(fit as f64);
    let p = r.probability;
    if p >= 1.0 { n + 1.0 } else { (1.0 - p.powf(n + 1.0)) / (1.0 - p) }
}

/// Events every request of the class causes: its arrival, its local work, its dependency
/// calls (one, or each call of its plan: fan-out multiplies them, and each call of a plan
/// counts the attempts its stack allows, [`plan_attempts`]), the set-ups of the new
/// connections they certainly open ([`connects::connect_events`]), its response after the
/// overhead.
fn events_per_request(s: &Scenario, c: &super::Class) -> f64 {
    // Fan-out through services multiplies calls, retries multiply attempts: the larger of
    // the two certain counts (neither bounds the other).
    let plan = if c.calls.is_empty() { 1.0 } else { plan_attempts(s, c) };
    let calls = if s.has_services() { plan.max(class_calls(s, c)) } else { plan };
    1.0 + f64::from(u8::from(c.work.is_some()))
        + f64::from(u8::from(c.calls_dependency)) * calls
        + connects::connect_events(s, c)
        + f64::from(u8::from(!s.fleet.overhead.is_zero()))
}

/// The attempts the calls of class `c`'s plan may make, in the policy set that allows the
/// most: each call as many as the product of `attempts_per_call` over the layers it passes
/// (those of its class scoped to its dependency or to none), summed over the plan's calls.
fn plan_attempts(s: &Scenario, c: &super::Class) -> f64 {
    let passes = |l: &super::Layer, dep: &str| {
        (l.classes.is_empty() || l.classes.contains(&c.name))
            && (l.dependencies.is_empty() || l.dependencies.iter().any(|d| d == dep))
    };
    let deps = s.dependencies_called(c);
    let per_set = |p: &super::PolicySet| -> f64 {
        let call = |dep: &str| {
            p.stack.iter().filter(|l| passes(l, dep)).map(|l| l.policy.facts().attempts_per_call).product::<f64>()
        };
        deps.iter().map(|d| call(d)).sum()
    };
    s.policies.iter().map(per_set).fold(deps.len().max(1) as f64, f64::max)
}

/// The most calls one step of the class's plan sends at once (0 when it makes one call,
/// which the request makes itself).
fn widest_step(c: &super::Class) -> f64 {
    let calls: usize = c.calls.iter().map(|step| step.calls().len()).sum();
    if calls <= 1 { 0.0 } else { c.calls.iter().map(|step| step.calls().len()).max().unwrap_or(0) as f64 }
}

/// Attempts one request may make: the product of its retry layers' `max_attempts`, over
/// every policy set, against `limits.max_attempts`.
fn check_attempts(s: &Scenario) -> Result<(), Refusal> {
    for (i, p) in s.policies.iter().enumerate() {
        let gateway: f64 = stack_attempts(&p.stack);
        // Through services, each attempt runs the service's plan, whose calls its own retry
        // layers repeat: (r + 1) per retry layer per level, along the costliest path.
        let (below, path) = if s.has_services() { deepest_attempts(s, i) } else { (1.0, Vec::new()) };
        let attempts = gateway * below;
        if attempts > s.limits.max_attempts as f64 {
            let through = if path.is_empty() {
                String::new()
            } else {
                let names: Vec<&str> = path.iter().map(|&(d, _)| s.deps()[d].name.as_str()).collect();
                let levels: Vec<String> = (path.iter())
                    .filter(|&&(d, _)| s.deps()[d].service.is_some())
                    .map(|&(d, n)| format!("{} in {}", count(n), s.deps()[d].name))
                    .collect();
                format!(
                    " at the bottom of {} ({} at the gateway x {})",
                    names.join(" -> "),
                    count(gateway),
                    levels.join(" x ")
                )
            };
            return Err(refuse(
                format!("policies[{i}]"),
                format!(
                    "policy \"{}\": its retry layers allow {} attempts per request{through}, over \
                     limits.max_attempts ({}); lower Retry.max_attempts (DotnetStandard.max_retry_attempts){}",
                    p.name,
                    count(attempts),
                    s.limits.max_attempts,
                    if attempts < u64::MAX as f64 {
                        format!(", or raise the limit with `limits: (max_attempts: {attempts:.0})`")
                    } else {
                        String::new()
                    }
                ),
            ));
        }
    }
    Ok(())
}

mod connects;
mod graph;

#[cfg(test)]
mod tests;
