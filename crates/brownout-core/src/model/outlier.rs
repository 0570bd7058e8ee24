//! Envoy outlier detection over the dependency's replicas, as each gateway instance's
//! balancer keeps it (one detector per Envoy): a sans-IO state machine told the time.
//!
//! Semantics follow Envoy's `outlier_detection_impl.cc` (v1.39) with
//! `split_external_local_origin_errors: false` (the default), where every result is an HTTP
//! code:
//! - A replica's error answer is a 5xx (a 500, not a gateway failure). An attempt timeout
//!   while the call is out is Envoy's `LocalOriginTimeout`, a 504: a 5xx and a gateway
//!   failure, recorded on the replica at the moment the gateway gives up. A call the gateway
//!   abandoned (a hedge that lost, a call after its timeout) records nothing more. A success
//!   resets both consecutive counters; a 500 resets the gateway-failure counter.
//!   Calls cut off by a network partition reach no replica and record nothing.
//! - A counter reaching its threshold (exactly, `==`, so a threshold of 0 never matches:
//!   that detector is off) on a replica that is not ejected resets that counter and asks
//!   to eject it, which happens at once if the cap allows and
//!   the enforcing percentage's draw says so (a counter-based draw keyed by the instance and
//!   the detection's number).
//! - The cap: an ejection happens only if `100 x (ejected + 1) / replicas <=
//!   max_ejection_percent` (so 10 % of 9 replicas allows none; Envoy's
//!   `always_eject_one_host`, off by default, is not modelled).
//! - Every `interval` (ticks at interval, 2 x interval, ... of the run or since the instance
//!   restarted), in `DetectorImpl::onIntervalTimer`'s order: each ejected replica whose
//!   `min(base_ejection_time x backoff, max_ejection_time)` has passed since its ejection
//!   returns, its consecutive counters reset and its return time noted (`unejectHost`).
//!   Then success rate: over the replicas not ejected with at least
//!   `success_rate_request_volume` results in the interval just ended, if there are at
//!   least `success_rate_minimum_hosts`, each whose success rate (percent) lies strictly
//!   below `mean - stdev x factor / 1000` (population stdev) is ejected, in replica order,
//!   within the cap. The interval's counts then start again. Last, each replica not
//!   ejected that returned at least `interval` ago lowers its backoff by one (so a replica
//!   ejected again one interval after its return keeps its backoff). Each ejection raises
//!   the backoff by one while `backoff x base < max + base` (30, 60, 90 ... 300 s with the
//!   defaults). `max_ejection_time` unset is the larger of 300 s and the base. A result at
//!   exactly a tick counts in the next interval.
//! - The balancer skips ejected replicas, unless fewer than `healthy_panic_threshold`
//!   percent of the replicas are left (Envoy's `isHostSetInPanic`, default 50 %), when it
//!   uses them all. With the threshold at 0 and every replica ejected, there is no replica
//!   to call: the call fails at once (Envoy's "no healthy upstream").
//!
//! Not modelled: failure-percentage ejection, `max_ejection_time_jitter`, split local-origin
//! errors, active health checks, distinct 5xx codes (a replica's 503 counts as a 500).

use crate::engine::{Counter, Time};
use crate::scenario::OutlierDetection;

/// What a call to a replica came to, as outlier detection sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Result {
    /// A success (any non-5xx).
    Success,
    /// The replica answered with an error: a 500.
    Error,
    /// The gateway's attempt timeout fired while the call was out: a 504.
    Timeout,
}

/// Why a replica is asked to be ejected (each with its enforcing percentage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Consecutive5xx,
    GatewayFailure,
    SuccessRate,
}

/// One replica as the detector sees it.
#[derive(Debug, Clone, Default, PartialEq)]
struct Host {
    consecutive_5xx: u32,
    consecutive_gateway: u32,
    /// Results and successes in the current interval.
    total: u64,
    success: u64,
    /// When it was ejected, while it is.
    ejected_at: Option<Time>,
    /// When it last returned from an ejection (None: never).
    returned_at: Option<Time>,
    /// Ejection-time multiplier.
    backoff: u64,
}

