//! `brownout explain` shows the default a field takes when a scenario leaves it out, also for
//! a field that saved files omit when default (serde's `skip_serializing_if`), whose default
//! schemars leaves out of the schema. The expected defaults are read off the type definitions:
//! `#[default]` on `Discipline::Fifo`, `Sharing::Queue` and `Cancellation::KeepWorking`
//! (scenario/types/dependency.rs), `TimeoutStart::Attempt` (policy/timeout.rs),
//! `FallbackAnswer::Catalogue` (scenario/fallback.rs), `one()` for
//! `ConsecutiveBreaker.success_threshold` and `default_replications()` (1), 1000 for
//! `Limits.max_attempts` (`DEFAULT_MAX_ATTEMPTS`), and serde's `None` and empty list for an
//! `Option` or a `Vec` left out.

use std::process::Command;

fn explain(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_brownout")).arg("explain").args(args).output().unwrap();
    assert!(out.status.success(), "explain {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The default cell of field `field` in `section`.
fn default_of(section: &str, field: &str) -> String {
    let start = format!("| `{field}` | ");
    let row = section.lines().map(str::trim_start).find(|l| l.starts_with(&start)).unwrap_or_else(|| {
        panic!("no row for {field} in\n{section}");
    });
    row.trim_matches('|').split(" | ").nth(2).unwrap().trim().to_string()
}

#[test]
fn a_field_saved_files_omit_shows_the_default_it_takes() {
    let capacity = explain(&["Capacity"]);
    assert_eq!(default_of(&capacity, "discipline"), "`Fifo`");
    assert_eq!(default_of(&capacity, "sharing"), "`Queue`");
    assert_eq!(default_of(&capacity, "codel"), "`None`");
    assert_eq!(default_of(&capacity, "max_wait"), "`None`");
    assert_eq!(default_of(&explain(&["Dependency"]), "cancellation"), "`KeepWorking`");
    assert_eq!(default_of(&explain(&["Timeout"]), "starts"), "`Attempt`");
    let breaker = explain(&["ConsecutiveBreaker"]);
    assert_eq!(default_of(&breaker, "success_threshold"), "`1`");
    assert_eq!(default_of(&breaker, "exclude"), "`[]`");
    assert_eq!(default_of(&explain(&["Class"]), "fallback_answer"), "`Catalogue`");
    assert_eq!(default_of(&explain(&["Scenario"]), "replications"), "`1`");
    assert_eq!(default_of(&explain(&["Limits"]), "max_attempts"), "`1000`");
}

/// Every field that is not `required` shows a default, but the one-dependency form's
/// `dependency`, whose absence (`Dependency::absent`) is no value a scenario could write:
/// `dependencies` stands in for it.
#[test]
fn no_field_that_may_be_left_out_shows_no_default() {
    let all = explain(&["--all"]);
    let missing: Vec<&str> = all
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("| `") && l.contains(" | - | "))
        .filter(|l| !l.starts_with("| `dependency` | [Dependency](#dependency) | - |"))
        .collect();
    assert!(missing.is_empty(), "fields without a default shown:\n{}", missing.join("\n"));
}
