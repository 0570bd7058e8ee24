//! Linked axes: an axis whose value at each point is an expression over other axes' names
//! (`link: "1 - authorize_share"`), evaluated with `evalexpr`. Links may refer to other
//! linked axes; they are evaluated in dependency order and a cycle is refused.

use std::collections::BTreeMap;

use evalexpr::{Context, DefaultNumericTypes, EvalexprError, EvalexprResult, Node, Value};

/// The axes a link reads, by name: an ordered map, as everywhere in simulation code.
struct Vars(BTreeMap<String, Value<DefaultNumericTypes>>);

impl Context for Vars {
    type NumericTypes = DefaultNumericTypes;
    fn get_value(&self, identifier: &str) -> Option<&Value<DefaultNumericTypes>> {
        self.0.get(identifier)
    }
    fn call_function(
        &self,
        identifier: &str,
        _: &Value<DefaultNumericTypes>,
    ) -> EvalexprResult<Value<DefaultNumericTypes>, DefaultNumericTypes> {
        Err(EvalexprError::FunctionIdentifierNotFound(identifier.to_string()))
    }
    fn are_builtin_functions_disabled(&self) -> bool {
        false
    }
    fn set_builtin_functions_disabled(&mut self, _: bool) -> EvalexprResult<(), DefaultNumericTypes> {
        Err(EvalexprError::BuiltinFunctionsCannotBeDisabled)
    }
}

/// Longest link read, in characters: a link is a short formula (`1 - authorize_share`).
const MAX_LINK_CHARS: usize = 500;
/// Deepest nesting of parentheses in a link. evalexpr parses and evaluates by recursion, so
/// 100,000 nested parentheses overflow the stack; scenario files are bounded the same way.
const MAX_LINK_DEPTH: usize = 32;

/// Refuse a link too long or too deeply nested to parse safely, before evalexpr sees it.
fn check_size(text: &str) -> Result<(), String> {
    let chars = text.chars().count();
    if chars > MAX_LINK_CHARS {
        return Err(format!("a link of {chars} characters; at most {MAX_LINK_CHARS} are read"));
    }
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_LINK_DEPTH {
        return Err(format!("a link nested {deepest} parentheses deep; at most {MAX_LINK_DEPTH} are read"));
    }
    Ok(())
}

/// A parsed link: the axis it belongs to, its expression and the axes it reads.
pub(crate) struct Link {
    /// Index of the linked axis in the spec's `axes`.
    pub axis: usize,
    tree: Node<DefaultNumericTypes>,
    /// Indices of the axes the expression names.
    pub reads: Vec<usize>,
}

/// Parse every axis's link (`links[i]` is axis `i`'s, if any) and order them so each comes
/// after the linked axes it reads. `Err((axis index, message))` for a parse error, an unknown
/// name, a self-reference or a cycle.
pub(crate) fn parse_all(names: &[&str], links: &[Option<&str>]) -> Result<Vec<Link>, (usize, String)> {
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut parsed = Vec::new();
    for (i, text) in links.iter().enumerate() {
        let Some(text) = text else { continue };
        check_size(text).map_err(|m| (i, m))?;
        let tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(text)
            .map_err(|e| (i, format!("link \"{text}\": {e}")))?;
        let mut reads = Vec::new();
        for v in tree.iter_variable_identifiers() {
            let &j = index
                .get(v)
                .ok_or_else(|| (i, format!("link \"{text}\": unknown axis \"{v}\" (axes: {})", names.join(", "))))?;
            if j == i {
                return Err((i, format!("link \"{text}\" refers to its own axis \"{v}\"")));
            }
            if !reads.contains(&j) {
                reads.push(j);
            }
        }
        parsed.push(Link { axis: i, tree, reads });
    }
    order(parsed, names)
}

/// Topological order of the links; the first axis found on a cycle is blamed.
fn order(mut todo: Vec<Link>, names: &[&str]) -> Result<Vec<Link>, (usize, String)> {
    let linked: Vec<usize> = todo.iter().map(|l| l.axis).collect();
    let mut done: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    while !todo.is_empty() {
        let ready = todo.iter().position(|l| l.reads.iter().all(|j| !linked.contains(j) || done.contains(j)));
        let Some(k) = ready else {
            let l = &todo[0];
            let cycle: Vec<&str> = todo.iter().map(|l| names[l.axis]).collect();
            return Err((l.axis, format!("links form a cycle among axes {}", cycle.join(", "))));
        };
        let l = todo.remove(k);
        done.push(l.axis);
        out.push(l);
    }
    Ok(out)
}

/// Fill in the linked axes' values of `point` (in axis order; linked entries are overwritten).
pub(crate) fn apply(links: &[Link], names: &[&str], point: &mut [f64]) -> Result<(), (usize, String)> {
    for l in links {
        let ctx = Vars(l.reads.iter().map(|&j| (names[j].to_string(), Value::Float(point[j]))).collect());
        let x = l.tree.eval_number_with_context(&ctx).map_err(|e| (l.axis, format!("link: {e}")))?;
        if !x.is_finite() {
            return Err((l.axis, format!("link gives {x}, not a finite number")));
        }
        // 12 significant digits: `1 - 0.7` is 0.3, not 0.30000000000000004, in every table.
        point[l.axis] = format!("{x:.11e}").parse().unwrap_or(x);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_in_dependency_order() {
        let names = ["a", "b", "c"];
        // c reads b, which reads a: c = 2 * (1 - a).
        let links = parse_all(&names, &[None, Some("1 - a"), Some("2 * b")]).unwrap();
        let mut p = [0.25, 0.0, 0.0];
        apply(&links, &names, &mut p).unwrap();
        assert_eq!(p, [0.25, 0.75, 1.5]);
    }

    #[test]
    fn float_noise_is_rounded_away() {
        let names = ["a", "b"];
        let links = parse_all(&names, &[None, Some("1 - a")]).unwrap();
        let mut p = [0.7, 0.0];
        apply(&links, &names, &mut p).unwrap();
        assert_eq!(p[1], 0.3);
    }

    #[test]
    fn deep_or_long_links_are_refused_before_parsing() {
        let names = ["a", "b"];
        // 100,000 nested parentheses overflowed the stack inside evalexpr.
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        let e = parse_all(&names, &[None, Some(&deep)]).err().unwrap();
        assert_eq!(e.0, 1);
        assert!(e.1.contains("200001 characters; at most 500"), "{}", e.1);
        // Short but deep: 33 levels (67 characters) is one more than the 32 allowed.
        let e = parse_all(&names, &[None, Some(&format!("{}a{}", "(".repeat(33), ")".repeat(33)))]).err().unwrap();
        assert!(e.1.contains("nested 33 parentheses deep; at most 32"), "{}", e.1);
        let ok = format!("{}a{}", "(".repeat(32), ")".repeat(32));
        assert!(parse_all(&names, &[None, Some(&ok)]).is_ok());
    }

    #[test]
    fn self_reference_cycle_and_unknown_names_are_refused() {
        let names = ["a", "b"];
        let e = parse_all(&names, &[None, Some("b + 1")]).err().unwrap();
        assert_eq!(e.0, 1);
        assert!(e.1.contains("its own axis"), "{}", e.1);
        let e = parse_all(&names, &[Some("b"), Some("a")]).err().unwrap();
        assert!(e.1.contains("cycle"), "{}", e.1);
        let e = parse_all(&names, &[None, Some("1 - x")]).err().unwrap();
        assert!(e.1.contains("unknown axis \"x\""), "{}", e.1);
    }
}
