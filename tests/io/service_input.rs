//! Services that call services (issue 33): the syntax `check` accepts, and the bad graphs it
//! refuses at the offending value's line and column: a service that reaches itself (the
//! path named), a call to an unknown dependency, an empty plan, a quorum larger than its
//! group, a leaf's setting on a service, a policy set's stack for what is no service; and the
//! estimates, where depth multiplies attempts ((r + 1) per retry layer per level) and fan-out
//! multiplies calls, each refusal naming the limit that would allow it.

use std::path::Path;

use brownout::scenario::load_text;

use crate::graph_input::position;

/// A valid graph: checkout calls inventory and pricing in parallel, then payment; pricing is
/// a service that calls tax, then rates (optional).
const GOOD: &str = r#"Scenario(
    name: "services", horizon: "10s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "checkout", arrivals: Poisson(rate_per_s: 10), deadline: "1s",
        calls: [Parallel(join: All, calls: [Call("inventory"), Call("pricing")]), Call("payment")])],
    dependencies: [
        (name: "inventory", latency: Constant("10ms")),
        (name: "pricing", latency: Constant("2ms"),
         service: (workers: (slots: 20), pool: (max_connections: 10, acquire_timeout: "100ms"),
                   stack: [(policy: Timeout((timeout: "50ms")), dependencies: ["tax"])],
                   calls: [Call("tax"), Optional(dependency: "rates", cost: "1ms")])),
        (name: "tax", latency: Constant("5ms")),
        (name: "rates", latency: Constant("3ms")),
        (name: "payment", latency: Constant("30ms")),
    ],
    policies: [(name: "bare"),
               (name: "retries", services: [(service: "pricing", stack: [(policy: Retry((max_attempts: 3)))])])],
)"#;

/// `GOOD` with `from` (once in it) replaced by `to` is refused at `value` (once in the edited
/// text), with a message containing `says`.
fn refused(from: &str, to: &str, value: &str, says: &str) {
    crate::graph_input::refused_in(GOOD, from, to, value, says);
}

#[test]
fn the_good_service_graph_is_accepted() {
    let s = load_text(Path::new("services.ron"), GOOD).unwrap_or_else(|e| panic!("{e}"));
    // The set without a stack of its own for pricing takes the service's; the other its own.
    let pricing = 1;
    assert_eq!(s.service_stack(0, pricing).map(<[_]>::len), Some(1));
    assert!(matches!(&s.service_stack(1, pricing).unwrap()[0].policy, brownout::policy::PolicySpec::Retry(_)));
    assert_eq!(s.service_stack(0, 0), None, "inventory is a leaf");
}

#[test]
fn a_service_that_reaches_itself_is_refused_at_the_call_that_closes_the_cycle() {
    // pricing -> tax -> pricing: the walk starts at pricing (the first service in the file)
    // and finds the cycle at tax's call.
    refused(
        r#"(name: "tax", latency: Constant("5ms")),"#,
        r#"(name: "tax", latency: Constant("5ms"), service: (workers: (slots: 1), calls: [Call("pricing")])),"#,
        r#"Call("pricing")]))"#,
        "service \"pricing\" reaches itself through its calls: pricing -> tax -> pricing",
    );
    refused(
        r#"calls: [Call("tax"), Optional"#,
        r#"calls: [Call("pricing"), Optional"#,
        r#"Call("pricing"), Optional"#,
        "pricing -> pricing",
    );
    // Through an optional call in a parallel group: pricing's first call (tax) is a leaf,
    // its second (rates) calls payment, then pricing.
    refused(
        r#"(name: "rates", latency: Constant("3ms")),"#,
        r#"(name: "rates", latency: Constant("3ms"), service: (workers: (slots: 1), calls: [Parallel(calls: [Call("payment"), Optional(dependency: "pricing")])])),"#,
        r#""pricing")])]))"#,
        "pricing -> rates -> pricing",
    );
}

