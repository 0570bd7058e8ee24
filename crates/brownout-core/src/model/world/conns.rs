//! Connections with a life (`Pool::connect`, `Pool::keep_alive`; the settings are
//! `model::connlife`): which connection a call takes, its set-up, and whether it stays open
//! after the call. A pool without `connect` never comes here: its connections are ready at
//! once and reused forever, as before.
//!
//! A pool slot (`Inst::conns`) is held from when an attempt takes a connection, through its
//! set-up, until its call ends, so `max_connections` bounds the connections in use or being
//! set up. A connection kept open after a successful call waits, holding no slot, in its
//! instance's idle list for its dependency (`Inst::idle`), with the time it went idle and
//! the calls it served. An attempt takes the most recently used idle connection (Go's
//! `net/http` `Transport.queueForIdleConn` takes the last of its idle list); those idle past
//! `keep_alive.idle` are closed lazily, when an attempt looks at the list, so no timer runs
//! per connection and memory stays O(connections in use). Whether a connection stays open is
//! decided when its call ends: only a successful call keeps it (`keep_open`); a timeout, an
//! error, an abandoned call or a restart closes it, and `keep_alive.max_requests` closes it
//! after that many calls.

use super::*;

/// The connection a call goes out on (see [`World::checkout`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Checkout {
    /// Its set-up time (ns): 0 for an open connection; for a set-up that fails, the time
    /// until it fails (the connect timeout).
    pub setup: Time,
    /// The set-up runs past the connect timeout: the call fails when it runs out.
    pub fails: bool,
    /// Calls the connection has served, this one included (0 for a pool without `connect`).
    pub uses: u32,
}

impl Checkout {
    /// A connection ready at once, as every connection of a pool without `connect` is.
    pub const READY: Checkout = Checkout { setup: 0, fails: false, uses: 0 };
}

impl<R: Record, F: Features> World<'_, R, F> {
    /// The pool dependency `dep`'s calls take connections from (`Gateway::pool_of`).
    pub(super) fn pool_of_dep(&self, dep: u16) -> usize {
        if self.gateway.pool_of.is_empty() { 0 } else { self.gateway.pool_of[dep as usize] as usize }
    }

    /// The connection request `tok`'s next call (a hedge when `hedged`) goes out on, once
    /// it holds a slot of its pool: an idle open one if any (no set-up), else a new one whose
    /// set-up is drawn from the attempt's own counter (request key, attempt, hedge bit), so
    /// it never depends on other requests.
    pub(super) fn checkout(&mut self, now: Time, tok: Token, hedged: bool) -> Checkout {
        let dep = self.dep_of(tok);
        let Some(life) = self.m.conn_life(self.policy, self.pool_of_dep(dep)) else { return Checkout::READY };
        let r = self.reqs.get(tok).expect("live request");
        if self.is_service_inst(r.who.instance) {
            return Checkout::READY; // a service's connections are ready at once (docs/graphs.md)
        }
        let (inst, key) = (r.who.instance as usize, ((r.who.class as u64) << 48) ^ r.who.key);
        let attempt = if hedged { r.attempt.number | (1 << 31) } else { r.attempt.number };
        let idle = &mut self.gateway.insts[inst].idle[dep as usize];
        // Idle since in increasing order from the front: the expired ones are the oldest.
        while idle.front().is_some_and(|&(since, _)| life.expired(since, now)) {
            idle.pop_front();
        }
        if let Some((_, uses)) = idle.pop_back() {
            return Checkout { setup: 0, fails: false, uses: uses.saturating_add(1) };
        }
        let (setup, fails) = life.set_up(key, u64::from(attempt));
        self.rec.connection_opened(now, setup);
        Checkout { setup, fails, uses: 1 }
    }

    /// A call succeeded: its connection stays open, idle from `now`, if its pool keeps
    /// connections and it has calls left (`keep_alive.max_requests`). Before the slot is
    /// released, so the next waiter finds it.
    pub(super) fn keep_open(&mut self, now: Time, c: &Call) {
        if self.is_service_inst(c.instance) {
            return;
        }
        let Some(life) = self.m.conn_life(self.policy, self.pool_of_dep(c.dep)) else { return };
        if life.reusable(c.uses) {
            let idle = &mut self.gateway.insts[c.instance as usize].idle[c.dep as usize];
            if life.max_idle.is_some_and(|n| idle.len() >= n as usize) {
                // The cache is full: the connection idle longest is closed (nginx,
                // `ngx_http_upstream_free_keepalive_peer`, takes the last of its cache).
                idle.pop_front();
            }
            idle.push_back((now, c.uses));
        }
    }

    /// A call's connection is set up: the call goes out, unless it was abandoned meanwhile
    /// (the attempt timed out or ended; its slot is already free), in which case the call
    /// is dropped without reaching the dependency.
    pub(super) fn connected(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let Some(c) = self.upstream.calls.get_mut(call) else { return };
        if c.req.is_none() {
            self.upstream.calls.remove(call);
            return;
        }
        c.reached = true;
        c.sent_at = now;
        c.served_at = now;
        self.dispatch(now, q, call);
    }
}
