//! ARCHITECTURE.md's layering invariants, checked on the source text (as rust-analyzer checks
//! its own): the engine imports nothing of the domain, and only the edges touch files.

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

/// Every `crate::NAME` path in the engine must name the engine itself, and no `super::` may
/// climb out of it; its only outside crates are std and rand (and proptest in its unit tests).
fn engine_violations(root: &Path) -> Vec<String> {
    let engine = root.join("src/engine");
    let mut bad = Vec::new();
    for file in rust_files(&engine) {
        let rel = file.strip_prefix(&engine).unwrap();
        // How many `super::` a path may climb and still be inside the engine.
        let depth = rel.components().count() - 1 + usize::from(rel.file_name().unwrap() != "mod.rs");
        for (n, line) in code_lines(&file) {
            for (i, _) in line.match_indices("crate::") {
                let rest = &line[i + "crate::".len()..];
                if !rest.starts_with("engine") {
                    bad.push(format!("{}:{n}: {}", file.display(), line.trim()));
                }
            }
            if let Some(i) = line.find("super::") {
                let climbs = line[i..].matches("super::").count();
                if climbs > depth && !line.contains("use super::*") {
                    bad.push(format!("{}:{n}: {}", file.display(), line.trim()));
                }
            }
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix("use ") {
                let krate = rest.split("::").next().unwrap_or("").trim_start_matches('{');
                if !["std", "core", "alloc", "crate", "super", "self", "rand", "rand_distr", "proptest"]
                    .contains(&krate)
                {
                    bad.push(format!("{}:{n}: outside crate `{krate}`", file.display()));
                }
            }
        }
    }
    bad
}

#[test]
fn the_engine_imports_nothing_of_the_domain() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bad = engine_violations(root);
    assert!(bad.is_empty(), "the engine reaches outside itself:\n{}", bad.join("\n"));
}

#[test]
fn the_engine_check_catches_a_domain_import() {
    // The checker itself must be able to fail: plant a domain import in a copy of the engine.
    let dir = tempfile::tempdir().unwrap();
    let engine = dir.path().join("src/engine");
    std::fs::create_dir_all(&engine).unwrap();
    std::fs::write(engine.join("mod.rs"), "//! crate::model in a comment is fine\nuse super::Time;\n").unwrap();
    std::fs::write(engine.join("queue.rs"), "use crate::model::Model;\nfn f() { super::super::policy::x(); }\n")
        .unwrap();
    let bad = engine_violations(dir.path());
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].contains("mod.rs:2"), "{bad:#?}");
    assert!(bad.iter().any(|b| b.contains("queue.rs:1")));
    assert!(bad.iter().any(|b| b.contains("queue.rs:2")));
}

/// Places in `src/` (outside the allowed folders) whose code contains one of `needles`.
fn uses_outside(root: &Path, needles: &[&str], allowed: &[&str]) -> Vec<String> {
    let src = root.join("src");
    let mut bad = Vec::new();
    for file in rust_files(&src) {
        let rel = file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        if allowed.iter().any(|a| rel.starts_with(a)) {
            continue;
        }
        for (n, line) in code_lines(&file) {
            if let Some(needle) = needles.iter().find(|k| line.contains(*k)) {
                bad.push(format!("src/{rel}:{n}: `{needle}`"));
            }
        }
    }
    bad
}

/// ARCHITECTURE.md: only `output` (and the binary's `cli`) writes files; only `cli` prints,
/// reads the environment or the wall clock; simulation code has no hash-ordered maps and no
/// unnamed or global generators.
const EDGES: &[(&[&str], &[&str])] = &[
    (
        &[
            "fs::write",
            "File::create",
            "create_dir",
            "OpenOptions",
            "fs::rename",
            "remove_file",
            "remove_dir",
            "persist(",
        ],
        &["output/", "cli/", "main.rs"],
    ),
    (&["println!", "eprintln!", "print!(", "eprint!(", "std::io::stdout", "std::io::stderr"], &["cli/", "main.rs"]),
    (&["std::env", "Instant::now", "SystemTime"], &["cli/", "main.rs"]),
    (&["HashMap", "HashSet", "thread_rng", "rand::rng()", "StdRng", "SmallRng", "from_entropy", "from_os_rng"], &[]),
];

#[test]
fn only_the_edges_write_print_or_read_the_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bad: Vec<String> = EDGES.iter().flat_map(|(needles, allowed)| uses_outside(root, needles, allowed)).collect();
    assert!(bad.is_empty(), "edge work outside the edges:\n{}", bad.join("\n"));
}

#[test]
fn the_edge_check_catches_a_write_in_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("model")).unwrap();
    std::fs::create_dir_all(src.join("output")).unwrap();
    std::fs::write(src.join("output/mod.rs"), "fn w() { std::fs::write(\"a\", \"b\").unwrap(); }\n").unwrap();
    std::fs::write(
        src.join("model/mod.rs"),
        "// std::fs::write in a comment\nfn w() { std::fs::write(\"a\", \"b\").unwrap(); }\n",
    )
    .unwrap();
    let bad = uses_outside(dir.path(), EDGES[0].0, EDGES[0].1);
    assert_eq!(bad, vec!["src/model/mod.rs:2: `fs::write`".to_string()]);
}

/// Pairs of top-level modules that name each other (`crate::a` in b and `crate::b` in a),
/// unit tests left out.
fn module_cycles(root: &Path) -> Vec<(String, String)> {
    let src = root.join("src");
    let mut mods: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            (p.is_dir() || (name != "lib" && name != "main")).then_some(name)
        })
        .collect();
    mods.sort();
    mods.dedup();
    let uses = |m: &str| -> std::collections::BTreeSet<String> {
        let dir = src.join(m);
        let files = if dir.is_dir() { rust_files(&dir) } else { vec![src.join(format!("{m}.rs"))] };
        let mut out = std::collections::BTreeSet::new();
        for f in files {
            for (_, line) in code_lines(&f).into_iter().take_while(|(_, l)| !l.contains("#[cfg(test)]")) {
                for (i, _) in line.match_indices("crate::") {
                    let name: String = line[i + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if name != m && mods.contains(&name) {
                        out.insert(name);
                    }
                }
            }
        }
        out
    };
    let deps: Vec<_> = mods.iter().map(|m| (m.clone(), uses(m))).collect();
    let mut cycles = Vec::new();
    for (a, da) in &deps {
        for (b, db) in &deps {
            if a < b && da.contains(b) && db.contains(a) {
                cycles.push((a.clone(), b.clone()));
            }
        }
    }
    cycles
}

/// The cycles issue 16 is to cut; no new one may appear meanwhile.
const KNOWN_CYCLES: &[(&str, &str)] = &[("report", "scenario")];

#[test]
fn no_new_module_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let new: Vec<_> =
        module_cycles(root).into_iter().filter(|(a, b)| !KNOWN_CYCLES.contains(&(a.as_str(), b.as_str()))).collect();
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
    assert_eq!(module_cycles(dir.path()), vec![("engine".to_string(), "runner".to_string())]);
}
