//! The event log (`brownout run --events FILE.jsonl`, docs/events.md): every breaker
//! transition of grocery's error-rate breaker is explained by numbers that satisfy its rule,
//! the log replays to the summary's transition counts, limits chain, and bad paths are refused.

use crate::common;

use std::path::Path;

use brownout::policy::PolicySpec;
use common::brownout;
use serde_json::Value;

fn root(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel).display().to_string()
}

/// Run `scenario` with `--events` into `dir`; the lines and `summary.json`.
fn run_with_events(scenario: &str, dir: &Path, extra: &[&str]) -> (Vec<Value>, Value) {
    let (out, ev) = (dir.join("out"), dir.join("events.jsonl"));
    let mut args = vec!["run", scenario, "--quiet", "--no-charts", "--out", out.to_str().unwrap()];
    args.extend(["--events", ev.to_str().unwrap()]);
    args.extend(extra);
    let o = brownout(&args, dir);
    assert!(o.status.code() == Some(0), "run failed: {}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&ev).unwrap();
    let lines = text.lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    let summary = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    (lines, summary)
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("{k} is a string in {v}"))
}

/// The figures of "<measure> rate X % over N [trial ]calls (>=|<) T %...".
fn rate_figures(reason: &str) -> (f64, u64, &str, f64) {
    let w: Vec<&str> = reason.split_whitespace().collect();
    let at = w.iter().position(|&x| x == "over").unwrap_or_else(|| panic!("no 'over' in {reason:?}"));
    let rate: f64 = w[at - 2].parse().unwrap();
    let calls: u64 = w[at + 1].parse().unwrap();
    let op_at = w.iter().position(|&x| x == ">=" || x == "<").unwrap();
    let thr: f64 = w[op_at + 1].trim_end_matches(',').parse().unwrap();
    (rate, calls, w[op_at], thr)
}

#[test]
fn every_error_breaker_transition_of_grocery_is_explained_by_its_numbers() {
    let scenario = root("scenarios/grocery.ron");
    let sc = brownout::scenario::load(Path::new(&scenario)).unwrap();
    let set = sc.policies.iter().find(|p| p.name == "error-breaker").unwrap();
    let PolicySpec::Resilience4j(cfg) = &set.stack[0].policy else { panic!("grocery's error-breaker is Resilience4j") };
    let dir = tempfile::tempdir().unwrap();
    let (lines, _) = run_with_events(&scenario, dir.path(), &[]);
    let mine: Vec<&Value> = lines.iter().filter(|l| s_eq(l, "policy", "error-breaker")).collect();
    let mut trips = 0;
    for l in &mine {
        assert_eq!(s(l, "what"), "breaker", "{l}");
        let reason = s(l, "reason");
        match (s(l, "from"), s(l, "to")) {
            ("closed", "open") | ("half_open", "open") => {
                let trial = s(l, "from") == "half_open";
                let (rate, calls, op, thr) = rate_figures(reason);
                assert_eq!(op, ">=", "{reason}");
                let (fail, slow) = (f64::from(cfg.failure_rate_threshold), f64::from(cfg.slow_call_rate_threshold));
                let rule = if reason.starts_with("failure rate") { fail } else { slow };
                assert_eq!(thr, rule, "{reason}: the configured threshold");
                assert!(rate >= thr, "{reason}: the rate reaches the threshold");
                let min = if trial {
                    cfg.minimum_number_of_calls.min(cfg.permitted_number_of_calls_in_half_open_state)
                } else {
                    cfg.minimum_number_of_calls
                };
                assert!(calls >= u64::from(min), "{reason}: at least the minimum number of calls ({min})");
                assert_eq!(reason.contains("trial calls"), trial, "{reason}");
                trips += u32::from(!trial);
            }
            ("open", "half_open") => {
                let secs: f64 = reason.strip_prefix("open for ").unwrap().split(' ').next().unwrap().parse().unwrap();
                assert!(secs >= cfg.wait_duration_in_open_state.ns() as f64 / 1e9, "{reason}");
            }
            ("half_open", "closed") => {
                let (rate, calls, op, thr) = rate_figures(reason);
                assert_eq!(op, "<", "{reason}");
                assert!(rate < thr && calls > 0, "{reason}");
            }
            other => panic!("unexpected transition {other:?}: {l}"),
        }
    }
    assert!(trips >= 1, "grocery's error-breaker opens at least once ({} lines)", mine.len());
}

