//! Golden trajectories from the real libraries (issue 30 item 13): step-by-step runs of
//! resilience4j 2.4.0's `CircuitBreakerStateMachine` and of Netflix concurrency-limits'
//! `AIMDLimit`, `VegasLimit` and `Gradient2Limit` behind a `SimpleLimiter`, recorded once by
//! the drivers in `tests/golden_drivers/` (see its README for the library commits and the
//! command lines) into `tests/data/trajectories/*.json`, and replayed here against brownout's
//! presets. Maven Central is out of reach in CI, so the libraries do not run here; their
//! answers do.
//!
//! A case is a config and a seed. The traffic (arrivals, call durations, outcomes) is drawn
//! by the same SplitMix64 generator in the driver and in [`Traffic`], step by step; each step
//! either asks for admission or finishes the earliest call in flight. After every step the
//! library's answer (admitted or not) and its state (limit, or breaker state) are folded into
//! a hash, and every `chunk` steps the file holds that hash and the state at the chunk's end.
//! brownout must produce the same hashes exactly: a mismatch names the case and the chunk, and
//! `java ... NetflixDriver --trace <set> <seed>` (or `R4jDriver --trace`) prints the
//! library's steps to compare with the trace this test prints.

use brownout::engine::Time;
use brownout::policy::breaker::resilience4j::{
    IntervalFunction, Resilience4jConfig, SlidingWindowType, StateAfterWait,
};
use brownout::policy::limiter::aimd::AimdConfig;
use brownout::policy::limiter::fixed::RefuseAs;
use brownout::policy::limiter::gradient2::Gradient2Config;
use brownout::policy::limiter::vegas::VegasConfig;
use brownout::policy::{Admission, Attempt, BreakerState, BuildCtx, CallOutcome, Completed, Policy, PolicySpec};
use brownout::scenario::Dur;
use serde_json::Value;

/// SplitMix64, as `NetflixDriver.Rng` and `R4jDriver.Rng`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, n) (Java's `Long.remainderUnsigned`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// FNV-style word hash, as the drivers' `mix`.
const FNV: u64 = 0xcbf2_9ce4_8422_2325;
fn mix(h: u64, v: u64) -> u64 {
    (h ^ v).wrapping_mul(0x100_0000_01b3)
}

/// Seed offset of a case's traffic stream (the drivers' `TRAFFIC`).
const TRAFFIC: u64 = 0x5452_4146_4649_4321;
/// Duration multiplier of each latency regime, in percent (the drivers' `REGIME`).
const REGIME: [u64; 4] = [100, 100, 150, 400];

/// A call in flight.
struct Pending {
    id: u64,
    start: Time,
    end: Time,
    /// Limiters: the call is dropped. Breakers: the call fails.
    bad: bool,
    /// Breakers: the permission is released instead of an outcome.
    release: bool,
}

/// One step of the replay.
enum Step {
    /// Ask admission for `id` at `now`.
    Ask { now: Time, id: u64 },
    /// Call `p` finishes at `p.end`.
    Finish(Pending),
}

/// The drivers' traffic: arrivals with gaps uniform in [1, 2*gap] times `agrain` ns, durations
/// `base * REGIME[regime] / 100 + U[0, base * spread_pct / 100] + 1` times `grain` ns (grains
/// of 1 ms put durations and thresholds on one grid, so that they meet; the regime switches with
/// probability `switch_pm` per mille at each arrival), a bad outcome with probability `bad_pm`
/// per mille and, for breakers, a released permission with probability `release_pm` per mille.
struct Traffic {
    rng: Rng,
    gap: u64,
    base: u64,
    spread_pct: u64,
    switch_pm: u64,
    bad_pm: u64,
    release_pm: Option<u64>,
    grain: u64,
    agrain: u64,
    regime: usize,
    next_arrival: Time,
    next_id: u64,
    pending: Vec<Pending>,
}

