//! Domain-neutral fallbacks: what a refused or failed request is answered with when its class
//! has no catalogue to fall back on (see [`FallbackAnswer`]).

use crate::engine::Time;
use crate::metrics::FallbackUse;
use crate::scenario::{FallbackAnswer, Scenario};

/// A slot that holds no answer yet.
const EMPTY: Time = Time::MAX;

/// The answer a fallback gives, for the recorder and the business model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Given {
    /// A default success (fail open).
    Open,
    /// A definite refusal (fail closed).
    Closed,
    /// The class's last answer, this old.
    Cached(Time),
}

/// Each class's last successful dependency answer, per gateway instance, for the classes whose
/// fallback is `LastAnswer`.
#[derive(Debug, Clone)]
pub struct LastAnswers {
    /// Time of the last success: class-major, one slot per instance (`EMPTY`: none yet).
    at: Vec<Time>,
    instances: usize,
    /// Per class: `Some(max age)` for a `LastAnswer` class (`Time::MAX` = any age), else `None`.
    max_age: Vec<Option<Time>>,
}

impl LastAnswers {
    /// `None` when no class falls back to its last answer.
    pub fn new(s: &Scenario, instances: u32) -> Option<Self> {
        let max_age: Vec<Option<Time>> = s
            .classes
            .iter()
            .map(|c| match c.fallback_answer {
                FallbackAnswer::LastAnswer { max_age, .. } => Some(max_age.map_or(Time::MAX, |d| d.ns())),
                _ => None,
            })
            .collect();
        max_age.iter().any(Option::is_some).then(|| Self {
            at: vec![EMPTY; max_age.len() * instances as usize],
            instances: instances as usize,
            max_age,
        })
    }

    fn slot(&self, class: usize, instance: u32) -> usize {
        class * self.instances + instance as usize
    }

    /// A successful dependency answer for `class` on `instance` at `now`.
    pub fn refresh(&mut self, class: usize, instance: u32, now: Time) {
        if self.max_age[class].is_some() {
            let slot = self.slot(class, instance);
            self.at[slot] = now;
        }
    }

    /// The age of the answer to serve, if there is one young enough.
    pub fn serve(&self, class: usize, instance: u32, now: Time) -> Option<Time> {
        let max_age = self.max_age[class]?;
        let at = self.at[self.slot(class, instance)];
        let age = now.checked_sub(at)?;
        (at != EMPTY && age <= max_age).then_some(age)
    }

    /// Forget an instance's answers (a restart without a persistent cache).
    pub fn clear(&mut self, instance: u32) {
        for class in 0..self.max_age.len() {
            let slot = self.slot(class, instance);
            self.at[slot] = EMPTY;
        }
    }
}

/// The fallback answer for a refused or failed request of a class whose answer is not the
/// catalogue's; `None` where the fallback does not apply (no last answer, or too old).
pub fn give(
    answer: FallbackAnswer,
    last: Option<&LastAnswers>,
    class: usize,
    instance: u32,
    now: Time,
) -> Option<Given> {
    match answer {
        FallbackAnswer::Catalogue => None,
        FallbackAnswer::FailOpen { .. } => Some(Given::Open),
        FallbackAnswer::FailClosed { .. } => Some(Given::Closed),
        FallbackAnswer::LastAnswer { .. } => last?.serve(class, instance, now).map(Given::Cached),
    }
}

/// How the recorder counts and costs a class's fallback answers.
pub fn recorded_as(answer: FallbackAnswer) -> FallbackUse {
    match answer {
        FallbackAnswer::Catalogue => FallbackUse::Catalogue,
        FallbackAnswer::FailOpen { cost_per_use } => FallbackUse::Open(cost_per_use),
        FallbackAnswer::FailClosed { cost_per_use } => FallbackUse::Closed(cost_per_use),
        FallbackAnswer::LastAnswer { cost_per_use, .. } => FallbackUse::Cached(cost_per_use),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SECOND;

    fn scenario(answers: &[&str]) -> Scenario {
        let classes: String = answers
            .iter()
            .enumerate()
            .map(|(i, a)| {
                format!(
                    "(name: \"c{i}\", arrivals: Poisson(rate_per_s: 1), deadline: \"1s\", fallback: OnRefusalOrFailure, fallback_answer: {a}),"
                )
            })
            .collect();
        let text = format!(
            "Scenario(name: \"t\", horizon: \"1s\", fleet: (workers: (slots: 1), pool: (max_connections: 1, acquire_timeout: \"1s\")), \
             classes: [{classes}], dependency: (latency: Constant(\"1ms\")), policies: [(name: \"p\")])"
        );
        crate::scenario::parse(std::path::Path::new("t.ron"), &text).unwrap()
    }

    #[test]
    fn no_last_answer_class_means_no_table() {
        assert!(LastAnswers::new(&scenario(&["FailOpen()", "FailClosed(cost_per_use: 1)"]), 3).is_none());
    }

    #[test]
    fn last_answer_ages_expires_and_is_per_instance_and_class() {
        let s = scenario(&["LastAnswer(max_age: \"10s\")", "FailOpen()", "LastAnswer()"]);
        let mut l = LastAnswers::new(&s, 2).unwrap();
        assert_eq!(l.serve(0, 0, SECOND), None, "nothing before the first success");
        l.refresh(0, 0, 5 * SECOND);
        assert_eq!(l.serve(0, 0, 7 * SECOND), Some(2 * SECOND));
        assert_eq!(l.serve(0, 0, 15 * SECOND), Some(10 * SECOND), "max_age is inclusive");
        assert_eq!(l.serve(0, 0, 15 * SECOND + 1), None, "older than max_age");
        assert_eq!(l.serve(0, 1, 7 * SECOND), None, "another instance has its own");
        assert_eq!(l.serve(2, 0, 7 * SECOND), None, "another class has its own");
        l.refresh(1, 0, 5 * SECOND);
        assert_eq!(l.serve(1, 0, 6 * SECOND), None, "a FailOpen class keeps no answer");
        l.refresh(2, 1, 0);
        assert_eq!(l.serve(2, 1, 1000 * SECOND), Some(1000 * SECOND), "no max_age: any age");
        l.clear(1);
        assert_eq!(l.serve(2, 1, 1000 * SECOND), None, "cleared by a restart");
        assert_eq!(l.serve(0, 0, 7 * SECOND), Some(2 * SECOND), "other instances keep theirs");
    }

    #[test]
    fn give_follows_the_answer_kind() {
        let s = scenario(&["LastAnswer()"]);
        let mut l = LastAnswers::new(&s, 1).unwrap();
        let open = FallbackAnswer::FailOpen { cost_per_use: 0.0 };
        let closed = FallbackAnswer::FailClosed { cost_per_use: 0.0 };
        let cached = s.classes[0].fallback_answer;
        assert_eq!(give(open, None, 0, 0, 9), Some(Given::Open));
        assert_eq!(give(closed, None, 0, 0, 9), Some(Given::Closed));
        assert_eq!(give(FallbackAnswer::Catalogue, Some(&l), 0, 0, 9), None);
        assert_eq!(give(cached, Some(&l), 0, 0, 9), None);
        l.refresh(0, 0, 4);
        assert_eq!(give(cached, Some(&l), 0, 0, 9), Some(Given::Cached(5)));
    }
}
