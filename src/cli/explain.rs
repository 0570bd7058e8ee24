//! `brownout explain [NAME]`: the reference of every scenario field and policy parameter,
//! generated from the scenario types' JSON schema. schemars reads the rustdoc comments (the
//! meaning, unit and range), the serde defaults and the integer widths, so the reference
//! cannot drift from the code; `docs/reference.md` is `brownout explain --all`.
//!
//! schemars leaves a field's default out of the schema when the field's serde
//! `skip_serializing_if` holds for it (schemars_derive 1.2, `schema_exprs.rs`,
//! `field_default_expr`), as it does for nearly every field that saved files leave out when
//! default. A field that may be left out then shows the default it takes all the same: `None`
//! for an option and `[]` for a list (what such a field's `skip_serializing_if` tests), and any
//! other such field carries `#[schemars(!skip_serializing_if)]` so that its default is in the
//! schema (`tests/docs/explain_defaults.rs` finds one that does not).

use std::collections::BTreeSet;
use std::fmt::Write;

use clap::Args;
use serde_json::{Map, Value};

use super::Failure;
use brownout::scenario::Scenario;

/// Arguments of `brownout explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A type (e.g. `Fleet`, `TieredBulkheadConfig`) or a policy or variant name (e.g.
    /// `TieredBulkhead`); without it, the index of all types.
    name: Option<String>,
    /// Print the whole reference (Markdown, as in docs/reference.md).
    #[arg(long, conflicts_with = "name")]
    all: bool,
}

/// Print the index, one section or the whole reference.
pub fn explain(args: ExplainArgs) -> Result<(), Failure> {
    let reference = Reference::new();
    if args.all {
        print!("{}", reference.markdown());
        return Ok(());
    }
    match args.name {
        None => print!("{}", reference.index()),
        Some(name) => {
            let section = reference.lookup(&name).ok_or_else(|| {
                Failure::input(format!("error: no type or variant named {name:?}; `brownout explain` lists them all"))
            })?;
            print!("{section}");
        }
    }
    Ok(())
}

/// The scenario schema, its types in reading order.
struct Reference {
    /// (type name, schema), `Scenario` first, then each type where it is first referred to.
    types: Vec<(String, Value)>,
    /// The names of the types that are structs (written `(field: value, ...)`).
    structs: BTreeSet<String>,
}

impl Reference {
    fn new() -> Self {
        let root = schemars::generate::SchemaSettings::default().into_generator().into_root_schema_for::<Scenario>();
        let mut root = root.to_value();
        let defs = match root.as_object_mut().and_then(|o| o.remove("$defs")) {
            Some(Value::Object(d)) => d,
            _ => Map::new(),
        };
        if let Some(o) = root.as_object_mut() {
            o.remove("$schema");
            o.remove("title");
        }
        // Breadth-first from the root: a type comes after the one that introduces it.
        let mut types = vec![("Scenario".to_string(), root)];
        let mut seen: BTreeSet<String> = BTreeSet::from(["Scenario".to_string()]);
        let mut i = 0;
        while i < types.len() {
            let mut refs = Vec::new();
            collect_refs(&types[i].1, &mut refs);
            for r in refs {
                if !seen.insert(r.clone()) {
                    continue;
                }
                if let Some(schema) = defs.get(&r) {
                    types.push((r, schema.clone()));
                }
            }
            i += 1;
        }
        let structs = types.iter().filter(|(_, s)| s.get("properties").is_some()).map(|(n, _)| n.clone()).collect();
        Reference { types, structs }
    }

    /// Every type with the first sentence of its description.
    fn index(&self) -> String {
        let mut out = String::from("Scenario types (`brownout explain NAME` for one, `--all` for everything):\n\n");
        let width = self.types.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (name, schema) in &self.types {
            let _ = writeln!(out, "  {name:width$}  {}", first_sentence(&description(schema)));
        }
        out
    }

