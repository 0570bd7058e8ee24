//! Inactivity timeouts (`Timeout((starts: Inactivity))`: HAProxy's `timeout server`, nginx's
//! `proxy_read_timeout`): the attempt's timer first bounds the wait for the answer's first
//! byte, from when it holds a connection; once the first byte is in, it bounds the wait for
//! the body instead, which the dependency's `transfer` time takes. With `transfer` 0 the
//! first byte is the whole answer and nothing here moves a deadline: the `Connection` start.

use super::*;

impl<R: Record, F: Features> World<'_, R, F> {
    /// The attempt timer of `tok` fired at `now` while its call was out: true when an
    /// inactivity timeout set it and the answer's first byte is already in, so it does not
    /// fire now (its body has a timeout of its own from the first byte, re-armed here if the
    /// body outlasts it).
    pub(super) fn first_byte_in(&mut self, now: Time, q: &mut EventQueue<Ev>, tok: Token) -> bool {
        let r = self.reqs.get(tok).expect("live request");
        let Some(call) = r.attempt.call else { return false };
        let Some(c) = self.upstream.calls.get_mut(call) else { return false };
        let cap = std::mem::take(&mut c.inactivity_cap);
        // The limit: the deadline it set is the connection (the call's start) plus it.
        let limit = r.time.attempt_deadline.saturating_sub(c.sent_at);
        if cap == 0 || c.done_at == Time::MAX {
            return false; // not even served: no byte yet
        }
        let first = c.done_at.saturating_sub(self.m.dep(c.dep).transfer);
        if first > now {
            return false; // the first byte is late: the timeout fires
        }
        // Between the first byte and the body's end: one read timer, capped by whatever
        // deadline the attempt had before (an attempt or request timeout).
        let at = first.saturating_add(limit).min(cap);
        let body_in_time = c.done_at <= at;
        let r = self.reqs.get_mut(tok).expect("live request");
        if body_in_time {
            r.attempt.timed = false; // the answer comes first: no timer is left
            return true;
        }
        if at <= now {
            return false;
        }
        r.time.attempt_deadline = at;
        self.timer(q, tok, at, Timer::Attempt);
        true
    }
}
