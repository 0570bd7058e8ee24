//! Scenario files: RON types, loading with located errors, and semantic validation.

pub mod budget;
mod duration;
mod load;
mod types;

pub use duration::{Dur, parse_duration};
pub use load::{ScenarioError, load, parse, validate};
pub use types::*;
