//! Differential tests: brownout's presets against the real libraries, step for step.
//!
//! Each test draws random call sequences from a seeded counter-based PRNG, drives the
//! brownout policy through its `Policy` API the way the world does (`World` below: timers
//! in (time, insertion) order, wake-ups asked for through `Status::wake_at`), records the
//! policy's answer and state after every step, then feeds the same steps to the library
//! through a driver in `tests/differential/` (opossum from npm with fake timers, pybreaker
//! from PyPI with a fake clock) and compares. On a mismatch it prints the shortest failing
//! prefix: the configuration on both sides and the steps up to the first differing one.
//!
//! The libraries are installed by `.ci/run` (`npm ci` in `tests/differential/`, pybreaker in
//! a virtualenv named by `BROWNOUT_PYTHON`). The tests that need them are `#[ignore]`d with
//! the reason, so `cargo test` lists them as ignored, never as passed; `.ci/run` runs them with
//! `--ignored`, where a missing library fails.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use brownout::engine::counter_u64;
use brownout::engine::{MICROSECOND, MILLISECOND, Time};
use brownout::policy::{
    Admission, Attempt, BreakerState, BuildCtx, CallOutcome, Completed, Policy, PolicySpec, Refusal,
};
use serde_json::{Value, json};

const SEED: u64 = 19;
const CASES: u64 = 300;

// ---- the world, as the policies see it -------------------------------------------------

enum Ev {
    /// The attempt's own timeout (`Policy::attempt_timeout`).
    Timeout(u64),
    /// The wake-up the policy asked for, valid while its generation is current.
    Wake(u64),
}

/// A policy driven as `model::world` drives a layer: one class, attempts that start at once.
struct World {
    p: Box<dyn Policy>,
    now: Time,
    seq: u64,
    events: BTreeMap<(Time, u64), Ev>,
    wake: Option<Time>,
    wake_generation: u64,
    in_flight: BTreeMap<u64, Time>,
}

impl World {
    fn new(ron_spec: &str) -> Self {
        let spec: PolicySpec = ron::from_str(ron_spec).unwrap_or_else(|e| panic!("{ron_spec}: {e}"));
        spec.validate(&["api"]).unwrap_or_else(|e| panic!("{ron_spec}: {e}"));
        let p = spec.build(&BuildCtx::new(vec!["api".into()]));
        let mut w = Self {
            p,
            now: 0,
            seq: 0,
            events: BTreeMap::new(),
            wake: None,
            wake_generation: 0,
            in_flight: BTreeMap::new(),
        };
        w.note();
        w
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        self.events.insert((t, self.seq), ev);
    }

    /// After each interaction: a new wake-up wish replaces the old one.
    fn note(&mut self) {
        let w = self.p.status().wake_at;
        if w != self.wake {
            self.wake = w;
            self.wake_generation += 1;
            if let Some(t) = w {
                self.push(t.max(self.now), Ev::Wake(self.wake_generation));
            }
        }
    }

    /// Let time run to `to`, firing the timers due on the way.
    fn advance(&mut self, to: Time) {
        while let Some((&(t, s), _)) = self.events.first_key_value()
            && t <= to
        {
            let ev = self.events.remove(&(t, s)).expect("just seen");
            self.now = t;
            match ev {
                Ev::Timeout(id) => {
                    if let Some(start) = self.in_flight.remove(&id) {
                        self.p.complete(&Completed::new(t, 0, id, start, CallOutcome::Timeout));
                    }
                }
                Ev::Wake(g) if g == self.wake_generation => {
                    self.wake = None;
                    self.p.on_wakeup(t);
                }
                Ev::Wake(_) => {}
            }
            self.note();
        }
        self.now = to;
    }

    fn admit(&mut self, id: u64) -> Admission {
        let a = self.p.admit(&Attempt::new(self.now, 0, id));
        if a == Admission::Admit {
            self.in_flight.insert(id, self.now);
            if let Some((timeout, _)) = self.p.attempt_timeout(0) {
                self.push(self.now.saturating_add(timeout), Ev::Timeout(id));
            }
        }
        self.note();
        a
    }

