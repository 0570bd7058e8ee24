//! Policies: small sans-IO state machines that decide what happens to each call.
//!
//! A policy is told the time, returns a decision and may ask to be woken at a time. It never
//! touches the event queue, reads a clock or draws from a global RNG (randomness it needs,
//! such as jitter, arrives as a uniform number in the call). Every hook but
//! [`Policy::admit`] has a no-op default, so a policy implements only what it needs.
//!
//! ## Composition
//! A [`PolicySet`](crate::scenario::PolicySet) is a stack of layers, outermost first, like
//! `Retry(Breaker(Limiter(Timeout(call))))`. Layers outside the first retry layer see one
//! call per user request (its final outcome); the retry layer and every layer inside it see
//! each attempt. An attempt asks each layer in order; the first refusal stops it and layers
//! that already admitted it are told [`Policy::cancel`] (resilience4j's `releasePermission`).
//!
//! ## Adding a policy
//! One file with the config struct (serde, `deny_unknown_fields`), its [`PolicyConfig`] impl
//! (kind, validate, build, and `facts`, what the rest of brownout reads: layer kind, fallback
//! rule, memory term, attempts per call, whether it may call again; no default body)
//! and the state machine; a `mod` line here; one line in [`registry`]'s `policies!` list; its
//! test and a layer in a shipped scenario. ARCHITECTURE.md walks through it with
//! `ShedByDeadline`.

use crate::engine::Time;

pub mod breaker;
pub mod budget;
pub mod bulkhead;
pub mod dotnet;
pub mod envoy;
pub mod haproxy;
pub mod hedge;
pub mod import_layer;
pub mod limiter;
pub mod nginx;
pub(crate) mod percentile;
pub mod plugin;
pub mod pool_rules;
pub mod rate_limit;
pub mod registry;
pub mod retry;
pub mod shed;
pub mod timeout;
pub mod why;

pub use crate::breaker_state::BreakerState;
pub use registry::{BuildCtx, ConfigError, Facts, FallbackRule, PolicyConfig, PolicySpec};

/// Index of a request class in the scenario.
pub type ClassId = u16;

/// An attempt asking a layer for admission: what a policy may decide on.
///
/// `#[non_exhaustive]`: build it with [`Attempt::new`] and the setters, so that context added
/// later breaks no plugin and no test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// Current virtual time.
    pub now: Time,
    /// The request's class.
    pub class: ClassId,
    /// 1 for the first attempt of a request, 2 for its first retry, ...
    pub number: u32,
    /// Unique id of this attempt (stable across `admit`, `cancel` and `complete`).
    pub id: u64,
    /// Class priority (higher is more important).
    pub priority: u32,
    /// Attempts already parked in this layer's wait queue, not counting this one.
    pub queued: u32,
    /// When the request arrived at the gateway.
    pub arrived: Time,
    /// The request's absolute deadline: arrival plus its class's deadline (`Time::MAX` when
    /// none is known).
    pub deadline: Time,
}

impl Attempt {
    /// The first attempt `id` of a request of `class` that arrives at `now`, with priority 0,
    /// an empty queue and no deadline; the setters fill in the rest.
    pub fn new(now: Time, class: ClassId, id: u64) -> Self {
        Self { now, class, number: 1, id, priority: 0, queued: 0, arrived: now, deadline: Time::MAX }
    }
    /// With attempt number `number` (1 = first).
    pub fn number(mut self, number: u32) -> Self {
        self.number = number;
        self
    }
    /// With class priority `priority`.
    pub fn priority(mut self, priority: u32) -> Self {
        self.priority = priority;
        self
    }
    /// With `queued` attempts already waiting in the layer.
    pub fn queued(mut self, queued: u32) -> Self {
        self.queued = queued;
        self
    }
    /// With the request's arrival time and absolute deadline.
    pub fn request(mut self, arrived: Time, deadline: Time) -> Self {
        self.arrived = arrived;
        self.deadline = deadline;
        self
    }
    /// Deadline budget left at `now` (0 once the deadline has passed).
    pub fn remaining(&self) -> Time {
        self.deadline.saturating_sub(self.now)
    }
}

/// A layer's answer to [`Policy::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Go on to the next layer (or the dependency).
    Admit,
    /// Park the attempt in this layer's FIFO queue for at most `max_wait`; `admit` is asked
    /// again when the layer frees capacity. Expiry refuses it as [`Policy::refusal`] says.
    Wait {
        /// Longest wait.
        max_wait: Time,
    },
    /// Refuse the attempt now.
    Refuse(Refusal),
    /// Evict the waiting attempt `evict` (refused as [`Policy::refusal`] says) and park this one in
    /// its place for at most `max_wait`: load shedding that keeps the queue's length. `evict`
    /// must be an attempt this layer parked that has not left the queue.
    WaitEvicting {
        /// Longest wait for this attempt.
        max_wait: Time,
        /// Id of the waiting attempt to refuse.
        evict: u64,
    },
}

