//! brownout against the real HAProxy and nginx (issue 39): each proxy, started from its
//! sample in `scenarios/imports/`, runs on 127.0.0.1 in front of a drifting HTTP dependency
//! (`dependency.rs`) under an open-loop Poisson load (`load.rs`), for a few seeds of a short
//! drift (10 s quiet, 16 s at the peak between two 2 s ramps, 10 s after); brownout runs the
//! same proxy (each sample through `brownout import haproxy` / `brownout import nginx`, see
//! scenarios/haproxy-real.ron and nginx-real.ron) with the scenario's replications. The proxies' own logs confirm
//! what each status means; per phase, the fractions of ok / 503 / 504 / 429 / 502 and the
//! ok-latency p50 and p95 must agree: |z| <= 3, z the difference of the means over their
//! combined standard error from the run-to-run spread (see [`compare`]). The tables are
//! printed (`--nocapture`) and copied in docs/proxies.md.
//!
//! Ignored by default: it needs both proxies and about 2.5 minutes of wall time, and measures
//! wall-clock latencies (the only test that may). `.ci/run` installs the proxies and runs it
//! with `--ignored --nocapture`; there a missing proxy is a failure, never a skip.
//! `BROWNOUT_REAL_PROXY_RUNS` sets the real runs per proxy (3; 1 to 10);
//! `BROWNOUT_REAL_PROXY_DUMP=<folder>` writes every real request there as CSV ([`dump`]), and
//! each proxy's stdout and stderr.

mod dependency;
mod load;
mod proxy;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use brownout::metrics::summary::ClassSummary;
use brownout::model::{Model, RunOptions};
use brownout::runner::{replication_seed, run_all};
use brownout::scenario::{Arrivals, Scenario, load_text};

use crate::common::BIN;
use dependency::{Drifting, Served, Server};
use load::Sent;
use proxy::{Kind, Logged, Proxy};

/// The load generator's cap on one request: well above the proxies' longest answer
/// (HAProxy: 200 ms queue + 500 ms server; nginx: 500 ms).
const CAP: Duration = Duration::from_secs(5);
/// The table's columns: the statuses a caller of either proxy sees, then anything else.
const COLUMNS: [&str; 6] = ["ok", "503", "504", "429", "502", "other"];
/// Largest |z| accepted.
const Z_MAX: f64 = 3.0;
/// Floor of a latency figure's run-to-run standard deviation, in ms (see [`compare`]): the
/// real path's own cost, which the scenario leaves out (connecting, two loopback hops, the
/// proxy's work, thread wake-ups: [`overhead`]), was 0.7 to 1.4 ms at the median and 5 to 15
/// ms at the p95 on a machine shared with seven builds; with 3 real runs a systematic
/// difference of up to 3 x 2 x sqrt(1/3 + 1/20) = 3.7 ms passes when nothing else varies.
const LATENCY_SD_FLOOR_MS: f64 = 2.0;

/// One run's figures over one phase: the fraction of each column, the ok latencies.
#[derive(Debug, Clone)]
struct Figures {
    requests: f64,
    fractions: [f64; 6],
    p50: f64,
    p95: f64,
}

/// The nearest-rank percentile `q` of sorted `v` (NaN for none).
fn percentile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = (q * v.len() as f64).ceil().max(1.0) as usize;
    v[rank - 1]
}

/// The real run's figures over `[start, end)` seconds (by scheduled send time, as brownout
/// counts a request in the phase it arrived in).
fn real_figures(sent: &[Sent], start: f64, end: f64) -> Figures {
    let inside: Vec<&Sent> = sent.iter().filter(|s| s.at_s >= start && s.at_s < end).collect();
    let n = inside.len() as f64;
    let mut fractions = [0.0; 6];
    for s in &inside {
        let col = match s.status {
            200 => 0,
            503 => 1,
            504 => 2,
            429 => 3,
            502 => 4,
            _ => 5,
        };
        fractions[col] += 1.0 / n;
    }
    let mut ok: Vec<f64> = inside.iter().filter(|s| s.status == 200).map(|s| s.latency_ms).collect();
    ok.sort_by(f64::total_cmp);
    Figures { requests: n, fractions, p50: percentile(&ok, 0.50), p95: percentile(&ok, 0.95) }
}

