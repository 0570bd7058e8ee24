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
        let run = self.m.run_stack(self.policy);
        let spec = &run.layers[l as usize];
        let (kind, dependencies) = (spec.policy.kind(), spec.dependencies.clone());
        // A service's layer is named by its service, its instance among the service's and its
        // place in the service's own stack (the world numbers them after the gateway's).
        let owner = run.owner[l as usize];
        let service = owner.map(|k| {
            let g = self.m.graph.as_ref().expect("services have a graph");
            self.m.scenario.deps()[g.services[k as usize] as usize].name.clone()
        });
        let (inst, layer) = match owner {
            Some(_) => {
                (self.svc.locate(inst).1, l - run.owner.iter().position(|&o| o == owner).expect("its own") as u8)
            }
            None => (inst, l),
        };
        let affected = if fleet { 0..self.m.scenario.fleet.instances } else { inst..inst + 1 };
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
                    layer,
                    kind,
                    aspect: *aspect,
                    from: from.clone(),
                    to: to.clone(),
                    reason: reason.clone(),
                    dependencies: dependencies.clone(),
                    service: service.clone(),
                });
            }
        }
    }
}