/// The order in which a layer's wait queue is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum QueueOrder {
    /// First in, first out.
    #[default]
    Fifo,
    /// Last in, first out (Netflix's LifoBlockingLimiter: the freshest request is the most
    /// likely to still meet its deadline).
    Lifo,
    /// Highest class priority first; FIFO among equals.
    Priority,
}

/// Why a layer refused an attempt, and so what the request gets: the policy decides, the
/// world carries it out. `Rejected` is a 429 to the user whatever the class's `fallback`;
/// `Fallback` is the class's fallback answer when the class has one (`fallback` other than
/// `None`), else the 429; `ShortCircuited` is a 503 that the class's `fallback` decides;
/// `Unavailable` is a 503 (an `error`) whatever the class's `fallback`; `BadGateway` a 502
/// (an `error`, cause `no_live_upstream`) whatever the class's `fallback`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Over a limit: 429, never the fallback.
    Rejected,
    /// A breaker is open: 503 without a dependency call.
    ShortCircuited,
    /// Degraded: take the fallback now (a tiered bulkhead's "fallback now" class).
    Fallback,
    /// Over a limit, answered 503 (a proxy's queue timeout or rate limit): an `error`, never
    /// the fallback.
    Unavailable,
    /// No upstream server could take the attempt, answered 502 (open-source nginx when every
    /// server is at `max_conns`): an `error`, cause `no_live_upstream`, never the fallback.
    BadGateway,
}

/// How a call attempt ended, as the policies see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The dependency answered successfully.
    Success,
    /// The dependency (or the pool) failed.
    Error,
    /// The per-attempt timeout fired first.
    Timeout,
}

impl CallOutcome {
    /// Error or timeout.
    pub fn is_failure(self) -> bool {
        !matches!(self, CallOutcome::Success)
    }
}

/// A finished call (an attempt, or a whole request for layers outside a retry).
///
/// `#[non_exhaustive]`: build it with [`Completed::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Completed {
    /// Current virtual time.
    pub now: Time,
    /// The request's class.
    pub class: ClassId,
    /// The id given to `admit`: for a layer outside the retry layer, the first attempt's
    /// (the only one it admitted), whichever attempt ended the request.
    pub id: u64,
    /// When this layer admitted it; the measured duration is `now - admitted_at`.
    pub admitted_at: Time,
    /// How it ended.
    pub outcome: CallOutcome,
}

impl Completed {
    /// Call `id` of `class`, admitted at `admitted_at`, ended at `now` with `outcome`.
    pub fn new(now: Time, class: ClassId, id: u64, admitted_at: Time, outcome: CallOutcome) -> Self {
        Self { now, class, id, admitted_at, outcome }
    }

    /// Measured duration of the call as this layer saw it.
    pub fn duration(&self) -> Time {
        self.now - self.admitted_at
    }
}

/// How a failed attempt failed, finer than [`CallOutcome`]: what a retry layer's predicates
/// (`Retry`'s `on_error`, `on_timeout`, `on_refusal`) decide on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The call failed: the dependency answered with an error, or no pool connection came in
    /// time.
    Error,
    /// The attempt's timeout fired first.
    Timeout,
    /// The attempt was refused without being served.
    Refused(Refused),
    /// The call never reached the dependency: its connection failed (a partition cut it off).
    /// `Retry` retries it as an error unless `on_connect_failure` says otherwise; HAProxy
    /// retries these alone (`retry-on conn-failure`, its default).
    Connect(ConnectFailure),
}

/// How a connection failed, as HAProxy tells them apart (`src/backend.c`,
/// `back_handle_st_con`: an error flag on the connection is `STRM_ET_CONN_ERR`, the connect
/// timer expiring `STRM_ET_CONN_TO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectFailure {
    /// Refused at once (a partition's `FailFast`).
    Refused,
    /// No answer until the connect timeout (a partition's `Hang`).
    TimedOut,
}

/// A refusal a retry layer may retry, told apart by who refused and with which status.
/// A layer's `Refusal::Fallback` ("take the fallback now") is an answer, not a failure, and
/// is never offered for a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum Refused {
    /// A layer inside the retry layer refused with a 429: over its limit (a limiter, bulkhead,
    /// rate limit or budget; resilience4j's `BulkheadFullException`, `RequestNotPermitted`).
    Layer429,
    /// A layer inside the retry layer refused with a 503: an open breaker (resilience4j's
    /// `CallNotPermittedException`), or a limit that answers 503 (`refuse_as: Unavailable`,
    /// a proxy's queue timeout).
    Layer503,
    /// The dependency answered 503 without serving the call: its queue was full, or outlier
    /// detection left no healthy replica.
    Dependency503,
    /// A layer inside the retry layer refused with a 502: no upstream server could take the
    /// attempt (`refuse_as: BadGateway`, nginx's "no live upstreams", which nginx itself
    /// never passes to a next upstream).
    Layer502,
}

