//! "Recipient Allowlist Policy": value (HBAR, tokens, NFTs) and allowances may only go to the
//! listed accounts. Covers every tool that sends value or grants an allowance, including a
//! deleted account's remaining balance. Config: `{"accounts": ["0.0.1002", "0.0.1003"]}`;
//! `"allowNewAccounts": false` also blocks funding a new account (allowed by default: it is
//! created with the user's key).

use hak_guest::facts::{is_entity_id, VALUE_TOOLS};
use hak_guest::{
    block_with, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    Verdict,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    accounts: Vec<String>,
    #[serde(default = "yes")]
    allow_new_accounts: bool,
}

fn yes() -> bool {
    true
}

pub struct RecipientAllowlist {
    accounts: Vec<String>,
    allow_new: bool,
}

impl Plugin for RecipientAllowlist {
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
            "Recipient Allowlist Policy",
            "Value and allowances may only go to allowlisted accounts",
            VALUE_TOOLS,
            [Stage::PostParamsNormalization],
        );
        Ok((
            RecipientAllowlist {
                accounts: config.accounts,
                allow_new: config.allow_new_accounts,
            },
            info,
        ))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        for m in input.movements() {
            let allowed = match &m.to {
                Some(to) => self.accounts.contains(to),
                None => self.allow_new,
            };
            if !allowed {
                let to = m.to.as_deref().unwrap_or("a new account");
                return Ok(block_with(
                    format!("{to} is not an allowlisted recipient"),
                    "RECIPIENT_NOT_ALLOWED",
                    serde_json::json!({ "recipient": m.to }),
                ));
            }
        }
        Ok(Verdict::Allow)
    }
}

hak_guest::export_plugin!(RecipientAllowlist);
