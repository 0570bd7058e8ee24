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
