//! A circuit breaker's state: what a breaker policy reports and the metrics record. A leaf
//! module, so that the metrics need not import the policies.

/// Circuit-breaker state, for metrics and charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BreakerState {
    /// Calls flow.
    Closed,
    /// Calls are short-circuited.
    Open,
    /// Trial calls decide.
    HalfOpen,
}

impl BreakerState {
    /// Lower-case name for files.
    pub fn name(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}
