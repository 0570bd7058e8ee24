//! The world's state, grouped by what owns it. Times are virtual nanoseconds (`Time`);
//! counts are plain integers. "Written by" and "read by" name the files of `world/`.

use std::collections::VecDeque;

use super::waitq::WaitQueue;
use super::{Notice, PendingReload};
use crate::engine::{Slab, Stream, Time, Token};
use crate::metrics::events::EventLog;
use crate::metrics::{Cause, LayerKind, Outcome};
use crate::model::arrivals::ArrivalGen;
use crate::model::records::Records;
use crate::policy::retry::ReplicaRule;
use crate::policy::{ClassId, Hooks, Policy, Status};

// ---- one request ---------------------------------------------------------------------

/// Where a request is. Each value has one meaning; the events that may still concern the
/// request (its timers, its queue entries) check it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Waiting in its instance's worker-slot queue (holds no slot).
    SlotQueue,
    /// Holds a worker slot, before its local work or first attempt starts.
    Started,
    /// Doing local work on its worker slot (a `LocalWork` timer is pending).
    Local,
    /// Parked in a layer's wait queue (its entry is live while the generations match).
    LayerQueue,
    /// Out of a wait queue (wait limit reached, or taken out to be admitted) while the
    /// world decides what comes next; never seen at an event boundary.
    Dequeued,
    /// Waiting for a pool connection (an `Attempt` timer is pending).
    PoolQueue,
    /// A call (and maybe a hedge) is out to the dependency.
    Calling,
    /// Between attempts: waiting out a retry backoff.
    Backoff,
    /// The attempt timed out; the request waits for the caller's unwind time.
    Unwinding,
    /// The answer is decided; the response overhead is being paid.
    Responding,
    /// Waiting for the calls of its plan's current step (`plan.rs`); holds its slot.
    Plan,
}

/// Who a request is; fixed at arrival. Written by `lifecycle::arrive`; read everywhere.
#[derive(Debug, Clone, Copy)]
pub(super) struct Identity {
    /// Its class.
    pub class: ClassId,
    /// The gateway instance that serves it (`key % instances`).
    pub instance: u32,
    /// The key of every counter-based draw for this request (see [`super::Source`]).
    pub key: u64,
    /// The key of the request this one reloads (its own key if it is no reload).
    pub origin: u64,
    /// The catalogue item it asks for (0 without a catalogue).
    pub item: u32,
    /// Closed-loop (user, request number), for the user's next request.
    pub user: Option<(u32, u32)>,
    /// Its reload number: 0 for a first request, n for the n-th reload of `origin`.
    pub reloads: u32,
}

/// The request's clock (ns, virtual time).
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    /// When it arrived. Written at arrival; read for waits, latency and the deadline.
    pub arrived: Time,
    /// When the current attempt asked for a connection, once the layers admitted it: the
    /// start of its connection wait and of its attempt record. Written by
    /// `calls::acquire_connection`; read by `calls` and `outcome::attempt_end`.
    pub attempt_start: Time,
    /// When the current attempt times out (`Time::MAX`: no attempt timeout): its per-attempt
    /// timeout, capped at the request-level timeout (`World::request_deadline`). Written by
    /// `calls::acquire_connection`, and by `calls::connection_deadline` when a timeout that
    /// starts with the connection ends sooner; read by `calls`.
    pub attempt_deadline: Time,
    /// How long (ns) the caller takes to unwind after an attempt timeout (0: at once): the
    /// unwind of the timeout that sets `attempt_deadline`. Written with `attempt_deadline`
    /// (and by `outcome::request_timed_out`); read by `outcome::timed_out`.
    pub unwind: Time,
}

