//! `Policy::reports_status` is an optimisation contract: the world stops asking a layer for
//! its status when the layer says it never changes. Every layer of every shipped scenario
//! that opts out must ask for no wake-up when built (a timer wish is a status change);
//! `tests/policies/policy_hooks.rs` drives each through random calls and checks its status stays the
//! one it was built with, and in debug builds the world also asserts, at every call it
//! skips, that the status is still the one it last saw.

use std::path::Path;

use brownout::policy::BuildCtx;

#[test]
fn layers_that_report_no_status_keep_the_default() {
    let mut checked = (0, 0);
    for entry in std::fs::read_dir("scenarios").expect("scenarios folder") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "ron") {
            continue;
        }
        let s = brownout::scenario::load(Path::new(&path)).expect("shipped scenario loads");
        let ctx = BuildCtx::new(s.classes.iter().map(|c| c.name.clone()).collect()).on_instance(0, s.fleet.instances);
        for set in &s.policies {
            for layer in &set.stack {
                let p = layer.policy.build(&ctx);
                if p.reports_status() {
                    checked.0 += 1;
                } else {
                    checked.1 += 1;
                    assert_eq!(p.status().wake_at, None, "{}: {}", path.display(), set.name);
                }
            }
        }
    }
    // Both kinds occur: breakers and limiters report, timeouts and retries do not.
    assert!(checked.0 > 0 && checked.1 > 0, "{checked:?}");
}
