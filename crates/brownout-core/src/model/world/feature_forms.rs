//! Every compiled form of the world (`features.rs`) that may run a shipped scenario reports
//! it byte for byte as the general form does: summaries, window rows and event hashes, for
//! every policy set of every scenario in `scenarios/` and `scenarios/bench/`.

use std::path::{Path, PathBuf};

use super::*;
use crate::units::Dur;

/// Simulated time each run is cut to (the bench models run 1,111 s): enough for thousands
/// of requests, for queues to fill and timeouts to fire, within a test's time.
const CUT: Time = 60 * crate::engine::SECOND;

fn shipped() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("bench")] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "ron") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Run `policy` of `m` in form `F` with the recorder its phases ask for.
fn run_in<F: Features>(m: &Model, policy: usize, opts: RunOptions) -> RunResult {
    let run = if crate::scenario::phases_of(&m.scenario).is_empty() {
        run_as::<Recorder, F>(RunInput::plain(m, policy, opts))
    } else {
        run_as::<Recorders, F>(RunInput::plain(m, policy, opts))
    };
    run.unwrap().0
}

/// Runs `policy` of `m` in form `F` and in the general form; false when `F` may not run it.
fn agrees<F: Features>(m: &Model, policy: usize, what: &str) -> bool {
    let opts = RunOptions::new().with_timeseries(true);
    if !F::covers(Uses::of(m, policy, &opts, false)) {
        return false;
    }
    let (a, b) = (run_in::<F>(m, policy, opts), run_in::<General>(m, policy, opts));
    assert!(a.requests > 0, "{what}: no request");
    assert_eq!(format!("{:?}", a.summary), format!("{:?}", b.summary), "{what}: summaries differ");
    assert_eq!(format!("{:?}", a.phases), format!("{:?}", b.phases), "{what}: phase summaries differ");
    assert_eq!(format!("{:?}", a.rows), format!("{:?}", b.rows), "{what}: window rows differ");
    assert_eq!(a.trace_hash, b.trace_hash, "{what}: event traces differ");
    true
}

/// `s` cut to `CUT`, or shorter for a fleet of more than ten instances (each carries the
/// same load, so a fleet of 1,000 cut to 0.6 s runs as many requests as one of 10 in 60 s).
fn cut(s: &mut crate::scenario::Scenario) {
    let cut = CUT / (u64::from(s.fleet.instances) / 10).max(1);
    if s.horizon.ns() > cut && s.phases.iter().all(|p| p.end.ns() <= cut) {
        s.horizon = Dur(cut);
        s.warmup = Dur(s.warmup.ns().min(cut / 4));
    }
}

#[test]
fn every_form_a_shipped_scenario_may_take_reports_what_the_general_form_reports() {
    let (mut compared, mut runs) = (Vec::new(), 0);
    // (with phases, the form `run` takes) of every run that takes a lean form.
    let mut taken = std::collections::BTreeSet::new();
    let mut taken_by = Vec::new();
    for path in shipped() {
        let mut s = match crate::scenario::load(&path) {
            Ok(s) => s,
            // A build without the `import` feature refuses an `Import` layer at load
            // (tests/io covers that refusal); such a scenario has no run to compare.
            Err(e) if !cfg!(feature = "import") && e.to_string().contains("`import` feature") => continue,
            Err(e) => panic!("{e}"),
        };
        cut(&mut s);
        let m = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
        let phases = !crate::scenario::phases_of(&s).is_empty();
        for p in 0..s.policies.len() {
            runs += 1;
            let what = format!("{} / {}", path.display(), s.policies[p].name);
            // Each compiled form but the general one (the reference), when it covers the run.
            let lean = agrees::<Lean<false, false>>(&m, p, &what);
            let stack = agrees::<Lean<true, false>>(&m, p, &what);
            let extras = agrees::<Lean<true, true>>(&m, p, &what);
            let form = Form::leanest(Uses::of(&m, p, &RunOptions::new().with_timeseries(true), false));
            // The form `run` takes is one of those just compared.
            assert_eq!(form != Form::General, lean || stack || extras, "{what}");
            if form != Form::General {
                taken.insert((phases, form));
                taken_by.push((what.clone(), form));
                compared.push(what);
            }
        }
    }
    // The lean forms are what the bench models and most shipped scenarios take, with the
    // phase recorders and without.
    let names = compared.join("\n");
    assert!(compared.len() >= 40, "only {} of {runs} runs take a lean form:\n{names}", compared.len());
    for phases in [false, true] {
        for form in [Form::Lean, Form::LeanStack, Form::LeanStackExtras] {
            assert!(taken.contains(&(phases, form)), "no run with phases {phases} takes {form:?}:\n{names}");
        }
    }
    for (must, form) in [
        ("bench/mmc.ron", Form::Lean),
        ("bench/timeout-race.ron", Form::LeanStack),
        ("bench/timeout-race-bulkhead.ron", Form::LeanStack),
        ("scenarios/grocery.ron", Form::LeanStackExtras),
        ("bench/fleet-1000.ron", Form::LeanStackExtras),
    ] {
        let forms: Vec<Form> = taken_by.iter().filter(|(w, _)| w.contains(must)).map(|(_, f)| *f).collect();
        assert!(!forms.is_empty() && forms.iter().all(|f| *f == form), "{must} takes {forms:?}, not {form:?}");
    }
}

#[test]
fn a_form_without_a_feature_the_run_uses_is_not_chosen() {
    // grocery uses the catalogue and business costs: the lean form with extras, no leaner.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/grocery.ron");
    let s = crate::scenario::load(&path).unwrap();
    let m = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    let u = Uses::of(&m, 0, &RunOptions::new(), false);
    assert!(u.extras && !Lean::<true, false>::covers(u) && !Lean::<false, false>::covers(u));
    assert!(Lean::<true, true>::covers(u) && General::covers(u));
    assert_eq!(Form::leanest(u), Form::LeanStackExtras);
    // slow-replica has replicas: no lean form keeps them.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/slow-replica.ron");
    let s = crate::scenario::load(&path).unwrap();
    let m = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    let u = Uses::of(&m, 0, &RunOptions::new(), false);
    assert!(u.replicas && !Lean::<true, true>::covers(u));
    assert_eq!(Form::leanest(u), Form::General);
    // Records, first events or an event log need the trace, whatever else the run uses.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/bench/mmc.ron");
    let s = crate::scenario::load(&path).unwrap();
    let m = Model::build(&s, s.seed, path.parent().unwrap()).unwrap();
    assert!(Lean::<false, false>::covers(Uses::of(&m, 0, &RunOptions::new(), false)));
    for opts in [RunOptions::new().with_trace_limit(1), RunOptions::new().with_events(1)] {
        assert!(!Lean::<false, false>::covers(Uses::of(&m, 0, &opts, false)));
    }
    assert!(!Lean::<false, false>::covers(Uses::of(&m, 0, &RunOptions::new(), true)));
    assert_eq!(
        Uses::of(&m, 0, &RunOptions::new().with_events(1), true),
        Uses { stack: false, graph: false, replicas: false, extras: false, trace: true }
    );
}
