//! "Recipient Denylist Policy": value (HBAR, tokens, NFTs) and allowances may never go to the
//! listed accounts. Covers every tool that sends value or grants an allowance, including a
//! deleted account's remaining balance. Config: `{"accounts": ["0.0.666"]}`.

use hak_guest::facts::{is_entity_id, VALUE_TOOLS};
use hak_guest::{
    block_with, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    Verdict,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    accounts: Vec<String>,
}

pub struct RecipientDenylist {
    accounts: Vec<String>,
}

impl Plugin for RecipientDenylist {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        for (i, id) in config.accounts.iter().enumerate() {
            if !is_entity_id(id) {
                return Err(format!(
                    "invalid config: accounts.{i}: {id:?} is not an account id (0.0.x)"
                ));
            }
        }
        let info = PluginInfo::policy(
            "Recipient Denylist Policy",
            "Value and allowances may never go to denylisted accounts",
            VALUE_TOOLS,
            [Stage::PostParamsNormalization],
        );
        Ok((
            RecipientDenylist {
                accounts: config.accounts,
            },
            info,
        ))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        for m in input.movements() {
            if let Some(to) = m.to.as_ref().filter(|to| self.accounts.contains(*to)) {
                return Ok(block_with(
                    format!("{to} is a denylisted recipient"),
                    "RECIPIENT_DENIED",
                    serde_json::json!({ "recipient": to }),
                ));
            }
        }
        Ok(Verdict::Allow)
    }
}

hak_guest::export_plugin!(RecipientDenylist);
