//! The benchmark scenarios model what the peer scripts model: on a shortened horizon they
//! reproduce the M/M/c mean wait of Erlang C and the timeout race's hand-computed timeout
//! fraction.

use std::path::Path;

use brownout::metrics::summary::RunSummary;
use brownout::model::{Model, RunOptions, run_policy};
use brownout::scenario::{self, Dur};

fn run(file: &str, horizon_s: u64) -> RunSummary {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/bench").join(file);
    let mut s = scenario::load(&path).expect("bench scenario loads");
    s.horizon = Dur::secs(horizon_s);
    let m = Model::build(&s, s.seed, path.parent().expect("has a folder")).expect("builds");
    run_policy(&m, 0, RunOptions::default()).expect("runs").summary
}

#[test]
fn mmc_mean_wait_matches_erlang_c() {
    // Erlang C for lambda = 900/s, mu = 100/s, c = 10: a = 9, rho = 0.9,
    // P(wait) = (a^c / c! / (1 - rho)) / (sum_{k<c} a^k / k! + a^c / c! / (1 - rho)),
    // Wq = P(wait) / (c mu - lambda).
    let (lam, mu, c) = (900.0_f64, 100.0_f64, 10u32);
    let a = lam / mu;
    let mut term = 1.0;
    let mut below = 0.0;
    for k in 0..c {
        if k > 0 {
            term *= a / k as f64;
        }
        below += term;
    }
    let top = term * a / c as f64 / (1.0 - a / c as f64);
    let wq_ms = top / (below + top) / (c as f64 * mu - lam) * 1000.0;
    assert!((wq_ms - 6.687).abs() < 0.001, "Erlang C worked by hand: {wq_ms}");
    let r = run("mmc.ron", 300);
    let waited = r.classes[0].latency_ms.mean - r.dependency.latency_ms.mean;
    // 270,000 requests at rho = 0.9: waits are strongly correlated, so allow 15 %.
    assert!((waited - wq_ms).abs() < 0.15 * wq_ms, "simulated Wq {waited} ms vs Erlang C {wq_ms} ms");
}

#[test]
fn timeout_race_fraction_matches_the_hand_calculation() {
    // P(exp latency > 25 ms) is e^-2.5 at mean 10 ms (8 s of every 10) and e^-0.5 at 50 ms.
    let expected = 0.8 * (-2.5f64).exp() + 0.2 * (-0.5f64).exp();
    let r = run("timeout-race.ron", 300);
    let o = r.classes[0].outcomes;
    let frac = o.timeout as f64 / o.total() as f64;
    // 270,000 requests: the binomial standard error is under 0.001.
    assert!((frac - expected).abs() < 0.005, "timeout fraction {frac} vs {expected}");
}
