//! `Policy::hooks` is an optimisation contract: the world calls a layer's optional hooks
//! (`admit`, `on_request`, `cancel`/`complete`, `attempt_timeout`, `connection_timeout`, `hedge_delay`,
//! `retry_delay`, `allow_retry`) only when the policy declares them. For every layer of every shipped
//! scenario, two copies of the policy see the same seeded random sequence of calls, one every
//! hook and the other only its declared ones (the skipped calls answered by the trait's
//! defaults, as the world does); every answer, status and reason must stay the same. A
//! declaration that leaves out a hook the policy needs makes the copies part. A policy that
//! reports no status (`Policy::reports_status`) must keep the status it was built with.

use std::path::Path;

use brownout::policy::{Admission, Attempt, BuildCtx, Completed, Hooks, Policy, PolicySpec};

use crate::common::policy::drive;

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
