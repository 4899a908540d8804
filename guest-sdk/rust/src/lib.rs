//! hak guest SDK for Rust.
//!
//! A plugin is a type implementing [`Plugin`]; every stage method has a no-op default, so a
//! policy only writes the stage it decides at. [`export_plugin!`] wires the type to the
//! `hedera:agent-kit/plugin` world (contract 0.2.2) and to the `hak:fast/judge` extension
//! (`wit/ext/judge.wit`: the host calls a policy stage with flat arguments when it can; both
//! ways in reach the same trait methods). What lives here: the trait, the stage
//! input with the host's typed [`Facts`] (who gets what, tokens, changes) and typed views of
//! the stage JSON ([`StageInput`]), the [`block`] and [`needs_approval`] helpers, thin
//! wrappers over the host imports ([`host`]) and the plugins' allocator ([`heap`]).
//! What must not: any policy logic (that belongs in plugins).
//!
//! ```no_run
//! struct Deny;
//! impl hak_guest::Plugin for Deny {
//!     fn describe(_config: &str) -> Result<(Self, hak_guest::PluginInfo), String> {
//!         Ok((Deny, hak_guest::PluginInfo::policy("Deny", "Denies everything", ["*"],
//!             [hak_guest::Stage::PreToolExecution])))
//!     }
//!     fn should_block_pre_tool_execution(&self, _i: &hak_guest::StageInput) -> hak_guest::PolicyOutcome {
//!         Ok(hak_guest::block("denied"))
//!     }
//! }
//! hak_guest::export_plugin!(Deny);
//! ```

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: ["../../wit", "../../wit/ext"],
        world: "hak:fast/fast-plugin",
        generate_all,
        pub_export_macro: true,
        default_bindings_module: "hak_guest::bindings",
        export_macro_name: "export_world",
        additional_derives: [PartialEq, Eq],
    });
}

mod amount;
pub mod audit;
pub mod facts;
pub mod heap;
mod input;
pub mod scan;

/// Every Rust plugin allocates through [`heap::ClassCache`] (see there for why), unless it
/// turns off the default `heap` feature to install its own.
#[cfg(all(target_arch = "wasm32", feature = "heap"))]
#[global_allocator]
static HEAP: heap::ClassCache = heap::ClassCache::new();

pub use amount::Amount;
pub use bindings::exports::hedera::agent_kit::inputs::{Parts, ToolReads};
pub use bindings::hedera::agent_kit::types::{
    ApprovalRequest, Asset, BlockInfo, Entity, Facts, HookResult, LogLevel, Movement, PluginInfo,
    Stage, ToolType, Verdict, Via,
};
pub use input::StageInput;
pub use serde;
pub use serde_json;

/// What a hook stage returns: `Ok(HookResult::Proceed)`, `Ok(HookResult::Replace(json))`,
/// or `Err(message)` to fail the tool call with that message.
pub type HookOutcome = Result<HookResult, String>;
/// What a policy stage returns: `Ok(Verdict::Allow)`, `Ok(block(..))` or `Err(message)`.
pub type PolicyOutcome = Result<Verdict, String>;

/// A hook and/or policy. Implement `describe` and the stages you declared in [`PluginInfo`];
/// the host never calls a stage you did not declare, nor any stage for tools not in
/// `relevant_tools`.
pub trait Plugin: Sized + 'static {
    /// Validate the operator's JSON config (always a JSON object) and build the plugin.
    fn describe(config: &str) -> Result<(Self, PluginInfo), String>;

    fn pre_tool_execution(&self, _input: &StageInput) -> HookOutcome {
        Ok(HookResult::Proceed)
    }
    fn post_params_normalization(&self, _input: &StageInput) -> HookOutcome {
        Ok(HookResult::Proceed)
    }
    fn post_core_action(&self, _input: &StageInput) -> HookOutcome {
        Ok(HookResult::Proceed)
    }
    fn post_tool_execution(&self, _input: &StageInput) -> HookOutcome {
        Ok(HookResult::Proceed)
    }

    fn should_block_pre_tool_execution(&self, _input: &StageInput) -> PolicyOutcome {
        Ok(Verdict::Allow)
    }
    fn should_block_post_params_normalization(&self, _input: &StageInput) -> PolicyOutcome {
        Ok(Verdict::Allow)
    }
    fn should_block_post_core_action(&self, _input: &StageInput) -> PolicyOutcome {
        Ok(Verdict::Allow)
    }
    fn should_block_post_secondary_action(&self, _input: &StageInput) -> PolicyOutcome {
        Ok(Verdict::Allow)
    }

    /// What the plugin reads of the stage input, per tool (contract 0.2.1 `inputs`), asked
    /// once after `describe`: the host lowers only these parts into the plugin, the others
    /// arrive as `""` params and no facts — most of what a stage call costs is lowering them.
    /// Entries name a tool method or `"*"` (every tool not named); see [`reads`]. The default
    /// reads everything. Say only what the plugin never reads: a policy that reads facts it
    /// did not ask for sees none.
    fn reads(&self) -> Vec<ToolReads> {
        vec![reads("*", Parts::PARAMS | Parts::FACTS)]
    }

    /// A call to one of the relevant tools ended blocked or failed (contract 0.1.1 `events`).
    /// Observe-only: nothing returned changes the call. `failure` is the JSON object described
    /// in `wit/README.md` (`method`, `outcome`, `error`, `rawParams`, …).
    fn on_tool_failure(&self, _failure: &ToolFailure) {}
}