fn s_eq(v: &Value, k: &str, want: &str) -> bool {
    v[k].as_str() == Some(want)
}

#[test]
fn the_log_replays_to_the_summary_transition_counts_and_states_chain() {
    let dir = tempfile::tempdir().unwrap();
    let (lines, summary) = run_with_events(&root("scenarios/grocery.ron"), dir.path(), &[]);
    replays(&lines, &summary);
}

/// With replications the log is replication 0's, the run `summary.json`'s `runs` describe:
/// it replays to their transition counts (the other seeds' changes are not mixed in).
#[test]
fn with_replications_the_log_replays_to_the_root_seeds_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (lines, summary) = run_with_events(&root("scenarios/breakers-demo.ron"), dir.path(), &["--replications", "3"]);
    assert_eq!(summary["replications"]["count"].as_u64(), Some(3));
    replays(&lines, &summary);
}

/// The breaker lines of each policy set replay to its `breaker.transitions` and chain.
fn replays(lines: &[Value], summary: &Value) {
    let warmup = summary["setup"]["warmup_s"].as_f64().unwrap();
    let mut sets_with_breaker = 0;
    for run in summary["runs"].as_array().unwrap() {
        let policy = run["policy"].as_str().unwrap();
        let breaker: Vec<&Value> =
            lines.iter().filter(|l| s_eq(l, "policy", policy) && s_eq(l, "what", "breaker")).collect();
        let measured = breaker.iter().filter(|l| l["t_s"].as_f64().unwrap() >= warmup).count() as u64;
        match run["breaker"]["transitions"].as_u64() {
            Some(n) => {
                sets_with_breaker += 1;
                assert_eq!(measured, n, "{policy}: logged transitions after warm-up = breaker.transitions");
            }
            None => assert!(breaker.is_empty(), "{policy} has no breaker"),
        }
        chain(&breaker, "closed");
    }
    assert!(sets_with_breaker >= 2, "grocery has breakers");
    // Time order, then policy set order.
    let order: Vec<&str> = summary["runs"].as_array().unwrap().iter().map(|r| r["policy"].as_str().unwrap()).collect();
    let key = |l: &Value| (l["t_s"].as_f64().unwrap(), order.iter().position(|p| *p == s(l, "policy")).unwrap());
    assert!(lines.windows(2).all(|w| key(&w[0]) <= key(&w[1])), "ordered by time, then policy set");
}

/// Per (policy, instance, layer, what): each `from` is the previous `to`; the first `from` is
/// `first` when given.
fn chain(lines: &[&Value], first: &str) {
    let mut last: std::collections::BTreeMap<(String, u64, u64, String), String> = Default::default();
    for l in lines {
        let k =
            (s(l, "policy").into(), l["instance"].as_u64().unwrap(), l["layer"].as_u64().unwrap(), s(l, "what").into());
        match last.get(&k) {
            Some(prev) => assert_eq!(s(l, "from"), prev, "each from is the previous to: {l}"),
            None if !first.is_empty() => assert_eq!(s(l, "from"), first, "starts {first}: {l}"),
            None => {}
        }
        assert_ne!(s(l, "from"), s(l, "to"), "a change changes something: {l}");
        last.insert(k, s(l, "to").into());
    }
}

