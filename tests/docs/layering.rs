//! ARCHITECTURE.md's layering invariants, checked on the source text (as rust-analyzer checks
//! its own): the engine crate depends on nothing of the domain, the core compiles no charts and
//! no command line, there are no cycles between top-level modules, and only the edges touch files.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The code of a file without `//` comments (doc comments may name other modules freely).
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().enumerate().map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("").to_string())).collect()
}

/// The engine crate's source may use only std, itself and rand (proptest in its unit tests),
/// and never names a brownout crate.
fn engine_violations(engine_src: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for file in rust_files(engine_src) {
        for (n, line) in code_lines(&file) {
            if line.contains("brownout") {
                bad.push(format!("{}:{n}: {}", file.display(), line.trim()));
            }
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix("use ") {
                let krate = rest.split("::").next().unwrap_or("").trim_start_matches('{');
                if !["std", "core", "alloc", "crate", "super", "self", "rand", "proptest"].contains(&krate) {
                    bad.push(format!("{}:{n}: outside crate `{krate}`", file.display()));
                }
            }
        }
    }
    bad
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_engine_imports_nothing_of_the_domain() {
    let bad = engine_violations(&root().join("crates/brownout-engine/src"));
    assert!(bad.is_empty(), "the engine reaches outside itself:\n{}", bad.join("\n"));
}

#[test]
fn the_engine_check_catches_a_domain_import() {
    // The checker itself must be able to fail: plant domain imports in a copy of the engine.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "//! brownout_core in a comment is fine\nuse crate::Time;\n").unwrap();
    std::fs::write(dir.path().join("queue.rs"), "use brownout_core::model::Model;\nuse serde::Serialize;\n").unwrap();
    let bad = engine_violations(dir.path());
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad.iter().all(|b| b.contains("queue.rs")), "{bad:#?}");
}

/// The normal (non-dev) dependencies of a workspace crate, transitively, as cargo resolves
/// them from Cargo.lock: the real graph, not a reading of Cargo.toml.
fn dependency_tree(krate: &str) -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--locked", "-e", "normal", "--prefix", "none", "--format", "{p}", "-p", krate])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut names: Vec<String> = text.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_engine_crate_depends_on_nothing_of_the_domain() {
    let deps = dependency_tree("brownout-engine");
    let own: Vec<_> = deps.iter().filter(|d| d.starts_with("brownout") && *d != "brownout-engine").collect();
    assert!(own.is_empty(), "the engine depends on {own:?}");
    let heavy = ["serde", "ron", "rayon", "plotters", "clap", "hdrhistogram"];
    let found: Vec<_> = deps.iter().filter(|d| heavy.contains(&d.as_str())).collect();
    assert!(found.is_empty(), "the engine pulls in {found:?}");
    assert!(deps.iter().any(|d| d == "rand"), "the tree was read: {deps:?}");
}

#[test]
fn an_embedder_of_the_core_compiles_no_charts_and_no_command_line() {
    let deps = dependency_tree("brownout-core");
    assert!(deps.iter().any(|d| d == "brownout-engine"), "the tree was read: {deps:?}");
    let edge = ["brownout-output", "brownout", "plotters", "dejavu", "image", "clap", "indicatif", "tempfile"];
    let found: Vec<_> = deps.iter().filter(|d| edge.contains(&d.as_str())).collect();
    assert!(found.is_empty(), "brownout-core pulls in {found:?}");
}

/// The source folders of the workspace: the binary's and each crate's.
fn source_roots(root: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = vec![root.join("src")].into_iter().filter(|p| p.is_dir()).collect();
    if let Ok(crates) = std::fs::read_dir(root.join("crates")) {
        let mut more: Vec<PathBuf> = crates.map(|e| e.unwrap().path().join("src")).filter(|p| p.is_dir()).collect();
        more.sort();
        roots.extend(more);
    }
    roots
}

