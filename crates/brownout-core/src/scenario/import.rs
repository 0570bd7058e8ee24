//! `Import((file: "application.yml", instance: "inventory"))` as a stack layer: replaced, when
//! the scenario is loaded, by the layers imported from the file (read relative to the
//! scenario's folder), so the production file stays the single source. The layer's `classes`,
//! `scope` and `persistent` apply to each imported layer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Layer, Scenario};
use crate::import::{ImportError, Pos};
#[cfg(feature = "import")]
use crate::import::{Imported, OutLayer, import_file};
use crate::policy::PolicySpec;
use crate::policy::import_layer::ImportLayerConfig;

/// Where each layer of the expanded stacks came from, to point validation errors at the text.
#[derive(Debug, Clone, Default)]
pub struct Expansion {
    /// Per policy set, per expanded layer: (index in the file's stack, imported?).
    origin: Vec<Vec<(usize, bool)>>,
    /// Per imported layer (policy set, expanded index): the imported file and where each
    /// field's value is in it.
    fields: BTreeMap<(usize, usize), (PathBuf, FieldsAt)>,
}

/// Where each field of an imported layer has its value in the imported file.
type FieldsAt = Vec<(&'static str, Pos)>;

impl Expansion {
    /// The path in the scenario text of the value at `path` in the expanded scenario, and
    /// whether it lies in imported layers.
    pub fn source_path(&self, path: &str) -> (String, bool) {
        let Some(rest) = path.strip_prefix("policies[") else { return (path.to_string(), false) };
        let parse = || -> Option<(usize, usize, &str)> {
            let (i, rest) = rest.split_once("].stack[")?;
            let (j, tail) = rest.split_once(']')?;
            Some((i.parse().ok()?, j.parse().ok()?, tail))
        };
        let Some((i, j, tail)) = parse() else { return (path.to_string(), false) };
        match self.origin.get(i).and_then(|o| o.get(j)) {
            Some(&(k, true)) => (format!("policies[{i}].stack[{k}]"), true),
            Some(&(k, false)) => (format!("policies[{i}].stack[{k}]{tail}"), false),
            None => (path.to_string(), false),
        }
    }

    /// The imported file and the position in it of the value at `path` of the expanded
    /// scenario (`policies[i].stack[j].policy.Name.field...`), when an imported layer's
    /// field the file sets is there.
    pub fn imported_at(&self, path: &str) -> Option<(&Path, Pos)> {
        let rest = path.strip_prefix("policies[")?;
        let (i, rest) = rest.split_once("].stack[")?;
        let (j, tail) = rest.split_once(']')?;
        let (file, fields) = self.fields.get(&(i.parse().ok()?, j.parse().ok()?))?;
        let field = tail.strip_prefix(".policy.")?.split('.').nth(1)?;
        let field = field.split('[').next()?;
        let &(_, at) = fields.iter().find(|(name, _)| *name == field)?;
        Some((file.as_path(), at))
    }
}

/// Why an Import layer could not be expanded.
#[derive(Debug, Clone, PartialEq)]
pub enum ExpandError {
    /// At this path of the scenario (e.g. the file cannot be read).
    Scenario {
        /// Path of the offending value in the scenario.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// In the imported file.
    #[cfg_attr(not(feature = "import"), allow(dead_code))]
    Imported {
        /// Path of the Import layer in the scenario.
        path: String,
        /// The error in the imported file.
        error: ImportError,
    },
}

/// Replace every Import layer of `s` by its imported layers, files read relative to `dir`.
pub fn expand(s: &mut Scenario, dir: &Path) -> Result<Expansion, ExpandError> {
    let mut ex = Expansion::default();
    for (i, set) in s.policies.iter_mut().enumerate() {
        let mut stack = Vec::with_capacity(set.stack.len());
        let mut origin = Vec::with_capacity(set.stack.len());
        for (j, layer) in std::mem::take(&mut set.stack).into_iter().enumerate() {
            let PolicySpec::Import(cfg) = &layer.policy else {
                stack.push(layer);
                origin.push((j, false));
                continue;
            };
            let at = format!("policies[{i}].stack[{j}].policy.Import");
            let (file, layers, positions) = imported(cfg, dir, &at)?;
            for (l, at) in layers.into_iter().zip(positions) {
                ex.fields.insert((i, stack.len()), (file.clone(), at));
                // An imported route's layer is for its class; others take the Import layer's.
                let classes = if l.classes.is_empty() { layer.classes.clone() } else { l.classes };
                stack.push(Layer { policy: l.policy, classes, ..layer.clone() });
                origin.push((j, true));
            }
        }
        set.stack = stack;
        ex.origin.push(origin);
    }
    Ok(ex)
}

/// The layers imported for `cfg`, the file read, and per layer where its fields' values are.
type Expanded = (PathBuf, Vec<Layer>, Vec<FieldsAt>);

/// Without the `import` feature no file is read: the layer is refused at its `file`.
#[cfg(not(feature = "import"))]
fn imported(_cfg: &ImportLayerConfig, _dir: &Path, at: &str) -> Result<Expanded, ExpandError> {
    Err(ExpandError::Scenario {
        path: format!("{at}.file"),
        message: "Import layers need brownout-core's `import` feature, which this build leaves out".into(),
    })
}

#[cfg(feature = "import")]
fn imported(cfg: &ImportLayerConfig, dir: &Path, at: &str) -> Result<Expanded, ExpandError> {
    let file = dir.join(&cfg.file);
    let whole = |message: String, field: &str| ExpandError::Scenario { path: format!("{at}.{field}"), message };
    let out = import_file(cfg.library, &file, cfg.instance.as_deref()).map_err(|error| {
        if error.line == 0 {
            whole(error.to_string(), "file")
        } else {
            ExpandError::Imported { path: at.to_string(), error }
        }
    })?;
    // A part that belongs elsewhere (Envoy's outlier detection) beside layers is a warning
    // (`import_warnings`); alone, the layer would give nothing, so it is refused with the
    // fragment to set instead.
    if let (Some(sn), true) = (out.snippets.first(), out.layers.is_empty()) {
        let m = format!(
            "{} gives no stack layer, only {}, which belongs under {}: set it there instead of this layer:\n{}",
            cfg.file,
            sn.field,
            sn.place,
            sn.fragment(4)
        );
        return Err(whole(m, "file"));
    }
    if out.layers.is_empty() {
        return Err(whole(format!("{}: nothing to import (no layer for this instance)", cfg.file), "file"));
    }
    let layers = layers(&out).map_err(|m| whole(format!("{}: {m}", cfg.file), "file"))?;
    let positions =
        out.layers.iter().map(|l| l.fields.iter().filter_map(|f| Some((f.name, f.at?))).collect()).collect();
    Ok((file, layers, positions))
}

/// The imported layers as scenario layers, each parsed as a scenario file would be; an error
/// names the layer (e.g. when this brownout has no such policy).
#[cfg(feature = "import")]
fn layers(out: &Imported) -> Result<Vec<Layer>, String> {
    out.layers.iter().map(to_layer).collect()
}

#[cfg(feature = "import")]
fn to_layer(l: &OutLayer) -> Result<Layer, String> {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str::<Layer>(&l.ron())
        .map_err(|e| {
            if is_policy(l.policy) {
                format!("the imported {} layer ({}) does not parse: {}", l.policy, l.what, e.code)
            } else {
                format!("this brownout has no {} policy, which the import of {} needs", l.policy, l.what)
            }
        })
}

/// Is `name` a policy of this brownout?
#[cfg(feature = "import")]
fn is_policy(name: &str) -> bool {
    let text = format!("{name}(())");
    match ron::from_str::<PolicySpec>(&text) {
        Ok(_) => true,
        Err(e) => !matches!(e.code, ron::Error::NoSuchEnumVariant { .. }),
    }
}
