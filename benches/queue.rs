//! Hold-model benchmark of the engine's event queue against std's binary heap.
//!
//! Hold model (Vaucher & Duval 1975): fill the queue with N events, then repeat { pop the
//! earliest; push one at its time plus an exponential increment }. The size stays N, so one
//! iteration is the pure future-event-set cost of one event. Increments are drawn up front
//! from a named stream so the timed loop holds no RNG work.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

use brownout::engine::{EventQueue, RadixQueue, Time, stream};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand_distr::{Distribution, Exp};

/// Holds per measured iteration batch.
const HOLDS: u64 = 10_000;

fn increments() -> Vec<Time> {
    let mut rng = stream(1, "bench/hold");
    let exp = Exp::new(1.0 / 100.0).expect("positive rate");
    (0..4096).map(|_| exp.sample(&mut rng) as Time + 1).collect()
}

fn filled_engine(n: usize, inc: &[Time]) -> EventQueue<u64> {
    let mut q = EventQueue::new();
    for i in 0..n {
        q.schedule_at(inc[i % inc.len()] * (1 + i as Time % 7), i as u64);
    }
    q
}

fn filled_radix(n: usize, inc: &[Time]) -> RadixQueue<u64> {
    let mut q = RadixQueue::new();
    for i in 0..n {
        q.schedule_at(inc[i % inc.len()] * (1 + i as Time % 7), i as u64);
    }
    q
}

/// std's max-heap made a min-heap on (time, sequence, payload).
type StdHeap = BinaryHeap<Reverse<(Time, u64, u64)>>;

fn filled_std(n: usize, inc: &[Time]) -> (StdHeap, u64) {
    let mut h = BinaryHeap::new();
    for i in 0..n {
        let t = inc[i % inc.len()] * (1 + i as Time % 7);
        h.push(Reverse((t, i as u64, i as u64)));
    }
    (h, n as u64)
}

fn hold(c: &mut Criterion) {
    let inc = increments();
    let mut g = c.benchmark_group("hold");
    g.throughput(Throughput::Elements(HOLDS));
    for n in [10usize, 1_000, 100_000] {
        g.bench_with_input(BenchmarkId::new("engine", n), &n, |b, &n| {
            let mut q = filled_engine(n, &inc);
            let mut k = 0usize;
            b.iter(|| {
                for _ in 0..HOLDS {
                    let ev = q.pop().expect("never empty");
                    k = (k + 1) & 4095;
                    q.schedule_at(ev.time + inc[k], black_box(ev.event));
                }
            });
        });
        g.bench_with_input(BenchmarkId::new("radix", n), &n, |b, &n| {
            let mut q = filled_radix(n, &inc);
            let mut k = 0usize;
            b.iter(|| {
                for _ in 0..HOLDS {
                    let ev = q.pop().expect("never empty");
                    k = (k + 1) & 4095;
                    q.schedule_at(ev.time + inc[k], black_box(ev.event));
                }
            });
        });
        g.bench_with_input(BenchmarkId::new("std-binary-heap", n), &n, |b, &n| {
            let (mut h, mut seq) = filled_std(n, &inc);
            let mut k = 0usize;
            b.iter(|| {
                for _ in 0..HOLDS {
                    let Reverse((t, _, p)) = h.pop().expect("never empty");
                    k = (k + 1) & 4095;
                    h.push(Reverse((t + inc[k], seq, black_box(p))));
                    seq += 1;
                }
            });
        });
    }
    g.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
