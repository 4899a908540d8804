//! What audit hooks share: the kit's refusal of return-bytes modes (there is no client to log
//! with) and the parts of a stage's params an audit entry is made of, with `normalisedParams`
//! kept as the host wrote it (key order included).

use crate::{HookOutcome, HookResult, StageInput};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// Whether the agent context's mode returns bytes instead of executing.
pub fn is_return_bytes(context: &Value) -> bool {
    matches!(
        context["mode"].as_str(),
        Some("returnBytes" | "customReturnBytes")
    )
}

/// The kit's pre-tool-execution guard of its audit hooks, worded with `hook`'s class name.
pub fn refuse_return_bytes(hook: &str, input: &StageInput) -> HookOutcome {
    let params: AuditParams = input.params()?;
    if is_return_bytes(&params.context) {
        return Err(format!(
            "Unsupported hook: {hook} does not support AgentMode.RETURN_BYTES or AgentMode.CUSTOM_RETURN_BYTES. Stopping the agent execution before tool {} is executed.",
            input.method
        ));
    }
    Ok(HookResult::Proceed)
}

/// The parts of the stage params an audit entry uses.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditParams<'a> {
    #[serde(borrow)]
    pub normalised_params: Option<&'a RawValue>,
    #[serde(default)]
    pub tool_result: Value,
    #[serde(default)]
    pub context: Value,
}

impl AuditParams<'_> {
    /// `normalisedParams` as written (`{}` when absent).
    pub fn params_text(&self) -> &str {
        self.normalised_params.map_or("{}", RawValue::get)
    }
}
