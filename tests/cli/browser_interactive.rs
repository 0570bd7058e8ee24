//! `report.html`'s interactive panels driven in a real headless Chromium (issue 35):
//! `tests/browser/interact.js` (playwright-core from npm, pinned in `tests/browser/package.json`)
//! moves the mouse over a panel, unticks a policy set, clicks its legend entry and drags a time
//! range; this test judges what the page showed against the run's own `timeseries.csv`.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::brownout;
use serde_json::Value;

/// One class at 8/s to a dependency answering in 10 ms, slowed by 300 ms during [2 s, 3 s):
/// `direct` waits it out (p95 10 + 300 = 310 ms in the slow windows), `tight` times every call
/// out at 5 ms, so it answers nothing and every request takes 5 ms (`common::slowed_scenario`).
fn scenario() -> String {
    common::slowed_scenario("interactive", "", "")
}

fn browser() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| std::env::split_paths(&path).map(|d| d.join(b)).find(|p| p.is_file()))
}

/// The `column` cell of `policy`'s row for `class` at window start `t` in `timeseries.csv`.
fn cell(csv_text: &str, policy: &str, class: &str, t: f64, column: &str) -> String {
    let mut r = csv::Reader::from_reader(csv_text.as_bytes());
    let head = r.headers().unwrap().clone();
    let at = |name: &str| head.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    let (p, c, ts, col) = (at("policy"), at("class"), at("t_s"), at(column));
    let row = r
        .records()
        .map(Result::unwrap)
        .find(|x| &x[p] == policy && &x[c] == class && x[ts].parse::<f64>().unwrap() == t)
        .unwrap_or_else(|| panic!("no row for {policy}/{class} at {t}"));
    row[col].to_string()
}

/// Ignored by default so that a machine without Chromium or Node shows the test as ignored,
/// with this reason; `.ci/run` installs both (and `npm ci` in tests/browser) and runs it with
/// `--ignored`, where anything missing is a failure.
#[test]
#[ignore = "needs Chromium (installed by .ci/run) and playwright-core (npm ci in tests/browser)"]
fn hover_toggle_and_zoom_show_the_runs_series_in_chromium() {
    let chromium = browser().expect("no chromium on PATH (apt-get install chromium)");
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    assert!(
        driver.join("node_modules/playwright-core/package.json").is_file(),
        "playwright-core is not installed (npm ci in tests/browser)"
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("s.ron"), scenario()).unwrap();
    let run = brownout(&["run", "s.ron", "--out", "run", "--quiet"], dir);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let csv_text = std::fs::read_to_string(dir.join("run/timeseries.csv")).unwrap();
    // Hover the p95 panel at the window starting at 2.5 s; zoom from 1 s to 3.5 s.
    let (class, column, t) = ("api", "latency_p95_ms", 2.5);
    let o = Command::new("node")
        .args(["interact.js", dir.join("run/report.html").to_str().unwrap(), class, column, "2.5", "1", "3.5"])
        .current_dir(&driver)
        .env("CHROMIUM", &chromium)
        .output()
        .expect("node runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["errors"], Value::Array(vec![]), "script errors on the page");
    assert_eq!(v["requests"], Value::Array(vec![]), "the page asked for something beyond its own file");
    // Six per-class panels and five fleet-wide ones.
    assert_eq!(v["panels"], 11);

    // Hover: the legend's row per policy set shows that set's value for the window, as
    // timeseries.csv has it ("–" where the cell is empty: no answer, no latency).
    let legend = v["hover"]["legend"].as_array().unwrap();
    assert_eq!(legend[0]["value"], "2.5", "the hovered window's start");
    for (k, policy) in ["direct", "tight"].iter().enumerate() {
        let row = &legend[k + 1];
        assert_eq!(row["label"], *policy);
        let want = cell(&csv_text, policy, class, t, column);
        let shown = row["value"].as_str().unwrap();
        if want.is_empty() {
            assert_eq!(shown, "–", "{policy}: no value in the CSV");
        } else {
            assert_eq!(shown.parse::<f64>().unwrap(), want.parse::<f64>().unwrap(), "{policy}");
        }
    }
    // By hand: 10 ms plus the 300 ms slow mode for `direct`; every `tight` request fails at
    // its 5 ms timeout, and the column is the latency of every finished request.
    assert_eq!(legend[1]["value"], "310");
    assert_eq!(legend[2]["value"], "5");
    // Every panel's cursor follows to the same window (index 5: windows start every 0.5 s).
    assert!(v["hover"]["synced"].as_array().unwrap().iter().all(|i| *i == 5), "{}", v["hover"]);

    // Toggle: unticking `tight` hides its series in every panel and greys its legend entry;
    // its legend entry in one panel brings it back everywhere and ticks the box again.
    assert_eq!(v["toggle"]["policy"], 1);
    assert!(v["toggle"]["shown"].as_array().unwrap().iter().all(|s| *s == false), "{}", v["toggle"]);
    let legend = v["toggle"]["legend"].as_array().unwrap();
    assert_eq!((&legend[1]["off"], &legend[2]["off"]), (&Value::Bool(false), &Value::Bool(true)));
    assert!(v["toggle"]["back"].as_array().unwrap().iter().all(|s| *s == true), "{}", v["toggle"]);
    assert_eq!(v["toggle"]["checkbox"], true);

    // Zoom: before, every panel spans the first to the last window start (0 to 4.5 s); after
    // the drag, every panel shows 1 s to 3.5 s (to within a pixel's worth of time).
    for r in v["zoom"]["before"].as_array().unwrap() {
        assert_eq!((r[0].as_f64().unwrap(), r[1].as_f64().unwrap()), (0.0, 4.5));
    }
    for r in v["zoom"]["after"].as_array().unwrap() {
        let (lo, hi) = (r[0].as_f64().unwrap(), r[1].as_f64().unwrap());
        assert!((lo - 1.0).abs() < 0.02 && (hi - 3.5).abs() < 0.02, "zoomed to {lo}..{hi}");
    }
}