#[test]
fn a_service_s_call_to_an_unknown_dependency_is_refused_at_the_call() {
    refused(r#"Call("tax")"#, r#"Call("vat")"#, r#"Call("vat")"#, "unknown dependency \"vat\"");
    refused(r#"dependency: "rates""#, r#"dependency: "rate""#, r#""rate""#, "unknown dependency \"rate\"");
}

#[test]
fn a_service_with_an_empty_plan_is_refused_at_its_calls() {
    refused(
        r#"calls: [Call("tax"), Optional(dependency: "rates", cost: "1ms")]"#,
        "calls: [ ]",
        "[ ]",
        "service \"pricing\" has an empty plan",
    );
}

#[test]
fn a_quorum_larger_than_its_group_in_a_service_is_refused_at_the_join() {
    refused(
        r#"calls: [Call("tax"), Optional(dependency: "rates", cost: "1ms")]"#,
        r#"calls: [Parallel(join: Quorum(3), calls: [Call("tax"), Call("rates")])]"#,
        "Quorum(3)",
        "Quorum(3) needs 1..=2",
    );
}

#[test]
fn a_leaf_s_setting_on_a_service_is_refused_at_the_setting() {
    refused(
        r#"(name: "pricing", latency: Constant("2ms"),"#,
        r#"(name: "pricing", latency: Constant("2ms"), capacity: (servers: 4, queue: 9),"#,
        "(servers: 4, queue: 9)",
        "dependency \"pricing\" is a service: capacity belongs to a leaf dependency",
    );
    refused("workers: (slots: 20)", "workers: (slots: 0 )", "0 )", "service \"pricing\": workers.slots must be >= 1");
}

#[test]
fn a_policy_set_s_stack_for_what_is_no_service_is_refused_at_the_name() {
    refused(
        r#"(service: "pricing", stack"#,
        r#"(service: "prices", stack"#,
        r#""prices""#,
        "unknown service \"prices\"",
    );
    refused(r#"(service: "pricing", stack"#, r#"(service: "tax", stack"#, r#""tax", stack"#, "\"tax\" is no service");
    let twice = r#"services: [(service: "pricing", stack: []), (service: "pricing", stack: [(policy: Retry((max_attempts: 3)))])]"#;
    refused(
        r#"services: [(service: "pricing", stack: [(policy: Retry((max_attempts: 3)))])]"#,
        twice,
        r#""pricing", stack: [(policy"#,
        "gives service \"pricing\" two stacks",
    );
}

#[test]
fn a_service_s_layer_is_scoped_to_its_own_calls_only() {
    refused(
        r#"dependencies: ["tax"])],"#,
        r#"dependencies: ["payment"])],"#,
        r#""payment"])]"#,
        "scopes a layer to \"payment\", which the service does not call (it calls: tax, rates)",
    );
    refused(
        r#"dependencies: ["tax"])],"#,
        r#"classes: ["checkout"])],"#,
        r#"["checkout"])]"#,
        "`classes` belongs to a policy set's stack",
    );
}

/// A chain of `levels` services below the gateway, each with a `Retry((max_attempts: 3))`,
/// the last calling the leaf `db`, and a gateway `Retry((max_attempts: 3))` too.
fn chain(levels: usize, limit: u64) -> String {
    let mut deps = String::new();
    for l in 0..levels {
        let next = if l + 1 == levels { "db".to_string() } else { format!("s{}", l + 1) };
        deps += &format!(
            r#"(name: "s{l}", latency: Constant("1ms"), service: (workers: (slots: 10),
                stack: [(policy: Retry((max_attempts: 3)))], calls: [Call("{next}")])),
            "#
        );
    }
    format!(
        r#"Scenario(name: "chain", horizon: "10s", limits: (max_attempts: {limit}),
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Poisson(rate_per_s: 10), deadline: "1s", calls: [Call("s0")])],
    dependencies: [{deps}(name: "db", latency: Constant("1ms"))],
    policies: [(name: "retries", stack: [(policy: Retry((max_attempts: 3)))])],
)"#
    )
}

#[test]
fn retries_at_every_level_multiply_against_max_attempts() {
    // r = 2 retries (3 attempts) at the gateway and in each of L services: 3^(L+1) attempts
    // at the bottom, so L = 1, 2, 3 give 9, 27, 81; each is allowed at exactly that limit
    // and refused one below it, the message naming the path and each level's share.
    for (levels, attempts) in [(1, 9u64), (2, 27), (3, 81)] {
        load_text(Path::new("chain.ron"), &chain(levels, attempts)).unwrap_or_else(|e| panic!("L = {levels}: {e}"));
        let e = load_text(Path::new("chain.ron"), &chain(levels, attempts - 1)).expect_err("over max_attempts");
        assert!(e.message.contains(&format!("allow {attempts} attempts per request at the bottom of s0")), "{e}");
        assert!(e.message.contains(&format!("raise the limit with `limits: (max_attempts: {attempts})`")), "{e}");
        let shares: Vec<String> = (0..levels).map(|l| format!("3 in s{l}")).collect();
        assert!(e.message.contains(&format!("(3 at the gateway x {})", shares.join(" x "))), "{e}");
        assert!(e.message.contains("-> db"), "{e}");
        assert_eq!(e.line, position(&chain(levels, attempts - 1), r#"(name: "retries""#).0, "{e}");
    }
}

#[test]
fn a_wide_service_at_a_high_rate_is_refused_with_the_max_events_that_allows_it() {
    // A million requests a second for an hour: 3.6e9 requests, each calling pricing. As a
    // leaf that is 2 events a request (arrival, call): 7.2e9, plus 3,601 windows x 2 ticks,
    // under the default 2e10. As a service calling tax eight times at once it is
    // 1 + (1 + 8) = 10 events a request: 3.6e10 + 7,202 = 36,000,007,202, over it; the
    // setting suggested is 1.25 x that rounded up to two significant digits: 46,000,000,000.
    let base = r#"Scenario(name: "wide", horizon: "1h",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "c", arrivals: Poisson(rate_per_s: 1000000), deadline: "1s", calls: [Call("pricing")])],
    dependencies: [(name: "pricing", latency: Constant("1ms")PRICING), (name: "tax", latency: Constant("1ms"))],
    policies: [(name: "p")],LIMITS
)"#;
    let leaf = base.replace("PRICING", "").replace("LIMITS", "");
    load_text(Path::new("wide.ron"), &leaf).unwrap_or_else(|e| panic!("{e}"));
    let tax = ["Call(\"tax\")"; 8].join(", ");
    let service = format!(", service: (workers: (slots: 10), calls: [Parallel(calls: [{tax}])])");
    let wide = base.replace("PRICING", &service);
    let e = load_text(Path::new("wide.ron"), &wide.replace("LIMITS", "")).expect_err("over max_events");
    assert!(e.message.contains("36000007202 events"), "{e}");
    assert!(e.message.contains("raise the limit with `limits: (max_events: 46000000000)`"), "{e}");
    let raised = wide.replace("LIMITS", " limits: (max_events: 46000000000),");
    load_text(Path::new("wide.ron"), &raised).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_gateway_layer_scoped_to_a_service_s_callee_is_refused_with_where_it_belongs() {
    // The gateway never calls tax (pricing does): a gateway layer scoped to it would never
    // act, and the message says whose stack it belongs in.
    refused(
        r#"(name: "bare")"#,
        r#"(name: "bare", stack: [(policy: Timeout((timeout: "9ms")), dependencies: ["tax"])])"#,
        r#""tax"])])"#,
        "service \"pricing\" calls it: put the layer in its stack",
    );
}
