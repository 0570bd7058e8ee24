//! Helpers shared by the integration tests: run a scenario written inline, run the binary,
//! walk a folder of scenarios, drive a policy (`policy`).
// Each area binary (tests/<area>/main.rs) uses a part of these.
#![allow(dead_code)]

pub mod import;
pub mod otlp;
pub mod policy;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use brownout::metrics::summary::{RunSummary, ScenarioSummary};
use brownout::model::{Model, RunOptions};
use brownout::runner::{ScenarioResult, run_all};
use brownout::scenario::{Scenario, load_text};

/// Scenario text written in a test, loaded as `brownout check` loads a file: parsed, imports
/// expanded, validated, its data files read relative to the package root. It is named
/// `inline.ron` in messages; an error fails the test with its line and column.
pub fn scenario(text: &str) -> Scenario {
    load_text(Path::new("inline.ron"), text).unwrap_or_else(|e| panic!("{e}"))
}

/// Every policy set of `s` run once on the scenario's own seed, one after another, with the
/// default options (no time series, no event log), data files read from the package root.
pub fn run(s: &Scenario) -> ScenarioResult {
    let model = Model::build(s, s.seed, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
    run_all(&model, RunOptions::default(), false).unwrap_or_else(|e| panic!("{e}"))
}

/// The summary of every policy set of scenario text ([`scenario`], then [`run`]).
pub fn run_text(text: &str) -> ScenarioSummary {
    run(&scenario(text)).summary
}

/// The first policy set's run of scenario text: for a scenario written with one policy set.
pub fn run_first(text: &str) -> RunSummary {
    run_text(text).runs.remove(0)
}

/// The `brownout` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_brownout");

/// An Erlang loss system (see scenarios/sweep-demo.ron) over `horizon`: Poisson arrivals at
/// 50/s to a dependency with exponential latency (mean 40 ms), through no limit (`direct`) or
/// a limiter of 3 permits without a queue (`limit`).
pub fn erlang_scenario(horizon: &str) -> String {
    format!(
        r#"Scenario(
    name: "erlang", seed: 3, horizon: "{horizon}", warmup: "2s",
    fleet: (workers: (slots: 10000), pool: (max_connections: 10000, acquire_timeout: "60s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 50.0), deadline: "60s")],
    dependency: (latency: Exponential(mean: "40ms")),
    policies: [
        (name: "direct", stack: []),
        (name: "limit", stack: [(policy: Limiter((permits: 3, queue: 0)))]),
    ],
)"#
    )
}

/// docs/graphs.md's worked example: checkout reads inventory (10 ms) and pricing (20 ms) at
/// once, then pays (30 ms), a request every 100 ms with a 1 s deadline, on one instance.
/// `run` is the run's own fields (`horizon: "7s"`), `policies` its policy sets.
pub fn checkout_graph(run: &str, policies: &str) -> String {
    format!(
        r#"Scenario(
    name: "graph", {run},
    fleet: (instances: 1, workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "1s")),
    classes: [(name: "checkout", arrivals: Periodic(rate_per_s: 10.0), deadline: "1s",
        calls: [Parallel(calls: [Call("inventory"), Call("pricing")]), Call("payment")])],
    dependencies: [
        (name: "inventory", latency: Constant("10ms")),
        (name: "pricing", latency: Constant("20ms")),
        (name: "payment", latency: Constant("30ms")),
    ],
    policies: [{policies}],
)"#
    )
}

/// One class at 8/s to a dependency answering in 10 ms, slowed by 300 ms during [2 s, 3 s),
/// over 5 s in 500 ms windows: `direct` waits it out under an 800 ms timeout, `tight` times
/// every call out at 5 ms. `name` names it, `run` adds top-level fields before the fleet
/// (`replications: 2, `), `tail` after the policies (`decide: (..),`).
pub fn slowed_scenario(name: &str, run: &str, tail: &str) -> String {
    format!(
        r#"Scenario(
    name: "{name}", horizon: "5s", window: "500ms", {run}
    fleet: (instances: 1, workers: (slots: 20), pool: (max_connections: 20, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 8.0), deadline: "1s")],
    dependency: (latency: Constant("10ms"), modes: [(at: "2s", mode: Slow("300ms")), (at: "3s", mode: Healthy)]),
    policies: [
        (name: "direct", stack: [(policy: Timeout((timeout: "800ms")))]),
        (name: "tight", stack: [(policy: Timeout((timeout: "5ms")))]),
    ],
    {tail}
)"#
    )
}

/// Run the binary with `args` in `cwd`.
pub fn brownout(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN).args(args).current_dir(cwd).output().unwrap()
}

/// Run the sweep spec `text` (two workers, quiet) in a fresh folder: each row of its runs.csv
/// as column -> value, in run order.
pub fn sweep_rows(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let dir = tempfile::tempdir().unwrap();
    let (spec, out) = (dir.path().join("spec.ron"), dir.path().join("out"));
    std::fs::write(&spec, text).unwrap();
    let o =
        brownout(&["sweep", spec.to_str().unwrap(), "-q", "-j", "2", "--out", out.to_str().unwrap()], Path::new("."));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut rd = csv::Reader::from_path(out.join("runs.csv")).unwrap();
    let head = rd.headers().unwrap().clone();
    rd.records().map(|r| head.iter().zip(r.unwrap().iter()).map(|(h, v)| (h.into(), v.into())).collect()).collect()
}

/// stdout as one JSON document (fails the test if it is anything else).
pub fn document(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", String::from_utf8_lossy(&o.stdout)))
}

/// The `.ron` files of the repository folder `folder`, sorted.
pub fn ron_files(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    files
}
