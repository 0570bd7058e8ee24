//! Circuit breakers. Each file is one state machine; `window`, `inflight` and `trials` are
//! the pieces the breakers share.

pub mod consecutive;
pub mod error_rate;
pub mod hystrix;
pub mod inflight;
pub mod latency;
pub mod opossum;
pub mod polly;
pub mod resilience4j;
pub mod sentinel;
pub mod trials;
pub mod window;
