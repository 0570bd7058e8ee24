//! What a person reads: expectations checked after a run, the terminal comparison table
//! and the generated verdict, and names escaped for each format they reach. Pure functions
//! from results to text; no I/O here.

pub mod decision;
pub mod dependencies;
pub mod escape;
pub mod expect;
pub mod graph;
pub mod recovery;
pub mod replicate;
pub mod slo;
pub mod table;
