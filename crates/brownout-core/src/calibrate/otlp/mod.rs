//! `brownout calibrate otlp`: scenario parts fitted from OpenTelemetry traces in the OTLP
//! JSON that the Collector's file exporter writes (docs/calibrate.md). One service's SERVER
//! spans, grouped by `http.route` (else the span name), give each route's arrivals as a
//! `PoissonProfile` of requests per step; its CLIENT spans, grouped by `peer.service` (else
//! `server.address`, `net.peer.name`, the span name), give each dependency's latency
//! (`endTimeUnixNano - startTimeUnixNano`) as an `Empirical` distribution and its error rate
//! (`status.code` ERROR) per step; parent/child links, from a CLIENT span up through
//! INTERNAL spans to the SERVER span it serves, say which routes call which dependencies and
//! how often. With several dependencies (and no `--dependency`), the scenario lists them all
//! as `dependencies` and gives each class the call plan its span trees show (`plan.rs`).
//! Every value written cites the spans and attributes it came from; what cannot be
//! counted is skipped with the span and the reason, and what the file cannot describe is
//! refused with its file, line and column.

mod plan;
mod read;
mod write;

use std::collections::{BTreeMap, BTreeSet};

pub use plan::{Plan, PlanCall};
pub use read::{Attrs, Kind, MAX_BYTES, Span, Status, read, read_text};

use super::{CalibrateError, Skip, usage};
use crate::units::Dur;

/// What to fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The service (resource `service.name`) whose SERVER spans are the routes; None: the
    /// one service with SERVER spans (several: refused, asking for this).
    pub service: Option<String>,
    /// The dependency written as the scenario's one (its `peer.service` or address); None:
    /// every dependency, as `dependencies` with each class's call plan, when the spans show
    /// several, else the one.
    pub dependency: Option<String>,
    /// The width of a step of the arrival and error-rate profiles (> 0).
    pub step: Dur,
    /// Most routes written as classes (the busiest); the others are skipped and listed.
    pub max_routes: usize,
    /// File name of the empirical latency CSV the scenario names when it models one
    /// dependency (with several, each has its own: `latency-NAME.csv`).
    pub latency_file: String,
}

/// A route: the requests one class of the scenario stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// The route as the spans name it.
    pub route: String,
    /// Where it came from: `http.route` or the span name.
    pub source: &'static str,
    /// The class name written (the route made a name brownout takes).
    pub class: String,
    /// Its SERVER spans counted.
    pub requests: u64,
    /// Per step: (ns from the first span, requests per second, requests, step width ns).
    pub rates: Vec<(u64, f64, u64, u64)>,
}

/// A dependency the service calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Dependency {
    /// Its name.
    pub name: String,
    /// The attribute the name came from (`peer.service`, `server.address`, `net.peer.name`,
    /// or the span name).
    pub source: &'static str,
    /// Its CLIENT spans counted.
    pub calls: u64,
    /// Of which with `status.code` ERROR.
    pub errors: u64,
    /// Their durations, ms, sorted.
    pub latencies_ms: Vec<f64>,
    /// Its error share per step with calls: (ns from the first span, share, errors, calls).
    pub error_rate: Vec<(u64, f64, u64, u64)>,
}

/// Calls from one route to one dependency, from parent/child links.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The route's class name.
    pub class: String,
    /// The dependency's name.
    pub dependency: String,
    /// CLIENT spans under the route's SERVER spans.
    pub calls: u64,
    /// The route's requests with at least one such call.
    pub requests_calling: u64,
    /// The route's requests.
    pub requests: u64,
}

impl Link {
    /// Calls per request of the route.
    pub fn per_request(&self) -> f64 {
        self.calls as f64 / self.requests as f64
    }
}

