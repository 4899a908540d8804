//! "Rate Limit Policy": at most `limit` calls per `windowSeconds` (sliding), counted per tool or
//! per tool type, per agent context (in the host state store, so contexts never share counts).
//! Blocked calls do not count. Config: `{"limit": 10, "windowSeconds": 60, "per": "tool"}`
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
    limit: usize,
    window_ms: u64,
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
            limit: config.limit as usize,
            window_ms: config.window_seconds * 1000,
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
        let now = host::now_unix_ms();
        let mut calls: Vec<u64> = host::state_get(&key)
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        calls.retain(|t| now.saturating_sub(*t) < self.window_ms);
        if calls.len() >= self.limit {
            let retry_ms = calls
                .first()
                .map_or(0, |t| self.window_ms - now.saturating_sub(*t));
            return Ok(block_with(
                format!(
                    "rate limit reached: {} calls per {} s for {}",
                    self.limit,
                    self.window_ms / 1000,
                    key.trim_start_matches("calls:")
                ),
                "RATE_LIMITED",
                serde_json::json!({ "limit": self.limit, "windowSeconds": self.window_ms / 1000, "retryAfterMs": retry_ms }),
            ));
        }
        calls.push(now);
        host::state_set(&key, &serde_json::to_string(&calls).unwrap_or_default())?;
        Ok(Verdict::Allow)
    }
}

hak_guest::export_plugin!(RateLimit);