/// A failed attempt asking whether to retry.
///
/// `#[non_exhaustive]`: build it with [`RetryAsk::new`] and the setters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RetryAsk {
    /// Current virtual time.
    pub now: Time,
    /// The request's class.
    pub class: ClassId,
    /// Number of the attempt that just failed (1 = first).
    pub attempt: u32,
    /// How it failed, as the layers' `complete` hears it (a refusal is an `Error`).
    pub outcome: CallOutcome,
    /// How it failed, finer: what retry predicates decide on.
    pub failure: Failure,
    /// A uniform draw in (0, 1) for jitter, identical for every policy compared.
    pub uniform: f64,
    /// A second uniform draw in (0, 1), independent of `uniform`, keyed by request and
    /// attempt: whether the client gives up rather than retry (`Retry`'s `give_up`).
    /// 1 (never gives up) unless set.
    pub patience: f64,
    /// When the request's first attempt started (entered the policy stack): what a bound on
    /// the time for retries counts from (`Retry`'s `max_elapsed`). `now` unless set.
    pub since: Time,
}

impl RetryAsk {
    /// Attempt number `attempt` of `class` failed at `now` with `outcome`; `uniform` is the
    /// jitter draw. Its `failure` is `outcome`'s (a timeout or an error) until set.
    pub fn new(now: Time, class: ClassId, attempt: u32, outcome: CallOutcome, uniform: f64) -> Self {
        let failure = if outcome == CallOutcome::Timeout { Failure::Timeout } else { Failure::Error };
        Self { now, class, attempt, outcome, failure, uniform, patience: 1.0, since: now }
    }
    /// With the finer failure `failure`.
    pub fn failure(mut self, failure: Failure) -> Self {
        self.failure = failure;
        self
    }
    /// With the give-up draw `patience`.
    pub fn patience(mut self, patience: f64) -> Self {
        self.patience = patience;
        self
    }
    /// With the first attempt's start `since`.
    pub fn since(mut self, since: Time) -> Self {
        self.since = since;
        self
    }
}

/// What a layer shows the world after each interaction.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Status {
    /// Breaker state, for layers that are breakers.
    pub breaker: Option<BreakerState>,
    /// The time the layer wants [`Policy::on_wakeup`] called (None = no timer).
    pub wake_at: Option<Time>,
    /// Current concurrency limit, for limiters (adaptive ones change it).
    pub limit: Option<f64>,
    /// The layer considers the dependency degraded (widens the substitution allowance).
    pub degraded: bool,
}

/// A resilience policy. See the module docs.
pub trait Policy {
    /// Decide whether an attempt may go on.
    fn admit(&mut self, attempt: &Attempt) -> Admission;

    /// An attempt this layer admitted was not executed (an inner layer refused it, or it
    /// gave up waiting elsewhere). Return permits; record nothing.
    fn cancel(&mut self, _attempt: &Attempt) {}

    /// An attempt this layer parked ([`Admission::Wait`]) left its wait queue without being
    /// asked again: its wait expired or its request ended. Not called for an attempt the
    /// layer evicted itself ([`Admission::WaitEvicting`]).
    fn left_queue(&mut self, _attempt: &Attempt) {}

    /// How this layer refuses an attempt of `class` whose wait in its queue ended without
    /// admission (expired, or evicted to make room): the answer `admit` gives when it refuses
    /// at once. The world asks, so that it never decides a refusal itself.
    fn refusal(&self, _class: ClassId) -> Refusal {
        Refusal::Rejected
    }

    /// An attempt this layer admitted has finished.
    fn complete(&mut self, _done: &Completed) {}

    /// A new user request of `class` entered the gateway (retry budgets deposit here).
    /// Return true if this may have changed [`Policy::status`]: only then does the world look
    /// at the status again, instead of after every arrival for every layer.
    fn on_request(&mut self, _now: Time, _class: ClassId) -> bool {
        false
    }

    /// Per-attempt timeout and the unwind time after it fires (the time the gateway takes to
    /// produce its 504). None = no timeout from this layer.
    fn attempt_timeout(&self, _class: ClassId) -> Option<(Time, Time)> {
        None
    }

    /// Per-attempt timeout that starts when the attempt holds a pool connection (the wait
    /// for one does not count: HAProxy's `timeout server`), and its unwind. None = none
    /// from this layer. Declared with [`Hooks::CONNECTION_TIMEOUT`].
    fn connection_timeout(&self, _class: ClassId) -> Option<(Time, Time)> {
        None
    }

