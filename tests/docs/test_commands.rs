//! Every `cargo test ... --test NAME` that ARCHITECTURE.md and docs/ tell a reader to run
//! names a test binary that exists: ARCHITECTURE.md's metric recipe once said `--test golden`
//! after the goldens had moved into the `docs` binary, and cargo answers that with "no test
//! target named `golden`". README.md and BENCHMARKS.md quote older commands as history.

use std::path::Path;

/// The test binaries cargo knows: `tests/NAME/main.rs` or `tests/NAME.rs`.
fn is_test_binary(root: &Path, name: &str) -> bool {
    root.join("tests").join(name).join("main.rs").is_file() || root.join("tests").join(format!("{name}.rs")).is_file()
}

#[test]
fn every_test_binary_the_docs_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("ARCHITECTURE.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    let mut wrong = Vec::new();
    let mut seen = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("--test ") {
                rest = &rest[at + "--test ".len()..];
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                // Empty, or a placeholder such as `AREA`.
                if name.is_empty() || name.chars().all(|c| !c.is_ascii_lowercase()) {
                    continue;
                }
                seen += 1;
                if !is_test_binary(root, &name) {
                    wrong.push(format!("{}:{}: --test {name}", file.strip_prefix(root).unwrap().display(), n + 1));
                }
            }
        }
    }
    assert!(seen > 5, "found only {seen} `--test NAME` in the docs: is the scan broken?");
    assert!(wrong.is_empty(), "no such test binary:\n{}", wrong.join("\n"));
}
