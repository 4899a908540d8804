//! The 0.1 contract line at the edge: a plugin built for `agent-plugin@0.1.x` is called
//! through these three functions, which convert the host's call into the 0.1 types and the
//! answers back into the current ones (as Zed keeps each older extension API in its own
//! `since_v*` file). The 0.1 line has no facts, no `needs-approval` verdict and no `inputs`;
//! everything else is the same record under another name. [`super::instance`] calls these
//! for `Exports::V0_1` and knows nothing else of the 0.1 types; nothing here runs a guest
//! outside the caller's deadline and limits.

use super::bindings::{call_hook, call_policy, v0_1, v0_2, PluginInfo};
use super::sandbox::PluginState;
use crate::model::stage::Stage;
use crate::model::ToolType;
use crate::plugin::{BlockReason, HookAnswer, StageCall, Verdict};
use v0_1::hedera::agent_kit::types as t01;
use wasmtime::Store;

type Bindings = v0_1::AgentPluginCore;

/// `plugin.describe(config)`, its description in the current types.
pub(super) fn describe(
    b: &Bindings,
    s: &mut Store<PluginState>,
    config: &str,
) -> wasmtime::Result<Result<PluginInfo, String>> {
    Ok(b.hedera_agent_kit_plugin()
        .call_describe(s, config)?
        .map(info))
}

/// The hook export for `call.stage`.
pub(super) fn hook(
    b: &Bindings,
    s: &mut Store<PluginState>,
    call: &StageCall<'_>,
) -> wasmtime::Result<Result<HookAnswer, String>> {
    let input = v0_1::exports::hedera::agent_kit::hooks::StageInput {
        stage: stage(call.stage),
        method: call.method,
        tool_type: tool_type(call.tool_type),
        params: call.input,
    };
    let answer = call_hook!(b.hedera_agent_kit_hooks(), s, call.stage, input)?;
    Ok(answer.map(|r| match r {
        t01::HookResult::Proceed => HookAnswer::Proceed,
        t01::HookResult::Replace(json) => HookAnswer::Replace(json),
    }))
}

/// The policy export for `call.stage` (a 0.1 verdict allows or blocks).
pub(super) fn policy(
    b: &Bindings,
    s: &mut Store<PluginState>,
    call: &StageCall<'_>,
) -> wasmtime::Result<Result<Verdict, String>> {
    let input = v0_1::exports::hedera::agent_kit::policy::StageInput {
        stage: stage(call.stage),
        method: call.method,
        tool_type: tool_type(call.tool_type),
        params: call.input,
    };
    let answer = call_policy!(b.hedera_agent_kit_policy(), s, call.stage, input)?;
    Ok(answer.map(|v| match v {
        t01::Verdict::Allow => Verdict::Allow,
        t01::Verdict::Block(b) => Verdict::Block(BlockReason {
            message: b.message,
            code: b.code,
            details_json: b.details_json,
        }),
    }))
}

fn stage(stage: Stage) -> t01::Stage {
    match stage {
        Stage::PreToolExecution => t01::Stage::PreToolExecution,
        Stage::PostParamsNormalization => t01::Stage::PostParamsNormalization,
        Stage::PostCoreAction => t01::Stage::PostCoreAction,
        Stage::PostSecondaryAction => t01::Stage::PostSecondaryAction,
    }
}

fn tool_type(tool_type: ToolType) -> t01::ToolType {
    match tool_type {
        ToolType::Query => t01::ToolType::Query,
        ToolType::Transaction => t01::ToolType::Transaction,
        ToolType::Other => t01::ToolType::Other,
    }
}

/// A 0.1 plugin's description in the current types (the same record).
fn info(info: t01::PluginInfo) -> PluginInfo {
    use v0_2::hedera::agent_kit::types::Stage as S2;
    let stages = |list: Vec<t01::Stage>| {
        list.into_iter()
            .map(|s| match s {
                t01::Stage::PreToolExecution => S2::PreToolExecution,
                t01::Stage::PostParamsNormalization => S2::PostParamsNormalization,
                t01::Stage::PostCoreAction => S2::PostCoreAction,
                t01::Stage::PostSecondaryAction => S2::PostSecondaryAction,
            })
            .collect()
    };
    PluginInfo {
        name: info.name,
        description: info.description,
        relevant_tools: info.relevant_tools,
        hook_stages: stages(info.hook_stages),
        policy_stages: stages(info.policy_stages),
    }
}
