//! A snippet as scenario text to set by hand: what an `Import(..)` layer, which can only give
//! stack layers, prints for the part of the file that belongs elsewhere (Envoy's outlier
//! detection, under the dependency's `replicas:`).

use super::Snippet;

impl Snippet {
    /// The snippet as RON to paste where [`Snippet::place`] says, `field: Some((..)),`, one
    /// field a line citing where its value came from, indented by `indent` spaces.
    pub fn fragment(&self, indent: usize) -> String {
        let pad = " ".repeat(indent);
        let mut s = format!("{pad}{}: Some((\n", self.field);
        for f in &self.fields {
            s += &format!("{pad}    {}: {}, // {}\n", f.name, f.value, f.origin);
        }
        s += &format!("{pad})),");
        s
    }
}
