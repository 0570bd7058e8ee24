//! What a person reads: expectations checked after a run, the terminal comparison table
//! and the generated verdict. Pure functions from results to text; no I/O here.

pub mod expect;
pub mod table;
