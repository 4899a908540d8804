//! Trusted in-process plugins: the same contract as a wasm plugin (description, hook and
//! policy per stage over the same stage input JSON), without a sandbox. For embedders who
//! compile their own policies into the host, and the floor that benchmarks compare wasm with.

use crate::plugin::{
    ChainPlugin, ContextScope, HookAnswer, PluginDescription, PluginError, PluginSession,
    StageCall, Verdict,
};
use std::any::Any;
use std::sync::Arc;

/// A hook and/or policy running natively in the host. Only stages in the description's
/// `hook_stages` / `policy_stages` are called, and only for its relevant tools. An `Err` ends
/// the call with its message, as a wasm plugin's `err` does.
pub trait NativePlugin: Send + Sync {
    fn description(&self) -> &PluginDescription;

    fn hook(&self, _call: &StageCall<'_>) -> Result<HookAnswer, String> {
        Ok(HookAnswer::Proceed)
    }

    fn policy(&self, _call: &StageCall<'_>) -> Result<Verdict, String> {
        Ok(Verdict::Allow)
    }

    /// false: shadow mode (see [`ChainPlugin::enforces`]).
    fn enforces(&self) -> bool {
        true
    }
}

/// A native plugin as a chain member: trusted (every capability granted), stateless across
/// contexts, fail-closed.
pub fn member(plugin: Arc<dyn NativePlugin>) -> Arc<dyn ChainPlugin> {
    Arc::new(Native(plugin))
}

struct Native(Arc<dyn NativePlugin>);

impl ChainPlugin for Native {
    fn description(&self) -> &PluginDescription {
        self.0.description()
    }

    fn enforces(&self) -> bool {
        self.0.enforces()
    }

    fn open(&self, _scope: &ContextScope) -> Box<dyn PluginSession> {
        Box::new(Native(self.0.clone()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl PluginSession for Native {
    fn policy(&mut self, call: &StageCall<'_>) -> Result<Verdict, PluginError> {
        self.0.policy(call).map_err(PluginError::Answered)
    }

    fn hook(&mut self, call: &StageCall<'_>) -> Result<HookAnswer, PluginError> {
        self.0.hook(call).map_err(PluginError::Answered)
    }
}

/// Whether a chain member is a native plugin (for listings; the lifecycle never asks).
pub fn is_native(member: &dyn ChainPlugin) -> bool {
    member.as_any().is::<Native>()
}
