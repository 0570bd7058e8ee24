//! Concurrency limiters. Each file is one limiter.

pub mod aimd;
pub mod envoy_gradient;
pub mod fixed;
pub mod gate;
pub mod gradient2;
pub mod vegas;
