//! ARCHITECTURE.md's "Public API" section, checked on the source text: the runtime state
//! machines of the policies are not reachable by an embedder (only through
//! `brownout_core::unstable`, which may change without notice), and no public function answers
//! an error as a bare `String`.
//!
//! The public surface is read as rustdoc would walk it: from each crate's `lib.rs` along
//! `pub mod` declarations (`pub(crate) mod` and private modules end the walk; `unstable` is
//! skipped on purpose), collecting the items declared `pub` at the top of each module file and
//! the `pub fn`s of the public types' `impl` blocks and of public traits.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One public item: its module path (`policy::limiter::vegas`), its kind (`struct`, `fn`,
/// `use`, ...), its name (the whole text for a `use`), and for functions the signature up to
/// the body, with the type it is a method of.
#[derive(Debug, Clone)]
struct Item {
    module: String,
    kind: String,
    name: String,
    signature: String,
    owner: Option<String>,
    at: String,
}

/// The file of module `name` declared in `file` (`name.rs` or `name/mod.rs` beside it, or in
/// the folder named after `file` when `file` is not a `mod.rs`/`lib.rs`).
fn module_file(file: &Path, name: &str) -> Option<PathBuf> {
    let dir = file.parent()?;
    let stem = file.file_stem()?.to_str()?;
    let base = if stem == "mod" || stem == "lib" || stem == "main" { dir.to_path_buf() } else { dir.join(stem) };
    [base.join(format!("{name}.rs")), base.join(name).join("mod.rs")].into_iter().find(|p| p.is_file())
}

/// The code of a line without its `//` comment.
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// The word after `prefix` in `line` (an identifier).
fn ident_after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(prefix)?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The signature that starts at line `i` of `lines`: up to the `{` of its body or its `;`.
fn signature(lines: &[&str], i: usize) -> String {
    let mut sig = String::new();
    for l in &lines[i..] {
        let c = code(l);
        if let Some(end) = c.find(['{', ';']) {
            sig.push_str(&c[..end]);
            break;
        }
        sig.push_str(c);
        sig.push(' ');
    }
    sig.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every public item reachable from the module in `file`, whose path is `module`.
fn walk(file: &Path, module: &str, out: &mut Vec<Item>) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let lines: Vec<&str> = text.lines().collect();
    // The type or trait whose top-level block we are in, and whether it is public.
    let mut block: Option<(String, bool)> = None;
    let mut test_only = false;
    let at = |n: usize| format!("{}:{}", file.strip_prefix(root()).unwrap_or(file).display(), n + 1);
    for (n, raw) in lines.iter().enumerate() {
        let line = code(raw);
        if !line.starts_with(' ') && !line.trim().is_empty() {
            block = None;
            if line.starts_with("#[cfg(test)]") {
                // A test module or test-only item follows; nothing in it is API.
                test_only = true;
                continue;
            }
            if test_only && !line.starts_with("#[") {
                test_only = false;
                continue;
            }
        }
        if let Some(name) = ident_after(line, "pub mod ") {
            if name != "unstable" && line.trim_end().ends_with(';') {
                let child = module_file(file, name).unwrap_or_else(|| panic!("{}: no file for `{name}`", at(n)));
                let path = if module.is_empty() { name.to_string() } else { format!("{module}::{name}") };
                walk(&child, &path, out);
            }
            continue;
        }
        if line.starts_with("pub use ") {
            let sig = signature(&lines, n);
            out.push(Item {
                module: module.into(),
                kind: "use".into(),
                name: sig.clone(),
                signature: sig,
                owner: None,
                at: at(n),
            });
            continue;
        }
        for kind in ["struct", "enum", "trait", "type", "const", "static", "fn"] {
            if let Some(name) = ident_after(line, &format!("pub {kind} ")) {
                out.push(Item {
                    module: module.into(),
                    kind: kind.into(),
                    name: name.into(),
                    signature: signature(&lines, n),
                    owner: None,
                    at: at(n),
                });
                if kind == "trait" {
                    block = Some((name.into(), true));
                }
            }
        }
        if line.starts_with("impl") {
            // An inherent `impl<T> Name<T> {` adds its `pub fn`s to `Name`; the methods of a
            // trait impl (`impl Trait for Name`) are the trait's, read at the trait.
            let head = signature(&lines, n);
            block = Some((head_type(&head), !head.contains(" for ")));
        }
        let t = line.trim_start();
        if let Some((owner, methods_count)) = &block
            && line.starts_with("    ")
            && !line.starts_with("     ")
            && *methods_count
        {
            let is_trait_fn = out.iter().any(|i| i.kind == "trait" && &i.name == owner && i.module == module);
            let name = if is_trait_fn {
                ident_after(t, "fn ").or_else(|| ident_after(t, "pub fn "))
            } else {
                ident_after(t, "pub fn ")
            };
            if let Some(name) = name {
                out.push(Item {
                    module: module.into(),
                    kind: "method".into(),
                    name: name.into(),
                    signature: signature(&lines, n),
                    owner: Some(owner.clone()),
                    at: at(n),
                });
            }
        }
    }
}

