//! `hak plugin new` scaffolds a plugin that builds and loads, in Rust, JavaScript and Go: the
//! scaffolded policy blocks a large transfer and lets a small one through.

use hak_host::scaffold::{default_sdk_root, new_plugin, Lang};
use hak_tests::*;
use std::path::Path;
use std::process::Command;

fn check_loads(wasm: &Path, name: &str) {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[[plugins]]\nname = \"{name}\"\npath = {:?}\nconfig = {{ maxTinybars = \"100000000\" }}\n",
        wasm.display().to_string()
    );
    let (host, _) = start(&manifest);
    let mut s = host.default_session();
    let small = s
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#,
        )
        .unwrap();
    assert_eq!(small["raw"]["status"], "SUCCESS", "{small}");
    let big = s
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1002","amount":2}]}"#,
        )
        .unwrap();
    assert_eq!(
        big["raw"]["policyBlock"]["reason"], "200000000 tinybars to one recipient is too much",
        "{big}"
    );
}

fn fresh(dir: &str) -> std::path::PathBuf {
    let dir = root().join("target/test-tmp").join(dir);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_scaffolded_rust_plugin_builds_and_loads() {
    let dir = fresh("scaffold-rust");
    let (files, build) = new_plugin(Lang::Rust, "my-policy", &dir, &default_sdk_root()).unwrap();
    assert!(
        build.contains("cargo build --release --target wasm32-wasip2"),
        "{build}"
    );
    assert_eq!(files.len(), 2);
    let project = dir.join("my-policy");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "--target", "wasm32-wasip2"])
        .current_dir(&project)
        // Shared across runs, apart from the workspace's own target dir.
        .env("CARGO_TARGET_DIR", root().join("target/scaffold-target"))
        .status()
        .unwrap();
    assert!(status.success());
    check_loads(
        &root().join("target/scaffold-target/wasm32-wasip2/release/my_policy.wasm"),
        "my-policy",
    );
    let err = new_plugin(Lang::Rust, "my-policy", &dir, &default_sdk_root()).unwrap_err();
    assert!(err.contains("already exists"), "{err}");
    assert!(new_plugin(Lang::Js, "Bad Name", &dir, &default_sdk_root()).is_err());
}

#[test]
fn a_scaffolded_js_plugin_builds_and_loads() {
    let sdk = default_sdk_root();
    assert!(
        sdk.join("js/node_modules/@bytecodealliance/componentize-js")
            .is_dir(),
        "run `npm ci` in guest-sdk/js (scripts/build-plugins.sh does)"
    );
    let dir = fresh("scaffold-js");
    let (files, build) = new_plugin(Lang::Js, "my-js-policy", &dir, &sdk).unwrap();
    assert!(build.contains("build.js"), "{build}");
    let wasm = dir.join("my-js-policy/my-js-policy.wasm");
    let status = Command::new("node")
        .arg(sdk.join("js/bin/build.js"))
        .arg(&files[0])
        .arg("-o")
        .arg(&wasm)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    check_loads(&wasm, "my-js-policy");
}

#[test]
fn a_scaffolded_go_plugin_builds_and_loads() {
    let go = String::from_utf8(
        Command::new(root().join("scripts/go-path.sh"))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let go = go.trim();
    assert!(
        !go.is_empty(),
        "no Go toolchain: run scripts/install-deps.sh"
    );
    let dir = fresh("scaffold-go");
    let (_, build) = new_plugin(Lang::Go, "my-go-policy", &dir, &default_sdk_root()).unwrap();
    assert!(build.contains("hak plugin build"), "{build}");
    let project = dir.join("my-go-policy");
    let wasm = project.join("my-go-policy.wasm");
    hak_host::go_plugin::build(go, &project, &wasm).unwrap();
    check_loads(&wasm, "my-go-policy");
}
