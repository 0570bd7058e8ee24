//! What answers a request when its class's `fallback` applies, and the checks that a
//! fallback can take effect at all.
//!
//! A class's `fallback` says *when* (never, on a policy's refusal, or also on a failed call);
//! its `fallback_answer` says *what*: the catalogue's last-known value of the item (the
//! grocery case, the default), a static default answer (fail open or fail closed), or the
//! class's own last successful answer (no catalogue needed).

use serde::{Deserialize, Serialize};

use super::{Class, Dur, Fallback, Invalid, Scenario};

/// What a fallback answers with.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default, schemars::JsonSchema)]
pub enum FallbackAnswer {
    /// The catalogue's last-known value of the requested item (needs a `catalogue`).
    #[default]
    Catalogue,
    /// Fail open: answer success with a default ("assume in stock", "approve the payment").
    /// The caller counts it as answered: it is in goodput, and an order it carries goes ahead.
    FailOpen {
        /// Business cost of each use (the risk taken by answering without the dependency).
        #[serde(default)]
        cost_per_use: f64,
    },
    /// Fail closed: answer a definite refusal ("decline"). The caller gets an answer at once
    /// but not what it asked for: it is not in goodput, and an order it carries is lost.
    FailClosed {
        /// Business cost of each use (e.g. a good payment declined).
        #[serde(default)]
        cost_per_use: f64,
    },
    /// The class's last successful dependency answer on the same gateway instance, whatever
    /// the item: a feature flag, a configuration, a rate table. Counted like a catalogue
    /// fallback (answered, in goodput) and its age reported as staleness. Before the first
    /// success, or once the answer is older than `max_age`, the fallback does not apply and
    /// the refusal or failure reaches the caller. A restart empties it unless
    /// `persistent_cache`.
    LastAnswer {
        /// Business cost of each use.
        #[serde(default)]
        cost_per_use: f64,
        /// Answers older than this are not served (None = any age).
        #[serde(default)]
        max_age: Option<Dur>,
    },
}

impl FallbackAnswer {
    /// The catalogue answer: left out of a saved scenario, which then keeps its bytes.
    pub fn is_catalogue(&self) -> bool {
        *self == FallbackAnswer::Catalogue
    }

    /// Business cost of one use (0 for the catalogue, whose costs are substitutions and refunds).
    pub fn cost_per_use(&self) -> f64 {
        match *self {
            FallbackAnswer::Catalogue => 0.0,
            FallbackAnswer::FailOpen { cost_per_use }
            | FallbackAnswer::FailClosed { cost_per_use }
            | FallbackAnswer::LastAnswer { cost_per_use, .. } => cost_per_use,
        }
    }

    fn variant(&self) -> &'static str {
        match self {
            FallbackAnswer::Catalogue => "Catalogue",
            FallbackAnswer::FailOpen { .. } => "FailOpen",
            FallbackAnswer::FailClosed { .. } => "FailClosed",
            FallbackAnswer::LastAnswer { .. } => "LastAnswer",
        }
    }
}

/// Some policy set has a layer over class `c` whose refusal can answer with its fallback
/// (`Facts::fallback`).
fn can_be_refused(s: &Scenario, c: &Class) -> bool {
    s.policies
        .iter()
        .flat_map(|set| &set.stack)
        .any(|l| (l.classes.is_empty() || l.classes.contains(&c.name)) && l.policy.facts().fallback.admits(&c.name))
}

/// Every class's fallback can take effect and its answer's parameters are valid.
pub(super) fn validate_fallbacks(s: &Scenario) -> Result<(), Invalid> {
    for (i, c) in s.classes.iter().enumerate() {
        validate_class(s, c).map_err(|(field, message)| Invalid { path: format!("classes[{i}].{field}"), message })?;
    }
    Ok(())
}

fn validate_class(s: &Scenario, c: &Class) -> Result<(), (String, String)> {
    let name = &c.name;
    let answer = c.fallback_answer;
    let at_answer = || format!("fallback_answer.{}", answer.variant());
    let cost = answer.cost_per_use();
    if !(cost >= 0.0 && cost.is_finite()) {
        return Err((format!("{}.cost_per_use", at_answer()), "cost_per_use must be >= 0 and finite".into()));
    }
    if let FallbackAnswer::LastAnswer { max_age: Some(d), .. } = answer
        && d.ns() == 0
    {
        return Err((
            format!("{}.max_age", at_answer()),
            "max_age must be > 0 (a zero age serves nothing; leave it out for any age)".into(),
        ));
    }
    if c.fallback == Fallback::None {
        if !answer.is_catalogue() {
            return Err((
                "fallback_answer".into(),
                format!(
                    "class \"{name}\" has a fallback_answer but fallback is None, so it is never used: \
                     set fallback: OnRefusal or OnRefusalOrFailure"
                ),
            ));
        }
        return Ok(());
    }
    if !c.calls_dependency {
        let field = if answer.is_catalogue() { "fallback" } else { "fallback_answer" }.to_string();
        return Err((
            field,
            format!(
                "class \"{name}\" never calls the dependency (calls_dependency: false), so nothing is \
                 refused or fails and its fallback never applies"
            ),
        ));
    }
    if answer.is_catalogue() && s.catalogue.is_none() {
        return Err((
            "fallback".into(),
            format!(
                "class \"{name}\" falls back to the catalogue's last-known value, but the scenario has no \
                 catalogue: add one, or set fallback_answer: FailOpen(..), FailClosed(..) or LastAnswer(..)"
            ),
        ));
    }
    if c.fallback == Fallback::OnRefusal && !can_be_refused(s, c) {
        return Err((
            "fallback".into(),
            format!(
                "class \"{name}\" falls back OnRefusal, but no policy set has a layer over it that can refuse \
                 into the fallback (a breaker, a limiter with refuse_as: Fallback, a bulkhead class with \
                 on_full: FallbackNow; a 429 from refuse_as: Rejected, on_full: Reject or Wait, \
                 EnvoyThresholds or ShedByDeadline never falls back): use OnRefusalOrFailure, or add such a layer"
            ),
        ));
    }
    Ok(())
}
