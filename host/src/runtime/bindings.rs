//! Host-side bindings of the `hedera:agent-kit/agent-plugin` world (generated from `wit/`).
//! Only generated code and conversions to the host's own types live here.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "agent-plugin",
    ownership: Borrowing { duplicate_if_necessary: true },
});

pub use self::hedera::agent_kit as imports;
pub use self::hedera::agent_kit::types::{
    BlockInfo, HookResult, LogLevel, PluginInfo, Stage as WitStage, ToolType as WitToolType,
};
pub use exports::hedera::agent_kit::{hooks, plugin, policy};
