//! Scenario files: RON types, loading with located errors, semantic validation, data files
//! and the names that become file names.

pub mod budget;
pub mod data;
mod duration;
mod load;
pub mod locate;
mod names;
mod types;
mod validate;

pub use duration::{Dur, parse_duration};
pub use load::{ScenarioError, load, load_with_plugins, located, parse};
pub use names::{check_file_name, file_stem};
pub use types::*;
pub use validate::{Invalid, validate};
