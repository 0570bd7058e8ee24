//! HAProxy's active health checks of the dependency's replicas, as each gateway instance
//! (one HAProxy) runs them: a sans-IO state machine per instance, told the time, like
//! `model::outlier`. What a check sees is handed in by the caller, drawn counter-based from
//! the replica's state at the check's start, so no check depends on what requests did.
//!
//! Semantics follow HAProxy 3.5-dev:
//! - Each replica has a health counter (`struct check`'s `health`), starting at `rise`: a
//!   server starts "up, but will fall down at first failure" (`src/server.c`,
//!   `srv_settings_cpy`: `check.health = check.rise`), so a first failed check already
//!   takes it down.
//! - A failed check (`src/check.c`, `set_server_check_status`, `CHK_RES_FAILED`) lowers a
//!   health above 0 by one, to 0 once it falls below `rise`; a passed one raises a health
//!   below `rise + fall - 1` by one, to `rise + fall - 1` once it reaches `rise`. The server
//!   is down at health 0 (`check_notify_failure`) and up from `rise` on
//!   (`check_notify_success`): once up, `fall` consecutive failures take it down; once down,
//!   `rise` consecutive passes bring it back.
//! - The first check of replica `r` of `n` starts at `inter x r / n` (`start_check_task`:
//!   `mininter * srvpos / nbcheck`, every server with the same `inter`); the next starts
//!   `inter` after a check ends (`src/check.c`, `process_chk_conn`: `tick_add(now_ms,
//!   srv_getinter(check))` once the result is in), so checks are `inter` plus a check's
//!   duration apart.
//! - A check's result takes effect when the check ends: its answer's time, or `timeout`
//!   (HAProxy's `timeout check`, or `inter` when unset) for a check that got no answer in
//!   time. A result at exactly a request's time counts for it.
//!
//! Not modelled: `fastinter`, `downinter` (both `inter` by default), `spread-checks` (off by
//! default), agent checks, `observe`/`on-error`, slow start.

use crate::engine::Time;

/// What one check saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The check passed: an answer without error within the check's timeout.
    pub passed: bool,
    /// How long the check took (until its answer, its failure, or its timeout).
    pub took: Time,
}

/// One replica's checks.
#[derive(Debug, Clone)]
struct Server {
    /// HAProxy's `check->health`.
    health: u32,
    /// When the next check starts (no check in progress) or the one in progress started.
    next: Time,
    /// Checks started so far: the counter of each check's draws.
    started: u64,
    /// The check in progress: when it ends and whether it passed.
    pending: Option<(Time, bool)>,
}

/// See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct HealthChecks {
    inter: Time,
    rise: u32,
    fall: u32,
    servers: Vec<Server>,
}

impl HealthChecks {
    /// Checks of `replicas` replicas every `inter`, down after `fall` failures, up after
    /// `rise` passes (each >= 1), the first checks starting at `start`.
    pub(crate) fn new(replicas: u32, inter: Time, rise: u32, fall: u32, start: Time) -> Self {
        let n = u128::from(replicas.max(1));
        let servers = (0..replicas)
            .map(|r| Server {
                health: rise,
                next: start.saturating_add((u128::from(inter) * u128::from(r) / n) as Time),
                started: 0,
                pending: None,
            })
            .collect();
        Self { inter, rise, fall, servers }
    }

    /// Run every check that ends by `now`, in each replica's order; `see(replica, number,
    /// start)` says what check `number` of `replica`, started at `start`, saw.
    pub(crate) fn advance(&mut self, now: Time, mut see: impl FnMut(u32, u64, Time) -> Seen) {
        let (rise, fall, inter) = (self.rise, self.fall, self.inter);
        for (r, s) in self.servers.iter_mut().enumerate() {
            loop {
                match s.pending {
                    Some((end, passed)) if end <= now => {
                        s.health = next_health(s.health, passed, rise, fall);
                        s.pending = None;
                        s.next = end.saturating_add(inter);
                    }
                    None if s.next <= now => {
                        let seen = see(r as u32, s.started, s.next);
                        s.started += 1;
                        s.pending = Some((s.next.saturating_add(seen.took), seen.passed));
                    }
                    _ => break,
                }
            }
        }
    }

    /// The instance restarted at `now`: every replica starts up again, its first check spread
    /// over `inter` from now; the checks' numbers go on, so no check repeats an earlier draw.
    pub(crate) fn restart(&mut self, now: Time) {
        let n = self.servers.len() as u128;
        for (r, s) in self.servers.iter_mut().enumerate() {
            s.health = self.rise;
            s.pending = None;
            s.next = now.saturating_add((u128::from(self.inter) * r as u128 / n) as Time);
        }
    }

