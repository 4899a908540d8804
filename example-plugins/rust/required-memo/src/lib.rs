//! "Required Memo Policy": value-moving calls must carry a `transactionMemo` (after trimming,
//! at least `minLength` characters). Config: `{}` (every tool that takes a memo), or
//! `{"relevantTools": ["transfer_hbar_tool"], "minLength": 3}`. A tool that takes no memo is a
//! config error, since it could never pass.

use hak_guest::facts::MEMO_TOOLS;
use hak_guest::{
    block_with, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    Verdict,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    relevant_tools: Option<Vec<String>>,
    #[serde(default = "one")]
    min_length: usize,
}

fn one() -> usize {
    1
}

pub struct RequiredMemo {
    min: usize,
}

impl Plugin for RequiredMemo {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let tools = config
            .relevant_tools
            .unwrap_or_else(|| MEMO_TOOLS.iter().map(|t| t.to_string()).collect());
        for (i, tool) in tools.iter().enumerate() {
            if !MEMO_TOOLS.contains(&tool.as_str()) {
                return Err(format!(
                    "invalid config: relevantTools.{i}: {tool} takes no transactionMemo"
                ));
            }
        }
        if config.min_length == 0 {
            return Err("invalid config: minLength: must be at least 1".into());
        }
        let mut info = PluginInfo::policy(
            "Required Memo Policy",
            "Value-moving transactions must carry a memo",
            [],
            [Stage::PostParamsNormalization],
        );
        info.relevant_tools = tools;
        Ok((
            RequiredMemo {
                min: config.min_length,
            },
            info,
        ))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        let params = input.params_value()?;
        let memo = params["normalisedParams"]["transactionMemo"]
            .as_str()
            .unwrap_or_default()
            .trim();
        if memo.chars().count() >= self.min {
            return Ok(Verdict::Allow);
        }
        Ok(block_with(
            format!(
                "{} needs a transaction memo of at least {} characters",
                input.method, self.min
            ),
            "MEMO_REQUIRED",
            serde_json::json!({ "minLength": self.min }),
        ))
    }
}

hak_guest::export_plugin!(RequiredMemo);
