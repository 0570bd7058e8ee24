//! How the recorder counts and costs the answers of fallbacks without a catalogue.

use super::summary::FallbackAnswers;

/// What a class's fallback answers are to its caller, and what each use costs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FallbackUse {
    /// The catalogue's last-known value (or no fallback): costs come from substitutions and refunds.
    #[default]
    Catalogue,
    /// A default success (fail open): an answer, in goodput.
    Open(f64),
    /// A definite refusal (fail closed): an answer, but not in goodput.
    Closed(f64),
    /// The class's last answer: an answer, in goodput, with its age as staleness.
    Cached(f64),
}

impl FallbackUse {
    pub(super) fn cost(self) -> f64 {
        match self {
            FallbackUse::Catalogue => 0.0,
            FallbackUse::Open(c) | FallbackUse::Closed(c) | FallbackUse::Cached(c) => c,
        }
    }

    /// The summary of `uses` answers of this kind; `None` for the catalogue.
    pub(super) fn answers(self, uses: u64) -> Option<FallbackAnswers> {
        let n = |kind: bool| if kind { uses } else { 0 };
        (self != FallbackUse::Catalogue).then(|| FallbackAnswers {
            open: n(matches!(self, FallbackUse::Open(_))),
            closed: n(matches!(self, FallbackUse::Closed(_))),
            cached: n(matches!(self, FallbackUse::Cached(_))),
            cost: uses as f64 * self.cost(),
        })
    }
}
