//! The plugin interface: a policy from outside brownout runs beside built-in ones; an
//! unknown plugin is bad input before any run.

use std::path::Path;

use brownout::model::{Model, RunOptions};
use brownout::policy::plugin::Plugins;
use brownout::policy::{Admission, Attempt, Policy, Refusal};
use brownout::runner::run_all;
use brownout::scenario::{parse, validate};

/// Refuses every other attempt (by attempt id parity): half the requests get 429.
struct EveryOther;

impl Policy for EveryOther {
    fn admit(&mut self, a: &Attempt) -> Admission {
        if a.id.is_multiple_of(2) { Admission::Admit } else { Admission::Refuse(Refusal::Rejected) }
    }
}

const TEXT: &str = r#"Scenario(
    name: "plugin", horizon: "10s",
    fleet: (workers: (slots: 100), pool: (max_connections: 100, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Scripted(times: ["1s", "2s", "3s", "4s", "5s", "6s"]), deadline: "1s")],
    dependency: (latency: Constant("10ms")),
    policies: [
        (name: "none"),
        (name: "every-other", stack: [(policy: Plugin((name: "every-other")))]),
    ],
)"#;

#[test]
fn a_registered_plugin_runs_beside_built_in_policies() {
    let s = parse(Path::new("plugin.ron"), TEXT).unwrap();
    validate(&s).unwrap();
    let plugins = Plugins::new().register("every-other", |_, _| Ok(Box::new(EveryOther)));
    let model = Model::build_with_plugins(&s, 1, Path::new("."), plugins).unwrap();
    let r = run_all(&model, RunOptions::default(), false).expect("runs").summary;
    assert_eq!(r.runs[0].classes[0].outcomes.ok, 6);
    // Attempt ids 0..5 in arrival order: ids 1, 3, 5 are refused.
    assert_eq!(r.runs[1].classes[0].outcomes.ok, 3);
    assert_eq!(r.runs[1].classes[0].outcomes.rejected, 3);
}

#[test]
fn an_unknown_plugin_is_refused_before_any_run() {
    let s = parse(Path::new("plugin.ron"), TEXT).unwrap();
    let err = Model::build(&s, 1, Path::new(".")).unwrap_err().to_string();
    assert!(err.contains("unknown plugin \"every-other\""), "{err}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_brownout"))
        .args(["run", concat!(env!("CARGO_MANIFEST_DIR"), "/examples/custom_policy.ron"), "--out"])
        .arg(std::env::temp_dir().join("brownout-plugin-test-out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown plugin"));
    assert!(!std::env::temp_dir().join("brownout-plugin-test-out").exists());
}

#[test]
fn a_plugin_that_fails_on_another_instance_is_refused_before_any_run() {
    let text = TEXT.replace("fleet: (", "fleet: (instances: 3, ");
    let s = parse(Path::new("plugin.ron"), &text).unwrap();
    validate(&s).unwrap();
    // Builds for instances 0 and 1, fails for instance 2.
    let plugins = Plugins::new().register("every-other", |_, ctx| {
        if ctx.instance < 2 { Ok(Box::new(EveryOther)) } else { Err(format!("no room on instance {}", ctx.instance)) }
    });
    let err = Model::build_with_plugins(&s, 1, Path::new("."), plugins).unwrap_err().to_string();
    assert!(err.contains("no room on instance 2"), "{err}");
    assert!(err.contains("every-other"), "{err}");
}

/// Retries every failed attempt at once, without end: validation counts a plugin layer as
/// one attempt (it cannot see inside), so only the world's `limits.max_attempts` cap
/// (model/world/outcome.rs, `spent`) stops it.
struct RetryForever;

impl Policy for RetryForever {
    fn admit(&mut self, _a: &Attempt) -> Admission {
        Admission::Admit
    }

    fn retry_delay(&mut self, _ask: &brownout::policy::RetryAsk) -> Option<brownout::engine::Time> {
        Some(0)
    }
}

#[test]
fn a_plugin_s_retries_stop_at_max_attempts() {
    // Every call fails: each of the six requests is retried until the cap, 5 attempts, and
    // then fails. Hand count: 6 x 5 = 30 dependency calls, amplification 30 / 6 = 5.
    let text = TEXT
        .replace(r#"latency: Constant("10ms")"#, r#"latency: Constant("10ms"), error_rate: Constant(1.0)"#)
        .replace(r#"stack: [(policy: Plugin((name: "every-other")))]"#, r#"stack: [(policy: Plugin((name: "retry")))]"#)
        .replace("    policies: [", "    limits: (max_attempts: 5),\n    policies: [");
    let s = parse(Path::new("plugin.ron"), &text).unwrap();
    validate(&s).unwrap();
    let plugins = Plugins::new().register("retry", |_, _| Ok(Box::new(RetryForever)));
    let model = Model::build_with_plugins(&s, 1, Path::new("."), plugins).unwrap();
    let r = run_all(&model, RunOptions::default(), false).expect("runs").summary;
    let run = &r.runs[1];
    assert_eq!(run.classes[0].outcomes.error, 6);
    assert_eq!(run.dependency.calls, 30);
    assert_eq!(run.amplification, 5.0);
    // Without retries: one call each.
    assert_eq!(r.runs[0].amplification, 1.0);
}
