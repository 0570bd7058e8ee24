//! One document tree for YAML (saphyr) and JSON (jsonc-parser) with the line and column of
//! every key and value, so each importer reads one shape and every message can point at the
//! offending text.

use jsonc_parser::ast::{ObjectPropName, Value as JsonValue};
use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};

use super::ImportError;
pub use super::Pos;

/// A value with its position.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub at: Pos,
    pub v: Val,
}

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A mapping entry: the key as written, where it is, and its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub key: String,
    pub at: Pos,
    pub value: Node,
}

impl Node {
    /// The entries of a mapping (none for any other value).
    pub fn entries(&self) -> &[Entry] {
        match &self.v {
            Val::Map(e) => e,
            _ => &[],
        }
    }

    /// The entry whose key matches `key` under [`canon`] (Spring's relaxed binding: case,
    /// `-` and `_` ignored).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        let want = canon(key);
        self.entries().iter().find(|e| canon(&e.key) == want)
    }

    /// The entry with exactly this key.
    pub fn get_exact(&self, key: &str) -> Option<&Entry> {
        self.entries().iter().find(|e| e.key == key)
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self.v {
            Val::Null => "null",
            Val::Bool(_) => "a boolean",
            Val::Int(_) => "an integer",
            Val::Float(_) => "a number",
            Val::Str(_) => "a string",
            Val::Seq(_) => "a list",
            Val::Map(_) => "a mapping",
        }
    }
}

