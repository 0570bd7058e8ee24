//! Bounded retry with exponential backoff and optional full or proportional jitter.
//!
//! `max_attempts` counts the first call (resilience4j, gRPC); Polly's `MaxRetryAttempts`
//! is `max_attempts - 1`.
//!
//! What is retried is decided here and nowhere else: the world offers every failed attempt
//! ([`Failure`]: an error, a timeout, or a refusal by a layer inside this one or by the
//! dependency) and this layer answers by its predicates `on_error`, `on_timeout`,
//! `on_refusal`, then by `give_up`, a client that gives up with that probability before each
//! retry (the ask's `patience` draw, keyed by request and attempt, so every policy set
//! compared sees the same clients give up).

use serde::{Deserialize, Serialize};

use super::{Admission, Attempt, ConnectFailure, Failure, Policy, Refused, RetryAsk};
use crate::engine::Time;
use crate::policy::{BuildCtx, ConfigError, Facts, PolicyConfig};
use crate::units::Dur;

/// Retry configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    /// Attempts including the first (>= 1).
    pub max_attempts: u32,
    /// Delay before the first retry.
    #[serde(default)]
    pub backoff: Dur,
    /// Multiplier on the delay per further retry (>= 1; 1 = constant delay).
    #[serde(default = "one")]
    pub multiplier: f64,
    /// Cap on the delay (none = uncapped).
    #[serde(default)]
    pub max_backoff: Option<Dur>,
    /// Jitter in [0, 1]: 0 = none, 1 = full jitter (uniform in [0, delay]); in between,
    /// delay * (1 - jitter * u).
    #[serde(default)]
    pub jitter: f64,
    /// Retry timeouts: an attempt whose timeout fired (default true).
    #[serde(default = "yes")]
    pub on_timeout: bool,
    /// Retry failed calls: the dependency's error answers, calls a partition cut off, pool
    /// connections that did not come in time (default true).
    #[serde(default = "yes")]
    pub on_error: bool,
    /// The refusals to retry, any of `Layer429` (a layer inside this one over its limit),
    /// `Layer503` (an open breaker inside this one), `Dependency503` (the dependency's full
    /// queue, or no healthy replica). Default `[Dependency503]`: a layer's refusal ends the
    /// request, the dependency's 503 is retried.
    #[serde(default = "dependency_503")]
    pub on_refusal: Vec<Refused>,
    /// Probability in [0, 1] that the client gives up instead of retrying, drawn before each
    /// retry (0 = never gives up, 1 = never retries; default 0).
    #[serde(default)]
    pub give_up: f64,
    /// Retry calls whose connection failed, never reaching the dependency (a partition: refused
    /// at once, or no answer until the connect timeout). Unset (the default): as `on_error`.
    /// HAProxy's `retries` retry these alone (`HaproxyBackend`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_connect_failure: Option<bool>,
    /// The delay before retrying a connection that was refused, in place of `backoff` (which
    /// then serves every other retry, a timed-out connection's included): HAProxy's
    /// turn-around, min(`timeout connect`, 1 s) before a retry on the same server
    /// (`src/backend.c`, `back_handle_st_cer`). Unset (the default): `backoff`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_delay: Option<Dur>,
    /// No retry once this long has passed since the request's first attempt started
    /// (without cutting the attempt in progress): nginx's `proxy_next_upstream_timeout`
    /// (`src/http/ngx_http_upstream.c`, `ngx_http_upstream_next`: no next try when
    /// `ngx_current_msec - u->peer.start_time >= timeout`, `start_time` set by
    /// `ngx_http_upstream_init_request` before the first try). Unset (the default): no bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_elapsed: Option<Dur>,
    /// Which replica a retry's call goes to. Set only by a proxy preset that expands into
    /// this layer (`HaproxyBackend`); never written in a scenario, where every `Retry`
    /// balances each attempt anew.
    #[serde(skip)]
    #[schemars(skip)]
    pub replica: ReplicaRule,
}

/// Which replica a retry's call goes to, among a dependency's `replicas`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReplicaRule {
    /// Every attempt is balanced anew: a client library's retry, nginx's next upstream.
    #[default]
    Rebalance,
    /// HAProxy's `retries`: a retry stays on the server of the attempt before unless it is
    /// redispatched (`redispatch`: `option redispatch` is set), by
    /// [`super::haproxy::redispatches`].
    Haproxy {
        /// `option redispatch`.
        redispatch: bool,
    },
}

impl ReplicaRule {
    /// Whether a retry keeps the replica of the attempt before: `server_up` says whether
    /// health checks find that replica up (true without checks), `active` how many of the
    /// dependency's replicas they find up.
    pub fn keeps(self, server_up: bool, active: u32) -> bool {
        match self {
            ReplicaRule::Rebalance => false,
            ReplicaRule::Haproxy { redispatch } => !super::haproxy::redispatches(redispatch, server_up, active),
        }
    }
}