/// The current attempt. Written by `stack` (admission) and `calls` (the call).
#[derive(Debug, Clone, Copy)]
pub(super) struct AttemptState {
    /// Attempt number, 1 for the first (0 before the first starts).
    pub number: u32,
    /// Run-wide attempt id, the identity the layers see (`policy::Attempt::id`).
    pub id: u64,
    /// How many of the class's layers admitted this attempt (index into `class_layers`).
    /// When each position admitted it is kept beside the slab (`World::admitted_at`).
    pub pos: u8,
    /// An `Attempt` timer is pending for the current call (none when the answer was due first).
    pub timed: bool,
    /// The first call of the attempt, while it is out.
    pub call: Option<Token>,
    /// Pool connections held (the call and the hedge: 0 to 2).
    pub conns: u8,
    /// The replica the latest attempt's call was assigned ([`NO_REPLICA`] before one was),
    /// kept for a retry that stays on it (`Layout::replica_rule`). Written and read by
    /// `replicas::replica_of_call`.
    pub replica: u32,
}

/// `AttemptState::replica` before any call was assigned one.
pub(super) const NO_REPLICA: u32 = u32::MAX;

/// The attempt's hedge. Written and read by `calls`.
#[derive(Debug, Clone, Copy)]
pub(super) struct HedgeState {
    /// The hedged second call, while it is out.
    pub call: Option<Token>,
    /// Generation of the pending `Hedge` event; bumped when the attempt ends, so a hedge
    /// timer of an earlier attempt is ignored.
    pub generation: u32,
}

/// The request's answer, once decided. Written by `outcome::respond` (and `lifecycle::restart`);
/// read by `outcome::finish`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Answer {
    /// How the request ended.
    pub outcome: Outcome,
    /// For a fallback answer: (age of the cached value in ns, the value is wrong).
    pub staleness: Option<(Time, bool)>,
    /// Why it failed (kept for a fallback answer of a failure); `None` while nothing failed.
    pub cause: Option<Cause>,
}

/// A request in flight, from arrival to `outcome::finish`.
#[derive(Debug, Clone)]
pub(super) struct Req {
    /// Who it is.
    pub who: Identity,
    /// Its clock.
    pub time: Timing,
    /// Where it is.
    pub phase: Phase,
    /// Timer generation: a `Timer` event whose generation differs is a tombstone. Bumped by
    /// `World::bump_generation` whenever the pending timer is superseded.
    pub generation: u32,
    /// It holds a worker slot. Written by `lifecycle`; read by `finish` and the invariants.
    pub worker: bool,
    /// Dependency calls made so far (count, hedges included), reported at finish.
    pub calls: u32,
    /// The current attempt.
    pub attempt: AttemptState,
    /// The current attempt's hedge.
    pub hedge: HedgeState,
    /// Its answer.
    pub answer: Answer,
}

impl Req {
    /// A request (or a call of a plan) that has made no attempt yet: `who`, arrived at
    /// `arrived`, starting at `now` in `phase`. The one constructor of an arrival
    /// (`lifecycle`) and of a plan's child (`plan`), so a field added to `Req` is set once.
    pub fn fresh(who: Identity, arrived: Time, now: Time, phase: Phase) -> Req {
        Req {
            who,
            time: Timing { arrived, attempt_start: now, attempt_deadline: Time::MAX, unwind: 0 },
            phase,
            generation: 0,
            worker: false,
            calls: 0,
            attempt: AttemptState { number: 0, id: 0, pos: 0, timed: false, call: None, conns: 0, replica: NO_REPLICA },
            hedge: HedgeState { call: None, generation: 0 },
            answer: Answer { outcome: Outcome::Ok, staleness: None, cause: None },
        }
    }
}

// ---- one dependency call ---------------------------------------------------------------

