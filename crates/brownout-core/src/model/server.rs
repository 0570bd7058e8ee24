//! A dependency server's line of waiting calls: which call a free server takes next (FIFO or
//! LIFO) and which it sheds instead (waited past `max_wait`, or dropped by CoDel). Pure logic
//! over one replica's queue and its CoDel state, both passed in, so it does not care where
//! the world keeps them; the world answers a shed call with a 503 that used no service.

use std::collections::VecDeque;

use crate::engine::Time;
use crate::scenario::{Capacity, Discipline};

/// How a dependency's servers take waiting calls, from its `capacity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ServerRules {
    /// LIFO (true) or FIFO (false).
    pub(crate) lifo: bool,
    /// A call that waited longer than this (ns) is shed when a server reaches it.
    pub(crate) max_wait: Option<Time>,
    /// CoDel's (target, interval), ns.
    pub(crate) codel: Option<(Time, Time)>,
}

impl ServerRules {
    /// The rules a capacity states.
    pub(crate) fn of(c: &Capacity) -> Self {
        Self {
            lifo: c.discipline == Discipline::Lifo,
            max_wait: c.max_wait.map(|d| d.ns()),
            codel: c.codel.as_ref().map(|k| (k.target.ns(), k.interval.ns())),
        }
    }
}

/// CoDel's per-queue state (RFC 8289 section 5.2, the `codel_queue_t` variables), one per
/// replica's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Codel {
    /// In the dropping state (`dropping_`).
    dropping: bool,
    /// When the sojourn time will have stayed above target for an interval
    /// (`first_above_time_`; None for the RFC's 0, "below target").
    first_above: Option<Time>,
    /// When the next drop is due in the dropping state (`drop_next_`).
    drop_next: Time,
    /// Drops since entering the dropping state (`count_`).
    count: u32,
    /// `count` when the dropping state was last entered (`lastcount_`).
    last_count: u32,
}

/// The next call a free server serves, or None when the line holds none to serve. Calls shed
/// on the way (CoDel's drops, then waits beyond `max_wait`) are pushed onto `shed`, in the
/// order they were taken. `sent_at` gives when a queued call joined the line, None for a stale
/// entry (skipped as if absent).
pub(crate) fn take_next<T: Copy>(
    rules: &ServerRules,
    line: &mut VecDeque<T>,
    codel: &mut Codel,
    now: Time,
    sent_at: impl Fn(T) -> Option<Time>,
    shed: &mut Vec<T>,
) -> Option<T> {
    loop {
        let next = match rules.codel {
            Some((target, interval)) => codel_dequeue(rules.lifo, line, codel, now, target, interval, &sent_at, shed),
            None => pop(rules.lifo, line, &sent_at).map(|(t, _)| t),
        }?;
        match (rules.max_wait, sent_at(next)) {
            (Some(most), Some(at)) if now.saturating_sub(at) > most => shed.push(next),
            _ => return Some(next),
        }
    }
}

/// The next live entry from the line's end the discipline serves, with when it joined.
fn pop<T: Copy>(lifo: bool, line: &mut VecDeque<T>, sent_at: &impl Fn(T) -> Option<Time>) -> Option<(T, Time)> {
    loop {
        let t = if lifo { line.pop_back() } else { line.pop_front() }?;
        if let Some(at) = sent_at(t) {
            return Some((t, at));
        }
    }
}

/// RFC 8289 section 5.6's `dodequeue`: take the next call and say whether CoDel may drop it
/// (its sojourn time has stayed at or above `target` for at least `interval`). The RFC's
/// second test, `bytes() <= maxpacket_` (never drop when at most one packet's worth is left
/// queued, so the link never idles), is read as at most one call left waiting.
fn dodequeue<T: Copy>(
    lifo: bool,
    line: &mut VecDeque<T>,
    codel: &mut Codel,
    now: Time,
    target: Time,
    interval: Time,
    sent_at: &impl Fn(T) -> Option<Time>,
) -> (Option<T>, bool) {
    let Some((t, at)) = pop(lifo, line, sent_at) else {
        codel.first_above = None; // an empty queue is below target
        return (None, false);
    };
    let sojourn = now.saturating_sub(at);
    if sojourn < target || line.len() <= 1 {
        codel.first_above = None;
        return (Some(t), false);
    }
    match codel.first_above {
        None => {
            codel.first_above = Some(now.saturating_add(interval));
            (Some(t), false)
        }
        Some(due) => (Some(t), now >= due),
    }
}

/// RFC 8289 section 5.6's `control_law`: the next drop `interval / sqrt(count)` after `t`
/// (rounded down to whole ns; `f64::sqrt` is correctly rounded, so this is deterministic).
fn control_law(t: Time, interval: Time, count: u32) -> Time {
    t.saturating_add((interval as f64 / f64::from(count.max(1)).sqrt()) as Time)
}

/// RFC 8289 section 5.5's `dequeue`, dropping into `shed`.
#[allow(clippy::too_many_arguments)]
fn codel_dequeue<T: Copy>(
    lifo: bool,
    line: &mut VecDeque<T>,
    codel: &mut Codel,
    now: Time,
    target: Time,
    interval: Time,
    sent_at: &impl Fn(T) -> Option<Time>,
    shed: &mut Vec<T>,
) -> Option<T> {
    let (mut p, ok_to_drop) = dodequeue(lifo, line, codel, now, target, interval, sent_at);
    if codel.dropping {
        if !ok_to_drop {
            codel.dropping = false; // sojourn time below target: leave the dropping state
        }
        while codel.dropping && now >= codel.drop_next {
            // Time for the next drop: drop this call and take the next (its sojourn decides
            // whether to stay in the dropping state), scheduling the drop after it.
            shed.extend(p);
            codel.count = codel.count.saturating_add(1);
            let (q, ok) = dodequeue(lifo, line, codel, now, target, interval, sent_at);
            p = q;
            if ok {
                codel.drop_next = control_law(codel.drop_next, interval, codel.count);
            } else {
                codel.dropping = false;
            }
        }
    } else if ok_to_drop {
        // Entering the dropping state: drop this call, take the next, and start the count
        // where the last dropping state left it if that was recent (within 16 intervals).
        shed.extend(p);
        p = dodequeue(lifo, line, codel, now, target, interval, sent_at).0;
        codel.dropping = true;
        let delta = codel.count.wrapping_sub(codel.last_count);
        codel.count = 1;
        if delta > 1 && now.saturating_sub(codel.drop_next) < interval.saturating_mul(16) {
            codel.count = delta;
        }
        codel.drop_next = control_law(now, interval, codel.count);
        codel.last_count = codel.count;
    }
    p
}

#[cfg(test)]
mod tests;
