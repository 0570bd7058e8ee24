//! A class's call plan (`calls: [..]`, docs/graphs.md) read from the span tree: the CLIENT
//! spans under each of the route's SERVER spans, in order of their start. Calls that overlap
//! in time ran together, a `Parallel` group (join `All`: the SERVER span waited for them);
//! calls that follow one another are steps in sequence. The plan is the most common shape
//! over the route's requests, made of the calls that more than half of them make.

use std::collections::BTreeMap;

/// One CLIENT span under a request, as the plan reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Call {
    /// `startTimeUnixNano`.
    pub start_ns: u64,
    /// `endTimeUnixNano`.
    pub end_ns: u64,
    /// The dependency, an index into `Calibrated::dependencies`.
    pub dependency: usize,
    /// Its `status.code` is ERROR.
    pub error: bool,
}

/// One request of a route: whether its SERVER span ended in ERROR, and its calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Request {
    /// The SERVER span's `status.code` is ERROR.
    pub error: bool,
    /// The CLIENT spans linked to it.
    pub calls: Vec<Call>,
}

/// A call of a plan: the n-th call to a dependency within a request.
type Key = (usize, usize);

/// One call of a class's plan, with the spans that decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCall {
    /// The dependency, an index into `Calibrated::dependencies`.
    pub dependency: usize,
    /// Which call to that dependency within a request (0: the first).
    pub nth: usize,
    /// Written `Optional` (its failure degrades the answer), else `Call` (required).
    pub optional: bool,
    /// The route's requests that make this call.
    pub present: u64,
    /// Of those, the requests in which this call ended in ERROR.
    pub failed: u64,
    /// Of those, the requests whose SERVER span still did not end in ERROR: the failure was
    /// tolerated.
    pub tolerated: u64,
}

/// A class's call plan read from its requests' spans.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The class.
    pub class: String,
    /// The route's requests.
    pub requests: u64,
    /// The steps in order: one call, or several that run in parallel (join `All`). Empty:
    /// no call is made by more than half of the requests.
    pub steps: Vec<Vec<PlanCall>>,
    /// The requests whose calls (of those in the plan) have exactly the plan's shape.
    pub matching: u64,
}

impl Plan {
    /// The plan as the scenario's `calls:` value, on one line, `names` naming the
    /// dependencies.
    pub fn ron(&self, names: &[String]) -> String {
        let call = |c: &PlanCall| {
            let name = super::super::write::ron_str(&names[c.dependency]);
            if c.optional { format!("Optional(dependency: {name})") } else { format!("Call({name})") }
        };
        let steps: Vec<String> = self
            .steps
            .iter()
            .map(|s| match s.as_slice() {
                [one] => call(one),
                many => {
                    format!("Parallel(join: All, calls: [{}])", many.iter().map(call).collect::<Vec<_>>().join(", "))
                }
            })
            .collect();
        format!("[{}]", steps.join(", "))
    }
}

/// A request's calls as groups of keys: sorted by start (then end, dependency), a call that
/// starts before every earlier call of the current group has ended joins it, else it starts
/// the next group. Each group's keys sorted; with each key, whether that call was an ERROR.
fn groups(calls: &[Call]) -> (Vec<Vec<Key>>, Vec<(Key, bool)>) {
    let mut sorted = calls.to_vec();
    sorted.sort_by_key(|c| (c.start_ns, c.end_ns, c.dependency));
    let mut nth: BTreeMap<usize, usize> = BTreeMap::new();
    let mut out: Vec<Vec<Key>> = Vec::new();
    let mut errors = Vec::new();
    let mut until = 0u64;
    for c in sorted {
        let n = nth.entry(c.dependency).or_default();
        let key = (c.dependency, *n);
        *n += 1;
        match out.last_mut() {
            Some(group) if c.start_ns < until => {
                group.push(key);
                until = until.max(c.end_ns);
            }
            _ => {
                out.push(vec![key]);
                until = c.end_ns;
            }
        }
        errors.push((key, c.error));
    }
    out.iter_mut().for_each(|g| g.sort_unstable());
    (out, errors)
}

