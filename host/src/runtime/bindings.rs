//! Host-side bindings of the `hedera:agent-kit` contract (generated from `wit/`). The host binds
//! `agent-plugin-core`, what every plugin since 0.1.0 exports; the optional `events` export
//! (0.1.1) is looked up per plugin ([`EVENTS_INTERFACES`]). Only generated code and names live here.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "agent-plugin-core",
    ownership: Borrowing { duplicate_if_necessary: true },
    // A state store that cannot answer traps the guest (a plugin failure: fail closed) rather
    // than answering "no value".
    imports: {
        "hedera:agent-kit/host.state-get": trappable,
        "hedera:agent-kit/host.state-delete": trappable,
    },
});

/// The `events` interface by every contract version that has it, newest first (a plugin
/// exports the one it was built against).
pub const EVENTS_INTERFACES: [&str; 2] = [
    "hedera:agent-kit/events@0.1.2",
    "hedera:agent-kit/events@0.1.1",
];
/// The function in [`EVENTS_INTERFACES`] the host calls when a call ends blocked or failed.
pub const ON_TOOL_FAILURE: &str = "on-tool-failure";

pub type AgentPlugin = AgentPluginCore;
pub type AgentPluginPre<T> = AgentPluginCorePre<T>;

pub use self::hedera::agent_kit as imports;
pub use self::hedera::agent_kit::budget::ReserveError;
pub use self::hedera::agent_kit::types::{
    BlockInfo, HookResult, LogLevel, PluginInfo, Stage as WitStage, ToolType as WitToolType,
};
pub use exports::hedera::agent_kit::{hooks, plugin, policy};
