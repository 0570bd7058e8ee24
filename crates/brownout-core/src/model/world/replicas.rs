//! Client-side load balancing over a dependency's replicas: the balancer's choice, outlier
//! detection's ejections and health checks' verdicts (`calls.rs` sends the call).

use super::*;
use crate::model::outlier::Result as OutlierResult;
use crate::policy::retry::ReplicaRule;

/// The top bit of a call's attempt number marks a hedged call (`calls::open_call`).
const HEDGED: u32 = 1 << 31;

impl<R: Record, F: Features> World<'_, R, F> {
    /// The replica call `call` goes to: the one its request's attempt before was assigned,
    /// when the route's retry rule keeps it (HAProxy's `retries`), else the balancer's
    /// choice (None: none is left). A route with such a rule remembers the replica of each
    /// attempt's call for the next; a hedged call is balanced and remembered by no one.
    pub(super) fn replica_of_call(&mut self, now: Time, call: Token) -> Option<u32> {
        let c = *self.upstream.calls.get(call).expect("live call");
        let sticky = self.sticky(&c);
        let kept = sticky.and_then(|(tok, rule)| self.kept_replica(now, &c, tok, rule));
        let chosen = kept.or_else(|| self.choose_replica(now, c.instance, c.dep, c.class, c.key, c.attempt));
        if let (Some((tok, _)), Some(replica)) = (sticky, chosen) {
            self.reqs.get_mut(tok).expect("live request").attempt.replica = replica;
        }
        chosen
    }

    /// Whether call `call`'s route has a retry rule that may keep its replica.
    pub(super) fn sticky_route(&self, call: Token) -> bool {
        self.upstream.calls.get(call).is_some_and(|c| self.sticky(c).is_some())
    }

    /// The request and the retry rule of a call whose route may keep its replica (not a
    /// hedged call, whose attempt is not retried on its own).
    fn sticky(&self, c: &Call) -> Option<(Token, ReplicaRule)> {
        let tok = c.req.filter(|_| F::REPLICAS && c.attempt & HEDGED == 0)?;
        let class = self.reqs.get(tok).expect("live request").who.class as usize;
        let rule = self.layout.replica_rule[self.route_of(class, tok)];
        (rule != ReplicaRule::Rebalance).then_some((tok, rule))
    }

    /// The replica a retry keeps by `rule` (`ReplicaRule::keeps`: health checks say whether
    /// it is up and how many are), or None: the first attempt, or none assigned before, or
    /// the rule sends it elsewhere.
    fn kept_replica(&mut self, now: Time, c: &Call, tok: Token, rule: ReplicaRule) -> Option<u32> {
        let before = self.reqs.get(tok).expect("live request").attempt.replica;
        if c.attempt <= 1 || before == state::NO_REPLICA {
            return None;
        }
        let count = self.m.scenario.deps()[c.dep as usize].replicas.as_ref()?.count;
        self.health_filters(now, c.instance, c.dep);
        let health = &self.gateway.insts[c.instance as usize].clients[c.dep as usize].health;
        let up = |r: u32| health.as_ref().is_none_or(|h| h.is_up(r));
        let active = (0..count).filter(|&r| up(r)).count() as u32;
        rule.keeps(up(before), active).then_some(before)
    }

    /// Client-side load balancing. Random choices are counter-based on the attempt, so every
    /// policy run sends the same attempt to the same candidates.
    /// None: outlier detection (with panic off) or health checks left no replica to call.
    pub(super) fn choose_replica(
        &mut self,
        now: Time,
        inst: u32,
        dep: u16,
        class: ClassId,
        key: u64,
        attempt: u32,
    ) -> Option<u32> {
        if !F::REPLICAS {
            return Some(0); // one replica
        }
        let Some(reps) = &self.m.scenario.deps()[dep as usize].replicas else { return Some(0) };
        let checked = self.health_filters(now, inst, dep);
        if let Some(o) = &mut self.gateway.insts[inst as usize].clients[dep as usize].outlier {
            o.advance(now);
            if o.filters() {
                return self.choose_healthy(inst, dep, class, key, attempt);
            }
        }
        if checked {
            return self.choose_healthy(inst, dep, class, key, attempt);
        }
        let n = reps.count;
        let key = ((class as u64) << 48) ^ key ^ self.m.dep(dep).salt();
        let draw = |k: u64| self.draws.balance.u64(key, ((attempt as u64) << 1) | k);
        let out = &self.gateway.insts[inst as usize].clients[dep as usize].outstanding;
        Some(match reps.balancing {
            Balancing::RoundRobin => {
                let i = &mut self.gateway.insts[inst as usize].clients[dep as usize];
                let r = i.rr % n;
                i.rr = i.rr.wrapping_add(1);
                r
            }
            Balancing::Random => (draw(0) % n as u64) as u32,
            Balancing::LeastOutstanding => (0..n).min_by_key(|&r| (out[r as usize], r)).unwrap_or(0),
            Balancing::PowerOfTwo => {
                if n == 1 {
                    return Some(0);
                }
                let a = (draw(0) % n as u64) as u32;
                let mut b = (draw(1) % (n as u64 - 1)) as u32;
                if b >= a {
                    b += 1;
                }
                if out[b as usize] < out[a as usize] { b } else { a }
            }
        })
    }

    /// Load balancing that skips the replicas outlier detection ejected (when it filters)
    /// and those health checks found down (same rules and draws as `choose_replica`, over
    /// the replicas left). None: no replica is left (Envoy's "no healthy upstream",
    /// HAProxy's 503 when no server is up).
    fn choose_healthy(&mut self, inst: u32, dep: u16, class: ClassId, key: u64, attempt: u32) -> Option<u32> {
        let balancing = self.m.scenario.deps()[dep as usize].replicas.as_ref().map(|r| r.balancing);
        let i = &mut self.gateway.insts[inst as usize].clients[dep as usize];
        let (o, h) = (&i.outlier, &i.health);
        let skipped = |r: u32| {
            o.as_ref().is_some_and(|o| o.filters() && o.is_ejected(r)) || h.as_ref().is_some_and(|h| !h.is_up(r))
        };
        let n = i.outstanding.len() as u32;
        // The healthy replicas in order, counted and indexed in place: no list per call.
        let healthy = || (0..n).filter(|&r| !skipped(r));
        let k = healthy().count() as u64;
        if k == 0 {
            return None;
        }
        if balancing == Some(Balancing::RoundRobin) {
            // The cursor moves on past skipped replicas (at least one is left).
            loop {
                let r = i.rr % n;
                i.rr = i.rr.wrapping_add(1);
                if !skipped(r) {
                    return Some(r);
                }
            }
        }
        let nth = |j: u64| healthy().nth(j as usize).expect("j < healthy replicas");
        let key = ((class as u64) << 48) ^ key ^ self.m.dep(dep).salt();
        let draw = |b: u64| self.draws.balance.u64(key, ((attempt as u64) << 1) | b);
        let out = &i.outstanding;
        Some(match balancing {
            Some(Balancing::LeastOutstanding) => healthy().min_by_key(|&r| (out[r as usize], r)).unwrap_or(0),
            Some(Balancing::PowerOfTwo) if k > 1 => {
                let ai = draw(0) % k;
                // The second pick skips the first: healthy replicas are in increasing order,
                // so comparing positions is comparing replicas.
                let mut bi = draw(1) % (k - 1);
                if bi >= ai {
                    bi += 1;
                }
                let (a, b) = (nth(ai), nth(bi));
                if out[b as usize] < out[a as usize] { b } else { a }
            }
            _ => nth(draw(0) % k),
        })
    }

    /// Tell the instance's outlier detector of dependency `dep`, if any, what a call to
    /// `replica` came to.
    pub(super) fn outlier_result(&mut self, now: Time, inst: u32, dep: u16, replica: u32, result: OutlierResult) {
        if F::REPLICAS
            && let Some(o) = &mut self.gateway.insts[inst as usize].clients[dep as usize].outlier
        {
            o.record(now, replica, result);
        }
    }
}
