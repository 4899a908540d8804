//! "Immutable Entities Policy": listed accounts and tokens may not be updated or deleted.
//! Config: `{"accounts": ["0.0.1001"], "tokens": ["0.0.5005"]}` (at least one entry).

use hak_guest::facts::is_entity_id;
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
        for change in input.changes() {
            let listed = match change.kind.as_str() {
                "account" => &self.accounts,
                "token" => &self.tokens,
                _ => continue,
            };
            if listed.contains(&change.id) {
                let (kind, id) = (&change.kind, &change.id);
                return Ok(block_with(
                    format!("{kind} {id} is immutable"),
                    "IMMUTABLE_ENTITY",
                    serde_json::json!({ "kind": kind, "id": id }),
                ));
            }
        }
        Ok(Verdict::Allow)
    }
}

hak_guest::export_plugin!(ImmutableEntities);
