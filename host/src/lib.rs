//! hak-host: runs Hedera Agent Kit tools through the kit's 7-stage lifecycle, with hooks and
//! policies that are sandboxed WebAssembly components.
//!
//! Map of the crate (one concept per module), from the faces down:
//! - [`cli`]: the `hak` command line; [`admin_client`]: its requests to a running server. [`serve`]: the HTTP API (auth, browser guard, session
//!   pool). [`mcp`]: the Model Context Protocol server (stdio and streamable HTTP).
//! - [`registry`], [`watch`], [`intake`], [`signing`]: hot-swapping plugins in a running host
//!   (admin changes, the watched directory read without being abused by it, signatures);
//!   [`oci`]: plugins as OCI artifacts (push, pull, signatures, the cache, `oci://` sources).
//! - [`host`]: one configured host (manifest, tools, network, chain); [`context`]: the agent
//!   context a call runs in.
//! - [`metrics`]: the Prometheus metrics of calls, plugin steps and the state store;
//!   [`decisions`]: the decision log (one JSON line per call); [`logging`]: the process's
//!   log output (text or JSON); [`replay`]: recorded calls re-run through another chain;
//!   [`trial`]: one plugin on one recorded stage input (`hak plugin test`).
//! - [`lifecycle`]: the kit's 7 stages over a `CallEnv` (what a session needs from the host),
//!   the plugin chain, per-context sessions, envelopes; [`stage`]: the hookable stages.
//! - [`plugin`]: what a plugin is to the lifecycle (`ChainPlugin`, `PluginSession`, verdicts,
//!   hook answers, failures), whatever engine runs it; [`approvals`]: calls parked on a
//!   needs-approval verdict until a human decides.
//! - [`facts`]: what a call does (who gets what, tokens, changes), stated by each tool and
//!   handed to policies typed.
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
//! - [`manifest`]: the operator's `hak.toml`; [`limits`]: every sandbox limit and its default.
//! - [`text`]: ids and integers written as `Display` writes them, without `core::fmt`.
//! - [`componentize`], [`go_plugin`], [`python_plugin`], [`scaffold`]: making plugin
//!   components (Go core modules, Python projects through componentize-py, new plugin projects); [`guest_sources`]: the contract and guest SDKs embedded in the
//!   binary, so all of that works away from the source tree.

pub mod admin_client;
pub mod approvals;
pub mod blocking;
pub mod capabilities;
pub mod cli;
pub mod codegen;
pub mod componentize;
pub mod context;
pub mod decisions;
pub mod facts;
pub mod go_plugin;
pub mod guest_sources;
pub mod host;
pub mod intake;
pub mod lifecycle;
pub mod limits;
pub mod logging;
pub mod manifest;
pub mod mcp;
pub mod metrics;
pub mod mirror;
pub mod network;
pub mod oci;
pub mod plugin;
pub mod python_plugin;
pub mod reconcile;
pub mod registry;
pub mod replay;
pub mod runtime;
pub mod scaffold;
pub mod serve;
pub mod signing;
pub mod stage;
pub mod state_store;
pub mod strategy;
pub mod text;
pub mod tools;
pub mod trial;
pub mod watch;

pub use context::{AgentContext, AgentMode};
pub use host::{Host, HostBuilder};
pub use lifecycle::Session;
