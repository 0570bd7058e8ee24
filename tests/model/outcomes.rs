//! Deadline-honest outcomes and queue statistics (issue 17): in time, late and the cause of
//! every request that is not in time, in scenarios whose counts follow by hand; limiter and
//! pool waits against Erlang C; and the accounting identities over every shipped scenario.

use crate::common::{self, run_first as run_text};

use std::path::Path;

use brownout::metrics::summary::{ClassSummary, RunSummary};
use brownout::model::{Model, RunOptions};
use brownout::runner::run_all;
use brownout::scenario::{Dur, Scenario, load, validate};

fn run_scenario(s: &Scenario, dir: &Path) -> Vec<RunSummary> {
    validate(s).unwrap_or_else(|e| panic!("{e}"));
    let model = Model::build(s, s.seed, dir).unwrap();
    run_all(&model, RunOptions::default(), false).unwrap().summary.runs
}

/// Scripted arrivals at `first_ms`, `first_ms + gap_ms`, ... (`n` of them), as RON durations.
fn times(first_ms: u64, gap_ms: u64, n: u64) -> String {
    (0..n).map(|k| format!("\"{}ms\"", first_ms + gap_ms * k)).collect::<Vec<_>>().join(", ")
}

#[test]
fn every_answer_after_the_deadline_is_late_and_none_is_in_time() {
    // 100 requests, each answered ok after the fixed 10 ms, against a 5 ms deadline.
    let r = run_text(&format!(
        r#"Scenario(
    name: "late",
    horizon: "10s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Scripted(times: [{}]), deadline: "5ms")],
    dependency: (latency: Constant("10ms")),
    policies: [(name: "p", stack: [])],
)"#,
        times(50, 100, 100)
    ));
    let c: &ClassSummary = &r.classes[0];
    assert_eq!(c.outcomes.ok, 100);
    assert_eq!(c.in_time, 0);
    assert_eq!(c.in_time_ratio, 0.0);
    assert_eq!(c.late, 100, "every answer is late");
    assert_eq!(c.causes.late, 100);
    assert_eq!(c.causes.total(), 100);
    // All answers took 10 ms; there is no in-time answer and no failure to measure.
    assert_eq!(c.latency_answered_ms.p50, 10.0);
    assert_eq!(c.latency_answered_ms.max, 10.0);
    assert!(c.latency_in_time_ms.max.is_nan(), "no value, not 0");
    assert!(c.latency_failed_ms.max.is_nan(), "no value, not 0");
}

#[test]
fn pool_acquire_timeouts_are_their_own_cause_with_a_healthy_dependency() {
    // One connection held 50 ms per call, a 5 ms acquire timeout, arrivals every 20 ms from
    // 5 ms. The request at 5 ms holds the connection to 55 ms; those at 25 and 45 ms wait
    // 5 ms and fail; the one at 65 ms finds it free (55 ms), and so on: of 99 requests the
    // 33 with k = 0 mod 3 are answered in 50 ms and 66 fail after 5 ms, none from the
    // dependency, whose error rate is 0.
    let r = run_text(&format!(
        r#"Scenario(
    name: "pool",
    horizon: "2s",
    fleet: (workers: (slots: 100), pool: (max_connections: 1, acquire_timeout: "5ms")),
    classes: [(name: "c", arrivals: Scripted(times: [{}]), deadline: "1s")],
    dependency: (latency: Constant("50ms")),
    policies: [(name: "p", stack: [])],
)"#,
        times(5, 20, 99)
    ));
    let c = &r.classes[0];
    assert_eq!(c.requests, 99);
    assert_eq!(c.in_time, 33);
    assert_eq!(c.outcomes.error, 66, "a pool acquire timeout is a 503");
    assert_eq!(c.causes.pool_acquire_timeout, 66);
    assert_eq!(c.causes.dependency_error, 0);
    assert_eq!(c.causes.total(), 66);
    assert_eq!(c.latency_in_time_ms.mean, 50.0);
    assert_eq!(c.latency_failed_ms.mean, 5.0);
    // Each use holds the connection exactly 50 ms; 66 waits of 5 ms over 2 s is 0.165
    // attempts waiting on average.
    assert!((r.resources.pool_hold_ms_mean - 50.0).abs() < 1e-9, "{}", r.resources.pool_hold_ms_mean);
    assert!((r.resources.pool_waiting_mean - 0.165).abs() < 1e-9, "{}", r.resources.pool_waiting_mean);
    assert!(r.limiter_queue.is_none() && r.bulkhead_queue.is_none(), "no such layer, no such summary");
}

