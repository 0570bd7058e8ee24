//! Verification against queueing theory: closed forms ([`theory`]) and the suite that runs
//! the reference models of `scenarios/verify/` and compares ([`suite`], `brownout verify`).

mod bucket;
mod graph;
mod loss_k;
mod ps;
mod services;
pub mod suite;
pub mod theory;
