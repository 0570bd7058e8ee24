//! Scenario files: RON types, loading with located errors, semantic validation, data files
//! and the names that become file names.

pub(crate) mod data;
mod decide_check;
pub(crate) mod estimate;
mod fallback;
mod import;
#[cfg(feature = "import")]
mod import_warnings;
mod load;
pub(crate) mod locate;
mod names;
mod types;
mod validate;

pub use crate::units::Dur;
pub(crate) use crate::units::parse_duration;
pub use decide_check::{Resolve, measure_of, validate_decide};
pub(crate) use decide_check::{check_business, check_dependency_name, check_fraction, check_measure};
pub use fallback::FallbackAnswer;
#[cfg(feature = "import")]
pub use import_warnings::import_warnings;
pub use load::{ScenarioError, data_files, load, load_text, load_with_plugins, parse};
pub(crate) use names::check_file_name;
// `calibrate` names classes after routes, as chart files will be named.
#[cfg(feature = "import")]
pub(crate) use names::file_stem;
pub use types::*;
pub use validate::{Invalid, MAX_REPLICATIONS, validate};
