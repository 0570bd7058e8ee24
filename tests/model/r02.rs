//! The R02 table, reproduced. Every expected figure below is the seed document's
//! (`shared/seeds/002_*.txt`), not brownout's output: a 750 ms delay seen as 755 ms; 503
//! straight through; three dependency calls per request under retry; a 504 at 269 ms for a
//! 250 ms timeout; three 503s opening a one-second break; two of six callers through a
//! two-permit limiter and four 429s.

use std::path::Path;

use brownout::metrics::summary::{ClassSummary, RunSummary, ScenarioSummary};
use brownout::model::{Model, RunOptions};
use brownout::runner::run_all;
use brownout::scenario::load;

fn run(file: &str) -> ScenarioSummary {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(file);
    let s = load(&path).unwrap_or_else(|e| panic!("{e}"));
    let model = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    run_all(&model, RunOptions::default(), false).expect("runs").summary
}

fn policy<'a>(s: &'a ScenarioSummary, name: &str) -> &'a RunSummary {
    s.runs.iter().find(|r| r.policy == name).unwrap_or_else(|| panic!("no policy {name}"))
}

fn class<'a>(r: &'a RunSummary, name: &str) -> &'a ClassSummary {
    r.classes.iter().find(|c| c.class == name).unwrap()
}

#[test]
fn baseline_adds_five_ms_and_passes_503_through() {
    let s = run("r02-baseline.ron");
    let api = class(policy(&s, "direct"), "api");
    // Healthy (0 ms + 5 ms), slow (750 ms + 5 ms), unavailable (503 after 5 ms).
    assert_eq!(api.outcomes.ok, 2);
    assert_eq!(api.outcomes.error, 1);
    assert_eq!(api.latency_ms.max, 755.0);
    assert_eq!(policy(&s, "direct").dependency.calls, 3, "direct forwarding: one call per request");
}

#[test]
fn retry_makes_three_calls_and_still_fails() {
    let s = run("r02-retry.ron");
    let r = policy(&s, "retry");
    assert_eq!(r.dependency.calls, 3);
    assert_eq!(r.amplification, 3.0);
    assert_eq!(class(r, "api").outcomes.error, 1);
    assert_eq!(class(r, "api").outcomes.ok, 0);
}

#[test]
fn timeout_answers_504_at_269_ms() {
    let s = run("r02-timeout.ron");
    assert_eq!(class(policy(&s, "direct"), "api").latency_ms.max, 755.0);
    let t = class(policy(&s, "timeout"), "api");
    assert_eq!(t.outcomes.timeout, 1);
    assert_eq!(t.latency_ms.max, 269.0);
}

#[test]
fn breaker_opens_after_three_503s_short_circuits_then_recovers() {
    let s = run("r02-breaker.ron");
    let r = policy(&s, "breaker");
    let api = class(r, "api");
    assert_eq!(api.outcomes.error, 3, "the three consecutive 503s");
    assert_eq!(api.outcomes.short_circuited, 1, "the request inside the one-second window");
    assert_eq!(api.outcomes.ok, 1, "the first request after recovery and the window");
    assert_eq!(r.dependency.calls, 4, "the short-circuited request made no call");
    // closed -> open -> half-open -> closed.
    assert_eq!(r.breaker.as_ref().unwrap().transitions, 3);
}

#[test]
fn two_permits_let_two_of_six_through_and_reject_four() {
    let s = run("r02-limit.ron");
    let d = policy(&s, "direct");
    assert_eq!(d.dependency.calls, 6);
    assert_eq!(d.dependency.peak_in_flight, 6);
    assert_eq!(class(d, "api").outcomes.ok, 6);
    let l = policy(&s, "limit-2");
    assert_eq!(l.dependency.calls, 2);
    assert_eq!(l.dependency.peak_in_flight, 2);
    assert_eq!(class(l, "api").outcomes.ok, 2);
    assert_eq!(class(l, "api").outcomes.rejected, 4);
}
