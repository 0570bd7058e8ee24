//! Parameter paths such as `policies[tiered].stack[0].policy.Limiter.permits`: parsing, and
//! reading or setting the value they name in a scenario serialized to `serde_json::Value`.
//!
//! A path is dot-separated keys, each optionally followed by selectors: `[3]` indexes an
//! array, `[name]` picks the array element whose `name` field equals `name`. Enums are
//! externally tagged, so a variant is just a key: `dependency.drift.Ramp.to`.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// An object key (a struct field or an enum variant).
    Key(String),
    /// An array index.
    Index(usize),
    /// The array element whose `name` field equals this.
    Named(String),
}

/// Parse a path; the error says what is wrong with it.
pub fn parse(path: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    if path.trim().is_empty() {
        return Err("the path is empty".into());
    }
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => part.split_at(i),
            None => (part, ""),
        };
        if key.is_empty() && steps.is_empty() {
            return Err(format!("path \"{path}\" must start with a field name"));
        }
        if !key.is_empty() {
            if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("path \"{path}\": \"{key}\" is not a field name"));
            }
            steps.push(Step::Key(key.to_string()));
        }
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .filter(|_| rest.starts_with('['))
                .ok_or_else(|| format!("path \"{path}\": unbalanced [ ] in \"{part}\""))?;
            let inner = &rest[1..close];
            if inner.is_empty() {
                return Err(format!("path \"{path}\": empty [] in \"{part}\""));
            }
            steps.push(match inner.parse::<usize>() {
                Ok(i) => Step::Index(i),
                Err(_) => Step::Named(inner.to_string()),
            });
            rest = &rest[close + 1..];
        }
    }
    Ok(steps)
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "empty (null)".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(s) => format!("\"{s}\""),
        Value::Array(a) => format!("a list of {}", a.len()),
        Value::Object(o) => {
            let keys: Vec<&str> = o.keys().map(String::as_str).collect();
            format!("an object with keys {}", keys.join(", "))
        }
    }
}

/// The value a path names, mutably; the error names the step that failed and what is there.
pub fn get_mut<'a>(root: &'a mut Value, steps: &[Step]) -> Result<&'a mut Value, String> {
    let mut cur = root;
    let mut walked = String::new();
    for step in steps {
        let here = if walked.is_empty() { "the scenario".to_string() } else { walked.clone() };
        let found = describe(cur);
        cur = match step {
            Step::Key(k) => {
                walked += &if walked.is_empty() { k.clone() } else { format!(".{k}") };
                cur.as_object_mut()
                    .and_then(|o| o.get_mut(k))
                    .ok_or_else(|| format!("{here} has no \"{k}\" ({here} is {found})"))?
            }
            Step::Index(i) => {
                walked += &format!("[{i}]");
                cur.as_array_mut()
                    .and_then(|a| a.get_mut(*i))
                    .ok_or_else(|| format!("{here} has no element [{i}] ({here} is {found})"))?
            }
            Step::Named(n) => {
                walked += &format!("[{n}]");
                let by_name = |v: &Value| v.get("name").and_then(Value::as_str) == Some(n);
                let names: Vec<String> = cur
                    .as_array()
                    .map(|a| {
                        let named = a.iter().filter_map(|v| v.get("name")?.as_str());
                        named.map(|s| format!("\"{s}\"")).collect()
                    })
                    .unwrap_or_default();
                cur.as_array_mut()
                    .and_then(|a| a.iter_mut().find(|v| by_name(v)))
                    .ok_or_else(|| format!("{here} has no element named \"{n}\" (names: {})", names.join(", ")))?
            }
        };
    }
    Ok(cur)
}