/// A key in Spring's relaxed form: lower case without `-` and `_`, so `failure-rate-threshold`,
/// `failureRateThreshold` and `failure_rate_threshold` are one key.
pub(crate) fn canon(key: &str) -> String {
    key.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

/// Parse YAML: the first document (an empty file is an empty mapping), and where the second
/// one starts (its `---`), when there is one.
pub(crate) fn yaml(text: &str) -> Result<(Node, Option<Pos>), ImportError> {
    let docs = MarkedYamlOwned::load_from_str(text).map_err(|e| ImportError {
        line: e.marker().line(),
        col: e.marker().col() + 1,
        message: format!("malformed YAML: {}", e.info()),
        ..ImportError::default()
    })?;
    let second = docs.get(1).map(|d| document_marker(text, d.span.start.line(), yaml_pos(&docs[0]).line));
    match docs.into_iter().next() {
        Some(d) => Ok((from_yaml(d)?, second)),
        None => Ok((Node { at: Pos { line: 1, col: 1 }, v: Val::Map(Vec::new()) }, None)),
    }
}

/// The `---` that starts the document whose content starts on line `content` (the last one
/// at or before it, after the first document's content on line `first`); the content's own
/// line if none is found.
fn document_marker(text: &str, content: usize, first: usize) -> Pos {
    let is_marker = |l: &str| l.strip_prefix("---").is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t', '\r']));
    let line = (text.lines().enumerate())
        .map(|(i, l)| (i + 1, l))
        .filter(|&(n, l)| n > first && n <= content.max(1) && is_marker(l))
        .map(|(n, _)| n)
        .last()
        .unwrap_or(content.max(1));
    Pos { line, col: 1 }
}

fn yaml_pos(n: &MarkedYamlOwned) -> Pos {
    Pos { line: n.span.start.line(), col: n.span.start.col() + 1 }
}

fn from_yaml(n: MarkedYamlOwned) -> Result<Node, ImportError> {
    let at = yaml_pos(&n);
    let v = match n.data {
        YamlDataOwned::Value(s) => match s {
            ScalarOwned::Null => Val::Null,
            ScalarOwned::Boolean(b) => Val::Bool(b),
            ScalarOwned::Integer(i) => Val::Int(i),
            ScalarOwned::FloatingPoint(f) => Val::Float(f.into_inner()),
            ScalarOwned::String(s) => Val::Str(s),
        },
        YamlDataOwned::Representation(s, _, _) => Val::Str(s),
        YamlDataOwned::Sequence(items) => Val::Seq(items.into_iter().map(from_yaml).collect::<Result<_, _>>()?),
        YamlDataOwned::Mapping(map) => {
            let mut entries: Vec<Entry> = Vec::with_capacity(map.len());
            let mut merged: Vec<Entry> = Vec::new();
            for (k, value) in map {
                let kat = yaml_pos(&k);
                let key = match from_yaml(k)?.v {
                    Val::Str(s) => s,
                    Val::Int(i) => i.to_string(),
                    Val::Bool(b) => b.to_string(),
                    Val::Float(f) => f.to_string(),
                    _ => return Err(at_pos(kat, "a mapping key must be a plain scalar")),
                };
                let value = from_yaml(value)?;
                if key == "<<" {
                    // YAML 1.1 merge key (SnakeYAML, yaml-cpp): the keys of the mapping, or
                    // of each mapping of a list (earlier ones first), under those written
                    // beside it.
                    let maps = match value.v {
                        Val::Map(m) => vec![m],
                        Val::Seq(items) => items
                            .into_iter()
                            .map(|n| match n.v {
                                Val::Map(m) => Ok(m),
                                _ => Err(at_pos(n.at, "a merge key (<<) takes a mapping or a list of mappings")),
                            })
                            .collect::<Result<_, _>>()?,
                        _ => return Err(at_pos(value.at, "a merge key (<<) takes a mapping or a list of mappings")),
                    };
                    for e in maps.into_iter().flatten() {
                        if !merged.iter().any(|m| m.key == e.key) {
                            merged.push(e);
                        }
                    }
                    continue;
                }
                entries.push(Entry { key, at: kat, value });
            }
            for e in merged {
                if !entries.iter().any(|x| x.key == e.key) {
                    entries.push(e);
                }
            }
            Val::Map(entries)
        }
        YamlDataOwned::Tagged(_, inner) => return from_yaml(*inner),
        YamlDataOwned::Alias(_) | YamlDataOwned::BadValue => {
            return Err(at_pos(at, "YAML aliases and unresolvable values are not read"));
        }
    };
    Ok(Node { at, v })
}

/// Spring reads a key `a.b.c` as nested keys `a`, `b`, `c`: split dotted keys into nested
/// mappings, merging with mappings already there. A part in brackets (`[backend.a]`) is one
/// key, dots included, without its brackets (Spring Boot's map-key syntax).
pub(crate) fn split_dotted(n: Node) -> Node {
    let Val::Map(entries) = n.v else {
        let v = match n.v {
            Val::Seq(items) => Val::Seq(items.into_iter().map(split_dotted).collect()),
            v => v,
        };
        return Node { at: n.at, v };
    };
    let mut out: Vec<Entry> = Vec::new();
    for e in entries {
        let value = split_dotted(e.value);
        let mut parts = spring_key_parts(&e.key);
        let last = parts.pop().unwrap_or_default();
        let mut leaf = Entry { key: last, at: e.at, value };
        while let Some(p) = parts.pop() {
            leaf = Entry { key: p, at: e.at, value: Node { at: e.at, v: Val::Map(vec![leaf]) } };
        }
        merge_entry(&mut out, leaf);
    }
    Node { at: n.at, v: Val::Map(out) }
}

/// `a.[b.c].d` as `a`, `b.c`, `d`: dots split, except inside brackets, which are dropped.
fn spring_key_parts(key: &str) -> Vec<String> {
    let (mut parts, mut cur, mut depth) = (Vec::new(), String::new(), 0usize);
    for c in key.chars() {
        match c {
            '[' => {
                if depth > 0 {
                    cur.push(c);
                }
                depth += 1;
            }
            ']' if depth > 0 => {
                depth -= 1;
                if depth > 0 {
                    cur.push(c);
                }
            }
            '.' if depth == 0 => parts.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    parts.push(cur);
    parts
}

fn merge_entry(out: &mut Vec<Entry>, e: Entry) {
    if let Some(old) = out.iter_mut().find(|o| canon(&o.key) == canon(&e.key))
        && let (Val::Map(a), Val::Map(b)) = (&mut old.value.v, e.value.v.clone())
    {
        for x in b {
            merge_entry(a, x);
        }
        return;
    }
    out.push(e);
}

/// Parse JSON as .NET's configuration reader takes it (comments and trailing commas allowed).
pub(crate) fn json(text: &str) -> Result<Node, ImportError> {
    let options = jsonc_parser::ParseOptions {
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
        ..Default::default()
    };
    let parsed = jsonc_parser::parse_to_ast(text, &Default::default(), &options).map_err(|e| {
        let at = pos_of(text, e.range().start);
        at_pos(at, format!("malformed JSON: {}", e.kind()))
    })?;
    match parsed.value {
        Some(v) => from_json(&mut Cursor::new(text), v),
        None => Err(at_pos(Pos { line: 1, col: 1 }, "malformed JSON: the file holds no value")),
    }
}

/// Positions of byte offsets met in increasing order (as `from_json` meets the values, in
/// document order), each found from the last one: a large document's positions cost one pass
/// over its text, not one pass per value (an OTLP trace file holds millions of values).
struct Cursor<'a> {
    text: &'a str,
    offset: usize,
    at: Pos,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, offset: 0, at: Pos { line: 1, col: 1 } }
    }

    /// The position of `offset`, as [`pos_of`] gives it.
    fn pos(&mut self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        if offset < self.offset || !self.text.is_char_boundary(offset) {
            return pos_of(self.text, offset);
        }
        let step = &self.text[self.offset..offset];
        match step.rfind('\n') {
            Some(i) => {
                self.at.line += step.matches('\n').count();
                self.at.col = step[i + 1..].chars().count() + 1;
            }
            None => self.at.col += step.chars().count(),
        }
        self.offset = offset;
        self.at
    }
}