/// How brownout's outcomes read as a proxy's statuses (docs/proxies.md, "What a refusal
/// answers"), and the cause each must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// An `error` is the 503 of HAProxy's queue timeout: cause `limiter_refused` from
    /// `HaproxyBackend`'s queue, or `pool_acquire_timeout` when the queue is written as the
    /// pool (`pool: true`, the model the issue started from).
    Haproxy { pool: bool },
    /// An `error` is the 502 of `max_conns` (a refusal as `Unavailable`), `rejected` the 429
    /// of `limit_req`: both `limiter_refused`.
    Nginx,
}

/// brownout's figures of one class over one phase, read as `reading` says; asserts that
/// brownout gives each status the cause it stands for.
fn model_figures(reading: Reading, c: &ClassSummary) -> Figures {
    let o = &c.outcomes;
    assert_eq!(o.timeout, c.causes.attempt_timeout, "504s that are not server timeouts: {c:?}");
    let (e503, e502) = match reading {
        Reading::Haproxy { pool } => {
            let queue = if pool { c.causes.pool_acquire_timeout } else { c.causes.limiter_refused };
            assert_eq!(o.error, queue, "HAProxy 503s that are not queue timeouts: {c:?}");
            (o.error, 0)
        }
        Reading::Nginx => {
            assert_eq!(o.error, c.causes.no_live_upstream, "nginx 502s that are not max_conns: {c:?}");
            assert_eq!(o.rejected, c.causes.limiter_refused, "nginx 429s that are not limit_req: {c:?}");
            (0, o.error)
        }
    };
    let n = c.requests as f64;
    let counts = [o.ok, e503, o.timeout, o.rejected, e502];
    let mut fractions = [0.0; 6];
    for (f, k) in fractions.iter_mut().zip(counts) {
        *f = k as f64 / n;
    }
    fractions[5] = (c.requests - counts.iter().sum::<u64>()) as f64 / n;
    let l = &c.latency_answered_ms;
    Figures { requests: n, fractions, p50: l.p50, p95: l.p95 }
}

/// brownout's figures per replication and phase (`[replication][phase]`).
fn predicted(reading: Reading, s: &Scenario, root: &Path) -> Vec<Vec<Figures>> {
    (0..s.replications)
        .map(|k| {
            let model = Model::build(s, replication_seed(s.seed, k), root).unwrap_or_else(|e| panic!("{e}"));
            let r = run_all(&model, RunOptions::default(), false).unwrap_or_else(|e| panic!("{e}"));
            r.summary.phases.iter().map(|p| model_figures(reading, &p.runs[0].classes[0])).collect()
        })
        .collect()
}

