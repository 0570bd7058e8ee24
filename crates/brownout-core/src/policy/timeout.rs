//! Timeout: where the layer sits decides what it bounds.
//!
//! - Inside a class's retry layer, or with no retry layer inside it: each attempt, from when
//!   it asks for a connection; an attempt that takes longer than `timeout` is abandoned.
//! - Outside the first retry layer (a request-level timeout, as .NET's
//!   `TotalRequestTimeout` outside its retry): the whole request, from when it passes this
//!   layer, attempts and backoffs included. Each attempt's deadline is capped at what is
//!   left of it, a wait in a layer's queue or a backoff that would outlast it ends there, and
//!   no retry starts once it has fired: the request ends timed out (cause
//!   `attempt_timeout`). This is Polly v8's composition: the outer timeout's cancellation
//!   token (`TimeoutResilienceStrategy.ExecuteCoreAsync`) reaches every attempt and every
//!   retry delay (`RetryResilienceStrategy.ExecuteCallbackAsync`).
//!
//! Where a per-attempt timeout starts is its `starts` field ([`TimeoutStart`]): from the
//! attempt (`Attempt`, the default: the wait for a pool connection counts, as in client
//! libraries whose timeout wraps the whole call), or from the moment the attempt holds a
//! connection (`Connection`: HAProxy's `timeout server`, nginx's `proxy_read_timeout`, which
//! a request waiting in the proxy's queue has not started; docs/proxies.md gives the
//! sources). A `Connection` timeout bounds each attempt's call wherever the layer sits: a
//! connection is held per attempt, so it never bounds the whole request. `Inactivity` is
//! the `Connection` start for an inactivity timeout, the time between two reads: it bounds
//! the wait for the answer's first byte from the connection, then, from the first byte, the
//! wait for the body (the dependency's `transfer`); with `transfer` 0 (the default) the
//! first byte is the whole answer and it is exactly the `Connection` start.
//!
//! The dependency keeps working on an abandoned call (its capacity stays occupied, as with
//! a fire-and-forget RPC); the connection returns to the pool when the timeout fires.

use serde::{Deserialize, Serialize};

use super::{Admission, Attempt, ClassId, Policy};
use crate::engine::Time;
use crate::policy::{BuildCtx, ConfigError, Facts, PolicyConfig};
use crate::units::Dur;

/// A timeout: per attempt inside a retry layer (or with none inside it), per request outside
/// one (it bounds every attempt and backoff of the request, from when the request passes it).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeoutConfig {
    /// Longest an attempt may take (> 0); outside a retry layer, longest the request may take
    /// from this layer on, all its attempts and backoffs included.
    pub timeout: Dur,
    /// Time from the timeout firing until the gateway answers 504 (R02: 269 ms - 250 ms; 0 = at once).
    #[serde(default)]
    pub unwind: Dur,
    /// Where the timeout starts: `Attempt` (default) from when the attempt asks for a pool
    /// connection, so a wait for one counts; `Connection` from when it holds one (HAProxy
    /// `timeout server`, nginx `proxy_read_timeout`), so a wait for a connection is bounded
    /// only by the pool's `acquire_timeout` and any `Attempt` or request-level timeout. A
    /// `Connection` timeout always bounds each attempt's call, even outside a retry layer.
    /// `Inactivity` from the connection too, as the time between two reads (HAProxy's
    /// `timeout server` and nginx's `proxy_read_timeout` are so documented): the answer's
    /// first byte must come within it, and then its body (the dependency's `transfer`); with
    /// `transfer` 0, the default, it equals `Connection`.
    #[serde(default, skip_serializing_if = "TimeoutStart::is_attempt")]
    #[schemars(!skip_serializing_if)]
    pub starts: TimeoutStart,
}

/// Where a timeout starts counting (see [`TimeoutConfig::starts`]).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub enum TimeoutStart {
    /// From when the attempt asks for a pool connection: the wait for a connection counts
    /// (Polly's and resilience4j's timeouts wrap the whole call).
    #[default]
    Attempt,
    /// From when the attempt holds a pool connection: a wait for one does not count
    /// (HAProxy `timeout server`, nginx `proxy_read_timeout`).
    Connection,
    /// From when the attempt holds a pool connection, between two reads: the wait for the
    /// answer's first byte, then for its body (the dependency's `transfer`), each bounded
    /// alone. HAProxy's manual calls `timeout server` "the maximum inactivity time on the
    /// server side" (`doc/configuration.txt`); nginx 1.31 arms `proxy_read_timeout` for the
    /// response header when the request is sent (`ngx_http_upstream_send_request`) and
    /// re-arms it between reads of the body (`src/event/ngx_event_pipe.c`, `ngx_event_pipe`).
    /// brownout's body is one read, `transfer` after the first byte. With the dependency's
    /// `transfer` 0 (the default) it equals `Connection`.
    Inactivity,
}

impl TimeoutStart {
    /// The default, which a scenario need not write (and which is not written back).
    pub fn is_attempt(&self) -> bool {
        *self == TimeoutStart::Attempt
    }
}

impl PolicyConfig for TimeoutConfig {
    const KIND: &'static str = "timeout";

    fn facts(&self) -> Facts {
        Facts::plain(crate::metrics::LayerKind::Other)
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        if self.timeout.ns() == 0 {
            return Err("Timeout.timeout must be > 0".into());
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        Box::new(Timeout::new(self))
    }
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Timeout {
    timeout: Time,
    unwind: Time,
    starts: TimeoutStart,
}

impl Timeout {
    /// Build from config.
    pub fn new(cfg: &TimeoutConfig) -> Self {
        Self { timeout: cfg.timeout.ns(), unwind: cfg.unwind.ns(), starts: cfg.starts }
    }
}

impl Policy for Timeout {
    fn hooks(&self) -> crate::policy::Hooks {
        // Only the start it is configured with answers; the other timeout hook is always None.
        match self.starts {
            TimeoutStart::Attempt => crate::policy::Hooks::ATTEMPT_TIMEOUT,
            TimeoutStart::Connection | TimeoutStart::Inactivity => crate::policy::Hooks::CONNECTION_TIMEOUT,
        }
    }

    fn reports_status(&self) -> bool {
        false // `status` is the default, always
    }

    fn admit(&mut self, _attempt: &Attempt) -> Admission {
        Admission::Admit
    }

    fn attempt_timeout(&self, _class: ClassId) -> Option<(Time, Time)> {
        (self.starts == TimeoutStart::Attempt).then_some((self.timeout, self.unwind))
    }

    fn connection_timeout(&self, _class: ClassId) -> Option<(Time, Time)> {
        matches!(self.starts, TimeoutStart::Connection | TimeoutStart::Inactivity)
            .then_some((self.timeout, self.unwind))
    }

    fn is_inactivity_timeout(&self, _class: ClassId) -> bool {
        self.starts == TimeoutStart::Inactivity
    }
}
