//! Turning a core wasm module (Go's `GOOS=wasip1 -buildmode=c-shared` output) into a hak
//! plugin component: embed the contract's WIT (world `agent-plugin`), then wrap the module
//! with the WASI preview1 **reactor** adapter. Done here with wit-component, so building a Go
//! plugin needs nothing beyond the Go toolchain. No building of sources lives here.

use std::path::Path;
use wit_component::{ComponentEncoder, StringEncoding};
use wit_parser::Resolve;

/// The contract's WIT directory, as this binary was built with it.
pub fn default_wit_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit")
}

/// A component of `wit_dir`'s `agent-plugin` world from a core module.
pub fn componentize(core: &[u8], wit_dir: &Path) -> anyhow::Result<Vec<u8>> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve.push_dir(wit_dir)?;
    let world = resolve.select_world(&[package], Some("agent-plugin"))?;
    let mut module = core.to_vec();
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        StringEncoding::UTF8,
        false,
    )?;
    let component = ComponentEncoder::default()
        .module(&module)?
        .validate(true)
        .adapter(
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )?
        .encode()?;
    Ok(component)
}
