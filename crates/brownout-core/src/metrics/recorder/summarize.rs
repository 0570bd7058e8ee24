//! The recorder's summary at the horizon: every accumulator turned into a run's figures.

use super::*;

impl Recorder {
    /// Summarise at the horizon.
    pub fn summary(&mut self, now: Time, events: u64, in_flight_at_end: u64) -> RunSummary {
        let span = (now.max(self.s.warmup + 1) - self.s.warmup) as f64;
        let secs = span / SECOND as f64;
        let costs = self.s.costs;
        let mut classes: Vec<ClassSummary> = self
            .classes
            .iter_mut()
            .zip(&self.s.classes)
            .zip(&self.s.fallbacks)
            .map(|((c, name), &f)| c.summary(name, secs, costs, f))
            .collect();
        if let Some(t) = &mut self.track {
            t.tick(now);
            for (k, c) in classes.iter_mut().enumerate() {
                (c.degraded_fraction, c.degraded_entries) = t.whole(k);
            }
        }
        let n = self.s.instances as f64;
        let inst_span = span * n;
        let pool_integral = Self::fleet_integral(&mut self.pool, now);
        let resources = ResourceSummary {
            workers: occupancy(&mut self.workers, self.s.slots, now, inst_span),
            pool: occupancy(&mut self.pool, self.s.connections, now, inst_span),
            pool_waiting_mean: Self::fleet_integral(&mut self.pool_waiting, now) / inst_span,
            pool_hold_ms_mean: if self.conns_taken == 0 {
                f64::NAN
            } else {
                pool_integral / self.conns_taken as f64 / MILLISECOND as f64
            },
            connections: self.opened.map(|(opened, setup)| ConnectionSummary {
                opened,
                setup_ms_mean: if opened == 0 { f64::NAN } else { setup / opened as f64 / MILLISECOND as f64 },
                setup_share: if pool_integral > 0.0 { setup / pool_integral } else { f64::NAN },
            }),
        };
        let breaker = self.s.has_breaker.then(|| BreakerSummary {
            transitions: self.transitions,
            transitions_per_min: self.transitions as f64 / (secs / 60.0),
            open_fraction: self.open.integral(now) / inst_span,
            half_open_fraction: self.half_open.integral(now) / inst_span,
            cycles: self.cycles,
        });
        let limit = self.s.has_limit.then(|| LimitSummary {
            mean: self.limit_sum.integral(now) / inst_span,
            min: self.limit_sum.low(now) / n,
            max: self.limit_sum.peak(now) / n,
        });
        let business_cost = classes.iter().map(|c| c.business_cost).sum();
        let dependencies = self.graph.figures(now, span, inst_span, &mut classes);
        RunSummary {
            policy: self.s.policy.clone(),
            classes,
            dependency: DependencySummary {
                calls: self.dep_calls,
                calls_per_s: self.dep_calls as f64 / secs,
                peak_in_flight: self.dep_in_flight.peak(now) as u64,
                latency_ms: self.dep_latency.stats(),
                queue_wait_ms: self.dep_wait.stats(),
                time_ms: self.dep_time.stats(),
                throughput_cv: self.win.throughput_cv(),
                abandoned: self.dep_abandoned,
                cancelled: self.dep_cancelled,
                mean_in_flight: self.dep_in_flight.integral(now) / span,
                found_in_flight: self.found_in_flight.to_vec(),
            },
            dependencies,
            breaker,
            limit,
            limiter_queue: self.s.has_limiter.then(|| self.limiter_queue.summary()),
            bulkhead_queue: self.s.has_bulkhead.then(|| self.bulkhead_queue.summary()),
            resources,
            amplification: if self.requests_calling == 0 {
                f64::NAN
            } else {
                self.calls_by_requests as f64 / self.requests_calling as f64
            },
            business_cost,
            per_instance: self.per_instance.iter().map(Tally::outcomes).collect(),
            events,
            in_flight_at_end,
            // The world's state at the horizon, which it fills in (`world::backlog`).
            backlog_at_end: Backlog::default(),
        }
    }
}

/// Occupancy of one resource kind over `inst_span` instance-nanoseconds up to `now`.
fn occupancy(gs: &mut [Gauge], cap: u32, now: Time, inst_span: f64) -> Occupancy {
    let integral: f64 = gs.iter_mut().map(|g| g.integral(now)).sum();
    let sat: f64 = gs.iter_mut().map(|g| g.saturated(now) as f64).sum();
    Occupancy {
        capacity: cap as u64,
        mean: integral / inst_span,
        peak: gs.iter_mut().map(|g| g.peak(now) as u64).max().unwrap_or(0),
        saturated_fraction: sat / inst_span,
    }
}
