//! brownout, whole: the simulator core ([`brownout_core`], re-exported at this crate's root),
//! its engine ([`engine`]) and its output files and charts ([`output`]), for the command line
//! and the tests; [`diff`] compares two result folders, change by change, beyond noise. An
//! embedder who wants results without charts depends on `brownout-core`.
//!
//! # Embedding
//!
//! Load a scenario, build its model, run every policy set, read a figure from the summary:
//!
//! ```
//! use std::path::Path;
//! use brownout::model::{Model, RunOptions};
//!
//! // Three requests at fixed times to a healthy dependency that answers in 20 ms, well
//! // inside the 1 s deadline, through a gateway with room for all of them.
//! let text = r#"Scenario(
//!     name: "embedded",
//!     horizon: "5s",
//!     fleet: (instances: 1, workers: (slots: 4), pool: (max_connections: 4, acquire_timeout: "1s")),
//!     classes: [(name: "api", arrivals: Scripted(times: ["1s", "2s", "3s"]), deadline: "1s")],
//!     dependency: (latency: Constant("20ms")),
//!     policies: [(name: "direct", stack: [])],
//! )"#;
//! let path = Path::new("embedded.ron"); // names the text in error messages
//! let scenario = brownout::scenario::load_text(path, text)?;
//! let model = Model::build(&scenario, scenario.seed, Path::new("."))?;
//! let result = brownout::runner::run_all(&model, RunOptions::new(), false)?;
//!
//! let api = &result.summary.runs[0].classes[0];
//! // Every scripted request is counted once, under exactly one outcome...
//! assert_eq!(api.requests, 3);
//! assert_eq!(api.outcomes.total(), api.requests);
//! // ...and nothing can fail: each is answered fresh and within its deadline.
//! assert_eq!(api.outcomes.ok, 3);
//! assert_eq!(api.goodput_ratio, 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub use brownout_core::*;
pub use brownout_output as output;

pub mod diff;
