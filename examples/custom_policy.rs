//! A policy written outside brownout's own modules, run beside the built-in ones.
//!
//! Many teams have in-house resilience code. Here: an "EWMA shed" that tracks an
//! exponentially weighted moving average of call latency and, while it is above a limit,
//! sends a share of calls straight to the fallback. It implements `brownout::policy::Policy`,
//! is registered under a name, and the scenario uses it as
//! `Plugin((name: "ewma-shed", params: {"limit_ms": 800.0, "shed": 0.8}))`.
//!
//!     cargo run --release --example custom_policy

use std::path::Path;

use brownout::engine::{MILLISECOND, counter_f64};
use brownout::model::{Model, RunOptions};
use brownout::policy::plugin::{PluginConfig, Plugins};
use brownout::policy::{Admission, Attempt, BuildCtx, Completed, Policy, Refusal, Status};
use brownout::report::table;
use brownout::runner::run_all;

/// EWMA of latency; above `limit`, refuse a share `shed` of calls as "fallback now".
struct EwmaShed {
    alpha: f64,
    limit_ns: f64,
    shed: f64,
    ewma_ns: f64,
    seed: u64,
}

impl EwmaShed {
    fn factory(cfg: &PluginConfig, ctx: &BuildCtx) -> Result<Box<dyn Policy>, String> {
        let shed = cfg.param("shed", 0.8);
        if !(0.0..=1.0).contains(&shed) {
            return Err(format!("ewma-shed: shed must lie in [0, 1], got {shed}"));
        }
        Ok(Box::new(EwmaShed {
            alpha: cfg.param("alpha", 0.05),
            limit_ns: cfg.param("limit_ms", 800.0) * MILLISECOND as f64,
            shed,
            ewma_ns: 0.0,
            // Policies get no RNG: derive a deterministic draw from the attempt id instead.
            seed: ctx.instance as u64,
        }))
    }
}

impl Policy for EwmaShed {
    fn admit(&mut self, a: &Attempt) -> Admission {
        let degraded = self.ewma_ns > self.limit_ns;
        if degraded && counter_f64(self.seed, 0xe3a, a.id, 0) < self.shed {
            Admission::Refuse(Refusal::Fallback)
        } else {
            Admission::Admit
        }
    }

    fn complete(&mut self, d: &Completed) {
        let sample = d.duration() as f64;
        self.ewma_ns = if self.ewma_ns == 0.0 { sample } else { self.ewma_ns + self.alpha * (sample - self.ewma_ns) };
    }

    fn status(&self) -> Status {
        Status { degraded: self.ewma_ns > self.limit_ns, ..Status::default() }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/custom_policy.ron");
    let scenario = brownout::scenario::load(&path)?;
    let plugins = Plugins::new().register("ewma-shed", EwmaShed::factory);
    let model = Model::build_with_plugins(&scenario, scenario.seed, path.parent().unwrap(), plugins)?;
    let result = run_all(&model, RunOptions::default(), true)?;
    print!("{}", table::terminal(&result.summary));
    Ok(())
}