    /// Attempt `id` ends now with `outcome`, if it is still out.
    fn finish(&mut self, id: u64, outcome: CallOutcome) {
        if let Some(start) = self.in_flight.remove(&id) {
            self.p.complete(&Completed::new(self.now, 0, id, start, outcome));
        }
        self.note();
    }

    fn state(&self) -> &'static str {
        match self.p.status().breaker.expect("a breaker") {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half-open",
        }
    }
}

// ---- drivers -----------------------------------------------------------------------------

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/differential")
}

/// A library that is not installed. The tests that need one are `#[ignore]`d, so a machine
/// without it lists them as ignored with the reason; asked for with `--ignored` (as `.ci/run`
/// does after installing the libraries), a missing library is a failure, never a pass.
fn missing(what: &str) {
    panic!("{what} (.ci/run installs it: see tests/differential/)");
}

/// Run `program args` with the cases as JSON on stdin; one JSON array per case comes back.
fn drive(program: &str, args: &[&str], cases: &[Value]) -> Vec<Vec<Value>> {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let input = serde_json::to_vec(cases).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{program} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Vec<Value>> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), cases.len(), "one line per case");
    lines
}

/// One generated case: the config on both sides, the steps, and brownout's answers.
struct Case {
    ron: String,
    options: Value,
    steps: Vec<Value>,
    ours: Vec<Value>,
}

/// Compare step for step; on a mismatch print the shortest failing prefix.
fn compare(lib: &str, cases: &[Case], theirs: &[Vec<Value>]) {
    for (k, (c, t)) in cases.iter().zip(theirs).enumerate() {
        if let Some(i) = (0..c.steps.len()).find(|&i| c.ours[i] != t[i]) {
            let prefix: Vec<String> =
                (0..=i).map(|j| format!("  {:>3} {}  brownout {}  {lib} {}", j, c.steps[j], c.ours[j], t[j])).collect();
            panic!(
                "case {k} differs from {lib} at step {i}\nbrownout: {}\n{lib} options: {}\nsteps (shortest failing prefix):\n{}",
                c.ron,
                c.options,
                prefix.join("\n")
            );
        }
    }
}

/// Counter-based draws for case `case`.
struct Draws {
    case: u64,
    n: u64,
}

impl Draws {
    fn below(&mut self, k: u64) -> u64 {
        self.n += 1;
        counter_u64(SEED, 0, self.case, self.n) % k
    }
}

// ---- opossum -----------------------------------------------------------------------------

