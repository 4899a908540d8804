//! Host-side bindings of the `hedera:agent-kit` contract (generated from `wit/`). The host binds
//! `agent-plugin-core`, what every plugin since 0.1.0 exports; the optional `events` export
//! (0.1.1) is looked up per plugin ([`EVENTS_INTERFACE`]). Only generated code and names live here.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "agent-plugin-core",
    ownership: Borrowing { duplicate_if_necessary: true },
});

/// The current contract's `events` interface; 0.1.x plugins resolve against it by semver.
pub const EVENTS_INTERFACE: &str = "hedera:agent-kit/events@0.1.1";
/// The function in [`EVENTS_INTERFACE`] the host calls when a call ends blocked or failed.
pub const ON_TOOL_FAILURE: &str = "on-tool-failure";

pub type AgentPlugin = AgentPluginCore;
pub type AgentPluginPre<T> = AgentPluginCorePre<T>;

pub use self::hedera::agent_kit as imports;
pub use self::hedera::agent_kit::types::{
    BlockInfo, HookResult, LogLevel, PluginInfo, Stage as WitStage, ToolType as WitToolType,
};
pub use exports::hedera::agent_kit::{hooks, plugin, policy};
