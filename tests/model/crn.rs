//! Common random numbers with requests that exist because of other requests: reloads and
//! closed-loop users (issue 15, defect 2). A request's draws (key, instance, item, latency,
//! error, think time) must not depend on what other requests did under a policy set.

use std::collections::BTreeMap;
use std::path::Path;

use brownout::model::records::{Origin, Records};
use brownout::model::{Model, RunOptions, run_policy_recorded};
use brownout::scenario::{parse, validate};

fn records(text: &str) -> Vec<Records> {
    let s = parse(Path::new("crn.ron"), text).unwrap();
    validate(&s).unwrap();
    let m = Model::build(&s, 11, Path::new(".")).unwrap();
    (0..s.policies.len()).map(|p| run_policy_recorded(&m, p, RunOptions::default()).expect("runs").1).collect()
}

/// Open-loop traffic whose first two seconds meet a dependency 1000x slower. "timeout" makes
/// every early request fail and its user reload (up to twice); "none" lets them hang.
const RELOADS: &str = r#"Scenario(
    name: "reload-crn", horizon: "6s", window: "1s",
    fleet: (instances: 3, workers: (slots: 500), pool: (max_connections: 500, acquire_timeout: "1s")),
    classes: [(name: "a", arrivals: Poisson(rate_per_s: 40), deadline: "1s",
               reload: (patience: "100s", probability: 1.0, delay: "100ms", max_reloads: 2))],
    dependency: (
        latency: LogNormal(median: "50ms", sigma: 0.8),
        drift: Points([("0s", 1000.0), ("2s", 1000.0), ("2s", 1.0)]),
    ),
    catalogue: (items: 1000, changes_per_hour: 60, ttl: "10s"),
    policies: [
        (name: "none"),
        (name: "timeout", stack: [(policy: Timeout((timeout: "200ms")))]),
    ],
)"#;

#[test]
fn open_loop_requests_keep_their_draws_when_other_requests_reload() {
    let runs = records(RELOADS);
    let (none, timeout) = (&runs[0], &runs[1]);
    let reloads = |r: &Records| r.requests.iter().filter(|q| matches!(q.origin, Origin::Reload { .. })).count();
    assert_eq!(reloads(none), 0);
    // About 80 requests arrive in the slow 2 s, each reloads twice.
    assert!(reloads(timeout) > 100, "{} reloads", reloads(timeout));
    let arrivals = |r: &Records| -> Vec<_> {
        r.requests
            .iter()
            .filter(|q| matches!(q.origin, Origin::Arrival(_)))
            .map(|q| (q.origin, q.arrived, q.key, q.instance, q.item))
            .collect()
    };
    assert!(arrivals(none).len() > 200);
    assert_eq!(arrivals(none), arrivals(timeout));
    // After 2 s every call is healthy and answers inside 200 ms or not: a call of the same
    // request and attempt starting at the same time draws the same latency and error.
    let calls = |r: &Records| -> BTreeMap<_, _> {
        r.calls.iter().map(|c| ((c.class, c.key, c.attempt, c.start), (c.latency, c.error))).collect()
    };
    let (a, b) = (calls(none), calls(timeout));
    let shared: Vec<_> = a.iter().filter(|(k, _)| b.contains_key(k)).collect();
    assert!(shared.len() > 150, "{} calls in common", shared.len());
    for (k, v) in shared {
        assert_eq!(b[k], *v, "call {k:?}");
    }
}

#[test]
fn a_reload_asks_for_the_item_the_user_was_looking_at() {
    let runs = records(RELOADS);
    let items: BTreeMap<u64, u32> = runs[1].requests.iter().map(|q| (q.key, q.item)).collect();
    let mut seen = 0;
    for q in &runs[1].requests {
        if let Origin::Reload { of, number } = q.origin {
            assert_eq!(q.item, items[&of], "reload {number} of {of}");
            assert_ne!(q.key, of, "a reload draws anew (a fresh request to the dependency)");
            seen += 1;
        }
    }
    assert!(seen > 100);
    // Items spread over 1000: a reload that drew a fresh item would differ almost always.
    let distinct: std::collections::BTreeSet<u32> = items.values().copied().collect();
    assert!(distinct.len() > 50, "{} distinct items", distinct.len());
}

/// Twenty users in a closed loop; "slow" retries errors (one call in five) after 300 ms, so
/// its users send fewer requests, at other times, than under "fast".
const CLOSED: &str = r#"Scenario(
    name: "closed-crn", horizon: "20s", window: "1s",
    fleet: (instances: 2, workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "u", arrivals: ClosedLoop(users: 20, think: "500ms"), deadline: "1s")],
    dependency: (latency: Exponential(mean: "80ms"), error_rate: Constant(0.2)),
    catalogue: (items: 1000, changes_per_hour: 60, ttl: "10s"),
    policies: [
        (name: "fast"),
        (name: "slow", stack: [(policy: Retry((max_attempts: 3, backoff: "300ms")))]),
    ],
)"#;

#[test]
fn a_closed_loop_users_kth_request_draws_the_same_whatever_came_before() {
    let runs = records(CLOSED);
    type Draws = (u64, u32, u32, u64);
    let users = |r: &Records| -> BTreeMap<(u32, u32), Draws> {
        r.requests
            .iter()
            .filter_map(|q| match q.origin {
                Origin::User { user, k, think } => Some(((user, k), (q.key, q.instance, q.item, think))),
                _ => None,
            })
            .collect()
    };
    let (fast, slow) = (users(&runs[0]), users(&runs[1]));
    // Retries with 300 ms backoffs after 20 % errors: fewer requests per user.
    assert!(slow.len() < fast.len(), "{} vs {}", slow.len(), fast.len());
    let mut shared = 0;
    for (id, d) in &slow {
        assert_eq!(fast.get(id), Some(d), "user request {id:?}");
        shared += 1;
    }
    assert!(shared > 200, "{shared}");
    // Latency and errors are time-invariant here: a (request, attempt) draws the same call
    // whenever it is sent.
    let calls = |r: &Records| -> BTreeMap<_, _> {
        r.calls.iter().map(|c| ((c.key, c.attempt), (c.latency, c.error))).collect()
    };
    let (a, b) = (calls(&runs[0]), calls(&runs[1]));
    let mut common = 0;
    for (k, v) in &a {
        if let Some(w) = b.get(k) {
            assert_eq!(v, w, "call {k:?}");
            common += 1;
        }
    }
    assert!(common > 200, "{common}");
}
