//! The parts of one M/M/c request, each timed alone: what a brownout request costs before
//! any of the world's own logic (worker slots, policy stack, pool, dependency routing).
//!
//! - `engine_mmc`: the hand-written limit's M/M/c loop (`../shared/bench/limit`, `models
//!   mmc`) on brownout's `EventQueue` with the same rand_distr exponential draws from a
//!   Xoshiro256++ stream as brownout's arrivals: the engine's floor for the model.
//! - `latency_draw`: one counter-based latency draw (`DependencyModel::plan`: the SplitMix64
//!   words of the call's key fed straight to rand_distr, no generator seeded), the price of
//!   common random numbers (every policy sees the same latency for the same call).
//! - `recorder`: the ten recorder calls a request makes in `scenarios/bench/mmc.ron`
//!   (arrival, worker and pool gauges up and down, slot and connection waits, dependency
//!   start and end, finish), with the window tick every 10 s of simulated time.
//!
//! Each reports time per request; BENCHMARKS.md adds them up against the full run and the
//! limit. `cargo bench --bench parts -- --warm-up-time 1 --measurement-time 3`

use std::collections::VecDeque;
use std::hint::black_box;
use std::path::Path;

use brownout::engine::{EventQueue, MILLISECOND, SECOND, Time, stream};
use brownout::metrics::Outcome;
use brownout::model::Model;
use brownout::scenario;
use brownout::unstable::recorder::{Finished, OrderEffect, Record, Recorder, RecorderSetup, RecoveryRule};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand_distr::{Distribution, Exp};

/// Requests per measured iteration.
const N: u64 = 100_000;

#[derive(Clone, Copy)]
enum Ev {
    Arrival,
    Departure,
}

/// M/M/c (lambda 900/s, mu 100/s, c 10) for `N` completions; returns the summed wait (ns).
fn engine_mmc(seed: u64) -> u128 {
    let mut rng = stream(seed, "bench/parts");
    let arrive = Exp::new(900.0 / SECOND as f64).expect("positive rate");
    let serve = Exp::new(100.0 / SECOND as f64).expect("positive rate");
    let mut q: EventQueue<Ev> = EventQueue::new();
    let mut waiting: VecDeque<Time> = VecDeque::new();
    let (mut busy, mut done, mut wait) = (0u32, 0u64, 0u128);
    q.schedule_in(arrive.sample(&mut rng) as Time, Ev::Arrival);
    while let Some(s) = q.pop() {
        match s.event {
            Ev::Arrival => {
                q.schedule_in(arrive.sample(&mut rng) as Time, Ev::Arrival);
                if busy < 10 {
                    busy += 1;
                    q.schedule_in(serve.sample(&mut rng) as Time, Ev::Departure);
                } else {
                    waiting.push_back(s.time);
                }
            }
            Ev::Departure => {
                done += 1;
                if done == N {
                    break;
                }
                match waiting.pop_front() {
                    Some(t) => {
                        wait += (s.time - t) as u128;
                        q.schedule_in(serve.sample(&mut rng) as Time, Ev::Departure);
                    }
                    None => busy -= 1,
                }
            }
        }
    }
    wait
}

fn mmc_model() -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bench/mmc.ron");
    let s = scenario::load(&path).expect("bench scenario loads");
    Model::build(&s, s.seed, path.parent().expect("has a folder")).expect("bench scenario builds")
}

/// The recorder calls of `N` M/M/c requests, one after another in simulated time.
fn recorder(m: &Model) -> u64 {
    let s = m.scenario();
    let mut rec = Recorder::new(RecorderSetup {
        policy: "fifo".into(),
        classes: vec!["req".into()],
        deadlines: vec![s.classes[0].deadline.ns()],
        instances: 1,
        slots: s.fleet.workers.slots,
        connections: s.fleet.pool.max_connections,
        warmup: 0,
        horizon: s.horizon.ns(),
        window: s.window.ns(),
        has_breaker: false,
        has_limit: false,
        has_limiter: false,
        has_bulkhead: false,
        costs: (0.0, 0.0, 0.0),
        fallbacks: vec![brownout::metrics::FallbackUse::Catalogue],
        timeseries: true,
        // As a run's whole recorder does: it judges every window for recovery.
        recovery: Some(RecoveryRule {
            tolerance: 0.02,
            hold: 3,
            baseline: 10,
            degraded_below: 0.9,
            first_is_healthy: false,
        }),
    });
    let mut rng = stream(7, "bench/parts/recorder");
    let gap = Exp::new(900.0 / SECOND as f64).expect("positive rate");
    let latency = Exp::new(1.0 / (16 * MILLISECOND) as f64).expect("positive rate");
    let window = s.window.ns();
    let (mut now, mut next_tick) = (0, window);
    for i in 0..N {
        now += gap.sample(&mut rng) as Time;
        while now >= next_tick {
            rec.tick(next_tick);
            next_tick += window;
        }
        let took = latency.sample(&mut rng) as Time;
        let busy = 1 + (i % 16) as u32;
        rec.arrival(now, 0);
        rec.workers(now, 0, busy);
        rec.slot_wait(now, 0, 0);
        rec.pool(now, 0, busy);
        rec.conn_wait(now, 0, 0);
        rec.dep_start(now, busy as u64);
        // The answer comes back `took` later; times passed to a gauge never go backwards here
        // because the next request starts after it (as in a run, up to reordering).
        rec.dep_end(now + took, Some((0, took)), false, busy as u64 - 1);
        rec.pool(now + took, 0, busy - 1);
        rec.workers(now + took, 0, busy - 1);
        rec.finish(Finished {
            now: now + took,
            instance: 0,
            class: 0,
            arrived: now,
            outcome: Outcome::Ok,
            staleness: None,
            cause: None,
            order: OrderEffect::default(),
            dependency_calls: 1,
        });
        now += took;
    }
    rec.summary(now, 2 * N, 0).events
}

fn parts(c: &mut Criterion) {
    let m = mmc_model();
    let mut g = c.benchmark_group("parts");
    g.throughput(Throughput::Elements(N));
    g.bench_function("engine_mmc", |b| b.iter(|| engine_mmc(black_box(42))));
    g.bench_function("latency_draw", |b| {
        b.iter(|| {
            let mut sum = 0;
            for i in 0..N {
                sum += m.dependency().plan(i * MILLISECOND, 0, black_box(i), 1, 1.0).latency();
            }
            sum
        })
    });
    g.bench_function("recorder", |b| b.iter(|| recorder(&m)));
    g.finish();
}

criterion_group!(benches, parts);
criterion_main!(benches);
