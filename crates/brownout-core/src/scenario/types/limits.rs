//! Guards against runaway scenarios.

use serde::{Deserialize, Serialize};

/// Guards against runaway scenarios. `scenario::validate` compares estimates with them before
/// any run (`scenario::estimate`); the run itself stops at `max_in_flight` and `max_events`.
/// Every field may be left out.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Requests alive at once (in service or waiting, and users waiting to reload) per run;
    /// default 2,000,000.
    pub max_in_flight: u64,
    /// Events per run (estimated before the run, counted during it as the summary's `events`
    /// counts them, lazily cancelled timers due by the horizon included); default
    /// 20,000,000,000.
    pub max_events: u64,
    /// Memory a run of every policy set, or a sweep on this scenario, is estimated to need,
    /// e.g. `"4GiB"` (the default) or `"512MiB"`.
    #[serde(skip_serializing_if = "is_default_memory")]
    #[schemars(!skip_serializing_if)]
    #[schemars(with = "String")]
    pub max_memory: bytesize::ByteSize,
    /// Attempts one request may make: the product of its retry layers' `max_attempts`, a
    /// `DotnetStandard` layer counting `max_retry_attempts + 1` (default 1000). The run also
    /// stops retrying a request once it has made this many attempts.
    #[serde(skip_serializing_if = "is_default_attempts")]
    #[schemars(!skip_serializing_if)]
    pub max_attempts: u64,
    /// Bytes a run is estimated to write (`timeseries.csv`: windows x classes x policies rows;
    /// `summary.json`: every policy set's figures per class and per phase), e.g. `"4GiB"` (the
    /// default) or `"20GiB"`. A scenario estimated to write more is refused before it runs.
    #[serde(skip_serializing_if = "is_default_output")]
    #[schemars(!skip_serializing_if)]
    #[schemars(with = "String")]
    pub max_output: bytesize::ByteSize,
}

const DEFAULT_MAX_MEMORY: bytesize::ByteSize = bytesize::ByteSize::gib(4);
const DEFAULT_MAX_ATTEMPTS: u64 = 1000;
const DEFAULT_MAX_OUTPUT: bytesize::ByteSize = bytesize::ByteSize::gib(4);

// Left out of the saved scenario when default, so files and sweep plans from before the
// field existed keep their bytes.
fn is_default_memory(m: &bytesize::ByteSize) -> bool {
    *m == DEFAULT_MAX_MEMORY
}
fn is_default_attempts(n: &u64) -> bool {
    *n == DEFAULT_MAX_ATTEMPTS
}
fn is_default_output(m: &bytesize::ByteSize) -> bool {
    *m == DEFAULT_MAX_OUTPUT
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_in_flight: 2_000_000,
            max_events: 20_000_000_000,
            max_memory: DEFAULT_MAX_MEMORY,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            max_output: DEFAULT_MAX_OUTPUT,
        }
    }
}