    /// The section of type `name`, or of the type a variant called `name` holds (so
    /// `TieredBulkhead` finds `TieredBulkheadConfig`). Case-insensitive.
    fn lookup(&self, name: &str) -> Option<String> {
        let by_type = self.types.iter().find(|(n, _)| n.eq_ignore_ascii_case(name));
        if let Some((n, schema)) = by_type {
            return Some(section(n, schema, &self.structs));
        }
        for (owner, schema) in &self.types {
            for v in variants(schema, &self.structs) {
                if !v.name.eq_ignore_ascii_case(name) {
                    continue;
                }
                let mut out = format!("{} is a variant of {owner}: {}\n\n", v.name, v.syntax);
                if let Some(target) = v.single_ref.and_then(|r| self.types.iter().find(|(n, _)| *n == r)) {
                    out.push_str(&section(&target.0, &target.1, &self.structs));
                } else {
                    out.push_str(&section(owner, schema, &self.structs));
                }
                return Some(out);
            }
        }
        None
    }

    /// The whole reference as Markdown.
    fn markdown(&self) -> String {
        let mut out = String::from(
            "# Scenario reference\n\n\
             Generated from the code by `brownout explain --all` (the types' rustdoc comments and serde \
             defaults, through their JSON schema); `tests/docs/reference.rs` fails when this file is stale \
             (`BROWNOUT_BLESS=1 cargo test --profile ci --test docs reference::` rewrites it). \
             `brownout explain NAME` prints one section.\n\n\
             A scenario file is RON: structs are written `(field: value, ...)`, enum variants \
             `Name`, `Name(value)` or `Name(field: value, ...)`, lists `[...]`, durations as strings \
             with a unit. Fields with a default may be left out; unknown fields are errors.\n\n## Index\n\n",
        );
        for (name, schema) in &self.types {
            let _ = writeln!(out, "- [{name}](#{}): {}", name.to_lowercase(), first_sentence(&description(schema)));
        }
        out.push('\n');
        for (name, schema) in &self.types {
            out.push_str(&section(name, schema, &self.structs));
        }
        out
    }
}

