//! Circuit breakers. Each file is one state machine; `window`, `inflight` and `trials` are
//! the pieces the breakers share (crate-private: a scenario names only the breakers' configs).

pub mod consecutive;
pub mod error_rate;
pub mod hystrix;
pub(crate) mod inflight;
pub mod latency;
pub mod opossum;
pub mod polly;
pub mod resilience4j;
pub mod sentinel;
pub(crate) mod trials;
pub(crate) mod window;
