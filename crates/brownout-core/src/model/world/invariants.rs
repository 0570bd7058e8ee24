//! The world's invariants as a whole, checked at every window tick and at the end of a run in
//! builds with debug assertions (the `ci` test profile); release builds do not compile it.
//! Counts that must never go below zero are checked where they change (`dec!`), and slots
//! and connections where they are taken.

use std::collections::BTreeSet;

use super::stack::waiting;
use super::*;

impl<R: Record, F: Features> World<'_, R, F> {
    /// Recount the state from the requests and calls alive and compare with the counters.
    pub(super) fn check_invariants(&self) {
        let n = self.gateway.insts.len();
        let (mut workers, mut conns) = (vec![0u32; n], vec![0u32; n]);
        let (mut slot_waiting, mut pool_waiting) = (vec![0u32; n], vec![0u32; n]);
        let mut own = vec![vec![0u32; self.m.scenario.fleet.pools.len()]; n];
        for tok in self.reqs.tokens() {
            let r = self.reqs.get(tok).expect("live request");
            let i = r.who.instance as usize;
            workers[i] += r.worker as u32;
            conns[i] += r.attempt.conns as u32;
            if let Some(p) = self.pool_id(tok).checked_sub(1) {
                own[i][p] += r.attempt.conns as u32;
            }
            assert!(!(r.worker && r.phase == Phase::SlotQueue), "a request waiting for a slot holds one");
            assert!(r.phase != Phase::Dequeued, "a request left dequeued at an event boundary");
            slot_waiting[i] += (r.phase == Phase::SlotQueue) as u32;
            pool_waiting[i] += (r.phase == Phase::PoolQueue) as u32;
            let held = [r.attempt.call, r.hedge.call].into_iter().flatten();
            let mut calls = 0;
            for call in held {
                let c = self.upstream.calls.get(call).expect("a request's call is in the calls slab");
                assert_eq!(c.req, Some(tok), "a call that does not name its request");
                calls += 1;
            }
            assert_eq!(r.attempt.conns as u32, calls, "a request holds one connection per call out");
        }
        let fleet = &self.m.scenario.fleet;
        for (i, inst) in self.gateway.insts.iter().enumerate() {
            assert!(inst.workers <= self.workers_of(i as u32).slots, "instance {i}: {} workers busy", inst.workers);
            let most = if self.is_service_inst(i as u32) {
                self.pool_limits(i as u32, 0).0
            } else {
                self.m.scenario.pool_connections()
            };
            assert!(inst.conns <= most, "instance {i}: {} connections", inst.conns);
            for (p, pool) in inst.own.iter().enumerate() {
                assert!(
                    pool.conns <= fleet.pools[p].max_connections,
                    "instance {i} pool {p}: {} connections",
                    pool.conns
                );
                assert_eq!(pool.conns, own[i][p], "instance {i} pool {p}: connections = those requests hold");
            }
            let shared = inst.conns - inst.own.iter().map(|o| o.conns).sum::<u32>();
            if !self.is_service_inst(i as u32) {
                assert!(shared <= fleet.pool.max_connections, "instance {i}: {shared} connections of the fleet's pool");
            }
            assert_eq!(inst.workers, workers[i], "instance {i}: busy workers = requests holding one");
            assert_eq!(inst.conns, conns[i], "instance {i}: connections = those requests hold");
            assert_eq!(inst.worker_waiting, slot_waiting[i], "instance {i}: slot waiters");
            assert_eq!(inst.worker_waiting, self.live_slot_entries(inst), "instance {i}: slot queue entries");
            assert_eq!(inst.pool_waiting, pool_waiting[i], "instance {i}: pool waiters");
            assert_eq!(inst.pool_waiting, self.live_pool_entries(inst), "instance {i}: pool queue entries");
            for (l, layer) in inst.layers.iter().enumerate() {
                let live = layer.queue.iter().filter(|(_, w)| waiting(&self.reqs, w)).count() as u32;
                assert_eq!(layer.waiting, live, "instance {i} layer {l}: waiting = live queue entries");
            }
        }
        self.check_calls();
    }

    /// Calls in flight, servers busy and outstanding counts against the calls slab.
    fn check_calls(&self) {
        let replicas = self.upstream.busy.len();
        let mut busy = vec![0u32; replicas];
        let mut outstanding = vec![vec![0u32; replicas]; self.gateway.insts.len()];
        let mut reached = 0u64;
        for call in self.upstream.calls.tokens() {
            let c = self.upstream.calls.get(call).expect("live call");
            reached += c.reached as u64;
            busy[self.upstream.base[c.dep as usize] + c.replica as usize] += c.holds_server as u32;
            if c.counted {
                outstanding[c.instance as usize][self.upstream.base[c.dep as usize] + c.replica as usize] += 1;
            }
        }
        assert_eq!(self.upstream.in_flight, reached, "calls in flight = calls in the slab that reached the dependency");
        assert_eq!(self.upstream.busy, busy, "busy servers = calls holding one");
        for (d, &base) in self.upstream.base.iter().enumerate() {
            if let Some((servers, queue)) = self.m.dep(d as u16).capacity {
                let n = self.gateway.insts[0].clients[d].outstanding.len();
                // Under sharing every call present holds a share, up to servers + queue.
                let sharing = self.m.dep(d as u16).sharing.is_some();
                let most = if sharing { servers.saturating_add(queue) } else { servers };
                assert!(busy[base..base + n].iter().all(|&b| b <= most), "more calls in service than servers");
                for (r, &b) in busy.iter().enumerate().skip(base).take(n) {
                    let sharing_now = if sharing { b } else { 0 };
                    assert_eq!(self.upstream.shared[r].present(), sharing_now, "calls sharing replica {r}");
                }
            }
        }
        for (i, inst) in self.gateway.insts.iter().enumerate() {
            let held: Vec<u32> = inst.clients.iter().flat_map(|c| c.outstanding.iter().copied()).collect();
            assert_eq!(held, outstanding[i], "instance {i}: outstanding calls per replica");
        }
    }

    /// Requests in the slot queue that still wait there.
    fn live_slot_entries(&self, inst: &Inst) -> u32 {
        let live = |t: &&Token| self.reqs.get(**t).is_some_and(|r| r.phase == Phase::SlotQueue);
        inst.worker_q.iter().filter(live).map(|t| t.index).collect::<BTreeSet<_>>().len() as u32
    }

    /// Requests in the pool queue that still wait there (a request that left and came back
    /// for a later attempt may have a stale entry too).
    fn live_pool_entries(&self, inst: &Inst) -> u32 {
        let live = |t: &&Token| self.reqs.get(**t).is_some_and(|r| r.phase == Phase::PoolQueue);
        let queues = std::iter::once(&inst.pool_q).chain(inst.own.iter().map(|o| &o.q));
        queues.flat_map(|q| q.iter().filter(live).map(|t| t.index)).collect::<BTreeSet<_>>().len() as u32
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const TEXT: &str = r#"Scenario(
        name: "t", horizon: "1s",
        fleet: (workers: (slots: 2), pool: (max_connections: 2, acquire_timeout: "1s")),
        classes: [(name: "a", arrivals: Poisson(rate_per_s: 10), deadline: "1s")],
        dependency: (latency: Constant("1ms")),
        policies: [(name: "p")],
    )"#;

    fn model() -> Model {
        let s = crate::scenario::parse(Path::new("t.ron"), TEXT).unwrap();
        Model::build(&s, 1, Path::new(".")).unwrap()
    }

    #[test]
    fn a_fresh_world_keeps_them() {
        World::<Recorders>::new(&model(), 0, false).check_invariants();
    }

    #[test]
    #[should_panic(expected = "busy workers")]
    fn a_busy_worker_no_request_holds_is_caught() {
        let m = model();
        let mut w = World::<Recorders>::new(&m, 0, false);
        w.gateway.insts[0].workers = 1;
        w.check_invariants();
    }

    #[test]
    #[should_panic(expected = "calls in flight")]
    fn a_call_in_flight_missing_from_the_slab_is_caught() {
        let m = model();
        let mut w = World::<Recorders>::new(&m, 0, false);
        w.upstream.in_flight = 1;
        w.check_invariants();
    }

    #[test]
    #[should_panic(expected = "decremented below zero")]
    fn a_count_going_below_zero_is_caught_where_it_happens() {
        let m = model();
        let mut w = World::<Recorders>::new(&m, 0, false);
        dec!(w.gateway.insts[0].worker_waiting);
    }
}
