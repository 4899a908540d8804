//! "Read Only Policy": only query tools run; every transaction tool is blocked before
//! anything happens (the kit's documented `ReadOnlyPolicy`, using the tool type).
//! Config: `{}`, or `{"allowTools": ["transfer_hbar_tool"]}` to let named tools through anyway.

use hak_guest::{
    block_with, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    Verdict,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    #[serde(default)]
    allow_tools: Vec<String>,
}

pub struct ReadOnly {
    allow: Vec<String>,
}

impl Plugin for ReadOnly {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let info = PluginInfo::policy(
            "Read Only Policy",
            "Only query tools may run",
            ["*"],
            [Stage::PreToolExecution],
        );
        Ok((
            ReadOnly {
                allow: config.allow_tools,
            },
            info,
        ))
    }

    fn should_block_pre_tool_execution(&self, input: &StageInput) -> PolicyOutcome {
        if input.is_query() || self.allow.contains(&input.method) {
            return Ok(Verdict::Allow);
        }
        Ok(block_with(
            format!(
                "{} is not a query tool: the agent is read-only",
                input.method
            ),
            "READ_ONLY",
            serde_json::json!({ "tool": input.method }),
        ))
    }
}

hak_guest::export_plugin!(ReadOnly);