/// How a call ended badly, as `events.on-tool-failure` reports it.
pub struct ToolFailure {
    /// The JSON object (see `wit/README.md`, "Failure notifications").
    pub json: String,
}

impl ToolFailure {
    /// The report as a generic JSON value (`Null` if the host sent something unreadable).
    pub fn value(&self) -> serde_json::Value {
        serde_json::from_str(&self.json).unwrap_or_default()
    }
}

impl PluginInfo {
    /// Info for a policy deciding at `stages`.
    pub fn policy<'a>(
        name: &str,
        description: &str,
        relevant_tools: impl IntoIterator<Item = &'a str>,
        stages: impl IntoIterator<Item = Stage>,
    ) -> Self {
        PluginInfo {
            name: name.to_owned(),
            description: description.to_owned(),
            relevant_tools: relevant_tools.into_iter().map(str::to_owned).collect(),
            hook_stages: Vec::new(),
            policy_stages: stages.into_iter().collect(),
        }
    }

    /// Info for a hook observing `stages`.
    pub fn hook<'a>(
        name: &str,
        description: &str,
        relevant_tools: impl IntoIterator<Item = &'a str>,
        stages: impl IntoIterator<Item = Stage>,
    ) -> Self {
        PluginInfo {
            name: name.to_owned(),
            description: description.to_owned(),
            relevant_tools: relevant_tools.into_iter().map(str::to_owned).collect(),
            hook_stages: stages.into_iter().collect(),
            policy_stages: Vec::new(),
        }
    }
}

/// One entry of [`Plugin::reads`]: for `tool` (a method, or `"*"`), read `parts`
/// (`Parts::PARAMS`, `Parts::FACTS`, both, or `Parts::empty()` for neither).
pub fn reads(tool: &str, parts: Parts) -> ToolReads {
    ToolReads {
        tool: tool.to_owned(),
        reads: parts,
    }
}

/// A block verdict with a reason and no code or details.
pub fn block(message: impl Into<String>) -> Verdict {
    Verdict::Block(BlockInfo {
        message: message.into(),
        code: None,
        details_json: None,
    })
}

/// A block verdict with a machine code and a JSON details object.
pub fn block_with(
    message: impl Into<String>,
    code: impl Into<String>,
    details: serde_json::Value,
) -> Verdict {
    Verdict::Block(BlockInfo {
        message: message.into(),
        code: Some(code.into()),
        details_json: Some(details.to_string()),
    })
}

/// Ask a human: the call parks until an approver approves (the chain goes on) or denies it,
/// or `timeout_seconds` pass (0: the host's default), which blocks it (contract 0.2.0).
pub fn needs_approval(message: impl Into<String>, timeout_seconds: u32) -> Verdict {
    Verdict::NeedsApproval(ApprovalRequest {
        message: message.into(),
        code: None,
        details_json: None,
        timeout_seconds,
    })
}

/// [`needs_approval`] with a machine code and a JSON details object for the approver.
pub fn needs_approval_with(
    message: impl Into<String>,
    code: impl Into<String>,
    details: serde_json::Value,
    timeout_seconds: u32,
) -> Verdict {
    Verdict::NeedsApproval(ApprovalRequest {
        message: message.into(),
        code: Some(code.into()),
        details_json: Some(details.to_string()),
        timeout_seconds,
    })
}

/// Parse a plugin config, turning serde's error into a message that names the field.
pub fn parse_config<'a, T: serde::Deserialize<'a>>(config: &'a str) -> Result<T, String> {
    serde_json::from_str(config).map_err(|e| format!("invalid config: {e}"))
}

