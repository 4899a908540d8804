//! Host-side bindings of the `hedera:agent-kit` contract, generated from `wit/` — one module per
//! contract line the host loads: [`v0_2`] (0.2.0–0.2.2, the current one: typed facts, the
//! needs-approval verdict, `inputs`, `rates`) and [`v0_1`] (0.1.0–0.1.2, from `wit/0.1/`; wasmtime
//! matches names within a line by semver). Each binds `agent-plugin-core`; the optional
//! `events` and `inputs` exports are looked up per plugin ([`EVENTS_INTERFACES`],
//! [`INPUTS_INTERFACE`]). [`Pre`] and [`Exports`] are a loaded component of either
//! line. Only generated code, names, the choice of line and the stage → export mapping both
//! lines share (`call_hook!`, `call_policy!`) live here; conversions live in `instance` and
//! `compat_0_1`.

use super::sandbox::PluginState;
use wasmtime::component::{Component, InstancePre};
use wasmtime::Store;

/// The 0.1.x contract (`wit/0.1/`), for plugins built before 0.2.0.
pub mod v0_1 {
    wasmtime::component::bindgen!({
        path: "../wit/0.1",
        world: "agent-plugin-core",
        ownership: Borrowing { duplicate_if_necessary: true },
        // A state store that cannot answer traps the guest (a plugin failure: fail closed)
        // rather than answering "no value".
        imports: {
            "hedera:agent-kit/host.state-get": trappable,
            "hedera:agent-kit/host.state-delete": trappable,
        },
    });
}

/// The 0.2 contract (`wit/`, 0.2.2; 0.2.0 and 0.2.1 plugins bind to it by semver).
pub mod v0_2 {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "agent-plugin-core",
        ownership: Borrowing { duplicate_if_necessary: true },
        imports: {
            "hedera:agent-kit/host.state-get": trappable,
            "hedera:agent-kit/host.state-delete": trappable,
        },
    });
}

/// The `events` interface by every contract version that has it, newest first (a plugin
/// exports the one it was built against).
pub const EVENTS_INTERFACES: [&str; 5] = [
    "hedera:agent-kit/events@0.2.2",
    "hedera:agent-kit/events@0.2.1",
    "hedera:agent-kit/events@0.2.0",
    "hedera:agent-kit/events@0.1.2",
    "hedera:agent-kit/events@0.1.1",
];
/// The function in [`EVENTS_INTERFACES`] the host calls when a call ends blocked or failed.
pub const ON_TOOL_FAILURE: &str = "on-tool-failure";
/// The export whose presence makes a component a 0.2 plugin (0.2.0, 0.2.1 or 0.2.2: export
/// names match by semver).
const POLICY_0_2: &str = "hedera:agent-kit/policy@0.2.2";
/// The `inputs` interface (since 0.2.1), looked up per plugin: a plugin without it reads
/// every part of the stage input.
pub const INPUTS_INTERFACE: &str = "hedera:agent-kit/inputs@0.2.2";
/// The function in [`INPUTS_INTERFACE`] the host asks once, after `describe`.
pub const READS: &str = "reads";
/// `hak:fast/judge` (`wit/ext/judge.wit`): the policy stages with flat arguments, which a
/// plugin may export beside `policy` (the Rust SDK's plugins do). Looked up per plugin.
pub const JUDGE_INTERFACE: &str = "hak:fast/judge@0.1.0";
/// The function in [`JUDGE_INTERFACE`].
pub const SHOULD_BLOCK: &str = "should-block";

/// `judge.should-block`'s parameters and results, with the 0.2 types.
pub type JudgeParams<'a> = (
    v0_2::hedera::agent_kit::types::Stage,
    v0_2::hedera::agent_kit::types::ToolType,
    u32,
    Option<&'a str>,
);
pub type JudgeResults = (Result<v0_2::hedera::agent_kit::types::Verdict, String>,);

// `inputs.parts`.
wasmtime::component::flags! {
    WitParts {
        #[component(name = "params")]
        const PARAMS;
        #[component(name = "facts")]
        const FACTS;
    }
}

/// `inputs.tool-reads`.
#[derive(wasmtime::component::ComponentType, wasmtime::component::Lift)]
#[component(record)]
pub struct WitToolReads {
    #[component(name = "tool")]
    pub tool: String,
    #[component(name = "reads")]
    pub reads: WitParts,
}