/// A call to the dependency. Written and read by `calls`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Call {
    /// The request waiting for it (None once abandoned: the dependency keeps working, or
    /// stops when the cancel arrives under `Cancellation::Propagate`).
    pub req: Option<Token>,
    /// When it reached the dependency and joined a server's queue (ns; the whole round trip
    /// of the network is counted on the way back, see `serve_call`).
    pub sent_at: Time,
    /// When service started (ns).
    pub served_at: Time,
    /// Its service time (ns), once service has started.
    pub service: Time,
    /// When the answer reaches the caller, once service has started (MAX while queued).
    pub done_at: Time,
    /// The answer is an error.
    pub error: bool,
    /// The error is the dependency's 503 refusal without service (queue full, no healthy
    /// replica), which a retry layer may tell from other errors (`Refused::Dependency503`).
    pub refused: bool,
    /// It holds one of its replica's servers (finite capacity only; until its service ends,
    /// not while its answer travels back).
    pub holds_server: bool,
    /// It reached the dependency (false when a partition cut it off).
    pub reached: bool,
    /// Its instance counts it as outstanding on `replica`.
    pub counted: bool,
    /// The replica it went to.
    pub replica: u32,
    /// The instance that made it.
    pub instance: u32,
    /// The class of its request.
    pub class: ClassId,
    /// Its request's key (for the latency draw).
    pub key: u64,
    /// Attempt number (top bit set for a hedge, which draws its own latency).
    pub attempt: u32,
    /// The dependency called (index into `Scenario::deps`; 0 in the one-dependency form).
    pub dep: u16,
    /// When an inactivity timeout set its attempt's deadline (`sent_at` plus the limit, for
    /// the answer's first byte): the deadline the attempt had without it; 0 otherwise.
    /// Written by `calls::take_connection`; read and cleared by `inactivity::first_byte_in`.
    pub inactivity_cap: Time,
    /// Calls its connection has served, this one included (0 for a pool without `connect`);
    /// read by `conns::keep_open`.
    pub uses: u32,
    /// Its connection's set-up ran past the connect timeout: it failed without reaching
    /// the dependency (cause `connect_timeout`).
    pub connect_failed: bool,
}

// ---- gateway instances -----------------------------------------------------------------

/// One policy layer of one instance at run time. Written by `stack`; rebuilt by `lifecycle`.
pub(super) struct LayerRt {
    /// The policy's state machine.
    pub policy: Box<dyn Policy>,
    /// Attempts the policy told to wait.
    pub queue: WaitQueue,
    /// Live entries in `queue` (count; tombstones excluded).
    pub waiting: u32,
    /// The wake-up time scheduled for the policy, if any.
    pub wake: Option<Time>,
    /// Generation of the pending `Wake` event; bumped when it is superseded.
    pub wake_generation: u32,
    /// The status last seen (`note` compares against it).
    pub last: Status,
    /// The policy reports status changes (`Policy::reports_status`); `note` skips it if not.
    pub watch: bool,
}

/// One gateway instance. Written by `lifecycle` (slots, restarts), `calls` (pool, replicas)
/// and `stack` (layers, degraded).
pub(super) struct Inst {
    /// Worker slots busy (count).
    pub workers: u32,
    /// Requests waiting for a slot, FIFO (stale entries are skipped when popped).
    pub worker_q: VecDeque<Token>,
    /// Live entries in `worker_q` (count).
    pub worker_waiting: u32,
    /// Pool connections in use (count), in all its pools.
    pub conns: u32,
    /// Requests waiting for a connection of the fleet's `pool`, FIFO (stale entries are
    /// skipped when popped).
    pub pool_q: VecDeque<Token>,
    /// Requests waiting for a connection, in all its pools (count of live entries).
    pub pool_waiting: u32,
    /// Its pools of `fleet.pools`, in that order (empty without them).
    pub own: Vec<OwnPool>,
    /// Per dependency, the connections kept open and idle (holding no pool slot), as (idle
    /// since, calls served), oldest first; empty when no pool has a `connect`. Written by
    /// `conns` and `lifecycle::restart`.
    pub idle: Vec<VecDeque<(Time, u32)>>,
    /// The policy stack, outermost first (a fleet-wide layer's state lives on instance 0).
    pub layers: Vec<LayerRt>,
    /// Layers whose status says degraded (count).
    pub degraded: u32,
    /// This instance's client of each dependency, by dependency id.
    pub clients: Vec<Client>,
}

