//! The event log: every state change of a stateful policy layer, with the policy's reason.
//! Kept only when asked for ([`RunOptions::events`](crate::model::RunOptions::events)), and
//! bounded by that count, so a run without it allocates nothing here.

use crate::engine::Time;

/// Which part of a layer's status changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aspect {
    /// The breaker state (`closed`, `open`, `half_open`).
    Breaker,
    /// The concurrency limit.
    Limit,
    /// The degraded flag (`degraded`, `normal`).
    Degraded,
}

impl Aspect {
    /// Lower-case name, as in the event file.
    pub fn name(self) -> &'static str {
        match self {
            Aspect::Breaker => "breaker",
            Aspect::Limit => "limit",
            Aspect::Degraded => "degraded",
        }
    }
}

/// One state change of one layer on one instance.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerEvent {
    /// When it happened (ns of virtual time).
    pub t: Time,
    /// The gateway instance whose layer changed (each instance, for a fleet-wide layer).
    pub instance: u32,
    /// The layer is fleet-wide: one state shared by every instance.
    pub fleet: bool,
    /// The layer's index in the policy set's stack (0 = outermost).
    pub layer: u8,
    /// The layer's policy kind (e.g. `error-rate-breaker`).
    pub kind: &'static str,
    /// What changed.
    pub aspect: Aspect,
    /// The value before (breaker state name, limit, or degraded flag).
    pub from: String,
    /// The value after.
    pub to: String,
    /// Why, with the figures of the decision (`Policy::reason`).
    pub reason: String,
    /// The dependencies the layer is scoped to (its `dependencies`; empty for a layer of
    /// every call, as in every one-dependency scenario).
    pub dependencies: Vec<String>,
    /// The service whose stack the layer belongs to; `None` for the gateway's own stack.
    pub service: Option<String>,
}

/// The events one run kept, and how many it left out past its bound.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventLog {
    /// Most events to keep.
    pub cap: usize,
    /// The first `cap` events, in the order they happened.
    pub events: Vec<LayerEvent>,
    /// Events that happened after the bound was reached (count).
    pub dropped: u64,
}

impl EventLog {
    /// An empty log that keeps at most `cap` events.
    pub fn new(cap: usize) -> Self {
        Self { cap, events: Vec::new(), dropped: 0 }
    }

    /// Keep `e` unless the bound is reached (then only count it).
    pub fn push(&mut self, e: LayerEvent) {
        if self.events.len() < self.cap {
            self.events.push(e);
        } else {
            self.dropped += 1;
        }
    }

    /// Room for one more event.
    pub fn has_room(&self) -> bool {
        self.events.len() < self.cap
    }
}