/// What was fitted, as numbers and as the files to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibrated {
    /// The service read.
    pub service: String,
    /// The first counted span's start, ns since the epoch.
    pub t0_ns: u64,
    /// The last counted span's end, ns since the epoch.
    pub end_ns: u64,
    /// The step, ns.
    pub step_ns: u64,
    /// The routes written as classes, busiest first.
    pub routes: Vec<Route>,
    /// Every dependency called, most called first.
    pub dependencies: Vec<Dependency>,
    /// Which of `dependencies` the scenario's dependency is (with `graph`, the first).
    pub chosen: usize,
    /// The scenario lists every dependency as `dependencies`, each class with its plan.
    pub graph: bool,
    /// With `graph`: each class's call plan, in the order of `routes`.
    pub plans: Vec<Plan>,
    /// What the scenario approximates (calls that only part of a route's requests make,
    /// requests that call in another shape than their plan).
    pub warnings: Vec<String>,
    /// The latency CSVs to write: (file name, text); one, or with `graph` one per dependency
    /// in the order of `dependencies`.
    pub latency_files: Vec<(String, String)>,
    /// The chosen dependency's error share per step with calls: (ns from the first span,
    /// share, errors, calls).
    pub error_rate: Vec<(u64, f64, u64, u64)>,
    /// Which routes call which dependencies, by route then dependency order.
    pub links: Vec<Link>,
    /// Spans read, of every service.
    pub spans_read: u64,
    /// Spans of other services, not counted (service name, spans).
    pub other_services: Vec<(String, u64)>,
    /// What was left out.
    pub skipped: Vec<Skip>,
    /// The scenario (RON), every fitted value's source in a comment.
    pub scenario: String,
    /// The chosen dependency's empirical latency CSV (`latency_files` has every one written).
    pub latency_csv: String,
    /// The fit report (Markdown).
    pub report: String,
}

/// Most latencies the empirical CSV holds: every duration up to this many, else this many
/// evenly spaced quantiles of them (span durations are exact, so the tail is data, not a
/// bucket's interpolation: ten times the Prometheus path's thousand).
const EMPIRICAL_POINTS: usize = 10_000;

/// Longest chain of parents walked from a CLIENT span to its SERVER span (a cycle of parent
/// ids, which a broken tracer can write, ends there).
const MAX_DEPTH: usize = 64;

fn skip(s: &Span, reason: impl Into<String>) -> Skip {
    Skip { series: s.describe(), t_s: s.start_ns as f64 / 1e9, reason: reason.into() }
}

/// The dependency a CLIENT span calls, and the attribute that names it.
fn dependency_of(s: &Span) -> (String, &'static str) {
    if let Some(p) = &s.attrs.peer_service {
        return (p.clone(), "peer.service");
    }
    if let Some((k, a)) = &s.attrs.address {
        return (a.clone(), k);
    }
    (s.name.clone(), "span name")
}