    /// Replica `r` is up (health at least `rise`).
    pub(crate) fn is_up(&self, r: u32) -> bool {
        self.servers.get(r as usize).is_some_and(|s| s.health >= self.rise)
    }

    /// Some replica is down: the balancer must skip it.
    pub(crate) fn filters(&self) -> bool {
        self.servers.iter().any(|s| s.health < self.rise)
    }
}

/// `set_server_check_status`'s health after a check that `passed` or failed.
fn next_health(health: u32, passed: bool, rise: u32, fall: u32) -> u32 {
    let top = rise + fall - 1;
    if passed {
        if health >= top {
            health
        } else if health + 1 >= rise {
            top
        } else {
            health + 1
        }
    } else if health <= rise {
        // One less would be below `rise` (or it is 0 already): down.
        0
    } else {
        health - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MILLISECOND;

    const S: Time = 1000 * MILLISECOND;

    #[test]
    fn health_moves_as_set_server_check_status_moves_it() {
        // rise 2, fall 3: up servers sit at 4 after a pass; three failures take 4 to 3, 2, 0.
        assert_eq!(next_health(2, true, 2, 3), 4);
        assert_eq!(next_health(4, false, 2, 3), 3);
        assert_eq!(next_health(3, false, 2, 3), 2);
        assert_eq!(next_health(2, false, 2, 3), 0);
        assert_eq!(next_health(0, false, 2, 3), 0);
        // Down: one pass to 1 (still down), the second to 4 (up).
        assert_eq!(next_health(0, true, 2, 3), 1);
        assert_eq!(next_health(1, true, 2, 3), 4);
        // A failure between passes only lowers it by one while up.
        assert_eq!(next_health(3, true, 2, 3), 4);
    }

    #[test]
    fn a_replica_failing_from_t_is_down_after_fall_checks_and_up_after_rise() {
        // One replica, inter 2 s, checks answered at once (took 0): checks at 0, 2, 4, ...
        // It fails from t = 5 s: the checks at 6, 8 and 10 fail; down at 10 = the last check
        // before t plus fall x inter, within t + fall x inter = 11.
        let mut h = HealthChecks::new(1, 2 * S, 2, 3, 0);
        let fails = |from: Time, to: Time| {
            move |_r: u32, _k: u64, at: Time| Seen { passed: !(from..to).contains(&at), took: 0 }
        };
        let see = fails(5 * S, 13 * S);
        h.advance(9 * S, see);
        assert!(h.is_up(0), "two failures of three");
        h.advance(10 * S, see);
        assert!(!h.is_up(0) && h.filters());
        // Healthy again from 13 s: checks at 14 and 16 pass; up at 16 (rise 2 x inter).
        h.advance(15 * S, see);
        assert!(!h.is_up(0));
        h.advance(16 * S, see);
        assert!(h.is_up(0) && !h.filters());
    }

    #[test]
    fn a_check_counts_when_it_ends_and_the_next_starts_inter_later() {
        // Checks time out after 1 s (took 1 s): check 0 runs 0-1, check 1 runs 3-4, check 2
        // runs 6-7: 3 s apart. fall 2 after a first pass: the pass at 1 puts health at
        // rise + fall - 1 = 2 (rise 1); failures end at 4 (health 1) and 7 (down).
        let mut h = HealthChecks::new(1, 2 * S, 1, 2, 0);
        let see = |_r: u32, k: u64, _at: Time| Seen { passed: k == 0, took: S };
        h.advance(6 * S, see);
        assert!(h.is_up(0));
        h.advance(7 * S - 1, see);
        assert!(h.is_up(0));
        h.advance(7 * S, see);
        assert!(!h.is_up(0));
    }

    #[test]
    fn a_first_failed_check_takes_a_fresh_server_down_and_checks_are_spread() {
        // Health starts at rise ("up, but will fall down at first failure"): one failure and
        // it is down. Three replicas, inter 3 s: first checks at 0, 1 and 2 s.
        let mut h = HealthChecks::new(3, 3 * S, 2, 3, 0);
        let mut starts = Vec::new();
        h.advance(2 * S, |r, k, at| {
            starts.push((r, k, at));
            Seen { passed: r != 1, took: 0 }
        });
        assert_eq!(starts, [(0, 0, 0), (1, 0, S), (2, 0, 2 * S)]);
        assert!(h.is_up(0) && !h.is_up(1) && h.is_up(2));
    }
}