/// The type of an inherent `impl` head: `impl<A: X> Adaptive<A>` -> `Adaptive`.
fn head_type(head: &str) -> String {
    let mut rest = head.trim_start_matches("impl").trim_start();
    if rest.starts_with('<') {
        let mut depth = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                rest = &rest[i + 1..];
                break;
            }
        }
    }
    let ty = rest.trim().split(['<', ' ']).next().unwrap_or("");
    ty.rsplit("::").next().unwrap_or(ty).to_string()
}

/// The public items of every workspace crate (the facade's `src/lib.rs` and each
/// `crates/*/src/lib.rs`), keeping only the methods of types that are themselves public.
fn public_items(root: &Path) -> Vec<Item> {
    let mut libs = vec![root.join("src/lib.rs")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src/lib.rs"))
        .filter(|p| p.is_file())
        .collect();
    crates.sort();
    libs.extend(crates);
    let mut all = Vec::new();
    for lib in libs {
        let krate = if lib == root.join("src/lib.rs") {
            "brownout".to_string()
        } else {
            lib.parent().unwrap().parent().unwrap().file_name().unwrap().to_string_lossy().replace('-', "_")
        };
        let mut items = Vec::new();
        walk(&lib, "", &mut items);
        let types: Vec<(String, String)> = items
            .iter()
            .filter(|i| ["struct", "enum", "trait", "type"].contains(&i.kind.as_str()))
            .map(|i| (i.module.clone(), i.name.clone()))
            .collect();
        items.retain(|i| i.owner.as_ref().is_none_or(|o| types.contains(&(i.module.clone(), o.clone()))));
        for i in &mut items {
            i.module = if i.module.is_empty() { krate.clone() } else { format!("{krate}::{}", i.module) };
        }
        all.extend(items);
    }
    all
}

/// The runtime state machines of the policies: a scenario never names them (it names their
/// configs), and an embedder reaches them only through `brownout_core::unstable`.
const RUNTIME: &[(&str, &str)] = &[
    ("brownout_core::policy::limiter::vegas", "Vegas"),
    ("brownout_core::policy::limiter::vegas", "log10_root"),
    ("brownout_core::policy::limiter::gradient2", "Gradient2"),
    ("brownout_core::policy::limiter::envoy_gradient", "EnvoyGradient"),
    ("brownout_core::policy::limiter::gate", "Adaptive"),
    ("brownout_core::policy::limiter::gate", "LimitAlgorithm"),
    ("brownout_core::policy::limiter::gate", "Sample"),
    ("brownout_core::policy::breaker::inflight", "InFlight"),
    ("brownout_core::policy::breaker::trials", "Trials"),
    ("brownout_core::policy::breaker::window", "Window"),
    ("brownout_core::policy::breaker::window", "Sample"),
    ("brownout_core::policy::breaker::window", "Counts"),
    // The world's runtime parts: a class's last answers, the fallback hand-out, the compiled
    // dependency model (benches reach it through `unstable::dependency`), the reason-text
    // number formats.
    ("brownout_core::model::fallback", "LastAnswers"),
    ("brownout_core::model::fallback", "give"),
    ("brownout_core::model::fallback", "recorded_as"),
    ("brownout_core::model::dependency", "DependencyModel"),
    ("brownout_core::model::dependency", "CallPlan"),
    ("brownout_core::policy::why", "num"),
    ("brownout_core::policy::why", "dur"),
];

/// The runtime items of `RUNTIME` that `items` make public: declared there, or re-exported by
/// a `pub use` that names the item's module and the item.
fn reachable_runtime(items: &[Item]) -> Vec<String> {
    let mut found = Vec::new();
    for (module, name) in RUNTIME {
        let leaf = module.rsplit("::").next().unwrap();
        for i in items {
            let declared = i.kind != "use" && i.kind != "method" && i.module == *module && i.name == *name;
            let words: Vec<&str> = i.name.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
            let reexported = i.kind == "use" && words.contains(&leaf) && words.contains(name);
            if declared || reexported {
                found.push(format!("{module}::{name} at {}", i.at));
            }
        }
    }
    found
}

#[test]
fn no_runtime_policy_struct_is_public_outside_unstable() {
    let items = public_items(root());
    assert!(
        items.iter().any(|i| i.module == "brownout_core::policy::limiter::vegas" && i.name == "VegasConfig"),
        "the walk reaches the policy configs"
    );
    let found = reachable_runtime(&items);
    assert!(found.is_empty(), "runtime state machines reachable by an embedder:\n{}", found.join("\n"));
}

/// The error type of a signature's own `-> Result<T, E>`, if it has one: not a callback's
/// among its parameters, nor a bound's in its `where` clause (the caller writes those).
fn result_error(sig: &str) -> Option<String> {
    let sig = sig.split(" where ").next().unwrap_or(sig);
    let params_end = {
        let open = sig.find('(')?;
        let mut depth = 0;
        let mut end = None;
        for (i, c) in sig[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        end?
    };
    let start = params_end + sig[params_end..].find("-> Result<")? + "-> Result<".len();
    let mut depth = 1;
    let mut comma = None;
    for (i, c) in sig[start..].char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return comma.map(|k: usize| sig[start + k + 1..start + i].trim().to_string());
                }
            }
            ',' if depth == 1 => comma = Some(i),
            _ => {}
        }
    }
    None
}

