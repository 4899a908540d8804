//! The plugin contract (`wit/`) and the four guest SDKs (`guest-sdk/{rust,js,go,python}`), embedded
//! in the binary, so an installed `hak` scaffolds, componentizes and builds plugins with no
//! source tree: [`wit_files`] feeds `componentize` from memory; [`unpack`] writes the SDKs once
//! per content version into a data directory, with the checkout's layout (`guest-sdk/<lang>`
//! beside `wit/`), which is what the SDKs' own relative paths expect. Templates of new projects
//! live in `scaffold`; nothing here builds anything.

use include_dir::{include_dir, Dir, DirEntry};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

static WIT: Dir = include_dir!("$CARGO_MANIFEST_DIR/../wit");
static RUST_SRC: Dir = include_dir!("$CARGO_MANIFEST_DIR/../guest-sdk/rust/src");
static GO: Dir = include_dir!("$CARGO_MANIFEST_DIR/../guest-sdk/go");
static JS_SRC: Dir = include_dir!("$CARGO_MANIFEST_DIR/../guest-sdk/js/src");
static JS_BIN: Dir = include_dir!("$CARGO_MANIFEST_DIR/../guest-sdk/js/bin");
static PY: Dir = include_dir!("$CARGO_MANIFEST_DIR/../guest-sdk/python/hak_guest");

/// Single files: the directories around them hold build output (`node_modules`) that must not
/// be embedded.
const SINGLE: &[(&str, &str)] = &[
    (
        "guest-sdk/rust/Cargo.toml",
        include_str!("../../../guest-sdk/rust/Cargo.toml"),
    ),
    (
        "guest-sdk/rust/README.md",
        include_str!("../../../guest-sdk/rust/README.md"),
    ),
    (
        "guest-sdk/python/README.md",
        include_str!("../../../guest-sdk/python/README.md"),
    ),
    (
        "guest-sdk/js/package.json",
        include_str!("../../../guest-sdk/js/package.json"),
    ),
    (
        "guest-sdk/js/package-lock.json",
        include_str!("../../../guest-sdk/js/package-lock.json"),
    ),
];

/// The current contract's `.wit` files (not the frozen 0.1 copy under `wit/0.1/`, which only
/// the host binds): (file name, text).
pub fn wit_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    files_of(&WIT)
        .filter(|(path, _)| path.ends_with(".wit") && !path.contains('/'))
        .filter_map(|(path, bytes)| Some((path, std::str::from_utf8(bytes).ok()?)))
}

fn files_of(dir: &'static Dir<'static>) -> impl Iterator<Item = (&'static str, &'static [u8])> {
    let mut stack: Vec<&'static DirEntry<'static>> = dir.entries().iter().collect();
    std::iter::from_fn(move || loop {
        match stack.pop()? {
            DirEntry::Dir(d) => stack.extend(d.entries()),
            DirEntry::File(f) => return Some((f.path().to_str()?, f.contents())),
        }
    })
}

/// Every embedded file with its path under the unpacked root.
fn all_files() -> Vec<(String, Vec<u8>)> {
    let trees: [(&str, &'static Dir<'static>); 6] = [
        ("wit", &WIT),
        ("guest-sdk/rust/src", &RUST_SRC),
        ("guest-sdk/go", &GO),
        ("guest-sdk/js/src", &JS_SRC),
        ("guest-sdk/js/bin", &JS_BIN),
        ("guest-sdk/python/hak_guest", &PY),
    ];
    let mut files: Vec<(String, Vec<u8>)> = trees
        .iter()
        .flat_map(|(prefix, dir)| {
            files_of(dir)
                // Python's bytecode caches (a native test run writes them) are not sources.
                .filter(|(path, _)| !path.contains("__pycache__"))
                .map(move |(path, bytes)| (format!("{prefix}/{path}"), bytes.to_vec()))
        })
        .chain(SINGLE.iter().map(|(path, text)| {
            let text = if path.ends_with("rust/Cargo.toml") {
                standalone_manifest(text)
            } else {
                text.to_string()
            };
            (path.to_string(), text.into_bytes())
        }))
        .collect();
    files.sort();
    files
}