impl Host {
    /// Back from an ejection at `now`: both consecutive counters start again
    /// (`DetectorImpl::unejectHost`), so a few errors cannot re-eject it at once.
    fn uneject(&mut self, now: Time) {
        self.ejected_at = None;
        self.returned_at = Some(now);
        self.consecutive_5xx = 0;
        self.consecutive_gateway = 0;
    }
}

/// One gateway instance's outlier detector; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Outlier {
    cfg: OutlierDetection,
    hosts: Vec<Host>,
    /// Replicas ejected now (count).
    ejected: u32,
    /// The next interval tick.
    next_tick: Time,
    /// Draws for the enforcing percentages, keyed by (instance, detection number).
    draws: Counter,
    instance: u64,
    detections: u64,
    /// Total ejections so far (count), for tests and reports.
    ejections: u64,
}

impl Outlier {
    /// A detector over `replicas` replicas for gateway instance `instance`, started at `now`.
    pub(crate) fn new(cfg: &OutlierDetection, replicas: u32, draws: Counter, instance: u32, now: Time) -> Self {
        let mut o = Self {
            cfg: cfg.clone(),
            hosts: vec![Host::default(); replicas as usize],
            ejected: 0,
            next_tick: 0,
            draws,
            instance: u64::from(instance),
            detections: 0,
            ejections: 0,
        };
        o.restart(now);
        o
    }

    /// The instance restarted at `now`: a fresh detector, ticking from `now`.
    pub(crate) fn restart(&mut self, now: Time) {
        self.hosts.iter_mut().for_each(|h| *h = Host::default());
        self.ejected = 0;
        self.next_tick = now.saturating_add(self.cfg.interval.ns());
    }

    /// Is `replica` ejected now (as of the last `advance`)?
    pub(crate) fn is_ejected(&self, replica: u32) -> bool {
        self.hosts[replica as usize].ejected_at.is_some()
    }

    /// Should the balancer skip ejected replicas? False when none is ejected, or when fewer
    /// than `healthy_panic_threshold` percent are left (panic: every replica takes calls).
    pub(crate) fn filters(&self) -> bool {
        let n = self.hosts.len() as u64;
        let threshold = u64::from(self.cfg.healthy_panic_threshold.min(100));
        self.ejected > 0 && 100 * (n - u64::from(self.ejected)) >= threshold * n
    }

    /// Ejections so far (count).
    #[cfg(test)]
    pub(crate) fn ejections(&self) -> u64 {
        self.ejections
    }

    /// Run every interval tick up to and including `now`.
    pub(crate) fn advance(&mut self, now: Time) {
        let interval = self.cfg.interval.ns();
        if self.next_tick > now {
            return;
        }
        // The first tick closes the interval that holds every result so far.
        let first = self.next_tick;
        self.tick(first);
        self.next_tick = first.saturating_add(interval);
        if self.next_tick <= now && self.next_tick > first {
            // The ticks after it saw no results: returns and backoff decay only, at once.
            let k = (now - self.next_tick) / interval + 1;
            self.quiet_ticks(self.next_tick, k);
            self.next_tick = self.next_tick.saturating_add(k.saturating_mul(interval));
        }
    }

    /// `k` ticks from `first` with no results in their intervals: what `tick` would do with
    /// empty counts (no success-rate ejection), computed per replica without looping.
    fn quiet_ticks(&mut self, first: Time, k: u64) {
        let (interval, base, max) =
            (self.cfg.interval.ns(), self.cfg.base_ejection_time.ns(), self.cfg.max_ejection().ns());
        for h in &mut self.hosts {
            let Some(at) = h.ejected_at else {
                // Returns happen at ticks, so the last one is at least an interval before
                // `first`: every quiet tick lowers the backoff.
                if h.returned_at.is_some() {
                    h.backoff = h.backoff.saturating_sub(k);
                }
                continue;
            };
            let due = at.saturating_add(base.saturating_mul(h.backoff).min(max));
            // The first of the ticks (numbered from 0) at or after `due`.
            let j = if due <= first { 0 } else { (due - first).div_ceil(interval) };
            if j < k {
                let back = first + j * interval;
                h.uneject(back);
                self.ejected -= 1;
                // Not at its return tick (returned 0 s before), at each one after.
                h.backoff = h.backoff.saturating_sub(k - 1 - j);
            }
        }
    }

