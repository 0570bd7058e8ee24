//! `brownout import LIBRARY FILE [--instance NAME] [--dependency NAME] [--service NAME] [--scenario FILE]
//! [--out FILE]`: a library's configuration file as the equivalent policy stack in RON (the
//! mapping is `brownout::import`'s), optionally scoped to one dependency's calls.

use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};

use super::Failure;
use brownout::import::{Library, import_file};
use brownout::report::escape;

/// The libraries whose files are read.
#[derive(ValueEnum, Debug, Clone, Copy)]
pub enum LibraryArg {
    /// A Spring Boot application.yml with resilience4j circuitbreaker, retry, timelimiter, bulkhead.
    Resilience4j,
    /// An Envoy cluster (circuit_breakers, outlier_detection) or an Istio DestinationRule.
    Envoy,
    /// opossum CircuitBreaker options as JSON.
    Opossum,
    /// .NET standard resilience handler options in appsettings.json.
    Dotnet,
    /// An HAProxy haproxy.cfg: one backend (or listen) section and its defaults.
    Haproxy,
    /// An nginx.conf: one upstream block and the location that passes to it.
    Nginx,
}

impl LibraryArg {
    fn library(self) -> Library {
        match self {
            LibraryArg::Resilience4j => Library::Resilience4j,
            LibraryArg::Envoy => Library::Envoy,
            LibraryArg::Opossum => Library::Opossum,
            LibraryArg::Dotnet => Library::Dotnet,
            LibraryArg::Haproxy => Library::Haproxy,
            LibraryArg::Nginx => Library::Nginx,
        }
    }
}

/// Arguments of `brownout import`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("scope").args(["dependency", "service"]).multiple(true)))]
pub struct ImportArgs {
    /// The library the file configures.
    #[arg(value_enum)]
    library: LibraryArg,
    /// The configuration file.
    file: PathBuf,
    /// The instance (resilience4j), cluster (Envoy), breaker (opossum), section (.NET, `A:B`),
    /// backend (HAProxy, also `--backend`) or upstream (nginx, also `--upstream`) to import,
    /// when the file has several.
    #[arg(long, visible_aliases = ["backend", "upstream"])]
    instance: Option<String>,
    /// Scope every imported layer to the calls to this dependency of a service graph: each
    /// layer is written with `dependencies: ["NAME"]`, to sit in a stack beside the layers of
    /// other dependencies (a breaker imported for pricing sees pricing's calls alone).
    #[arg(long, value_name = "NAME")]
    dependency: Option<String>,
    /// The stack is for this service of a service graph (a dependency with a `service`), to
    /// go in a policy set's `services: [(service: "NAME", stack: ..)]`: with --dependency, one
    /// that the service calls; a layer scoped to classes is refused (a service's layers see
    /// every caller's calls). Needs --scenario.
    #[arg(long, value_name = "NAME", requires = "scenario")]
    service: Option<String>,
    /// The scenario the stack is for: --dependency must name one of its `dependencies`,
    /// --service one of its services (read, never changed).
    #[arg(long, value_name = "FILE", requires = "scope")]
    scenario: Option<PathBuf>,
    /// Write the stack to this file instead of standard output (`-`: standard output).
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
    /// Overwrite the --out file if it exists.
    #[arg(long, requires = "out")]
    force: bool,
}

/// Import, print the warnings on stderr and the stack on stdout (or to `--out`).
pub fn import(args: ImportArgs) -> Result<(), Failure> {
    if let Some(out) = super::out_file(args.out.as_deref()) {
        let input = [super::Named::new("the configuration file", &args.file)];
        super::check_paths(None, &[super::Named::new("--out", out)], &input)?;
    }
    let dependencies = match &args.dependency {
        None => Vec::new(),
        Some(name) => vec![check_dependency(name, args.scenario.as_deref())?],
    };
    let mut imported = import_file(Some(args.library.library()), &args.file, args.instance.as_deref())
        .map_err(|e| Failure::input(format!("error: {e}")))?;
    imported.dependencies = dependencies;
    if let (Some(service), Some(path)) = (&args.service, &args.scenario) {
        check_service(service, args.dependency.as_deref(), path, &imported)?;
    }
    for w in &imported.warnings {
        eprintln!("{}", escape::terminal(&format!("warning: {}", imported.warning_text(w))));
    }
    let mut text = imported.to_ron();
    if let Some(service) = &args.service {
        text = format!(
            "// The stack of service {service:?}: a policy set's `services: [(service: {service:?}, stack: <this>)]`.\n{text}"
        );
    }
    match super::out_file(args.out.as_deref()) {
        None => print!("{text}"),
        Some(path) => {
            super::new::write_file(path, &text, args.force)
                .map_err(|e| Failure::input(format!("error: {}: {e}", path.display())))?;
            eprintln!("{}", escape::terminal(&format!("wrote {}", path.display())));
        }
    }
    Ok(())
}

/// `--dependency NAME` as written, once it can name a dependency: not empty, no control
/// characters, and with `--scenario` one of that scenario's `dependencies`.
fn check_dependency(name: &str, scenario: Option<&std::path::Path>) -> Result<String, Failure> {
    let bad = |why: String| Failure::input(escape::terminal(&format!("error: --dependency {name:?}: {why}")));
    if name.trim().is_empty() || name.chars().any(char::is_control) {
        return Err(bad("a dependency's name is not empty and has no control characters".into()));
    }
    if let Some(path) = scenario {
        let s = brownout::scenario::load(path).map_err(|e| Failure::input(format!("error: {e}")))?;
        let names: Vec<&str> = s.dependencies.iter().map(|d| d.name.as_str()).collect();
        if !names.contains(&name) {
            return Err(bad(if names.is_empty() {
                format!("{} has one `dependency`, no `dependencies` list to scope a layer to", path.display())
            } else {
                format!("{} has no such dependency (dependencies: {})", path.display(), names.join(", "))
            }));
        }
    }
    Ok(name.to_string())
}

/// `--service NAME` names a service of the scenario at `path`, which calls `dependency` when
/// one is given, and no imported layer is scoped to classes (a service's layers see every
/// caller's calls: `check` refuses `classes` there).
fn check_service(
    name: &str,
    dependency: Option<&str>,
    path: &std::path::Path,
    imported: &brownout::import::Imported,
) -> Result<(), Failure> {
    let bad = |why: String| Failure::input(escape::terminal(&format!("error: --service {name:?}: {why}")));
    let s = brownout::scenario::load(path).map_err(|e| Failure::input(format!("error: {e}")))?;
    let services: Vec<&str> = s.deps().iter().filter(|d| d.service.is_some()).map(|d| d.name.as_str()).collect();
    let Some(svc) = s.deps().iter().find(|d| d.name == name).and_then(|d| d.service.as_ref()) else {
        return Err(bad(format!("{} has no such service (services: {})", path.display(), services.join(", "))));
    };
    if let Some(dep) = dependency {
        let calls: Vec<&str> =
            svc.calls.iter().flat_map(|step| step.calls().iter().filter_map(|c| c.dependency())).collect();
        if !calls.contains(&dep) {
            return Err(bad(format!("it does not call --dependency {dep:?} (its calls: {})", calls.join(", "))));
        }
    }
    if let Some(l) = imported.layers.iter().find(|l| !l.classes.is_empty()) {
        return Err(bad(format!(
            "the imported {} is scoped to classes ({}), which a service's layer cannot be",
            l.policy,
            l.classes.join(", ")
        )));
    }
    Ok(())
}
