//! The embedding API's shapes: `Model::build` says why it failed with a typed error whose text
//! is the command line's message, and `RunOptions` is built through its constructor, so an
//! option or an error case added later breaks no embedder.

use std::path::Path;

use brownout::model::{BuildError, Model, RunOptions};
use brownout::scenario::parse;

const ONE_LAYER: &str = r#"Scenario(
    name: "api", horizon: "1s",
    fleet: (workers: (slots: 4), pool: (max_connections: 4, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: ["100ms"]), deadline: "1s")],
    dependency: (latency: Constant("10ms")),
    policies: [(name: "tall", stack: [LAYERS])],
)"#;

#[test]
fn an_unknown_plugin_is_a_plugin_error_naming_its_policy_set_and_instance() {
    let text = ONE_LAYER.replace("LAYERS", r#"(policy: Plugin((name: "nowhere")))"#);
    let s = parse(Path::new("api.ron"), &text).unwrap();
    let err = Model::build(&s, 1, Path::new(".")).unwrap_err();
    let BuildError::Plugin { policy, instance, message } = &err else { panic!("not a plugin error: {err:?}") };
    assert_eq!((policy.as_str(), *instance), ("tall", 0));
    // The message is the plugin registry's (policy/plugin.rs, `Plugins::build`), prefixed as
    // the command line printed it before the error was typed.
    assert!(message.starts_with("unknown plugin \"nowhere\""), "{message}");
    assert_eq!(err.to_string(), format!("policy \"tall\", instance 0: {message}"));
}

#[test]
fn a_stack_deeper_than_the_world_supports_is_refused_with_its_depth() {
    // Nine plain timeouts: one more than `scenario::MAX_LAYERS` (8). `parse` does not
    // validate, so the build is what refuses it.
    let layers = [r#"(policy: Timeout((timeout: "1s")))"#; 9].join(", ");
    let s = parse(Path::new("api.ron"), &ONE_LAYER.replace("LAYERS", &layers)).unwrap();
    let err = Model::build(&s, 1, Path::new(".")).unwrap_err();
    assert_eq!(err, BuildError::TooManyLayers { policy: "tall".into(), layers: 9 });
    assert_eq!(err.to_string(), "policy \"tall\" has 9 layers; at most 8 are supported");
}

#[test]
fn run_options_start_from_nothing_kept_and_add_one_thing_at_a_time() {
    let none = RunOptions::new();
    assert_eq!((none.timeseries, none.trace_limit, none.events), (false, 0, 0));
    let d = RunOptions::default();
    assert_eq!((d.timeseries, d.trace_limit, d.events), (false, 0, 0));
    let all = RunOptions::new().with_timeseries(true).with_trace_limit(7).with_events(3);
    assert_eq!((all.timeseries, all.trace_limit, all.events), (true, 7, 3));
}