/// The path with every `[name]` replaced by the index it selects, so two spellings of one
/// value (`policies[tiered]`, `policies[5]`) compare equal.
pub fn canonical(root: &Value, steps: &[Step]) -> Result<Vec<Step>, String> {
    let mut probe = root.clone();
    let mut out = Vec::with_capacity(steps.len());
    for (k, step) in steps.iter().enumerate() {
        out.push(match step {
            Step::Named(n) => {
                let list = get_mut(&mut probe, &steps[..k])?;
                let i = list
                    .as_array()
                    .and_then(|a| a.iter().position(|v| v.get("name").and_then(Value::as_str) == Some(n)));
                Step::Index(i.ok_or_else(|| format!("no element named \"{n}\""))?)
            }
            other => other.clone(),
        });
    }
    Ok(out)
}

/// Why a path cannot be claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unclaimed {
    /// The path names nothing (the message says why).
    Bad(String),
    /// Entry `earlier` already sets this value.
    Taken(usize),
}

/// The values set so far by a list of paths (sweep axes, tune knobs), by canonical path: two
/// entries setting one value would label results with a value the later one overwrote, so
/// the second claim of a value is refused, whichever spelling (`[name]` or `[index]`) each uses.
#[derive(Debug, Default)]
pub(crate) struct Claimed(std::collections::BTreeMap<Vec<Step>, usize>);

impl Claimed {
    /// Claim the value `steps` names in `root` for entry `index`; returns its canonical path.
    pub(crate) fn claim(&mut self, root: &Value, steps: &[Step], index: usize) -> Result<Vec<Step>, Unclaimed> {
        let c = canonical(root, steps).map_err(Unclaimed::Bad)?;
        match self.0.get(&c) {
            Some(&earlier) => Err(Unclaimed::Taken(earlier)),
            None => {
                self.0.insert(c.clone(), index);
                Ok(c)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_keys_indices_and_names() {
        assert_eq!(
            parse("policies[tiered].stack[0].policy.Limiter.permits").unwrap(),
            vec![
                Step::Key("policies".into()),
                Step::Named("tiered".into()),
                Step::Key("stack".into()),
                Step::Index(0),
                Step::Key("policy".into()),
                Step::Key("Limiter".into()),
                Step::Key("permits".into()),
            ]
        );
        assert_eq!(
            parse("drift.Points[1][0]").unwrap(),
            vec![Step::Key("drift".into()), Step::Key("Points".into()), Step::Index(1), Step::Index(0),]
        );
        assert!(parse("").is_err());
        assert!(parse("a[0").is_err());
        assert!(parse("a.b c").is_err());
        assert!(parse("a[]").is_err());
    }

    #[test]
    fn names_and_indices_of_one_element_are_one_path() {
        let v = json!({"policies": [{"name": "a"}, {"name": "b", "x": 1}]});
        let by_name = canonical(&v, &parse("policies[b].x").unwrap()).unwrap();
        assert_eq!(by_name, canonical(&v, &parse("policies[1].x").unwrap()).unwrap());
        assert_ne!(by_name, canonical(&v, &parse("policies[0].x").unwrap()).unwrap());
    }

    #[test]
    fn walks_and_reports_where_it_stopped() {
        let mut v = json!({"policies": [{"name": "a", "stack": []}, {"name": "b", "x": 1}],
                           "drift": {"Ramp": {"to": 2.0}}});
        *get_mut(&mut v, &parse("policies[b].x").unwrap()).unwrap() = json!(5);
        assert_eq!(v["policies"][1]["x"], json!(5));
        *get_mut(&mut v, &parse("drift.Ramp.to").unwrap()).unwrap() = json!(3.0);
        assert_eq!(v["drift"]["Ramp"]["to"], json!(3.0));
        let e = get_mut(&mut v, &parse("drift.Step.factor").unwrap()).unwrap_err();
        assert!(e.contains("drift has no \"Step\"") && e.contains("Ramp"), "{e}");
        let e = get_mut(&mut v, &parse("policies[c].x").unwrap()).unwrap_err();
        assert!(e.contains("\"c\"") && e.contains("\"a\", \"b\""), "{e}");
        let e = get_mut(&mut v, &parse("policies[5]").unwrap()).unwrap_err();
        assert!(e.contains("[5]"), "{e}");
    }
}