/// Places in the workspace's sources (outside the allowed folders, given relative to the
/// repository root) whose code contains one of `needles`.
fn uses_outside(root: &Path, needles: &[&str], allowed: &[&str]) -> Vec<String> {
    let mut bad = Vec::new();
    for file in source_roots(root).iter().flat_map(|src| rust_files(src)) {
        let rel = file.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if allowed.iter().any(|a| rel.starts_with(a)) {
            continue;
        }
        for (n, line) in code_lines(&file) {
            if let Some(needle) = needles.iter().find(|k| line.contains(*k)) {
                bad.push(format!("{rel}:{n}: `{needle}`"));
            }
        }
    }
    bad
}

/// ARCHITECTURE.md: only `brownout-output` (and the binary's `cli`) writes files; only `cli` prints,
/// reads the environment or the wall clock; simulation code has no hash-ordered maps and no
/// unnamed or global generators.
const EDGES: &[(&[&str], &[&str])] = &[
    (
        &["fs::write", "File::create", "create_dir", "fs::rename", "remove_file", "remove_dir", "persist("],
        &["crates/brownout-output/", "src/cli/", "src/main.rs"],
    ),
    // Options that may open for writing; `fsread` opens user-named files for reading only, with
    // O_NONBLOCK, which takes them.
    (&["OpenOptions"], &["crates/brownout-output/", "src/cli/", "src/main.rs", "crates/brownout-core/src/fsread.rs"]),
    (
        &["println!", "eprintln!", "print!(", "eprint!(", "std::io::stdout", "std::io::stderr"],
        &["src/cli/", "src/main.rs"],
    ),
    (&["std::env", "Instant::now", "SystemTime"], &["src/cli/", "src/main.rs"]),
    (&["HashMap", "HashSet", "thread_rng", "rand::rng()", "StdRng", "SmallRng", "from_entropy", "from_os_rng"], &[]),
];

#[test]
fn only_the_edges_write_print_or_read_the_clock() {
    let bad: Vec<String> = EDGES.iter().flat_map(|(needles, allowed)| uses_outside(root(), needles, allowed)).collect();
    assert!(bad.is_empty(), "edge work outside the edges:\n{}", bad.join("\n"));
}

#[test]
fn the_edge_check_catches_a_write_in_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("crates/brownout-core/src");
    let out = dir.path().join("crates/brownout-output/src");
    std::fs::create_dir_all(src.join("model")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("lib.rs"), "fn w() { std::fs::write(\"a\", \"b\").unwrap(); }\n").unwrap();
    std::fs::write(
        src.join("model/mod.rs"),
        "// std::fs::write in a comment\nfn w() { std::fs::write(\"a\", \"b\").unwrap(); }\n",
    )
    .unwrap();
    let bad = uses_outside(dir.path(), EDGES[0].0, EDGES[0].1);
    assert_eq!(bad, vec!["crates/brownout-core/src/model/mod.rs:2: `fs::write`".to_string()]);
}

