//! Memory O(in flight) (issue 21, target 3): a scenario whose requests each start hour-long
//! wait timers and end long before them must not keep every timer of the horizon queued.
//! The events pending at once are counted (a count of work, never a time or an RSS).

use std::path::Path;

use brownout::model::{Model, RunOptions};
use brownout::runner::run_all;
use brownout::scenario::load;

#[test]
fn hour_long_wait_timers_do_not_pile_up_over_the_horizon() {
    // M/M/4 at 300 requests/s through a limiter queue with a one-hour max wait, on a worker
    // pool and deadline of one hour: every request starts hour-long timers and is done in
    // ~15 ms, so about 5 are in flight; over a 3,000 s horizon, shorter than the hour, a run
    // that never swept would hold over 450,000 timers at the end (about half the requests
    // wait for a permit, each wait starting one), far above the bound below.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/verify");
    let mut s = load(&dir.join("mmc-limiter.ron")).unwrap();
    s.horizon = brownout::scenario::Dur::secs(3000);
    let model = Model::build(&s, s.seed, &dir).unwrap();
    let r = run_all(&model, RunOptions::default(), false).unwrap();
    let run = &r.runs[0];
    assert!(run.requests > 890_000, "{} requests", run.requests);
    // The sweep starts above 65,536 fixed-delay events and keeps at most twice what it kept.
    assert!(
        run.peak_pending < 100_000,
        "{} events pending at the peak for {} requests",
        run.peak_pending,
        run.requests
    );
}