/// Thin wrappers over the host imports every plugin may call. In a component they call the
/// host; in a native build (`cargo test` in a plugin crate) they are backed by [`testing`]'s
/// in-memory fakes (scratchpad, clock, budgets, log, topic messages), so plugin logic that
/// calls the host unit-tests without a host.
pub mod host {
    #[cfg(target_arch = "wasm32")]
    use crate::bindings::hedera::agent_kit::{budget, hedera, host as imports, rates};
    #[cfg(not(target_arch = "wasm32"))]
    use crate::testing::fake as imports;
    #[cfg(not(target_arch = "wasm32"))]
    use crate::testing::fake::{budget, hedera, rates};
    use crate::LogLevel;

    pub fn log(level: LogLevel, message: &str) {
        imports::log(level, message)
    }
    pub fn info(message: &str) {
        imports::log(LogLevel::Info, message)
    }
    pub fn warn(message: &str) {
        imports::log(LogLevel::Warn, message)
    }
    pub fn state_get(key: &str) -> Option<String> {
        imports::state_get(key)
    }
    pub fn state_set(key: &str, value: &str) -> Result<(), String> {
        imports::state_set(key, value)
    }
    pub fn state_delete(key: &str) {
        imports::state_delete(key)
    }
    pub fn now_unix_ms() -> u64 {
        imports::now_unix_ms()
    }

    /// Capability `hedera:submit-topic-message`: the transaction id.
    pub fn submit_topic_message(topic_id: &str, message: &str) -> Result<String, String> {
        hedera::submit_topic_message(topic_id, message)
    }

    /// Capability `hedera:create-topic`: the new topic's id.
    pub fn create_topic(memo: &str) -> Result<String, String> {
        hedera::create_topic(memo)
    }

    pub use crate::bindings::hedera::agent_kit::budget::ReserveError;
    pub use crate::bindings::hedera::agent_kit::rates::ExchangeRate;

    /// Capability `rates` (contract 0.2.2): the network's HBAR exchange rate in force, as its
    /// mirror node states it (kept by the host until it expires). On `Err` a policy that
    /// counts in dollars must block.
    pub fn exchange_rate() -> Result<ExchangeRate, String> {
        rates::current()
    }

    /// Reserve `amount` under `key` against `limit` within a rolling window of
    /// `window_seconds`, atomically with every other call of this plugin in this agent context
    /// (contract 0.1.2 `budget`). Ok: the window's total including this reservation. The host
    /// commits the reservation when the call's transaction applied or may have (unknown
    /// outcome, bytes handed out) and releases it when it certainly did not. On
    /// `ReserveError::Unavailable` a policy must block.
    pub fn reserve(
        key: &str,
        amount: u64,
        limit: u64,
        window_seconds: u32,
    ) -> Result<u64, ReserveError> {
        budget::reserve(key, amount, limit, window_seconds)
    }

    /// What is spent or reserved under `key` in the last `window_seconds`.
    pub fn spent(key: &str, window_seconds: u32) -> Result<u64, String> {
        budget::spent(key, window_seconds)
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

/// Export `$ty` (a [`Plugin`]) as this component's hooks and policy.
#[macro_export]
macro_rules! export_plugin {
    ($ty:ty) => {
        #[doc(hidden)]
        struct __HakExport;

        impl $crate::__private::Adapter for __HakExport {
            type Plugin = $ty;
            fn slot() -> &'static $crate::__private::Slot<$ty> {
                static SLOT: $crate::__private::Slot<$ty> = $crate::__private::Slot::new();
                &SLOT
            }
        }

        // Exported only when compiling the component, so the plugin crate also builds (and
        // unit-tests) natively.
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::export_world!(__HakExport with_types_in $crate::bindings);

        /// Native builds: run the plugin's `describe` through the same adapter (for tests).
        #[cfg(not(target_arch = "wasm32"))]
        #[doc(hidden)]
        pub fn __hak_describe(config: &str) -> Result<$crate::PluginInfo, String> {
            <__HakExport as $crate::__private::DescribeGuest>::describe(config.into())
        }
    };
}

#[doc(hidden)]
pub mod __private {
    use super::bindings::exports::hak::fast::judge;
    pub use super::bindings::exports::hedera::agent_kit::plugin::Guest as DescribeGuest;
    use super::bindings::exports::hedera::agent_kit::{events, hooks, inputs, plugin, policy};
    use super::*;
    use std::cell::RefCell;

    /// What `describe` built: the plugin value and the relevant tools it returned, in order
    /// (`judge` names a tool by its index there).
    pub struct Described<P> {
        plugin: P,
        tools: Vec<String>,
    }

