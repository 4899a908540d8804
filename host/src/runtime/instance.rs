//! A live plugin instance and its per-call runner: every guest call is bounded by a deadline
//! (epoch ticks, minus time spent in host calls), fuel and the memory guard, its output is
//! size-checked, and any failure is classified ([`super::failure`]); the values crossing into
//! the guest are [`super::wit_values`]'s. The caller discards an instance that failed.

use super::bindings::{
    call_hook, call_policy, v0_2, Exports, JudgeParams, JudgeResults, PluginInfo, WitParts,
    WitToolReads,
};
use super::compat_0_1;
use super::failure::{budget_spent, budget_ticks, classify, failure_at_start};
use super::plugin::LoadedPlugin;
use super::sandbox::PluginState;
use super::ticker::Ticker;
use super::wit_values::{input_size, stage_input_0_2, verdict_0_2, wit_stage_and_type, WitFacts};
use crate::capabilities::CapabilityQuota;
use crate::model::stage::Stage;
use crate::plugin::{
    CallBudget, FailureCause, HookAnswer, PluginFailure, Reads, StageCall, Verdict,
};
use crate::state_store::StateHandle;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use wasmtime::Store;

/// The network capabilities `plugin` was granted, counted in the context `state` serves.
fn capability_budget(plugin: &LoadedPlugin, state: &StateHandle) -> CapabilityQuota {
    CapabilityQuota::new(
        plugin.hedera.clone().filter(|_| plugin.hedera_granted()),
        plugin.spec.capabilities.clone().into(),
        &plugin.spec.limits,
        plugin.quota_windows.for_scope(&state.pad.scope),
        plugin.stats.capability.clone(),
    )
}

/// Instances alive in this process (every plugin, every host).
static LIVE: AtomicU64 = AtomicU64::new(0);

/// How many plugin instances are alive in this process now.
pub fn live_instances() -> u64 {
    LIVE.load(Ordering::Relaxed)
}

/// Counts one live instance from creation to drop.
struct Live;

