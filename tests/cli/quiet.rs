//! `--quiet` silences the progress display and nothing else: `run`'s results table and its
//! expectations' lines are printed as without it, and `--help` says so (the option once read
//! as if it silenced the results too).

use std::path::Path;

use crate::common::brownout;

/// `text` with its runs of white space (clap's line breaks) made one space.
fn flat(text: &[u8]) -> String {
    String::from_utf8_lossy(text).split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn quiet_drops_the_progress_display_and_keeps_the_results_as_help_says() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/limiters-demo.ron");
    let scenario = scenario.to_str().unwrap();
    let mut stdout = Vec::new();
    for (out, quiet) in [("quiet", true), ("shown", false)] {
        let mut args = vec!["run", scenario, "--no-charts", "--out", out];
        if quiet {
            args.push("--quiet");
        }
        let o = brownout(&args, dir.path());
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
        // The folder's name is the one difference ("results in quiet" / "results in shown").
        stdout.push(String::from_utf8_lossy(&o.stdout).replace(out, "OUT"));
    }
    assert!(stdout[0].contains("results in OUT"), "{}", stdout[0]);
    assert_eq!(stdout[0], stdout[1], "--quiet changed what run prints as its results");
    for command in ["run", "sweep", "verify"] {
        let help = flat(&brownout(&[command, "--help"], dir.path()).stdout);
        let want = "silences the display of";
        assert!(help.contains(want), "{command} --help does not say what --quiet keeps: {help}");
    }
}
