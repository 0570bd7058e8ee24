//! Arrivals, worker slots, local work and instance restarts.

use super::*;

impl<R: Record, F: Features> World<'_, R, F> {
    // ---- arrivals and worker slots -------------------------------------------------

    pub(super) fn arrive(&mut self, now: Time, q: &mut EventQueue<Ev>, class: ClassId, source: Source) {
        let c = class as usize;
        let (key, origin, item) = self.identify(class, source);
        self.traffic.arrived += 1;
        let instance = (key % self.m.scenario.fleet.instances as u64) as u32;
        // A user waiting to reload holds a slab entry and an event as a request does: both count.
        let in_flight = self.reqs.len() + self.traffic.pending_reloads.len();
        if in_flight as u64 >= self.m.scenario.limits.max_in_flight {
            let limit = self.m.scenario.limits.max_in_flight;
            self.progress.abort = Some(RunError::TooManyInFlight { limit, at: now });
            return;
        }
        let (user, reloads) = match source {
            Source::User { user, k } => (Some((user, k)), 0),
            Source::Reload { number, .. } => (None, number),
            Source::Arrival => (None, 0),
        };
        let who = Identity { class, instance, key, origin, item, user, reloads };
        let tok = self.insert_req(Req::fresh(who, now, now, Phase::SlotQueue));
        self.link_arrival(tok, class);
        self.rec.arrival(now, c);
        if F::TRACE && self.trace.records.is_some() {
            self.log_arrival(now, class, source, key, instance, item);
        }
        for li in 0..if F::STACK { self.layout.arrival_layers[c].len() } else { 0 } {
            let l = self.layout.arrival_layers[c][li];
            self.tell_request(now, q, instance, class, l);
        }
        let inst = &mut self.gateway.insts[instance as usize];
        let w = &self.m.scenario.fleet.workers;
        if inst.workers < w.slots {
            self.take_worker(now, q, tok);
        } else if inst.worker_waiting < w.queue && w.max_wait.is_none_or(|d| d.ns() > 0) {
            // No max_wait: wait as long as it takes (bounded by the queue length).
            inst.worker_waiting += 1;
            inst.worker_q.push_back(tok);
            match w.max_wait {
                Some(d) => self.timer_fixed(q, tok, d.ns(), Timer::SlotWait),
                None => {
                    self.bump_generation(tok);
                }
            }
        } else {
            self.rec.slot_wait(now, c, 0);
            self.fail_as(tok, Cause::WorkerSlotsFull);
            self.respond(now, q, tok, Outcome::Rejected, None);
        }
    }

    /// Layer `l` of `instance`, one that listens (`Layout::arrival_layers` and `call_layers`
    /// hold only those), hears of a request of `class` (`Policy::on_request`: a retry
    /// budget's deposit); a changed status is noted.
    pub(super) fn tell_request(&mut self, now: Time, q: &mut EventQueue<Ev>, instance: u32, class: ClassId, l: u8) {
        debug_assert!(self.layout.hooks[l as usize].has(Hooks::ON_REQUEST), "a layer that does not listen");
        if self.layer_mut(instance, l).policy.on_request(now, class) {
            self.note(now, q, instance, l);
        } else {
            let layer = self.layer(instance, l);
            debug_assert!(layer.policy.status() == layer.last, "on_request changed the status but said not");
        }
    }

    /// A new request's key, the key of the request it reloads (its own if none) and its item.
    fn identify(&mut self, class: ClassId, source: Source) -> (u64, u64, u32) {
        let c = class as usize;
        match source {
            Source::Arrival => {
                // Open-loop arrivals come in the same order under every policy set, so the
                // class's item stream hands each the same item.
                let key = self.traffic.next_index[c];
                self.traffic.next_index[c] += 1;
                let item = self.m.popularity.as_ref().map_or(0, |p| p.draw(&mut self.traffic.item_rng[c]));
                (key, key, item)
            }
            Source::User { user, k } => {
                let key = self.user_key(class, user, k);
                let item = self
                    .m
                    .popularity
                    .as_ref()
                    .map_or(0, |p| p.draw(&mut self.draws.item.rng(((class as u64) << 48) ^ key, 0)));
                (key, key, item)
            }
            Source::Reload { origin, number, item } => (self.reload_key(class, origin, number), origin, item),
        }
    }

    /// The key of closed-loop user `user`'s `k`-th request of `class`.
    fn user_key(&self, class: ClassId, user: u32, k: u32) -> u64 {
        DERIVED | (self.draws.user_key.u64(((class as u64) << 32) | user as u64, k as u64) >> 1)
    }

    /// The key of reload `number` of the request of `class` keyed `origin`.
    fn reload_key(&self, class: ClassId, origin: u64, number: u32) -> u64 {
        DERIVED | (self.draws.reload_key.u64(origin, ((class as u64) << 32) | number as u64) >> 1)
    }

    /// The think time before closed-loop user `user`'s `k`-th request of `class`.
    pub(super) fn think(&self, class: ClassId, user: u32, k: u32) -> Time {
        let mut rng = self.draws.think.rng(((class as u64) << 32) | user as u64, k as u64);
        self.traffic.arrivals[class as usize].think(&mut rng)
    }

    /// Record a request as it arrives (only when the run keeps records).
    fn log_arrival(&mut self, now: Time, class: ClassId, source: Source, key: u64, instance: u32, item: u32) {
        let origin = match source {
            Source::Arrival => Origin::Arrival(key),
            Source::User { user, k } => Origin::User { user, k, think: self.think(class, user, k) },
            Source::Reload { origin, number, .. } => Origin::Reload { of: origin, number },
        };
        let rec = RequestRecord { class, origin, key, arrived: now, instance, item };
        self.trace.records.as_mut().expect("recording").requests.push(rec);
    }

    pub(super) fn take_worker(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get_mut(tok).expect("live request");
        let (inst, class, waited, arrived) = (r.who.instance, r.who.class, now - r.time.arrived, r.time.arrived);
        r.worker = true;
        r.phase = Phase::Started;
        debug_assert!(
            self.gateway.insts[inst as usize].workers < self.workers_of(inst).slots,
            "a worker slot beyond the limit"
        );
        let i = &mut self.gateway.insts[inst as usize];
        i.workers += 1;
        let busy = i.workers;
        self.rec_workers(now, inst, busy);
        self.rec_slot_wait(arrived, class, waited);
        if self.is_service_class(class) {
            // A service's own work before its plan, drawn as a leaf's service time.
            let d = self.service_work(now, tok);
            self.reqs.get_mut(tok).expect("live request").phase = Phase::Local;
            self.timer(q, tok, now.saturating_add(d), Timer::LocalWork);
            return;
        }
        match &self.m.work[class as usize] {
            Some(dist) => {
                let r = self.reqs.get(tok).expect("live request");
                let key = ((class as u64) << 48) ^ r.who.key;
                let d = dist.sample(&mut self.draws.work.rng(key, 0)).max(0.0) as Time;
                self.reqs.get_mut(tok).expect("live request").phase = Phase::Local;
                self.timer(q, tok, now.saturating_add(d), Timer::LocalWork);
            }
            None => self.after_local(now, q, tok),
        }
    }

    pub(super) fn release_worker(&mut self, now: Time, q: &mut EventQueue<Ev>, instance: u32) {
        let i = &mut self.gateway.insts[instance as usize];
        dec!(i.workers);
        let busy = i.workers;
        self.rec_workers(now, instance, busy);
        while let Some(next) = self.gateway.insts[instance as usize].worker_q.pop_front() {
            if self.reqs.get(next).is_some_and(|r| r.phase == Phase::SlotQueue) {
                dec!(self.gateway.insts[instance as usize].worker_waiting);
                self.bump_generation(next);
                self.take_worker(now, q, next);
                break;
            }
        }
    }

    pub(super) fn after_local(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let class = self.reqs.get(tok).expect("live request").who.class;
        if self.is_service_class(class) || self.m.scenario.classes[class as usize].calls_dependency {
            self.begin_calls(now, q, tok);
        } else {
            self.respond(now, q, tok, Outcome::Ok, None);
        }
    }

    /// Restart an instance: its in-flight requests fail (connection reset), its worker
    /// slots, pool and queues empty, and state that is not persistent is lost.
    pub(super) fn restart(&mut self, now: Time, q: &mut EventQueue<Ev>, instance: u32, policies: bool, cache: bool) {
        for tok in self.reqs.tokens() {
            let r = self.reqs.get_mut(tok).expect("live request");
            if r.who.instance != instance {
                continue;
            }
            self.crash_layers(now, q, tok);
            let r = self.reqs.get_mut(tok).expect("live request");
            r.worker = false;
            r.attempt.conns = 0;
            let calls = [r.attempt.call.take(), r.hedge.call.take()];
            for call in calls.into_iter().flatten() {
                if let Some(c) = self.upstream.calls.get_mut(call) {
                    c.req = None;
                    c.counted = false;
                    self.propagate_cancel(q, call);
                }
            }
            if self.is_child(tok) {
                // A call of a plan ends with its request (met in this same loop).
                self.reqs.discard(tok);
                dec!(self.plans.children);
                continue;
            }
            let r = self.reqs.get_mut(tok).expect("live request");
            r.answer = Answer { outcome: Outcome::Error, staleness: None, cause: Some(Cause::CrashRestart) };
            self.finish(now, q, tok);
        }
        let i = &mut self.gateway.insts[instance as usize];
        i.workers = 0;
        i.conns = 0;
        i.worker_q.clear();
        i.worker_waiting = 0;
        i.pool_q.clear();
        i.pool_waiting = 0;
        for own in &mut i.own {
            own.conns = 0;
            own.q.clear();
        }
        // Its open connections are reset with it.
        i.idle.iter_mut().for_each(VecDeque::clear);
        for client in &mut i.clients {
            client.outstanding.fill(0);
            if let Some(o) = &mut client.outlier {
                o.restart(now);
            }
            if let Some(h) = &mut client.health {
                h.restart(now);
            }
        }
        self.rec_pool_waiting(now, instance, 0);
        self.rec_workers(now, instance, 0);
        self.rec_pool(now, instance, 0);
        for p in 0..=self.gateway.insts[instance as usize].own.len() {
            self.graph_pool(now, instance, p);
        }
        if !policies {
            self.rebuild_layers(now, q, instance);
        }
        if !cache && let Some(stock) = &mut self.stock {
            stock.clear(instance);
        }
        if !cache && let Some(last) = &mut self.last_answers {
            last.clear(instance);
        }
    }

    /// Fresh policy state for an instance (fleet-wide layers live in the store and survive).
    fn rebuild_layers(&mut self, now: Time, q: &mut EventQueue<Ev>, instance: u32) {
        let run = self.m.run_stack(self.policy);
        // A restart is a gateway instance's: its own layers are rebuilt.
        for (l, spec) in run.layers[..run.gateway].iter().enumerate() {
            if self.layout.fleet[l].is_some() || spec.persistent {
                continue;
            }
            let fresh = build::build_layer(self.m, spec, l, instance);
            let layer = &mut self.gateway.insts[instance as usize].layers[l];
            // Keep the wake generation monotone so the old policy's timers stay tombstones,
            // and the last status, so `note` reports what changed.
            *layer = LayerRt { last: layer.last, wake_generation: layer.wake_generation.wrapping_add(1), ..fresh };
            self.trace.log_why = Some("instance restarted: policy state reset");
            self.note(now, q, instance, l as u8);
            self.trace.log_why = None;
        }
    }

    /// Tell the layers a crashed request had passed: an attempt in flight fails, one still
    /// waiting was not executed, and layers outside a retry layer see the request fail.
    /// This matters for state that survives the restart (persistent or fleet-wide layers:
    /// a limiter must get its permits back); the other layers are rebuilt anyway.
    fn crash_layers(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) {
        let r = self.reqs.get(tok).expect("live request");
        let (route, inst, attempt, pos, phase) = (
            self.route_of(r.who.class as usize, tok),
            r.who.instance,
            r.attempt.number,
            r.attempt.pos as usize,
            r.phase,
        );
        let inner = self.layout.inner_start[route] as usize;
        match phase {
            Phase::Calling => {
                for p in (inner..pos).rev() {
                    let l = self.layout.class_layers[route][p];
                    let r = self.reqs.get(tok).expect("live request");
                    let outcome = CallOutcome::Error;
                    let done = Completed::new(now, r.who.class, r.attempt.id, self.admitted_at(tok, p), outcome);
                    self.deliver(now, q, inst, l, Notice::Complete(done));
                }
            }
            Phase::LayerQueue | Phase::PoolQueue => {
                if phase == Phase::LayerQueue {
                    // It leaves the queue it waits in (its entry becomes a tombstone).
                    let l = self.layout.class_layers[route][pos];
                    let parked = self.reqs.get(tok).expect("live request").time.attempt_start;
                    self.layer_waited(now, parked, l);
                    dec!(self.layer_mut(inst, l).waiting);
                    let att = self.attempt_of(now, tok, l);
                    self.layer_mut(inst, l).policy.left_queue(&att);
                    self.note(now, q, inst, l);
                }
                self.cancel_admitted(now, q, tok)
            }
            _ => {}
        }
        let outer_open = inner > 0
            && match phase {
                Phase::Calling | Phase::Backoff => true,
                Phase::LayerQueue | Phase::PoolQueue => attempt > 1,
                _ => false,
            };
        if outer_open {
            self.complete_outer(now, q, tok, CallOutcome::Error);
        }
    }
}
