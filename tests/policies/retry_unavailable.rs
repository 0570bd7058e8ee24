//! A limit that answers 503 (`refuse_as: Unavailable`, a proxy's queue timeout) is a layer's
//! 503 to `Retry`'s `on_refusal`, as an open breaker's is: `Layer503` retries it, `Layer429`
//! does not. Worked by hand: requests at 0 and 10 ms through a one-permit limiter without a
//! queue, inside a retry with a 100 ms backoff; calls take 100 ms. Request 1 holds the permit
//! 0-100 ms; request 2 is refused at 10 ms with a 503 (an `error`). Retried, it tries again at
//! 110 ms, finds the permit free and is answered at 210 ms.

use crate::common;

fn outcomes(on_refusal: &str) -> (u64, u64, u64) {
    let text = format!(
        r#"Scenario(
        name: "unavailable", horizon: "20s",
        fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "5s")),
        classes: [(name: "api", arrivals: Scripted(times: ["0ms", "10ms"]), deadline: "5s")],
        dependency: (latency: Constant("100ms")),
        policies: [(name: "p", stack: [
            (policy: Retry((max_attempts: 3, backoff: "100ms", on_refusal: [{on_refusal}]))),
            (policy: Limiter((permits: 1, refuse_as: Unavailable))),
        ])],
    )"#
    );
    let s = common::run_first(&text);
    let c = &s.classes[0];
    (c.outcomes.ok, c.outcomes.error, s.dependency.calls)
}

#[test]
fn layer_503_retries_a_limit_answered_as_503() {
    assert_eq!(outcomes("Layer503"), (2, 0, 2));
}

#[test]
fn layer_429_leaves_a_503_refusal_alone() {
    assert_eq!(outcomes("Layer429"), (1, 1, 1));
}