    /// Whether this layer's [`Policy::connection_timeout`] is an inactivity timeout: it
    /// bounds the wait for the answer's first byte, then, from the first byte, the body's
    /// transfer (the dependency's `transfer`), rather than the whole answer.
    fn is_inactivity_timeout(&self, _class: ClassId) -> bool {
        false
    }

    /// After a call has been out for the returned time, send a second (hedged) call; the
    /// first answer wins. Hedge layers answer.
    fn hedge_delay(&self, _class: ClassId) -> Option<Time> {
        None
    }

    /// After a failed attempt: Some(delay) to retry after `delay`. Retry layers answer.
    fn retry_delay(&mut self, _ask: &RetryAsk) -> Option<Time> {
        None
    }

    /// After a retry layer asked for a retry: may it happen? Retry budgets answer (and
    /// withdraw when they allow it).
    fn allow_retry(&mut self, _ask: &RetryAsk) -> bool {
        true
    }

    /// The timer asked for through [`Status::wake_at`] fired.
    fn on_wakeup(&mut self, _now: Time) {}

    /// The layer's state for the world: breaker state, timer wish, limit, degraded flag.
    fn status(&self) -> Status {
        Status::default()
    }

    /// Why the status last changed, with the figures of that decision (e.g. "failure rate
    /// 62 % over 10 calls >= 50 %"). Asked only when the world logs a change, right after
    /// it. The default describes the status itself.
    fn reason(&self) -> String {
        describe(&self.status())
    }

    /// False for a policy whose [`Policy::status`] never changes from the one it is built
    /// with: the world then skips asking for it after every call. A policy whose status can
    /// change must keep the default, true.
    fn reports_status(&self) -> bool {
        true
    }

    /// The order in which this layer's wait queue is served.
    fn queue_order(&self) -> QueueOrder {
        QueueOrder::Fifo
    }

    /// True for retry layers: they split the stack into per-request and per-attempt parts.
    fn is_retry(&self) -> bool {
        false
    }

    /// The optional hooks this policy overrides; the world skips calling the others, which
    /// keep their defaults. Must name every overridden hook that may answer other than its
    /// default as the policy is configured (the default, [`Hooks::ALL`], always does);
    /// `tests/policies/policy_hooks.rs` checks the built-in declarations.
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }
}

/// A set of [`Policy`]'s optional hooks ([`Policy::hooks`]); the world calls a hook only on
/// the layers that have it, so a stack pays per layer only for what each layer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hooks(u8);

impl Hooks {
    /// None of the optional hooks.
    pub const NONE: Hooks = Hooks(0);
    /// [`Policy::on_request`].
    pub const ON_REQUEST: Hooks = Hooks(1);
    /// [`Policy::cancel`] and [`Policy::complete`].
    pub const NOTICES: Hooks = Hooks(1 << 1);
    /// [`Policy::attempt_timeout`].
    pub const ATTEMPT_TIMEOUT: Hooks = Hooks(1 << 2);
    /// [`Policy::hedge_delay`].
    pub const HEDGE_DELAY: Hooks = Hooks(1 << 3);
    /// [`Policy::retry_delay`].
    pub const RETRY_DELAY: Hooks = Hooks(1 << 4);
    /// [`Policy::allow_retry`].
    pub const ALLOW_RETRY: Hooks = Hooks(1 << 5);
    /// [`Policy::admit`] may answer other than [`Admission::Admit`] or change the policy's
    /// state; without it the world admits every attempt without asking.
    pub const ADMIT: Hooks = Hooks(1 << 6);
    /// [`Policy::connection_timeout`] and [`Policy::is_inactivity_timeout`].
    pub const CONNECTION_TIMEOUT: Hooks = Hooks(1 << 7);
    /// Every optional hook.
    pub const ALL: Hooks = Hooks(0xff);

    /// Every hook of `self` and of `other`.
    pub const fn with(self, other: Hooks) -> Hooks {
        Hooks(self.0 | other.0)
    }

    /// All of `other`'s hooks are in `self`.
    #[inline]
    pub const fn has(self, other: Hooks) -> bool {
        self.0 & other.0 == other.0
    }
}

/// A generic description of a status, for policies that give no reason of their own.
pub fn describe(st: &Status) -> String {
    let mut parts = Vec::new();
    if let Some(b) = st.breaker {
        parts.push(format!("breaker {}", b.name()));
    }
    if let Some(l) = st.limit {
        parts.push(format!("limit {}", why::num(l)));
    }
    parts.push(if st.degraded { "degraded".into() } else { "not degraded".into() });
    parts.join(", ")
}

#[cfg(test)]
mod facts_tests;
