//! Checks of the pools' connection life (`Pool::connect`, `Pool::keep_alive`), each at the
//! value that is wrong.

use super::{Invalid, bad, validate_delay};
use crate::scenario::{Connect, KeepAlive, Scenario};

/// The fleet's pool and each of `fleet.pools`: a set-up time that can be drawn, timeouts
/// and limits above 0, and a keep-alive only beside the pool's own `connect`.
pub(super) fn validate_conn_life(s: &Scenario) -> Result<(), Invalid> {
    let f = &s.fleet;
    one_pool("fleet.pool", f.pool.connect.as_ref(), f.pool.keep_alive.as_ref())?;
    for (k, p) in f.pools.iter().enumerate() {
        one_pool(&format!("fleet.pools[{k}]"), p.connect.as_ref(), p.keep_alive.as_ref())?;
    }
    Ok(())
}

fn one_pool(at: &str, connect: Option<&Connect>, keep: Option<&KeepAlive>) -> Result<(), Invalid> {
    if let Some(c) = connect {
        validate_delay(&c.latency)
            .map_err(|(p, m)| bad(format!("{at}.connect.latency.{p}"), format!("{at}.connect.latency: {m}")))?;
        if c.timeout.is_some_and(|t| t.ns() == 0) {
            return Err(bad(
                format!("{at}.connect.timeout"),
                format!("{at}.connect.timeout must be > 0 (leave it out for no limit)"),
            ));
        }
    }
    let Some(k) = keep else { return Ok(()) };
    if connect.is_none() {
        return Err(bad(
            format!("{at}.keep_alive"),
            format!(
                "{at}.keep_alive needs a connect beside it: without a set-up, connections are ready at once and \
                 reused forever, so keeping them open changes nothing"
            ),
        ));
    }
    if k.idle.is_some_and(|t| t.ns() == 0) {
        return Err(bad(
            format!("{at}.keep_alive.idle"),
            format!("{at}.keep_alive.idle must be > 0 (leave it out to keep idle connections open)"),
        ));
    }
    if k.max_idle == Some(0) {
        return Err(bad(
            format!("{at}.keep_alive.max_idle"),
            format!("{at}.keep_alive.max_idle must be >= 1 (leave keep_alive out to keep no connection open)"),
        ));
    }
    if k.max_requests == Some(0) {
        return Err(bad(
            format!("{at}.keep_alive.max_requests"),
            format!("{at}.keep_alive.max_requests must be >= 1 (leave it out for no limit)"),
        ));
    }
    Ok(())
}
