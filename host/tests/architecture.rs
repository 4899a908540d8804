//! The shape of `host/src`, checked: imports between the crate's top-level modules form no
//! cycle, and nothing outside `runtime/` names wasmtime or the generated WIT bindings (the
//! lifecycle speaks the domain types of `plugin/`), and no code reads the source tree at run
//! time (an installed `hak` has none: files it needs are embedded with `include_dir!`), and
//! neither `tools/` nor `model/` reaches what lies above them.
//! Comments and doc comments are ignored.

#[path = "../../emulator/tests/support/cycle.rs"]
mod cycle;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// Each file's code lines (without `//` comments) and its top-level module.
fn files() -> Vec<(String, String, PathBuf)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&src).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned();
            let code: String = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            (top, code, rel.to_owned())
        })
        .collect()
}

#[test]
fn nothing_above_runtime_names_wasmtime_or_the_bindings() {
    let mut offenders = Vec::new();
    for (top, code, rel) in files() {
        if top == "runtime" {
            continue;
        }
        for word in ["wasmtime", "bindings::", "PluginInstance", "PolicyAnswer"] {
            if code.contains(word) {
                offenders.push(format!("{} names {word}", rel.display()));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn the_tools_and_the_vocabulary_do_not_reach_the_local_network_or_the_engines() {
    let mut offenders = Vec::new();
    for (top, code, rel) in files() {
        let words: &[&str] = match top.as_str() {
            // A tool reads what the network offers (factories, nodes) from its context.
            "tools" => &["hak_emu"],
            // The vocabulary below everything imports nothing of the crate but `text`.
            "model" => &[
                "crate::lifecycle",
                "crate::tools",
                "crate::runtime",
                "crate::plugin",
            ],
            _ => continue,
        };
        for word in words {
            if code.contains(word) {
                offenders.push(format!("{} names {word}", rel.display()));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn nothing_finds_files_through_the_source_tree_at_run_time() {
    let offenders: Vec<String> = files()
        .into_iter()
        .filter(|(_, code, _)| {
            code.lines()
                .any(|l| l.contains("CARGO_MANIFEST_DIR") && !l.contains("include_dir!"))
        })
        .map(|(_, _, rel)| rel.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "{offenders:#?}");
}

#[test]
fn modules_import_each_other_without_cycles() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (top, code, _) in files() {
        let mut rest = code.as_str();
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let target: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !target.is_empty() && target != top {
                edges.entry(top.clone()).or_default().insert(target);
            }
        }
    }
    if let Some(cycle) = cycle::find(&edges) {
        panic!("import cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_module_table_in_architecture_md_names_every_module() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ARCHITECTURE.md"),
    )
    .unwrap();
    // First cells of the table rows: "| `a`, `b::c` | ...".
    let named: BTreeSet<String> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            l.split('|').nth(1).unwrap_or("").split(',').map(|cell| {
                cell.trim()
                    .trim_matches('`')
                    .split("::")
                    .next()
                    .unwrap_or("")
                    .to_owned()
            })
        })
        .collect();
    let modules: BTreeSet<String> = files()
        .into_iter()
        .map(|(top, _, _)| top)
        .filter(|top| !["lib", "main"].contains(&top.as_str()))
        .collect();
    let missing: Vec<_> = modules.difference(&named).collect();
    assert!(
        missing.is_empty(),
        "not in docs/ARCHITECTURE.md's module table: {missing:?}"
    );
}