/// Pairs of top-level modules of the crate whose sources are in `src` that name each other
/// (`crate::a` in b and `crate::b` in a), unit tests left out.
/// The top-level modules named after `crate::` in `code`: `crate::a::x`, and every first
/// segment of a group, `crate::{a, b::{c, d}, e as f}`, however it is spread over lines.
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = code[i + 7..].trim_start();
        let Some(group) = rest.strip_prefix('{') else {
            out.push(ident(rest));
            continue;
        };
        // The group's top-level items: split on commas at nesting depth 0.
        let (mut depth, mut item_start) = (0usize, 0usize);
        for (j, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.push(ident(group[item_start..j].trim_start()));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(ident(group[item_start..j].trim_start()));
                    item_start = j + 1;
                }
                _ => {}
            }
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// The cycles between the top-level modules of `src`, of any length: each strongly connected
/// set of two or more modules of the "names a path in" graph, sorted.
fn module_cycles(src: &Path) -> Vec<Vec<String>> {
    let mut mods: Vec<String> = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            (p.is_dir() || (name != "lib" && name != "main")).then_some(name)
        })
        .collect();
    mods.sort();
    mods.dedup();
    let uses = |m: &str| -> std::collections::BTreeSet<usize> {
        let dir = src.join(m);
        let files = if dir.is_dir() { rust_files(&dir) } else { vec![src.join(format!("{m}.rs"))] };
        let tests_only = test_module_files(&files);
        let mut out = std::collections::BTreeSet::new();
        for f in files.iter().filter(|f| !tests_only.contains(*f)) {
            let code: Vec<String> =
                code_lines(f).into_iter().map(|(_, l)| l).take_while(|l| !l.contains("#[cfg(test)]")).collect();
            for name in crate_paths(&code.join("\n")) {
                if let Some(k) = mods.iter().position(|x| *x == name).filter(|_| name != m) {
                    out.insert(k);
                }
            }
        }
        out
    };
    let deps: Vec<_> = mods.iter().map(|m| uses(m)).collect();
    // Reachability by a depth-first search from each module (a few dozen modules): two modules
    // are in one cycle when each reaches the other.
    let reach: Vec<std::collections::BTreeSet<usize>> = (0..mods.len())
        .map(|a| {
            let (mut seen, mut stack) = (std::collections::BTreeSet::new(), vec![a]);
            while let Some(x) = stack.pop() {
                for &y in &deps[x] {
                    if seen.insert(y) {
                        stack.push(y);
                    }
                }
            }
            seen
        })
        .collect();
    let mut cycles: Vec<Vec<String>> = Vec::new();
    let mut placed = vec![false; mods.len()];
    for a in 0..mods.len() {
        if placed[a] || !reach[a].contains(&a) {
            continue;
        }
        let members: Vec<usize> = (0..mods.len()).filter(|&b| reach[a].contains(&b) && reach[b].contains(&a)).collect();
        for &b in &members {
            placed[b] = true;
        }
        cycles.push(members.iter().map(|&b| mods[b].clone()).collect());
    }
    cycles
}

/// The files of `files` that hold a module declared under `#[cfg(test)]` (`#[cfg(test)] mod
/// end_to_end;` beside it): unit tests, which the cycle check leaves out as it leaves out the
/// `#[cfg(test)]` part of a file.
fn test_module_files(files: &[PathBuf]) -> std::collections::BTreeSet<PathBuf> {
    let mut out = std::collections::BTreeSet::new();
    for f in files {
        let lines = code_lines(f);
        for w in lines.windows(2) {
            let name = w[1].1.trim().strip_prefix("mod ").and_then(|r| r.strip_suffix(';'));
            if let (true, Some(name)) = (w[0].1.trim() == "#[cfg(test)]", name) {
                let dir = if f.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs") {
                    f.parent().unwrap().to_path_buf()
                } else {
                    f.with_extension("")
                };
                out.insert(dir.join(format!("{name}.rs")));
                // A test module with submodules: its folder, every file under it.
                out.extend(files.iter().filter(|g| g.starts_with(dir.join(name))).cloned());
            }
        }
    }
    out
}

/// The cycles issue 16 is to cut; no new one may appear meanwhile.
const KNOWN_CYCLES: &[&[&str]] = &[];

#[test]
fn no_new_module_cycles() {
    let new: Vec<_> = source_roots(root())
        .iter()
        .flat_map(|src| module_cycles(src))
        .filter(|c| !KNOWN_CYCLES.iter().any(|k| k.iter().copied().eq(c.iter().map(String::as_str))))
        .collect();
    assert!(new.is_empty(), "new cycles between top-level modules: {new:?}");
}

#[test]
fn the_cycle_check_finds_a_planted_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("engine")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod engine; pub mod runner;\n").unwrap();
    std::fs::write(src.join("engine/mod.rs"), "use crate::runner::X;\n#[cfg(test)]\nuse crate::other;\n").unwrap();
    std::fs::write(src.join("runner.rs"), "pub struct X; fn f() { crate::engine::y(); }\n").unwrap();
    assert_eq!(module_cycles(&src), vec![vec!["engine".to_string(), "runner".to_string()]]);
}

