//! hak-host: runs Hedera Agent Kit tools through the kit's 7-stage lifecycle, with hooks and
//! policies that are sandboxed WebAssembly components.
//!
//! Map of the crate (one concept per module):
//! - [`capabilities`]: what an operator can grant a plugin, by name.
//! - [`manifest`]: the operator's `hak.toml`: network, operator, context, ordered plugins.
//! - [`limits`]: every sandbox limit and its default, in one place.
//! - [`runtime`]: the wasmtime engine, the precompiled cache, plugin loading (`LoadedPlugin`,
//!   holding an `InstancePre`) and per-call execution with deadline / fuel / memory caps.
//! - [`lifecycle`]: the kit's 7 stages, the plugin chain, per-context sessions, envelopes.
//! - [`tools`]: native Hedera tools (one file per tool) and their shared normalisers.
//! - [`strategy`]: what the secondary action does with a built transaction, per agent mode.
//! - [`network`]: SDK clients and node ids for the configured network.
//! - [`componentize`], [`go_plugin`]: core wasm modules (Go's) into plugin components.
//! - [`intake`]: reading files of the watched plugins directory without being abused by them.
//! - [`state_store`]: the per-plugin, per-context scratchpad behind `state-get` / `state-set`.

pub mod capabilities;
pub mod cli;
pub mod componentize;
pub mod context;
pub mod go_plugin;
pub mod host;
pub mod intake;
pub mod lifecycle;
pub mod limits;
pub mod manifest;
pub mod mirror;
pub mod network;
pub mod registry;
pub mod runtime;
pub mod scaffold;
pub mod serve;
pub mod signing;
pub mod stage;
pub mod state_store;
pub mod strategy;
pub mod tools;
pub mod watch;

pub use context::{AgentContext, AgentMode};
pub use host::{Host, HostBuilder};
pub use lifecycle::Session;
