//! The world's two recorder forms ([`Record`]) must report the same run: a world without phases
//! records straight into a `Recorder`, and one with phases through `Recorders`, which without
//! phase spans must be the very same recorder behind a fan-out that reaches nobody.

use std::path::Path;

use super::*;

/// A shipped scenario with its latency drift removed (a drift derives phases) and its
/// dependency made slow from the start, so breakers open, limits move and queues fill.
fn without_phases(file: &str, slow: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let text: String = text.lines().filter(|l| !l.trim_start().starts_with("drift:")).collect::<Vec<_>>().join("\n");
    let text = text.replace(r#"median: "200ms""#, &format!(r#"median: "{slow}""#));
    let s = crate::scenario::parse(&path, &text).unwrap();
    assert!(crate::scenario::phases_of(&s).is_empty(), "{file}: still has phases");
    Model::build(&s, 1, path.parent().unwrap()).unwrap()
}

fn both_forms_agree(m: &Model) {
    let opts = RunOptions::new().with_timeseries(true);
    let mut changed = 0;
    for p in 0..m.scenario.policies.len() {
        let (a, _) = run_as::<Recorder, General>(RunInput::plain(m, p, opts)).unwrap();
        let (b, _) = run_as::<Recorders, General>(RunInput::plain(m, p, opts)).unwrap();
        let name = &m.scenario.policies[p].name;
        assert!(a.requests > 1000, "{name}: too short a run to compare");
        assert_eq!(format!("{:?}", a.summary), format!("{:?}", b.summary), "{name}: summaries differ");
        assert_eq!(format!("{:?}", a.rows), format!("{:?}", b.rows), "{name}: window rows differ");
        assert_eq!(a.trace_hash, b.trace_hash, "{name}: event traces differ");
        assert!(a.phases.is_empty() && b.phases.is_empty());
        // The recorders' rarer paths are taken: a breaker changed state or a limit moved.
        let opened = a.summary.breaker.as_ref().is_some_and(|b| b.transitions > 0);
        let moved = a.summary.limit.as_ref().is_some_and(|l| l.min < l.max);
        changed += usize::from(opened || moved);
    }
    assert!(changed > 0, "no policy set exercised the breaker or limit records");
}

#[test]
fn breakers_record_alike_in_both_forms() {
    both_forms_agree(&without_phases("breakers-demo.ron", "1500ms"));
}

#[test]
fn limiters_and_bulkheads_record_alike_in_both_forms() {
    both_forms_agree(&without_phases("limiters-demo.ron", "1500ms"));
}

#[test]
#[should_panic(expected = "a lone Recorder has no phases")]
fn a_run_with_phases_cannot_take_the_lone_recorder() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/breakers-demo.ron");
    let s = crate::scenario::load(&path).unwrap();
    let m = Model::build(&s, 1, path.parent().unwrap()).unwrap();
    let _ = World::<Recorder>::new(&m, 0, false);
}