/// One instance's pool of one dependency's own (`fleet.pools`). Written by `calls` and
/// `lifecycle::restart`.
#[derive(Default)]
pub(super) struct OwnPool {
    /// Its connections in use (count; also counted in `Inst::conns`).
    pub conns: u32,
    /// Requests waiting for one of its connections, FIFO (stale entries skipped when popped).
    pub q: VecDeque<Token>,
}

/// One instance's client of one dependency: its balancer and outlier detector. Written by
/// `calls` and `lifecycle::restart`.
pub(super) struct Client {
    /// Calls outstanding per replica, as this instance's client balancer counts them.
    pub outstanding: Vec<u32>,
    /// Round-robin cursor over the replicas.
    pub rr: u32,
    /// This instance's outlier detector, when the replicas have one.
    pub outlier: Option<crate::model::outlier::Outlier>,
    /// This instance's health checks of the replicas, when they have them.
    pub health: Option<crate::model::health::HealthChecks>,
}

/// The gateway fleet. Written by `lifecycle`, `stack` and `calls`.
pub(super) struct Gateway {
    /// The instances, by number.
    pub insts: Vec<Inst>,
    /// Layers to serve from their wait queues before the event ends, as (instance, layer).
    /// Pushed by `stack` after a completion or wake-up; drained by `stack::pump_layers`.
    pub pump: Vec<(u32, u8)>,
    /// Cancellations and completions on their way to a fleet-wide layer (instance, layer,
    /// notice), until their `Notice` event.
    pub notices: Slab<(u32, u8, Notice)>,
    /// The next attempt id (count of attempts begun). Written by `stack::begin_attempt`.
    pub next_attempt_id: u64,
    /// Per dependency, the pool its calls take connections from: 0 the fleet's `pool`, k
    /// `fleet.pools[k - 1]`. Empty without `fleet.pools` (every call takes the fleet's).
    pub pool_of: Vec<u8>,
}

/// The policy stack's shape, fixed for the run (built by `build`; read by `stack`,
/// `outcome`, `calls`).
pub(super) struct Layout {
    /// Per route, the stack positions of the layers that see it, outermost first. A route is
    /// a class, or when a layer is scoped to dependencies, a class's calls to one dependency
    /// (`class * stride + dependency`; `World::route_of`).
    pub class_layers: Vec<Vec<u8>>,
    /// The number of dependencies when a layer is scoped to dependencies, else 0 (routes are
    /// classes, and no request's dependency is looked up).
    pub stride: usize,
    /// Per class, the layers a request hears from at its arrival (`Policy::on_request`):
    /// those of its class that any of its calls pass and that listen (`Hooks::ON_REQUEST`);
    /// none for a class with a plan (its layers hear of each call: `call_layers`).
    pub arrival_layers: Vec<Vec<u8>>,
    /// Per route (empty when no class has a plan), the layers that hear of each call of a
    /// plan on the route as it is sent: every layer the call passes that listens, scoped to
    /// its dependency or not (a retry budget wrapping the client deposits per call).
    pub call_layers: Vec<Vec<u8>>,
    /// Per route, the index in `class_layers` of its first retry layer (0: none); layers from
    /// there inward see every attempt, those outside one call per request.
    pub inner_start: Vec<u8>,
    /// Per route, its request-level timeouts as (position in `class_layers`, timeout, unwind):
    /// the `Timeout` layers outside its first retry layer, which bound the whole request,
    /// not each attempt (`World::request_deadline`). Empty for most classes.
    pub request_timeouts: Vec<Vec<(u8, Time, Time)>>,
    /// Per route, the layers that may time each attempt (`Policy::attempt_timeout`): those
    /// with `Hooks::ATTEMPT_TIMEOUT` that are not among its `request_timeouts`.
    pub attempt_timeouts: Vec<Vec<u8>>,
    /// Per layer, the propagation delay (ns) of a fleet-wide layer; None per instance.
    pub fleet: Vec<Option<Time>>,
    /// The first layer reporting a breaker state (recorded per instance).
    pub breaker_layer: Option<u8>,
    /// The first layer reporting a concurrency limit (recorded per instance).
    pub limit_layer: Option<u8>,
    /// Per layer, its kind: where its refusals and queue waits count.
    pub kinds: Vec<LayerKind>,
    /// Per layer, the optional hooks its policy has (`Policy::hooks`): the world calls
    /// only those.
    pub hooks: Vec<Hooks>,
    /// Per route, every hook any of its layers has: a per-request walk over the route's
    /// layers for one hook (timeouts, hedges, retries) runs only where a layer has it.
    pub route_hooks: Vec<Hooks>,
    /// Some route has a request-level timeout (`request_timeouts`); without one,
    /// `World::request_deadline` reads no request.
    pub request_timed: bool,
    /// The most layers any class passes: the stride of `World::admitted`.
    pub depth: usize,
    /// The gateway's layers (count): the layers after them are the services'
    /// (`model::graph::RunStack`), whose figures the recorder does not count as the gateway's.
    pub gateway_layers: usize,
    /// Per route, which replica a retry's call goes to: the rule of its innermost retry
    /// layer that has one (HAProxy's, `policy::retry::ReplicaRule`), else balanced anew.
    pub replica_rule: Vec<ReplicaRule>,
}