/// The proxy's log confirms the meaning of every status the client saw, or the test fails:
/// HAProxy's termination state (`--` answered, `sQ` queue timeout, `sH` server timeout, with
/// the 500 ms counted from leaving the queue), nginx's `$upstream_status` (`-`: refused before
/// any upstream, the 429 of `limit_req`; `502` with "no live upstreams" in the error log:
/// every server at `max_conns`; `504` after 500 ms at the upstream). Returns a line for the
/// output.
fn confirm(kind: Kind, sent: &[Sent], logged: &BTreeMap<u64, Logged>, err: &[String]) -> String {
    let mut count: BTreeMap<(u16, String), u64> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut queued_504 = 0;
    // nginx's refusals (429, 502) are answered at once: the longest is shown.
    let mut refusal_max_ms = 0;
    let mut unlogged = Vec::new();
    for s in sent {
        let Some(l) = logged.get(&s.id) else {
            unlogged.push(format!("request {} (status {}) is not in the proxy's log", s.id, s.status));
            continue;
        };
        *count.entry((s.status, l.state.clone())).or_default() += 1;
        let ok = s.status == l.status
            && match (kind, s.status) {
                (Kind::Haproxy, 200) => l.state == "--",
                (Kind::Haproxy, 503) => l.state == "sQ",
                (Kind::Haproxy, 504) => {
                    queued_504 += u64::from(l.queue_ms > 0);
                    // Timed from leaving the queue (and connecting): a whole 500 ms each.
                    l.state == "sH" && l.server_ms >= 499
                }
                (Kind::Nginx, 200) => l.state == "200",
                (Kind::Nginx, 429 | 502) => {
                    refusal_max_ms = refusal_max_ms.max(l.total_ms);
                    l.state == if s.status == 429 { "-" } else { "502" }
                }
                (Kind::Nginx, 504) => l.state == "504" && l.server_ms >= 499,
                _ => false,
            };
        if !ok {
            wrong.push(format!("request {}: the client saw {}, the proxy logged {l:?}", s.id, s.status));
        }
    }
    if kind == Kind::Nginx {
        let nolive = err.iter().filter(|l| l.contains("no live upstreams")).count() as u64;
        let e502 = sent.iter().filter(|s| s.status == 502).count() as u64;
        if nolive != e502 {
            wrong.push(format!("{e502} answers 502 but {nolive} \"no live upstreams\" in nginx's error log"));
        }
    }
    // HAProxy logs to stdout (`fd@1`) with one non-blocking writev() per line and drops a
    // line rather than wait: doc/configuration.txt, "log <target>": "Messages sent this way
    // will not be truncated but may be dropped"; src/fd.c, `fd_write_frag_line`, gives up
    // after 200 attempts to take the descriptor while another of its threads writes ("we
    // prefer to fail on collision than to block"). On a loaded machine one line in about
    // 2,000 went missing. Up to 0.5 % of HAProxy's lines may be missing; nginx writes its
    // access log to a file, all of it.
    let allowed = match kind {
        Kind::Haproxy => sent.len() / 200,
        Kind::Nginx => 0,
    };
    if unlogged.len() > allowed {
        wrong.extend(unlogged.iter().cloned());
    }
    assert!(wrong.is_empty(), "{kind:?}: statuses the proxy's own accounting does not confirm:\n{}", wrong.join("\n"));
    let counts: Vec<String> = count.iter().map(|((st, state), n)| format!("{st} [{state}] x{n}")).collect();
    let extra = match kind {
        Kind::Haproxy => format!("; 504s that had queued first: {queued_504}; lines missing: {}", unlogged.len()),
        Kind::Nginx => format!("; longest refusal {refusal_max_ms} ms"),
    };
    format!("{kind:?}: {}{extra}", counts.join(", "))
}

/// One real run: the dependency and the proxy started, the load sent over `horizon_s`, the
/// proxy stopped, its log read back and checked ([`confirm`]).
fn trial(kind: Kind, root: &Path, drift: &Drifting, seed: u64, rate: f64, horizon_s: f64) -> (Vec<Sent>, String) {
    // The drift's clock starts once both processes are up; they get 3 s.
    let t0 = Instant::now() + Duration::from_secs(3);
    let mut dep = Server::start(drift.clone(), seed, t0);
    let mut proxy = Proxy::start(kind, root, dep.port);
    assert!(Instant::now() < t0, "{kind:?} took more than 3 s to start");
    let at = load::schedule(seed, rate, horizon_s);
    let sent = load::run(proxy.port, &at, t0, CAP);
    // The proxy logs a request as it ends; give the last lines a moment to reach the pipe.
    std::thread::sleep(Duration::from_millis(300));
    let (out, err) = proxy.stop();
    dep.stop();
    let logged = proxy.logged(&out);
    // Written before the checks, so that a failing run leaves its evidence.
    if let Some(dir) = std::env::var_os("BROWNOUT_REAL_PROXY_DUMP") {
        dump(Path::new(&dir), kind, seed, &sent, &logged, &dep.log.lock().unwrap());
        let name = format!("{kind:?}-{seed}.out").to_lowercase();
        std::fs::write(Path::new(&dir).join(name), [out.join("\n"), err.join("\n")].join("\n")).unwrap();
    }
    let line = confirm(kind, &sent, &logged, &err);
    let line = format!("{line}; {}", overhead(&sent, &logged, &dep.log.lock().unwrap()));
    let served = dep.served.load(std::sync::atomic::Ordering::Relaxed);
    (sent, format!("seed {seed}: {line}; the dependency answered {served}"))
}

