//! End-to-end benchmarks: the three reference models of /work/shared/bench (M/M/c, timeout
//! race, timeout race behind a bulkhead) and a grocery-like multi-class scenario, each run
//! through the library exactly as `brownout run` does, on a shortened horizon (60 s of
//! simulated time, ~54,000 requests) so that criterion can take several samples.
//! Throughput is in requests; logical events (arrival + outcome) are twice that.

use std::path::Path;

use brownout::model::{Model, RunOptions, run_policy};
use brownout::scenario::{self, Dur};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn model(file: &str, horizon_s: u64) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bench").join(file);
    let mut s = scenario::load(&path).expect("bench scenario loads");
    s.horizon = Dur::secs(horizon_s);
    Model::build(&s, s.seed, path.parent().expect("has a folder")).expect("bench scenario builds")
}

fn models(c: &mut Criterion) {
    let mut g = c.benchmark_group("models");
    g.sample_size(10);
    for file in ["mmc.ron", "timeout-race.ron", "timeout-race-bulkhead.ron", "grocery.ron"] {
        let m = model(file, 60);
        let requests = run_policy(&m, 0, RunOptions::default()).expect("bench run").requests;
        g.throughput(Throughput::Elements(requests));
        g.bench_function(file.trim_end_matches(".ron"), |b| {
            b.iter(|| run_policy(&m, 0, RunOptions::default()).expect("bench run").summary.events)
        });
    }
    g.finish();
}

criterion_group!(benches, models);
criterion_main!(benches);
