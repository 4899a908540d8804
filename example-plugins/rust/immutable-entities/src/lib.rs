//! "Immutable Entities Policy": listed accounts and tokens may not be updated or deleted.
//! Config: `{"accounts": ["0.0.1001"], "tokens": ["0.0.5005"]}` (at least one entry).

use hak_guest::facts::{changed_entity, is_entity_id};
use hak_guest::{
    block_with, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    Verdict,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    accounts: Vec<String>,
    #[serde(default)]
    tokens: Vec<String>,
}

pub struct ImmutableEntities {
    accounts: Vec<String>,
    tokens: Vec<String>,
}

fn check_ids(field: &str, ids: &[String]) -> Result<(), String> {
    for (i, id) in ids.iter().enumerate() {
        if !is_entity_id(id) {
            return Err(format!(
                "invalid config: {field}.{i}: {id:?} is not an entity id (0.0.x)"
            ));
        }
    }
    Ok(())
}

impl Plugin for ImmutableEntities {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        check_ids("accounts", &config.accounts)?;
        check_ids("tokens", &config.tokens)?;
        if config.accounts.is_empty() && config.tokens.is_empty() {
            return Err("invalid config: accounts, tokens: list at least one entity".into());
        }
        let info = PluginInfo::policy(
            "Immutable Entities Policy",
            "Listed accounts and tokens may not be updated or deleted",
            [
                "update_account_tool",
                "delete_account_tool",
                "update_token_tool",
            ],
            [Stage::PostParamsNormalization],
        );
        Ok((
            ImmutableEntities {
                accounts: config.accounts,
                tokens: config.tokens,
            },
            info,
        ))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        let params = input.params_value()?;
        let Some((kind, id)) = changed_entity(&input.method, &params["normalisedParams"]) else {
            return Ok(Verdict::Allow);
        };
        let listed = if kind == "account" {
            &self.accounts
        } else {
            &self.tokens
        };
        if !listed.contains(&id) {
            return Ok(Verdict::Allow);
        }
        Ok(block_with(
            format!("{kind} {id} is immutable"),
            "IMMUTABLE_ENTITY",
            serde_json::json!({ "kind": kind, "id": id }),
        ))
    }
}

hak_guest::export_plugin!(ImmutableEntities);