/// The Rust SDK's manifest takes version, edition and licence from hak's workspace; unpacked,
/// it stands alone.
fn standalone_manifest(text: &str) -> String {
    text.lines()
        .map(|line| match line.trim() {
            "version.workspace = true" => format!("version = \"{}\"", env!("CARGO_PKG_VERSION")),
            "edition.workspace = true" => "edition = \"2021\"".to_string(),
            "license.workspace = true" => format!("license = \"{}\"", env!("CARGO_PKG_LICENSE")),
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Where unpacked SDKs live by default: `$HAK_HOME`, `$XDG_DATA_HOME/hak`, `~/.local/share/hak`.
pub fn default_home() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("HAK_HOME") {
        return Some(dir.into());
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME") {
        return Some(PathBuf::from(dir).join("hak"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/hak"))
}

/// Unpack the contract and SDKs under `home` (once per content: the directory is named by
/// hak's version and a digest of the files) and return the root holding `wit/` and
/// `guest-sdk/`. Written into a temporary directory and renamed, so a reader never sees half.
pub fn unpack(home: &Path) -> Result<PathBuf, String> {
    let files = all_files();
    let mut digest = Sha256::new();
    for (path, bytes) in &files {
        digest.update((path.len() as u64).to_le_bytes());
        digest.update(path.as_bytes());
        digest.update((bytes.len() as u64).to_le_bytes());
        digest.update(bytes);
    }
    let name = format!(
        "{}-{}",
        env!("CARGO_PKG_VERSION"),
        hex::encode(&digest.finalize()[..6])
    );
    let root = home.join("sdk").join(&name);
    if root.join("wit").is_dir() {
        return Ok(root);
    }
    let at = |e: std::io::Error, p: &Path| format!("{}: {e}", p.display());
    // Unique per process and per call: two unpackers never share a staging directory.
    static STAGING: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = STAGING.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let staging = home
        .join("sdk")
        .join(format!(".{name}.{}.{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    for (path, bytes) in &files {
        let file = staging.join(path);
        let parent = file.parent().unwrap_or(&staging);
        std::fs::create_dir_all(parent).map_err(|e| at(e, parent))?;
        std::fs::write(&file, bytes).map_err(|e| at(e, &file))?;
    }
    match std::fs::rename(&staging, &root) {
        Ok(()) => Ok(root),
        // Another hak unpacked the same content first: theirs is as good as ours.
        Err(_) if root.join("wit").is_dir() => {
            let _ = std::fs::remove_dir_all(&staging);
            Ok(root)
        }
        Err(e) => Err(at(e, &root)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_and_all_three_sdks_are_embedded() {
        let files = all_files();
        let has = |p: &str| files.iter().any(|(path, _)| path == p);
        for p in [
            "wit/world.wit",
            "guest-sdk/rust/src/lib.rs",
            "guest-sdk/rust/Cargo.toml",
            "guest-sdk/go/go.mod",
            "guest-sdk/js/bin/build.js",
            "guest-sdk/js/bin/sync-exports.js",
            "guest-sdk/js/src/index.js",
            "guest-sdk/js/package-lock.json",
            "guest-sdk/python/hak_guest/__init__.py",
            "guest-sdk/python/hak_guest/exports.py",
            "guest-sdk/python/hak_guest/_wit_exports.py",
        ] {
            assert!(has(p), "{p} is not embedded");
        }
        assert!(
            files.iter().all(|(p, _)| !p.contains("node_modules")),
            "build output embedded"
        );
        assert!(wit_files().any(|(name, text)| name == "world.wit" && text.contains("world")));
        assert!(wit_files().all(|(name, _)| name.ends_with(".wit")));
    }

    #[test]
    fn the_rust_sdk_manifest_stands_alone() {
        let files = all_files();
        let (_, manifest) = files
            .iter()
            .find(|(p, _)| p == "guest-sdk/rust/Cargo.toml")
            .unwrap();
        let manifest = std::str::from_utf8(manifest).unwrap();
        assert!(!manifest.contains(".workspace"), "{manifest}");
        assert!(manifest.contains(concat!("version = \"", env!("CARGO_PKG_VERSION"))));
    }
}
