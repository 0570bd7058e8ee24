//! HAProxy's active health checks in the world: each instance's checks of a dependency's
//! replicas (`model::health`), run up to the time a call is balanced. What a check sees is a
//! function of the model and the time alone (`seen`), so running the checks lazily gives the
//! same results as running them on timers, and schedules no event.

use super::*;
use crate::model::health::Seen;

/// The class a check's draws are keyed under: none of the scenario's (classes are far fewer
/// than 65,535), so a check never shares a request's draws.
const CHECK_CLASS: u64 = 0xFFFF;

impl<R: Record, F: Features> World<'_, R, F> {
    /// Run instance `inst`'s health checks of dependency `dep` up to `now`; true when some
    /// replica is down, so the balancer must skip it.
    pub(super) fn health_filters(&mut self, now: Time, inst: u32, dep: u16) -> bool {
        let m = self.m;
        let Some(h) = &mut self.gateway.insts[inst as usize].clients[dep as usize].health else { return false };
        let Some(cfg) = m.scenario.deps()[dep as usize].replicas.as_ref().and_then(|r| r.health_check.as_ref()) else {
            return false;
        };
        let timeout = cfg.timeout().ns();
        h.advance(now, |replica, k, at| seen(m, inst, dep, timeout, (replica, k, at)));
        h.filters()
    }
}

/// What check number `k` of `replica` of dependency `dep`, from instance `inst`, started at
/// `at`, sees: a request arriving then (latency with drift and the replica's slowdown, error
/// rate, modes; a partition cutting the instance off), failing on an error or after
/// `timeout` without an answer.
fn seen(m: &Model, inst: u32, dep: u16, timeout: Time, (replica, k, at): (u32, u64, Time)) -> Seen {
    if let Some(mode) = m.partition(inst, dep, at) {
        let took = match mode {
            PartitionMode::Hang { connect_timeout } => connect_timeout.ns().min(timeout),
            PartitionMode::FailFast => 0,
        };
        return Seen { passed: false, took };
    }
    let index = (u64::from(inst) << 32) | u64::from(replica);
    let plan = m.dep(dep).plan(at, CHECK_CLASS, index, k, m.replica_factor(dep, replica, at));
    let latency = plan.latency();
    if latency > timeout { Seen { passed: false, took: timeout } } else { Seen { passed: !plan.error, took: latency } }
}