impl Traffic {
    fn new(seed: u64, spec: &Value, bad_key: &str, release_pm: Option<u64>) -> Self {
        let g = |k: &str| spec[k].as_u64().unwrap_or_else(|| panic!("gen.{k}"));
        Traffic {
            rng: Rng(seed ^ TRAFFIC),
            gap: g("gap"),
            base: g("base"),
            spread_pct: g("spread_pct"),
            switch_pm: g("switch_pm"),
            bad_pm: g(bad_key),
            release_pm,
            grain: spec["grain"].as_u64().unwrap_or(1),
            agrain: spec["agrain"].as_u64().unwrap_or(1),
            regime: 0,
            next_arrival: 0,
            next_id: 0,
            pending: Vec::new(),
        }
    }

    /// The next step: the earliest call in flight if it ends no later than the next arrival
    /// (ties between calls: the lowest id), else the next arrival, whose draws are taken now.
    fn step(&mut self) -> (Step, Option<Pending>) {
        let first = (0..self.pending.len()).min_by_key(|&i| (self.pending[i].end, self.pending[i].id));
        if let Some(i) = first.filter(|&i| self.pending[i].end <= self.next_arrival) {
            return (Step::Finish(self.pending.remove(i)), None);
        }
        let now = self.next_arrival;
        let id = self.next_id;
        self.next_id += 1;
        let r = &mut self.rng;
        if r.below(1000) < self.switch_pm {
            self.regime = r.below(REGIME.len() as u64) as usize;
        }
        let dur =
            (self.base * REGIME[self.regime] / 100 + r.below(self.base * self.spread_pct / 100 + 1) + 1) * self.grain;
        let bad = r.below(1000) < self.bad_pm;
        let release = self.release_pm.is_some_and(|pm| r.below(1000) < pm);
        self.next_arrival = now + (1 + r.below(2 * self.gap)) * self.agrain;
        (Step::Ask { now, id }, Some(Pending { id, start: now, end: now + dur, bad, release }))
    }
}

/// A case's expected chunks: (state at the chunk's end, hash's high 32 bits).
fn chunks(case: &Value) -> Vec<(i64, u64)> {
    case["chunks"]
        .as_array()
        .expect("chunks")
        .iter()
        .map(|c| {
            let hash = u64::from_str_radix(c[1].as_str().expect("hash"), 16).expect("hex hash");
            (c[0].as_i64().expect("state"), hash)
        })
        .collect()
}

/// What a replay saw, for the coverage checks.
#[derive(Default, Debug)]
struct Seen {
    refused: u64,
    rises: u64,
    falls: u64,
    /// Breakers: transitions (from, to) by state code.
    transitions: std::collections::BTreeSet<(i64, i64)>,
}

/// Replays `case` through `policy`; `state` reads the figure the library reported after each
/// step, `finish` feeds a finished call. Returns the first mismatch as text (with a trace of
/// the chunk) or what was seen.
fn replay(
    set: &str,
    case: &Value,
    mut policy: Box<dyn Policy>,
    mut traffic: Traffic,
    state: impl Fn(&dyn Policy) -> i64,
    finish: impl Fn(&mut dyn Policy, &Pending),
    chunk: usize,
) -> Result<Seen, String> {
    let steps = case["gen"]["steps"].as_u64().expect("gen.steps") as usize;
    let want = chunks(case);
    let mut seen = Seen::default();
    let mut h = FNV;
    let mut trace = Vec::new();
    let mut last = state(&*policy);
    for step in 0..steps {
        let (s, new) = traffic.step();
        // Timers due by the step's time fire first (the drivers run the library's scheduled
        // tasks due at or before it).
        let t = match &s {
            Step::Ask { now, .. } => *now,
            Step::Finish(p) => p.end,
        };
        for _ in 0..8 {
            match policy.status().wake_at {
                Some(w) if w <= t => policy.on_wakeup(w),
                _ => break,
            }
        }
        let admitted = match s {
            Step::Ask { now, id } => {
                let yes = policy.admit(&Attempt::new(now, 0, id)) == Admission::Admit;
                trace.push(format!("{step} t={now} acquire id={id} -> {}", if yes { "admitted" } else { "refused" }));
                if yes {
                    traffic.pending.push(new.expect("an arrival"));
                } else {
                    seen.refused += 1;
                }
                u64::from(yes)
            }
            Step::Finish(p) => {
                finish(&mut *policy, &p);
                trace.push(format!("{step} t={} finish id={} bad={} release={}", p.end, p.id, p.bad, p.release));
                2
            }
        };
        let now = state(&*policy);
        trace.last_mut().expect("a line").push_str(&format!(" state={now}"));
        match now.cmp(&last) {
            std::cmp::Ordering::Greater => seen.rises += 1,
            std::cmp::Ordering::Less => seen.falls += 1,
            std::cmp::Ordering::Equal => {}
        }
        if now != last {
            seen.transitions.insert((last, now));
        }
        last = now;
        h = mix(mix(h, admitted), now as u64);
        if (step + 1) % chunk == 0 || step + 1 == steps {
            let k = step / chunk;
            let got = (now, h >> 32);
            if got != want[k] {
                return Err(format!(
                    "{set} seed {}: chunk {k} (steps {}..={step}) ends with state {} hash {:08x}, the library {} {:08x}\n{}",
                    case["seed"],
                    k * chunk,
                    got.0,
                    got.1,
                    want[k].0,
                    want[k].1,
                    trace.join("\n")
                ));
            }
            h = FNV;
            trace.clear();
        }
    }
    Ok(seen)
}

