//! Importing a library's configuration into one dependency's stack (issue 33): `brownout
//! import ... --dependency NAME` writes every layer with `dependencies: ["NAME"]`, and an
//! `Import((..))` layer scoped to a dependency passes that scope to each layer it expands to.
//! Index:
//! - `flag_scopes_every_layer_to_the_dependency`: the resilience4j sample's four layers
//!   (breaker, retry, time limiter, bulkhead of instance `inventory`), each scoped to
//!   pricing, checked by `brownout check` inside scenarios/checkout-flat.ron.
//! - `flag_refuses_a_name_the_scenario_lacks`: `--dependency shipping --scenario
//!   checkout-flat.ron` exits 2 naming the scenario's dependencies, printing no stack; an
//!   empty name is refused without a scenario.
//! - `import_layer_passes_its_dependency_scope_on`: the `Import` layer form, loaded.

use crate::common;

use std::path::{Path, PathBuf};

use brownout::scenario::Layer;
use common::brownout;

fn repo(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn import(extra: &[&str]) -> std::process::Output {
    let file = repo("scenarios/imports/application.yml");
    let mut args = vec!["import", "resilience4j", file.to_str().unwrap(), "--instance", "inventory"];
    args.extend(extra);
    brownout(&args, Path::new("."))
}

/// The layers of an imported stack (its comments are RON comments).
fn layers(text: &str) -> Vec<Layer> {
    ron::from_str(text).unwrap_or_else(|e| panic!("{e}:\n{text}"))
}

#[test]
fn flag_scopes_every_layer_to_the_dependency() {
    let flat = repo("scenarios/checkout-flat.ron");
    let plain = import(&[]);
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    let scoped = import(&["--dependency", "pricing", "--scenario", flat.to_str().unwrap()]);
    assert!(scoped.status.success(), "{}", String::from_utf8_lossy(&scoped.stderr));
    let (plain, text) = (String::from_utf8(plain.stdout).unwrap(), String::from_utf8(scoped.stdout).unwrap());
    let (unscoped, scoped) = (layers(&plain), layers(&text));
    // application.yml's instance `inventory` configures these four modules.
    assert_eq!(scoped.len(), 4, "{text}");
    for (a, b) in unscoped.iter().zip(&scoped) {
        assert!(a.dependencies.is_empty());
        assert_eq!(b.dependencies, vec!["pricing".to_string()], "{text}");
        assert_eq!((&a.policy, &a.classes), (&b.policy, &b.classes), "only the scope differs");
    }
    // The scoped stack checks inside the graph scenario it was imported for.
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(&flat).unwrap();
    let marker = "(name: \"unprotected\", stack: [])";
    assert!(base.contains(marker));
    let path = dir.path().join("scoped.ron");
    std::fs::write(&path, base.replace(marker, &format!("(name: \"unprotected\", stack: {text})"))).unwrap();
    let o = brownout(&["check", path.to_str().unwrap()], Path::new("."));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn flag_refuses_a_name_the_scenario_lacks() {
    let flat = repo("scenarios/checkout-flat.ron");
    let o = import(&["--dependency", "shipping", "--scenario", flat.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("\"shipping\"") && err.contains("dependencies: inventory, pricing, payment"), "{err}");
    assert!(o.stdout.is_empty());
    // A one-dependency scenario has no list to scope a layer to.
    let one = repo("scenarios/grocery.ron");
    let o = import(&["--dependency", "pricing", "--scenario", one.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("one `dependency`"));
    let o = import(&["--dependency", ""]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

#[test]
fn import_layer_passes_its_dependency_scope_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo("scenarios/imports/application.yml"), dir.path().join("application.yml")).unwrap();
    let base = std::fs::read_to_string(repo("scenarios/checkout-flat.ron")).unwrap();
    let layer = r#"(policy: Import((file: "application.yml", instance: "inventory")), dependencies: ["pricing"])"#;
    let text =
        base.replace("(name: \"unprotected\", stack: [])", &format!("(name: \"unprotected\", stack: [{layer}])"));
    let path = dir.path().join("imported.ron");
    std::fs::write(&path, text).unwrap();
    let s = brownout::scenario::load(&path).unwrap();
    let stack = &s.policies[0].stack;
    assert_eq!(stack.len(), 4);
    assert!(stack.iter().all(|l| l.dependencies == vec!["pricing".to_string()]), "{stack:?}");
    // A scope naming no dependency of the scenario is refused at the Import layer.
    let bad = layer.replace("[\"pricing\"]", "[\"shipping\"]");
    let text = base.replace("(name: \"unprotected\", stack: [])", &format!("(name: \"unprotected\", stack: [{bad}])"));
    std::fs::write(&path, text).unwrap();
    let e = brownout::scenario::load(&path).unwrap_err().to_string();
    assert!(e.contains("shipping"), "{e}");
}

#[test]
fn service_flag_writes_a_services_stack_that_checks_in_the_graph() {
    // The resilience4j sample's layers scoped to tax, for pricing's own stack in
    // scenarios/checkout-graph.ron: they go in `services` and the scenario checks.
    let graph = repo("scenarios/checkout-graph.ron");
    let g = graph.to_str().unwrap();
    let o = import(&["--service", "pricing", "--dependency", "tax", "--scenario", g]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(layers(&text).iter().all(|l| l.dependencies == ["tax"]), "{text}");
    let base = std::fs::read_to_string(&graph).unwrap();
    let marker = "(name: \"unprotected\", stack: [])";
    assert!(base.contains(marker));
    let with = format!("(name: \"unprotected\", stack: [], services: [(service: \"pricing\", stack: {text})])");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("service.ron");
    std::fs::write(&path, base.replace(marker, &with)).unwrap();
    let c = brownout(&["check", path.to_str().unwrap()], Path::new("."));
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    // Inventory is no service, and pricing does not call payment: each refused, exit 2,
    // no stack printed; --service without --scenario is refused by the parser.
    for (args, says) in [
        (vec!["--service", "inventory", "--scenario", g], "no such service (services: pricing)"),
        (
            vec!["--service", "pricing", "--dependency", "payment", "--scenario", g],
            "does not call --dependency \"payment\"",
        ),
        (vec!["--service", "pricing"], "--scenario"),
    ] {
        let o = import(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