/// A random opossum case. Cases from `CASES` on are tie cases: a 1 s window of 10 buckets
/// (a rotation every 100 ms), a 50 or 150 ms timeout (shorter or longer than a bucket) and
/// time moving in steps of 50 ms, so timeouts often fall due at a rotation (issue 30 item
/// 11: opossum runs the timer set first).
fn opossum_case(case: u64) -> Case {
    let mut d = Draws { case, n: 0 };
    let tie = case >= CASES;
    let timeout = if tie {
        [50, 150][d.below(2) as usize]
    } else if d.below(3) == 0 {
        0
    } else {
        50 + d.below(450)
    };
    let pct = [0.0, 25.0, 33.3, 50.0, 66.7, 90.0][d.below(6) as usize];
    let reset = 50 + d.below(950);
    let window = if tie { 1000 } else { 500 + d.below(2500) };
    let buckets = if tie { 10 } else { 1 + d.below(10) };
    let volume = d.below(6);
    // None: unbounded; Some(0): every call refused (opossum's Semaphore(0)).
    let capacity = if d.below(2) == 0 { None } else { Some(d.below(5)) };
    let warm = d.below(4) == 0;
    let ron_capacity = capacity.map_or(String::new(), |c| format!("capacity: Some({c}), "));
    let ron = format!(
        "Opossum((timeout: \"{timeout}ms\", error_threshold_percentage: {pct:?}, reset_timeout: \"{reset}ms\", \
         rolling_count_timeout: \"{window}ms\", rolling_count_buckets: {buckets}, volume_threshold: {volume}, \
         {ron_capacity}allow_warm_up: {warm}))"
    );
    let mut options = json!({
        "timeout": if timeout == 0 { json!(false) } else { json!(timeout) },
        "errorThresholdPercentage": pct, "resetTimeout": reset, "rollingCountTimeout": window,
        "rollingCountBuckets": buckets, "volumeThreshold": volume, "allowWarmUp": warm,
    });
    match capacity {
        Some(c) => options["capacity"] = json!(c),
        // Not an integer: opossum ignores it (Number.isInteger), unbounded as when unset.
        None if d.below(2) == 0 => options["capacity"] = json!(2.5),
        None => {}
    }
    let mut w = World::new(&ron);
    let (mut steps, mut ours, mut next) = (Vec::new(), Vec::new(), 0u64);
    for _ in 0..80 {
        let r = d.below(10);
        let (step, answer) = if r < 4 {
            let ms = if tie {
                50 * (1 + d.below(4))
            } else if d.below(10) == 0 {
                d.below(3000)
            } else {
                d.below(400)
            };
            w.advance(w.now + ms * MILLISECOND);
            (json!({"op": "advance", "ms": ms}), Value::Null)
        } else if r < 7 || w.in_flight.is_empty() {
            next += 1;
            let a = match w.admit(next) {
                Admission::Admit => "admitted",
                Admission::Refuse(Refusal::ShortCircuited) => "open",
                Admission::Refuse(Refusal::Rejected) => "locked",
                other => panic!("opossum answered {other:?}"),
            };
            (json!({"op": "fire", "id": next}), json!(a))
        } else {
            let ids: Vec<u64> = w.in_flight.keys().copied().collect();
            let id = ids[d.below(ids.len() as u64) as usize];
            let fail = d.below(2) == 0;
            w.finish(id, if fail { CallOutcome::Error } else { CallOutcome::Success });
            (json!({"op": if fail { "fail" } else { "succeed" }, "id": id}), Value::Null)
        };
        steps.push(step);
        ours.push(json!({"answer": answer, "state": w.state()}));
    }
    Case { ron, options, steps, ours }
}

#[test]
#[ignore = "needs node and opossum from npm (tests/differential/); .ci/run installs them and runs this with --ignored"]
fn opossum_matches_the_npm_package_step_for_step() {
    if Command::new("node").arg("--version").output().is_err() {
        return missing("node is not installed");
    }
    if !root().join("node_modules/opossum/package.json").exists() {
        return missing("opossum is not installed in tests/differential (npm ci there)");
    }
    let cases: Vec<Case> = (0..2 * CASES).map(opossum_case).collect();
    let input: Vec<Value> = cases.iter().map(|c| json!({"options": c.options, "steps": c.steps})).collect();
    let theirs = drive("node", &["opossum_driver.js"], &input);
    compare("opossum", &cases, &theirs);
}

// ---- pybreaker ---------------------------------------------------------------------------

fn pybreaker_case(case: u64) -> Case {
    let mut d = Draws { case, n: 0 };
    let fail_max = 1 + d.below(5);
    let reset_ms = 10 + d.below(990);
    let success_threshold = 1 + d.below(3);
    let exclude: &[&str] = [&[][..], &["Error"], &["Timeout"], &["Error", "Timeout"]][d.below(4) as usize];
    let ron = format!(
        "ConsecutiveBreaker((failures: {fail_max}, break_duration: \"{reset_ms}ms\", \
         success_threshold: {success_threshold}, exclude: [{}]))",
        exclude.join(", ")
    );
    let options = json!({"fail_max": fail_max, "reset_timeout_ms": reset_ms,
        "success_threshold": success_threshold, "exclude": exclude});
    let mut w = World::new(&ron);
    let (mut steps, mut ours) = (Vec::new(), Vec::new());
    for id in 0..60u64 {
        let (step, ran) = if d.below(3) == 0 {
            let us = d.below(600_000);
            w.advance(w.now + us * MICROSECOND);
            (json!({"op": "advance", "us": us}), Value::Null)
        } else {
            let us = d.below(50_000);
            let (outcome, name) = match d.below(5) {
                0 | 1 => (CallOutcome::Success, "success"),
                2 | 3 => (CallOutcome::Error, "error"),
                _ => (CallOutcome::Timeout, "timeout"),
            };
            // pybreaker's call holds the breaker for the call's whole duration.
            let ran = w.admit(id) == Admission::Admit;
            if ran {
                w.advance(w.now + us * MICROSECOND);
                w.finish(id, outcome);
            }
            (json!({"op": "call", "us": us, "outcome": name}), json!(ran))
        };
        steps.push(step);
        ours.push(json!({"ran": ran, "state": w.state()}));
    }
    Case { ron, options, steps, ours }
}

