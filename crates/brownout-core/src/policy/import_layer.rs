//! The `Import(..)` layer's configuration: the file and instance to read. `scenario::load`
//! replaces each such layer by the imported layers before validation, so it is never built.

use serde::{Deserialize, Serialize};

use super::{BuildCtx, ConfigError, Facts, Policy, PolicyConfig};
use crate::import::Library;

/// An `Import(..)` layer: a library's configuration file to read the layers from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportLayerConfig {
    /// The configuration file, relative to the scenario file's folder.
    pub file: String,
    /// The instance (resilience4j), cluster (Envoy), breaker (opossum), section (.NET, as
    /// `A:B`), backend (HAProxy) or upstream (nginx) to import; may be left out when the file
    /// has only one.
    #[serde(default)]
    pub instance: Option<String>,
    /// The library (`Resilience4j`, `Envoy`, `Opossum`, `Dotnet`, `Haproxy`, `Nginx`); left
    /// out, it is told from the file (`.yml`/`.yaml` with a `resilience4j` key, other YAML
    /// Envoy; JSON with a standard-handler section .NET, other JSON opossum; `.cfg` HAProxy;
    /// `.conf` nginx).
    #[serde(default)]
    pub library: Option<Library>,
}

impl PolicyConfig for ImportLayerConfig {
    const KIND: &'static str = "import";

    fn facts(&self) -> Facts {
        // What the imported layers refuse with, and how often they call, is known only once read.
        Facts::UNKNOWN
    }

    fn validate(&self, _classes: &[&str]) -> Result<(), ConfigError> {
        // `scenario::load` replaces every Import layer before validation; one still here came
        // from a scenario that was parsed but not loaded.
        Err("Import layers are replaced by the imported layers when the scenario is loaded (scenario::load)".into())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Policy> {
        unreachable!("Import layers never pass validation: scenario::load replaces them")
    }
}
