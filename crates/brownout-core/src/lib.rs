//! brownout: a deterministic discrete-event simulator for deciding how a service should
//! protect itself from a dependency that is slow but not failing.
//!
//! A tour, top-down:
//! - [`scenario`]: the RON file a user writes (types, loading with located errors, validation).
//! - [`model`]: the simulated world (fleet, worker slots, pools, dependency, cache) built
//!   from a scenario; [`model::run_policy`] runs one policy set on it.
//! - [`policy`]: the policies as sans-IO state machines, one file each, and their registry.
//! - [`engine`]: the generic event engine (time, queue, PRNG streams), the `brownout-engine`
//!   crate re-exported. It knows nothing else.
//! - [`metrics`]: what a run measures, and the serializable summary.
//! - [`runner`]: runs every policy set of a scenario, in parallel, into a summary.
//! - [`report`]: expectations, the comparison table and the verdict text.
//! - [`sweep`]: parameter sweeps with replications, intervals, resume and shards.
//! - [`import`]: resilience4j, Envoy/Istio, opossum and .NET configuration files as policy stacks.
//! - [`verify`]: closed forms of queueing theory and the suite that checks the model by them.
//! - [`unstable`]: internals brownout's own crates and tests reach; they may change without
//!   notice.
//!
//! # Features
//!
//! Both are on by default; an embedder who needs neither builds with `default-features = false`.
//! - `import`: reading resilience4j, Envoy/Istio, opossum and .NET configuration files
//!   ([`import::import_file`], and `Import(..)` layers in scenarios, which without it are
//!   refused with their location).
//! - `tune`: the `tune` module, the knob search over a policy set (argmin's Nelder-Mead).

#![warn(missing_docs)]

pub use brownout_engine as engine;
pub(crate) mod breaker_state;
// Reads Prometheus answers with the importers' JSON reader (`import::tree`).
#[cfg(feature = "import")]
pub mod calibrate;
pub mod decide;
pub(crate) mod fsread;
pub mod import;
pub mod metrics;
pub mod model;
pub mod policy;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod stats;
pub mod sweep;
pub(crate) mod text;
#[cfg(feature = "tune")]
pub mod tune;
pub mod units;
pub mod unstable;
pub mod verify;
