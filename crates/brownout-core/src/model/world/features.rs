//! The features a run's world is compiled for. A run that cannot use a feature (no policy
//! layer, no replica, no service graph, no reload, no records) takes a form of the world in
//! which that feature's checks are the constant `false` and the compiler drops them, as the
//! world takes a recorder form without phases (`Record`). Every rule stays one function: a
//! form only skips work whose guard the run's model already makes false, so every form that
//! [`Features::covers`] a run reports it byte for byte as the general form does (`forms.rs`).

use std::marker::PhantomData;

use super::{Model, RunOptions};
use crate::scenario::FallbackAnswer;

/// What one run uses, read once from the model, the policy set and the run's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Uses {
    /// The policy set has a layer: admission, timeouts, hedges, retries, notices, the pump.
    pub stack: bool,
    /// Several dependencies (call plans, children, per-dependency gauges) or a dependency's
    /// own pool (`fleet.pools`).
    pub graph: bool,
    /// Replicas (balancing, outstanding counts, outlier detection, slow replicas) or
    /// partitions.
    pub replicas: bool,
    /// The per-request work after the answer or beside it: business orders, reloads,
    /// closed-loop users, the catalogue's caches and last answers.
    pub extras: bool,
    /// Anything kept beyond the event hash: the first events, the event log, records.
    pub trace: bool,
}

impl Uses {
    /// What run `policy` of `m` with `opts` (and records when `record`) uses.
    pub(super) fn of(m: &Model, policy: usize, opts: &RunOptions, record: bool) -> Self {
        let s = &m.scenario;
        Self {
            stack: !m.run_stack(policy).layers.is_empty(),
            graph: m.graph.is_some() || s.deps().len() > 1 || !s.fleet.pools.is_empty(),
            replicas: s.deps().iter().any(|d| d.replicas.is_some()) || !s.fleet.partitions.is_empty(),
            extras: s.business.is_some()
                || s.catalogue.is_some()
                || s.classes.iter().any(|c| matches!(c.fallback_answer, FallbackAnswer::LastAnswer { .. }))
                || s.classes.iter().any(|c| c.reload.is_some())
                || m.arrivals.iter().any(|a| a.initial_users() > 0),
            trace: record || opts.trace_limit > 0 || opts.events > 0,
        }
    }
}

/// A form of the world: which features its code keeps. `false` removes a feature's work at
/// compile time; a form is chosen for a run only when it [`covers`](Features::covers) what
/// the run uses.
pub(super) trait Features: 'static {
    /// The policy stack's work (see [`Uses::stack`]).
    const STACK: bool;
    /// Service graphs and per-dependency pools (see [`Uses::graph`]).
    const GRAPH: bool;
    /// Replicas and partitions (see [`Uses::replicas`]).
    const REPLICAS: bool;
    /// Business orders, reloads, closed-loop users, caches (see [`Uses::extras`]).
    const EXTRAS: bool;
    /// First events, event log, records (see [`Uses::trace`]).
    const TRACE: bool;

    /// This form keeps every feature `u` uses.
    fn covers(u: Uses) -> bool {
        (Self::STACK || !u.stack)
            && (Self::GRAPH || !u.graph)
            && (Self::REPLICAS || !u.replicas)
            && (Self::EXTRAS || !u.extras)
            && (Self::TRACE || !u.trace)
    }
}

/// Every feature: runs anything (and is the reference the other forms are tested against).
pub(super) struct General;

impl Features for General {
    const STACK: bool = true;
    const GRAPH: bool = true;
    const REPLICAS: bool = true;
    const EXTRAS: bool = true;
    const TRACE: bool = true;
}

/// One dependency without replicas, nothing traced beyond the hash; the policy stack's work
/// when `STACK` (the reference models: M/M/c without, the timeout races with), and business
/// orders, reloads, closed-loop users and caches when `EXTRAS` (grocery and the fleets).
pub(super) struct Lean<const STACK: bool, const EXTRAS: bool>(PhantomData<()>);

impl<const S: bool, const E: bool> Features for Lean<S, E> {
    const STACK: bool = S;
    const GRAPH: bool = false;
    const REPLICAS: bool = false;
    const EXTRAS: bool = E;
    const TRACE: bool = false;
}

/// The forms a run may be compiled in, leanest first: `world::run` takes
/// [`Form::leanest`] and maps it to its type, under either recorder form (with or without
/// phases). A lean form with extras and no stack is not compiled: no shipped scenario would
/// take it (a world costs its compile time once per recorder form), and `LeanStackExtras`
/// covers such a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Form {
    /// `Lean<false, false>`: no policy layer, no extras.
    Lean,
    /// `Lean<true, false>`: a policy stack, no extras.
    LeanStack,
    /// `Lean<true, true>`: a policy stack and the per-request extras.
    LeanStackExtras,
    /// [`General`]: every feature.
    General,
}

impl Form {
    /// The leanest compiled form that keeps every feature `u` uses.
    pub(super) fn leanest(u: Uses) -> Self {
        if Lean::<false, false>::covers(u) {
            Self::Lean
        } else if Lean::<true, false>::covers(u) {
            Self::LeanStack
        } else if Lean::<true, true>::covers(u) {
            Self::LeanStackExtras
        } else {
            Self::General
        }
    }
}