#[test]
#[ignore = "needs pybreaker from PyPI (tests/differential/); .ci/run installs it and runs this with --ignored"]
fn consecutive_breaker_matches_pybreaker_step_for_step() {
    let python = std::env::var("BROWNOUT_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python).args(["-c", "import pybreaker"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return missing(&format!("{python} cannot import pybreaker (set BROWNOUT_PYTHON to a Python that can)"));
    }
    let cases: Vec<Case> = (0..CASES).map(pybreaker_case).collect();
    let input: Vec<Value> = cases.iter().map(|c| json!({"options": c.options, "steps": c.steps})).collect();
    let theirs = drive(&python, &["pybreaker_driver.py"], &input);
    compare("pybreaker", &cases, &theirs);
}

// ---- resilience4j (no registry serves it here: hand-derived from the 2.4.0 source) ---------

/// `waitIntervalFunctionInOpenState: ofExponentialBackoff(250 ms, 1.5)` as the library
/// iterates it (`x(k+1) = (long) (x(k) * 1.5)`): open 250, 375, 562, 843 ms; a HALF_OPEN max
/// wait of 2.9 ms is 2 ms (`toMillis()`); a call admitted while CLOSED and released in
/// HALF_OPEN returns a permit (`releasePermission()` increments unconditionally).
#[test]
fn resilience4j_steps_as_the_library_source() {
    let ms = MILLISECOND;
    let mut w = World::new(
        "Resilience4j((slidingWindowSize: 1, permittedNumberOfCallsInHalfOpenState: 1, \
         maxWaitDurationInHalfOpenState: \"2900us\", \
         waitIntervalFunctionInOpenState: Some(ExponentialBackoff(initialInterval: \"250ms\", multiplier: 1.5))))",
    );
    assert_eq!(w.admit(100), Admission::Admit); // parked in an inner layer's queue
    assert_eq!(w.admit(1), Admission::Admit);
    w.finish(1, CallOutcome::Error);
    let mut opened = 0;
    for (k, wait) in [250, 375, 562, 843].into_iter().enumerate() {
        let id = 10 + k as u64;
        w.advance(opened + wait * ms);
        assert_eq!(w.admit(id), Admission::Refuse(Refusal::ShortCircuited), "wait {k}: not strictly after {wait} ms");
        w.advance(opened + wait * ms + 1);
        assert_eq!(w.admit(id + 100), Admission::Admit, "wait {k}: {wait} ms");
        assert_eq!(w.state(), "half-open");
        if k == 3 {
            break;
        }
        w.finish(id + 100, CallOutcome::Error);
        opened = w.now;
    }
    // HALF_OPEN since `opened + 843 ms + 1 ns`; its one permit is taken.
    assert_eq!(w.admit(500), Admission::Refuse(Refusal::ShortCircuited));
    w.p.cancel(&Attempt::new(w.now, 0, 100)); // releasePermission for the CLOSED-era call
    assert_eq!(w.admit(501), Admission::Admit, "a second trial, as in the library");
    let half_open_at = w.now;
    assert_eq!(w.p.status().wake_at, Some(half_open_at + 2 * ms), "2.9 ms -> 2 ms");
    w.advance(half_open_at + 2 * ms);
    assert_eq!(w.state(), "open", "the max wait moved it back to OPEN");
}
