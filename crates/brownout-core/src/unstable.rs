//! Internals that brownout's own binary, output crate, tests and benches reach across crate
//! boundaries. They are not part of the API an embedder should build on: any of them may
//! change or disappear in any release, without notice and without a deprecation period.

/// The sweep journal's file names, records and checksummed line format (`sweep::store`).
pub mod store {
    pub use crate::sweep::store::*;
}

/// The one way brownout reads a file the user names: non-blocking open, regular files only,
/// read up to a cap (`fsread`).
pub mod fsread {
    pub use crate::fsread::*;
}

/// The recorder the world feeds, for the benches that time each part of a request alone.
pub mod recorder {
    pub use crate::metrics::phases::{Record, Recorders};
    pub use crate::metrics::recorder::{Finished, OrderEffect, Recorder, RecorderSetup};
    pub use crate::metrics::recovery::RecoveryRule;
}

/// The dependency's compiled latency, error and capacity model, for the benches that time one
/// counter-based draw alone (`Model::dependency`).
pub mod dependency {
    pub use crate::model::dependency::{CallPlan, DependencyModel};
}
