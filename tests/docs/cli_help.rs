//! The command line's help and completions: every subcommand's `--help` shows an example, and
//! the bash completion script, sourced in a real bash, offers subcommands and flags.

use std::process::Command;

fn brownout(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_brownout")).args(args).output().unwrap();
    assert!(out.status.success(), "brownout {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommand names in the "Commands:" section of `brownout --help`.
fn subcommands() -> Vec<String> {
    let help = brownout(&["--help"]);
    let section = help.split("Commands:\n").nth(1).expect("a Commands: section");
    section
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_help_has_an_example() {
    let names = subcommands();
    for must in ["run", "check", "sweep", "merge", "plot", "verify", "new", "completions", "explain"] {
        assert!(names.iter().any(|n| n == must), "{must} not in {names:?}");
    }
    for name in &names {
        for flag in ["-h", "--help"] {
            let help = brownout(&[name, flag]);
            let examples = help.split("Examples:\n").nth(1).unwrap_or_else(|| panic!("{name} {flag}: no Examples:"));
            let first = examples.lines().next().unwrap_or("").trim_start();
            assert!(first.starts_with(&format!("brownout {name}")), "{name} {flag}: example {first:?}");
        }
    }
}

/// Source the bash script and ask it for completions of `words` (the last being the word
/// under the cursor); returns the offered words.
fn bash_complete(script: &str, words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("brownout.bash");
    std::fs::write(&path, script).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let line = words.join(" ");
    let prog = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; \
         _brownout brownout '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        quoted.join(" "),
        words.len() - 1,
        line.len(),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash").arg("-c").arg(prog).output().expect("bash");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn bash_completes_subcommands_and_flags() {
    let script = brownout(&["completions", "bash"]);
    let offered = bash_complete(&script, &["brownout", ""]);
    for sub in ["run", "check", "sweep", "new", "completions", "explain"] {
        assert!(offered.iter().any(|w| w == sub), "{sub} not offered: {offered:?}");
    }
    let offered = bash_complete(&script, &["brownout", "run", "--"]);
    for flag in ["--seed", "--out", "--no-charts", "--check-determinism", "--help"] {
        assert!(offered.iter().any(|w| w == flag), "{flag} not offered: {offered:?}");
    }
    assert!(!offered.iter().any(|w| w == "--list"), "new's flag offered for run: {offered:?}");
}

#[test]
fn every_shell_gets_a_script() {
    for (shell, marker) in [
        ("bash", "complete "),
        ("zsh", "#compdef brownout"),
        ("fish", "complete -c brownout"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = brownout(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        assert!(script.contains("sweep"), "{shell}: subcommands missing");
    }
}

#[test]
fn every_out_flag_takes_the_short_o() {
    let names = subcommands();
    let with_out: Vec<&String> = names.iter().filter(|n| brownout(&[n, "--help"]).contains("--out <")).collect();
    for must in ["run", "sweep", "merge", "tune", "new", "import"] {
        assert!(with_out.iter().any(|n| *n == must), "{must} has no --out: {with_out:?}");
    }
    for name in with_out {
        assert!(brownout(&[name, "--help"]).contains("-o, --out <"), "{name}: --out without -o");
    }
    // And it is the same flag: a run writes where -o says.
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.ron");
    std::fs::write(
        &s,
        r#"Scenario(name: "o", horizon: "2s",
            fleet: (workers: (slots: 4), pool: (max_connections: 4, acquire_timeout: "1s")),
            classes: [(name: "a", arrivals: Poisson(rate_per_s: 5), deadline: "1s")],
            dependency: (latency: Constant("5ms")), policies: [(name: "p")])"#,
    )
    .unwrap();
    let out = dir.path().join("here");
    brownout(&["run", s.to_str().unwrap(), "-o", out.to_str().unwrap(), "--no-charts", "-q"]);
    assert!(out.join("summary.json").is_file(), "run -o wrote nothing to {}", out.display());
}