/// The real path's own cost, which brownout's scenario leaves out: over the ok answers, the
/// client's latency minus the dependency's sleep and the proxy's queue time (connecting, two
/// loopback hops, the proxy's work, thread wake-ups), and the scheduler's overshoot of the
/// sleep (median and 95th percentile, ms); over every request, how late its thread started
/// after its scheduled time (median and largest). Large values mean a loaded machine.
fn overhead(sent: &[Sent], logged: &BTreeMap<u64, Logged>, dep: &BTreeMap<u64, Served>) -> String {
    let (mut path, mut over) = (Vec::new(), Vec::new());
    for s in sent.iter().filter(|s| s.status == 200) {
        if let (Some(l), Some(d)) = (logged.get(&s.id), dep.get(&s.id)) {
            path.push(s.latency_ms - d.slept_ms - l.queue_ms.max(0) as f64);
            over.push(d.slept_ms - d.drawn_ms);
        }
    }
    let mut lag: Vec<f64> = sent.iter().map(|s| (s.sent_s - s.at_s) * 1e3).collect();
    for v in [&mut path, &mut over, &mut lag] {
        v.sort_by(f64::total_cmp);
    }
    format!(
        "path overhead p50 {:.2} ms, p95 {:.2} ms; sleep overshoot p50 {:.2} ms, p95 {:.2} ms; send lag p50 {:.2} ms, max {:.1} ms",
        percentile(&path, 0.5),
        percentile(&path, 0.95),
        percentile(&over, 0.5),
        percentile(&over, 0.95),
        percentile(&lag, 0.5),
        percentile(&lag, 1.0)
    )
}