// ---- traffic ---------------------------------------------------------------------------

/// Where requests come from. Written by the event dispatch and `lifecycle::arrive`;
/// reloads are queued by `outcome::finish`.
pub(super) struct Traffic {
    /// Each class's arrival process (its own state per run).
    pub arrivals: Vec<ArrivalGen>,
    /// Each class's arrival-time stream, which nothing else reads.
    pub arrival_rng: Vec<Stream>,
    /// Each class's item stream for open-loop arrivals, which nothing else reads.
    pub item_rng: Vec<Stream>,
    /// Each class's next open-loop arrival number (its key).
    pub next_index: Vec<u64>,
    /// Reloads on their way, until their `Reload` event.
    pub pending_reloads: Slab<PendingReload>,
    /// Requests that arrived (count), reported in `RunResult::requests`.
    pub arrived: u64,
}

// ---- upstream --------------------------------------------------------------------------

/// The dependencies' side of the calls. Written and read by `calls`. Replicas of all the
/// dependencies are numbered in one row: dependency `d`'s replica `r` is `base[d] + r`.
pub(super) struct Upstream {
    /// Calls in flight (waiting for service, served, or answered and in transit).
    pub calls: Slab<Call>,
    /// Per dependency, the number of its first replica in `busy` and `queue`.
    pub base: Vec<usize>,
    /// Per replica, servers busy (count; finite capacity only).
    pub busy: Vec<u32>,
    /// Per replica, calls waiting for a server, in arrival order (stale entries skipped);
    /// `model::server::take_next` picks the next by the dependency's discipline.
    pub queue: Vec<VecDeque<Token>>,
    /// Per replica, the CoDel state of its queue (unused without `capacity.codel`).
    pub codel: Vec<crate::model::server::Codel>,
    /// Per replica, its shared service (used only under `capacity.sharing`, where `busy`
    /// counts the calls present and every one of them holds a share: `world::sharing`).
    pub shared: Vec<crate::model::sharing::Shared<Token>>,
    /// Calls that reached the dependency and have not been answered (count).
    pub in_flight: u64,
    /// Per dependency, the same count, with a service graph only (empty without).
    pub dep_in_flight: Vec<u64>,
}

// ---- trace, records and the guards -----------------------------------------------------

/// What the run keeps about itself beside the metrics. Written by the event dispatch
/// (hash, events) and where requests, calls and attempts happen (records).
pub(super) struct Trace {
    /// FNV-style hash of every event's (time, code), for determinism checks.
    pub hash: u64,
    /// The first `limit` events as (time, code).
    pub events: Vec<(Time, u64)>,
    /// How many events to keep in `events` (`RunOptions::trace_limit`).
    pub limit: usize,
    /// Per-request, per-call and per-attempt records, when asked for (`run_policy_recorded`).
    pub records: Option<Box<Records>>,
    /// The layers' state changes, when asked for (`RunOptions::events`); written by
    /// `events::log_change`, which `stack::note` calls.
    pub log: Option<Box<EventLog>>,
    /// A reason that overrides the policy's for the changes being noted (an instance's
    /// restart, written by `lifecycle::rebuild_layers`).
    pub log_why: Option<&'static str>,
}

