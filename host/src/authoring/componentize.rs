//! Turning a core wasm module (Go's `GOOS=wasip1 -buildmode=c-shared` output) into a hak
//! plugin component: embed the contract's WIT (world `agent-plugin`, as embedded in this
//! binary), then wrap the module with the WASI preview1 **reactor** adapter. Done here with
//! wit-component, so building a Go plugin needs nothing beyond the Go toolchain. No building
//! of sources lives here.

use wit_component::{ComponentEncoder, StringEncoding};
use wit_parser::{Resolve, SourceMap};

/// A component of the contract's `agent-plugin` world from a core module.
pub fn componentize(core: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut sources = SourceMap::new();
    for (name, text) in crate::authoring::guest_sources::wit_files() {
        sources.push_str(name, text);
    }
    let group = sources
        .parse()
        .map_err(|(_, e)| anyhow::anyhow!("the embedded contract does not parse: {e}"))?;
    let mut resolve = Resolve::default();
    let package = resolve.push_group(group)?;
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