#[test]
fn refusals_count_under_the_layer_that_refused() {
    // A limiter with one permit and no queue in front of a 50 ms dependency, arrivals every
    // 20 ms from 5 ms: as with the pool above, two of every three are refused (429).
    let r = run_text(&format!(
        r#"Scenario(
    name: "limit",
    horizon: "2s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Scripted(times: [{}]), deadline: "1s")],
    dependency: (latency: Constant("50ms")),
    policies: [(name: "p", stack: [(policy: Limiter((permits: 1)))])],
)"#,
        times(5, 20, 99)
    ));
    let c = &r.classes[0];
    assert_eq!(c.in_time, 33);
    assert_eq!(c.outcomes.rejected, 66);
    assert_eq!(c.causes.limiter_refused, 66);
    assert_eq!(c.causes.total(), 66);
    let q = r.limiter_queue.as_ref().expect("a limiter's queue is summarised");
    assert_eq!((q.offered, q.queued, q.wait_probability), (99, 0, 0.0));
}

/// Erlang C: the probability that an arrival waits in M/M/c with offered load `a` erlangs.
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0; // k = 0
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let top = term * a / c as f64 * c as f64 / (c as f64 - a);
    top / (sum + top)
}

#[test]
fn limiter_and_pool_waits_match_erlang_c() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/verify");
    // M/M/4 at 3 erlangs (300/s, mean 10 ms) through a limiter's queue.
    let mut s = load(&dir.join("mmc-limiter.ron")).unwrap();
    s.horizon = Dur::secs(400);
    let r = run_scenario(&s, &dir).remove(0);
    let pw = erlang_c(4, 3.0);
    assert!((pw - 0.5094).abs() < 1e-4, "Erlang C(4, 3) = {pw}");
    let q = r.limiter_queue.expect("limiter queue");
    assert!((q.wait_probability - pw).abs() < 0.03, "P(wait) {} vs Erlang C {pw}", q.wait_probability);
    // A queued arrival waits 1 / (c mu - lambda) = 1 / (400 - 300) s = 10 ms on average.
    assert!((q.wait_ms_mean - 10.0).abs() < 0.6, "mean wait of the queued {} ms vs 10 ms", q.wait_ms_mean);
    // Its wait is exponential: p95 = 10 ms x ln 20 = 29.96 ms.
    assert!((q.wait_ms_p95 - 10.0 * 20f64.ln()).abs() < 2.0, "p95 {}", q.wait_ms_p95);

    // The same queue in the pool: four connections, a one-hour acquire timeout.
    let mut s = load(&dir.join("mmc-limiter.ron")).unwrap();
    s.horizon = Dur::secs(400);
    s.policies[0].stack.clear();
    s.fleet.pool.max_connections = 4;
    let r = run_scenario(&s, &dir).remove(0);
    // Lq = C(4, 3) x rho / (1 - rho) with rho = 3/4: 3 C(4, 3) = 1.528 waiting on average.
    let lq = pw * 3.0;
    let w = r.resources.pool_waiting_mean;
    assert!((w - lq).abs() < 0.1 * lq, "mean waiting for a connection {w} vs {lq}");
    let hold = r.resources.pool_hold_ms_mean;
    assert!((hold - 10.0).abs() < 0.2, "mean hold {hold} ms vs the 10 ms mean service");
}

#[test]
fn causes_account_for_every_request_not_in_time_in_every_shipped_scenario() {
    for path in common::ron_files("scenarios") {
        let mut s = load(&path).unwrap_or_else(|e| panic!("{e}"));
        // Ten minutes past warm-up keep every scenario's incidents that matter here cheap.
        s.horizon = Dur(s.horizon.ns().min(s.warmup.ns() + Dur::secs(600).ns()));
        s.phases.retain(|p| p.end.ns() <= s.horizon.ns());
        s.expect.retain(|e| e.phase.as_ref().is_none_or(|n| s.phases.iter().any(|p| &p.name == n)));
        // The decision may name a phase the shortened run no longer has; this test is about outcomes.
        s.decide = None;
        for run in run_scenario(&s, path.parent().unwrap()) {
            for c in &run.classes {
                let at = format!("{} / {} / {}", s.name, run.policy, c.class);
                let closed = c.fallback_answers.map_or(0, |f| f.closed);
                let answers = c.outcomes.ok + c.outcomes.fallback - closed;
                // The causes sum to the requests not in time ...
                assert_eq!(c.causes.total(), c.requests - c.in_time, "{at}");
                assert_eq!(c.causes.late, c.late, "{at}");
                // ... answers split into in time, late and wrong ...
                assert_eq!(answers, c.in_time + c.late + c.causes.wrong_answer, "{at}");
                // ... and the failure causes match the outcome counts of failures.
                let failures =
                    c.outcomes.error + c.outcomes.timeout + c.outcomes.rejected + c.outcomes.short_circuited + closed;
                // (A request still out at the horizon past its deadline has no outcome.)
                let ended = c.causes.total() - c.late - c.causes.wrong_answer - c.causes.unfinished;
                assert_eq!(ended, failures, "{at}");
                assert!(c.causes.wrong_answer <= c.stale_wrong, "{at}");
            }
        }
    }
}
