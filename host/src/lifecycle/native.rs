//! Trusted in-process plugins: the same contract as a wasm plugin (description, hook and
//! policy per stage over the same stage params JSON), without a sandbox. For embedders who
//! compile their own policies into the host, and the floor that benchmarks compare wasm with.

use crate::runtime::bindings::{HookResult, WitToolType};
use crate::runtime::instance::PolicyAnswer;
use crate::runtime::PluginDescription;
use crate::stage::Stage;

/// A hook and/or policy running natively in the host. Only stages in the description's
/// `hook_stages` / `policy_stages` are called, and only for its relevant tools.
pub trait NativePlugin: Send + Sync {
    fn description(&self) -> &PluginDescription;

    fn hook(
        &self,
        _stage: Stage,
        _method: &str,
        _tool_type: WitToolType,
        _params: &str,
    ) -> Result<HookResult, String> {
        Ok(HookResult::Proceed)
    }

    fn policy(
        &self,
        _stage: Stage,
        _method: &str,
        _tool_type: WitToolType,
        _params: &str,
    ) -> Result<PolicyAnswer, String> {
        Ok(PolicyAnswer::Allow)
    }
}