    /// Per-instance storage of what `describe` built. Wasm components are single-threaded, so
    /// interior mutability without locking is sound here.
    pub struct Slot<P>(RefCell<Option<Described<P>>>);
    // SAFETY: a component instance runs on one thread; the slot is never shared across threads.
    unsafe impl<P> Sync for Slot<P> {}
    impl<P> Slot<P> {
        pub const fn new() -> Self {
            Slot(RefCell::new(None))
        }
    }
    impl<P> Default for Slot<P> {
        fn default() -> Self {
            Self::new()
        }
    }

    pub trait Adapter {
        type Plugin: Plugin;
        fn slot() -> &'static Slot<Self::Plugin>;
    }

    fn with<A: Adapter, R>(
        input: hooks::StageInput,
        f: impl FnOnce(&A::Plugin, &StageInput) -> Result<R, String>,
    ) -> Result<R, String> {
        let slot = A::slot().0.borrow();
        let described = slot.as_ref().ok_or("plugin called before describe")?;
        f(&described.plugin, &StageInput::from(input))
    }

    impl<A: Adapter> plugin::Guest for A {
        fn describe(config: String) -> Result<PluginInfo, String> {
            let (plugin, info) = A::Plugin::describe(&config)?;
            let tools = info.relevant_tools.clone();
            *A::slot().0.borrow_mut() = Some(Described { plugin, tools });
            Ok(info)
        }
    }

    /// `hak:fast/judge`: the same policy stages with flat arguments (see `wit/ext/judge.wit`).
    impl<A: Adapter> judge::Guest for A {
        fn should_block(
            stage: Stage,
            tool_type: ToolType,
            tool: u32,
            params: Option<String>,
        ) -> PolicyOutcome {
            let mut slot = A::slot().0.borrow_mut();
            let Described { plugin, tools } =
                slot.as_mut().ok_or("plugin called before describe")?;
            let name = tools
                .get_mut(tool as usize)
                .ok_or_else(|| format!("judge: no relevant tool at index {tool}"))?;
            // The tool's name is lent to the input and given back after the call, not copied:
            // a copy is an allocation, a copy and a free in the guest on every call. Nothing
            // else can read the table meanwhile (a component instance is never re-entered).
            let input = StageInput {
                stage,
                method: std::mem::take(name),
                tool_type,
                params_json: params.unwrap_or_default(),
                facts: None,
            };
            let outcome = match stage {
                Stage::PreToolExecution => plugin.should_block_pre_tool_execution(&input),
                Stage::PostParamsNormalization => {
                    plugin.should_block_post_params_normalization(&input)
                }
                Stage::PostCoreAction => plugin.should_block_post_core_action(&input),
                Stage::PostSecondaryAction => plugin.should_block_post_secondary_action(&input),
            };
            *name = input.method;
            outcome
        }
    }

    impl<A: Adapter> hooks::Guest for A {
        fn pre_tool_execution(input: hooks::StageInput) -> HookOutcome {
            with::<A, _>(input, |p, i| p.pre_tool_execution(i))
        }
        fn post_params_normalization(input: hooks::StageInput) -> HookOutcome {
            with::<A, _>(input, |p, i| p.post_params_normalization(i))
        }
        fn post_core_action(input: hooks::StageInput) -> HookOutcome {
            with::<A, _>(input, |p, i| p.post_core_action(i))
        }
        fn post_tool_execution(input: hooks::StageInput) -> HookOutcome {
            with::<A, _>(input, |p, i| p.post_tool_execution(i))
        }
    }

    impl<A: Adapter> events::Guest for A {
        fn on_tool_failure(input: String) {
            if let Some(described) = A::slot().0.borrow().as_ref() {
                described
                    .plugin
                    .on_tool_failure(&ToolFailure { json: input });
            }
        }
    }

    impl<A: Adapter> inputs::Guest for A {
        fn reads() -> Vec<ToolReads> {
            match A::slot().0.borrow().as_ref() {
                Some(described) => described.plugin.reads(),
                None => vec![super::reads("*", Parts::PARAMS | Parts::FACTS)],
            }
        }
    }

    impl<A: Adapter> policy::Guest for A {
        fn should_block_pre_tool_execution(input: policy::StageInput) -> PolicyOutcome {
            with::<A, _>(input, |p, i| p.should_block_pre_tool_execution(i))
        }
        fn should_block_post_params_normalization(input: policy::StageInput) -> PolicyOutcome {
            with::<A, _>(input, |p, i| p.should_block_post_params_normalization(i))
        }
        fn should_block_post_core_action(input: policy::StageInput) -> PolicyOutcome {
            with::<A, _>(input, |p, i| p.should_block_post_core_action(i))
        }
        fn should_block_post_secondary_action(input: policy::StageInput) -> PolicyOutcome {
            with::<A, _>(input, |p, i| p.should_block_post_secondary_action(i))
        }
    }
}
