//! Timers cancelled lazily (a generation that no longer matches) must not pile up: a world
//! that starts a long fixed-delay timer per request and ends most of them early keeps memory
//! O(in flight), not O(rate x delay), and dropping the stale timers early changes nothing the
//! handler sees or the run reports.

use brownout_engine::{EventQueue, Handler, Slab, Time, Token, run};
use proptest::prelude::*;

/// A request's long wait timer (`Expire`) and the short piece of work that usually ends the
/// wait first (`Done`). Each request lives in the slab until either fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Arrive,
    Done(Token),
    Expire(Token),
}

struct World {
    live: Slab<()>,
    gap: Time,
    work: Vec<Time>,
    wait: Time,
    next: usize,
    arrivals: usize,
    seen: Vec<(Time, Ev)>,
    peak_pending: usize,
}

impl World {
    fn new(work: Vec<Time>, gap: Time, wait: Time, arrivals: usize) -> Self {
        Self { live: Slab::new(), gap, work, wait, next: 0, arrivals, seen: Vec::new(), peak_pending: 0 }
    }
}

impl Handler<Ev> for World {
    fn handle(&mut self, now: Time, event: Ev, q: &mut EventQueue<Ev>) {
        self.peak_pending = self.peak_pending.max(q.len());
        match event {
            Ev::Arrive => {
                let tok = self.live.insert(());
                let work = self.work[self.next % self.work.len()];
                self.next += 1;
                q.schedule_fixed(self.wait, Ev::Expire(tok));
                q.schedule_in(work, Ev::Done(tok));
                if self.next < self.arrivals {
                    q.schedule_in(self.gap, Ev::Arrive);
                }
            }
            Ev::Done(tok) | Ev::Expire(tok) => {
                if self.live.remove(tok).is_none() {
                    return; // a tombstone: the other event ended this request
                }
            }
        }
        self.seen.push((now, event));
    }

    fn is_stale(&self, event: &Ev) -> bool {
        matches!(event, Ev::Done(t) | Ev::Expire(t) if self.live.get(*t).is_none())
    }
}

fn simulate(world: &mut World, floor: usize, horizon: Time) -> (u64, Time) {
    let mut q = EventQueue::with_compaction_floor(floor);
    q.schedule_at(0, Ev::Arrive);
    let stats = run(world, &mut q, horizon);
    (stats.events, stats.end)
}

#[test]
fn stale_wait_timers_do_not_pile_up() {
    // 1 ms between arrivals, 2 ms of work, a one-hour wait timer: at most ~3 requests are in
    // flight, but without compaction every timer of the last hour stays queued (200,000).
    let mut world = World::new(vec![2_000_000], 1_000_000, 3_600_000_000_000, 200_000);
    simulate(&mut world, 1024, Time::MAX);
    assert!(world.peak_pending < 4 * 1024, "{} events pending at the peak", world.peak_pending);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Compacting often (a floor of 1) or never (a floor above every length) hands the
    /// handler the same events at the same times and counts the same events.
    #[test]
    fn compaction_changes_nothing_observable(
        work in proptest::collection::vec(1u64..50, 1..20),
        gap in 1u64..20,
        wait in 1u64..200,
        arrivals in 1usize..400,
        horizon in 50u64..5_000,
    ) {
        let mut often = World::new(work.clone(), gap, wait, arrivals);
        let mut never = World::new(work, gap, wait, arrivals);
        let a = simulate(&mut often, 1, horizon);
        let b = simulate(&mut never, usize::MAX, horizon);
        prop_assert_eq!(a, b);
        prop_assert_eq!(often.seen, never.seen);
    }
}
