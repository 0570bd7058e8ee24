//! The policy registry (`policies!` in crates/brownout-core/src/policy/registry.rs) is the one
//! list of policies: README's policy table is written from it, and every registered policy is
//! in a shipped scenario, so the tests that go over the scenario library (the hooks contract
//! of `tests/policy_hooks.rs`, the expectations of `tests/scenarios.rs`) run it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use brownout::policy::PolicySpec;

/// Registered policies no shipped scenario can hold, and why.
const NOT_SHIPPED: &[(&str, &str)] = &[(
    "Plugin",
    "a plugin is registered by the program that runs the scenario; the binary has none \
     (tests/plugin.rs and examples/custom_policy.rs run one)",
)];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn ron_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            ron_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ron") {
            out.push(path);
        }
    }
}

/// The policies the shipped scenarios hold, by registry name, as loaded (presets as written,
/// Import layers by the layers they read) and as written (Import layers, which loading
/// replaces).
fn shipped() -> BTreeSet<&'static str> {
    let mut files = Vec::new();
    ron_files(&root().join("scenarios"), &mut files);
    let mut names = BTreeSet::new();
    for path in files {
        // Sweep specs and tune spaces in the folder are not scenarios.
        let Ok(s) = brownout::scenario::load(&path) else { continue };
        names.extend(s.policies.iter().flat_map(|p| &p.stack).map(|l| l.policy.name()));
        let text = std::fs::read_to_string(&path).unwrap();
        if text.lines().any(|l| l.split("//").next().unwrap_or("").contains("Import((")) {
            names.insert("Import");
        }
    }
    names
}

#[test]
fn every_registered_policy_is_in_a_shipped_scenario() {
    let shipped = shipped();
    let missing: Vec<&str> = PolicySpec::REGISTRY
        .iter()
        .map(|(name, _)| *name)
        .filter(|n| !shipped.contains(n) && !NOT_SHIPPED.iter().any(|(x, _)| x == n))
        .collect();
    assert!(missing.is_empty(), "no scenario under scenarios/ uses {missing:?}: add a layer to one");
    // An exemption for a policy that is shipped after all, or no longer registered, is stale.
    for (name, _) in NOT_SHIPPED {
        assert!(PolicySpec::REGISTRY.iter().any(|(n, _)| n == name), "{name} is not registered");
        assert!(!shipped.contains(name), "{name} is shipped: drop its exemption");
    }
}

const BEGIN: &str = "<!-- policies: written from the registry";
const END: &str = "<!-- /policies -->";

/// README's policy table as the registry writes it.
fn table() -> String {
    let mut out = String::from("| policy | what it models |\n|---|---|\n");
    for (name, description) in PolicySpec::REGISTRY {
        out.push_str(&format!("| `{name}(..)` | {description} |\n"));
    }
    out
}

#[test]
fn readme_policy_table_is_the_registry() {
    let path = root().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start = readme.find(BEGIN).expect("README.md has the policy table's opening marker");
    let body = start + readme[start..].find('\n').unwrap() + 1;
    let end = body + readme[body..].find(END).expect("README.md has the policy table's closing marker");
    let want = table();
    if std::env::var_os("BROWNOUT_BLESS").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &readme[..body], &readme[end..])).unwrap();
        return;
    }
    assert_eq!(
        &readme[body..end],
        want,
        "README.md's policy table differs from the registry \
         (BROWNOUT_BLESS=1 cargo test --profile ci --test policies policy_registry:: rewrites it)"
    );
}

#[test]
fn the_table_has_a_row_per_registered_policy() {
    // The staleness check above compares against this table: it must name every policy,
    // ShedByDeadline included (the hand-written table had left it out).
    let t = table();
    for (name, _) in PolicySpec::REGISTRY {
        assert_eq!(t.matches(&format!("| `{name}(..)` |")).count(), 1, "{name}");
    }
    assert!(t.contains("| `ShedByDeadline(..)` |"));
    assert_eq!(PolicySpec::REGISTRY.len(), t.lines().count() - 2);
}