pub use v0_2::hedera::agent_kit::types::{LogLevel, PluginInfo};

/// A type-checked component of one contract line.
pub enum Pre {
    V0_1(v0_1::AgentPluginCorePre<PluginState>),
    V0_2(v0_2::AgentPluginCorePre<PluginState>),
}

/// The exports of one instance, by contract line.
pub enum Exports {
    V0_1(v0_1::AgentPluginCore),
    V0_2(v0_2::AgentPluginCore),
}

impl Pre {
    /// Type-check `instance_pre` against the line the component was built for: 0.2 when it
    /// exports the 0.2 policy interface, else 0.1.
    pub fn new(
        component: &Component,
        instance_pre: InstancePre<PluginState>,
    ) -> wasmtime::Result<Self> {
        if component.get_export_index(None, POLICY_0_2).is_some() {
            Ok(Pre::V0_2(v0_2::AgentPluginCorePre::new(instance_pre)?))
        } else {
            Ok(Pre::V0_1(v0_1::AgentPluginCorePre::new(instance_pre)?))
        }
    }

    pub fn instance_pre(&self) -> &InstancePre<PluginState> {
        match self {
            Pre::V0_1(pre) => pre.instance_pre(),
            Pre::V0_2(pre) => pre.instance_pre(),
        }
    }

    /// The contract line, as `hak plugin inspect` shows it.
    pub fn contract(&self) -> &'static str {
        match self {
            Pre::V0_1(_) => "0.1",
            Pre::V0_2(_) => "0.2",
        }
    }

    /// The typed exports of `instance`.
    pub fn exports(
        &self,
        store: &mut Store<PluginState>,
        instance: &wasmtime::component::Instance,
    ) -> wasmtime::Result<Exports> {
        Ok(match self {
            Pre::V0_1(_) => Exports::V0_1(v0_1::AgentPluginCore::new(store, instance)?),
            Pre::V0_2(_) => Exports::V0_2(v0_2::AgentPluginCore::new(store, instance)?),
        })
    }
}

/// Link the imports of both lines (each line's names are its own).
pub fn add_to_linker(
    linker: &mut wasmtime::component::Linker<PluginState>,
) -> wasmtime::Result<()> {
    use wasmtime::component::HasSelf;
    v0_1::AgentPluginCore::add_to_linker::<PluginState, HasSelf<PluginState>>(linker, |s| s)?;
    v0_2::AgentPluginCore::add_to_linker::<PluginState, HasSelf<PluginState>>(linker, |s| s)?;
    Ok(())
}

/// The hook export of either line for a stage: `call_hook!(hooks, store, stage, input)`.
/// Both lines name their exports alike; only their types differ, so the mapping from a
/// stage to its export is written once here.
macro_rules! call_hook {
    ($h:expr, $s:expr, $stage:expr, $input:expr) => {
        match $stage {
            crate::model::stage::Stage::PreToolExecution => $h.call_pre_tool_execution($s, $input),
            crate::model::stage::Stage::PostParamsNormalization => {
                $h.call_post_params_normalization($s, $input)
            }
            crate::model::stage::Stage::PostCoreAction => $h.call_post_core_action($s, $input),
            crate::model::stage::Stage::PostSecondaryAction => {
                $h.call_post_tool_execution($s, $input)
            }
        }
    };
}

/// The policy export of either line for a stage: `call_policy!(policy, store, stage, input)`.
macro_rules! call_policy {
    ($p:expr, $s:expr, $stage:expr, $input:expr) => {
        match $stage {
            crate::model::stage::Stage::PreToolExecution => {
                $p.call_should_block_pre_tool_execution($s, $input)
            }
            crate::model::stage::Stage::PostParamsNormalization => {
                $p.call_should_block_post_params_normalization($s, $input)
            }
            crate::model::stage::Stage::PostCoreAction => {
                $p.call_should_block_post_core_action($s, $input)
            }
            crate::model::stage::Stage::PostSecondaryAction => {
                $p.call_should_block_post_secondary_action($s, $input)
            }
        }
    };
}

pub(super) use {call_hook, call_policy};
