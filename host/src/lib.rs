//! hak-host: runs Hedera Agent Kit tools through the kit's 7-stage lifecycle, with hooks and
//! policies that are sandboxed WebAssembly components.
//!
//! Map of the crate (one concept per module), from the faces down:
//! - [`cli`]: the `hak` command line, with [`cli::admin_client`] (its requests to a running
//!   server). [`serve`]: the HTTP API (auth, browser guard, session pool). [`mcp`]: the Model
//!   Context Protocol server (stdio and streamable HTTP).
//! - [`authoring`]: making and trying plugins (new projects, Go and Python builds, the
//!   embedded contract and SDKs, the SDKs' generated tool types, `hak plugin test`,
//!   `hak replay`); only the command line imports it.
//! - [`registry`] (with [`registry::watch`]), [`intake`], [`signing`]: hot-swapping plugins in a
//!   running host (admin changes, the watched directory read without being abused by it,
//!   signatures); [`oci`]: plugins as OCI artifacts (push, pull, signatures, the cache,
//!   `oci://` sources).
//! - [`host`]: one configured host (manifest, tools, network, chain).
//! - [`observe`]: the Prometheus metrics of calls, plugin steps and the state store, and the
//!   decision log (one JSON line per call); [`logging`]: the process's log output (text or
//!   JSON).
//! - [`lifecycle`]: the kit's 7 stages over a `CallEnv` (what a session needs from the host),
//!   the plugin chain, per-context sessions, envelopes.
//! - [`plugin`]: what a plugin is to the lifecycle (`ChainPlugin`, `PluginSession`, verdicts,
//!   hook answers, failures), whatever engine runs it; [`approvals`]: calls parked on a
//!   needs-approval verdict until a human decides.
//! - [`tools`]: native Hedera tools (one file per tool), their shared normalisers and the
//!   kit's descriptions; [`strategy`]: what the secondary action does with a built
//!   transaction, per agent mode.
//! - [`runtime`]: the wasmtime engine, the precompiled cache, plugin loading (`LoadedPlugin`,
//!   holding an `InstancePre`) and per-call execution with deadline / fuel / memory caps;
//!   [`capabilities`]: what an operator can grant a plugin, by name; [`state_store`]: the
//!   per-plugin, per-context scratchpad behind `state-get` / `state-set`; [`reconcile`]:
//!   settling the budget reservations a stopped process left, by what the network knows.
//! - [`network`]: SDK clients and node ids for the configured network; [`mirror`]: the mirror
//!   node's resources, typed, as tools read them; [`blocking`]: waiting on network work from
//!   synchronous code.
//! - [`manifest`]: the operator's `hak.toml`.
//! - [`model`]: the vocabulary below everything: the agent context a call runs in, the
//!   hookable stages, a call's facts (who gets what, tokens, changes), every sandbox limit
//!   and its default, the tool type.
//! - [`text`]: ids and integers written as `Display` writes them, without `core::fmt`;
//!   [`alloc`]: the process allocator (mimalloc) the binary and the benches install.

pub mod alloc;
pub mod approvals;
pub mod authoring;
pub mod blocking;
pub mod capabilities;
pub mod cli;
pub mod host;
pub mod intake;
pub mod lifecycle;
pub mod logging;
pub mod manifest;
pub mod mcp;
pub mod mirror;
pub mod model;
pub mod network;
pub mod observe;
pub mod oci;
pub mod pause;
pub mod plugin;
pub mod reconcile;
pub mod registry;
pub mod runtime;
pub mod serve;
pub mod signing;
pub mod state_store;
pub mod strategy;
pub mod text;
pub mod tools;

pub use host::{Host, HostBuilder};
pub use lifecycle::Session;
pub use model::context::{AgentContext, AgentMode};
