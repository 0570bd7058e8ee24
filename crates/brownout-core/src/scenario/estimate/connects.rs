//! The connection set-ups a request certainly causes (`Pool::connect`): each new connection
//! whose set-up takes time is an `Ev::Connected` before its call goes out
//! (`model/world/conns.rs`). Which calls open a new connection follows the pool's
//! `keep_alive` as a policy set's proxy presets change it (`model/connlife.rs`,
//! `ConnLife::for_set`), read here without the model.

use crate::policy::pool_rules::KeepRule;
use crate::scenario::{Class, Delay, Latency, PolicySet, Scenario};

/// Set-up events a request of class `c` certainly causes, in the policy set that causes the
/// most: for each call of its plan (or its one call), the share of calls that open a new
/// connection whose set-up certainly succeeds and takes time (`connects_per_call`).
pub(super) fn connect_events(s: &Scenario, c: &Class) -> f64 {
    let deps = s.dependencies_called(c);
    let per_set = |p: &PolicySet| -> f64 { deps.iter().map(|d| connects_per_call(s, p, d)).sum() };
    s.policies.iter().map(per_set).fold(0.0, f64::max)
}

/// Of the calls to `dep` in policy set `p`, the share that certainly open a connection with
/// a set-up event: every call when its pool keeps no connection (no `keep_alive`, or a
/// preset's `http-reuse never` / nginx without `keepalive`), one in `max_requests` when a
/// connection closes after that many, none when connections stay open (how many the pool
/// opens depends on the run). A set-up that takes no time sends the call at once, and one
/// that may run past its connect timeout may fail in the one event already counted for the
/// call: neither counts.
fn connects_per_call(s: &Scenario, p: &PolicySet, dep: &str) -> f64 {
    let pool_of = |d: &str| s.fleet.pools.iter().position(|k| k.dependency == d).map_or(0, |k| k + 1);
    let pool = pool_of(dep);
    // A pool of the dependency's own without `connect` takes the fleet pool's connections.
    let (connect, keep_alive) = match pool.checked_sub(1).map(|k| &s.fleet.pools[k]) {
        Some(own) if own.connect.is_some() => (own.connect.as_ref(), own.keep_alive.as_ref()),
        _ => (s.fleet.pool.connect.as_ref(), s.fleet.pool.keep_alive.as_ref()),
    };
    let Some(connect) = connect else { return 0.0 };
    let (mut timeout, mut keep, mut max_requests) =
        (connect.timeout, keep_alive.is_some(), keep_alive.and_then(|k| k.max_requests));
    // A preset's rules reach every pool its calls use, the outermost first.
    for l in &p.stack {
        let Some(rules) = l.policy.pool_rules() else { continue };
        if !(l.dependencies.is_empty() || l.dependencies.iter().any(|d| pool_of(d) == pool)) {
            continue;
        }
        timeout = rules.connect_timeout.or(timeout);
        match rules.keep {
            None => {}
            Some(KeepRule::Never) => keep = false,
            Some(KeepRule::Kept) => keep = true,
            Some(KeepRule::With(_, n, _)) => (keep, max_requests) = (true, n),
        }
    }
    let fixed = match &connect.latency {
        Delay::Fixed(d) | Delay::Random(Latency::Constant(d)) => Some(d.ns()),
        Delay::Random(_) => None,
    };
    let takes_time = fixed.is_none_or(|t| t > 0);
    let may_fail = timeout.is_some_and(|limit| fixed.is_none_or(|t| t > limit.ns()));
    if !takes_time || may_fail {
        0.0
    } else if !keep {
        1.0
    } else {
        max_requests.map_or(0.0, |n| 1.0 / f64::from(n.max(1)))
    }
}