/// The public functions and methods of `items` whose error is a bare `String`.
fn string_errors(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter(|i| i.kind == "fn" || i.kind == "method")
        .filter(|i| result_error(&i.signature).is_some_and(|e| e == "String" || e == "std::string::String"))
        .map(|i| {
            let owner = i.owner.as_ref().map(|o| format!("{o}::")).unwrap_or_default();
            format!("{}::{owner}{} at {}", i.module, i.name, i.at)
        })
        .collect()
}

#[test]
fn the_signature_reader_finds_a_string_error() {
    // The checker itself must be able to fail: a pub fn, a method of a public type over two
    // lines and a trait method answering `String` are found; a private one and a typed one are not.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("inner")).unwrap();
    std::fs::create_dir_all(dir.path().join("crates")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod inner;\nmod hidden;\npub fn a() -> Result<(), String> { Ok(()) }\n")
        .unwrap();
    std::fs::write(
        src.join("inner/mod.rs"),
        "pub struct T;\nimpl T {\n    pub fn b(\n        &self,\n    ) -> Result<Vec<(u8, u8)>, String> {\n        Ok(vec![])\n    }\n    \
         pub fn ok(&self) -> Result<u8, Error> { Ok(0) }\n    fn private(&self) -> Result<u8, String> { Ok(0) }\n}\n\
         pub trait P {\n    fn c(&self) -> Result<(), String>;\n}\nstruct Q;\nimpl Q {\n    pub fn d() -> Result<(), String> { Ok(()) }\n}\n\
         pub fn f(check: impl Fn(u8) -> Result<(), String>) -> Result<u8, Error> { Ok(0) }\n\
         pub fn g<F>(f: F) -> u8\nwhere\n    F: Fn() -> Result<u8, String>,\n{\n    0\n}\n",
    )
    .unwrap();
    std::fs::write(src.join("hidden.rs"), "pub fn e() -> Result<(), String> { Ok(()) }\n").unwrap();
    let found = string_errors(&public_items(dir.path()));
    let mut names: Vec<&str> = found.iter().map(|f| f.split(" at ").next().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["brownout::a", "brownout::inner::P::c", "brownout::inner::T::b"], "{found:#?}");
}

#[test]
fn no_public_function_answers_a_bare_string_error() {
    let items = public_items(root());
    assert!(
        items.iter().any(|i| i.kind == "method" && i.name == "build" && i.owner.as_deref() == Some("Model")),
        "the walk reaches the methods of public types"
    );
    let found = string_errors(&items);
    assert!(
        found.is_empty(),
        "public functions answering `Result<_, String>` (give them a #[non_exhaustive] error enum):\n{}",
        found.join("\n")
    );
}
