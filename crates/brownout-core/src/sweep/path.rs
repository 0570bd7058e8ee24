//! Parameter paths such as `policies[tiered].stack[0].policy.Limiter.permits`: parsing, and
//! reading or setting the value they name in a scenario serialized to `serde_json::Value`.
//!
//! A path is dot-separated keys, each optionally followed by selectors: `[3]` indexes an
//! array, `[name]` picks the array element whose `name` field equals `name` (in a list of
//! unnamed entries that each name a `dependency`, such as `fleet.pools`, the entry for that
//! dependency), and `[Policy@dep]` picks the one layer of a stack whose policy is `Policy` and
//! whose `dependencies` scope holds `dep` (`[@dep]`: the one layer scoped to `dep`). Enums are
//! externally tagged, so a variant is just a key: `dependency.drift.Ramp.to`.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// An object key (a struct field or an enum variant).
    Key(String),
    /// An array index.
    Index(usize),
    /// The array element whose `name` field equals this (or, in a list of entries without
    /// names, whose `dependency` field does: `fleet.pools[pricing]`).
    Named(String),
    /// The one layer of a stack scoped to `dependency` (its `dependencies` hold it) whose
    /// policy is the variant `policy` (any policy when `None`): `stack[Timeout@pricing]`.
    Layer {
        /// The policy variant, e.g. `Timeout`.
        policy: Option<String>,
        /// The dependency the layer is scoped to.
        dependency: String,
    },
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
            steps.push(match (inner.parse::<usize>(), inner.split_once('@')) {
                (Ok(i), _) => Step::Index(i),
                (Err(_), Some((_, ""))) => {
                    return Err(format!("path \"{path}\": \"[{inner}]\" names no dependency after @"));
                }
                (Err(_), Some((policy, dependency))) => Step::Layer {
                    policy: (!policy.is_empty()).then(|| policy.to_string()),
                    dependency: dependency.to_string(),
                },
                (Err(_), None) => Step::Named(inner.to_string()),
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
            Step::Named(_) | Step::Layer { .. } => {
                walked += &selector(step);
                let i = select(cur, step).map_err(|m| format!("{here} {m}"))?;
                &mut cur.as_array_mut().expect("select found an element")[i]
            }
        };
    }
    Ok(cur)
}

/// How a selector is written in a path.
fn selector(step: &Step) -> String {
    match step {
        Step::Key(k) => format!(".{k}"),
        Step::Index(i) => format!("[{i}]"),
        Step::Named(n) => format!("[{n}]"),
        Step::Layer { policy, dependency } => format!("[{}@{dependency}]", policy.as_deref().unwrap_or("")),
    }
}

