//! What the import tests share: the sample files, an import's layers and warnings, scenarios
//! around an imported stack, `brownout import` then `check`, and the check that an `Import`
//! layer runs as the layers written by hand.

use std::path::{Path, PathBuf};

use brownout::import::Imported;
use brownout::metrics::summary::RunSummary;

use super::brownout;

/// `scenarios/imports/<name>`, a sample file.
pub fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/imports").join(name)
}

/// `(name, value, origin)` of a field.
pub type Cited<'a> = (&'a str, &'a str, &'a str);

/// `(policy, [(name, value, origin)])` of every layer of an import.
pub fn cited(out: &Imported) -> Vec<(&str, Vec<Cited<'_>>)> {
    out.layers
        .iter()
        .map(|l| (l.policy, l.fields.iter().map(|f| (f.name, f.value.as_str(), f.origin.as_str())).collect()))
        .collect()
}

/// Run one policy set, `import` (an `Import` layer of a file in `scenarios/imports/`), and
/// then `by_hand` (the layers its values stand for), each the only stack of a scenario of 60
/// requests/s to a dependency of median 300 ms; both must give the same figures for every
/// class. The imported run, for the caller to check that the layers did something.
pub fn runs_as_written_by_hand(import: &str, by_hand: &str) -> RunSummary {
    let run = |stack: &str| {
        let text = format!(
            r#"Scenario(
            name: "imported", seed: 4, horizon: "60s",
            fleet: (workers: (slots: 500), pool: (max_connections: 500, acquire_timeout: "5s")),
            classes: [(name: "api", arrivals: Poisson(rate_per_s: 60.0), deadline: "5s")],
            dependency: (latency: LogNormal(median: "300ms", sigma: 0.5)),
            policies: [(name: "p", stack: [{stack}])],
        )"#
        );
        let s = brownout::scenario::load_text(&sample("x.ron"), &text).unwrap_or_else(|e| panic!("{e}"));
        super::run(&s).summary.runs.remove(0)
    };
    let imported = run(import);
    assert_eq!(format!("{:?}", imported.classes), format!("{:?}", run(by_hand).classes), "{import}");
    imported
}

/// `(name, value)` of every field of layer `i`.
pub fn fields(out: &Imported, i: usize) -> Vec<(&str, &str)> {
    out.layers[i].fields.iter().map(|f| (f.name, f.value.as_str())).collect()
}

pub fn warned_keys(out: &Imported) -> Vec<&str> {
    out.warnings.iter().map(|w| w.key.as_str()).collect()
}

/// A scenario around `stack` (RON text of a list of layers) and `replicas` (dependency field
/// text, may be empty).
pub fn scenario_with(stack: &str, replicas: &str) -> String {
    format!(
        r#"Scenario(
    name: "imported",
    seed: 1,
    horizon: "1m",
    fleet: (instances: 1, workers: (slots: 50), pool: (max_connections: 50, acquire_timeout: "1s")),
    classes: [(name: "api", arrivals: Poisson(rate_per_s: 20.0), deadline: "5s")],
    dependency: (latency: LogNormal(median: "100ms", sigma: 0.3){replicas}),
    policies: [(name: "imported", stack: {stack})],
)
"#
    )
}

/// `brownout import library file [--instance i]` run in `dir`: the stack it prints, and the
/// outlier-detection snippet it prints commented out, to place under `replicas:` (its lines,
/// empty when there is none).
pub fn import_with_binary(library: &str, file: &Path, instance: Option<&str>, dir: &Path) -> (String, Vec<String>) {
    let mut args = vec!["import", library, file.to_str().unwrap()];
    if let Some(i) = instance {
        args.extend(["--instance", i]);
    }
    let o = brownout(&args, dir);
    assert!(o.status.success(), "import failed: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let snippet = text
        .lines()
        .filter_map(|l| l.strip_prefix("// "))
        .skip_while(|l| !l.starts_with("outlier_detection"))
        .map(str::to_string)
        .collect();
    (text, snippet)
}

/// Import `file` with the binary, put the printed stack into a scenario, and `check` it.
pub fn import_then_check(library: &str, file: &Path, instance: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let (text, snippet) = import_with_binary(library, file, instance, dir.path());
    let replicas = if snippet.is_empty() {
        String::new()
    } else {
        format!(", replicas: (count: 4, balancing: RoundRobin, {})", snippet.join("\n"))
    };
    let path = dir.path().join("s.ron");
    std::fs::write(&path, scenario_with(&text, &replicas)).unwrap();
    let c = brownout(&["check", "s.ron"], dir.path());
    assert!(c.status.success(), "check refused the import:\n{text}\n{}", String::from_utf8_lossy(&c.stderr));
}

/// `brownout import` on bad input: exit 2, `file:line:col: message`, nothing on stdout.
pub fn refused(library: &str, name: &str, text: &str, extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    let mut args = vec!["import", library, name];
    args.extend(extra);
    let o = brownout(&args, dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    String::from_utf8(o.stderr).unwrap()
}

/// Run `scenario` (text) from `dir` and return its `summary.json`.
pub fn summary_of(dir: &Path, name: &str, scenario: &str) -> String {
    std::fs::write(dir.join(format!("{name}.ron")), scenario).unwrap();
    let out = format!("out-{name}");
    let o = brownout(&["run", &format!("{name}.ron"), "--out", &out, "--no-charts", "-q"], dir);
    assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(dir.join(out).join("summary.json")).unwrap()
}
