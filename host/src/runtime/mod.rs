//! The wasm side of hak: one wasmtime `Engine` (component model, pooling allocator, epoch
//! interruption driven by one ticker thread that parks while no guest runs), the linker with
//! minimal WASI and the host imports, the precompiled-artifact cache and the compiled-function
//! cache its compiles share. Plugins are loaded by [`plugin`] and run by [`instance`]. Nothing
//! here knows about tools or the lifecycle.

pub mod bindings;
mod cache;
mod clock;
mod compat_0_1;
mod engine;
mod failure;
pub mod function_cache;
mod hedera_api;
mod host_api;
pub mod instance;
pub mod member;
pub mod plugin;
pub mod sandbox;
pub mod structure;
mod sync_io;
mod ticker;
mod wit_values;

pub use crate::plugin::{FailureCause, PluginDescription, PluginFailure};
pub use cache::ArtifactCache;
pub use engine::{Runtime, RuntimeConfig};
pub use instance::{live_instances, PluginInstance};
pub use member::WasmPlugin;
pub use plugin::{LoadError, LoadedPlugin};
pub use sandbox::{LogRecord, LogSink, TracingLogSink};
