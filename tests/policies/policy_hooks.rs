//! `Policy::hooks` is an optimisation contract: the world calls a layer's optional hooks
//! (`admit`, `on_request`, `cancel`/`complete`, `attempt_timeout`, `hedge_delay`,
//! `retry_delay`, `allow_retry`) only when the policy declares them. For every layer of every shipped
//! scenario, two copies of the policy see the same seeded random sequence of calls, one every
//! hook and the other only its declared ones (the skipped calls answered by the trait's
//! defaults, as the world does); every answer, status and reason must stay the same. A
//! declaration that leaves out a hook the policy needs makes the copies part. A policy that
//! reports no status (`Policy::reports_status`) must keep the status it was built with.

use std::path::Path;

use brownout::policy::{Admission, Attempt, BuildCtx, CallOutcome, Completed, Hooks, Policy, PolicySpec, RetryAsk};

/// splitmix64: a small seeded generator for the call sequences.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Drive `full` (every hook) and `lean` (declared hooks only) through `steps` random calls.
fn drive(name: &str, mut full: Box<dyn Policy>, mut lean: Box<dyn Policy>, seed: u64, classes: u16) {
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
                let a = (full.attempt_timeout(class), full.hedge_delay(class));
                let b = (
                    if hooks.has(Hooks::ATTEMPT_TIMEOUT) { lean.attempt_timeout(class) } else { None },
                    if hooks.has(Hooks::HEDGE_DELAY) { lean.hedge_delay(class) } else { None },
                );
                assert_eq!(a, b, "attempt_timeout, hedge_delay at {at}");
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

/// Every scenario file under `dir`, recursively.
fn scenario_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            scenario_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ron") {
            out.push(path);
        }
    }
}

#[test]
fn declared_hooks_leave_every_answer_unchanged() {
    let mut files = Vec::new();
    scenario_files(Path::new("scenarios"), &mut files);
    files.sort();
    let mut kinds = std::collections::BTreeSet::new();
    let mut layers = 0;
    for path in files {
        // Sweep specs and data files in the folder are not scenarios.
        let Ok(s) = brownout::scenario::load(&path) else { continue };
        let ctx = BuildCtx::new(s.classes.iter().map(|c| c.name.clone()).collect()).on_instance(0, s.fleet.instances);
        for set in &s.policies {
            for (l, layer) in set.stack.iter().enumerate() {
                if matches!(layer.policy, PolicySpec::DotnetStandard(_) | PolicySpec::Import(_)) {
                    continue; // expanded into other layers before a world is built
                }
                kinds.insert(layer.policy.kind());
                layers += 1;
                let name = format!("{} {} layer {l} ({})", path.display(), set.name, layer.policy.kind());
                for seed in 0..3 {
                    drive(&name, layer.policy.build(&ctx), layer.policy.build(&ctx), seed, s.classes.len() as u16);
                }
            }
        }
    }
    // The shipped scenarios exercise most kinds: breakers, limiters, budgets, hedges, retries.
    assert!(kinds.len() >= 12, "only {} kinds in {layers} layers: {kinds:?}", kinds.len());
}

#[test]
fn a_hook_left_out_parts_the_copies() {
    // The check above can fail: a limiter that hears no completions keeps its permits.
    struct Deaf(Box<dyn Policy>);
    impl Policy for Deaf {
        fn admit(&mut self, a: &Attempt) -> Admission {
            self.0.admit(a)
        }
        fn cancel(&mut self, a: &Attempt) {
            self.0.cancel(a)
        }
        fn complete(&mut self, d: &Completed) {
            self.0.complete(d)
        }
        fn status(&self) -> brownout::policy::Status {
            self.0.status()
        }
        fn hooks(&self) -> Hooks {
            Hooks::ADMIT // but not NOTICES
        }
    }
    let spec: PolicySpec = ron::from_str("Limiter((permits: 2))").expect("spec");
    let ctx = BuildCtx::new(vec!["a".into()]);
    let parted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        drive("deaf limiter", Box::new(Deaf(spec.build(&ctx))), Box::new(Deaf(spec.build(&ctx))), 1, 1)
    }));
    assert!(parted.is_err(), "a limiter deaf to completions answered like a hearing one");
}