#[test]
fn a_test_module_in_a_file_of_its_own_is_left_out_of_the_cycle_check() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("engine")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod engine; pub mod runner;\n").unwrap();
    std::fs::write(src.join("engine/end_to_end.rs"), "fn t() { crate::runner::f(); }\n").unwrap();
    std::fs::write(src.join("runner.rs"), "pub fn f() { crate::engine::y(); }\n").unwrap();
    std::fs::write(src.join("engine/mod.rs"), "#[cfg(test)]\nmod end_to_end;\npub fn y() {}\n").unwrap();
    assert!(module_cycles(&src).is_empty());
    // The same file compiled in every build is a dependency like any other.
    std::fs::write(src.join("engine/mod.rs"), "mod end_to_end;\npub fn y() {}\n").unwrap();
    assert_eq!(module_cycles(&src), vec![vec!["engine".to_string(), "runner".to_string()]]);
}

#[test]
fn a_test_module_with_submodules_is_left_out_whole() {
    // engine/end_to_end/{mod, sweeps}.rs under #[cfg(test)]: the submodule's imports are test
    // code too.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("engine/end_to_end")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod engine; pub mod runner;\n").unwrap();
    std::fs::write(src.join("engine/end_to_end/mod.rs"), "mod sweeps;\n").unwrap();
    std::fs::write(src.join("engine/end_to_end/sweeps.rs"), "fn t() { crate::runner::f(); }\n").unwrap();
    std::fs::write(src.join("runner.rs"), "pub fn f() { crate::engine::y(); }\n").unwrap();
    std::fs::write(src.join("engine/mod.rs"), "#[cfg(test)]\nmod end_to_end;\npub fn y() {}\n").unwrap();
    assert!(module_cycles(&src).is_empty());
}

#[test]
fn the_cycle_check_reads_grouped_imports_and_longer_cycles() {
    // charts -> html through a group spread over lines, html -> run -> charts: one cycle of
    // three that no pair shows.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod charts; pub mod html; pub mod run; pub mod leaf;\n").unwrap();
    std::fs::write(src.join("charts.rs"), "use crate::{\n    leaf::Y,\n    html::{self, X},\n};\n").unwrap();
    std::fs::write(src.join("html.rs"), "use crate::{leaf, run as r};\n").unwrap();
    std::fs::write(src.join("run.rs"), "fn f() { crate::charts::draw(); }\n").unwrap();
    std::fs::write(src.join("leaf.rs"), "pub struct Y;\n").unwrap();
    let three = vec!["charts".to_string(), "html".to_string(), "run".to_string()];
    assert_eq!(module_cycles(&src), vec![three]);
    // Cut one edge and nothing is left.
    std::fs::write(src.join("run.rs"), "fn f() { crate::leaf::g(); }\n").unwrap();
    assert!(module_cycles(&src).is_empty());
}

/// Longest source file, in lines: a module longer than this does several things (issue 37).
const MAX_LINES: usize = 650;

/// Files still over [`MAX_LINES`], each to be split; the test fails when one of them is short
/// enough, so the list only shrinks.
const TOO_LONG_YET: &[&str] = &[];

#[test]
fn no_source_file_is_over_650_lines() {
    let mut long = Vec::new();
    for file in source_roots(root()).iter().flat_map(|src| rust_files(src)) {
        let rel = file.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        let n = std::fs::read_to_string(&file).unwrap().lines().count();
        let listed = TOO_LONG_YET.contains(&rel.as_str());
        if n > MAX_LINES && !listed {
            long.push(format!("{rel}: {n} lines"));
        }
        if n <= MAX_LINES && listed {
            long.push(format!("{rel}: {n} lines, take it off TOO_LONG_YET"));
        }
    }
    for listed in TOO_LONG_YET {
        if !root().join(listed).exists() {
            long.push(format!("{listed}: no such file, take it off TOO_LONG_YET"));
        }
    }
    assert!(long.is_empty(), "over {MAX_LINES} lines:\n{}", long.join("\n"));
}