/// The index of the element of `list` a `[name]` or `[Policy@dep]` selector picks; the error
/// (to follow "the scenario's ...") says what the list holds instead.
fn select(list: &Value, step: &Step) -> Result<usize, String> {
    let Some(items) = list.as_array() else {
        return Err(format!("is {}, not a list to select {} in", describe(list), selector(step)));
    };
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    match step {
        Step::Named(n) => {
            if let Some(i) = items.iter().position(|v| text(v, "name").as_deref() == Some(n)) {
                return Ok(i);
            }
            // Entries without names that each name a dependency (`fleet.pools`) or a service
            // (a policy set's `services`): by that.
            for (key, what) in [("dependency", "dependencies"), ("service", "services")] {
                let keyed = items.iter().all(|v| v.get("name").is_none() && text(v, key).is_some());
                if keyed && !items.is_empty() {
                    let named: Vec<String> = items.iter().filter_map(|v| text(v, key)).collect();
                    return items.iter().position(|v| text(v, key).as_deref() == Some(n)).ok_or_else(|| {
                        let listed: Vec<String> = named.iter().map(|d| format!("\"{d}\"")).collect();
                        format!("has no entry for {key} \"{n}\" ({what}: {})", listed.join(", "))
                    });
                }
            }
            let names: Vec<String> = items.iter().filter_map(|v| text(v, "name")).map(|s| format!("\"{s}\"")).collect();
            Err(format!("has no element named \"{n}\" (names: {})", names.join(", ")))
        }
        Step::Layer { policy, dependency } => {
            let variant = |v: &Value| match v.get("policy") {
                Some(Value::Object(o)) => o.keys().next().cloned(),
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            };
            let scoped = |v: &Value| {
                v.get("dependencies")
                    .and_then(Value::as_array)
                    .is_some_and(|d| d.iter().any(|x| x.as_str() == Some(dependency)))
            };
            let hits: Vec<usize> = (0..items.len())
                .filter(|&i| {
                    scoped(&items[i]) && policy.as_ref().is_none_or(|p| variant(&items[i]).as_ref() == Some(p))
                })
                .collect();
            let layers: Vec<String> = items
                .iter()
                .enumerate()
                .filter(|(_, v)| v.get("policy").is_some())
                .map(|(i, v)| {
                    let deps: Vec<&str> = v
                        .get("dependencies")
                        .and_then(Value::as_array)
                        .map(|d| d.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let p = variant(v).unwrap_or_default();
                    if deps.is_empty() { format!("[{i}] {p}") } else { format!("[{i}] {p}@{}", deps.join("+")) }
                })
                .collect();
            let listing = if layers.is_empty() { "no layers".to_string() } else { layers.join(", ") };
            match hits.as_slice() {
                [i] => Ok(*i),
                [] => Err(format!("has no layer {} (layers: {listing})", selector(step))),
                _ => Err(format!(
                    "has {} layers {}: select one by index (layers: {listing})",
                    hits.len(),
                    selector(step)
                )),
            }
        }
        Step::Key(_) | Step::Index(_) => unreachable!("select is called for selectors only"),
    }
}

/// The path with every `[name]` replaced by the index it selects, so two spellings of one
/// value (`policies[tiered]`, `policies[5]`) compare equal.
pub fn canonical(root: &Value, steps: &[Step]) -> Result<Vec<Step>, String> {
    let mut probe = root.clone();
    let mut out = Vec::with_capacity(steps.len());
    for (k, step) in steps.iter().enumerate() {
        out.push(match step {
            Step::Named(_) | Step::Layer { .. } => {
                let list = get_mut(&mut probe, &steps[..k])?;
                Step::Index(select(list, step)?)
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

    #[test]
    fn selects_pools_by_dependency_and_layers_by_policy_and_scope() {
        let mut v = json!({
            "fleet": {"pools": [{"dependency": "pricing", "max_connections": 10},
                                {"dependency": "inventory", "max_connections": 20}]},
            "stack": [{"policy": {"ConsecutiveBreaker": {"failures": 5}}, "dependencies": ["pricing"]},
                      {"policy": {"Timeout": {"timeout": "20ms"}}, "dependencies": ["pricing"]},
                      {"policy": {"Timeout": {"timeout": "90ms"}}, "dependencies": ["inventory"]},
                      {"policy": {"Timeout": {"timeout": "1s"}}}]});
        assert_eq!(
            parse("stack[Timeout@pricing].policy").unwrap()[1],
            Step::Layer { policy: Some("Timeout".into()), dependency: "pricing".into() }
        );
        assert!(parse("stack[Timeout@]").is_err());
        *get_mut(&mut v, &parse("fleet.pools[inventory].max_connections").unwrap()).unwrap() = json!(7);
        assert_eq!(v["fleet"]["pools"][1]["max_connections"], json!(7));
        *get_mut(&mut v, &parse("stack[Timeout@inventory].policy.Timeout.timeout").unwrap()).unwrap() = json!("5ms");
        assert_eq!(v["stack"][2]["policy"]["Timeout"]["timeout"], json!("5ms"));
        assert_eq!(v["stack"][1]["policy"]["Timeout"]["timeout"], json!("20ms"));
        // One spelling of a value, whichever selector reaches it.
        let by_layer = canonical(&v, &parse("stack[Timeout@pricing].policy").unwrap()).unwrap();
        assert_eq!(by_layer, canonical(&v, &parse("stack[1].policy").unwrap()).unwrap());
        let e = get_mut(&mut v, &parse("fleet.pools[payment].max_connections").unwrap()).unwrap_err();
        assert!(e.contains("\"payment\"") && e.contains("\"pricing\", \"inventory\""), "{e}");
        let e = get_mut(&mut v, &parse("stack[Timeout@payment]").unwrap()).unwrap_err();
        assert!(e.contains("[Timeout@payment]") && e.contains("[1] Timeout@pricing"), "{e}");
        // Two layers scoped to pricing: `[@pricing]` cannot choose.
        let e = get_mut(&mut v, &parse("stack[@pricing]").unwrap()).unwrap_err();
        assert!(e.contains("2 layers"), "{e}");
    }
}