    /// Record a result from `replica` at `now`.
    pub(crate) fn record(&mut self, now: Time, replica: u32, result: Result) {
        self.advance(now);
        let h = &mut self.hosts[replica as usize];
        h.total += 1;
        match result {
            Result::Success => {
                h.success += 1;
                h.consecutive_5xx = 0;
                h.consecutive_gateway = 0;
                return;
            }
            Result::Error => h.consecutive_gateway = 0,
            Result::Timeout => {
                h.consecutive_gateway += 1;
                if h.consecutive_gateway == self.cfg.consecutive_gateway_failure && h.ejected_at.is_none() {
                    h.consecutive_gateway = 0;
                    self.eject(now, replica, Kind::GatewayFailure);
                }
            }
        }
        let h = &mut self.hosts[replica as usize];
        h.consecutive_5xx += 1;
        if h.consecutive_5xx == self.cfg.consecutive_5xx && h.ejected_at.is_none() {
            h.consecutive_5xx = 0;
            self.eject(now, replica, Kind::Consecutive5xx);
        }
    }

    /// Eject `replica` at `now` if the cap allows and the enforcing draw says so.
    fn eject(&mut self, now: Time, replica: u32, kind: Kind) {
        let n = self.hosts.len() as u64;
        if 100 * (u64::from(self.ejected) + 1) > u64::from(self.cfg.max_ejection_percent) * n {
            return;
        }
        let enforcing = match kind {
            Kind::Consecutive5xx => self.cfg.enforcing_consecutive_5xx,
            Kind::GatewayFailure => self.cfg.enforcing_consecutive_gateway_failure,
            Kind::SuccessRate => self.cfg.enforcing_success_rate,
        };
        self.detections += 1;
        let enforced = match enforcing {
            0 => false,
            100.. => true,
            p => self.draws.u64(self.instance, self.detections) % 100 < u64::from(p),
        };
        if !enforced {
            return;
        }
        let (base, max) = (self.cfg.base_ejection_time.ns(), self.cfg.max_ejection().ns());
        let h = &mut self.hosts[replica as usize];
        if h.backoff.saturating_mul(base) < max.saturating_add(base) {
            h.backoff += 1;
        }
        h.ejected_at = Some(now);
        self.ejected += 1;
        self.ejections += 1;
    }

    /// One interval sweep at `now`: returns, success-rate ejections, backoff decay.
    fn tick(&mut self, now: Time) {
        let (base, max) = (self.cfg.base_ejection_time.ns(), self.cfg.max_ejection().ns());
        for h in &mut self.hosts {
            if let Some(at) = h.ejected_at
                && base.saturating_mul(h.backoff).min(max) <= now - at
            {
                h.uneject(now);
                self.ejected -= 1;
            }
        }
        self.success_rate(now);
        let interval = self.cfg.interval.ns();
        for h in &mut self.hosts {
            if h.ejected_at.is_none() && h.returned_at.is_some_and(|r| now - r >= interval) {
                h.backoff = h.backoff.saturating_sub(1);
            }
        }
    }

