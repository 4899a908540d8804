//! Builds the Rust plugins the tests load — `example-plugins/rust/*` and `tests/fixtures/*` —
//! as components (profile `plugin`, target wasm32-wasip2), as wasmtime's test programs are
//! built: a nested cargo with a target directory of its own (`target/plugin-build`, shared with
//! `scripts/build-plugins.sh rust`), then copied where tests and examples find them
//! (`target/plugins/rust/<name>.wasm`, `target/plugins/fixtures/<name>.wasm`). So `cargo
//! test` needs nothing but Rust and the wasm32-wasip2 target.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crates(dir: &Path, prefix: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.join("Cargo.toml").is_file() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let package = format!("{prefix}{name}");
        found.push((name, package));
    }
    found.sort();
    found
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .parent()
        .unwrap()
        .to_owned();
    for watched in [
        "example-plugins/rust",
        "tests/fixtures",
        "guest-sdk/rust",
        "wit",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    let examples = crates(&root.join("example-plugins/rust"), "hak-plugin-");
    let fixtures = crates(&root.join("tests/fixtures"), "hak-fixture-");
    let target = root.join("target");
    let build_dir = target.join("plugin-build");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(&root)
        .args([
            "build",
            "--quiet",
            "--profile",
            "plugin",
            "--target",
            "wasm32-wasip2",
        ])
        .arg("--target-dir")
        .arg(&build_dir)
        // Not the outer build's flags or wrappers (clippy sets one): a plain build, so it
        // stays up to date across `cargo test`, `cargo clippy` and scripts/build-plugins.sh.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_TARGET_DIR");
    // scripts/test.sh lints every build through clippy-driver (RUSTC_WORKSPACE_WRAPPER) and
    // builds these plugins, linted, before the tests: with HAK_NESTED_LINT=1 the nested build
    // keeps that wrapper and finds them fresh (without it, it compiled them all again, ~20 s
    // on the path of CI's build).
    println!("cargo:rerun-if-env-changed=HAK_NESTED_LINT");
    if std::env::var_os("HAK_NESTED_LINT").is_none() {
        command.env_remove("RUSTC_WORKSPACE_WRAPPER");
    }
    for (_, package) in examples.iter().chain(&fixtures) {
        command.args(["-p", package]);
    }
    let status = command.status().expect("run cargo for the plugins");
    assert!(
        status.success(),
        "building the Rust plugins for wasm32-wasip2 failed (is the target installed? `rustup target add wasm32-wasip2`)"
    );
    let built = build_dir.join("wasm32-wasip2/plugin");
    for (names, prefix, out) in [
        (&examples, "hak_plugin_", "plugins/rust"),
        (&fixtures, "hak_fixture_", "plugins/fixtures"),
    ] {
        let out = target.join(out);
        std::fs::create_dir_all(&out).unwrap();
        for (name, _) in names {
            let file = format!("{prefix}{}.wasm", name.replace('-', "_"));
            let to = out.join(format!("{name}.wasm"));
            // Copy only what changed, so tests never see a file being rewritten needlessly.
            let bytes = std::fs::read(built.join(&file)).unwrap();
            if std::fs::read(&to).ok().as_deref() != Some(&bytes[..]) {
                std::fs::write(&to, &bytes).unwrap();
            }
        }
    }
}
