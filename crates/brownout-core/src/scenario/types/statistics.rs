//! How figures are compared: the practical-equivalence margins of the one statistics rule.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How figures are compared across policy sets, settings and candidates. Every comparison
/// (run stars, a sweep's best settings, `decide`, `tune`, `diff`) is paired by seed with a
/// Student-t 95 % interval, and a difference whose interval reaches inside the metric's
/// margin is a tie.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Statistics {
    /// Practical-equivalence margin per metric, in the metric's unit (a fraction for a ratio,
    /// milliseconds for a latency): a difference that cannot be shown to exceed it is a tie.
    /// A key is a catalogue metric name (for every class, if per class) or `class/metric`
    /// (that class only), e.g. `{"in_time_ratio": 0.002, "checkout/p95_ms": 5.0}`; each
    /// value finite and >= 0. Metrics not named keep the catalogue's margin (0.1 percentage
    /// point for a ratio, 1 ms, 0.1/s, 1 for a count or a cost, 0.01 for other numbers).
    #[serde(default)]
    pub margins: BTreeMap<String, f64>,
}

impl super::Scenario {
    /// The margins its figures are compared by: `statistics.margins` over the catalogue's.
    pub fn margins(&self) -> crate::metrics::catalogue::Margins {
        crate::metrics::catalogue::Margins::new(
            self.statistics.as_ref().map(|st| st.margins.clone()).unwrap_or_default(),
        )
    }
}