/// Every `$ref` target in `v`, in document order.
fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref") {
                out.push(r.trim_start_matches("#/$defs/").to_string());
            }
            o.values().for_each(|x| collect_refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

fn description(v: &Value) -> String {
    v.get("description").and_then(Value::as_str).unwrap_or("").replace('\n', " ")
}

/// Up to the first full stop that ends a sentence (not the one of "e.g." or "i.e.").
fn first_sentence(s: &str) -> &str {
    let ends = s.match_indices(". ").map(|(i, _)| i);
    let abbreviation = |i: usize| s[..i].ends_with("e.g") || s[..i].ends_with("i.e");
    let mut ends = ends.filter(|&i| !abbreviation(i) && s[i + 2..].starts_with(char::is_uppercase));
    match ends.next() {
        Some(i) => &s[..=i],
        None => s,
    }
}

/// One Markdown section: the description, then the fields or the variants.
fn section(name: &str, schema: &Value, structs: &BTreeSet<String>) -> String {
    let mut out = format!("## {name}\n\n");
    let desc = description(schema);
    if !desc.is_empty() {
        let _ = writeln!(out, "{desc}\n");
    }
    let vs = variants(schema, structs);
    if !vs.is_empty() {
        out.push_str("One of:\n\n");
        for v in &vs {
            let _ = writeln!(
                out,
                "- `{}`{}",
                v.syntax,
                if v.doc.is_empty() { String::new() } else { format!(": {}", v.doc) }
            );
            if let Some(fields) = &v.fields {
                out.push('\n');
                for line in fields_table(fields).lines() {
                    let _ = writeln!(out, "  {line}");
                }
                out.push('\n');
            }
        }
        out.push('\n');
    } else if let Some(props) = schema.get("properties") {
        out.push_str(&fields_table(&Value::Object(object_with(props, schema.get("required")))));
        out.push('\n');
    } else {
        let _ = writeln!(out, "Written as: {}.\n", type_name(schema));
    }
    out
}

/// `{"properties": ..., "required": ...}` for `fields_table`.
fn object_with(props: &Value, required: Option<&Value>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("properties".into(), props.clone());
    m.insert("required".into(), required.cloned().unwrap_or(Value::Array(vec![])));
    m
}

/// A Markdown table of an object's fields: name, type, default, meaning.
fn fields_table(obj: &Value) -> String {
    let required: BTreeSet<&str> =
        obj.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut out = String::from("| field | type | default | meaning |\n|---|---|---|---|\n");
    let Some(props) = obj.get("properties").and_then(Value::as_object) else {
        return out;
    };
    for (field, schema) in props {
        let default = match schema.get("default") {
            _ if required.contains(field.as_str()) => "required".to_string(),
            // A unit enum variant is a JSON string but is written bare in RON.
            Some(Value::String(s)) if schema.get("$ref").is_some_and(|r| r != "#/$defs/Dur") => format!("`{s}`"),
            Some(v) => format!("`{}`", ron_value(v)),
            None if nullable(schema) => "`None`".to_string(),
            None if schema.get("type") == Some(&Value::from("array")) => "`[]`".to_string(),
            None => "-".to_string(),
        };
        let _ =
            writeln!(out, "| `{field}` | {} | {default} | {} |", cell(&type_name(schema)), cell(&description(schema)));
    }
    out
}

/// The schema admits `null`: an `Option` field, whose default when left out is `None`.
fn nullable(s: &Value) -> bool {
    let null = Value::from("null");
    let in_any = s.get("anyOf").or_else(|| s.get("oneOf")).and_then(Value::as_array);
    in_any.is_some_and(|a| a.iter().any(|x| x.get("type") == Some(&null)))
        || s.get("type").and_then(Value::as_array).is_some_and(|t| t.contains(&null))
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A default value as it would be written in RON.
fn ron_value(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::String(s) => format!("\"{s}\""),
        Value::Array(a) => format!("[{}]", a.iter().map(ron_value).collect::<Vec<_>>().join(", ")),
        // An empty map; non-empty objects are structs.
        Value::Object(o) if o.is_empty() => "{}".into(),
        Value::Object(o) => match o.iter().next() {
            // An externally tagged enum variant with data, e.g. {"Constant": 0.0}.
            Some((k, x)) if o.len() == 1 && k.starts_with(char::is_uppercase) => format!("{k}({})", ron_value(x)),
            _ => {
                format!("({})", o.iter().map(|(k, x)| format!("{k}: {}", ron_value(x))).collect::<Vec<_>>().join(", "))
            }
        },
        other => other.to_string(),
    }
}

/// How a value of this schema is written, with the range the schema itself implies.
fn type_name(s: &Value) -> String {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return format!("[{name}](#{})", name.to_lowercase());
    }
    if let Some(any) = s.get("anyOf").or_else(|| s.get("oneOf")).and_then(Value::as_array) {
        let parts: Vec<String> =
            any.iter().filter(|x| x.get("type") != Some(&Value::from("null"))).map(type_name).collect();
        let optional = parts.len() < any.len();
        return format!("{}{}", parts.join(" or "), if optional { " (optional)" } else { "" });
    }
    let ty = match s.get("type") {
        Some(Value::Array(a)) => {
            let non_null: Vec<&Value> = a.iter().filter(|t| *t != "null").collect();
            let inner = Value::Object({
                let mut m = s.as_object().cloned().unwrap_or_default();
                m.insert("type".into(), non_null.first().map(|t| (*t).clone()).unwrap_or(Value::Null));
                m
            });
            return format!("{} (optional)", type_name(&inner));
        }
        Some(Value::String(t)) => t.as_str(),
        _ => return "any".into(),
    };
    match ty {
        "integer" => integer_name(s),
        "number" => "number".into(),
        "boolean" => "`true` or `false`".into(),
        "string" => "string".into(),
        "array" => array_name(s),
        "object" => match s.get("additionalProperties") {
            Some(v) if v.is_object() => format!("map of string to {}", type_name(v)),
            _ => "struct".into(),
        },
        other => other.into(),
    }
}