/// The call as messages name it: `"inventory"`, or `call 2 to "inventory"` for a later one.
fn call_name(names: &[String], (d, n): Key) -> String {
    if n == 0 { format!("{:?}", names[d]) } else { format!("call {} to {:?}", n + 1, names[d]) }
}

/// The plan of `class` from its `requests`, with a warning in `warnings` for each call that
/// only part of the requests make and for requests that call in another shape.
///
/// A call made by only some requests (a cache hit, a branch) cannot be conditional in a plan:
/// made by more than half, it is written as a call every request makes (the scenario then
/// makes more calls to it than the traces show, and the warning says how many); made by at
/// most half, it is left out. Either way it is no `Optional`: that word says what a failure
/// of the call does to the answer, which presence does not show. The spans show it where the
/// call failed: when more than half of the requests whose call to it ended in ERROR still
/// answered without ERROR, the failure was tolerated (a degraded answer), and the call is
/// `Optional`; otherwise (failures failed the request, or it never failed) it is a `Call`.
pub(super) fn plan(class: &str, requests: &[Request], names: &[String], warnings: &mut Vec<String>) -> Plan {
    let n = requests.len() as u64;
    let mut seen: BTreeMap<Key, (u64, u64, u64)> = BTreeMap::new();
    let mut shapes: Vec<Vec<Vec<Key>>> = Vec::with_capacity(requests.len());
    for r in requests {
        let (g, errors) = groups(&r.calls);
        for (key, error) in errors {
            let e = seen.entry(key).or_default();
            e.0 += 1;
            if error {
                e.1 += 1;
                if !r.error {
                    e.2 += 1;
                }
            }
        }
        shapes.push(g);
    }
    let kept: BTreeMap<Key, (u64, u64, u64)> =
        seen.iter().filter(|(_, v)| v.0 * 2 > n).map(|(k, v)| (*k, *v)).collect();
    for (&key, &(present, ..)) in &seen {
        let who = call_name(names, key);
        if present * 2 <= n {
            warnings.push(format!(
                "class {class:?}: {who} is called in {present} of {n} requests (at most half): left out of its plan"
            ));
        } else if present < n {
            warnings.push(format!(
                "class {class:?}: {who} is called in {present} of {n} requests: written as a call every request makes \
                 (a plan has no conditional call), so the scenario makes {} more calls to it than the traces show",
                n - present
            ));
        }
    }
    // Each request's shape over the kept calls; the plan is the most common shape among the
    // requests that make every kept call (else among all), the first in order on a tie.
    let mut count: BTreeMap<Vec<Vec<Key>>, (u64, bool)> = BTreeMap::new();
    for g in shapes {
        let projected: Vec<Vec<Key>> = g
            .into_iter()
            .map(|grp| grp.into_iter().filter(|k| kept.contains_key(k)).collect::<Vec<_>>())
            .filter(|grp| !grp.is_empty())
            .collect();
        let whole = projected.iter().map(Vec::len).sum::<usize>() == kept.len();
        count.entry(projected).or_insert((0, whole)).0 += 1;
    }
    let any_whole = count.values().any(|v| v.1);
    let mut best: Option<(&Vec<Vec<Key>>, u64)> = None;
    for (shape, &(c, whole)) in &count {
        if (whole || !any_whole) && best.is_none_or(|b| c > b.1) {
            best = Some((shape, c));
        }
    }
    let (shape, matching) = best.map(|(s, c)| (s.clone(), c)).unwrap_or_default();
    let other: u64 = count.iter().filter(|(s, v)| v.1 && **s != shape).map(|(_, v)| v.0).sum();
    if other > 0 {
        warnings.push(format!(
            "class {class:?}: {other} of {n} requests make the plan's calls in another order or grouping \
             (the plan is the most common one, {matching} requests)"
        ));
    }
    let steps = shape
        .iter()
        .map(|grp| {
            grp.iter()
                .map(|&key| {
                    let (present, failed, tolerated) = kept[&key];
                    PlanCall {
                        dependency: key.0,
                        nth: key.1,
                        optional: failed > 0 && tolerated * 2 > failed,
                        present,
                        failed,
                        tolerated,
                    }
                })
                .collect()
        })
        .collect();
    Plan { class: class.to_string(), requests: n, steps, matching }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(start: u64, end: u64, dependency: usize, error: bool) -> Call {
        Call { start_ns: start, end_ns: end, dependency, error }
    }

    fn names() -> Vec<String> {
        ["a", "b", "c"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn overlapping_calls_are_a_parallel_group_and_following_ones_a_sequence() {
        // a [0, 10) and b [2, 8) overlap; c starts at 10, when both have ended.
        let r =
            Request { error: false, calls: vec![call(10, 15, 2, false), call(2, 8, 1, false), call(0, 10, 0, false)] };
        let mut w = Vec::new();
        let p = plan("x", &[r.clone(), r], &names(), &mut w);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(p.ron(&names()), r#"[Parallel(join: All, calls: [Call("a"), Call("b")]), Call("c")]"#);
        assert_eq!(p.matching, 2);
    }

    #[test]
    fn a_call_in_part_of_the_requests_is_warned_kept_above_half_and_dropped_at_half() {
        let with = |calls: Vec<Call>| Request { error: false, calls };
        // a in 3 of 4 requests (kept), b in 2 of 4 (dropped: at most half).
        let rs = vec![
            with(vec![call(0, 5, 0, false), call(5, 9, 1, false)]),
            with(vec![call(0, 5, 0, false), call(5, 9, 1, false)]),
            with(vec![call(0, 5, 0, false)]),
            with(vec![]),
        ];
        let mut w = Vec::new();
        let p = plan("x", &rs, &names(), &mut w);
        assert_eq!(p.ron(&names()), r#"[Call("a")]"#);
        assert_eq!(p.matching, 3);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("\"a\" is called in 3 of 4 requests: written as a call every request makes"), "{w:?}");
        assert!(w[0].contains("makes 1 more calls to it"), "{w:?}");
        assert!(w[1].contains("\"b\" is called in 2 of 4 requests (at most half): left out"), "{w:?}");
    }

    #[test]
    fn a_call_whose_failures_the_requests_survive_is_optional() {
        // a fails in 3 requests, 2 of which still answer without ERROR: tolerated, Optional.
        // b fails in 2 requests, each of which ends in ERROR: required.
        let r = |a_err: bool, b_err: bool, error: bool| Request {
            error,
            calls: vec![call(0, 5, 0, a_err), call(5, 9, 1, b_err)],
        };
        let rs = vec![
            r(true, false, false),
            r(true, false, false),
            r(true, true, true),
            r(false, true, true),
            r(false, false, false),
        ];
        let mut w = Vec::new();
        let p = plan("x", &rs, &names(), &mut w);
        assert_eq!(p.ron(&names()), r#"[Optional(dependency: "a"), Call("b")]"#);
        assert_eq!((p.steps[0][0].failed, p.steps[0][0].tolerated), (3, 2));
        assert_eq!((p.steps[1][0].failed, p.steps[1][0].tolerated), (2, 0));
    }

    #[test]
    fn a_second_call_to_the_same_dependency_is_its_own_step() {
        let r = Request { error: false, calls: vec![call(0, 5, 0, false), call(5, 9, 0, false)] };
        let mut w = Vec::new();
        let p = plan("x", &[r], &names(), &mut w);
        assert_eq!(p.ron(&names()), r#"[Call("a"), Call("a")]"#);
        assert_eq!(p.steps[1][0].nth, 1);
    }
}
