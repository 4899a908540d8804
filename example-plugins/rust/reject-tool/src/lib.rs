//! "Reject Tool Call": the kit's `RejectToolPolicy`. Blocks every call to the configured tools
//! before anything runs. Config: `{"relevantTools": ["tool_a", "tool_b"]}` (`"*"` rejects all).

use hak_guest::{
    block, host, parse_config, reads, Parts, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    ToolReads,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    relevant_tools: Vec<String>,
}

pub struct RejectTool;

impl Plugin for RejectTool {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let mut info = PluginInfo::policy(
            "Reject Tool Call",
            "Stops agent from calling predefined tools",
            [],
            [Stage::PreToolExecution],
        );
        info.relevant_tools = config.relevant_tools;
        Ok((RejectTool, info))
    }

    /// It decides on the method alone: neither the params nor the facts are lowered into it.
    fn reads(&self) -> Vec<ToolReads> {
        vec![reads("*", Parts::empty())]
    }

    fn should_block_pre_tool_execution(&self, input: &StageInput) -> PolicyOutcome {
        host::info("RejectToolPolicy: tool call rejected - tool not allowed");
        Ok(block(format!("tool {} is not allowed", input.method)))
    }
}

hak_guest::export_plugin!(RejectTool);
