//! The policy test driver: a policy's calls as the world makes them, without a world.

use brownout::policy::{Admission, Attempt, CallOutcome, Completed, Hooks, Policy, RetryAsk};

/// splitmix64: a small seeded generator for the call sequences.
pub struct Mix(pub u64);

impl Mix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Drive two copies of one policy through the same 3,000 seeded random calls (requests,
/// admissions, completions, cancellations, timeouts, hedges, retries, wake-ups, up to 20 ms
/// apart, over `classes` classes): `full` sees every hook, `lean` only the hooks it declares,
/// the skipped ones answered by the trait's defaults as the world does. Every answer, status
/// and reason must be the same; a policy that reports no status must keep the one it was built
/// with. `name` labels the failure messages.
pub fn drive(name: &str, mut full: Box<dyn Policy>, mut lean: Box<dyn Policy>, seed: u64, classes: u16) {
    let hooks = lean.hooks();
    let built = full.status();
    let mut rng = Mix(seed);
    let mut now = 0u64;
    let mut next_id = 0u64;
    let mut admitted: Vec<(u64, u16, u64)> = Vec::new(); // (id, class, admitted at)
    for step in 0..3000 {
        now += rng.below(20_000_000); // up to 20 ms between calls
        let class = rng.below(classes as u64) as u16;
        let at = format!("{name}, seed {seed}, step {step}");
        if let Some(t) = full.status().wake_at
            && t <= now
        {
            full.on_wakeup(now);
            lean.on_wakeup(now);
        }
        match rng.below(8) {
            0 => {
                let a = full.on_request(now, class);
                let b = hooks.has(Hooks::ON_REQUEST) && lean.on_request(now, class);
                assert_eq!(a, b, "on_request at {at}");
            }
            1 | 2 => {
                let att = Attempt::new(now, class, next_id)
                    .number(1 + rng.below(3) as u32)
                    .request(now.saturating_sub(rng.below(50_000_000)), now + rng.below(2_000_000_000));
                next_id += 1;
                let a = full.admit(&att);
                let b = if hooks.has(Hooks::ADMIT) { lean.admit(&att) } else { Admission::Admit };
                assert_eq!(a, b, "admit at {at}");
                match a {
                    Admission::Admit => admitted.push((att.id, class, now)),
                    Admission::Wait { .. } | Admission::WaitEvicting { .. } => {
                        full.left_queue(&att);
                        lean.left_queue(&att);
                    }
                    Admission::Refuse(_) => {}
                }
            }
            3 | 4 if !admitted.is_empty() => {
                let (id, class, at_admit) = admitted.swap_remove(rng.below(admitted.len() as u64) as usize);
                let outcome = [CallOutcome::Success, CallOutcome::Error, CallOutcome::Timeout][rng.below(3) as usize];
                let done = Completed::new(now, class, id, at_admit, outcome);
                full.complete(&done);
                if hooks.has(Hooks::NOTICES) {
                    lean.complete(&done);
                }
            }
            5 if !admitted.is_empty() => {
                let (id, class, _) = admitted.swap_remove(rng.below(admitted.len() as u64) as usize);
                let att = Attempt::new(now, class, id);
                full.cancel(&att);
                if hooks.has(Hooks::NOTICES) {
                    lean.cancel(&att);
                }
            }
            6 => {
                let a = (
                    full.attempt_timeout(class),
                    full.connection_timeout(class),
                    full.is_inactivity_timeout(class),
                    full.hedge_delay(class),
                );
                let timed = hooks.has(Hooks::ATTEMPT_TIMEOUT);
                let b = (
                    if timed { lean.attempt_timeout(class) } else { None },
                    if hooks.has(Hooks::CONNECTION_TIMEOUT) { lean.connection_timeout(class) } else { None },
                    hooks.has(Hooks::CONNECTION_TIMEOUT) && lean.is_inactivity_timeout(class),
                    if hooks.has(Hooks::HEDGE_DELAY) { lean.hedge_delay(class) } else { None },
                );
                assert_eq!(a, b, "attempt_timeout, connection_timeout, is_inactivity_timeout, hedge_delay at {at}");
            }
            _ => {
                let outcome = [CallOutcome::Error, CallOutcome::Timeout][rng.below(2) as usize];
                let uniform = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                let ask = RetryAsk::new(now, class, 1 + rng.below(4) as u32, outcome, uniform);
                let a = (full.retry_delay(&ask), full.allow_retry(&ask));
                let b = (
                    if hooks.has(Hooks::RETRY_DELAY) { lean.retry_delay(&ask) } else { None },
                    !hooks.has(Hooks::ALLOW_RETRY) || lean.allow_retry(&ask),
                );
                assert_eq!(a, b, "retry_delay, allow_retry at {at}");
            }
        }
        assert_eq!(full.status(), lean.status(), "status at {at}");
        assert_eq!(full.reason(), lean.reason(), "reason at {at}");
        if !full.reports_status() {
            assert_eq!(full.status(), built, "a policy that reports no status changed it at {at}");
        }
    }
}