    /// The success-rate pass of a tick at `now` over the interval just ended.
    fn success_rate(&mut self, now: Time) {
        let volume = u64::from(self.cfg.success_rate_request_volume);
        let rates: Vec<(u32, f64)> = (self.hosts.iter().enumerate())
            .filter(|(_, h)| h.ejected_at.is_none() && h.total >= volume && h.total > 0)
            .map(|(i, h)| (i as u32, 100.0 * h.success as f64 / h.total as f64))
            .collect();
        for h in &mut self.hosts {
            (h.total, h.success) = (0, 0);
        }
        if rates.is_empty() || rates.len() < self.cfg.success_rate_minimum_hosts as usize {
            return;
        }
        let k = rates.len() as f64;
        let mean = rates.iter().map(|r| r.1).sum::<f64>() / k;
        let stdev = (rates.iter().map(|r| (r.1 - mean).powi(2)).sum::<f64>() / k).sqrt();
        let threshold = mean - stdev * f64::from(self.cfg.success_rate_stdev_factor) / 1000.0;
        for (replica, rate) in rates {
            if rate < threshold {
                self.eject(now, replica, Kind::SuccessRate);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SECOND;

    /// A config as a scenario spells it (`Option` fields without `Some`).
    fn config(cfg: &str) -> OutlierDetection {
        ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(cfg)
            .unwrap()
    }

    fn detector(replicas: u32, cfg: &str) -> Outlier {
        let cfg = config(cfg);
        Outlier::new(&cfg, replicas, Counter::new(1, 2), 0, 0)
    }

    #[test]
    fn five_consecutive_errors_eject_and_a_success_in_between_resets() {
        let mut o = detector(10, "()");
        for _ in 0..4 {
            o.record(SECOND, 3, Result::Error);
        }
        o.record(SECOND, 3, Result::Success);
        for _ in 0..4 {
            o.record(SECOND, 3, Result::Error);
        }
        assert!(!o.is_ejected(3));
        o.record(SECOND, 3, Result::Timeout);
        assert!(o.is_ejected(3));
        assert_eq!(o.ejections(), 1);
    }

    #[test]
    fn ejection_time_grows_base_times_n_and_returns_at_the_next_tick() {
        // interval 10 s, base 30 s: ejected at 1 s, back at the first tick with 30 s gone
        // (40 s); ejected again at 41 s for 60 s: back at the tick at 110 s (69 s gone;
        // 100 s gives only 59 s).
        let mut o = detector(10, "(consecutive_5xx: 1)");
        o.record(SECOND, 0, Result::Error);
        o.advance(39 * SECOND);
        assert!(o.is_ejected(0));
        o.advance(40 * SECOND);
        assert!(!o.is_ejected(0));
        o.record(41 * SECOND, 0, Result::Error);
        o.advance(100 * SECOND);
        assert!(o.is_ejected(0));
        o.advance(110 * SECOND);
        assert!(!o.is_ejected(0));
    }

    #[test]
    fn the_cap_counts_the_new_ejection() {
        // 10 % of 10 replicas: one; of 9 replicas: none (100 x 1 / 9 = 11.1 % > 10 %).
        let mut o = detector(10, "(consecutive_5xx: 1)");
        o.record(0, 0, Result::Error);
        o.record(0, 1, Result::Error);
        assert!(o.is_ejected(0) && !o.is_ejected(1));
        let mut o = detector(9, "(consecutive_5xx: 1)");
        o.record(0, 0, Result::Error);
        assert!(!o.is_ejected(0));
    }

    #[test]
    fn enforcing_zero_detects_but_never_ejects() {
        // Timeouts count as gateway failures, whose enforcing default is 0, and as 5xx.
        let mut o = detector(10, "(consecutive_5xx: 100, consecutive_gateway_failure: 2)");
        o.record(0, 0, Result::Timeout);
        o.record(0, 0, Result::Timeout);
        assert!(!o.is_ejected(0));
    }

    /// `n` results on `replica` at `now`, `ok` of them successes (successes first).
    fn feed(o: &mut Outlier, now: Time, replica: u32, n: u32, ok: u32) {
        for k in 0..n {
            o.record(now, replica, if k < ok { Result::Success } else { Result::Error });
        }
    }

    #[test]
    fn success_rate_ejects_below_mean_minus_stdev_times_factor() {
        // Envoy's worked example (20 hosts, 200 calls each per interval): 17 at 99.5 %, one
        // each at 99.0 %, 97.0 % and 80.0 %. Interval 1: mean 98.375, population stdev
        // sqrt(361.4375 / 20) = 4.2511, threshold 98.375 - 1.9 x 4.2511 = 90.30: only the
        // 80 % host (19) goes (cap: 1 of 20 = 5 % <= 10 %). Interval 2, without it: mean
        // 99.342, stdev sqrt(6.0263 / 19) = 0.5632, threshold 98.27: the 97 % host (18) goes
        // (2 of 20 = 10 %). Interval 3: a third ejection would be 15 %: none.
        // consecutive_5xx is set out of reach (the errors come last in each batch).
        let mut o = detector(20, "(consecutive_5xx: 1000)");
        let interval = |o: &mut Outlier, k: u64| {
            let at = (k - 1) * 10 * SECOND + SECOND;
            for h in 0..17 {
                feed(o, at, h, 200, 199);
            }
            feed(o, at, 17, 200, 198);
            feed(o, at, 18, 200, 194);
            feed(o, at, 19, 200, 160);
            o.advance(k * 10 * SECOND);
        };
        interval(&mut o, 1);
        assert!(o.is_ejected(19) && !o.is_ejected(18));
        interval(&mut o, 2);
        assert!(o.is_ejected(18) && !o.is_ejected(17));
        interval(&mut o, 3);
        assert!(!o.is_ejected(17));
        assert_eq!(o.ejections(), 2);
    }

    #[test]
    fn success_rate_needs_enough_hosts_with_enough_volume() {
        // Four hosts at 100 % with 100 calls, a fifth failing all of its 99 calls: under
        // the volume, so four hosts count (minimum 5): no ejection. One more call makes it
        // count: mean 80, stdev 40, threshold 80 - 1.9 x 40 = 4 > 0: ejected.
        let mut o = detector(10, "(consecutive_5xx: 1000, max_ejection_percent: 100)");
        let batch = |o: &mut Outlier, at: Time, last: u32| {
            for h in 0..4 {
                feed(o, at, h, 100, 100);
            }
            feed(o, at, 4, last, 0);
        };
        batch(&mut o, SECOND, 99);
        o.advance(10 * SECOND);
        assert_eq!(o.ejections(), 0);
        batch(&mut o, 11 * SECOND, 100);
        o.advance(20 * SECOND);
        assert!(o.is_ejected(4));
    }

    #[test]
    fn max_ejection_time_defaults_to_the_larger_of_300s_and_the_base() {
        // `outlier_detection_impl.cc`, `DetectorConfig::DetectorConfig`: an unset
        // max_ejection_time is std::max(DEFAULT_MAX_EJECTION_TIME_MS (300 s),
        // base_ejection_time). A 400 s base ejects for 400 s: ejected at 1 s, still out at
        // the tick at 400 s (399 s gone), back at the tick at 410 s (409 s gone).
        let mut o = detector(10, "(consecutive_5xx: 1, base_ejection_time: \"400s\")");
        o.record(SECOND, 0, Result::Error);
        o.advance(400 * SECOND);
        assert!(o.is_ejected(0), "a 400 s base must not be cut to 300 s");
        o.advance(410 * SECOND);
        assert!(!o.is_ejected(0));
    }

    #[test]
    fn a_max_ejection_time_below_the_base_is_refused() {
        // `outlier_detection_impl.cc`, `DetectorImpl::create`: "outlier detector's
        // max_ejection_time cannot be smaller than base_ejection_time".
        let cfg = config("(base_ejection_time: \"400s\", max_ejection_time: \"300s\")");
        let (field, _) = cfg.check().expect_err("max below base");
        assert_eq!(field, "max_ejection_time");
        let cfg = config("(base_ejection_time: \"300s\", max_ejection_time: \"300s\")");
        assert!(cfg.check().is_ok());
    }

    #[test]
    fn returning_resets_the_consecutive_counters() {
        // `outlier_detection_impl.cc`, `DetectorImpl::unejectHost`: resetConsecutive5xx and
        // resetConsecutiveGatewayFailure on every return. Ejected after 3 errors (counter
        // reset), 2 more arrive while it is out (a straggler, or panic routing): counter 2.
        // Back at the tick at 40 s with both counters at 0, so one error does not eject it
        // again; three do.
        let mut o = detector(
            10,
            "(consecutive_5xx: 3, consecutive_gateway_failure: 3, enforcing_consecutive_gateway_failure: 100)",
        );
        for _ in 0..3 {
            o.record(SECOND, 0, Result::Error);
        }
        assert!(o.is_ejected(0));
        o.record(2 * SECOND, 0, Result::Timeout);
        o.record(2 * SECOND, 0, Result::Timeout);
        o.advance(40 * SECOND);
        assert!(!o.is_ejected(0));
        o.record(41 * SECOND, 0, Result::Timeout);
        assert!(!o.is_ejected(0), "one timeout after the return must not eject (counters reset)");
        o.record(41 * SECOND, 0, Result::Timeout);
        o.record(41 * SECOND, 0, Result::Timeout);
        assert!(o.is_ejected(0));
    }

    #[test]
    fn success_rate_re_ejections_grow_30_60_90_120() {
        // `outlier_detection_impl.cc`, `DetectorImpl::onIntervalTimer`: returns first, then
        // `processSuccessRateEjections`, then the backoff of each host NOT ejected goes down
        // by one only once now - last_unejection_time >= interval. Five hosts, interval
        // 10 s, base 30 s; hosts 0..3 answer 100 of 100, host 4 fails its 100 whenever it
        // takes calls: mean 80, stdev 40, threshold 80 - 1.9 x 40 = 4 > 0, so host 4 is
        // ejected at the first tick after each interval it served. Ejected at 10 s (x1),
        // back at 40 s; served [40, 50), ejected at 50 s with the backoff still 1 (back 0 s
        // ago), so x2 = 60 s, back at 110 s; then x3 = 90 s (120 -> 210), x4 = 120 s
        // (220 -> 340).
        let mut o = detector(5, "(consecutive_5xx: 1000, max_ejection_percent: 100)");
        let (mut out_since, mut spans) = (None, Vec::new());
        for k in 1..=40u64 {
            let at = (k - 1) * 10 * SECOND + SECOND;
            for h in 0..4 {
                feed(&mut o, at, h, 100, 100);
            }
            if !o.is_ejected(4) {
                feed(&mut o, at, 4, 100, 0);
            }
            o.advance(k * 10 * SECOND);
            match (o.is_ejected(4), out_since) {
                (true, None) => out_since = Some(k * 10),
                (false, Some(from)) => {
                    spans.push(k * 10 - from);
                    out_since = None;
                }
                _ => {}
            }
        }
        assert_eq!(&spans[..4], &[30, 60, 90, 120]);
    }

    #[test]
    fn the_panic_threshold_is_a_setting() {
        // Envoy's `healthy_panic_threshold` (default 50 %; `load_balancer_impl.cc`,
        // `LoadBalancerBase::isHostSetInPanic`: panic when healthy percent < threshold).
        // Four replicas, three ejected: 25 % healthy. Default 50: panic, every replica
        // takes calls. 0 (Istio's default): never panic, ejected replicas stay skipped.
        let eject3 = |cfg: &str| {
            let mut o = detector(4, cfg);
            for r in 0..3 {
                o.record(SECOND, r, Result::Error);
            }
            o
        };
        assert!(!eject3("(consecutive_5xx: 1, max_ejection_percent: 100)").filters());
        assert!(eject3("(consecutive_5xx: 1, max_ejection_percent: 100, healthy_panic_threshold: 0)").filters());
        // Exactly at the threshold is not panic: 2 of 4 ejected leaves 50 %.
        let mut o = detector(4, "(consecutive_5xx: 1, max_ejection_percent: 100)");
        o.record(SECOND, 0, Result::Error);
        o.record(SECOND, 1, Result::Error);
        assert!(o.filters());
    }

    #[test]
    fn quiet_ticks_at_once_equal_ticks_one_by_one() {
        // Ejections at several backoffs, then a long quiet stretch: jumping to each time
        // in one step and ticking through every interval give the same replicas.
        let cfg = "(consecutive_5xx: 1, interval: \"7s\", base_ejection_time: \"10s\", max_ejection_time: \"45s\", max_ejection_percent: 100)";
        let (mut stepped, mut jumped) = (detector(4, cfg), detector(4, cfg));
        // One tick per call: never a quiet stretch done at once.
        let step_to = |o: &mut Outlier, t: Time| {
            while o.next_tick <= t {
                let n = o.next_tick;
                o.advance(n);
            }
        };
        for (at, r) in [(1, 0), (2, 1), (50, 0), (51, 2), (120, 0), (130, 3), (300, 0)] {
            step_to(&mut stepped, at * SECOND);
            stepped.record(at * SECOND, r, Result::Error);
            jumped.record(at * SECOND, r, Result::Error);
        }
        for end in [310, 333, 400, 1000] {
            step_to(&mut stepped, end * SECOND);
            jumped.advance(end * SECOND);
            assert_eq!(stepped.hosts, jumped.hosts, "at {end} s");
            assert_eq!((stepped.ejected, stepped.next_tick), (jumped.ejected, jumped.next_tick));
        }
    }
}