/// The data file `name` and its chunk length.
fn load(name: &str) -> (Value, usize) {
    let path = format!("{}/tests/data/trajectories/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let data: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let chunk = data["chunk"].as_u64().expect("chunk") as usize;
    (data, chunk)
}

/// The cases of `set`: each `[seed, [config values], [traffic values], [[state, hash], ...]]`
/// in the file, with the set's `config_keys` and `gen_keys` naming the values, turned into
/// `{seed, config: {..}, gen: {..}, chunks}`.
fn cases(data: &Value, set: &str) -> Vec<Value> {
    let named = |keys: &Value, values: &Value| -> Value {
        let keys = keys.as_array().expect("keys");
        let values = values.as_array().expect("values");
        assert_eq!(keys.len(), values.len(), "{set}: keys and values");
        Value::Object(keys.iter().map(|k| k.as_str().expect("key").to_string()).zip(values.iter().cloned()).collect())
    };
    let s = &data[set];
    s["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("set {set}"))
        .iter()
        .map(|c| {
            serde_json::json!({
                "seed": c[0],
                "config": named(&s["config_keys"], &c[1]),
                "gen": named(&s["gen_keys"], &c[2]),
                "chunks": c[3],
            })
        })
        .collect()
}

fn u32_of(v: &Value, k: &str) -> u32 {
    v[k].as_u64().unwrap_or_else(|| panic!("config.{k}")) as u32
}
fn f64_of(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("config.{k}"))
}

// ---------------------------------------------------------------------------------------
// Netflix concurrency-limits

/// Builds brownout's limiter for a case of `set`, with the gate refusing at once
/// (`SimpleLimiter` has no queue).
fn limiter(set: &str, c: &Value) -> Box<dyn Policy> {
    let spec = match set {
        "aimd" => PolicySpec::Aimd(AimdConfig {
            initial_limit: u32_of(c, "initial_limit"),
            min_limit: u32_of(c, "min_limit"),
            max_limit: u32_of(c, "max_limit"),
            backoff_ratio: f64_of(c, "backoff_ratio"),
            timeout: Dur(c["timeout_ns"].as_u64().expect("timeout_ns")),
            queue: 0,
            max_wait: Dur(0),
            refuse_as: RefuseAs::Rejected,
        }),
        "vegas" | "vegas_large" => PolicySpec::Vegas(VegasConfig {
            initial_limit: u32_of(c, "initial_limit"),
            max_concurrency: u32_of(c, "max_concurrency"),
            smoothing: f64_of(c, "smoothing"),
            probe_multiplier: u32_of(c, "probe_multiplier"),
            queue: 0,
            max_wait: Dur(0),
            refuse_as: RefuseAs::Rejected,
        }),
        "gradient2" => PolicySpec::Gradient2(Gradient2Config {
            initial_limit: u32_of(c, "initial_limit"),
            min_limit: u32_of(c, "min_limit"),
            max_concurrency: u32_of(c, "max_concurrency"),
            smoothing: f64_of(c, "smoothing"),
            queue_size: u32_of(c, "queue_size"),
            long_window: u32_of(c, "long_window"),
            rtt_tolerance: f64_of(c, "rtt_tolerance"),
            queue: 0,
            max_wait: Dur(0),
            refuse_as: RefuseAs::Rejected,
        }),
        _ => unreachable!("{set}"),
    };
    spec.validate(&["api"]).unwrap_or_else(|e| panic!("{set} {c}: {e}"));
    spec.build(&BuildCtx::default())
}

/// Replays every case of `set` in `netflix.json`; returns the failures and what was seen.
fn netflix(set: &str) -> (Vec<String>, Seen, usize) {
    let (data, chunk) = load("netflix.json");
    let cases = cases(&data, set);
    let mut failures = Vec::new();
    let mut total = Seen::default();
    for case in &cases {
        let seed = case["seed"].as_u64().expect("seed");
        let traffic = Traffic::new(seed, &case["gen"], "drop_pm", None);
        // The library reports `getLimit()`, an int; brownout's limiters report the same
        // integer as an f64.
        let state = |p: &dyn Policy| p.status().limit.expect("a limiter reports its limit") as i64;
        // `onSuccess` (brownout: a success or an error, both plain samples) or `onDropped`
        // (brownout: a timeout, or a cancellation by an inner layer); each is used for half
        // the calls, by id.
        let finish = |p: &mut dyn Policy, c: &Pending| match (c.bad, c.id.is_multiple_of(2)) {
            (false, true) => p.complete(&Completed::new(c.end, 0, c.id, c.start, CallOutcome::Success)),
            (false, false) => p.complete(&Completed::new(c.end, 0, c.id, c.start, CallOutcome::Error)),
            (true, true) => p.complete(&Completed::new(c.end, 0, c.id, c.start, CallOutcome::Timeout)),
            (true, false) => p.cancel(&Attempt::new(c.end, 0, c.id)),
        };
        match replay(set, case, limiter(set, &case["config"]), traffic, state, finish, chunk) {
            Ok(s) => {
                total.refused += s.refused;
                total.rises += s.rises;
                total.falls += s.falls;
            }
            Err(e) => failures.push(e),
        }
    }
    (failures, total, cases.len())
}

/// Fails with the first mismatching case (and its trace) and how many mismatched; else
/// checks that the set exercised refusals, rises and falls of the limit.
fn assert_netflix(set: &str, min_cases: usize) {
    let (failures, seen, n) = netflix(set);
    assert_all_match(set, &failures, n, min_cases);
    assert!(seen.refused > 0 && seen.rises > 0 && seen.falls > 0, "{set}: the cases exercise too little: {seen:?}");
}

fn assert_all_match(set: &str, failures: &[String], n: usize, min_cases: usize) {
    assert!(n >= min_cases, "{set}: only {n} cases");
    if let Some(first) = failures.first() {
        panic!("{} of {n} {set} cases differ from the library; the first:\n{first}", failures.len());
    }
}

#[test]
fn netflix_aimd_matches_the_library() {
    assert_netflix("aimd", 200);
}

#[test]
fn netflix_vegas_matches_the_library() {
    assert_netflix("vegas", 200);
}

/// Limits of 1000 and more, where Netflix's `Log10RootIntFunction` steps by `(int) log10`.
#[test]
fn netflix_vegas_at_limits_of_a_thousand_and_more_matches_the_library() {
    assert_netflix("vegas_large", 30);
}

#[test]
fn netflix_gradient2_matches_the_library() {
    assert_netflix("gradient2", 200);
}

// ---------------------------------------------------------------------------------------
// resilience4j CircuitBreaker

/// brownout's resilience4j preset for a case: thresholds in tenths of a percent computed as
/// the driver does (`k / 10f`), durations in ns, 0 = the field left at the library's default.
fn breaker(window: SlidingWindowType, c: &Value) -> Box<dyn Policy> {
    let ns = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("config.{k}"));
    let tenths = |k: &str| ns(k) as f32 / 10.0f32;
    let backoff = (ns("backoff_initial_ns") > 0).then(|| IntervalFunction::ExponentialBackoff {
        initial_interval: Dur(ns("backoff_initial_ns")),
        multiplier: f64_of(c, "backoff_multiplier"),
        max_interval: (ns("backoff_max_ns") > 0).then(|| Dur(ns("backoff_max_ns"))),
    });
    let defaults = Resilience4jConfig::default();
    let cfg = Resilience4jConfig {
        failure_rate_threshold: tenths("failure_rate_tenths"),
        slow_call_rate_threshold: tenths("slow_call_rate_tenths"),
        slow_call_duration_threshold: Dur(ns("slow_call_duration_threshold_ns")),
        wait_duration_in_open_state: match ns("wait_duration_in_open_state_ns") {
            0 => defaults.wait_duration_in_open_state,
            w => Dur(w),
        },
        wait_interval_function_in_open_state: backoff,
        permitted_number_of_calls_in_half_open_state: u32_of(c, "permitted_number_of_calls_in_half_open_state"),
        minimum_number_of_calls: u32_of(c, "minimum_number_of_calls"),
        sliding_window_size: u32_of(c, "sliding_window_size"),
        sliding_window_type: window,
        max_wait_duration_in_half_open_state: Dur(ns("max_wait_in_half_open_ns")),
        transition_to_state_after_wait_duration: if ns("after_wait_closed") == 1 {
            StateAfterWait::Closed
        } else {
            StateAfterWait::Open
        },
        automatic_transition_from_open_to_half_open_enabled: ns("automatic_transition") == 1,
        ..defaults
    };
    let spec = PolicySpec::Resilience4j(cfg);
    spec.validate(&["api"]).unwrap_or_else(|e| panic!("{c}: {e}"));
    spec.build(&BuildCtx::default())
}

