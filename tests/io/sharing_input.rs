//! `capacity.sharing` beside settings it cannot honour (issue 34): under processor sharing
//! or the scalability law every call present is in service, so nothing waits to be ordered
//! (`discipline: Lifo`) or shed after waiting (`max_wait`, `codel`); and the law's
//! coefficients have a range. `check` refuses each at the offending value's line and column
//! with exit code 2.

use std::path::Path;

use crate::common;

/// A scenario whose dependency capacity is `capacity`, written on line 5 after 8 spaces.
fn scenario(capacity: &str) -> String {
    format!(
        "Scenario(name: \"x\", seed: 1, horizon: \"10s\",\n\
         fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: \"1s\")),\n\
         classes: [(name: \"api\", arrivals: Poisson(rate_per_s: 1), deadline: \"5s\")],\n\
         dependency: (latency: Constant(\"10ms\"), capacity: (\n        {capacity})),\n\
         policies: [(name: \"none\", stack: [])])\n"
    )
}

#[test]
fn sharing_with_waiting_rules_or_coefficients_out_of_range_is_refused_where_written() {
    let dir = std::env::temp_dir().join(format!("brownout-sharing-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (capacity, value, says) in [
        ("servers: 1, queue: 5, sharing: ProcessorSharing, discipline: Lifo", "Lifo", "discipline"),
        ("servers: 1, queue: 5, max_wait: \"1s\", sharing: ProcessorSharing", "\"1s\"", "max_wait"),
        (
            "servers: 1, queue: 5, sharing: ProcessorSharing, codel: (target: \"5ms\", interval: \"100ms\")",
            "(target",
            "codel",
        ),
        ("servers: 1, queue: 5, sharing: Usl(sigma: 1.5, kappa: 0.0)", "1.5", "sigma must be in [0, 1]"),
        ("servers: 1, queue: 5, sharing: Usl(sigma: 0.1, kappa: -0.01)", "-0.01", "kappa must be >= 0"),
    ] {
        let text = scenario(capacity);
        let col = 8 + capacity.find(value).unwrap() + 1;
        let e = brownout::scenario::load_text(Path::new("inline.ron"), &text).expect_err(capacity).to_string();
        assert!(e.contains(&format!("inline.ron:5:{col}")), "{capacity}: located at 5:{col}: {e}");
        assert!(e.contains(says), "{capacity}: {e}");
        let file = dir.join("bad.ron");
        std::fs::write(&file, &text).unwrap();
        let out = common::brownout(&["check", "bad.ron"], &dir);
        assert_eq!(out.status.code(), Some(2), "{capacity}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("bad.ron:5:{col}")), "{capacity}: {stderr}");
    }
    // Sharing alone, and with the settings it keeps (FIFO written out), is accepted.
    for capacity in [
        "servers: 2, queue: 5, sharing: ProcessorSharing, discipline: Fifo",
        "servers: 1, queue: 0, sharing: Usl(sigma: 0.05, kappa: 0.001)",
    ] {
        brownout::scenario::load_text(Path::new("inline.ron"), &scenario(capacity)).expect(capacity);
    }
    std::fs::remove_dir_all(&dir).ok();
}