#[test]
fn limits_chain_and_aimd_reasons_carry_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (lines, _) = run_with_events(&root("scenarios/limiters-demo.ron"), dir.path(), &[]);
    let limits: Vec<&Value> = lines.iter().filter(|l| s_eq(l, "what", "limit")).collect();
    chain(&limits, "");
    let aimd: Vec<&&Value> = limits.iter().filter(|l| s_eq(l, "policy", "aimd")).collect();
    assert!(aimd.len() >= 2, "AIMD moves its limit in the ramp");
    let (mut drops, mut rises) = (0, 0);
    for l in aimd {
        // "AIMD limit A -> B after a drop|success"
        let w: Vec<&str> = s(l, "reason").split_whitespace().collect();
        assert_eq!(&w[..2], ["AIMD", "limit"], "{l}");
        let (a, b): (f64, f64) = (w[2].replace(',', "").parse().unwrap(), w[4].replace(',', "").parse().unwrap());
        assert_eq!(a, s(l, "from").parse::<f64>().unwrap(), "{l}");
        assert_eq!(b, s(l, "to").parse::<f64>().unwrap(), "{l}");
        match w[7] {
            "drop" => {
                drops += 1;
                assert!(b < a, "a drop lowers the limit: {l}")
            }
            "success" => {
                rises += 1;
                assert_eq!(b, a + 1.0, "additive increase by one: {l}")
            }
            other => panic!("unknown cause {other}: {l}"),
        }
    }
    assert!(drops >= 1 && rises >= 1, "both directions happen ({drops} drops, {rises} rises)");
    let degraded: Vec<&Value> = lines.iter().filter(|l| s_eq(l, "what", "degraded")).collect();
    chain(&degraded, "normal");
    assert!(degraded.iter().any(|l| s(l, "reason").starts_with("p95 ")), "the bulkhead's trip names its p95");
}

#[test]
fn the_log_is_deterministic_bounded_and_changes_no_result() {
    let scenario = root("scenarios/limiters-demo.ron");
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (la, sa) = run_with_events(&scenario, a.path(), &[]);
    let (lb, _) = run_with_events(&scenario, b.path(), &[]);
    assert_eq!(la, lb, "same scenario and seed, same log");
    // Without --events the summary is the same.
    let c = tempfile::tempdir().unwrap();
    let out = c.path().join("out");
    let o = brownout(&["run", &scenario, "--quiet", "--no-charts", "--out", out.to_str().unwrap()], c.path());
    assert_eq!(o.status.code(), Some(0));
    let plain: Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(plain, sa, "keeping a log changes no figure");
    // A bound of 3 per policy set keeps 3 lines of each set that changed more, and says so.
    let d = tempfile::tempdir().unwrap();
    let ev = d.path().join("e.jsonl");
    // With charts: report.html is written only then.
    let args = ["run", &scenario, "--quiet", "--out", "o", "--events", "e.jsonl", "--events-max", "3"];
    let o = brownout(&args, d.path());
    assert_eq!(o.status.code(), Some(0));
    let kept = std::fs::read_to_string(ev).unwrap();
    let aimd = kept.lines().filter(|l| l.contains("\"policy\":\"aimd\"")).count();
    assert_eq!(aimd, 3, "AIMD changed more than 3 times; 3 are kept");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("kept the first 3 of"), "the cap is reported");
    // The reports count what the file holds and what was never written: the file has AIMD's
    // 3 lines, all shown, so nothing more is "in the event file"; the rest were dropped.
    let total: u64 = stderr
        .lines()
        .find(|l| l.contains("\"aimd\" kept the first 3 of"))
        .and_then(|l| l.split("kept the first 3 of ").nth(1)?.split(' ').next()?.parse().ok())
        .expect("the note gives AIMD's count");
    let dropped = total - 3;
    for (file, head) in [("report.md", "### aimd: "), ("report.html", "<h3>aimd: ")] {
        let report = std::fs::read_to_string(d.path().join("o").join(file)).unwrap();
        let at = report.find(head).unwrap_or_else(|| panic!("{file} has AIMD's transitions"));
        let section = &report[at..];
        let section =
            &section[..section[head.len()..].find(head.get(..3).unwrap()).map_or(section.len(), |e| e + head.len())];
        assert!(section.starts_with(&format!("{head}{total} transition(s)")), "{file}: {section}");
        assert!(!section.contains("more in the event file"), "{file} claims lines the file lacks: {section}");
        assert!(
            section.contains(&format!("{dropped} more not written: --events-max 3 per policy set")),
            "{file} says what was dropped: {section}"
        );
    }
}

#[test]
fn an_unwritable_event_path_is_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "x").unwrap();
    for bad in ["missing/events.jsonl", "file/events.jsonl", "."] {
        let args = ["run", &root("scenarios/grocery.ron"), "--quiet", "--out", "out", "--events", bad];
        let o = brownout(&args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{bad}: exit 2");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--events"), "{bad}: the message names the flag");
        assert!(!dir.path().join("out").exists(), "{bad}: no results folder");
        assert!(!dir.path().join("missing").exists(), "{bad}: no folder created");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["file"], "nothing else written");
}
