//! `TokenBucket` in a whole run, against hand-counted admissions.

use std::path::Path;

use brownout::model::{Model, RunOptions};
use brownout::runner::run_all;
use brownout::scenario::{parse, validate};

#[test]
fn a_burst_of_two_then_one_per_tenth_of_a_second() {
    // 10 tokens a second, 2 held: of the three requests at 0 ms two pass, the third is a 429;
    // the one at 50 ms finds half a token (429); the one at 100 ms finds one (0.5 + 0.5).
    let text = r#"Scenario(
        name: "bucket", horizon: "1s",
        fleet: (workers: (slots: 10), pool: (max_connections: 10, acquire_timeout: "1s")),
        classes: [(name: "api", arrivals: Scripted(times: ["0ms", "0ms", "0ms", "50ms", "100ms"]), deadline: "1s")],
        dependency: (latency: Constant("10ms")),
        policies: [(name: "p", stack: [(policy: TokenBucket((rate_per_s: 10, burst: 2)))])],
    )"#;
    let s = parse(Path::new("inline.ron"), text).unwrap_or_else(|e| panic!("{e}"));
    validate(&s).unwrap_or_else(|e| panic!("{e:?}"));
    let model = Model::build(&s, s.seed, Path::new(".")).unwrap();
    let r = run_all(&model, RunOptions::default(), false).unwrap().summary.runs.remove(0);
    let c = &r.classes[0];
    assert_eq!((c.outcomes.ok, c.outcomes.rejected), (3, 2));
}