/// Every request of a real run as a CSV row, into `dir/<proxy>-<seed>.csv`: what the
/// client saw, what the proxy logged, what the dependency drew and slept (empty where the
/// request never reached it). For looking into a cell that differs.
fn dump(dir: &Path, kind: Kind, seed: u64, sent: &[Sent], logged: &BTreeMap<u64, Logged>, dep: &BTreeMap<u64, Served>) {
    let mut csv = String::from(
        "id,at_s,sent_s,status,latency_ms,proxy_state,proxy_queue_ms,proxy_server_ms,proxy_total_ms,dep_arrived_s,dep_drawn_ms,dep_slept_ms\n",
    );
    for s in sent {
        let l = logged
            .get(&s.id)
            .map_or(",,,".into(), |l| format!("{},{},{},{}", l.state, l.queue_ms, l.server_ms, l.total_ms));
        let d =
            dep.get(&s.id).map_or(",,".into(), |d| format!("{:.4},{:.3},{:.3}", d.arrived_s, d.drawn_ms, d.slept_ms));
        csv += &format!("{},{:.4},{:.4},{},{:.3},{l},{d}\n", s.id, s.at_s, s.sent_s, s.status, s.latency_ms);
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{kind:?}-{seed}.csv").to_lowercase()), csv).unwrap();
}

/// The check scenario `file` (in `scenarios/`) with the stack between its `import` markers
/// replaced by what `brownout import ARGS` prints (HAProxy: `import haproxy
/// scenarios/imports/haproxy.cfg --backend app`, nginx: `import nginx
/// scenarios/imports/nginx.conf --upstream app`).
fn imported(root: &Path, file: &str, args: &[&str]) -> Scenario {
    let o = std::process::Command::new(BIN).arg("import").args(args).current_dir(root).output().unwrap();
    assert!(o.status.success(), "brownout import {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    with_stack(root, file, &String::from_utf8(o.stdout).unwrap(), None)
}

/// The check scenario `file` with `stack` between its `import` markers, and the text
/// `replace.0` (which must be there) replaced by `replace.1`.
fn with_stack(root: &Path, file: &str, stack: &str, replace: Option<(&str, &str)>) -> Scenario {
    let path = root.join("scenarios").join(file);
    let mut text = std::fs::read_to_string(&path).unwrap();
    if let Some((from, to)) = replace {
        assert!(text.contains(from), "{file} has no {from:?}");
        text = text.replace(from, to);
    }
    let (head, rest) = text.split_once("// import: begin\n").unwrap_or_else(|| panic!("{file} has no import markers"));
    let (_, tail) = rest.split_once("// import: end\n").unwrap_or_else(|| panic!("{file} has no import markers"));
    let text = format!("{head}{stack}\n{tail}");
    load_text(&path, &text).unwrap_or_else(|e| panic!("{file} with the stack {stack}:\n{text}\n{e}"))
}

/// Mean and sample standard deviation (0 for one value).
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 { v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    (m, var.sqrt())
}

/// One cell of the comparison: z = (mean_real - mean_model) / sqrt(sd_real^2 / n_real +
/// sd_model^2 / n_model), the difference of the means over their combined standard error,
/// each sd the side's run-to-run sample standard deviation, floored: the model's at a floor
/// for cells that never vary (a fraction's at the binomial standard deviation of one run,
/// sqrt(q (1 - q) / N), with N the phase's mean requests per run and q the pooled mean
/// fraction kept at least 1/N from 0 and 1; a latency's at [`LATENCY_SD_FLOOR_MS`]), the
/// real side's at the model's floored sd (the real runs are the modelled process plus the
/// machine's noise, so they spread at least as much; 3 runs can show less by chance, 1 run
/// shows none). A cell that is 0 in every run has z = 0; a single stray request in one of 3
/// real runs has |z| < 3. Returns the two means, the two sample standard deviations and z:
/// NaN when neither side has a value (no ok answer), infinite when only one has.
fn compare(real: &[f64], model: &[f64], fraction: bool, n: f64) -> (f64, f64, f64, f64, f64) {
    let (mr, sr) = mean_sd(real);
    let (mm, sm) = mean_sd(model);
    if mr.is_nan() && mm.is_nan() {
        return (mr, sr, mm, sm, f64::NAN);
    }
    if mr.is_nan() || mm.is_nan() {
        return (mr, sr, mm, sm, f64::INFINITY);
    }
    let (nr, nm) = (real.len() as f64, model.len() as f64);
    let floor = if fraction {
        let pooled = (mr * nr + mm * nm) / (nr + nm);
        let q = pooled.min(1.0 - pooled).max(1.0 / n);
        (q * (1.0 - q) / n).sqrt()
    } else {
        LATENCY_SD_FLOOR_MS
    };
    let model_sd = sm.max(floor);
    let real_sd = sr.max(model_sd);
    (mr, sr, mm, sm, (mr - mm) / (real_sd * real_sd / nr + model_sd * model_sd / nm).sqrt())
}

/// The comparison table of one proxy, and the cells beyond [`Z_MAX`].
fn table(title: &str, s: &Scenario, real: &[Vec<Figures>], model: &[Vec<Figures>]) -> (String, Vec<String>) {
    let mut t = format!(
        "\n{title}\n{} real runs, {} brownout replications; mean ± run-to-run sd; z = (real - brownout) / sqrt(sd_real^2/runs + sd_brownout^2/replications), sds floored\n\n",
        real.len(),
        model.len()
    );
    t += "| phase | requests/run | figure | real | brownout | z |\n|---|---|---|---|---|---|\n";
    let mut bad = Vec::new();
    for (i, p) in s.phases.iter().enumerate() {
        let col =
            |runs: &[Vec<Figures>], f: &dyn Fn(&Figures) -> f64| runs.iter().map(|r| f(&r[i])).collect::<Vec<f64>>();
        let n = mean_sd(&[col(real, &|f| f.requests), col(model, &|f| f.requests)].concat()).0;
        let mut rows: Vec<(String, bool, Vec<f64>, Vec<f64>)> = Vec::new();
        for (c, name) in COLUMNS.iter().enumerate() {
            rows.push((name.to_string(), true, col(real, &|f| f.fractions[c]), col(model, &|f| f.fractions[c])));
        }
        rows.push(("ok p50 ms".into(), false, col(real, &|f| f.p50), col(model, &|f| f.p50)));
        rows.push(("ok p95 ms".into(), false, col(real, &|f| f.p95), col(model, &|f| f.p95)));
        for (name, fraction, r, m) in rows {
            let (mr, sr, mm, sm, z) = compare(&r, &m, fraction, n);
            let show = |m: f64, s: f64| {
                if m.is_nan() {
                    "–".to_string()
                } else if fraction {
                    format!("{:.1} % ± {:.1}", m * 100.0, s * 100.0)
                } else {
                    format!("{m:.0} ± {s:.1}")
                }
            };
            let zs = if z.is_nan() { "–".to_string() } else { format!("{z:+.2}") };
            t += &format!("| {} | {n:.0} | {name} | {} | {} | {zs} |\n", p.name, show(mr, sr), show(mm, sm));
            if z.abs() > Z_MAX {
                bad.push(format!("{title}: phase {}, {name}: z = {z:+.2}", p.name));
            }
        }
    }
    (t, bad)
}

/// The real runs per proxy: `BROWNOUT_REAL_PROXY_RUNS`, 3 unless set.
fn real_runs() -> u64 {
    let n = std::env::var("BROWNOUT_REAL_PROXY_RUNS").map(|v| v.parse().expect("BROWNOUT_REAL_PROXY_RUNS: a number"));
    let n = n.unwrap_or(3);
    assert!((1..=10).contains(&n), "BROWNOUT_REAL_PROXY_RUNS is 1 to 10");
    n
}

#[test]
#[ignore = "needs haproxy and nginx (apt-get install haproxy nginx) and 2-3 minutes of wall time; .ci/run installs them and runs this with --ignored --nocapture"]
fn the_real_haproxy_and_nginx_answer_as_brownout_predicts_phase_by_phase() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Fails loudly, before anything else, where a proxy is missing.
    for k in [Kind::Haproxy, Kind::Nginx] {
        let v = std::process::Command::new(k.binary()).arg("-v").output().unwrap();
        println!("{k:?}: {}", String::from_utf8_lossy(&[v.stdout, v.stderr].concat()).lines().next().unwrap_or(""));
    }
    let haproxy = imported(root, "haproxy-real.ron", &["haproxy", "scenarios/imports/haproxy.cfg", "--backend", "app"]);
    let nginx = imported(root, "nginx-real.ron", &["nginx", "scenarios/imports/nginx.conf", "--upstream", "app"]);
    // One dependency, one load for both: the real side follows the scenarios' own models.
    let drift = Drifting::of(&haproxy.dependency);
    assert_eq!(drift, Drifting::of(&nginx.dependency), "the two check scenarios differ in their dependency");
    let rate = match &haproxy.classes[0].arrivals {
        Arrivals::Poisson { rate_per_s } => *rate_per_s,
        a => panic!("the check needs Poisson arrivals, not {a:?}"),
    };
    let horizon_s = haproxy.horizon.ns() as f64 / 1e9;
    assert_eq!(nginx.horizon, haproxy.horizon);

    // brownout first: it takes seconds, the real runs minutes.
    let predicted_haproxy = predicted(Reading::Haproxy { pool: false }, &haproxy, root);
    let predicted_nginx = predicted(Reading::Nginx, &nginx, root);
    // The same HAProxy written the obvious way (issue 39): the pool as its connection limit,
    // the acquire timeout as `timeout queue`, the 500 ms timed from the attempt. The check
    // must tell it from the real proxy, or it could not tell anything.
    let obvious = with_stack(
        root,
        "haproxy-real.ron",
        "[(policy: Timeout((timeout: \"500ms\")))]",
        Some((
            "pool: (max_connections: 2000, acquire_timeout: \"5s\")",
            "pool: (max_connections: 20, acquire_timeout: \"200ms\")",
        )),
    );
    let predicted_obvious = predicted(Reading::Haproxy { pool: true }, &obvious, root);

    let spans: Vec<(f64, f64)> =
        haproxy.phases.iter().map(|p| (p.start.ns() as f64 / 1e9, p.end.ns() as f64 / 1e9)).collect();
    let (mut real_haproxy, mut real_nginx) = (Vec::new(), Vec::new());
    let started = Instant::now();
    for k in 0..real_runs() {
        let seed = replication_seed(0x3939, k as u32);
        // The two proxies at once, each with its own dependency, on the same draws.
        let (h, n) = std::thread::scope(|sc| {
            let h = sc.spawn(|| trial(Kind::Haproxy, root, &drift, seed, rate, horizon_s));
            let n = sc.spawn(|| trial(Kind::Nginx, root, &drift, seed, rate, horizon_s));
            (h.join().unwrap(), n.join().unwrap())
        });
        println!("{}\n{}", h.1, n.1);
        real_haproxy.push(spans.iter().map(|&(a, b)| real_figures(&h.0, a, b)).collect::<Vec<_>>());
        real_nginx.push(spans.iter().map(|&(a, b)| real_figures(&n.0, a, b)).collect::<Vec<_>>());
    }
    println!("real runs took {:.0} s", started.elapsed().as_secs_f64());
    let (th, bh) = table(
        "HAProxy (scenarios/imports/haproxy.cfg) against brownout (haproxy-real.ron, the sample imported)",
        &haproxy,
        &real_haproxy,
        &predicted_haproxy,
    );
    let (tn, bn) = table(
        "nginx (scenarios/imports/nginx.conf) against brownout (nginx-real.ron, the sample imported)",
        &nginx,
        &real_nginx,
        &predicted_nginx,
    );
    let (to, bo) = table(
        "HAProxy against the obvious model (the pool of 20 as its queue, a 200 ms acquire timeout, Timeout 500 ms from the attempt): must differ",
        &obvious,
        &real_haproxy,
        &predicted_obvious,
    );
    println!("{th}{tn}{to}");
    let bad = [bh, bn].concat();
    assert!(bad.is_empty(), "cells beyond |z| <= {Z_MAX}:\n{}", bad.join("\n"));
    assert!(!bo.is_empty(), "the check cannot tell a timeout from the attempt from HAProxy's:{to}");
    println!("the obvious model is told apart by {} cells:\n{}", bo.len(), bo.join("\n"));
}

/// HAProxy's `option httplog` line as HAProxy 2.6 wrote it in a run of this check (`log stdout
/// format raw`), and the two refusals built by the configuration manual's "8.2.3. HTTP log
/// format" (timers `TR/Tw/Tc/Tr/Ta`, -1 for a step never reached; `<NOSRV>` when the queue
/// timed out).
#[test]
fn haproxy_log_lines_give_status_termination_state_and_times() {
    let ok = r#"127.0.0.1:59566 [02/Dec/2026:03:34:13.287] web app/app1 0/0/0/56/56 200 121 - - ---- 1/1/0/0/0 0/0 "GET /r/5 HTTP/1.1""#;
    let queue = r#"127.0.0.1:59570 [02/Dec/2026:03:34:13.300] web app/<NOSRV> 0/200/-1/-1/200 503 217 - - sQ-- 30/30/20/0/0 0/9 "GET /r/6 HTTP/1.1""#;
    let server = r#"127.0.0.1:59572 [02/Dec/2026:03:34:13.444] web app/app1 0/150/0/-1/651 504 218 - - sH-- 30/30/20/20/0 0/3 "GET /r/7 HTTP/1.1""#;
    let logged = proxy::haproxy_line;
    assert_eq!(
        logged(ok),
        Some((5, Logged { status: 200, state: "--".into(), queue_ms: 0, server_ms: 56, total_ms: 56 }))
    );
    assert_eq!(
        logged(queue),
        Some((6, Logged { status: 503, state: "sQ".into(), queue_ms: 200, server_ms: -1, total_ms: 200 }))
    );
    // 651 - 150 - 0: the 500 ms server timeout counted from leaving the queue.
    assert_eq!(
        logged(server),
        Some((7, Logged { status: 504, state: "sH".into(), queue_ms: 150, server_ms: 501, total_ms: 651 }))
    );
    assert_eq!(logged("[WARNING]  (1) : Proxy web started."), None);
}

/// The access-log line of [`NGINX_LOG`]'s format, as nginx 1.22 wrote them in this check's
/// runs: an answer, a `limit_req` refusal (no upstream), a `max_conns` refusal, a timeout.
#[test]
fn nginx_log_lines_give_status_upstream_status_and_times() {
    let logged = proxy::nginx_line;
    let l = |status, state: &str, server_ms, total_ms| Logged {
        status,
        state: state.into(),
        queue_ms: 0,
        server_ms,
        total_ms,
    };
    assert_eq!(logged("/r/5|200|200|0.101|0.101"), Some((5, l(200, "200", 101, 101))));
    assert_eq!(logged("/r/6|429|-|0.000|-"), Some((6, l(429, "-", -1, 0))));
    assert_eq!(logged("/r/7|502|502|0.000|0.000"), Some((7, l(502, "502", 0, 0))));
    assert_eq!(logged("/r/8|504|504|0.501|0.500"), Some((8, l(504, "504", 500, 501))));
    assert_eq!(logged("/favicon.ico|404|-|0.000|-"), None);
}

/// The dependency's drift is `Drift::Points`: constant before the first point and after the
/// last, linear between (scenarios/haproxy-real.ron's points, by hand).
#[test]
fn the_dependency_drifts_through_the_scenario_points() {
    let d =
        Drifting { median_ms: 100.0, sigma: 0.25, points: vec![(10.0, 1.0), (12.0, 4.0), (28.0, 4.0), (30.0, 1.0)] };
    for (t, f) in [(0.0, 1.0), (10.0, 1.0), (11.0, 2.5), (12.0, 4.0), (20.0, 4.0), (29.5, 1.75), (35.0, 1.0)] {
        assert!((d.factor(t) - f).abs() < 1e-12, "factor at {t} s: {} != {f}", d.factor(t));
    }
}

/// z by hand: real 0.10, 0.20, 0.30 (mean 0.2, sd 0.1), model 0.15 x 10 and 0.25 x 10 (mean
/// 0.2, sd sqrt(20 x 0.05^2 / 19) = 0.051299); equal means are z = 0. The real runs shifted
/// by +0.05: z = 0.05 / sqrt(0.1^2 / 3 + 0.051299^2 / 20) = 0.84942. A cell 0 everywhere is
/// z = 0; one stray request of 550 in one of 3 real runs: q = 1/550 floors the model's sd at
/// sqrt(q (1 - q) / 550) = 0.0018165, and the real side's (0.0010497) at that, so z = (1/1650)
/// / (0.0018165 x sqrt(1/3 + 1/20)) = 0.53887. A real side spreading more than the model
/// counts with its own sd: 3 ms apart at real sd 3, model sd 1 (floored at 2) is z = 3 /
/// sqrt(9/3 + 4/20) = 1.67705.
#[test]
fn z_is_the_difference_of_means_over_the_combined_standard_error() {
    let model: Vec<f64> = [0.15; 10].iter().chain([0.25; 10].iter()).copied().collect();
    let z = |real: &[f64], model: &[f64], fraction, n| compare(real, model, fraction, n).4;
    assert!(z(&[0.1, 0.2, 0.3], &model, true, 550.0).abs() < 1e-12);
    assert!((z(&[0.15, 0.25, 0.35], &model, true, 550.0) - 0.84942).abs() < 1e-4);
    assert_eq!(z(&[0.0; 3], &[0.0; 20], true, 550.0), 0.0);
    assert!((z(&[1.0 / 550.0, 0.0, 0.0], &[0.0; 20], true, 550.0) - 0.5389).abs() < 1e-4);
    // Latency: no ok answer on either side is no value; on one side only, a failure.
    assert!(z(&[f64::NAN; 3], &[f64::NAN; 20], false, 550.0).is_nan());
    assert!(z(&[100.0; 3], &[f64::NAN; 20], false, 550.0).is_infinite());
    // Both constant: the floor of 2 ms on both sides; 3 ms apart is 3 / (2 x sqrt(1/3 + 1/20))
    // = 2.4227.
    assert!((z(&[103.0; 3], &[100.0; 20], false, 550.0) - 2.4227).abs() < 1e-4);
    let spread: Vec<f64> = [99.0, 101.0].iter().cycle().take(20).copied().collect();
    let sd = |v: &[f64]| mean_sd(v).1;
    assert!((sd(&[100.0, 103.0, 106.0]) - 3.0).abs() < 1e-12 && sd(&spread) < 2.0);
    assert!((z(&[100.0, 103.0, 106.0], &spread, false, 550.0) - 1.67705).abs() < 1e-4);
}
