//! Per-request and per-attempt records of one run, for tests and diagnostics: who each
//! request is, what it drew, and how long each attempt lasted. Off by default; a run asks
//! for them through [`super::run_policy_recorded`], and a run that does not pays one
//! branch per arrival, call and attempt.

use crate::engine::Time;
use crate::policy::{CallOutcome, ClassId};

/// Where a request came from: what identifies it across policy sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// The `n`-th open-loop arrival of its class (0-based).
    Arrival(u64),
    /// Closed-loop user `user`'s `k`-th request (0-based), sent after a think time `think`.
    User {
        /// The user.
        user: u32,
        /// The user's request number.
        k: u32,
        /// The think time drawn before this request.
        think: Time,
    },
    /// Reload number `number` (1-based) of the request keyed `of`.
    Reload {
        /// The key of the original request.
        of: u64,
        /// Which reload.
        number: u32,
    },
}

/// One request as it arrived (a call of a plan is no request: its calls and attempts are
/// recorded under its request's class and its own key, `graph::call_key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRecord {
    /// Its class.
    pub class: ClassId,
    /// Where it came from.
    pub origin: Origin,
    /// The key of its counter-based draws.
    pub key: u64,
    /// Arrival time.
    pub arrived: Time,
    /// The gateway instance it was sent to.
    pub instance: u32,
    /// The catalogue item it asks for (0 without a catalogue).
    pub item: u32,
}

/// One dependency call as it started service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRecord {
    /// The caller's class.
    pub class: ClassId,
    /// The caller's key.
    pub key: u64,
    /// The attempt number (a hedged call has the top bit set).
    pub attempt: u32,
    /// The dependency called (index into `Scenario::deps`; 0 with one dependency).
    pub dependency: u16,
    /// Service start.
    pub start: Time,
    /// Drawn service time, including the hop.
    pub latency: Time,
    /// Drawn error.
    pub error: bool,
}

/// One attempt that reached the connection pool, from asking for a connection to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptRecord {
    /// The request's class.
    pub class: ClassId,
    /// The request's key.
    pub key: u64,
    /// The attempt number (1-based).
    pub attempt: u32,
    /// The dependency its call goes to (index into `Scenario::deps`).
    pub dependency: u16,
    /// When it asked for a connection (its timeout runs from here).
    pub start: Time,
    /// When it ended (answer, error or timeout).
    pub end: Time,
    /// How it ended.
    pub outcome: CallOutcome,
}

/// Everything recorded in one run.
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// Requests in arrival order.
    pub requests: Vec<RequestRecord>,
    /// Calls in order of service start.
    pub calls: Vec<CallRecord>,
    /// Attempts in order of their end.
    pub attempts: Vec<AttemptRecord>,
}
