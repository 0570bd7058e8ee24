//! The connection pool and the dependency: calls, capacity queues, replicas and partitions.

use super::*;
use crate::metrics::GraphEvent;
use crate::model::outlier::Result as OutlierResult;

impl<R: Record, F: Features> World<'_, R, F> {
    // ---- connection pool and dependency ------------------------------------------

    pub(super) fn acquire_connection(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let (class, inst) = {
            let r = self.reqs.get(tok).expect("live request");
            (r.who.class as usize, r.who.instance)
        };
        let (request, request_unwind) = self.request_deadline(tok);
        if now >= request {
            // Admitted at the very instant the request-level timeout fires: no call.
            self.cut_before_call(now, q, tok);
            return;
        }
        let mut timeout: Option<(Time, Time)> = None;
        let route = self.route_of(class, tok);
        let layers: &[u8] = if F::STACK { &self.layout.attempt_timeouts[route] } else { &[] };
        for &l in layers {
            if let Some(t) = self.layer(inst, l).policy.attempt_timeout(class as ClassId)
                && timeout.is_none_or(|cur| t.0 < cur.0)
            {
                timeout = Some(t);
            }
        }
        let own = timeout.map_or(Time::MAX, |t| now.saturating_add(t.0));
        // The timeout that ends the attempt if the answer is late, and its unwind.
        let (deadline, unwind) =
            if request < own { (request, Some(request_unwind)) } else { (own, timeout.map(|t| t.1)) };
        let unwind = self.unwind_of(tok, unwind);
        let p = self.pool_id(tok);
        let free = self.pool_free(inst, p);
        let r = self.reqs.get_mut(tok).expect("live request");
        r.time.attempt_deadline = deadline;
        r.time.unwind = unwind;
        r.time.attempt_start = now;
        if free {
            self.take_connection(now, q, tok);
        } else {
            let (_, acquire_timeout) = self.pool_limits(inst, p);
            let r = self.reqs.get_mut(tok).expect("live request");
            let i = &mut self.gateway.insts[inst as usize];
            i.pool_waiting += 1;
            let waiting = i.pool_waiting;
            if p == 0 {
                i.pool_q.push_back(tok)
            } else {
                i.own[p - 1].q.push_back(tok)
            }
            r.phase = Phase::PoolQueue;
            let at = now.saturating_add(acquire_timeout).min(r.time.attempt_deadline);
            self.timer(q, tok, at, Timer::Attempt);
            self.rec_pool_waiting(now, inst, waiting);
        }
    }

    pub(super) fn take_connection(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        // A `Connection` timeout starts once the connection is set up (`conns.rs`).
        let conn = self.checkout(now, tok, false);
        let (deadline, inactivity_cap) = self.connection_deadline(now.saturating_add(conn.setup), tok);
        let r = self.reqs.get_mut(tok).expect("live request");
        r.phase = Phase::Calling;
        let (class, arrived, waited) = (r.who.class, r.time.arrived, now - r.time.attempt_start);
        self.rec_conn_wait(arrived, class, waited);
        self.graph_conn_wait(tok, arrived, waited);
        let call = self.open_call(now, q, tok, false, conn);
        let done_at = match self.upstream.calls.get_mut(call) {
            Some(c) => {
                c.inactivity_cap = inactivity_cap;
                c.done_at
            }
            None => Time::MAX,
        };
        let timed = deadline != Time::MAX && done_at > deadline;
        let r = self.reqs.get_mut(tok).expect("live request");
        r.attempt.call = Some(call);
        r.attempt.timed = timed;
        let generation = r.hedge.generation;
        if timed {
            self.timer(q, tok, deadline, Timer::Attempt);
        } else {
            // Most timeouts never fire: when the answer is already scheduled no later than
            // the deadline (it pops first at a tie, being scheduled first), a timer could only
            // ever be a tombstone, so none is scheduled, unless that answer is an error and a
            // hedge is still out (`dep_done` arms the timer then). Outcomes are the same.
            self.bump_generation(tok);
        }
        let route = self.route_of(class as usize, tok);
        if !self.route_has(route, Hooks::HEDGE_DELAY) {
            return; // no layer hedges
        }
        let inst = self.reqs.get(tok).expect("live request").who.instance;
        let mut hedge = None;
        for &l in &self.layout.class_layers[route] {
            if self.layout.hooks[l as usize].has(Hooks::HEDGE_DELAY) {
                hedge = hedge.or(self.layer(inst, l).policy.hedge_delay(class));
            } else {
                debug_assert!(self.layer(inst, l).policy.hedge_delay(class).is_none());
            }
        }
        if let Some(d) = hedge {
            q.schedule_at(now.saturating_add(d), Ev::Hedge { req: tok, generation });
        }
    }

    /// The attempt's deadline from the moment its connection is ready (`now`): a timeout that
    /// starts with the connection (`Policy::connection_timeout`, HAProxy's `timeout server`)
    /// runs from now and ends the attempt if it comes before the deadline set when the
    /// attempt asked for the connection, whose unwind it then replaces.
    /// With it, the deadline the attempt had before, when an inactivity timeout set this one
    /// (0 otherwise: `Call::inactivity_cap`).
    fn connection_deadline(&mut self, now: Time, tok: Token) -> (Time, Time) {
        let r = self.reqs.get(tok).expect("live request");
        let (class, inst, deadline) = (r.who.class, r.who.instance, r.time.attempt_deadline);
        let route = self.route_of(class as usize, tok);
        if !self.route_has(route, Hooks::CONNECTION_TIMEOUT) {
            return (deadline, 0); // no layer times the connection
        }
        let mut first: Option<(Time, Time, bool)> = None;
        for &l in &self.layout.class_layers[route] {
            if self.layout.hooks[l as usize].has(Hooks::CONNECTION_TIMEOUT)
                && let Some(t) = self.layer(inst, l).policy.connection_timeout(class)
                && first.is_none_or(|cur| t.0 < cur.0)
            {
                first = Some((t.0, t.1, self.layer(inst, l).policy.is_inactivity_timeout(class)));
            }
        }
        let Some((t, unwind, inactivity)) = first else { return (deadline, 0) };
        let at = now.saturating_add(t);
        if at >= deadline {
            return (deadline, 0);
        }
        let unwind = self.unwind_of(tok, Some(unwind));
        let r = self.reqs.get_mut(tok).expect("live request");
        r.time.attempt_deadline = at;
        r.time.unwind = unwind;
        (at, if inactivity { deadline } else { 0 })
    }

    /// Take a pool connection (the caller checked one is free) and start a call on it, once
    /// `conn` is set up (`conns.rs`). A hedged call draws its own latency (attempt key with
    /// the top bit set).
    fn open_call(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, hedged: bool, conn: Checkout) -> Token {
        let r = self.reqs.get_mut(tok).expect("live request");
        r.attempt.conns += 1;
        r.calls += 1;
        let (inst, class, key) = (r.who.instance, r.who.class, r.who.key);
        let attempt = if hedged { r.attempt.number | (1 << 31) } else { r.attempt.number };
        let dep = self.dep_of(tok);
        let p = self.pool_id(tok);
        debug_assert!(self.pool_free(inst, p), "a connection beyond the pool");
        let i = &mut self.gateway.insts[inst as usize];
        if p > 0 {
            i.own[p - 1].conns += 1;
        }
        i.conns += 1;
        let conns = i.conns;
        self.rec_pool(now, inst, conns);
        self.graph_pool(now, inst, p);
        let call = self.upstream.calls.insert(Call {
            req: Some(tok),
            sent_at: now,
            served_at: now,
            service: 0,
            done_at: Time::MAX,
            error: false,
            refused: false,
            holds_server: false,
            reached: true,
            counted: false,
            replica: 0,
            inactivity_cap: 0,
            instance: inst,
            class,
            key,
            attempt,
            dep,
            uses: conn.uses,
            connect_failed: false,
        });
        if conn.fails {
            // The set-up runs past the connect timeout: the call fails then, having reached
            // nothing, and its connection never opens.
            let c = self.upstream.calls.get_mut(call).expect("live call");
            c.error = true;
            c.reached = false;
            c.connect_failed = true;
            c.done_at = now.saturating_add(conn.setup);
            q.schedule_at(c.done_at, Ev::DepDone { call });
        } else if conn.setup > 0 {
            // Not out before its connection is set up (`World::connected`).
            self.upstream.calls.get_mut(call).expect("live call").reached = false;
            q.schedule_at(now.saturating_add(conn.setup), Ev::Connected { call });
        } else {
            self.dispatch(now, q, call);
        }
        call
    }

    /// Send call `call`, on a connection ready at `now`, to the dependency, unless a
    /// partition cuts its instance off.
    pub(super) fn dispatch(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let c = self.upstream.calls.get(call).expect("live call");
        let (inst, dep) = (c.instance, c.dep);
        if F::REPLICAS
            && let Some(mode) = self.m.partition(inst, dep, now)
        {
            // Cut off: the call never reaches the dependency. A route whose retries keep
            // their replica (HAProxy) assigned one first, as HAProxy assigns the server
            // before it connects (`src/backend.c`, `assign_server`, then `connect_server`):
            // the retry goes back to it.
            if self.sticky_route(call) {
                self.replica_of_call(now, call);
            }
            let c = self.upstream.calls.get_mut(call).expect("live call");
            c.error = true;
            c.reached = false;
            let delay = match mode {
                PartitionMode::Hang { connect_timeout } => connect_timeout.ns(),
                PartitionMode::FailFast => 0,
            };
            c.done_at = now.saturating_add(delay);
            q.schedule_at(c.done_at, Ev::DepDone { call });
        } else {
            self.send(now, q, call);
        }
    }

    /// A hedge timer fired: if the first call is still out and a connection is free, send a
    /// second call; the first answer wins.
    pub(super) fn hedge(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, generation: u32) {
        let Some(r) = self.reqs.get(tok) else { return };
        if r.hedge.generation != generation
            || r.phase != Phase::Calling
            || r.attempt.call.is_none()
            || r.hedge.call.is_some()
        {
            return;
        }
        let inst = r.who.instance;
        if !self.pool_free(inst, self.pool_id(tok)) {
            return; // a hedge never waits for a connection
        }
        let conn = self.checkout(now, tok, true);
        let call = self.open_call(now, q, tok, true, conn);
        self.reqs.get_mut(tok).expect("live request").hedge.call = Some(call);
    }

    /// The caller gives up on a call: the dependency keeps working on it unless cancellation
    /// propagates.
    pub(super) fn abandon(&mut self, q: &mut EventQueue<Ev>, call: Token) {
        if let Some(c) = self.upstream.calls.get_mut(call) {
            c.req = None;
            if c.counted {
                // The client stops counting it as outstanding.
                c.counted = false;
                dec!(self.gateway.insts[c.instance as usize].clients[c.dep as usize].outstanding[c.replica as usize]);
            }
            self.propagate_cancel(q, call);
        }
    }

    /// Send the cancel of an abandoned call on its way to the dependency, if calls are
    /// cancelled and this one reached it.
    pub(super) fn propagate_cancel(&mut self, q: &mut EventQueue<Ev>, call: Token) {
        if let Some(c) = self.upstream.calls.get(call)
            && let Some(delay) = self.m.dep(c.dep).cancel_delay
            && c.reached
        {
            q.schedule_fixed(delay, Ev::Cancel { call });
        }
    }

    /// A cancel reaches the dependency: a call still queued leaves its queue, one in service
    /// stops and frees its server. An answered call (the token is stale) or one already on
    /// its way back (a fast 503) is left alone.
    pub(super) fn cancel_call(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let Some(c) = self.upstream.calls.get(call) else { return };
        let queued = c.done_at == Time::MAX;
        let in_service = c.holds_server || (self.m.dep(c.dep).capacity.is_none() && !queued);
        if !(queued || in_service) {
            return;
        }
        let c = self.upstream.calls.remove(call).expect("live call");
        debug_assert!(c.req.is_none() && c.reached && !c.counted, "only an abandoned call is cancelled");
        if F::GRAPH && self.m.graph.as_ref().is_some_and(|g| g.service_class(c.dep).is_some()) {
            self.cancel_service(now, q, call);
        }
        dec!(self.upstream.in_flight);
        self.rec.dep_cancelled(now, self.upstream.in_flight);
        if let Some(n) = self.upstream.dep_in_flight.get_mut(c.dep as usize) {
            dec!(*n);
            let n = *n;
            self.rec.graph(GraphEvent::Cancelled { now, dep: c.dep, in_flight: n });
        }
        let r = self.upstream.base[c.dep as usize] + c.replica as usize;
        if c.holds_server && self.m.dep(c.dep).sharing.is_some() {
            self.unshare(now, q, r);
        } else if c.holds_server {
            self.free_server(now, q, r);
        } else if queued && let Some(p) = self.upstream.queue[r].iter().position(|&t| t == call) {
            // Out of the line, so it no longer counts against the queue's length.
            self.upstream.queue[r].remove(p);
        }
    }

    /// A server of replica `r` (numbered in `Upstream::base`'s row) is free: the next queued
    /// call by its dependency's rules (`model::server`) starts service; calls those rules
    /// shed on the way get a 503 at once.
    fn free_server(&mut self, now: Time, q: &mut EventQueue<Ev>, r: usize) {
        dec!(self.upstream.busy[r]);
        // The dependency whose replicas' row holds `r`: the last one starting at or before it
        // (without a service graph, the one dependency).
        let dep = if F::GRAPH { self.upstream.base.partition_point(|&b| b <= r) - 1 } else { 0 };
        let up = &mut self.upstream;
        let calls = &up.calls;
        let mut shed = Vec::new();
        let next = crate::model::server::take_next(
            &self.m.dep(dep as u16).server,
            &mut up.queue[r],
            &mut up.codel[r],
            now,
            |t| calls.get(t).map(|c| c.sent_at),
            &mut shed,
        );
        for call in shed {
            self.shed_call(now, q, call);
        }
        if let Some(next) = next {
            self.upstream.calls.get_mut(next).expect("a live queued call").holds_server = true;
            self.upstream.busy[r] += 1;
            self.serve_call(now, q, next);
        }
    }

    /// The dependency sheds a call without serving it (a full queue, a wait past `max_wait`,
    /// a CoDel drop): a 503 that reaches the caller after the network's round trip. It never
    /// held a server, so it reports no queue wait or service time.
    fn shed_call(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let c = self.upstream.calls.get_mut(call).expect("live call");
        let hop = self.m.dep(c.dep).hop(c.class as u64, c.key, c.attempt as u64);
        c.error = true;
        // Every shed is the dependency's 503 without service: a retry layer tells it from
        // other errors (`Refused::Dependency503`).
        c.refused = true;
        c.served_at = Time::MAX; // never served: no wait or service to report
        c.done_at = now.saturating_add(hop);
        q.schedule_at(c.done_at, Ev::DepDone { call });
    }

    /// Route a call to a replica and into service or its queue.
    fn send(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let c = *self.upstream.calls.get(call).expect("live call");
        let Some(replica) = self.replica_of_call(now, call) else {
            // Every replica ejected and panic off: Envoy's "no healthy upstream" 503, at
            // once, reaching no replica (so outlier detection records nothing).
            let c = self.upstream.calls.get_mut(call).expect("live call");
            c.error = true;
            c.refused = true;
            c.reached = false;
            c.done_at = now;
            q.schedule_at(now, Ev::DepDone { call });
            return;
        };
        let tracked = F::REPLICAS && self.m.scenario.deps()[c.dep as usize].replicas.is_some();
        if tracked {
            self.gateway.insts[c.instance as usize].clients[c.dep as usize].outstanding[replica as usize] += 1;
        }
        let cm = self.upstream.calls.get_mut(call).expect("live call");
        cm.replica = replica;
        cm.counted = tracked;
        self.upstream.in_flight += 1;
        self.rec.dep_start(now, self.upstream.in_flight);
        if F::GRAPH
            && let Some(n) = self.upstream.dep_in_flight.get_mut(c.dep as usize)
        {
            *n += 1;
            let n = *n;
            self.rec.graph(GraphEvent::Start { now, dep: c.dep, in_flight: n });
        }
        if F::GRAPH
            && let Some(class) = self.m.graph.as_ref().and_then(|g| g.service_class(c.dep))
        {
            // A service answers it with a request of its own (`services.rs`).
            self.service_call(now, q, call, class);
            return;
        }
        let r = self.upstream.base[c.dep as usize] + replica as usize;
        match self.m.dep(c.dep).capacity {
            Some((servers, queue)) if self.m.dep(c.dep).sharing.is_some() => {
                if self.upstream.busy[r] < servers.saturating_add(queue) {
                    self.share(now, q, call, r);
                } else {
                    // Every place taken: the dependency sheds the call with a fast 503.
                    self.shed_call(now, q, call);
                }
            }
            Some((servers, queue)) if self.upstream.busy[r] >= servers => {
                if (self.upstream.queue[r].len() as u32) < queue {
                    self.upstream.queue[r].push_back(call);
                } else {
                    // Queue full: the dependency sheds the call with a fast 503.
                    self.shed_call(now, q, call);
                }
            }
            cap => {
                if cap.is_some() {
                    self.upstream.busy[r] += 1;
                    self.upstream.calls.get_mut(call).expect("live call").holds_server = true;
                }
                self.serve_call(now, q, call);
            }
        }
    }

    /// Start serving a call: it holds its server (if capacity is finite) for its service time
    /// only; the network's round trip (`hop`) is added on the answer's way back, so it
    /// delays the caller without occupying the dependency.
    pub(super) fn serve_call(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let c = self.upstream.calls.get_mut(call).expect("live call");
        let factor = if F::REPLICAS { self.m.replica_factor(c.dep, c.replica, now) } else { 1.0 };
        let plan = self.m.dep(c.dep).plan(now, c.class as u64, c.key, c.attempt as u64, factor);
        c.served_at = now;
        c.service = plan.service;
        c.error = plan.error;
        c.done_at = now.saturating_add(plan.latency());
        if c.holds_server && plan.hop > 0 {
            q.schedule_at(now.saturating_add(plan.service), Ev::ServiceEnd { call });
        }
        q.schedule_at(c.done_at, Ev::DepDone { call });
        if F::TRACE
            && let Some(log) = &mut self.trace.records
        {
            let (class, key, attempt, dependency) = (c.class, c.key, c.attempt, c.dep);
            let (latency, error) = (plan.latency(), plan.error);
            log.calls.push(CallRecord { class, key, attempt, dependency, start: now, latency, error });
        }
    }

    /// A call's service ended before its answer reached the caller (the hop is still to
    /// come): its server takes the next queued call. A call cancelled in service is gone.
    pub(super) fn service_end(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        let Some(c) = self.upstream.calls.get_mut(call) else { return };
        if c.holds_server {
            c.holds_server = false;
            let r = self.upstream.base[c.dep as usize] + c.replica as usize;
            self.free_server(now, q, r);
        }
    }

    pub(super) fn dep_done(&mut self, now: Time, q: &mut EventQueue<Ev>, call: Token) {
        // None: the call was cancelled while in service and this answer is never sent.
        let Some(c) = self.upstream.calls.remove(call) else { return };
        if c.counted {
            dec!(self.gateway.insts[c.instance as usize].clients[c.dep as usize].outstanding[c.replica as usize]);
        }
        if c.reached {
            dec!(self.upstream.in_flight);
            let timing = (c.served_at != Time::MAX).then(|| (c.served_at - c.sent_at, c.service));
            self.rec.dep_end(now, timing, c.req.is_none(), self.upstream.in_flight);
            if F::GRAPH
                && let Some(n) = self.upstream.dep_in_flight.get_mut(c.dep as usize)
            {
                dec!(*n);
                let n = *n;
                self.rec.graph(GraphEvent::End { now, dep: c.dep, timing, abandoned: c.req.is_none(), in_flight: n });
            }
        }
        if c.holds_server {
            // Finished service frees a server for the next queued call.
            self.free_server(now, q, self.upstream.base[c.dep as usize] + c.replica as usize);
        }
        let Some(tok) = c.req else { return };
        if c.reached {
            let result = if c.error { OutlierResult::Error } else { OutlierResult::Success };
            self.outlier_result(now, c.instance, c.dep, c.replica, result);
        }
        let r = self.reqs.get_mut(tok).expect("live request");
        let other = if r.attempt.call == Some(call) {
            r.attempt.call = None;
            r.hedge.call.take()
        } else {
            r.hedge.call = None;
            r.attempt.call.take()
        };
        let inst = r.who.instance;
        if !c.error {
            self.keep_open(now, &c);
        }
        self.release_connection(now, q, tok, inst);
        if c.error {
            if let Some(o) = other {
                // The other call may still succeed: wait for it, but no longer than the
                // attempt may last. The timer skipped for this answer is needed now.
                let r = self.reqs.get_mut(tok).expect("live request");
                r.attempt.call = Some(o);
                let due = self.upstream.calls.get(o).map_or(Time::MAX, |c| c.done_at);
                if !r.attempt.timed && r.time.attempt_deadline != Time::MAX && due > r.time.attempt_deadline {
                    r.attempt.timed = true;
                    let deadline = r.time.attempt_deadline.max(now);
                    self.timer(q, tok, deadline, Timer::Attempt);
                }
                return;
            }
        } else if let Some(o) = other {
            self.abandon(q, o);
            self.release_connection(now, q, tok, inst);
        }
        let r = self.reqs.get_mut(tok).expect("live request");
        r.hedge.generation = r.hedge.generation.wrapping_add(1);
        let outcome = if c.error { CallOutcome::Error } else { CallOutcome::Success };
        if c.refused {
            self.attempt_refused_by_dependency(now, q, tok);
        } else if c.connect_failed {
            // Its set-up ran past the connect timeout: a connection that timed out.
            let how = crate::policy::ConnectFailure::TimedOut;
            self.attempt_connect_failed(now, q, tok, how, Cause::ConnectTimeout);
        } else if !c.reached {
            // Cut off by the partition it was sent under: refused at once or hung until the
            // connect timeout.
            let how = match self.m.partition(c.instance, c.dep, c.sent_at) {
                Some(PartitionMode::FailFast) => crate::policy::ConnectFailure::Refused,
                _ => crate::policy::ConnectFailure::TimedOut,
            };
            self.attempt_connect_failed(now, q, tok, how, Cause::DependencyError);
        } else {
            self.attempt_end(now, q, tok, outcome);
        }
    }

    /// Return one of the request's connections to its instance's pool and hand it to the
    /// next waiter.
    pub(super) fn release_connection(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token, inst: u32) {
        let p = self.pool_id(tok);
        let r = self.reqs.get_mut(tok).expect("live request");
        dec!(r.attempt.conns);
        let i = &mut self.gateway.insts[inst as usize];
        dec!(i.conns);
        if p > 0 {
            dec!(i.own[p - 1].conns);
        }
        let conns = i.conns;
        self.rec_pool(now, inst, conns);
        self.graph_pool(now, inst, p);
        loop {
            let i = &mut self.gateway.insts[inst as usize];
            let Some(next) = (if p == 0 { i.pool_q.pop_front() } else { i.own[p - 1].q.pop_front() }) else {
                break;
            };
            if self.reqs.get(next).is_some_and(|r| r.phase == Phase::PoolQueue) {
                dec!(self.gateway.insts[inst as usize].pool_waiting);
                self.rec_pool_waiting(now, inst, self.gateway.insts[inst as usize].pool_waiting);
                self.take_connection(now, q, next);
                break;
            }
        }
    }

    /// The pool request `tok`'s calls take connections from (`Gateway::pool_of`): 0, the
    /// fleet's `pool`, without `fleet.pools`, where no dependency is looked up.
    pub(super) fn pool_id(&self, tok: Token) -> usize {
        if !F::GRAPH
            || self.gateway.pool_of.is_empty()
            || self.is_service_inst(self.reqs.get(tok).expect("live request").who.instance)
        {
            0
        } else {
            self.gateway.pool_of[self.dep_of(tok) as usize] as usize
        }
    }

    /// In a run with a service graph, tell the recorder pool `p`'s connections out on
    /// instance `inst` (`GraphEvent::Pool`): its own pool's, or the fleet pool's part of them.
    pub(super) fn graph_pool(&mut self, now: Time, inst: u32, p: usize) {
        if self.upstream.dep_in_flight.is_empty() || self.is_service_inst(inst) {
            return;
        }
        let i = &self.gateway.insts[inst as usize];
        let in_use = if p == 0 { i.conns - i.own.iter().map(|o| o.conns).sum::<u32>() } else { i.own[p - 1].conns };
        self.rec.graph(GraphEvent::Pool { now, instance: inst, pool: p as u8, in_use });
    }

    /// In a run with a service graph, an attempt of request `tok` waited `waited` for a
    /// connection (`GraphEvent::ConnWait`).
    fn graph_conn_wait(&mut self, tok: Token, arrived: Time, waited: Time) {
        if !self.upstream.dep_in_flight.is_empty() {
            let dep = self.dep_of(tok);
            self.rec.graph(GraphEvent::ConnWait { arrived, dep, waited });
        }
    }

    /// Pool `p` of instance `inst` has a free connection.
    fn pool_free(&self, inst: u32, p: usize) -> bool {
        let i = &self.gateway.insts[inst as usize];
        if p == 0 {
            let own = if F::GRAPH { i.own.iter().map(|o| o.conns).sum::<u32>() } else { 0 };
            let size = if self.is_service_inst(inst) {
                self.pool_limits(inst, 0).0
            } else {
                self.m.scenario.fleet.pool.max_connections
            };
            i.conns - own < size
        } else {
            i.own[p - 1].conns < build::pool_spec(&self.m.scenario, p).0
        }
    }

    pub(super) fn attempt_timer(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get_mut(tok).expect("live request");
        let phase = r.phase;
        match phase {
            Phase::PoolQueue => {
                let (inst, class, arrived, waited) =
                    (r.who.instance, r.who.class, r.time.arrived, now - r.time.attempt_start);
                let outcome = if now >= r.time.attempt_deadline { CallOutcome::Timeout } else { CallOutcome::Error };
                r.phase = Phase::Dequeued; // its pool queue entry is now stale
                dec!(self.gateway.insts[inst as usize].pool_waiting);
                self.rec_pool_waiting(now, inst, self.gateway.insts[inst as usize].pool_waiting);
                self.rec_conn_wait(arrived, class, waited);
                self.graph_conn_wait(tok, arrived, waited);
                self.attempt_end_as(now, q, tok, outcome, Cause::PoolAcquireTimeout);
            }
            Phase::Calling if self.first_byte_in(now, q, tok) => {}
            Phase::Calling => {
                let r = self.reqs.get_mut(tok).expect("live request");
                let calls = [r.attempt.call.take(), r.hedge.call.take()];
                r.hedge.generation = r.hedge.generation.wrapping_add(1);
                let inst = r.who.instance;
                for call in calls.into_iter().flatten() {
                    if let Some(&c) = self.upstream.calls.get(call).filter(|c| c.reached) {
                        self.outlier_result(now, c.instance, c.dep, c.replica, OutlierResult::Timeout);
                    }
                    self.abandon(q, call);
                    self.release_connection(now, q, tok, inst);
                }
                self.attempt_end(now, q, tok, CallOutcome::Timeout);
            }
            _ => {}
        }
    }
}
