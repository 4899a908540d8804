//! The shape of `emulator/src`, checked:
//! - its top-level modules stand in layers, and each imports only modules of the layers below
//!   it (`LAYERS`; a new module must be placed there);
//! - no two files import each other in a loop (a file's imports of its own parent modules —
//!   `super::{Ctx, Outcome}` in a handler — are the parent's shared vocabulary, not a loop);
//! - no hand-written file is over 600 lines before its test module.
//!
//! Imports are read as text: every `crate::…` and `super::…` path, braces expanded, resolved
//! to the deepest module file it names. Comments and test modules are left out.

#[path = "support/cycle.rs"]
mod cycle;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules, from the top floor down. A module may import only modules of a later
/// row: the server starts everything, the mirror reads the node's ledger, the node runs the
/// handlers, the handlers use the EVM and the fees, and everything stands on the state.
const LAYERS: &[&[&str]] = &[
    &["server"],
    &["mirror"],
    &["node"],
    &["handlers"],
    &["evm", "fees"],
    &["kind", "state"],
];

const MAX_LINES: usize = 600;

struct File {
    /// `handlers::crypto` (a `mod.rs` is its folder's module: `handlers`).
    module: Vec<String>,
    rel: PathBuf,
    /// Code lines before the test module, without `//` comments.
    code: String,
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn files() -> Vec<File> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&src).unwrap().to_owned();
            let mut module: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text
                .lines()
                .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            File { module, rel, code }
        })
        .collect()
}

/// Every path that starts at `crate::` or `super::` in `code`, braces expanded:
/// `super::{a::B, c}` gives `super::a::B` and `super::c`.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let starts = ["crate::", "super::"]
            .iter()
            .any(|p| code[at..].starts_with(p));
        let boundary = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if starts && boundary {
            let (found, end) = tree(code, at, Vec::new());
            out.extend(found);
            at = end.max(at + 1);
        } else {
            at += 1;
        }
    }
    out
}

/// The paths of one use tree starting at `at` under `prefix`, and where it ends.
fn tree(code: &str, mut at: usize, mut prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let bytes = code.as_bytes();
    loop {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at < bytes.len() && bytes[at] == b'{' {
            let mut out = Vec::new();
            at += 1;
            loop {
                while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b',') {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    return (out, at + 1);
                }
                let (found, end) = tree(code, at, prefix.clone());
                out.extend(found);
                at = end.max(at + 1);
                while at < bytes.len() && !matches!(bytes[at], b',' | b'}') {
                    at += 1;
                }
            }
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if start == at {
            return (vec![prefix], at);
        }
        prefix.push(code[start..at].to_owned());
        if code[at..].starts_with("::") {
            at += 2;
        } else {
            return (vec![prefix], at);
        }
    }
}

/// The module `path` names from inside `from`: the deepest module file it reaches (`super`
/// in `a/b.rs` and in `a/b/mod.rs` alike is `a`'s parent of `a::b`, i.e. `a`).
fn resolve(
    from: &[String],
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut segs = path.iter().peekable();
    let mut base: Vec<String> = match segs.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segs.next();
            Vec::new()
        }
        Some("super") => from.to_vec(),
        _ => return None,
    };
    while segs.peek().map(|s| s.as_str()) == Some("super") {
        segs.next();
        base.pop()?;
    }
    let mut deepest = base.clone();
    for seg in segs {
        base.push(seg.clone());
        if !modules.contains(&base) {
            break;
        }
        deepest = base.clone();
    }
    Some(deepest)
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, row)| row.iter().map(move |m| (*m, i)))
        .collect();
    let files = files();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut offenders = Vec::new();
    for file in &files {
        let Some(top) = file.module.first() else {
            continue; // lib.rs: the crate's face
        };
        let Some(&mine) = layer_of.get(top.as_str()) else {
            offenders.push(format!(
                "{}: `{top}` is in no row of LAYERS",
                file.rel.display()
            ));
            continue;
        };
        for path in paths(&file.code) {
            let Some(target) = resolve(&file.module, &path, &modules) else {
                continue;
            };
            let Some(other) = target.first() else {
                continue;
            };
            if other == top {
                continue;
            }
            match layer_of.get(other.as_str()) {
                Some(&theirs) if theirs > mine => {}
                _ => offenders.push(format!(
                    "{} imports {} (`{}`): `{top}` may use only the layers below it",
                    file.rel.display(),
                    target.join("::"),
                    path.join("::")
                )),
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn no_files_import_each_other_in_a_loop() {
    let files = files();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        for path in paths(&file.code) {
            let Some(target) = resolve(&file.module, &path, &modules) else {
                continue;
            };
            // A parent's shared vocabulary (`super::Ctx`), or the file itself.
            if file.module.starts_with(&target) {
                continue;
            }
            edges.entry(file.module.clone()).or_default().insert(target);
        }
    }
    if let Some(cycle) = cycle::find(&edges) {
        let names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
        panic!("import loop: {}", names.join(" -> "));
    }
}

#[test]
fn no_file_is_over_six_hundred_lines_before_its_tests() {
    let long: Vec<String> = files()
        .iter()
        .map(|f| (f.rel.display().to_string(), f.code.lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .map(|(rel, n)| format!("{rel}: {n} lines"))
        .collect();
    assert!(long.is_empty(), "split these by concern: {long:#?}");
}

#[test]
fn the_reader_of_imports_sees_braces_and_parents() {
    let found = paths("use super::{plan::Plan, Ctx};\nlet x = crate::state::ledger::token_id(1);");
    assert_eq!(
        found,
        vec![
            vec!["super", "plan", "Plan"],
            vec!["super", "Ctx"],
            vec!["crate", "state", "ledger", "token_id"],
        ]
    );
    let modules: BTreeSet<Vec<String>> = [
        vec![],
        vec!["handlers".to_owned()],
        vec!["handlers".to_owned(), "plan".to_owned()],
        vec!["handlers".to_owned(), "crypto".to_owned()],
    ]
    .into_iter()
    .collect();
    let from = ["handlers".to_owned(), "crypto".to_owned()];
    let to = |p: &[&str]| {
        resolve(
            &from,
            &p.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &modules,
        )
    };
    assert_eq!(
        to(&["super", "plan", "Plan"]),
        Some(vec!["handlers".to_owned(), "plan".to_owned()])
    );
    assert_eq!(to(&["super", "Ctx"]), Some(vec!["handlers".to_owned()]));
}
