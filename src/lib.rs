//! brownout, whole: the simulator core ([`brownout_core`], re-exported at this crate's root),
//! its engine ([`engine`]) and its output files and charts ([`output`]), for the command line
//! and the tests. An embedder who wants results without charts depends on `brownout-core`.

pub use brownout_core::*;
pub use brownout_output as output;