fn integer_name(s: &Value) -> String {
    let format = s.get("format").and_then(Value::as_str).unwrap_or("");
    let max = match format {
        "uint8" => "255",
        "uint16" => "65535",
        "uint32" => "4294967295",
        "uint64" | "uint" => "18446744073709551615",
        _ => "",
    };
    match (s.get("minimum"), max) {
        (Some(min), "") => format!("integer >= {min}"),
        (Some(min), max) => format!("integer {min}..={max}"),
        (None, _) => "integer".into(),
    }
}

fn array_name(s: &Value) -> String {
    if let Some(items) = s.get("prefixItems").and_then(Value::as_array) {
        return format!("({})", items.iter().map(type_name).collect::<Vec<_>>().join(", "));
    }
    match s.get("items") {
        Some(items) => format!("list of {}", type_name(items)),
        None => "list".into(),
    }
}

/// One enum variant as documented.
struct Variant {
    name: String,
    /// How it is written, e.g. `Step(at: Dur, factor: number)`.
    syntax: String,
    doc: String,
    /// Its fields, for a struct variant.
    fields: Option<Value>,
    /// The type it holds, for a newtype variant holding a named type.
    single_ref: Option<String>,
}

/// The variants of an enum schema (`oneOf`/`enum`); empty for any other schema.
fn variants(schema: &Value, structs: &BTreeSet<String>) -> Vec<Variant> {
    let mut out = Vec::new();
    let alternatives = match schema.get("oneOf").and_then(Value::as_array) {
        Some(alts) => alts.clone(),
        None if schema.get("enum").is_some() || schema.get("const").is_some() => vec![schema.clone()],
        None => return out,
    };
    for alt in &alternatives {
        let doc = description(alt);
        let unit_names = alt.get("enum").and_then(Value::as_array).cloned().unwrap_or_default();
        let unit_names = match alt.get("const") {
            Some(c) => vec![c.clone()],
            None => unit_names,
        };
        for n in unit_names.iter().filter_map(Value::as_str) {
            let doc = if unit_names.len() == 1 { doc.clone() } else { String::new() };
            out.push(Variant { name: n.into(), syntax: n.into(), doc, fields: None, single_ref: None });
        }
        let Some((name, inner)) = alt.get("properties").and_then(Value::as_object).and_then(|p| p.iter().next()) else {
            continue;
        };
        if alt.get("required").and_then(Value::as_array).is_none_or(|r| r.len() != 1) {
            continue;
        }
        out.push(data_variant(name, inner, doc, structs));
    }
    out
}

fn data_variant(name: &str, inner: &Value, doc: String, structs: &BTreeSet<String>) -> Variant {
    if let Some(props) = inner.get("properties").and_then(Value::as_object) {
        let args: Vec<String> = props.iter().map(|(k, v)| format!("{k}: {}", plain(&type_name(v)))).collect();
        let fields = Value::Object(object_with(&Value::Object(props.clone()), inner.get("required")));
        return Variant {
            name: name.into(),
            syntax: format!("{name}({})", args.join(", ")),
            doc,
            fields: Some(fields),
            single_ref: None,
        };
    }
    let single_ref = inner.get("$ref").and_then(Value::as_str).map(|r| r.trim_start_matches("#/$defs/").to_string());
    // A newtype variant around a struct is written with double parentheses in RON.
    let syntax = match &single_ref {
        Some(r) if structs.contains(r) => format!("{name}(({r} fields))"),
        _ => format!("{name}({})", plain(&type_name(inner))),
    };
    Variant { name: name.into(), syntax, doc, fields: None, single_ref }
}

/// A type name without Markdown links, for code spans.
fn plain(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('[') {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find("](") else { break };
        out.push_str(&rest[i + 1..i + j]);
        let after = &rest[i + j..];
        rest = after.find(')').map_or("", |k| &after[k + 1..]);
    }
    out.push_str(rest);
    out.replace('`', "")
}
