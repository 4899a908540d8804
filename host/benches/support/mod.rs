//! What the benches share: the `hak` binary's allocator, the repository root, the built example plugins, the transfer they
//! call. (Each bench is its own crate; this file is included by `mod support;`.)

use std::path::PathBuf;

/// The allocator the `hak` binary runs with (`src/main.rs`): what is measured is what ships.
#[global_allocator]
static ALLOCATOR: hak_host::alloc::Allocator = hak_host::alloc::Allocator;

/// `transfer_hbar_tool` with two recipients and a memo.
pub const PARAMS: &str = r#"{"transfers":[{"accountId":"0.0.2001","amount":1},{"accountId":"0.0.2002","amount":0.5}],"transactionMemo":"bench"}"#;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The path of a built Rust example plugin, as manifest text.
pub fn plugin(name: &str) -> String {
    let path = root().join(format!("target/plugins/rust/{name}.wasm"));
    assert!(
        path.exists(),
        "{} missing: run scripts/build-plugins.sh",
        path.display()
    );
    path.display().to_string()
}