/// The drivers' state codes.
fn state_code(p: &dyn Policy) -> i64 {
    match p.status().breaker.expect("a breaker reports its state") {
        BreakerState::Closed => 0,
        BreakerState::Open => 1,
        BreakerState::HalfOpen => 2,
    }
}

fn assert_r4j(set: &str, window: SlidingWindowType, min_cases: usize) {
    let (data, chunk) = load("resilience4j.json");
    let cases = cases(&data, set);
    let mut failures = Vec::new();
    let mut seen = Seen::default();
    for case in &cases {
        let seed = case["seed"].as_u64().expect("seed");
        let release_pm = case["gen"]["release_pm"].as_u64().expect("gen.release_pm");
        let traffic = Traffic::new(seed, &case["gen"], "fail_pm", Some(release_pm));
        // `releasePermission` is brownout's cancel; `onError` an error or a timeout (half
        // the calls each, by id); `onSuccess` a success.
        let finish = |p: &mut dyn Policy, c: &Pending| match (c.release, c.bad, c.id.is_multiple_of(2)) {
            (true, _, _) => p.cancel(&Attempt::new(c.end, 0, c.id)),
            (false, true, true) => p.complete(&Completed::new(c.end, 0, c.id, c.start, CallOutcome::Error)),
            (false, true, false) => p.complete(&Completed::new(c.end, 0, c.id, c.start, CallOutcome::Timeout)),
            (false, false, _) => p.complete(&Completed::new(c.end, 0, c.id, c.start, CallOutcome::Success)),
        };
        match replay(set, case, breaker(window, &case["config"]), traffic, state_code, finish, chunk) {
            Ok(s) => {
                seen.refused += s.refused;
                seen.transitions.extend(s.transitions);
            }
            Err(e) => failures.push(e),
        }
    }
    assert_all_match(set, &failures, cases.len(), min_cases);
    // CLOSED -> OPEN -> HALF_OPEN -> CLOSED and HALF_OPEN -> OPEN all happened.
    for t in [(0, 1), (1, 2), (2, 0), (2, 1)] {
        assert!(seen.transitions.contains(&t), "{set}: no transition {t:?} in {seen:?}");
    }
    assert!(seen.refused > 0, "{set}: nothing refused");
}

#[test]
fn resilience4j_count_based_matches_the_library() {
    assert_r4j("count_based", SlidingWindowType::CountBased, 200);
}

#[test]
fn resilience4j_time_based_matches_the_library() {
    assert_r4j("time_based", SlidingWindowType::TimeBased, 200);
}
