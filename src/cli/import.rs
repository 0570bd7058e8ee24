//! `brownout import LIBRARY FILE [--instance NAME] [--dependency NAME [--scenario FILE]]
//! [--out FILE]`: a library's configuration file as the equivalent policy stack in RON (the
//! mapping is `brownout::import`'s), optionally scoped to one dependency's calls.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

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
    /// The scenario the stack is for: --dependency must name one of its `dependencies`
    /// (read, never changed).
    #[arg(long, value_name = "FILE", requires = "dependency")]
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
    for w in &imported.warnings {
        eprintln!("{}", escape::terminal(&format!("warning: {}", imported.warning_text(w))));
    }
    let text = imported.to_ron();
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
