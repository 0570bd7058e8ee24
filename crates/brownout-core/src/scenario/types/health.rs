//! HAProxy's active health checks of the dependency's replicas (`server ... check inter 2s
//! fall 3 rise 2`); the semantics are in `model::health`.

use serde::{Deserialize, Serialize};

use crate::units::Dur;

/// Active health checks in each gateway instance (one HAProxy per instance): every replica is
/// checked every `inter`; `fall` consecutive failed checks take it out of the balancing,
/// `rise` consecutive passed checks bring it back. A check sees the replica as a request
/// arriving at the check's start would (its latency, drift, slowdown, error rate, modes and
/// any partition of the instance), without taking a server; it fails on an error or when no
/// answer comes within `timeout`. With every replica down a call gets a 503 at once.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthCheck {
    /// `inter`: time from the end of a check to the start of the next (default 2 s,
    /// HAProxy's; > 0).
    #[serde(default = "two_s")]
    pub inter: Dur,
    /// `fall`: consecutive failed checks that take an up replica down (default 3; >= 1).
    #[serde(default = "three")]
    pub fall: u32,
    /// `rise`: consecutive passed checks that bring a down replica up (default 2; >= 1).
    #[serde(default = "two")]
    pub rise: u32,
    /// `timeout check`: longest a check waits for its answer (unset: `inter`, as HAProxy).
    #[serde(default)]
    pub timeout: Option<Dur>,
}

fn two_s() -> Dur {
    Dur::ms(2000)
}
fn three() -> u32 {
    3
}
fn two() -> u32 {
    2
}

impl HealthCheck {
    /// The check's timeout: `timeout`, or `inter` when unset.
    pub(crate) fn timeout(&self) -> Dur {
        self.timeout.unwrap_or(self.inter)
    }

    /// Check values serde cannot: the offending field and what is wrong.
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        if self.inter.ns() == 0 {
            return Err(("inter", "dependency.replicas.health_check.inter must be > 0".into()));
        }
        if self.timeout.is_some_and(|t| t.ns() == 0) {
            return Err(("timeout", "dependency.replicas.health_check.timeout must be > 0".into()));
        }
        for (f, v) in [("fall", self.fall), ("rise", self.rise)] {
            if v == 0 {
                return Err((f, format!("dependency.replicas.health_check.{f} must be >= 1, as HAProxy requires")));
            }
        }
        if self.rise.checked_add(self.fall).is_none() {
            return Err(("fall", "dependency.replicas.health_check: rise + fall must be at most 4294967295".into()));
        }
        Ok(())
    }
}
