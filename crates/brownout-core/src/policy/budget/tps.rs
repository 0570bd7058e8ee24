//! tower's `TpsBudget(ttl, min_per_sec, retry_percent)`: every request deposits, every retry
//! withdraws, and a retry is allowed while the balance (deposits of the last `ttl`, in ten
//! slots, plus a constant reserve of `min_per_sec * ttl` retries) covers the withdrawal.
//!
//! Amounts as in tower: `retry_percent` 0 -> (deposit 0, withdraw 1); <= 1 -> (1,
//! floor(1/p)); above -> (1000, floor(1000/p)); reserve = min_per_sec * whole seconds of ttl
//! times withdraw. Slot rotation copies tower's `expire`, including its restart of the generation
//! clock at each expiry (so slot boundaries follow the calls, not a fixed grid).

use serde::{Deserialize, Serialize};

use crate::engine::Time;
use crate::policy::{Admission, Attempt, ClassId, Policy, RetryAsk};
use crate::policy::{BuildCtx, ConfigError, Facts, PolicyConfig};
use crate::units::Dur;

/// tower TpsBudget configuration (tower's defaults: 10 s, 10, 0.2).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TpsBudgetConfig {
    /// How long a deposit counts, 1 s to 60 s.
    #[serde(default = "ten_s")]
    pub ttl: Dur,
    /// Retries per second always allowed (>= 0).
    #[serde(default = "ten")]
    pub min_per_sec: u32,
    /// Retries allowed per request deposited, 0 to 1000.
    #[serde(default = "fifth")]
    pub retry_percent: f64,
}

fn ten_s() -> Dur {
    Dur::secs(10)
}
fn ten() -> u32 {
    10
}
fn fifth() -> f64 {
    0.2
}

const SLOTS: usize = 10;

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct TpsBudget {
    deposit: i64,
    withdraw: i64,
    reserve: i64,
    slots: [i64; SLOTS],
    writer: i64,
    index: usize,
    generation: Time,
    window: Time,
}

impl TpsBudget {
    /// Build from config.
    pub fn new(cfg: &TpsBudgetConfig) -> Self {
        let p = cfg.retry_percent;
        let (deposit, withdraw) = if p == 0.0 {
            (0, 1)
        } else if p <= 1.0 {
            (1, (1.0 / p) as i64)
        } else {
            (1000, (1000.0 / p) as i64)
        };
        let ttl_secs = (cfg.ttl.ns() / crate::engine::SECOND) as i64;
        Self {
            deposit,
            withdraw,
            reserve: (cfg.min_per_sec as i64).saturating_mul(ttl_secs).saturating_mul(withdraw),
            slots: [0; SLOTS],
            writer: 0,
            index: 0,
            generation: 0,
            window: cfg.ttl.ns() / SLOTS as u64,
        }
    }

    /// The balance: recent deposits minus withdrawals, plus the reserve.
    pub fn balance(&self) -> i64 {
        self.slots.iter().sum::<i64>() + self.writer + self.reserve
    }

    fn expire(&mut self, now: Time) {
        let mut diff = now.saturating_sub(self.generation);
        if diff < self.window {
            return;
        }
        self.slots[self.index] = self.writer;
        self.writer = 0;
        let mut idx = (self.index + 1) % SLOTS;
        while diff > self.window {
            self.slots[idx] = 0;
            diff -= self.window;
            idx = (idx + 1) % SLOTS;
        }
        self.index = idx;
        self.generation = now;
    }
}

impl Policy for TpsBudget {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::ON_REQUEST.with(crate::policy::Hooks::ALLOW_RETRY).with(crate::policy::Hooks::ADMIT)
    }

    fn admit(&mut self, _a: &Attempt) -> Admission {
        Admission::Admit
    }

    fn on_request(&mut self, now: Time, _class: ClassId) -> bool {
        self.expire(now);
        self.writer += self.deposit;
        false // the status stays the default
    }

    fn allow_retry(&mut self, ask: &RetryAsk) -> bool {
        self.expire(ask.now);
        if self.balance() >= self.withdraw {
            self.writer -= self.withdraw;
            true
        } else {
            false
        }
    }
}

/// Validation messages for [`TpsBudgetConfig`].
fn check(c: &TpsBudgetConfig) -> Result<(), String> {
    let s = crate::engine::SECOND;
    if c.ttl.ns() < s || c.ttl.ns() > 60 * s {
        return Err("RetryBudget.ttl must lie in [1s, 60s]".into());
    }
    if !(0.0..=1000.0).contains(&c.retry_percent) {
        return Err("RetryBudget.retry_percent must lie in [0, 1000]".into());
    }
    Ok(())
}

impl PolicyConfig for TpsBudgetConfig {
    const KIND: &'static str = "retry-budget";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Other)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        Ok(check(self)?)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(TpsBudget::new(self))
    }
}
