//! The event log's hook: turn a layer's status change into logged events with the policy's
//! reason. Called by `stack::note` only when a log is kept.

use super::*;
use crate::metrics::events::{Aspect, LayerEvent};

impl<R: Record, F: Features> World<'_, R, F> {
    /// Log the change of layer `l` (seen from instance `inst`) from `last` to `st`: a breaker
    /// state, else a limit, else a degraded flag; once per instance the layer applies to, as
    /// the recorder counts them. A change of the timer wish alone is not logged.
    pub(super) fn log_change(&mut self, now: Time, inst: u32, l: u8, last: Status, st: Status) {
        let mut changes: [Option<(Aspect, String, String)>; 2] = [None, None];
        if st.breaker != last.breaker {
            let name = |b: Option<BreakerState>| b.map_or("none", BreakerState::name).to_string();
            changes[0] = Some((Aspect::Breaker, name(last.breaker), name(st.breaker)));
        } else if st.degraded != last.degraded {
            let name = |d: bool| if d { "degraded" } else { "normal" }.to_string();
            changes[0] = Some((Aspect::Degraded, name(last.degraded), name(st.degraded)));
        }
        if st.limit != last.limit {
            let name = |v: Option<f64>| v.map_or("none".to_string(), |v| v.to_string());
            changes[1] = Some((Aspect::Limit, name(last.limit), name(st.limit)));
        }
        if changes.iter().all(Option::is_none) {
            return;
        }
        let fleet = self.layout.fleet[l as usize].is_some();
        let reason = match self.trace.log_why {
            Some(why) => why.to_string(),
            None => self.layer(inst, l).policy.reason(),
        };
        let spec = &self.m.scenario.policies[self.policy].stack[l as usize];
        let (kind, dependencies) = (spec.policy.kind(), spec.dependencies.clone());
        let affected = if fleet { 0..self.gateway.insts.len() as u32 } else { inst..inst + 1 };
        let log = self.trace.log.as_mut().expect("called only with a log");
        for instance in affected {
            for (aspect, from, to) in changes.iter().flatten() {
                if !log.has_room() {
                    log.dropped += 1;
                    continue;
                }
                log.push(LayerEvent {
                    t: now,
                    instance,
                    fleet,
                    layer: l,
                    kind,
                    aspect: *aspect,
                    from: from.clone(),
                    to: to.clone(),
                    reason: reason.clone(),
                    dependencies: dependencies.clone(),
                    service: None,
                });
            }
        }
    }
}
