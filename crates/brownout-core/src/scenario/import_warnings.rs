//! Warnings about `Import(..)` layers: the part of an imported file that a stack cannot hold
//! (Envoy's outlier detection, which ejects the dependency's replicas) is not refused when the
//! file also gives layers; the command line prints this warning with the fragment to set.

use std::path::Path;

use super::{data, parse};
use crate::policy::PolicySpec;

/// For the scenario at `path`, each part of a file its `Import(..)` layers read that belongs
/// elsewhere in the scenario, as a warning naming the layer (`policies[0].stack[1]`) with the
/// fragment to set there; none for an outlier detection the dependency's `replicas:` already
/// has. Meant for a scenario that loaded: what cannot be read or parsed here is the loader's
/// to report, and gives no warning.
pub fn import_warnings(path: &Path) -> Vec<String> {
    let Ok(text) = data::bounded_text(path, "scenario file") else { return Vec::new() };
    let Ok(s) = parse(path, &text) else { return Vec::new() };
    let dir = path.parent().unwrap_or(Path::new("."));
    let replicas = s.dependency.replicas.as_ref();
    let set_by_hand = |field: &str| match field {
        "outlier_detection" => replicas.is_some_and(|r| r.outlier_detection.is_some()),
        "health_check" => replicas.is_some_and(|r| r.health_check.is_some()),
        _ => false,
    };
    let mut out = Vec::new();
    for (i, set) in s.policies.iter().enumerate() {
        for (j, layer) in set.stack.iter().enumerate() {
            let PolicySpec::Import(cfg) = &layer.policy else { continue };
            let Ok(imported) = crate::import::import_file(cfg.library, &dir.join(&cfg.file), cfg.instance.as_deref())
            else {
                continue;
            };
            for sn in imported.snippets.iter().filter(|sn| !set_by_hand(sn.field)) {
                out.push(format!(
                    "policies[{i}].stack[{j}]: {}'s {} is not a stack layer: set it under {}:\n{}",
                    cfg.file,
                    sn.field,
                    sn.place,
                    sn.fragment(4)
                ));
            }
        }
    }
    out
}
