//! "Rate Limit Policy": at most `limit` calls per `windowSeconds` (rolling), counted per tool or
//! per tool type, per agent context. Each call reserves one unit of the host's atomic budget
//! (`budget.reserve`), so concurrent calls, `hak call` runs and replicas never pass the limit;
//! the host gives the unit back when the call's transaction certainly did not happen (blocked
//! by any policy, refused, failed before submission). A state store that cannot answer
//! blocks. Config: `{"limit": 10, "windowSeconds": 60, "per": "tool"}`
//! (`"per": "toolType"` counts all transaction tools together, all queries together);
//! `relevantTools` (default `["*"]`) narrows it.

use hak_guest::{
    block_with, host, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage,
    StageInput, ToolType, Verdict,
};
use serde::Deserialize;

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
enum Per {
    Tool,
    ToolType,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    limit: u32,
    window_seconds: u64,
    #[serde(default = "per_tool")]
    per: Per,
    relevant_tools: Option<Vec<String>>,
}

fn per_tool() -> Per {
    Per::Tool
}

pub struct RateLimit {
    limit: u64,
    window_seconds: u32,
    per: Per,
}

impl Plugin for RateLimit {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        if config.limit == 0 || config.limit > 10_000 {
            return Err(format!(
                "invalid config: limit: {} must be 1–10000",
                config.limit
            ));
        }
        if config.window_seconds == 0 || config.window_seconds > 31 * 86_400 {
            return Err(format!(
                "invalid config: windowSeconds: {} must be 1–2678400",
                config.window_seconds
            ));
        }
        let mut info = PluginInfo::policy(
            "Rate Limit Policy",
            &format!(
                "At most {} calls per {} s",
                config.limit, config.window_seconds
            ),
            ["*"],
            [Stage::PreToolExecution],
        );
        if let Some(tools) = config.relevant_tools {
            info.relevant_tools = tools;
        }
        let plugin = RateLimit {
            limit: u64::from(config.limit),
            window_seconds: config.window_seconds as u32,
            per: config.per,
        };
        Ok((plugin, info))
    }

    fn should_block_pre_tool_execution(&self, input: &StageInput) -> PolicyOutcome {
        let key = match self.per {
            Per::Tool => format!("calls:{}", input.method),
            Per::ToolType => format!(
                "calls:type:{}",
                match input.tool_type {
                    ToolType::Query => "query",
                    ToolType::Transaction => "transaction",
                    ToolType::Other => "other",
                }
            ),
        };
        match host::reserve(&key, 1, self.limit, self.window_seconds) {
            Ok(_) => Ok(Verdict::Allow),
            Err(host::ReserveError::OverLimit(calls)) => Ok(block_with(
                format!(
                    "rate limit reached: {} calls per {} s for {}",
                    self.limit,
                    self.window_seconds,
                    key.trim_start_matches("calls:")
                ),
                "RATE_LIMITED",
                serde_json::json!({ "limit": self.limit, "windowSeconds": self.window_seconds, "calls": calls }),
            )),
            Err(host::ReserveError::Unavailable(why)) => Ok(block_with(
                format!("rate limit cannot be checked: {why}"),
                "RATE_LIMIT_UNAVAILABLE",
                serde_json::json!({}),
            )),
        }
    }
}

hak_guest::export_plugin!(RateLimit);
