//! Metrics: what a run measures, excluding warm-up, in O(classes x windows) memory.
//!
//! The world calls the [`Recorder`] at each happening (arrival, finish, dependency call,
//! gauge change, breaker transition, window tick); `Recorder::summary` turns it into the
//! serializable [`summary`] types, and [`catalogue`] says what each figure is. Latencies go into
//! mergeable HDR histograms (microseconds, `hist.rs`); `window.rs` keeps the time series.

pub mod catalogue;
mod cause;
mod class_acc;
pub mod decision;
mod dep_acc;
pub mod events;
mod fallback;
pub mod fields;
mod gauge;
mod hist;
pub mod measure;
pub(crate) mod phases;
mod queue;
pub(crate) mod recorder;
pub(crate) mod recovery;
pub mod slo;
pub mod summary;
mod window;

pub use cause::{Cause, LayerKind};
pub(crate) use dep_acc::{Blame, GraphEvent, PlanCallInfo};
pub use fallback::FallbackUse;
pub(crate) use hist::UsHist;
pub(crate) use phases::{Record, Recorders};
pub use recorder::Outcome;
pub(crate) use recorder::{Finished, OrderEffect, Recorder, RecorderSetup};
pub(crate) use recovery::RecoveryRule;
pub use window::{MAX_CHART_WINDOWS, RowSink, WindowRow, chart_factor};

use crate::engine::Time;

/// A time or count as `f64`, exactly as `t as f64` rounds it for every value below 2^63 (292
/// years): one signed conversion instruction instead of the unsigned sequence.
#[inline(always)]
pub(crate) fn to_f64(t: Time) -> f64 {
    debug_assert!(t < 1 << 63);
    t as i64 as f64
}
