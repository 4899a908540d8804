//! "Token Allowlist Policy": every tool that names a token (transfers, airdrops, allowances,
//! mint, associate, dissociate, update, token info) may only name allowlisted tokens.
//! Config: `{"tokens": ["0.0.5005", "0.0.5006"]}`.

use hak_guest::facts::{is_entity_id, TOKEN_TOOLS};
use hak_guest::{
    block_with, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    Verdict,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    tokens: Vec<String>,
}

pub struct TokenAllowlist {
    tokens: Vec<String>,
}

impl Plugin for TokenAllowlist {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        for (i, id) in config.tokens.iter().enumerate() {
            if !is_entity_id(id) {
                return Err(format!(
                    "invalid config: tokens.{i}: {id:?} is not a token id (0.0.x)"
                ));
            }
        }
        let info = PluginInfo::policy(
            "Token Allowlist Policy",
            "Only allowlisted tokens may be used",
            TOKEN_TOOLS,
            [Stage::PostParamsNormalization],
        );
        Ok((
            TokenAllowlist {
                tokens: config.tokens,
            },
            info,
        ))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        for token in input.tokens() {
            if !self.tokens.contains(token) {
                return Ok(block_with(
                    format!("token {token} is not allowlisted"),
                    "TOKEN_NOT_ALLOWED",
                    serde_json::json!({ "tokenId": token }),
                ));
            }
        }
        Ok(Verdict::Allow)
    }
}

hak_guest::export_plugin!(TokenAllowlist);