fn from_json(cur: &mut Cursor, v: JsonValue) -> Result<Node, ImportError> {
    use jsonc_parser::common::Ranged;
    let at = cur.pos(v.range().start);
    let v = match v {
        JsonValue::NullKeyword(_) => Val::Null,
        JsonValue::BooleanLit(b) => Val::Bool(b.value),
        JsonValue::StringLit(s) => Val::Str(s.value.into_owned()),
        JsonValue::NumberLit(n) => match n.value.parse::<i64>() {
            Ok(i) => Val::Int(i),
            Err(_) => Val::Float(n.value.parse().map_err(|_| at_pos(at, format!("bad number {}", n.value)))?),
        },
        JsonValue::Array(a) => Val::Seq(a.elements.into_iter().map(|x| from_json(cur, x)).collect::<Result<_, _>>()?),
        JsonValue::Object(o) => {
            let mut entries = Vec::with_capacity(o.properties.len());
            for p in o.properties {
                let (key, start) = match p.name {
                    ObjectPropName::String(s) => (s.value.into_owned(), s.range.start),
                    ObjectPropName::Word(w) => (w.value.to_string(), w.range.start),
                };
                let at = cur.pos(start);
                entries.push(Entry { key, at, value: from_json(cur, p.value)? });
            }
            Val::Map(entries)
        }
    };
    Ok(Node { at, v })
}

/// The line and column (in characters) of byte offset `offset`.
fn pos_of(text: &str, offset: usize) -> Pos {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Pos { line, col }
}

/// An error at `at` (the file is filled in by the caller).
pub(crate) fn at_pos(at: Pos, message: impl Into<String>) -> ImportError {
    ImportError { line: at.line, col: at.col, message: message.into(), ..ImportError::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_positions_are_one_based() {
        let (n, docs) = yaml("a:\n  bb: 5\n").unwrap();
        assert_eq!(docs, None, "one document");
        let a = n.get("a").unwrap();
        assert_eq!(a.at, Pos { line: 1, col: 1 });
        let bb = a.value.get("bb").unwrap();
        assert_eq!(bb.at, Pos { line: 2, col: 3 });
        assert_eq!(bb.value.at, Pos { line: 2, col: 7 });
        assert_eq!(bb.value.v, Val::Int(5));
    }

    #[test]
    fn json_positions_count_characters() {
        let n = json("{\n  // note\n  \"é\": 1, \"x\": [true, 2.5],\n}").unwrap();
        assert_eq!(n.get_exact("é").unwrap().at, Pos { line: 3, col: 3 });
        assert_eq!(n.get_exact("x").unwrap().at, Pos { line: 3, col: 11 });
        let e = json("{\"a\": }").unwrap_err();
        assert_eq!((e.line, e.col), (1, 7));
    }

    /// Positions found by the cursor, each from the previous one, across lines, CRLF and
    /// characters of several bytes (counted by hand in the text below).
    #[test]
    fn json_cursor_positions_across_lines_and_wide_characters() {
        let text = "{\"é\": [1,\n  {\"ü\": \"ß\", \"k\": null}],\r\n \"z\": {\"y\":\n\n [true, \"€\", 2.5]}}";
        let n = json(text).unwrap();
        let Val::Seq(list) = &n.get_exact("é").unwrap().value.v else { panic!() };
        let k = list[1].get_exact("k").unwrap();
        assert_eq!((k.at, k.value.at), (Pos { line: 2, col: 14 }, Pos { line: 2, col: 19 }));
        let z = n.get_exact("z").unwrap();
        assert_eq!(z.at, Pos { line: 3, col: 2 });
        let y = &z.value.get_exact("y").unwrap().value;
        assert_eq!(y.at, Pos { line: 5, col: 2 });
        let Val::Seq(items) = &y.v else { panic!() };
        assert_eq!(items[2].at, Pos { line: 5, col: 14 });
    }

    #[test]
    fn relaxed_keys_and_dotted_keys() {
        assert_eq!(canon("failure-rate-threshold"), canon("failureRateThreshold"));
        assert_eq!(canon("failure_rate_threshold"), canon("FAILURE-RATE-THRESHOLD"));
        let (n, _) = yaml("a.b: 1\na:\n  c: 2\n").unwrap();
        let n = split_dotted(n);
        let a = &n.get("a").unwrap().value;
        assert_eq!(a.get("b").unwrap().value.v, Val::Int(1));
        assert_eq!(a.get("c").unwrap().value.v, Val::Int(2));
        assert_eq!(n.entries().len(), 1);
    }
}
