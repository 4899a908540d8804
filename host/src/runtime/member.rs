//! A loaded component as a member of the chain ([`WasmPlugin`], a [`ChainPlugin`]) and its
//! state in one agent context ([`PluginSession`]): the instance, created on first use and
//! discarded after any failure so the next call gets a fresh one; the plugin's counters and
//! per-context circuit breaker. The conversions between the WIT types and the domain's live in
//! `instance`, per contract line.
//! What a failure or a verdict means for the call is the lifecycle's business, not this one's.

use super::bindings::v0_2::hedera::agent_kit::types::Stage as WitStage;
use super::plugin::LoadedPlugin;
use super::PluginInstance;
use crate::capabilities::Capability;
use crate::manifest::OnError;
use crate::model::stage::Stage;
use crate::plugin::{
    CallBudget, ChainPlugin, ContextScope, FailureCause, HookAnswer, PluginDescription,
    PluginError, PluginFailure, PluginSession, Reads, StageCall, Verdict,
};
use crate::state_store::{PadKey, StateHandle};
use std::any::Any;
use std::sync::Arc;

/// A sandboxed component in the chain.
pub struct WasmPlugin(Arc<LoadedPlugin>);

impl WasmPlugin {
    pub fn member(plugin: Arc<LoadedPlugin>) -> Arc<dyn ChainPlugin> {
        Arc::new(WasmPlugin(plugin))
    }

    pub fn loaded(&self) -> &Arc<LoadedPlugin> {
        &self.0
    }
}

impl ChainPlugin for WasmPlugin {
    fn description(&self) -> &PluginDescription {
        &self.0.description
    }

    fn name(&self) -> &str {
        &self.0.spec.name
    }

    fn grants(&self, capability: Capability) -> bool {
        self.0.spec.grants(capability)
    }

    fn on_error(&self) -> OnError {
        self.0.spec.on_error
    }

    fn enforces(&self) -> bool {
        self.0.spec.enforce
    }

    fn observes_failures(&self) -> bool {
        self.0.observes_failures()
    }

    fn reads(&self, method: &str) -> Reads {
        self.0.reads.for_method(method)
    }

    fn open(&self, scope: &ContextScope) -> Box<dyn PluginSession> {
        Box::new(WasmSession {
            plugin: self.0.clone(),
            scope: scope.clone(),
            instance: None,
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One component in one agent context.
struct WasmSession {
    plugin: Arc<LoadedPlugin>,
    scope: ContextScope,
    instance: Option<PluginInstance>,
}

impl WasmSession {
    /// The live instance, instantiated (and described with its config) on first use.
    fn instance(&mut self) -> Result<&mut PluginInstance, PluginFailure> {
        if self.instance.is_none() {
            let plugin = &self.plugin;
            let pad = StateHandle {
                backend: self.scope.state.clone(),
                pad: PadKey {
                    scope: self.scope.scope.clone(),
                    plugin: plugin.spec.name.as_str().into(),
                },
                cap: plugin.spec.limits.max_state_bytes,
                reservations: self.scope.reservations.clone(),
            };
            if let Some(spare) = plugin.take_spare(pad.clone()) {
                return Ok(self.instance.insert(spare));
            }
            let (instance, described) = PluginInstance::instantiate(plugin, pad)?;
            if let Err(message) = described {
                return Err(PluginFailure {
                    plugin: plugin.spec.name.clone(),
                    phase: "describe".into(),
                    cause: FailureCause::InvalidOutput,
                    detail: format!("describe failed for this context: {message}"),
                });
            }
            self.instance = Some(instance);
        }
        Ok(self.instance.as_mut().expect("just set"))
    }

    /// Count the call, and discard the instance if it failed.
    fn settle<T>(
        &mut self,
        answer: Result<Result<T, String>, PluginFailure>,
        blocked: bool,
    ) -> Result<T, PluginError> {
        self.plugin
            .stats
            .record(&self.scope.scope, blocked, answer.is_err());
        match answer {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(message)) => Err(PluginError::Answered(message)),
            Err(failure) => {
                self.instance = None;
                Err(PluginError::Failed(failure))
            }
        }
    }
}

impl PluginSession for WasmSession {
    fn policy(&mut self, call: &StageCall<'_>) -> Result<Verdict, PluginError> {
        let answer = self.instance().and_then(|instance| instance.policy(call));
        let blocked = matches!(answer, Ok(Ok(Verdict::Block(_))));
        self.settle(answer, blocked)
    }

    fn hook(&mut self, call: &StageCall<'_>) -> Result<HookAnswer, PluginError> {
        let answer = self.instance().and_then(|instance| instance.hook(call));
        self.settle(answer, false)
    }

    fn on_failure(
        &mut self,
        input_json: &str,
        budget: Option<CallBudget>,
    ) -> Result<(), PluginFailure> {
        let result = self
            .instance()
            .and_then(|instance| instance.notify_failure(input_json, budget));
        if result.is_err() {
            self.instance = None;
        }
        result
    }

    fn bypassed(&self) -> bool {
        self.plugin.spec.on_error == OnError::Skip && self.plugin.stats.tripped(&self.scope.scope)
    }
}

pub(crate) fn stage_of(stage: WitStage) -> Stage {
    match stage {
        WitStage::PreToolExecution => Stage::PreToolExecution,
        WitStage::PostParamsNormalization => Stage::PostParamsNormalization,
        WitStage::PostCoreAction => Stage::PostCoreAction,
        WitStage::PostSecondaryAction => Stage::PostSecondaryAction,
    }
}