impl Live {
    fn new() -> Self {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Live
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One instance of a plugin, with its own store (memory, scratchpad handle, log budget).
pub struct PluginInstance {
    _live: Live,
    /// The engine's epoch ticker, told when a guest call starts (it parks while none runs).
    ticker: Ticker,
    store: Store<PluginState>,
    bindings: Exports,
    on_tool_failure: Option<wasmtime::component::TypedFunc<(String,), ()>>,
    /// `hak:fast/judge.should-block`, type-checked at instantiation ([`JudgeParams`],
    /// [`JudgeResults`]), when the plugin exports it.
    judge: Option<wasmtime::component::Func>,
    /// The relevant tools this instance's own `describe` returned, in its order: `judge`
    /// names a tool by its index there, as the plugin holds it (a `describe` that answers
    /// differently in another instance cannot make an index name another tool).
    tools: Vec<String>,
    /// The instance itself, for exports looked up once (`inputs.reads`, at load).
    instance: wasmtime::component::Instance,
    plugin: Arc<str>,
    deadline_ms: u64,
    deadline_ticks: u64,
    /// The per-call instruction budget, when the engine counts fuel.
    fuel: Option<u64>,
    max_output: usize,
    max_input: usize,
}

impl PluginInstance {
    /// Instantiate from the plugin's `InstancePre` and call `describe` with its config, as every
    /// instance must before any stage call. Returns the instance and describe's answer.
    /// `state` names the agent context the instance serves (capability quotas count per scope).
    pub(crate) fn instantiate(
        plugin: &LoadedPlugin,
        state: StateHandle,
    ) -> Result<(Self, Result<PluginInfo, String>), PluginFailure> {
        let name: Arc<str> = plugin.spec.name.as_str().into();
        let limits = &plugin.spec.limits;
        plugin
            .stats
            .instantiations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let capability = capability_budget(plugin, &state);
        let state = PluginState::new(
            name.clone(),
            limits,
            plugin.runtime.sink.clone(),
            state,
            capability,
        );
        let mut store = Store::new(&plugin.runtime.engine, state);
        store.limiter(|s| &mut s.memory);
        // The deadline covers everything the guest does, host calls included: reached, the
        // guest traps.
        store.epoch_deadline_trap();
        let fuel = plugin.runtime.fuel.then(|| limits.fuel.unwrap_or(u64::MAX));
        store.data_mut().begin_call(std::time::Instant::now(), None);
        if let Some(fuel) = fuel {
            store
                .set_fuel(fuel)
                .map_err(|e| failure_at_start(&name, &e))?;
        }
        store.set_epoch_deadline(limits.instantiate_ticks());
        let failure = |store: &mut Store<PluginState>, e| {
            classify(
                store,
                &name,
                "instantiate",
                e,
                limits.instantiate_ms(),
                fuel,
            )
        };
        let ticker = plugin.runtime.ticker.clone();
        let in_guest = ticker.enter();
        let instance = match plugin.pre.instance_pre().instantiate(&mut store) {
            Ok(i) => i,
            Err(e) => return Err(failure(&mut store, e)),
        };
        drop(in_guest);
        let bindings = match plugin.pre.exports(&mut store, &instance) {
            Ok(b) => b,
            Err(e) => return Err(failure(&mut store, e)),
        };
        // A 0.1.x plugin's `on-tool-failure` of any other type is simply not called.
        let on_tool_failure = plugin.on_tool_failure.as_ref().and_then(|index| {
            instance
                .get_typed_func::<(String,), ()>(&mut store, index)
                .ok()
        });
        // A judge of another type than the extension's is not called (the load says so once):
        // the plugin is judged through `policy`, the contract every plugin has.
        let judge = plugin.judge_func.as_ref().and_then(|index| {
            instance
                .get_typed_func::<JudgeParams<'_>, JudgeResults>(&mut store, index)
                .ok()
                .map(|typed| *typed.func())
        });
        let mut this = PluginInstance {
            _live: Live::new(),
            ticker,
            store,
            bindings,
            judge,
            tools: Vec::new(),
            on_tool_failure,
            instance,
            plugin: name,
            deadline_ms: limits.deadline_ms,
            deadline_ticks: limits.deadline_ticks(),
            fuel,
            max_output: limits.max_output_bytes,
            max_input: limits.max_input_bytes,
        };
        let config = plugin.config_json.as_str();
        let info = this.run("describe", None, |b, s| match b {
            Exports::V0_2(b) => b.hedera_agent_kit_plugin().call_describe(s, config),
            Exports::V0_1(b) => compat_0_1::describe(b, s, config),
        })?;
        if let Ok(info) = &info {
            this.tools.clone_from(&info.relevant_tools);
        }
        Ok((this, info))
    }

    /// Move an instance described at load to the context `state` belongs to, so the first
    /// context to call the plugin need not instantiate and describe it again. Refused (the
    /// instance is dropped) when describe read or wrote state or used a capability: its answer
    /// might then depend on the context it ran in.
    pub(crate) fn rebind(mut self, plugin: &LoadedPlugin, state: StateHandle) -> Option<Self> {
        if self.store.data().context_used {
            return None;
        }
        let capability = capability_budget(plugin, &state);
        self.store.data_mut().move_to(state, capability);
        Some(self)
    }

    /// Call the hook export for `call.stage`.
    pub fn hook(
        &mut self,
        call: &StageCall<'_>,
    ) -> Result<Result<HookAnswer, String>, PluginFailure> {
        let stage = call.stage;
        self.check_input(stage.as_str(), input_size(call))?;
        let answer = self.run(stage.as_str(), call.budget, |b, s| match b {
            Exports::V0_2(b) => {
                let facts = call.facts.map(WitFacts::new);
                let input = stage_input_0_2(call, facts.as_ref());
                let answer = call_hook!(b.hedera_agent_kit_hooks(), s, stage, input)?;
                Ok(answer.map(|r| match r {
                    v0_2::hedera::agent_kit::types::HookResult::Proceed => HookAnswer::Proceed,
                    v0_2::hedera::agent_kit::types::HookResult::Replace(json) => {
                        HookAnswer::Replace(json)
                    }
                }))
            }
            Exports::V0_1(b) => compat_0_1::hook(b, s, call),
        })?;
        let size = match &answer {
            Ok(HookAnswer::Replace(json)) => json.len(),
            Ok(HookAnswer::Proceed) => 0,
            Err(message) => message.len(),
        };
        self.check_output(stage, size)?;
        Ok(answer)
    }

    /// Call the policy export for `call.stage`.
    pub fn policy(
        &mut self,
        call: &StageCall<'_>,
    ) -> Result<Result<Verdict, String>, PluginFailure> {
        let stage = call.stage;
        self.check_input(stage.as_str(), input_size(call))?;
        // A tool the plugin names and reads no facts of goes through `judge` when it has one:
        // the same answer, for one allocation in the guest instead of three.
        let judged = match (self.judge, call.facts) {
            (Some(judge), None) => self
                .tools
                .iter()
                .position(|t| t == call.method)
                .and_then(|i| u32::try_from(i).ok())
                .map(|tool| (judge, tool)),
            _ => None,
        };
        let answer = self.run(stage.as_str(), call.budget, |b, s| match (b, judged) {
            (Exports::V0_2(_), Some((judge, tool))) => {
                let (stage, tool_type) = wit_stage_and_type(call);
                let params = (!call.input.is_empty()).then_some(call.input);
                // SAFETY: `judge` was type-checked against exactly these parameter and result
                // types when this instance was made (`instantiate`), as wasmtime's bindgen
                // does for the exports it binds.
                let typed = unsafe {
                    wasmtime::component::TypedFunc::<JudgeParams<'_>, JudgeResults>::new_unchecked(
                        judge,
                    )
                };
                let (answer,) = typed.call(&mut *s, (stage, tool_type, tool, params))?;
                Ok(answer.map(verdict_0_2))
            }
            (Exports::V0_2(b), None) => {
                let facts = call.facts.map(WitFacts::new);
                let input = stage_input_0_2(call, facts.as_ref());
                let answer = call_policy!(b.hedera_agent_kit_policy(), s, stage, input)?;
                Ok(answer.map(verdict_0_2))
            }
            (Exports::V0_1(b), _) => compat_0_1::policy(b, s, call),
        })?;
        let size = match &answer {
            Ok(Verdict::Block(b)) => {
                b.message.len()
                    + b.code.as_ref().map_or(0, String::len)
                    + b.details_json.as_ref().map_or(0, String::len)
            }
            Ok(Verdict::NeedsApproval(a)) => {
                a.message.len()
                    + a.code.as_ref().map_or(0, String::len)
                    + a.details_json.as_ref().map_or(0, String::len)
            }
            Ok(Verdict::Allow) => 0,
            Err(message) => message.len(),
        };
        self.check_output(stage, size)?;
        Ok(answer)
    }

    /// Whether this instance is judged through `hak:fast/judge` where it can be.
    pub(crate) fn has_judge(&self) -> bool {
        self.judge.is_some()
    }

    /// Tell the plugin a call ended blocked or failed (`events.on-tool-failure`); a no-op for
    /// plugins that do not export it. Same deadline, limits and call budget as a stage call.
    pub fn notify_failure(
        &mut self,
        input_json: &str,
        budget: Option<CallBudget>,
    ) -> Result<(), PluginFailure> {
        let Some(func) = self.on_tool_failure else {
            return Ok(());
        };
        self.check_input("on_tool_failure", input_json.len())?;
        self.arm("on_tool_failure", budget)?;
        let in_guest = self.ticker.enter();
        let result = func.call(&mut self.store, (input_json.to_owned(),));
        drop(in_guest);
        self.store.data_mut().end_call();
        result.map_err(|e| self.failure("on_tool_failure", e))
    }

    /// What the plugin reads of the stage input, per tool (`inputs.reads`, contract 0.2.1):
    /// `None` when it does not export it (it reads everything). Same deadline and limits as
    /// a stage call; more than [`MAX_READS_ENTRIES`] entries, or a tool name longer than 256
    /// bytes, is an invalid output.
    pub fn reads(
        &mut self,
        export: Option<&wasmtime::component::ComponentExportIndex>,
    ) -> Result<Option<Vec<(String, Reads)>>, PluginFailure> {
        let Some(func) = export.and_then(|index| {
            self.instance
                .get_typed_func::<(), (Vec<WitToolReads>,)>(&mut self.store, index)
                .ok()
        }) else {
            return Ok(None);
        };
        self.arm("reads", None)?;
        let in_guest = self.ticker.enter();
        let result = func.call(&mut self.store, ());
        drop(in_guest);
        self.store.data_mut().end_call();
        let (entries,) = result.map_err(|e| self.failure("reads", e))?;
        let invalid = |detail: String| PluginFailure {
            plugin: self.plugin.to_string(),
            phase: "reads".into(),
            cause: FailureCause::InvalidOutput,
            detail,
        };
        if entries.len() > MAX_READS_ENTRIES {
            return Err(invalid(format!(
                "inputs.reads returned {} entries, more than {MAX_READS_ENTRIES}",
                entries.len()
            )));
        }
        entries
            .into_iter()
            .map(|e| {
                if e.tool.is_empty() || e.tool.len() > 256 {
                    return Err(invalid(format!(
                        "inputs.reads names a tool of {} bytes (1 to 256)",
                        e.tool.len()
                    )));
                }
                let reads = Reads {
                    params: e.reads.contains(WitParts::PARAMS),
                    facts: e.reads.contains(WitParts::FACTS),
                };
                Ok((e.tool, reads))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// The plugin's operator-given name.
    pub fn plugin_name(&self) -> &str {
        &self.plugin
    }

    /// Build an `invalid-output` failure for this plugin at `stage`.
    pub fn invalid_output(&self, stage: Stage, detail: impl Into<String>) -> PluginFailure {
        PluginFailure {
            plugin: self.plugin.to_string(),
            phase: stage.as_str().into(),
            cause: FailureCause::InvalidOutput,
            detail: detail.into(),
        }
    }

    fn check_input(&self, phase: &str, size: usize) -> Result<(), PluginFailure> {
        if size > self.max_input {
            return Err(PluginFailure {
                plugin: self.plugin.to_string(),
                phase: phase.into(),
                cause: FailureCause::InputTooLarge,
                detail: format!(
                    "the stage input is {size} bytes, more than the plugin's {}-byte max_input_bytes",
                    self.max_input
                ),
            });
        }
        Ok(())
    }

    fn check_output(&self, stage: Stage, size: usize) -> Result<(), PluginFailure> {
        if size > self.max_output {
            return Err(self.invalid_output(
                stage,
                format!(
                    "returned {size} bytes, more than the {}-byte limit",
                    self.max_output
                ),
            ));
        }
        Ok(())
    }

    /// Reset fuel, deadline and per-call budgets; the deadline is the plugin's own or the end
    /// of the tool call's `budget`, whichever comes first, counted from when the caller
    /// started the call (`budget.started`; the clock is read here only without a budget). A
    /// budget already spent refuses the guest call before it starts.
    fn arm(&mut self, phase: &str, budget: Option<CallBudget>) -> Result<(), PluginFailure> {
        let mut ticks = self.deadline_ticks;
        let now = budget.map_or_else(std::time::Instant::now, |b| b.started);
        if let Some(budget) = budget {
            let left = budget.left(now);
            if left.is_zero() {
                return Err(PluginFailure {
                    plugin: self.plugin.to_string(),
                    phase: phase.into(),
                    cause: FailureCause::Deadline,
                    detail: budget_spent(budget),
                });
            }
            ticks = ticks.min(budget_ticks(left));
        }
        self.store.data_mut().begin_call(now, budget);
        if let Some(fuel) = self.fuel {
            // Only fails when the engine does not count fuel, which `fuel` being set rules out.
            let _ = self.store.set_fuel(fuel);
        }
        self.store.set_epoch_deadline(ticks);
        Ok(())
    }

    fn run<R>(
        &mut self,
        phase: &str,
        budget: Option<CallBudget>,
        call: impl FnOnce(&Exports, &mut Store<PluginState>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginFailure> {
        self.arm(phase, budget)?;
        let in_guest = self.ticker.enter();
        let result = call(&self.bindings, &mut self.store);
        drop(in_guest);
        self.store.data_mut().end_call();
        if let Some(what) = self.store.data_mut().deadline_passed.take() {
            // Out of time in a capability call: failed, whatever the guest answered after it.
            let detail = match budget {
                Some(b) if b.left(std::time::Instant::now()).is_zero() => budget_spent(b),
                _ => format!(
                    "exceeded its {} ms deadline in a capability call ({what}): everything a plugin does in a stage counts",
                    self.deadline_ms
                ),
            };
            return Err(PluginFailure {
                plugin: self.plugin.to_string(),
                phase: phase.into(),
                cause: FailureCause::Deadline,
                detail,
            });
        }
        result.map_err(|e| self.failure(phase, e))
    }

    fn failure(&mut self, phase: &str, err: wasmtime::Error) -> PluginFailure {
        classify(
            &mut self.store,
            &self.plugin,
            phase,
            err,
            self.deadline_ms,
            self.fuel,
        )
    }
}

/// The most entries `inputs.reads` may return (as many as relevant tools).
pub const MAX_READS_ENTRIES: usize = 1024;