fn one() -> f64 {
    1.0
}
fn yes() -> bool {
    true
}
pub(crate) fn dependency_503() -> Vec<Refused> {
    vec![Refused::Dependency503]
}

impl PolicyConfig for RetryConfig {
    const KIND: &'static str = "retry";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Other)
            .attempts_per_call(f64::from(self.max_attempts))
            .may_call_again(true)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        if self.max_attempts == 0 {
            return Err("Retry.max_attempts must be >= 1 (it counts the first call)".into());
        }
        if self.max_elapsed.is_some_and(|m| m.ns() == 0) {
            return Err("Retry.max_elapsed must be > 0 (leave it out for no bound)".into());
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            return Err("Retry.jitter must lie in [0, 1]".into());
        }
        if self.multiplier.is_nan() || self.multiplier < 1.0 {
            return Err("Retry.multiplier must be >= 1".into());
        }
        if !(0.0..=1.0).contains(&self.give_up) {
            return Err("Retry.give_up must lie in [0, 1] (a probability)".into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Retry::new(self))
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Retry {
    cfg: RetryConfig,
}

impl Retry {
    /// Build from config.
    pub fn new(cfg: &RetryConfig) -> Self {
        Self { cfg: cfg.clone() }
    }

    /// The delay before retry number `retry` (1 = first retry), before jitter. Saturates at
    /// `Time::MAX` (never fires) rather than overflow, whatever the multiplier.
    pub fn base_delay(&self, retry: u32) -> Time {
        let backoff = self.cfg.backoff.ns();
        if backoff == 0 {
            return 0; // also with an infinite multiplier, where 0 x inf would be NaN
        }
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        let raw = backoff as f64 * self.cfg.multiplier.powi(exponent);
        let cap = self.cfg.max_backoff.map_or(f64::MAX, |d| d.ns() as f64);
        // `as` saturates: +inf and anything past 2^64 become Time::MAX.
        raw.min(cap) as Time
    }
}

impl Policy for Retry {
    fn hooks(&self) -> crate::policy::Hooks {
        crate::policy::Hooks::RETRY_DELAY
    }

    fn reports_status(&self) -> bool {
        false // `status` is the default, always
    }

    fn admit(&mut self, _attempt: &Attempt) -> Admission {
        Admission::Admit
    }

    fn retry_delay(&mut self, ask: &RetryAsk) -> Option<Time> {
        if ask.attempt >= self.cfg.max_attempts
            || self.cfg.max_elapsed.is_some_and(|m| ask.now.saturating_sub(ask.since) >= m.ns())
        {
            return None;
        }
        let wanted = match ask.failure {
            Failure::Error => self.cfg.on_error,
            Failure::Timeout => self.cfg.on_timeout,
            Failure::Refused(how) => self.cfg.on_refusal.contains(&how),
            Failure::Connect(_) => self.cfg.on_connect_failure.unwrap_or(self.cfg.on_error),
        };
        // `patience` lies in (0, 1): give_up 0 never gives up, 1 always does.
        if !wanted || ask.patience < self.cfg.give_up {
            return None;
        }
        if let (Failure::Connect(ConnectFailure::Refused), Some(delay)) = (ask.failure, self.cfg.refused_delay) {
            return Some(delay.ns());
        }
        let base = self.base_delay(ask.attempt) as f64;
        let jittered = base * (1.0 - self.cfg.jitter * ask.uniform);
        Some(jittered.max(0.0) as Time)
    }

    fn is_retry(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND;
    use crate::policy::CallOutcome;

    fn ask(attempt: u32) -> RetryAsk {
        RetryAsk::new(0, 0, attempt, CallOutcome::Error, 0.5)
    }

    #[test]
    fn three_attempts_means_two_retries_with_exponential_backoff() {
        let mut r = Retry::new(&RetryConfig {
            max_attempts: 3,
            backoff: Dur::ms(100),
            multiplier: 2.0,
            max_backoff: None,
            jitter: 0.0,
            on_timeout: true,
            on_error: true,
            on_refusal: dependency_503(),
            give_up: 0.0,
            on_connect_failure: None,
            refused_delay: None,
            max_elapsed: None,
            replica: Default::default(),
        });
        assert_eq!(r.retry_delay(&ask(1)), Some(100 * MILLISECOND));
        assert_eq!(r.retry_delay(&ask(2)), Some(200 * MILLISECOND));
        assert_eq!(r.retry_delay(&ask(3)), None);
    }

    #[test]
    fn each_predicate_and_the_give_up_draw_decide_alone() {
        let cfg = |on_error, on_timeout, on_refusal: Vec<Refused>, give_up| RetryConfig {
            max_attempts: 3,
            backoff: Dur::ms(100),
            multiplier: 1.0,
            max_backoff: None,
            jitter: 0.0,
            on_timeout,
            on_error,
            on_refusal,
            give_up,
            on_connect_failure: None,
            refused_delay: None,
            max_elapsed: None,
            replica: Default::default(),
        };
        let timeout = RetryAsk::new(0, 0, 1, CallOutcome::Timeout, 0.5);
        let refused = |how| ask(1).failure(Failure::Refused(how));
        let mut r = Retry::new(&cfg(false, true, vec![Refused::Layer429], 0.0));
        assert_eq!(r.retry_delay(&ask(1)), None);
        assert_eq!(r.retry_delay(&timeout), Some(100 * MILLISECOND));
        assert_eq!(r.retry_delay(&refused(Refused::Layer429)), Some(100 * MILLISECOND));
        assert_eq!(r.retry_delay(&refused(Refused::Layer503)), None);
        assert_eq!(r.retry_delay(&refused(Refused::Dependency503)), None);
        // give_up 0.3: a client whose draw is under 0.3 gives up.
        let mut r = Retry::new(&cfg(true, true, dependency_503(), 0.3));
        assert_eq!(r.retry_delay(&ask(1).patience(0.29)), None);
        assert_eq!(r.retry_delay(&ask(1).patience(0.31)), Some(100 * MILLISECOND));
    }

    #[test]
    fn connect_failures_follow_on_error_unless_told_and_a_refusal_waits_the_turn_around() {
        let cfg = |on_error, on_connect_failure, refused_delay| RetryConfig {
            max_attempts: 4,
            backoff: Dur::ms(0),
            multiplier: 1.0,
            max_backoff: None,
            jitter: 0.0,
            on_timeout: false,
            on_error,
            on_refusal: Vec::new(),
            give_up: 0.0,
            on_connect_failure,
            refused_delay,
            max_elapsed: None,
            replica: Default::default(),
        };
        let refused = ask(1).failure(Failure::Connect(ConnectFailure::Refused));
        let hung = ask(1).failure(Failure::Connect(ConnectFailure::TimedOut));
        // Unset: a connection failure is an error, as before the variant existed.
        assert_eq!(Retry::new(&cfg(true, None, None)).retry_delay(&refused), Some(0));
        assert_eq!(Retry::new(&cfg(false, None, None)).retry_delay(&hung), None);
        // HAProxy's `retry-on conn-failure`: connection failures alone, an error answer never.
        let mut r = Retry::new(&cfg(false, Some(true), Some(Dur::ms(1000))));
        assert_eq!(r.retry_delay(&ask(1)), None);
        // `back_handle_st_cer` (src/backend.c): a connection error (`must_tar`) waits
        // min(timeout connect, 1 s) before the same server; an expired connect retries at once.
        assert_eq!(r.retry_delay(&refused), Some(1000 * MILLISECOND));
        assert_eq!(r.retry_delay(&hung), Some(0));
        // `conn_retries >= max_retries` gives up: retries 3 are 4 attempts.
        assert_eq!(r.retry_delay(&ask(4).failure(Failure::Connect(ConnectFailure::Refused))), None);
    }

    #[test]
    fn full_jitter_scales_by_uniform() {
        let mut r = Retry::new(&RetryConfig {
            max_attempts: 2,
            backoff: Dur::ms(100),
            multiplier: 1.0,
            max_backoff: None,
            jitter: 1.0,
            on_timeout: true,
            on_error: true,
            on_refusal: dependency_503(),
            give_up: 0.0,
            on_connect_failure: None,
            refused_delay: None,
            max_elapsed: None,
            replica: Default::default(),
        });
        // delay * (1 - 1.0 * 0.5) = 50 ms.
        assert_eq!(r.retry_delay(&ask(1)), Some(50 * MILLISECOND));
    }

    #[test]
    fn huge_multipliers_saturate_instead_of_overflowing() {
        let cfg = |multiplier: f64, backoff: Dur| RetryConfig {
            max_attempts: u32::MAX,
            backoff,
            multiplier,
            max_backoff: None,
            jitter: 0.0,
            on_timeout: true,
            on_error: true,
            on_refusal: dependency_503(),
            give_up: 0.0,
            on_connect_failure: None,
            refused_delay: None,
            max_elapsed: None,
            replica: Default::default(),
        };
        for m in [1e30, f64::INFINITY] {
            let mut r = Retry::new(&cfg(m, Dur::ms(100)));
            // 100 ms x 1e30 is far past 2^64 ns: the longest delay there is.
            assert_eq!(r.retry_delay(&ask(2)), Some(Time::MAX));
            assert_eq!(r.retry_delay(&ask(u32::MAX - 1)), Some(Time::MAX));
            // No backoff stays no backoff.
            assert_eq!(Retry::new(&cfg(m, Dur::ms(0))).retry_delay(&ask(5)), Some(0));
        }
        // The first retry waits the backoff itself, whatever the multiplier.
        assert_eq!(Retry::new(&cfg(f64::INFINITY, Dur::ms(100))).base_delay(1), 100 * MILLISECOND);
    }
}
