//! `brownout import`: a library's own configuration file (a Spring `application.yml` with
//! resilience4j, an Envoy cluster or Istio `DestinationRule`, opossum options, a .NET
//! `appsettings.json` with the standard resilience handler) turned into the equivalent policy
//! stack, each value with where it came from, and a warning for every option that has no
//! equivalent. The same expansion serves scenario files' `Import(..)` layers (`scenario::import::expand`).
//!
//! Values the file sets are spelled out (each with its `file:line key`); values it leaves out
//! are left to the preset's defaults, which are the library's documented defaults. Where the
//! library's own default differs from the preset's (resilience4j Retry, Istio's unlimited
//! thresholds), the library's default is spelled out with that said in its comment.

// The readers and mappers need the YAML and JSON parsers: behind the `import` feature. The
// names a scenario file holds (`Library`, `Pos`, `ImportError`) stay, so an `Import(..)` layer
// still parses without it and is refused with its location (`scenario::import`).
#[cfg(feature = "import")]
mod dotnet;
#[cfg(feature = "import")]
mod emit;
#[cfg(feature = "import")]
mod envoy;
#[cfg(feature = "import")]
mod envoy_route;
#[cfg(feature = "import")]
mod haproxy;
#[cfg(feature = "import")]
mod istio;
#[cfg(feature = "import")]
mod nginx;
#[cfg(feature = "import")]
mod opossum;
#[cfg(feature = "import")]
mod read;
#[cfg(feature = "import")]
mod resilience4j;
#[cfg(feature = "import")]
mod snippet;
#[cfg(feature = "import")]
pub(crate) mod tree;

use std::fmt;
#[cfg(feature = "import")]
use std::path::Path;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[cfg(feature = "import")]
pub use emit::{Field, Imported, OutLayer, Snippet, Warning};

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
}

/// A library whose configuration `brownout import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Library {
    /// resilience4j in a Spring Boot `application.yml` (circuitbreaker, retry, timelimiter,
    /// bulkhead).
    Resilience4j,
    /// An Envoy cluster (`circuit_breakers`, `outlier_detection`) or an Istio
    /// `DestinationRule` (`connectionPool`, `outlierDetection`).
    Envoy,
    /// opossum `CircuitBreaker` options as JSON.
    Opossum,
    /// .NET `Microsoft.Extensions.Http.Resilience` standard handler options in
    /// `appsettings.json`.
    Dotnet,
    /// An HAProxy `haproxy.cfg`: one `backend` (or `listen`) section and its defaults.
    Haproxy,
    /// An `nginx.conf`: one `upstream` block and the location that passes to it
    /// (`proxy_*`, `limit_req`, `limit_conn`).
    Nginx,
}

impl Library {
    /// Every library, as the command line names them.
    pub const ALL: [Library; 6] =
        [Library::Resilience4j, Library::Envoy, Library::Opossum, Library::Dotnet, Library::Haproxy, Library::Nginx];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Library::Resilience4j => "resilience4j",
            Library::Envoy => "envoy",
            Library::Opossum => "opossum",
            Library::Dotnet => "dotnet",
            Library::Haproxy => "haproxy",
            Library::Nginx => "nginx",
        }
    }

    /// The library called `name` on the command line.
    pub fn from_name(name: &str) -> Option<Library> {
        Library::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// A file that cannot be imported: where and why.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportError {
    /// The imported file.
    pub file: PathBuf,
    /// 1-based line (0 when about the whole file).
    pub line: usize,
    /// 1-based column (0 when about the whole file).
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.col, self.message)
        }
    }
}

impl std::error::Error for ImportError {}

/// Largest configuration file read (they are a few kilobytes).
#[cfg(feature = "import")]
const MAX_BYTES: u64 = 4 << 20;

/// Read `path` and import it; `library` None guesses it from the file (see [`detect`]).
#[cfg(feature = "import")]
pub fn import_file(library: Option<Library>, path: &Path, instance: Option<&str>) -> Result<Imported, ImportError> {
    let whole = |message: String| ImportError { file: path.to_path_buf(), message, ..ImportError::default() };
    // Non-blocking, checked after opening, read with a hard cap: `/dev/zero` or a FIFO named
    // as the file neither fills the memory nor blocks.
    let bytes = crate::fsread::read_capped(path, MAX_BYTES).map_err(|e| match e {
        crate::fsread::ReadError::TooLarge { .. } => {
            whole(format!("a configuration file of at most {MAX_BYTES} bytes is read; this one is larger"))
        }
        e => whole(format!("{e}")),
    })?;
    let text = String::from_utf8(bytes).map_err(|_| whole("cannot read it: the file is not UTF-8 text".into()))?;
    import_text(library, path, &text, instance)
}

/// Import `text` (named `path` in messages and comments).
#[cfg(feature = "import")]
pub fn import_text(
    library: Option<Library>,
    path: &Path,
    text: &str,
    instance: Option<&str>,
) -> Result<Imported, ImportError> {
    let label = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let with_file = |mut e: ImportError| {
        e.file = path.to_path_buf();
        e
    };
    let library = match library {
        Some(l) => l,
        None => detect(path, text).map_err(with_file)?,
    };
    let mut out = Imported::new(library, &label, instance);
    match library {
        Library::Resilience4j => resilience4j::import(text, instance, &mut out),
        Library::Envoy => envoy::import(text, instance, &mut out),
        Library::Opossum => opossum::import(text, instance, &mut out),
        Library::Dotnet => dotnet::import(text, instance, &mut out),
        Library::Haproxy => haproxy::import(text, instance, &mut out),
        Library::Nginx => nginx::import(text, instance, &mut out),
    }
    .map_err(with_file)?;
    Ok(out)
}

/// Which library a file configures: YAML with a top-level `resilience4j` key is
/// resilience4j, other YAML Envoy or Istio; JSON with a standard-handler section is .NET,
/// other JSON opossum; a `.cfg` file is HAProxy's, a `.conf` file nginx's.
#[cfg(feature = "import")]
pub fn detect(path: &Path, text: &str) -> Result<Library, ImportError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "yml" | "yaml" => {
            let (root, _) = tree::yaml(text)?;
            let root = tree::split_dotted(root);
            Ok(if root.get("resilience4j").is_some() { Library::Resilience4j } else { Library::Envoy })
        }
        "json" => {
            let root = tree::json(text)?;
            Ok(if dotnet::sections(&root).is_empty() { Library::Opossum } else { Library::Dotnet })
        }
        "cfg" => Ok(Library::Haproxy),
        "conf" => Ok(Library::Nginx),
        _ => Err(ImportError {
            message: "cannot tell which library this file configures: name it (resilience4j, envoy, opossum, dotnet, haproxy or nginx)"
                .into(),
            ..ImportError::default()
        }),
    }
}
