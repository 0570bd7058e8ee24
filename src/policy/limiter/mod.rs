//! Concurrency limiters. Each file is one limiter.

pub mod fixed;