/// Fit `opts` from `spans` (every span of every file read).
pub fn calibrate(spans: &[Span], opts: &Options) -> Result<Calibrated, CalibrateError> {
    if opts.step.ns() == 0 {
        return Err(usage("--step must be > 0"));
    }
    let mut skipped = Vec::new();
    // Every span by (trace, span id); a repeated id (a span exported twice) counts once.
    let mut index: BTreeMap<(u128, u64), usize> = BTreeMap::new();
    let mut repeated = vec![false; spans.len()];
    for (i, s) in spans.iter().enumerate() {
        if let Some(&first) = index.get(&(s.trace, s.id)) {
            repeated[i] = true;
            skipped.push(skip(s, format!("span id repeated (first on line {}): counted once", spans[first].at.line)));
        } else {
            index.insert((s.trace, s.id), i);
        }
    }
    let service = pick_service(spans, opts)?;
    let mut other: BTreeMap<&str, u64> = BTreeMap::new();
    // Which spans of the service count, and the skips of the others.
    let mut counted = vec![false; spans.len()];
    for (i, s) in spans.iter().enumerate() {
        if s.service != service {
            *other.entry(s.service.as_str()).or_default() += 1;
            continue;
        }
        if repeated[i] || !matches!(s.kind, Kind::Server | Kind::Client | Kind::Unknown(_)) {
            continue;
        }
        let why = match (s.kind, s.status) {
            (Kind::Unknown(k), _) => {
                Some(format!("kind {k} is none of OTLP's SpanKind values (0 to 5): neither a request nor a call"))
            }
            _ if s.start_ns == 0 => Some("no startTimeUnixNano: not counted".to_string()),
            _ if s.end_ns < s.start_ns => Some(format!(
                "ends {:.6} ms before it starts (clock skew): not counted",
                (s.start_ns - s.end_ns) as f64 / 1e6
            )),
            (Kind::Client, Status::Unknown(c)) => {
                Some(format!("status.code {c} is none of OTLP's (0 unset, 1 ok, 2 error): not counted"))
            }
            _ => None,
        };
        match why {
            Some(w) => skipped.push(skip(s, w)),
            None => counted[i] = true,
        }
    }
    let is = |i: usize, k: Kind| counted[i] && spans[i].kind == k;
    let (mut t0, mut end) = (u64::MAX, 0u64);
    for (i, s) in spans.iter().enumerate() {
        if counted[i] {
            t0 = t0.min(s.start_ns);
            end = end.max(s.end_ns);
        }
    }
    if !(0..spans.len()).any(|i| is(i, Kind::Server)) {
        return Err(usage(format!(
            "no SERVER span of service {service:?} can be counted (see the skipped spans): no route has arrivals"
        )));
    }
    if end <= t0 {
        return Err(usage(format!("the spans of {service:?} cover no time: no rate can be taken")));
    }

    // Routes, busiest first, at most `max_routes`.
    let mut by_route: BTreeMap<(&str, &'static str), Vec<usize>> = BTreeMap::new();
    for (i, s) in spans.iter().enumerate() {
        if is(i, Kind::Server) {
            let key = match &s.attrs.route {
                Some(r) => (r.as_str(), "http.route"),
                None => (s.name.as_str(), "span name"),
            };
            by_route.entry(key).or_default().push(i);
        }
    }
    let mut order: Vec<((&str, &'static str), Vec<usize>)> = by_route.into_iter().collect();
    order.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    for ((route, source), ix) in order.iter().skip(opts.max_routes.max(1)) {
        skipped.push(Skip {
            series: format!("route {route:?} ({source})"),
            t_s: spans[ix[0]].start_ns as f64 / 1e9,
            reason: format!("beyond --max-routes {}: its {} requests are left out", opts.max_routes, ix.len()),
        });
    }
    order.truncate(opts.max_routes.max(1));
    let steps = Steps::new(t0, end, opts.step.ns());
    let names = class_names(order.iter().map(|((r, _), _)| *r));
    let mut route_of: BTreeMap<usize, usize> = BTreeMap::new();
    let mut routes = Vec::new();
    for (ri, (((route, source), ix), class)) in order.iter().zip(names).enumerate() {
        let mut per = vec![0u64; steps.count];
        for &i in ix {
            per[steps.of(spans[i].start_ns)] += 1;
            route_of.insert(i, ri);
        }
        let rates = (0..steps.count)
            .map(|k| {
                let (at, width) = steps.span(k);
                (at, super::round6(per[k] as f64 * 1e9 / width as f64), per[k], width)
            })
            .collect();
        routes.push(Route { route: route.to_string(), source, class, requests: ix.len() as u64, rates });
    }

    // Dependencies, most called first.
    let mut by_dep: BTreeMap<String, (&'static str, Vec<usize>)> = BTreeMap::new();
    for (i, s) in spans.iter().enumerate() {
        if is(i, Kind::Client) {
            let (name, source) = dependency_of(s);
            by_dep.entry(name).or_insert((source, Vec::new())).1.push(i);
        }
    }
    if by_dep.is_empty() {
        return Err(usage(format!(
            "no CLIENT span of service {service:?} can be counted (see the skipped spans): no dependency to fit"
        )));
    }
    let mut deps: Vec<(String, &'static str, Vec<usize>)> = by_dep.into_iter().map(|(n, (s, v))| (n, s, v)).collect();
    deps.sort_by(|a, b| b.2.len().cmp(&a.2.len()).then(a.0.cmp(&b.0)));
    let chosen = match &opts.dependency {
        None => 0,
        Some(want) => deps.iter().position(|d| &d.0 == want).ok_or_else(|| {
            let names: Vec<&str> = deps.iter().map(|d| d.0.as_str()).collect();
            usage(format!(
                "--dependency {want:?}: service {service:?} calls no such dependency (it calls {})",
                crate::text::listing(&names)
            ))
        })?,
    };
    let dependencies: Vec<Dependency> = deps
        .iter()
        .map(|(name, source, ix)| {
            let mut latencies_ms: Vec<f64> =
                ix.iter().map(|&i| (spans[i].end_ns - spans[i].start_ns) as f64 / 1e6).collect();
            latencies_ms.sort_by(f64::total_cmp);
            let errors = ix.iter().filter(|&&i| spans[i].status == Status::Error).count() as u64;
            let error_rate = error_rate(spans, ix, &steps);
            Dependency { name: name.clone(), source, calls: ix.len() as u64, errors, latencies_ms, error_rate }
        })
        .collect();
    let error_rate = dependencies[chosen].error_rate.clone();

    // Route -> dependency, from parent/child links; each request's calls, for the plans.
    let mut link: BTreeMap<(usize, usize), (u64, BTreeSet<usize>)> = BTreeMap::new();
    let mut calls_of: BTreeMap<usize, Vec<plan::Call>> = BTreeMap::new();
    for (di, (_, _, ix)) in deps.iter().enumerate() {
        for &i in ix {
            match request_of(spans, &index, &service, i) {
                Ok(server) => {
                    if let Some(&ri) = route_of.get(&server) {
                        let e = link.entry((ri, di)).or_default();
                        e.0 += 1;
                        e.1.insert(server);
                        let s = &spans[i];
                        let call = plan::Call {
                            start_ns: s.start_ns,
                            end_ns: s.end_ns,
                            dependency: di,
                            error: s.status == Status::Error,
                        };
                        calls_of.entry(server).or_default().push(call);
                    }
                }
                Err(Some(why)) => skipped.push(skip(&spans[i], why)),
                Err(None) => {}
            }
        }
    }
    let links = link
        .into_iter()
        .map(|((ri, di), (calls, reqs))| Link {
            class: routes[ri].class.clone(),
            dependency: deps[di].0.clone(),
            calls,
            requests_calling: reqs.len() as u64,
            requests: routes[ri].requests,
        })
        .collect();
    let graph = opts.dependency.is_none() && deps.len() > 1;
    let mut warnings = Vec::new();
    let mut plans = Vec::new();
    if graph {
        let names: Vec<String> = deps.iter().map(|d| d.0.clone()).collect();
        for (r, (_, ix)) in routes.iter().zip(&order) {
            let requests: Vec<plan::Request> = ix
                .iter()
                .map(|i| plan::Request {
                    error: spans[*i].status == Status::Error,
                    calls: calls_of.remove(i).unwrap_or_default(),
                })
                .collect();
            plans.push(plan::plan(&r.class, &requests, &names, &mut warnings));
        }
    }

    let mut out = Calibrated {
        service,
        t0_ns: t0,
        end_ns: end,
        step_ns: opts.step.ns(),
        routes,
        dependencies,
        chosen,
        graph,
        plans,
        warnings,
        latency_files: Vec::new(),
        error_rate,
        links,
        spans_read: spans.len() as u64,
        other_services: other.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        skipped,
        scenario: String::new(),
        latency_csv: String::new(),
        report: String::new(),
    };
    out.latency_csv = write::latency_csv(&out.dependencies[chosen].latencies_ms);
    out.latency_files = if graph {
        let files = write::latency_file_names(out.dependencies.iter().map(|d| d.name.as_str()));
        files.into_iter().zip(&out.dependencies).map(|(f, d)| (f, write::latency_csv(&d.latencies_ms))).collect()
    } else {
        vec![(opts.latency_file.clone(), out.latency_csv.clone())]
    };
    out.scenario = write::scenario_text(&out, opts);
    out.report = write::report_text(&out);
    Ok(out)
}

/// The error share per step with calls of the CLIENT spans `ix`: (ns from the first span,
/// share, errors, calls).
fn error_rate(spans: &[Span], ix: &[usize], steps: &Steps) -> Vec<(u64, f64, u64, u64)> {
    let mut per = vec![(0u64, 0u64); steps.count];
    for &i in ix {
        let k = steps.of(spans[i].start_ns);
        per[k].1 += 1;
        if spans[i].status == Status::Error {
            per[k].0 += 1;
        }
    }
    (0..steps.count)
        .filter(|&k| per[k].1 > 0)
        .map(|k| (steps.span(k).0, super::round6(per[k].0 as f64 / per[k].1 as f64), per[k].0, per[k].1))
        .collect()
}

/// The service whose SERVER spans are read: the one asked for, or the only one with any.
fn pick_service(spans: &[Span], opts: &Options) -> Result<String, CalibrateError> {
    let mut servers: BTreeMap<&str, u64> = BTreeMap::new();
    let mut all: BTreeSet<&str> = BTreeSet::new();
    for s in spans {
        all.insert(&s.service);
        if s.kind == Kind::Server {
            *servers.entry(&s.service).or_default() += 1;
        }
    }
    let list = |m: Vec<String>| crate::text::listing(&m.iter().map(String::as_str).collect::<Vec<_>>());
    if let Some(want) = &opts.service {
        if !all.contains(want.as_str()) {
            return Err(usage(format!(
                "--service {want:?}: no span has that service.name (the files hold {})",
                list(all.iter().map(|s| format!("{s:?}")).collect())
            )));
        }
        return Ok(want.clone());
    }
    let with_counts = || list(servers.iter().map(|(s, n)| format!("{s:?} ({n} SERVER spans)")).collect());
    match servers.len() {
        0 => Err(usage(format!(
            "no SERVER span (kind 2) in the files (services: {}): no route has arrivals",
            list(all.iter().map(|s| format!("{s:?}")).collect())
        ))),
        1 => Ok(servers.keys().next().map(|s| s.to_string()).unwrap_or_default()),
        _ => Err(usage(format!("several services answer requests: {}; pick one with --service NAME", with_counts()))),
    }
}

/// The SERVER span of `service` that the CLIENT span `i` was made for: up the parents
/// through spans of the same service that are not SERVER spans. Err(Some(why)) when the
/// chain breaks (why the call is in no route); Err(None) when it ends at a SERVER span that
/// was not counted (already listed) or a span of another service.
fn request_of(
    spans: &[Span],
    index: &BTreeMap<(u128, u64), usize>,
    service: &str,
    i: usize,
) -> Result<usize, Option<String>> {
    let mut cur = i;
    for _ in 0..MAX_DEPTH {
        let s = &spans[cur];
        let Some(parent) = s.parent else {
            return Err(Some(if cur == i {
                "a root CLIENT span (no parentSpanId): counted in the latency and error rate, in no route".to_string()
            } else {
                format!(
                    "its chain of parents ends at span {:016x} (a root, not a SERVER span): counted in the latency and error rate, in no route",
                    s.id
                )
            }));
        };
        let Some(&p) = index.get(&(s.trace, parent)) else {
            return Err(Some(format!(
                "parent span {parent:016x} is not in the files (missing parent): counted in the latency and error rate, in no route"
            )));
        };
        let ps = &spans[p];
        if ps.service != service {
            return Err(None);
        }
        if ps.kind == Kind::Server {
            return Ok(p);
        }
        cur = p;
    }
    Err(Some(format!(
        "more than {MAX_DEPTH} parents up to a SERVER span (a cycle of parent ids?): counted in the latency and error rate, in no route"
    )))
}

/// The steps from the first span's start to the last span's end: whole steps, the last one
/// running to the end (so it is between one and two steps wide, or the whole range when that
/// is shorter than a step).
struct Steps {
    t0: u64,
    end: u64,
    step: u64,
    count: usize,
}

impl Steps {
    fn new(t0: u64, end: u64, step: u64) -> Self {
        let count = ((end - t0) / step).max(1) as usize;
        Self { t0, end, step, count }
    }

    /// The step holding time `t` (between the first span's start and the last one's end).
    fn of(&self, t: u64) -> usize {
        (((t - self.t0) / self.step) as usize).min(self.count - 1)
    }

    /// Step `k`'s start (ns from the first span) and width (ns).
    fn span(&self, k: usize) -> (u64, u64) {
        let at = k as u64 * self.step;
        let width = if k + 1 == self.count { self.end - self.t0 - at } else { self.step };
        (at, width)
    }
}

/// Class names for routes: the route without its leading `/`, each further `/` a `.`
/// (brownout's names are file names), `root` for `/`; a name whose file stem another
/// already has gets `-2`, `-3`, ... .
fn class_names<'a>(routes: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for r in routes {
        let trimmed = r.trim().trim_start_matches('/');
        let base: String = trimmed
            .chars()
            .map(|c| {
                if c == '/' || c == '\\' {
                    '.'
                } else if c.is_control() {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        let base = if base.trim().is_empty() || base == "." || base == ".." { "root".to_string() } else { base };
        let mut name = base.clone();
        let mut n = 1;
        while !taken.insert(crate::scenario::file_stem(&name)) {
            n += 1;
            name = format!("{base}-{n}");
        }
        out.push(name);
    }
    out
}

#[cfg(test)]
mod tests;