/// How far the run got, and whether a guard stopped it. Written by the event dispatch and
/// `lifecycle::arrive`.
pub(super) struct Progress {
    /// When the run ends (ns).
    pub horizon: Time,
    /// Events handled, with the swept tombstones due by the horizon (count): the summary's
    /// `events`, held to `limits.max_events`.
    pub handled: u64,
    /// Set when a guard stops the run; the engine halts at once.
    pub abort: Option<crate::model::RunError>,
    /// `limits.max_events`, copied once: the guard reads it on every event.
    pub max_events: u64,
    /// Most events that may be pending after an event (`max_pending`), computed once: the
    /// guard reads it on every event.
    pub max_pending: u64,
}

// ---- call plans ------------------------------------------------------------------------

/// What a request slot is in a world with plans (by slab slot of `reqs`). Written by
/// `lifecycle::arrive` and `plan::spawn`; read by `calls` (the dependency) and `plan`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Link {
    /// For a call of a plan (a child request): the request whose plan it runs.
    pub parent: Option<Token>,
    /// The dependency it calls.
    pub dep: u16,
    /// Its call's position in the parent's current step.
    pub call: u16,
    /// How a layer refused it, when one did (the parent concludes with it).
    pub refusal: Option<crate::policy::Refusal>,
    /// For a call of a plan: its number through its class's plan (steps in order, a group's
    /// calls in order), as the recorder's per-call figures are kept.
    pub flat: u16,
    /// For a request with a plan: the dependency of the call whose failure is its own (see
    /// `metrics::Blame`); set by `plan::child_done`.
    pub failed: Option<u16>,
    /// For a request with a plan: the dependency of the call that decided its longest step
    /// so far (the earliest of equals), the one a late answer is blamed on.
    pub critical: Option<u16>,
    /// How long that step took, ns.
    pub critical_ns: Time,
    /// For a service's request: the call it answers (`services.rs`).
    pub answers: Option<Token>,
    /// For a service's request: the round trip its answer takes back to the caller, ns.
    pub hop: Time,
}

/// A request's progress through its plan (by slab slot of `reqs`). Written by `plan`.
#[derive(Debug, Clone, Default)]
pub(super) struct PlanRun {
    /// The current step.
    pub step: u16,
    /// Bumped whenever a step starts or the plan ends: a child of an earlier step is ignored.
    pub generation: u32,
    /// Calls of the step that succeeded, optional ones that failed, required ones that failed.
    pub ok: u16,
    /// See `ok`.
    pub soft: u16,
    /// See `ok`.
    pub hard: u16,
    /// An optional call failed somewhere in the plan: the answer is degraded.
    pub degraded: bool,
    /// Why the first optional call that failed did (the degraded answer's cause, which
    /// counts when the class's fallback answer is closed and so no answer).
    pub soft_cause: Option<Cause>,
    /// The first required failure: (outcome, cause).
    pub failure: Option<(Outcome, Option<Cause>, Option<crate::policy::Refusal>)>,
    /// When the current step started (its calls were sent).
    pub step_start: Time,
    /// The dependencies of the calls behind `failure` and `soft_cause`.
    pub failure_dep: Option<u16>,
    /// See `failure_dep`.
    pub soft_dep: Option<u16>,
    /// The step's calls (child requests), in the order written.
    pub kids: Vec<Token>,
}

/// The call plans' run-time state; empty without plans. Written by `plan`.
#[derive(Default)]
pub(super) struct Plans {
    /// Per slab slot of `reqs`.
    pub links: Vec<Link>,
    /// Per slab slot of `reqs` (used by requests with a plan).
    pub runs: Vec<PlanRun>,
    /// Calls of plans in flight (child requests in `reqs`, counted apart from requests).
    pub children: u64,
}
