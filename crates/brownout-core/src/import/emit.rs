//! What an import produces (layers of RON fields, each with its origin; snippets for other
//! parts of the scenario; warnings) and its RON text.

use super::Library;
use super::tree::Pos;
use crate::engine::{Time, fmt_time};

/// One field of an imported layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field's name in the preset.
    pub name: &'static str,
    /// Its value as RON text.
    pub value: String,
    /// Where it came from: `file:line key`, or a note such as "resilience4j default".
    pub origin: String,
    /// The position of the value in the imported file, when the file sets it (so a check
    /// that refuses the value can point there).
    pub at: Option<Pos>,
}

/// One imported layer: a policy and its fields.
#[derive(Debug, Clone, PartialEq)]
pub struct OutLayer {
    /// The policy's name in scenario files, e.g. `Resilience4j`.
    pub policy: &'static str,
    /// What it stands for, e.g. `resilience4j.circuitbreaker inventory`.
    pub what: String,
    /// Its fields, in the order written.
    pub fields: Vec<Field>,
    /// The classes it applies to (empty = all): an imported route's class.
    pub classes: Vec<String>,
}

/// A part of the result that belongs elsewhere in the scenario (Envoy's outlier detection
/// goes under the dependency's `replicas:`).
#[derive(Debug, Clone, PartialEq)]
pub struct Snippet {
    /// The scenario field, e.g. `outlier_detection`.
    pub field: &'static str,
    /// Where to put it.
    pub place: &'static str,
    /// Its fields, written `Some((..))`.
    pub fields: Vec<Field>,
}

/// An option with no equivalent in brownout (never dropped silently).
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    /// Where the option is in the imported file.
    pub at: Pos,
    /// The key as written.
    pub key: String,
    /// Why it has no equivalent, and what brownout does instead.
    pub message: String,
}

/// An imported configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The library read.
    pub library: Library,
    /// The file's name, as comments cite it.
    pub label: String,
    /// The instance imported, when the file has several.
    pub instance: Option<String>,
    /// The layers, outermost first.
    pub layers: Vec<OutLayer>,
    /// Parts to place elsewhere in the scenario.
    pub snippets: Vec<Snippet>,
    /// Options with no equivalent.
    pub warnings: Vec<Warning>,
    /// The dependencies of a service graph whose calls the layers apply to (`brownout import
    /// --dependency`): written as each layer's `dependencies`. Empty: every call.
    pub dependencies: Vec<String>,
}

impl Imported {
    pub(crate) fn new(library: Library, label: &str, instance: Option<&str>) -> Self {
        Imported {
            library,
            label: label.to_string(),
            instance: instance.map(str::to_string),
            layers: Vec::new(),
            snippets: Vec::new(),
            warnings: Vec::new(),
            dependencies: Vec::new(),
        }
    }

    /// `file:line key`, the origin of a value read at `at` under `key`.
    pub(crate) fn origin(&self, at: Pos, key: &str) -> String {
        format!("{}:{} {key}", self.label, at.line)
    }

    /// Record an option with no equivalent.
    pub(crate) fn warn(&mut self, at: Pos, key: &str, message: impl Into<String>) {
        self.warnings.push(Warning { at, key: key.to_string(), message: message.into() });
    }

    /// One warning as printed on stderr and in the RON comment.
    pub fn warning_text(&self, w: &Warning) -> String {
        format!("{}:{}:{}: {}: {}", self.label, w.at.line, w.at.col, w.key, w.message)
    }

    /// The stack as RON text: a list of layers to paste into a policy set's `stack:`, with a
    /// comment per field, the warnings, and the snippets (commented out, to place by hand).
    pub fn to_ron(&self) -> String {
        let mut s = String::new();
        let of = self.instance.as_deref().map(|i| format!(" (instance \"{i}\")")).unwrap_or_default();
        s += &format!("// Imported from {} by `brownout import {}`{of}.\n", self.label, self.library.name());
        s += "// Values the file sets are spelled out with where they came from; the others are the\n";
        s += "// preset's defaults, which are the library's.\n";
        for w in &self.warnings {
            s += &format!("// warning: {}\n", self.warning_text(w));
        }
        s += "[\n";
        for l in &self.layers {
            s += &format!("    // {}\n", l.what);
            let classes = l.classes_ron() + &dependencies_ron(&self.dependencies);
            if l.fields.is_empty() {
                s += &format!("    (policy: {}(()){classes}),\n", l.policy);
                continue;
            }
            s += &format!("    (policy: {}((\n", l.policy);
            for f in &l.fields {
                s += &format!("        {}: {}, // {}\n", f.name, f.value, f.origin);
            }
            s += &format!("    )){classes}),\n");
        }
        s += "]\n";
        for sn in &self.snippets {
            s += &format!("// Place under {} (not part of the stack):\n", sn.place);
            s += &format!("// {}: Some((\n", sn.field);
            for f in &sn.fields {
                s += &format!("//     {}: {}, // {}\n", f.name, f.value, f.origin);
            }
            s += "// )),\n";
        }
        s
    }
}

impl OutLayer {
    /// The layer's RON text, `(policy: Name((field: value, ..)))`, without comments.
    pub fn ron(&self) -> String {
        let fields: Vec<String> = self.fields.iter().map(|f| format!("{}: {}", f.name, f.value)).collect();
        format!("(policy: {}(({})){})", self.policy, fields.join(", "), self.classes_ron())
    }

    /// `, classes: ["a", ..]` when the layer is for some classes only, else nothing.
    fn classes_ron(&self) -> String {
        if self.classes.is_empty() {
            return String::new();
        }
        let names: Vec<String> = self.classes.iter().map(|c| format!("{c:?}")).collect();
        format!(", classes: [{}]", names.join(", "))
    }
}

/// `, dependencies: ["a", ..]` when the layers are for some dependencies' calls only.
fn dependencies_ron(dependencies: &[String]) -> String {
    if dependencies.is_empty() {
        return String::new();
    }
    let names: Vec<String> = dependencies.iter().map(|d| format!("{d:?}")).collect();
    format!(", dependencies: [{}]", names.join(", "))
}

/// RON text of a duration.
pub(crate) fn dur(ns: Time) -> String {
    format!("\"{}\"", fmt_time(ns))
}

/// RON text of a float (always with a decimal point or exponent).
pub(crate) fn float(x: f64) -> String {
    format!("{x:?}")
}
